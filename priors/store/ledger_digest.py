"""The ledger's length and SHA-256, taken without holding it twice: the prefix proof the fold cache relies on.

Reading and hashing release the GIL, so a large ledger is hashed on a second core while the verb
decodes the cache or waits on fsync (`Background`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from priors.store.files import read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, List, Optional, Tuple

CHUNK = 1 << 20  # the prefix is hashed in steps of this many bytes


def read_ledger(ledger: Path) -> bytes:
    data = read_bytes(ledger)
    return b"" if data is None else data


class Background:
    """`fn(*args)`, in a thread when `big`: reading and hashing release the GIL, so on a second core
    they cost nothing next to what the verb does meanwhile (decoding the snapshot, waiting on fsync)."""

    THREAD_BYTES = 8 << 20

    def __init__(self, fn: Any, args: Tuple[Any, ...], big: bool) -> None:
        self.fn, self.args = fn, args
        self.value: Any = None
        self.thread: Any = None
        if big:
            import threading

            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def _run(self) -> None:
        try:
            self.value = self.fn(*self.args)
        except BaseException:  # noqa: B036 - never a thread traceback on stderr: result() runs it again
            self.thread = None

    def result(self) -> Any:
        if self.thread is not None:
            self.thread.join()
            if self.thread is not None:
                return self.value
        return self.fn(*self.args)


def prefix_matches(ledger: Path, length: int, digest: bytes, want_data: bool) -> Optional[Tuple[Any, bytes]]:
    """Does the ledger start with the snapshot's bytes? Then (sha256 so far, the rest of the file).

    With want_data the rest is the whole file. Otherwise the prefix is hashed in 1 MiB steps and
    only the tail is kept."""
    hit = open_prefix(ledger, length, digest, want_data, keep=False)
    return None if hit is None else hit[:2]


def open_prefix(ledger: Path, length: int, digest: bytes, want_data: bool,
                keep: bool = True) -> Optional[Tuple[Any, bytes, Optional[int]]]:
    """`prefix_matches`, plus (with `keep`) a descriptor of the very file that was hashed, left open
    for reading records back: one open file serves the whole read, so a writer's rename in between
    cannot mix two versions, and records read later come from the bytes that were proven."""
    try:
        with open(str(ledger), "rb") as fh:
            if os.fstat(fh.fileno()).st_size < length:
                return None
            if want_data:
                data = fh.read()
                h = hashlib.sha256(memoryview(data)[:length])
                if h.digest() != digest:
                    return None
                return h, data, os.dup(fh.fileno()) if keep else None
            h = hashlib.sha256()
            buf = bytearray(min(CHUNK, max(length, 1)))
            view = memoryview(buf)
            left = length
            while left:
                n = fh.readinto(view[: min(len(buf), left)])
                if not n:
                    return None
                h.update(view[:n])
                left -= n
            if h.digest() != digest:
                return None
            return h, fh.read(), os.dup(fh.fileno()) if keep else None
    except OSError:
        return None


def measure_pieces(data: bytes, pieces: List[Any], known: Optional[int]) -> Tuple[int, bytes, int, int]:
    """(length, sha256, newlines — `known`, or counted — and last byte) of the pieces' bytes, never
    joined into one copy."""
    count = known is None
    h = hashlib.sha256()
    view = memoryview(data)
    length = lines = 0
    last = -1
    for piece in pieces:
        if isinstance(piece, tuple):
            start, end = piece
            h.update(view[start:end])
            if count:
                lines += data.count(b"\n", start, end)
            if end > start:
                length, last = length + end - start, data[end - 1]
        elif piece:
            h.update(piece)
            lines += piece.count(b"\n")
            length, last = length + len(piece), piece[-1]
    return length, h.digest(), lines if known is None else known, last


BLOCK = 1 << 20  # what `scan_lines` and `measure_file` hold of a ledger at a time (a few copies of it at once)


def read_at(fd: int, n: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, n, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows
    return os.read(fd, n)


def scan_lines(fd: int, size: int, find: Callable[[bytes], List[Tuple[int, int]]]) -> List[Tuple[int, int, bytes]]:
    """(start, end, bytes) of the lines `find` picks — given a run of whole lines, it answers (start,
    end) within it — from the first `size` bytes of the file open on `fd`, read a block at a time:
    `redact` at 100k priors no longer holds the 58 MB ledger beside its fold."""
    out: List[Tuple[int, int, bytes]] = []
    pos = 0
    carry = b""  # an unfinished line from the block before
    while pos < size:
        chunk = read_at(fd, min(BLOCK, size - pos), pos)
        if not chunk:
            raise OSError("the ledger is shorter than it was a moment ago")
        pos += len(chunk)
        block = carry + chunk
        base = pos - len(block)
        cut = block.rfind(b"\n") + 1 if pos < size else len(block)
        lines, carry = block[:cut], block[cut:]
        out += [(base + a, base + b, lines[a:b]) for a, b in find(lines)] if lines else []
    return out


def measure_file(fd: int, pieces: List[Any], known: Optional[int]) -> Tuple[int, bytes, int, int]:
    """`measure_pieces`, the spans read from the file open on `fd` a block at a time."""
    count = known is None
    h = hashlib.sha256()
    length = lines = 0
    last = -1
    for piece in pieces:
        if isinstance(piece, tuple):
            at, end = piece
            while at < end:
                chunk = read_at(fd, min(BLOCK, end - at), at)
                if not chunk:
                    raise OSError("the ledger is shorter than it was a moment ago")
                h.update(chunk)
                if count:
                    lines += chunk.count(b"\n")
                at += len(chunk)
                length, last = length + len(chunk), chunk[-1]
        elif piece:
            h.update(piece)
            lines += piece.count(b"\n")
            length, last = length + len(piece), piece[-1]
    return length, h.digest(), lines if known is None else known, last
