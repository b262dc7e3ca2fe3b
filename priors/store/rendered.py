"""PRIORS.md on disk: patched row by row when the ledger grew, written whole otherwise.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from priors.core import fold as fold
from priors.core import views as views
from priors.core import vocabulary
from priors.core.errors import MachineError, UsageError
from priors.core.fold import PriorState, State
from priors.core.views import display_status, markdown_pieces, table_cell, table_row
from priors.store import fold_cache as cache
from priors.store.cache_key import MAC_BYTES, read_sealed, seal
from priors.store.files import atomic_write, read_blocks, read_bytes
from priors.store.fold_cache import write_file

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

    Mark = Tuple[int, bytes]  # a ledger: (length, sha256)

RENDER_FILE = "render.bin"
MAGIC = b"PRIORS-RENDER-CACHE\n"
HEAD_LINES = 6  # title, blank, note, blank, table head, separator — views.markdown_lines


def _signature() -> bytes:
    """Who rendered it: this module's, the table's and the fold's code."""
    h = hashlib.sha256(MAGIC)
    for mod in (fold, views, vocabulary, sys.modules[__name__]):
        try:
            with open(getattr(mod, "__file__", "") or "", "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(repr(mod).encode("utf-8", "replace"))
    return h.digest()


def write(paths, st: State, base: Optional[Mark], named: Optional[Dict[str, bool]], after: Optional[Mark],
          old: Any = "read") -> None:
    """Write PRIORS.md for `st`, the fold of ledger `after`, which differs from ledger `base` only in
    the rows of the prior ids `named` (and in priors added after the old last one); `named[id]` is
    True when its record itself may have changed, False when only events touched it.

    `base`/`after` are None and `named` is None when unknown (then the whole table is rendered).
    `old` is the render mark as read before a caller dropped cache/ (redact); by default it is read here.
    """
    use = cache.enabled() and base is not None and after is not None and named is not None
    if old == "read":
        old = read_mark(paths.dir) if use else None
    new: Optional[Iterable[Any]] = None
    h = hashlib.sha256()  # of what is written, for the render mark
    md: Optional[bytes] = None
    if use and old is not None and (old[0], old[1]) == base and base != after and len(named or {}) > IN_PLACE_ROWS:
        blocks = read_blocks(paths.rendered)  # many rows redone (a commit): the old table is read as it is patched
        new = None if blocks is None else _streamed(blocks, old, st, named or {}, h)
    else:
        md = read_bytes(paths.rendered) if use and old is not None else None
        if old is not None and md is not None and hashlib.sha256(md).digest() == old[2]:
            if base == after and (old[0], old[1]) == after:
                return  # PRIORS.md is already the render of this very ledger: byte for byte what we would write
            if (old[0], old[1]) == base:
                new = _in_place(md, old[3], st, named or {})
                if new is None:
                    new = _streamed(iter((md,)), old, st, named or {}, h)
                    md = None  # (its pieces are hashed as they are written)
    whole = new is None
    try:
        atomic_write(paths.rendered, new if new is not None else _whole(st, h), size=None if md is None else len(md))
    except _Unread as failed:  # (reading the old table failed: as reading it whole would have)
        raise failed.exc from None
    except (UsageError, MachineError, _Stale):  # PRIORS.md changed or shrank under us, or is not the mark's: whole
        if whole:
            raise
        h, whole = hashlib.sha256(), True
        atomic_write(paths.rendered, _whole(st, h))
    if use and after is not None:
        for chunk in () if whole or md is None else new:  # type: ignore[union-attr]  # (`new` is set unless whole)
            if isinstance(chunk, tuple):  # (a range of the old PRIORS.md: `_in_place`'s, which hashes none itself)
                assert md is not None
                h.update(memoryview(md)[chunk[0]:chunk[1]])
            else:
                h.update(chunk)
        _write_mark(paths.dir, after, h.digest(), len(st.priors))


def _whole(st: State, h: Any) -> Iterator[bytes]:
    """The whole table, encoded a piece at a time as it is written (`views.markdown_pieces`), each piece
    hashed into `h`: the ~14 MB table at 100k priors is never held whole (a first call's or a cold call's
    peak: ~40 MB less)."""
    for piece in markdown_pieces(st):
        raw = piece.encode("utf-8")
        h.update(raw)
        yield raw


_CELL = rb"(?:[^\\|]|\\.)*"  # a cell as views.table_cell writes it: `|` and `\` only escaped
_STATUS_CELL = re.compile(rb"\| " + _CELL + rb" \| " + _CELL + rb" \| " + _CELL + rb" \| (" + _CELL + rb") \| ")
_REDACTED_TAIL = b"| *(redacted)* |"


def _row(p: PriorState, old: bytes, whole: bool) -> bytes:
    """The prior's new row. When only events changed it, only its status cell can differ (unless it
    was or is now redacted): that cell is swapped in the old row and the record is not read."""
    if not whole and not p.redacted and not old.endswith(_REDACTED_TAIL):
        m = _STATUS_CELL.match(old)
        if m is not None:
            return old[:m.start(1)] + table_cell(display_status(p)).encode("utf-8") + old[m.end(1):]
    return table_row(p).encode("utf-8")


IN_PLACE_ROWS = 256  # more changed rows than this: the table is patched as it is read instead (_streamed)


def _in_place(md: bytes, rows_before: int, st: State, named: Dict[str, bool]) -> Optional[List[Any]]:
    """PRIORS.md as chunks: the `named` rows redone, found by their id in one pass, rows for new
    priors added at the end, and every other byte a (start, end) range of the file as it is (copied
    by the kernel). None when many rows change (then `_streamed`) or a row is not where it should be."""
    keys = list(st.priors)
    if len(keys) < rows_before or len(named) > IN_PLACE_ROWS or not md.endswith(b"\n"):
        return None
    if md.count(b"\n") != HEAD_LINES + rows_before:
        return None
    # where each named prior's row is: one pass keeping only those (a dict of every id cost ~7 MB at 100k priors)
    pos = {pid: i for i, pid in enumerate(keys) if pid in named} if len(named) > 8 else None
    targets = []
    for pid, whole in named.items():
        if pid in st.priors:
            i = pos[pid] if pos is not None else keys.index(pid)
            if i < rows_before:
                targets.append((i, pid, whole))
    chunks: List[Any] = []
    cur = newlines = 0  # newlines = md[:cur].count(b"\n")
    for i, pid, whole in sorted(targets):
        at = md.find(b"\n| " + table_cell(pid).encode("utf-8") + b" |", max(cur - 1, 0))
        if at < 0:
            return None
        newlines += md.count(b"\n", cur, at)
        if newlines + 1 != HEAD_LINES + i:
            return None  # not the line the table puts this prior on
        end = md.find(b"\n", at + 1)
        chunks += [(cur, at + 1), _row(st.priors[pid], md[at + 1:end], whole)]
        cur, newlines = end, newlines + 1
    chunks.append((cur, len(md)))
    if len(keys) > rows_before:
        chunks.append("".join(table_row(st.priors[k]) + "\n" for k in keys[rows_before:]).encode("utf-8"))
    return chunks


class _Stale(Exception):
    """The PRIORS.md being patched is not the table its render mark names (`_streamed`): render it whole."""


class _Unread(Exception):
    """Reading the PRIORS.md being patched failed (`exc`): the write is given up, as a failed read of the
    whole file gave it up."""

    def __init__(self, exc: Exception) -> None:
        Exception.__init__(self)
        self.exc = exc


def _streamed(blocks: Iterator[bytes], old: Tuple[int, bytes, bytes, int], st: State, named: Dict[str, bool],
              h: Any) -> Iterator[bytes]:
    """PRIORS.md, the render of the ledger `old` names, with the rows of the `named` priors re-rendered
    and new priors' rows added — read a block at a time, and written a piece at a time (each hashed
    into `h` as it is handed on): a commit of 70k verdicts on an open-heavy ledger redoes 70k of 100k
    rows, and the table held whole, split into lines and joined again was ~45 MB at 100k priors. Row
    `i` is the table's line HEAD_LINES + i. The old table is hashed as it is read: a table that is not
    the one the mark names (edited meanwhile) or not laid out as it says raises `_Stale` at its end,
    before the temp file written from it takes its place."""
    rows_before = old[3]
    if rows_before == 0 or len(st.priors) < rows_before:
        raise _Stale
    check = hashlib.sha256()
    rows = iter(st.priors.items())
    line = -HEAD_LINES  # the row the next line of the old table is (a negative: the head's lines)
    rest = b""
    try:
        for block in blocks:
            check.update(block)
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            out: List[bytes] = []
            for text in lines:
                if line >= 0:
                    if line >= rows_before:
                        raise _Stale
                    pid, p = next(rows)
                    whole = named.get(pid)
                    if whole is not None:
                        text = _row(p, text, whole)
                out.append(text)
                line += 1
            out.append(b"")
            piece = b"\n".join(out)
            h.update(piece)
            yield piece
    except (UsageError, MachineError) as exc:
        raise _Unread(exc) from None
    if rest or line != rows_before or check.digest() != old[2]:
        raise _Stale
    if len(st.priors) > rows_before:
        piece = "".join(table_row(p) + "\n" for _, p in rows).encode("utf-8")
        h.update(piece)
        yield piece


# ---------------------------------------------------------------- render.bin
#
# MAGIC, signature(32), MAC(32), ledger length(8), ledger sha256(32), PRIORS.md sha256(32), rows(8). The MAC
# (store/cache_key.py) covers the fields after it: a mark written by hand for a `PRIORS.md` edited by hand
# would have `render` keep that table as the ledger's.

_FIELDS = len(MAGIC) + 32 + MAC_BYTES
_SIZE = _FIELDS + 8 + 32 + 32 + 8


def read_mark(priors_dir: Path) -> Optional[Tuple[int, bytes, bytes, int]]:
    raw = read_sealed(priors_dir, priors_dir / "cache" / RENDER_FILE, MAGIC, _signature(), _SIZE)
    if raw is None or len(raw) != _SIZE - _FIELDS:
        return None
    return (int.from_bytes(raw[0:8], "big"), raw[8:40], raw[40:72], int.from_bytes(raw[72:80], "big"))


def _write_mark(priors_dir: Path, ledger: Mark, md_digest: bytes, rows: int) -> None:
    """Best effort, like the fold cache: this is only an optimisation."""
    sealed = seal(priors_dir, MAGIC, _signature(), ledger[0].to_bytes(8, "big") + ledger[1] + md_digest + rows.to_bytes(8, "big"))
    if sealed is not None:
        write_file(priors_dir, RENDER_FILE, [sealed])
