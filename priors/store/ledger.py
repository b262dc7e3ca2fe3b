"""The one ledger API: every read and write of `.priors/ledger.jsonl`'s bytes goes through here —
the folded ledger (through the fold cache), its records, its bytes or blocks, an append and what
follows it (the fold moved on, PRIORS.md patched), the one rewrite (redaction) — and a run's staging.
"""

from __future__ import annotations

import os
from itertools import chain

from priors.core.canonical import dumps
from priors.core.errors import UsageError, os_failure
from priors.core.fold import apply, named_in, parse_lines
from priors.core.fold_spans import quick_lists
from priors.core.ledger_parse import LEDGER_NAME, Deviation, blocks_of, clean_lists, strict_lists
from priors.core.views import display_status
from priors.core.vocabulary import RUN_RE
from priors.store import rendered
from priors.store.files import (
    CHANGED,
    LANDED,
    aftercare,
    atomic_write,
    check_inside,
    open_regular,
    read_blocks,
    read_bytes,
)
from priors.store.fold_cache import KEEP_OPEN, LedgerSource
from priors.store.fold_cache import load as cached_load
from priors.store.paths import GITIGNORE_LINES, Paths, list_run_dirs, require_init, require_ledger
from priors.store.signing import sign_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Protocol, Sequence, Tuple, TypeVar

    T = TypeVar("T")

    class Noter(Protocol):
        def see(self, r: Dict[str, Any]) -> None: ...

    N = TypeVar("N", bound=Noter)
    Span = Tuple[Dict[str, Any], int, int]
    Spans = Iterator[Span]


def load_ledger(paths: Paths, want_data: bool = True, write: bool = True):
    """The folded ledger (`fold_cache.Loaded`: its state, length, digest and — with `want_data` —
    its bytes), through the fold cache, which is exact or ignored. Read-only callers pass
    want_data=False, sparing the memory of a large ledger; a writer appends through `loaded`.
    `write` False: the cache is read, never written (`list` and `show` write nothing, as before)."""
    check_inside(paths.ledger)
    require_ledger(paths)
    return cached_load(paths.dir, paths.ledger, want_data, write)


def read_records(paths: Paths) -> List[Dict[str, Any]]:
    """The ledger's records, parsed once, in order — for the verbs that read its timeline (show,
    history, reflect) rather than its folded state. Every other verb reads `load_ledger`."""
    require_init(paths)
    return parse_lines(read_ledger_bytes(paths))  # refuses a deleted ledger too


SPAN_BLOCK = 1 << 17


