"""The fold cache: the folded ledger kept on disk, exact or ignored.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import sys
import zlib
from bisect import bisect_right
from operator import itemgetter
from pathlib import Path

from priors.core import fold as _fold
from priors.store.ledger_digest import Background, measure_pieces, prefix_matches, read_ledger
from priors.core.fold import CallState, PriorState, State

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Tuple

FORMAT = 2
CACHE_DIR = "cache"
CACHE_FILE = "fold.bin"
MAGIC = b"PRIORS-FOLD-CACHE\n"
MIN_BYTES = 64 * 1024
REFRESH_BYTES = 256 * 1024
EAGER_BLOBS = 64 * 1024  # a blob region smaller than this is read at load; larger ones record by record
ROWS = 1024  # priors per row chunk: a rewrite redoes only the chunks that hold a changed prior


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
    """Who folded it: the cache format, this package's fold and cache code, this Python's marshal."""
    global _SIG
    if _SIG is None:
        h = hashlib.sha256(f"{FORMAT}|{sys.version_info[:2]}|{marshal.version}|".encode())
        for mod in (_fold, sys.modules[__name__]):
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
# A prior is stored as (id, ns, status, scope_hash, miss, human_idx, facets_index, blob, scope_ref): blob is
# marshal of its record with `facets` replaced by an index into one shared table of facet objects
# (a ledger has a handful of distinct ones). Loading builds no record dict; `PriorState.rec`
# inflates one on first use, so a verb pays only for the priors it reads.

_LAYOUT = ("id", "status", "scope_hash", "miss", "human_idx", "_rec", "_packed", "_facets", "_ns", "_ref", "_every",
           "_src")


def inflate(p: PriorState) -> Dict[str, Any]:
    """A cached prior's record, read from the snapshot file (or, if that is damaged, from the ledger)."""
    src: BlobSource = p._src
    blob = src.get(p._packed)
    if blob is None:
        return src.recover(p.id)
    rec = marshal.loads(blob)
    if p._facets is not None:
        rec["facets"] = p._facets
    return rec


class BlobSource:
    """The packed records of one loaded snapshot: the blob region at the end of fold.bin.

    Loading reads only the small rows; a record is read (pread, CRC-checked) when a verb asks for
    it, from the very file that was loaded — the descriptor is kept, so a later rewrite of
    fold.bin cannot mix versions. A damaged record falls back to folding the ledger prefix the
    snapshot stood for, so the cache still never changes a result.
    """

    def __init__(self, fd: Optional[int], start: int, size: int, ledger: Path, length: int, digest: bytes) -> None:
        self.fd, self.start, self.size = fd, start, size
        self.ledger, self.length, self.digest = ledger, length, digest
        self._all: Optional[bytes] = None
        self._fresh: Optional[State] = None
        # the layout of the file, so that a rewrite can copy what did not change (see _rewrite)
        self.table: List[Any] = []
        self.chunks: List[Tuple[int, int, int]] = []  # each row chunk's file offset, length (with its
        self.rows = 0                                   # 16-byte head) and first row

    def inflate(self, p: PriorState) -> Dict[str, Any]:
        return inflate(p)

    def get(self, packed: Tuple[int, int, int]) -> Optional[bytes]:
        off, ln, crc = packed
        if self._all is not None:
            blob = self._all[off:off + ln]
        else:
            try:
                blob = _pread(self.fd, ln, self.start + off)
            except (OSError, TypeError):
                return None
        return blob if len(blob) == ln and zlib.crc32(blob) == crc else None

    def region(self) -> bytes:
        """All the records at once (a snapshot rewrite needs every one)."""
        if self._all is None:
            try:
                self._all = _pread(self.fd, self.size, self.start)
            except (OSError, TypeError):
                self._all = b""
        return self._all

    def recover(self, pid: str) -> Dict[str, Any]:
        from priors.core.errors import DamagedLedger

        if self._fresh is None:
            data = read_ledger(self.ledger)
            if len(data) < self.length or hashlib.sha256(memoryview(data)[:self.length]).digest() != self.digest:
                raise DamagedLedger("priors: .priors/cache/fold.bin is damaged and the ledger changed meanwhile — "
                                    "delete .priors/cache/ and run the command again; nothing was written")
            self._fresh = fresh_fold(data[:self.length])[0]
            try:
                os.unlink(str(self.ledger.parent / CACHE_DIR / CACHE_FILE))  # rebuilt by the next load
            except OSError:
                pass
        return dict(self._fresh.priors[pid].rec)

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # at interpreter exit `os` may already be gone: never a stray message
            pass


