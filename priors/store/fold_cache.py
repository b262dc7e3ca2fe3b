"""The fold cache: the folded ledger kept on disk, exact or ignored.
"""

from __future__ import annotations

import gc
import hashlib
import json
import marshal
import os
import sys
import zlib
from bisect import bisect_right
from pathlib import Path

from priors.core import fold as _fold
from priors.core import ledger_parse as _parse
from priors.core.canonical import reject_constant
from priors.core.errors import CHANGED_IN_PLACE, DamagedLedger
from priors.core.fold import CallState, PriorState, State
from priors.store.cache_key import MAC_BYTES, cache_key, mac, new_mac, open_cache
from priors.store.files import open_regular, write_all
from priors.store.ledger_digest import (
    Background,
    measure_file,
    measure_pieces,
    open_prefix,
    prefix_matches,
    read_ledger,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

FORMAT = 6
CACHE_DIR = "cache"
CACHE_FILE = "fold.bin"
MAGIC = b"PRIORS-FOLD-CACHE\n"
MIN_BYTES = 64 * 1024
REFRESH_BYTES = 256 * 1024
ROWS = 1024  # priors per chunk: a load decodes one chunk at a time, so a large state never sits in memory twice


def enabled() -> bool:
    return os.environ.get("PRIORS_NO_CACHE", "") in ("", "0")


def min_bytes() -> int:
    """Ledgers smaller than this are folded directly (PRIORS_CACHE_MIN_BYTES overrides; tests use 0)."""
    raw = os.environ.get("PRIORS_CACHE_MIN_BYTES", "")
    return int(raw) if raw.isdigit() else MIN_BYTES


def refresh_bytes() -> int:
    """A tail shorter than this is folded on every load rather than rewriting the snapshot.

    Rewriting costs as much as the whole state (tens of MB at 100k priors) and a run appends a
    few KB: one rewrite per ~10 commits instead of one per call. PRIORS_CACHE_REFRESH_BYTES overrides.
    """
    raw = os.environ.get("PRIORS_CACHE_REFRESH_BYTES", "")
    return int(raw) if raw.isdigit() else REFRESH_BYTES


def rows_per_chunk() -> int:
    """PRIORS_CACHE_ROWS overrides ROWS (tests use a few, to have many chunks in a small ledger)."""
    raw = os.environ.get("PRIORS_CACHE_ROWS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else ROWS


def cache_dir(priors_dir: Path) -> Path:
    return priors_dir / CACHE_DIR


_SIG: Optional[bytes] = None


def _signature() -> bytes:
    """Who folded it: the cache format, this package's parse, fold and cache code, this Python's marshal."""
    global _SIG
    if _SIG is None:
        h = hashlib.sha256(f"{FORMAT}|{sys.version_info[:2]}|{marshal.version}|".encode())
        for mod in (_fold, _parse, sys.modules[__name__]):
            src = getattr(mod, "__file__", None) or ""
            try:
                with open(src, "rb") as fh:
                    h.update(fh.read())
            except OSError:
                h.update(src.encode("utf-8", "replace"))
        h.update(repr(list(State.__slots__) + list(PriorState.LAYOUT) + list(CallState.__slots__)).encode())
        _SIG = h.digest()
    return _SIG


# ---------------------------------------------------------------- encoding the state
#
# Priors are stored in chunks of columns (PriorState.LAYOUT's fields) with their facets as an index
# into one shared table of facet objects (a ledger has a handful of distinct ones) and, in place of
# each record, where the record's line lies in the ledger: (offset, length). The ledger is
# append-only and the snapshot is used only when the ledger still starts with the bytes it was
# folded from (SHA-256), so that line is the record. A record known only in memory (a tombstone a
# redact just wrote) is stored inline.

_LAYOUT = ("id", "status", "scope_hash", "miss", "human_idx", "_rec", "_packed", "_facets", "_ns", "_ref", "_every",
           "_src")
_WINDOW = 1 << 20  # `lines_many` reads at most this much at a time
KEEP_OPEN = os.name != "nt"  # Windows cannot replace a file another process holds open: read it whole there


class LedgerSource:
    """Reads a folded prior's record back from its ledger line: from `data` (the ledger's bytes, when
    the verb holds them anyway) or from `fd`, the very ledger file the fold was proven against — the
    descriptor is kept, so an append or a redact that replaces the file cannot mix two versions."""

    def __init__(self, data: Optional[bytes] = None, fd: Optional[int] = None) -> None:
        self.data, self.fd = data, fd

    decode: Any = None
    scan: Any = None

    def inflate(self, p: PriorState) -> Dict[str, Any]:
        off, ln = p[6]
        scan = self.scan
        if scan is None:  # one decoder for every record (json.loads would build one per call)
            scan = self.scan = _parse.scanner()
            self.decode = self.decode or self.decoder()
        try:
            raw = self.data[off:off + ln] if self.data is not None else _pread(self.fd, ln, off)
            text = raw.decode("utf-8")
            try:  # the C scanner itself: a third of a record's parse was `decode`'s own steps around it
                rec, end = scan(text, 0)
            except StopIteration:
                end = -1
            if end != len(text):  # (not one object alone: the full parse, which names the line as before)
                rec = self.decode(text)
        except (OSError, TypeError, ValueError, RecursionError):  # bad UTF-8 or JSON are ValueErrors
            rec = None
        if type(rec) is not dict or rec.get("t") != "prior" or rec.get("id") != p[0]:
            raise DamagedLedger(CHANGED_IN_PLACE)
        if p[7] is not None:
            rec["facets"] = p[7]  # one shared dict per distinct facet set
        return rec

    @staticmethod
    def decoder() -> Any:
        return json.JSONDecoder(parse_constant=reject_constant).decode

    def lines_many(self, ps: List[PriorState]) -> List[bytes]:
        """The ledger lines (without their newline) of `ps`, packed priors, in order: read a window of up
        to a megabyte at a time, in file order — one read where a line at a time makes thousands.
        OSError when the file cannot be read."""
        spans = [p[6] for p in ps]
        if self.data is not None:
            data = self.data
            return [data[off:off + ln] for off, ln in spans]
        raws: List[Any] = [None] * len(ps)
        order = sorted(range(len(ps)), key=spans.__getitem__)
        ends = [spans[i][0] + spans[i][1] for i in order]
        at = 0
        while at < len(order):
            start = spans[order[at]][0]
            last = max(at, bisect_right(ends, start + _WINDOW, at) - 1)  # (lines never overlap: ends rise too)
            window = _pread(self.fd, max(ends[at:last + 1]) - start, start)
            for i in order[at:last + 1]:
                off, ln = spans[i]
                raws[i] = window[off - start:off - start + ln]
            at = last + 1
        return raws

    def inflate_many(self, ps: List[PriorState]) -> List[Dict[str, Any]]:
        """`inflate` of each of `ps`, in order, for a verb that reads thousands: their lines read in
        windows (`lines_many`) and parsed as one JSON array — one read and one parse where `inflate`
        makes one of each per record. Anything unexpected and each is inflated on its own (which
        names a ledger changed in place)."""
        try:
            raws = self.lines_many(ps)
            decode = self.decode
            if decode is None:
                decode = self.decode = self.decoder()
            recs = decode("[" + b",".join(raws).decode("utf-8") + "]")
        except (OSError, TypeError, ValueError, RecursionError):
            recs = None
        if type(recs) is not list or len(recs) != len(ps):
            return [self.inflate(p) for p in ps]
        for p, rec in zip(ps, recs):
            if type(rec) is not dict or rec.get("t") != "prior" or rec.get("id") != p[0]:
                return [self.inflate(p) for p in ps]
            if p[7] is not None:
                rec["facets"] = p[7]
        return recs

    def close(self) -> None:
        _close(self)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # at interpreter exit `os` may already be gone: never a stray message
            pass


def _close(holder: Any) -> None:
    if holder.fd is not None:
        try:
            os.close(holder.fd)
        except OSError:
            pass
        holder.fd = None




def _pread(fd: Optional[int], n: int, offset: int) -> bytes:
    if fd is None:
        raise OSError("no file")
    if hasattr(os, "pread"):
        return os.pread(fd, n, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows keeps the bytes instead
    return os.read(fd, n)


def _mover(pieces: List[Any]) -> Any:
    """offset → offset in a ledger rewritten as `pieces` (spans (start, end) of the old bytes, or new
    bytes): a line inside a kept span moves with it; any other line has no place (None)."""
    starts: List[int] = []
    spans: List[Tuple[int, int, int]] = []
    at = 0
    for piece in pieces:
        if isinstance(piece, tuple):
            starts.append(piece[0])
            spans.append((piece[0], piece[1], at))
            at += piece[1] - piece[0]
        else:
            at += len(piece)

    def move(packed: Tuple[int, int]) -> Optional[Tuple[int, int]]:
        off, ln = packed
        k = bisect_right(starts, off) - 1
        if k < 0 or off + ln > spans[k][1]:
            return None
        return spans[k][2] + off - spans[k][0], ln

    return move


def _facet_indexes(facets: Tuple[Any, ...], table: List[Any]) -> List[int]:
    """Each prior's facets as an index into `table` (-1: none), appending the sets not in it yet.

    A state shares a handful of facet dicts, so each distinct dict is looked up once, by identity,
    and the column is then one pass in C speed; equal sets held in two dicts get one index."""
    index: Dict[Any, int] = {}
    for i, fac in enumerate(table):
        index.setdefault(tuple(fac.items()), i)
    by_id = {id(None): -1}
    for fac in {id(f): f for f in facets}.values():
        if fac is None:
            continue
        key = tuple(fac.items())
        at = index.get(key)
        if at is None:
            at = index[key] = len(table)
            table.append(fac)
        by_id[id(fac)] = at
    return [by_id[id(f)] for f in facets]


def _columns(priors: List[PriorState], table: List[Any], move: Any) -> Tuple[Any, ...]:
    """The priors of one chunk as columns: (id, status, scope_hash, miss, human_idx, line, facets,
    ns, scope_ref, review_every, records). A prior's line is its record's (offset, length) in the
    ledger; a prior known only in memory (a tombstone a redact just wrote) has none, and its
    record is kept in `records` under its position. Columns, not a row per prior: the transpose
    is one C call where rows took a Python loop (encoding at 10k: ~106 → ~75 M instructions)."""
    if PriorState.LAYOUT != _LAYOUT or CallState.__slots__ != ("rec", "resolved"):
        raise TypeError("fold state changed shape; the cache does not know it")
    status: Sequence[Any]  # columns: the transpose's tuples, two of them then remade as lists
    lines: Sequence[Any]
    ids, status, sh, miss, human, recs, lines, facets, ns, ref, every, _src = zip(*priors)
    one: Dict[Any, Any] = {}  # one object per distinct status: marshal then stores each once
    status = [one.setdefault(x, x) for x in status]
    records = {i: recs[i] for i, at in enumerate(lines) if at is None}
    if move is not None:
        lines = [None if at is None else move(at) for at in lines]
        if lines.count(None) != len(records):
            raise ValueError("a record's line has no place in the rewritten ledger")  # not written, then
    return ids, status, sh, miss, human, lines, _facet_indexes(facets, table), ns, ref, every, records


def _head(st: State, table: List[Any]) -> Tuple[Any, ...]:
    """(facet table, calls, the other fields): encoded after every chunk, which may add facets."""
    calls = [(c.rec, c.resolved) for c in st.calls]
    rest = {name: getattr(st, name) for name in st.fields() if name not in ("priors", "calls")}
    return table, calls, rest


def _encode_state(st: State, move: Any = None) -> List[Any]:
    """[head, chunk, chunk, ...]: head = (facet table, calls, other fields); chunks of ROWS priors."""
    table: List[Any] = []
    priors = list(st.priors.values())
    n = rows_per_chunk()
    chunks = [_columns(priors[i:i + n], table, move) for i in range(0, len(priors), n)]
    return [_head(st, table)] + chunks


def _decode_head(head: Tuple[Any, ...]) -> Tuple[State, List[Any]]:
    table, calls_rows, rest = head
    st = State()
    st.calls = [CallState(rec, resolved) for rec, resolved in calls_rows]
    for name, v in rest.items():
        setattr(st, name, v)
    _fold.index_calls(st)
    return st, table + [None]  # index -1 (no facets) reads the None at the end


def _decode_rows(st: State, table: List[Any], chunk: Tuple[Any, ...], src: LedgerSource) -> None:
    """A chunk of columns back into priors, each built in C from its row (PriorState.LAYOUT)."""
    ids, status, sh, miss, human, lines, facets, ns, ref, every, records = chunk
    n = len(ids)
    recs: List[Any] = [None] * n
    srcs: List[Any] = [src] * n
    for i, rec in records.items():
        recs[i], srcs[i] = rec, None
    made = map(PriorState, zip(ids, status, sh, miss, human, recs, lines, map(table.__getitem__, facets), ns, ref,
                               every, srcs))
    st.priors.update(zip(ids, made))


# ---------------------------------------------------------------- reading and writing the snapshot
#
# fold.bin = MAGIC, signature(32), MAC(32), ledger prefix length(8), its line count(8), its sha256(32),
# chunk count(8); then per chunk: size(8), crc32(8), marshal bytes. The MAC (store/cache_key.py) is an
# HMAC-SHA256 of everything after it under this user's key: checked over the whole file before any
# chunk is unmarshalled (`_proven`), so marshal never reads bytes this keeper did not write. Chunks are
# then read one at a time so a large state never sits in memory twice.

_FIELDS = len(MAGIC) + 32 + MAC_BYTES  # where the fields the MAC covers start
_HEAD = _FIELDS + 8 + 8 + 32 + 8


def _u64(b: bytes, i: int) -> int:
    return int.from_bytes(b[i:i + 8], "big")


def _read_snapshot(priors_dir: Path, ledger: Path, want_data: bool) -> Optional[Tuple[Any, ...]]:
    """(state, prefix length, lines, running sha256, rest of the ledger, records' source) when the
    snapshot is intact and matches the ledger. The rest is the whole ledger when `want_data`."""
    key = cache_key(priors_dir)
    fh = open_cache(cache_dir(priors_dir) / CACHE_FILE) if key is not None else None
    if fh is None or key is None:
        return None
    src = LedgerSource()
    with fh:
        head = fh.read(_HEAD)
        if len(head) != _HEAD or not head.startswith(MAGIC) or head[len(MAGIC):len(MAGIC) + 32] != _signature():
            return None
        i = _FIELDS
        length, lines = _u64(head, i), _u64(head, i + 8)
        digest, nchunks = head[i + 16:i + 48], _u64(head, i + 48)
        if not _plausible(fh, length, ledger):
            return None
        whole = want_data or not KEEP_OPEN
        check = Background(open_prefix, (ledger, length, digest, whole, not whole),  # beside the decoding
                           length >= Background.THREAD_BYTES)
        st = None
        if _proven(fh, key, head):
            try:
                st = _decode_snapshot(fh, nchunks, src)
            except (OSError, ValueError, TypeError, EOFError, IndexError):
                st = None
    hit = check.result()
    if st is None or hit is None:
        if hit is not None and hit[2] is not None:
            os.close(hit[2])
        return None
    h, rest, fd = hit
    if whole:
        src.data = rest  # the whole ledger: records are sliced from it
    else:
        src.fd = fd
    return st, length, lines, h, rest, src


def _plausible(fh: Any, length: int, ledger: Path) -> bool:
    """Could this file be a snapshot of the ledger's first `length` bytes? Asked before the MAC reads it all: a
    snapshot is never longer than twice what it describes and a megabyte, and describes no more than the ledger
    holds (hostile pass 27aw: a sparse 20 GiB file with a snapshot's head cost every verb minutes of hashing)."""
    try:
        return length <= os.stat(str(ledger)).st_size and os.fstat(fh.fileno()).st_size <= 2 * length + (1 << 20)
    except OSError:
        return False


def _proven(fh: Any, key: bytes, head: bytes) -> bool:
    """Does the file's MAC check under `key`? Reads the rest of the file, then goes back to the chunks."""
    h = new_mac(key)
    h.update(head[_FIELDS:])
    while True:
        block = fh.read(_WINDOW)
        if not block:
            break
        h.update(block)
    fh.seek(_HEAD)
    return h.digest() == head[len(MAGIC) + 32:_FIELDS]


def _decode_snapshot(fh: Any, nchunks: int, src: LedgerSource) -> Optional[State]:
    """The state in the snapshot's chunks (None if one is torn or damaged)."""
    st: Optional[State] = None
    table: List[Any] = []
    for _ in range(nchunks):
        sizes = fh.read(16)
        if len(sizes) != 16:
            return None
        size, crc = _u64(sizes, 0), _u64(sizes, 8)
        chunk = fh.read(size)
        if len(chunk) != size or zlib.crc32(chunk) != crc:
            return None
        obj = marshal.loads(chunk)
        del chunk
        if st is None:
            st, table = _decode_head(obj)
        else:
            _decode_rows(st, table, obj, src)
    if st is None or os.fstat(fh.fileno()).st_size != fh.tell():
        return None
    return st


def _write_snapshot(priors_dir: Path, length: int, digest: bytes, lines: int, st: State, move: Any = None,
                    opened: Any = None) -> None:
    """Best effort, atomic (temp + rename). Never raises. `opened`: the `fstat` of the ledger file
    the state was folded from, taken before it was read and with the file held open to the end
    (see `_still_describes`). Not written without this user's key (store/cache_key.py)."""
    key = cache_key(priors_dir)
    if key is None:
        return
    try:
        chunks = [_chunk(c) for c in _encode_state(st, move)]
    except (ValueError, TypeError):
        return
    write_file(priors_dir, CACHE_FILE, [_header(key, length, lines, digest, chunks)] + chunks,
               describes=(length, digest, opened))


def _header(key: bytes, length: int, lines: int, digest: bytes, chunks: List[bytes]) -> bytes:
    fields = length.to_bytes(8, "big") + lines.to_bytes(8, "big") + digest + len(chunks).to_bytes(8, "big")
    return MAGIC + _signature() + mac(key, [fields, *chunks]) + fields


def _chunk(obj: Any) -> bytes:
    c = marshal.dumps(obj, 4)
    return len(c).to_bytes(8, "big") + zlib.crc32(c).to_bytes(8, "big") + c


def write_file(priors_dir: Path, name: str, body: List[Any], describes: Optional[Tuple[Any, ...]] = None) -> None:
    """Write `cache/<name>` atomically (temp + rename), best effort: never raises, never follows a link.

    The cache is only ever an optimisation: a read-only `.priors/`, a full disk or a `cache`
    that is not a plain folder just means it is not written."""
    d = cache_dir(priors_dir)
    tmp = d / f".{name.split('.')[0]}.{os.getpid()}.tmp"
    try:
        if os.path.islink(str(d)) or os.path.islink(str(priors_dir)):
            return
        if not d.is_dir():
            if os.path.lexists(str(d)):
                return
            os.mkdir(str(d))
        if os.path.lexists(str(tmp)):
            os.unlink(str(tmp))  # never write through a leftover or planted name
        fd = os.open(str(tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_BINARY", 0), 0o644)
        try:
            for part in body:
                write_all(fd, part)
        finally:
            os.close(fd)
        os.replace(str(tmp), str(d / name))
        if describes is not None and not _still_describes(priors_dir / "ledger.jsonl", *describes):
            # The ledger changed under this lock-free writer (a redact rewrote it): this snapshot
            # may describe content that is gone from the ledger (a call's claim). Checked after the rename: a redact that
            # replaced the ledger before it is seen here, one after it removes cache/ itself.
            os.unlink(str(d / name))
    except (OSError, EOFError):
        try:
            os.unlink(str(tmp))
        except OSError:
            pass


def _still_describes(ledger: Path, length: int, digest: bytes, opened: Any) -> bool:
    """Does the ledger still start with the `length` bytes of SHA-256 `digest` a snapshot describes?

    The prefix is hashed as it is now. Before that, when the path still names the file `opened`
    describes (same device and inode: a file held open keeps its inode from being reused) but its
    size or modification or change time moved, another program wrote into it in place while it
    was read — every keeper write renames a new file into place instead — and the state folded
    from it is in doubt: the fold and the hash read it separately and may each have seen a
    different side of that write, which a later digest check could not tell. No snapshot then.
    (Skipping the hash when nothing moved saved ~4 ms at 10k priors, but a write through a shared
    mapping or on a file system with coarse times moves nothing `stat` shows.)"""
    if opened is not None:
        try:
            now = os.stat(str(ledger))
            if (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino) and \
                    (now.st_size, now.st_mtime_ns, now.st_ctime_ns) != \
                    (opened.st_size, opened.st_mtime_ns, opened.st_ctime_ns):
                return False
        except OSError:
            pass
    return prefix_matches(ledger, length, digest, False) is not None


# ---------------------------------------------------------------- the load path


class Loaded:
    """The folded ledger; `data` is the ledger's bytes when asked for."""

    def __init__(self, state: State, length: int, hasher: Any, data: Optional[bytes], from_cache: bool,
                 ends_with_newline: bool = True, named: Optional[Dict[str, bool]] = None,
                 lines: int = -1) -> None:
        self.state = state
        self.lines = lines  # newlines in the ledger (-1: not counted)
        self.named = named or {}  # the priors the records after that snapshot named
        self.ends_with_newline = ends_with_newline
        self.length = length
        self.hasher = hasher  # sha256 of the ledger's bytes so far: an append's digest costs only its own bytes
        self.digest: Optional[bytes] = hasher.digest() if hasher is not None else None  # (None: a reader's, `write` False)
        self.data = data
        self.from_cache = from_cache

    @property
    def mark(self) -> Tuple[int, bytes]:
        if self.digest is None:
            raise ValueError("a ledger loaded unmeasured (write=False) has no mark to write after")
        return self.length, self.digest

    def mark_after(self, appended: bytes) -> Tuple[int, bytes]:
        """(length, sha256) of this ledger with `appended` written after it."""
        h = self.hasher.copy()
        h.update(appended)
        return self.length + len(appended), h.digest()


def fresh_fold(data: bytes) -> Tuple[State, int]:
    """Parse (strictly) and fold the whole ledger `data`; returns the state and the number of lines."""
    return _fold.fold_data(data, _fold.LEDGER_NAME, LedgerSource(data=data)), data.count(b"\n")


def load(priors_dir: Path, ledger: Path, want_data: bool = False, write: bool = True) -> Loaded:
    """Fold the ledger at `ledger`, through the cache when it is provably in step. `write` False: the
    snapshot is read but never written, and a fold from scratch not measured (`digest` None) — for a
    reader that writes nothing (`list`, `show`)."""
    was_enabled = gc.isenabled()
    gc.disable()  # folding allocates hundreds of thousands of acyclic objects; GC passes only cost time
    try:
        return _load(priors_dir, ledger, want_data, write)
    finally:
        if hasattr(gc, "freeze"):
            gc.freeze()  # the folded state lives until exit: later collections need not walk it
        if was_enabled:
            gc.enable()


def _load(priors_dir: Path, ledger: Path, want_data: bool, write: bool = True) -> Loaded:
    use = enabled()
    hit = _read_snapshot(priors_dir, ledger, want_data) if use else None
    if hit is None:
        streamed = None if want_data or not KEEP_OPEN else _fresh_streamed(priors_dir, ledger, use and write, write)
        return streamed or _fresh(priors_dir, read_ledger(ledger), use and write, want_data, write)
    st, length, lines, h, rest, src = hit
    tail = memoryview(rest)[length:] if src.data is rest else memoryview(rest)
    size = length + len(tail)
    named: Dict[str, bool] = {}
    total = lines
    if tail:
        tail_bytes = tail.tobytes()
        records = _fold.fold_tail(st, tail_bytes, length, src, _fold.LEDGER_NAME, lines + 1)
        named = _fold.named_in(records)
        h.update(tail)
        total += tail_bytes.count(b"\n")
        if write and tail_bytes.endswith(b"\n") and len(tail_bytes) >= refresh_bytes():
            _write_snapshot(priors_dir, size, h.digest(), total, st)
    return Loaded(st, size, h, rest if want_data else None, True, not tail or tail[-1:] == b"\n", named, total)


def measure(data: bytes, pieces: Optional[List[Any]] = None, lines: Optional[int] = None) -> Background:
    """Start measuring a ledger a verb is rewriting — `data`, or the `pieces` (bytes, or (start, end)
    spans of `data`) it is made of, with `lines` newlines if known — for `store`."""
    pieces = [(0, len(data))] if pieces is None else pieces
    return Background(measure_pieces, (data, pieces, lines), len(data) >= Background.THREAD_BYTES)


def measure_from(fd: int, size: int, pieces: List[Any], lines: Optional[int] = None) -> Background:
    """`measure`, the kept spans read from the ledger file open on `fd` (`size` bytes long) rather
    than from its bytes in memory."""
    return Background(measure_file, (fd, pieces, lines), size >= Background.THREAD_BYTES)


def store(priors_dir: Path, st: State, measured: Background, moved: Optional[List[Any]] = None) -> Tuple[int, bytes]:
    """Snapshot `st` as the fold of the ledger a verb rewrote (redact), `measured` by `measure`.

    `moved`: the pieces the new ledger was made of, when `st`'s records still point into the old
    one (every offset is carried over). Returns the ledger's (length, sha256)."""
    length, digest, lines, last = measured.result()
    if enabled() and length >= min_bytes() and last == 10:
        _write_snapshot(priors_dir, length, digest, lines, st, None if moved is None else _mover(moved))
    return length, digest


def _fresh(priors_dir: Path, data: bytes, use: bool, want_data: bool = True, measure: bool = True) -> Loaded:
    hashing = Background(hashlib.sha256, (data,), len(data) >= Background.THREAD_BYTES) if measure else None
    st, lines = fresh_fold(data)  # (the hash beside it, in a thread, for a large ledger)
    h = hashing.result() if hashing is not None else None
    return _folded_fresh(priors_dir, st, len(data), h, lines, data.endswith(b"\n"), use, data if want_data else None)


def _folded_fresh(priors_dir: Path, st: State, size: int, h: Any, lines: int, ends: bool, use: bool,
                  data: Optional[bytes], opened: Any = None) -> Loaded:
    """What a fold from scratch leaves, read whole or a block at a time: a snapshot when the cache is
    on, the ledger big enough and ending with a newline (so an empty ledger leaves none), and the
    loaded ledger."""
    if use and ends and size >= min_bytes():
        _write_snapshot(priors_dir, size, h.digest(), lines, st, opened=opened)
    return Loaded(st, size, h, data, False, ends, lines=lines)


def _fresh_streamed(priors_dir: Path, ledger: Path, use: bool, measure: bool = True) -> Optional[Loaded]:
    """A first call that only reads (no bytes wanted): the ledger is folded a block at a time from one
    descriptor and never held whole — 58 MB less at 100k priors — and records are read back through
    that descriptor, as on a cache hit. A second thread hashes the same bytes beside the fold (both
    `pread`, so neither moves the other's place). None when the ledger is missing, strays anywhere
    from the clean form (a blank line, CRLF, no final newline, damage) or does not read back whole
    at the size it had when opened: the caller then reads it whole, and the strict parse decides.
    `measure` False: no hash (a reader that writes nothing has no use for the ledger's digest)."""
    fd = open_regular(ledger)
    if fd is None:
        return None
    src = LedgerSource(fd=fd)
    try:
        opened = os.fstat(fd)
        size = opened.st_size
        hashing = Background(_hash_descriptor, (fd, size), size >= Background.THREAD_BYTES) if measure else None
        st = _fold.fold_blocks(_line_blocks(fd, size), src)
        h = hashing.result() if hashing is not None else None
    except OSError:
        st = h = None
    if st is None or (h is None and measure):
        src.close()
        return None
    # (a ledger with bytes got this far only ending with a newline, and as clean lines: one record
    # each, so the records folded are its lines — counting newlines again cost ~4 ms at 10k)
    return _folded_fresh(priors_dir, st, size, h, st.records, size > 0, use, None, opened)


def _line_blocks(fd: int, size: int) -> Iterator[Tuple[bytes, int]]:
    """(block of whole lines, its offset) for the first `size` bytes of `fd`, ~1 MiB each.
    ValueError when the bytes do not end with a newline or come up short."""
    start = 0
    carry = b""
    while start + len(carry) < size:
        chunk = os.pread(fd, min(_parse.BLOCK, size - start - len(carry)), start + len(carry))
        if not chunk:
            raise ValueError("the ledger came up short")
        buf = carry + chunk
        cut = buf.rfind(b"\n") + 1
        carry = buf[cut:]
        if cut:
            yield buf[:cut], start
            start += cut
    if carry:
        raise ValueError("no final newline")


def _hash_descriptor(fd: int, size: int) -> Optional[Any]:
    """sha256 of the first `size` bytes of `fd` (None if it comes up short)."""
    h = hashlib.sha256()
    at = 0
    while at < size:
        chunk = os.pread(fd, min(1 << 20, size - at), at)
        if not chunk:
            return None
        h.update(chunk)
        at += len(chunk)
    return h