def read_spans(paths: Paths, consume: Callable[[Spans, Optional[LedgerSource]], T], packs: bool = False,
               see: Optional[Callable[[List[Span]], List[Span]]] = None) -> T:
    """`consume(spans, src)`: the ledger's records in order, each with its line's byte offset and length,
    read a block at a time and never held all at once — for the verbs that read its timeline (show,
    list, history, report), which keep only what they print. `src` reads a prior's record back from
    its line (`fold.pack`; None for a ledger not written yet). `packs`: `consume` reads of a prior's
    record only what a fold reads, and packs it once folded, so a prior's line in the keepers' shape
    may be handed over as those few fields (`fold_spans.quick_lists`: its claim and evidence are never
    decoded).
    `see`: shown each block's spans (a list) before `consume` takes them one by one — a reader noting
    something of every record without a call a record in between — and returns them.

    The records are `read_records`' exactly: the clean parse first; at the first departure from it
    (a blank line, CRLF, no final newline, damage) `consume` is called again on the strict parse,
    which either accepts the ledger or names its bad line (DamagedLedger, after the records before
    it). So `consume` must be pure until it has taken the last record. One descriptor is read from
    start to end (a writer replaces the file, never changes it in place); where a file held open
    cannot be replaced (Windows) the bytes are read whole, as the fold cache does there."""
    require_init(paths)
    check_inside(paths.ledger)
    fd = open_regular(paths.ledger)
    if fd is None:
        require_ledger(paths)
        return consume(iter(()), None)
    if not KEEP_OPEN:  # pragma: no cover - Windows
        try:
            with os.fdopen(fd, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise os_failure(f"priors: cannot read {paths.ledger}: {exc.strerror or exc}", exc) from None
        src = LedgerSource(data=data)
        blocks: Iterable[Tuple[bytes, int]] = blocks_of(data)
        pieces: Iterable[bytes] = [data]
    else:
        src = LedgerSource(fd=fd)  # (closed with it, when the last prior reading through it is let go)
        try:
            size = os.fstat(fd).st_size
        except OSError as exc:
            raise os_failure(f"priors: cannot read {paths.ledger}: {exc.strerror or exc}", exc) from None
        blocks, pieces = _line_blocks(paths, fd, size), _pieces(paths, fd, size)
    lists = quick_lists(blocks) if packs else clean_lists(blocks)
    try:
        return consume(chain.from_iterable(lists if see is None else map(see, lists)), src)
    except Deviation:
        pass
    lists = strict_lists(pieces, LEDGER_NAME)
    return consume(chain.from_iterable(lists if see is None else map(see, lists)), src)


def note_records(paths: Paths, make: Callable[[], N]) -> Tuple[N, bool]:
    """`make()`'s `see` shown every record of the ledger in order, a block at a time and none held
    (`read_spans`; a prior's line in the keepers' shape may be handed over as only what a fold reads of
    it — its id, never its claim), for a reader that notes a few things of every record (the SARIF log,
    a reflection packet) — with whether the strict parse read the ledger again (a blank line, CRLF, no
    final newline: records are then not one a line)."""
    made: List[N] = []

    def consume(spans: Spans, _src: Optional[LedgerSource]) -> N:  # (called again on a strict parse)
        noter = make()
        made.append(noter)
        see = noter.see
        for rec, _at, _n in spans:
            see(rec)
        return noter

    return read_spans(paths, consume, packs=True), len(made) > 1


def numbered_lines(paths: Paths, loaded: Any, needles: Sequence[bytes]) -> Optional[Iterator[Tuple[int, bytes]]]:
    """(line number, the line without its newline) of each line that holds one of `needles`, in order,
    of the very ledger `loaded` was folded from (read through the descriptor, or the bytes, its priors
    read their records from: a ledger replaced since is not read). None when a line number is not
    the number of the record on it (a blank line, no final newline) or no record can be read back —
    the caller then reads the records themselves. `show` finds a prior's few lines so, a byte search
    where parsing 216k lines took seconds."""
    st = loaded.state
    if loaded.lines != st.records or not loaded.ends_with_newline:
        return None
    src = next((p[11] for p in st.priors.values() if p[11] is not None), None)  # (the first prior is packed)
    if not isinstance(src, LedgerSource):
        return None
    if src.data is not None:  # pragma: no cover - Windows keeps the bytes
        return _holding([src.data[:loaded.length]], needles)
    return None if src.fd is None else _holding(_pieces(paths, src.fd, loaded.length), needles)


def _holding(pieces: Iterable[bytes], needles: Sequence[bytes]) -> Iterator[Tuple[int, bytes]]:
    no = 0
    for piece in pieces:
        starts = set()
        for needle in needles:
            at = piece.find(needle)
            while at >= 0:
                start = piece.rfind(b"\n", 0, at) + 1
                starts.add(start)
                end = piece.find(b"\n", at)
                at = piece.find(needle, end) if end >= 0 else -1
        seen = 0
        for start in sorted(starts):
            no += piece.count(b"\n", seen, start)
            end = piece.find(b"\n", start)
            yield no + 1, piece[start:end if end >= 0 else len(piece)]
            seen = start
        no += piece.count(b"\n", seen)


def _read_at(paths: Paths, fd: int, n: int, at: int) -> bytes:
    try:
        return os.pread(fd, n, at)
    except OSError as exc:
        raise os_failure(f"priors: cannot read {paths.ledger}: {exc.strerror or exc}", exc) from None


def _pieces(paths: Paths, fd: int, size: int) -> Iterator[bytes]:
    """The first `size` bytes of `fd` in pieces of whole lines (the last without its newline, if the
    ledger ends without one), ~1 MiB each (a longer line: one piece, joined once)."""
    at = 0
    carry: List[bytes] = []
    while at < size:
        chunk = _read_at(paths, fd, min(SPAN_BLOCK, size - at), at)
        if not chunk:
            break
        at += len(chunk)
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            carry.append(chunk)
            continue
        yield b"".join(carry + [chunk[:cut]]) if carry else chunk[:cut]
        carry = [chunk[cut:]] if cut < len(chunk) else []
    if carry:
        yield b"".join(carry)


def _line_blocks(paths: Paths, fd: int, size: int) -> Iterator[Tuple[bytes, int]]:
    """(block of whole lines, its offset) of the first `size` bytes of `fd`; ValueError when they do
    not end with a newline (which only the strict parse accepts) or come up short."""
    start = 0
    for piece in _pieces(paths, fd, size):
        if not piece.endswith(b"\n"):
            raise ValueError("no final newline")
        yield piece, start
        start += len(piece)
    if start != size:
        raise ValueError("the ledger came up short")


def read_ledger_bytes(paths: Paths) -> bytes:
    """The ledger's bytes, never through a symlink; a ledger that is missing where one was is an error."""
    check_inside(paths.ledger)
    data = read_bytes(paths.ledger)
    if data is None:
        require_ledger(paths)
        return b""
    return data


def ledger_readable(paths: Paths) -> None:
    """Refuse what `read_ledger_bytes` refuses of the ledger's file — a symlink, a folder, a file that is
    not regular, one that cannot be opened — reading none of it."""
    check_inside(paths.ledger)
    fd = open_regular(paths.ledger)
    if fd is not None:
        os.close(fd)


def ledger_blocks(paths: Paths) -> Iterator[bytes]:
    """The ledger a block at a time (`verify --no-git`: proven without ever holding it whole); nothing
    for a ledger not written yet. Blocks of 64 KiB: verify's replay holds what it keeps for a long time
    among what it reads a block at a time, and a megabyte's block and the lines cut from it (two of
    text, with a dash) left the C heap ~10 MB larger at 100k priors, for no time saved."""
    check_inside(paths.ledger)
    return read_blocks(paths.ledger, 1 << 16) or iter(())


def ledger_tail(paths: Paths, start: int) -> Iterator[bytes]:
    """The ledger from byte `start` on, a block at a time (`ledger_blocks`): the lines a change adds, for
    `verify`'s checks of them."""
    check_inside(paths.ledger)
    return read_blocks(paths.ledger, 1 << 16, start) or iter(())


def ledger_sample(paths: Paths, places: int = 32, each: int = 1 << 16) -> List[bytes]:
    """Whole lines from `places` spots spread evenly over the ledger, about `each` bytes at each (the
    whole ledger when it is smaller): enough to weigh its namespaces for `verify`'s split
    (core/replay_split.py), where any split names the same lines and the weights only balance the two
    halves — reading the whole ledger for them cost both halves ~0.1 s at 100k priors."""
    check_inside(paths.ledger)
    try:
        with open(str(paths.ledger), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size <= places * each:
                return [f.read()]
            out = []
            for i in range(places):
                f.seek(size * i // places)
                raw = f.read(each)
                start = raw.find(b"\n") + 1 if i else 0  # (a line cut at either end is not counted)
                out.append(raw[start:raw.rfind(b"\n") + 1])
            return out
    except OSError:
        return []


def rewrite_ledger(paths: Paths, pieces: Sequence[Any], size: int) -> None:
    """The one write that is not an append: redaction's tombstone, the kept spans copied from the file
    (`size`: the length they were measured against, so a ledger that moved meanwhile is refused)."""
    atomic_write(paths.ledger, pieces, size=size)
    LANDED.append(str(paths.ledger))


def append_and_apply(paths: Paths, loaded: Any, lines: Iterable[Dict[str, Any]], folded: bool = False,
                     shown: Optional[Dict[str, str]] = None) -> None:
    """Append `lines` to the ledger `loaded` came from, move its fold on by them (unless the caller's
    plan `folded` them already) and patch PRIORS.md — every writing verb's last three steps.

    Once the ledger has landed nothing may turn the answer into a failure: rendering is aftercare,
    a failure there a loud warning that the next writer repairs (docs/reliability.md). `shown`: each
    prior's status column before the append, so rows whose column did not move are left alone."""
    after = append_ledger(paths, None, lines, loaded)
    st = loaded.state
    if not folded:
        for rec in lines:
            apply(st, rec)
    aftercare("rendering .priors/PRIORS.md", render, paths, st, loaded.mark, lines, after, shown)


def append_ledger(paths: Paths, data: Optional[bytes], records: Iterable[Dict[str, Any]],
                  loaded=None) -> Optional[Tuple[int, bytes]]:
    """Old bytes plus new canonical lines, written atomically.

    With `data` None the old bytes are copied from the file the `loaded` fold came from (they are
    never read into memory). Given `loaded`, returns the new ledger's (length, sha256).
    A person's lines are signed first when the repository asks for it (store/signing.py): a
    signature that cannot be made refuses the write before its first byte. (Only then are the old
    bytes read: a signature covers the content of the priors a line decides, as the ledger holds it.)"""
    def ledger_before() -> bytes:  # what the records follow: a person's signature covers the priors it decides
        if data is not None:
            return data
        held = read_bytes(paths.ledger) if loaded is not None else None
        return (held or b"")[:loaded.length] if loaded is not None else b""

    sign_lines(paths.root, records, ledger_before)
    text = getattr(records, "text", None)  # (core/verdicts.py `Records`, a commit's: 70k verdicts written as held)
    if text is not None:
        body = [piece.encode("utf-8") for piece in text()]
    else:
        body = ["".join(dumps(r) + "\n" for r in records).encode("utf-8")]
    if data is None:
        if loaded is None:
            raise ValueError("append_ledger needs the old bytes or the loaded ledger")
        new = [b"\n" if loaded.length and not loaded.ends_with_newline else b""] + body
        atomic_write(paths.ledger, new, keep=loaded.length)
    else:
        new = [b"\n" if data and not data.endswith(b"\n") else b""] + body
        atomic_write(paths.ledger, [data] + new)
    LANDED.append(str(paths.ledger))
    return None if loaded is None else _mark_after(loaded, new)


def _mark_after(loaded: Any, pieces: List[bytes]) -> Tuple[int, bytes]:
    """`loaded.mark_after` the pieces written, never joined (a commit's 70k verdicts: ~9 MB)."""
    h = loaded.hasher.copy()
    for piece in pieces:
        h.update(piece)
    return loaded.length + sum(map(len, pieces)), h.digest()


def render(paths: Paths, state=None, base: Optional[Tuple[int, bytes]] = None,
           appended: Sequence[Dict[str, Any]] = (), after: Optional[Tuple[int, bytes]] = None,
           shown: Optional[Dict[str, str]] = None) -> None:
    """Write PRIORS.md for `state`, the fold of ledger `after` = ledger `base` + `appended`.

    With both marks known only the rows that can have changed are rendered (priors.rendered);
    `shown` (id → status column before the append) drops those whose column did not move.
    Without a state the ledger is loaded: it is `after` (and `base` too, unless given)."""
    if state is None:
        loaded = load_ledger(paths, want_data=False)
        state, after = loaded.state, loaded.mark
        base = after if base is None else base
    named = named_in(appended)
    if shown:
        priors = state.priors
        named = {pid: whole for pid, whole in named.items()
                 if whole or pid not in priors or shown.get(pid) != display_status(priors[pid])}
    rendered.write(paths, state, base, named, after)


def open_runs(paths: Paths, state: Any) -> List[str]:
    """The runs with staging under runs/ that the ledger has not sealed, by id."""
    return [name for name in list_run_dirs(paths)
            if RUN_RE.match(name) and name not in state.commits and (paths.run_dir(name) / "relevant.json").is_file()]


def check_layout(paths: Paths) -> None:
    """Everything `init` (or a first `relevant`) would create is absent or already of the right
    kind — checked before the first folder is made, so a `.gitignore` that is a directory (say)
    is named up front instead of leaving half a `.priors/` behind."""
    want = [(paths.dir, True), (paths.runs, True), (paths.ledger, False), (paths.dir / ".gitignore", False),
            (paths.rendered, False)]
    for path, folder in want:
        if not os.path.lexists(str(path)):
            continue
        if path.is_symlink():
            raise UsageError(f"priors: {path} is a symlink; everything under .priors/ must be a real "
                             f"{'folder' if folder else 'file'} — move it aside and run again; nothing was created")
        if path.is_dir() != folder:
            raise UsageError(f"priors: {path} is {'not a folder' if folder else 'a folder'}, expected a "
                             f"{'folder' if folder else 'file'} — move it aside and run again; nothing was created")


def ensure_dirs(paths: Paths) -> None:
    """Create .priors/ and runs/ (what init and a first `relevant` need), after `check_layout`."""
    check_layout(paths)
    for d in (paths.dir, paths.runs):
        if d.is_symlink() or (d.exists() and not d.is_dir()):
            raise UsageError(f"priors: {d} exists and is not a directory")
        new = not d.is_dir()
        try:
            d.mkdir(exist_ok=True)
        except OSError as exc:
            raise os_failure(f"priors: cannot create {d}: {exc.strerror or exc}", exc) from None
        if new:  # recorded once made: a folder that could not be created is not named among the changes

            CHANGED.append(str(d))


def first_files(paths: Paths) -> None:
    """An empty ledger and the .gitignore lines that keep staging, the lock and caches out of git."""
    if not paths.ledger.exists():
        atomic_write(paths.ledger, b"")
    gi = paths.dir / ".gitignore"
    have = (read_bytes(gi) or b"").decode("utf-8", "replace").splitlines()
    want = [ln for ln in GITIGNORE_LINES if ln not in have]
    if want:
        atomic_write(gi, ("\n".join([*have, *want]) + "\n").encode("utf-8"))