def _pread(fd: Optional[int], n: int, offset: int) -> bytes:
    if fd is None:
        raise OSError("no snapshot file")
    if hasattr(os, "pread"):
        return os.pread(fd, n, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows reads the region eagerly instead
    return os.read(fd, n)


def _pack(rec: Dict[str, Any], table: List[Any], index: Dict[Any, int]) -> Tuple[int, bytes]:
    f = rec.get("facets")
    if type(f) is dict:
        key = tuple(f.items())
        try:
            i = index.get(key)  # found: equal to facets already checked to be all text (only text equals text)
        except TypeError:  # a facet value that is a list or an object: not tabled
            return -1, marshal.dumps(rec, 4)
        if i is None:
            if not all(type(k) is str and type(v) is str for k, v in key):
                return -1, marshal.dumps(rec, 4)
            i = index[key] = len(table)
            table.append(dict(f))
        rec = dict(rec)
        rec["facets"] = i
        return i, marshal.dumps(rec, 4)
    return -1, marshal.dumps(rec, 4)


def _facet_index(fac: Optional[Dict[str, Any]], table: List[Any], index: Dict[Any, int]) -> int:
    if fac is None:
        return -1
    i = index.get(id(fac))  # a cached state shares a handful of facet dicts: find them by identity first
    if i is not None and table[i] is fac:
        return i
    key = tuple(fac.items())
    i = index.get(key)
    if i is None:
        i = index[key] = len(table)
        table.append(fac)
    index[id(fac)] = i
    return i


class _Encoder:
    """Encodes priors into rows and packed records, appending to one facet table and one blob region.

    `keep`: a loaded snapshot whose blob region the new file keeps as is — a prior still packed
    there keeps its (offset, length, crc); any other packed prior is copied over, with its CRC.
    """

    def __init__(self, table: List[Any], keep: Optional["BlobSource"] = None, at: int = 0) -> None:
        if PriorState.LAYOUT != _LAYOUT or CallState.__slots__ != ("rec", "resolved"):
            raise TypeError("fold state changed shape; the cache does not know it")
        self.table = table
        self.index: Dict[Any, int] = {}
        for i, fac in enumerate(table):
            self.index.setdefault(tuple(fac.items()), i)
            self.index[id(fac)] = i
        self.keep = keep
        self.at = at  # where the next blob goes in the region
        self.blobs: List[bytes] = []
        self.one: Dict[Any, Any] = {}  # one object per distinct ref, ns and status: marshal then stores each once
        self.regions: Dict[int, bytes] = {}

    def rows(self, priors: Any) -> List[Any]:
        """One row per prior (PriorState.LAYOUT, facets as a table index). This loop runs 100k times on
        a full rewrite, hence the indexing by position and no calls it can spare."""
        table, index, one, keep, blobs = self.table, self.index, self.one, self.keep, self.blobs
        at = self.at
        rows = []
        for p in priors:
            status = one.setdefault(p[1], p[1])
            if p[5] is None:
                src: BlobSource = p[11]
                if src is keep:  # the region is kept: so is where the record lies in it
                    rows.append((p[0], status, p[2], p[3], p[4], None, p[6], _facet_index(p[7], table, index),
                                 p[8], p[9], p[10], None))
                    continue
                # packed by an earlier snapshot: bytes copied with their stored CRC (damage stays detectable);
                # ns and ref are already shared objects, which marshal stores once
                region = self.regions.get(id(src))
                if region is None:
                    region = self.regions[id(src)] = src.region()
                off, ln, crc = p[6]
                blob = region[off:off + ln]
                if len(blob) != ln:
                    raise ValueError("a packed record is missing")  # the snapshot is then simply not written
                rows.append((p[0], status, p[2], p[3], p[4], None, (at, ln, crc), _facet_index(p[7], table, index),
                             p[8], p[9], p[10], None))
            else:
                rec = p[5]
                fi, blob = _pack(rec, table, index)
                ns, ref = rec.get("ns"), p.scope_ref
                if ref is not None:
                    ref = one.setdefault(("r", ref), ref)
                if isinstance(ns, str):
                    ns = one.setdefault(("n", ns), ns)
                rows.append((p[0], status, p[2], p[3], p[4], None, (at, len(blob), zlib.crc32(blob)), fi, ns, ref,
                             rec.get("review_every"), None))
            blobs.append(blob)
            at += len(blob)
        self.at = at
        return rows

    def head(self, st: State) -> Tuple[Any, ...]:
        """(facet table, calls, the other fields): encode it after every row, which may add facets."""
        calls = [(c.rec, c.resolved) for c in st.calls]
        rest = {name: getattr(st, name) for name in State.__slots__ if name not in ("priors", "calls")}
        return self.table, calls, rest


def _encode_state(st: State) -> Tuple[List[Any], List[bytes]]:
    """([head, rows, rows, ...], blobs): head = (facet table, calls, other fields); rows in slices of
    ROWS, each prior's packed record given as (offset, length, crc32) into the concatenated blobs."""
    enc = _Encoder([])
    rows = enc.rows(st.priors.values())
    n = rows_per_chunk()
    return [enc.head(st)] + [rows[i:i + n] for i in range(0, len(rows), n)], enc.blobs


def _decode_head(head: Tuple[Any, ...]) -> Tuple[State, List[Any]]:
    table, calls_rows, rest = head
    st = State()
    st.calls = [CallState(rec, resolved) for rec, resolved in calls_rows]
    for name, v in rest.items():
        setattr(st, name, v)
    return st, table


def _decode_rows(st: State, table: List[Any], rows: List[Any], src: "BlobSource") -> None:
    """Rows are PriorState.LAYOUT with the facets as a table index: the list is built in C."""
    made = list(map(PriorState, rows))
    for p in made:
        fi = p[7]
        p[7] = table[fi] if fi >= 0 else None
        p[11] = src
    st.priors.update(zip([p[0] for p in made], made))


# ---------------------------------------------------------------- reading and writing the snapshot
#
# fold.bin = MAGIC, signature(32), ledger prefix length(8), its line count(8), its sha256(32),
# chunk count(8), blob region size(8); then per chunk: size(8), crc32(8), marshal bytes; then the
# blob region: every prior's packed record, each with its CRC in its row. Chunks are read one at
# a time so a large state never sits in memory twice; the blob region is not read at load at all.

_HEAD = len(MAGIC) + 32 + 8 + 8 + 32 + 8 + 8


def _u64(b: bytes, i: int) -> int:
    return int.from_bytes(b[i:i + 8], "big")


def _read_snapshot(priors_dir: Path, ledger: Path,
                   want_data: bool) -> Optional[Tuple[State, int, int, Any, bytes, "BlobSource"]]:
    """(state, prefix length, lines, running sha256, tail, its records' source) when the snapshot is
    intact and matches the ledger."""
    path = cache_dir(priors_dir) / CACHE_FILE
    try:
        fh = open(str(path), "rb")
    except OSError:
        return None
    with fh:
        head = fh.read(_HEAD)
        if len(head) != _HEAD or not head.startswith(MAGIC) or head[len(MAGIC):len(MAGIC) + 32] != _signature():
            return None
        i = len(MAGIC) + 32
        length, lines = _u64(head, i), _u64(head, i + 8)
        digest, nchunks, blob_size = head[i + 16:i + 48], _u64(head, i + 48), _u64(head, i + 56)
        check = Background(prefix_matches, (ledger, length, digest, want_data),  # beside the decoding below
                           length >= Background.THREAD_BYTES)
        src = BlobSource(None, 0, blob_size, ledger, length, digest)  # its start is known after the chunks
        try:
            st = _decode_snapshot(fh, nchunks, blob_size, src)
        except (OSError, ValueError, TypeError, EOFError, IndexError):
            st = None
    hit = check.result()
    if st is None or hit is None:
        src.close()
        return None
    h, rest = hit
    return st, length, lines, h, rest, src


def _decode_snapshot(fh: Any, nchunks: int, blob_size: int, src: "BlobSource") -> Optional[State]:
    """The state in the snapshot's chunks (None if one is torn or damaged); `src` learns its layout."""
    st: Optional[State] = None
    table: List[Any] = []
    for _ in range(nchunks):
        at = fh.tell()
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
            src.table = table
        else:
            _decode_rows(st, table, obj, src)
            src.chunks.append((at, 16 + size, src.rows))
            src.rows += len(obj)
    start = fh.tell()
    if st is None or os.fstat(fh.fileno()).st_size != start + blob_size:
        return None
    src.start = start
    if os.name == "nt" or blob_size < EAGER_BLOBS:
        src._all = fh.read(blob_size)  # small, or Windows (an open file could not be replaced)
    else:
        src.fd = os.dup(fh.fileno())  # the records are read from this very file, on demand
    return st


def _write_snapshot(priors_dir: Path, length: int, digest: bytes, lines: int, st: State) -> None:
    """Best effort, atomic (temp + rename). Never raises."""
    try:
        parts, blobs = _encode_state(st)
        chunks = [_chunk(c) for c in parts]
    except (ValueError, TypeError):
        return
    header = _header(length, lines, digest, len(chunks), sum(len(b) for b in blobs))
    write_file(priors_dir, CACHE_FILE, [header] + chunks + [b"".join(blobs)], describes=(length, digest))


def _header(length: int, lines: int, digest: bytes, nchunks: int, blob_size: int) -> bytes:
    return (MAGIC + _signature() + length.to_bytes(8, "big") + lines.to_bytes(8, "big") + digest
            + nchunks.to_bytes(8, "big") + blob_size.to_bytes(8, "big"))


def _rewrite(priors_dir: Path, length: int, digest: bytes, lines: int, st: State, src: Optional["BlobSource"],
             dirty: Any, scrub: Tuple[str, ...] = ()) -> bool:
    """Write the snapshot of `st` — loaded from `src`, and changed since only in the priors `dirty`
    and in the ledger-wide fields — copying from the file `src` was read every row chunk that holds
    no such prior, and its whole blob region: the cost is that of the change, not of the ledger.

    `scrub` (redact): priors whose old records must not survive even as unused bytes; their blobs
    are zeroed, and their facets dropped from the table unless another prior has the same.
    False when it cannot (no open snapshot file, as on Windows): then the caller writes it whole.
    """
    if src is None or src.fd is None or src._all is not None or not src.chunks:
        return False
    keys = list(st.priors)
    if len(keys) < src.rows:
        return False
    starts = [c[2] for c in src.chunks]
    touched = set(dirty) | set(scrub)
    pos = dict(zip(keys, range(len(keys)))) if len(touched) > 8 else None
    redo = set()
    for pid in touched:
        if pid in st.priors:
            i = pos[pid] if pos is not None else keys.index(pid)
            if i < src.rows:
                redo.add(bisect_right(starts, i) - 1)
    grown = len(keys) > src.rows  # new priors: the last chunk is redone with them, in chunks of ROWS
    n = rows_per_chunk()
    try:
        enc = _Encoder(list(src.table), keep=src, at=src.size)
        zeros = _scrub_ranges(st, src, scrub, keys, pos, starts, enc.table)
        if zeros is None:
            return False
        parts: List[Any] = []
        last = len(src.chunks) - 1 if grown else len(src.chunks)
        for k in range(last):
            off, ln, first = src.chunks[k]
            if k in redo:
                end = src.chunks[k + 1][2] if k + 1 < len(src.chunks) else src.rows
                parts.append(_chunk(enc.rows(st.priors[key] for key in keys[first:end])))
            else:
                parts.append((src.fd, off, ln))
        count = last
        for i in range(starts[last] if grown else len(keys), len(keys), n):
            parts.append(_chunk(enc.rows(st.priors[key] for key in keys[i:i + n])))
            count += 1
        head = _chunk(enc.head(st))
    except (ValueError, TypeError, OSError, EOFError, IndexError):
        return False
    at = 0
    for off, ln in sorted(zeros):
        if off > at:
            parts.append((src.fd, src.start + at, off - at))
        parts.append(bytes(ln))
        at = max(at, off + ln)
    if src.size > at:
        parts.append((src.fd, src.start + at, src.size - at))
    write_file(priors_dir, CACHE_FILE, [_header(length, lines, digest, 1 + count, enc.at), head] + parts + enc.blobs,
               describes=(length, digest))
    return True


def _chunk(obj: Any) -> bytes:
    c = marshal.dumps(obj, 4)
    return len(c).to_bytes(8, "big") + zlib.crc32(c).to_bytes(8, "big") + c


def _scrub_ranges(st: State, src: "BlobSource", scrub: Tuple[str, ...], keys: List[str], pos: Optional[Dict[str, int]],
                  starts: List[int], table: List[Any]) -> Optional[List[Tuple[int, int]]]:
    """The region ranges of the `scrub` priors' old records (read from their old rows), to be zeroed;
    a facet entry only they had is blanked in `table`. None if an old row is not where it should be."""
    zeros = []
    for pid in scrub:
        if pid not in st.priors:
            continue
        i = pos[pid] if pos is not None else keys.index(pid)
        if i >= src.rows:
            continue  # not in the old snapshot at all
        off, ln, first = src.chunks[bisect_right(starts, i) - 1]
        raw = _pread(src.fd, ln, off)
        if len(raw) != ln or zlib.crc32(raw[16:]) != _u64(raw, 8):
            return None
        row = marshal.loads(raw[16:])[i - first]
        if row[0] != pid:
            return None
        zeros.append(row[6][:2])
        fi = row[7]
        if fi >= 0 and not _facets_shared(st, table[fi]):  # st holds the scrubbed prior's new state
            table[fi] = {}
    return zeros


def _facets_shared(st: State, fac: Any) -> bool:
    """Does any prior have these facets? (Every row naming a table entry does.) Scans in C: the
    facets beside packed records, then the inflated records."""
    vals = list(st.priors.values())
    if fac in list(map(itemgetter(7), vals)):
        return True
    return any(r.get("facets") == fac for r in map(itemgetter(5), vals) if r is not None)


def write_file(priors_dir: Path, name: str, body: List[Any], describes: Optional[Tuple[int, bytes]] = None) -> None:
    """Write `cache/<name>` atomically (temp + rename), best effort: never raises, never follows a link.

    The cache is only ever an optimisation: a read-only `.priors/`, a full disk or a `cache`
    that is not a plain folder just means it is not written. A part may be bytes, or
    (fd, offset, length): that range of an open file, copied by the kernel where it can."""
    from priors.store.files import copy_range, write_all

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
                if isinstance(part, tuple):
                    copy_range(*part, fd)
                else:
                    write_all(fd, part)
        finally:
            os.close(fd)
        os.replace(str(tmp), str(d / name))
        if describes is not None and prefix_matches(priors_dir / "ledger.jsonl", describes[0], describes[1], False) is None:
            # The ledger changed under this lock-free writer (a redact rewrote it): this snapshot may
            # hold content that is gone from the ledger. Checked after the rename: a redact that
            # replaced the ledger before it is seen here, one after it removes cache/ itself.
            os.unlink(str(d / name))
    except (OSError, EOFError):
        try:
            os.unlink(str(tmp))
        except OSError:
            pass


# ---------------------------------------------------------------- the load path


class Loaded:
    """The folded ledger; `data` is the ledger's bytes when asked for."""

    def __init__(self, state: State, length: int, hasher: Any, data: Optional[bytes], from_cache: bool,
                 ends_with_newline: bool = True, src: Optional[BlobSource] = None,
                 named: Optional[Dict[str, bool]] = None, lines: int = -1) -> None:
        self.state = state
        self.lines = lines  # newlines in the ledger (-1: not counted)
        self.src = src  # the snapshot it was read from, if any
        self.named = named or {}  # the priors the records after that snapshot named
        self.ends_with_newline = ends_with_newline
        self.length = length
        self.hasher = hasher  # sha256 of the ledger's bytes so far: an append's digest costs only its own bytes
        self.digest = hasher.digest()
        self.data = data
        self.from_cache = from_cache

    @property
    def mark(self) -> Tuple[int, bytes]:
        return self.length, self.digest

    def mark_after(self, appended: bytes) -> Tuple[int, bytes]:
        """(length, sha256) of this ledger with `appended` written after it."""
        h = self.hasher.copy()
        h.update(appended)
        return self.length + len(appended), h.digest()


def fresh_fold(data: bytes, name: str = ".priors/ledger.jsonl", first_line: int = 1) -> Tuple[State, int]:
    """Parse (strictly) and fold; returns the state and the number of lines."""
    if first_line == 1:
        return _fold.fold_data(data, name), data.count(b"\n")
    return _fold.fold(_parse_from(data, name, first_line)), data.count(b"\n")


def _parse_from(data: bytes, name: str, first_line: int) -> List[Dict[str, Any]]:
    """parse_lines, but with line numbers continuing after `first_line - 1` already-checked lines."""
    from priors.core.errors import DamagedLedger

    try:
        return _fold.parse_lines(data, name)
    except DamagedLedger as exc:
        msg = str(exc)
        marker = f"{name} line "
        if marker in msg:
            head, _, tail = msg.partition(marker)
            num, _, rest = tail.partition(":")
            if num.isdigit():
                msg = f"{head}{marker}{int(num) + first_line - 1}:{rest}"
        raise DamagedLedger(msg) from None


def load(priors_dir: Path, ledger: Path, want_data: bool = False) -> Loaded:
    """Fold the ledger at `ledger`, through the cache when it is provably in step."""
    was_enabled = gc.isenabled()
    gc.disable()  # folding allocates hundreds of thousands of acyclic objects; GC passes only cost time
    try:
        return _load(priors_dir, ledger, want_data)
    finally:
        if hasattr(gc, "freeze"):
            gc.freeze()  # the folded state lives until exit: later collections need not walk it
        if was_enabled:
            gc.enable()


def _load(priors_dir: Path, ledger: Path, want_data: bool) -> Loaded:
    use = enabled()
    hit = _read_snapshot(priors_dir, ledger, want_data) if use else None
    if hit is None:
        return _fresh(priors_dir, read_ledger(ledger), use, want_data)
    st, length, lines, h, rest, src = hit
    data = rest if want_data else None
    tail = memoryview(rest)[length:] if want_data else memoryview(rest)
    size = length + len(tail)
    named: Dict[str, bool] = {}
    total = lines
    if tail:
        tail_bytes = tail.tobytes()
        records = _parse_from(tail_bytes, ".priors/ledger.jsonl", lines + 1)
        for rec in records:
            _fold.apply(st, rec)
        named = _fold.named_in(records)
        h.update(tail)
        total += tail_bytes.count(b"\n")
        if tail_bytes.endswith(b"\n") and len(tail_bytes) >= refresh_bytes():
            digest = h.digest()
            if not _rewrite(priors_dir, size, digest, total, st, src, named):
                _write_snapshot(priors_dir, size, digest, total, st)
    return Loaded(st, size, h, data, True, not tail or tail[-1:] == b"\n", src, named, total)


def measure(data: bytes, pieces: Optional[List[Any]] = None, lines: Optional[int] = None) -> Background:
    """Start measuring a ledger a verb is rewriting — `data`, or the `pieces` (bytes, or (start, end)
    spans of `data`) it is made of, with `lines` newlines if known — for `store`."""
    pieces = [(0, len(data))] if pieces is None else pieces
    return Background(measure_pieces, (data, pieces, lines), len(data) >= Background.THREAD_BYTES)


def store(priors_dir: Path, st: State, measured: Background, loaded: Optional[Loaded] = None,
          scrub: Tuple[str, ...] = ()) -> Tuple[int, bytes]:
    """Snapshot `st` as the fold of the ledger a verb rewrote (redact), `measured` by `measure`.

    Given the `loaded` ledger `st` was derived from, changed only in the priors `scrub`, the
    snapshot it came from is rewritten only where that changes it (`_rewrite`).
    Returns the ledger's (length, sha256)."""
    length, digest, lines, last = measured.result()
    if enabled() and length >= min_bytes() and last == 10:
        done = loaded is not None and _rewrite(priors_dir, length, digest, lines, st, loaded.src,
                                               set(loaded.named) | set(scrub), scrub)
        if not done:
            _write_snapshot(priors_dir, length, digest, lines, st)
    return length, digest


def _fresh(priors_dir: Path, data: bytes, use: bool, want_data: bool = True) -> Loaded:
    hashing = Background(hashlib.sha256, (data,), len(data) >= Background.THREAD_BYTES)  # beside the fold
    st, lines = fresh_fold(data)
    h = hashing.result()
    if use and len(data) >= min_bytes() and data.endswith(b"\n"):
        _write_snapshot(priors_dir, len(data), h.digest(), lines, st)
    return Loaded(st, len(data), h, data if want_data else None, False, data.endswith(b"\n"), lines=lines)
