"""Bytes on disk: the one atomic writer, reads that tolerate absence, safe directory helpers.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
import sys
from pathlib import Path

from priors.core.errors import MachineError, UsageError, os_failure

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Iterable, Iterator, Optional, Tuple, Union

    Bytes = Union[bytes, bytearray, memoryview]
    Chunk = Union[Bytes, Tuple[int, int], "Spool"]  # bytes, a (start, end) range of the old file, or a spool's text


# What this process changed on disk, in order: the catch-all error message says "nothing was
# changed" only when this is empty, and a failure after the ledger landed is a warning, not the answer.
CHANGED: "list" = []
WARNINGS: "list" = []  # steps that failed after the ledger landed; printed on stderr, exit 0
LANDED: "list" = []  # the ledgers this call wrote records into (an append, a redaction): from then on the change stands


def ledger_landed() -> bool:
    """True once this call wrote records into a ledger (an empty one made for a first run is no
    landing: a step failing after it is the machine's failure, not a change that stands)."""
    return bool(LANDED)


def aftercare(what: str, fn, *args, **kwargs):
    """Run a step that follows a landed ledger write (render, cache, staging clean-up): its failure
    becomes a warning on stderr and the verb still answers and exits 0 — the change stands, and the
    next verb repairs what this step left (PRIORS.md is re-rendered in full, caches are rebuilt)."""
    try:
        return fn(*args, **kwargs)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        detail = detail[len("priors: "):] if detail.startswith("priors: ") else detail
        name = getattr(exc, "filename", None)
        WARNINGS.append(f"priors: warning: {what} failed after the ledger was written ({detail}"
                        f"{f': {name}' if name else ''}); the change stands — do not repeat the call; "
                        "the next writing verb or `priors render` repairs it once the cause is gone")
        return None


def read_bytes(path: Path, limit: Optional[int] = None, what: str = "") -> Optional[bytes]:
    """File bytes, or None when it does not exist; a wrong path or file is a usage error, a failing
    machine (permission denied, an I/O error) a MachineError.

    Only a regular file is read: a FIFO would block the verb until some writer opened it, and a
    device such as /dev/zero never ends — both are refused before a byte is read. With `limit`, a
    file larger than that is refused (`what` names it in the message) instead of filling memory."""
    fd = open_regular(path, what)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read() if limit is None else fh.read(limit + 1)
    except OSError as exc:
        raise os_failure(f"priors: cannot read {path}: {exc.strerror or exc}", exc) from None
    if limit is not None and len(data) > limit:
        raise UsageError(f"priors: {what or path} {path}: larger than {limit} bytes, the most the keeper reads"
                         " — nothing was written")
    return data


def file_size(path: Path) -> int:
    """The size of the file at `path` in bytes; 0 for one that is not there or cannot be read."""
    try:
        return os.stat(str(path)).st_size
    except (OSError, ValueError):
        return 0


def read_blocks(path: Path, size: int = 1 << 20, start: int = 0) -> Optional[Iterator[bytes]]:
    """The file's bytes `size` at a time (from byte `start` on), or None when it does not exist: a reader
    that goes through a large file once (verify) never holds it whole. Refuses what `read_bytes` refuses."""
    fd = open_regular(path)
    if fd is None:
        return None
    fh = os.fdopen(fd, "rb")

    def blocks() -> Iterator[bytes]:
        with fh:
            try:
                fh.seek(start)
            except OSError as exc:
                raise os_failure(f"priors: cannot read {path}: {exc.strerror or exc}", exc) from None
            while True:
                try:
                    chunk = fh.read(size)
                except OSError as exc:
                    raise os_failure(f"priors: cannot read {path}: {exc.strerror or exc}", exc) from None
                if not chunk:
                    return
                yield chunk

    return blocks()


def open_regular(path: Path, what: str = "") -> Optional[int]:
    """A descriptor open for reading on the regular file `path`, or None when it does not exist.
    Opened without blocking (a FIFO would wait for a writer), then refused unless regular."""
    label = f"{what} {path}" if what else str(path)
    try:
        fd = os.open(str(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UsageError(f"priors: {label} is a directory, expected a file") from None
    except OSError as exc:
        raise os_failure(f"priors: cannot read {label}: {exc.strerror or exc}", exc) from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise MachineError(f"priors: cannot read {label}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)"
        raise UsageError(f"priors: {label} is {kind}, expected a file"
                         + ("" if stat.S_ISDIR(mode) else " — give a file, or - for standard input"))
    return fd


def iter_chunks(fd: int, limit: Optional[int] = None, what: str = "", size: int = 1 << 20) -> Iterator[bytes]:
    """The bytes of descriptor `fd` (closed at the end), a chunk at a time; past `limit` bytes a
    usage error (an endless stream), so hashing a file of any size holds one chunk in memory."""
    total = 0
    try:
        while True:
            chunk = os.read(fd, size)
            if not chunk:
                return
            total += len(chunk)
            if limit is not None and total > limit:
                raise UsageError(f"priors: {what}: more than {limit} bytes, the most the keeper reads"
                                 " — is it an endless stream?")
            yield chunk
    finally:
        os.close(fd)


def check_stdin(what: str) -> None:
    """Standard input that is a device (but a terminal) is refused at once: `< /dev/zero` never ends.
    Closed standard input (`<&-`: Python's `sys.stdin` is None) is a usage error, not a crash."""
    if sys.stdin is None:
        raise UsageError(f"priors: {what} on standard input, but standard input is closed — nothing was read")
    if os.name == "nt":
        return  # the console and NUL are devices there; the size cap still ends an endless pipe
    try:
        fd = sys.stdin.fileno()
        st = os.fstat(fd)
    except (AttributeError, OSError, ValueError):
        return  # no real descriptor (an in-process caller): nothing to judge
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) or os.isatty(fd):
        return
    try:
        if st.st_rdev == os.stat(os.devnull).st_rdev:
            return  # /dev/null reads as empty
    except OSError:
        pass
    raise UsageError(f"priors: {what} on standard input: a device, not a file or a pipe — nothing was read")


def read_stdin(limit: int, what: str) -> bytes:
    """Standard input, at most `limit` bytes: an endless stream (`< /dev/zero`) is refused, not read forever."""
    check_stdin(what)
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise UsageError(f"priors: {what} on standard input: more than {limit} bytes, the most the keeper reads"
                         " — nothing was written")
    return data


def _fsync_dir(path: Path) -> None:
    if os.name == "nt":
        return
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_inside(path: Path) -> None:
    """Refuse a path under .priors/ that a symlink would lead elsewhere: the path itself, or any
    folder between it and .priors/ (itself included). The keeper never writes outside .priors/."""
    chain = [path, *path.parents]
    top = next((i for i, p in enumerate(chain) if p.name == ".priors"), None)
    if top is None:
        return
    for p in chain[: top + 1]:
        if p.is_symlink():
            raise UsageError(f"priors: {p} is a symlink; refusing to read or write through it "
                             "(everything under .priors/ must be a real file or folder)")


def make_dir(path: Path) -> None:
    """mkdir -p for a folder under .priors/, refusing to create anything through a symlink."""
    check_inside(path)
    new = not path.is_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise os_failure(f"priors: cannot create {path}: {exc.strerror or exc}", exc) from None
    if new:  # recorded once made: a folder that could not be created is not named among the changes
        CHANGED.append(str(path))


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def atomic_write(path: Path, data: Union[bytes, Iterable[Chunk]], keep: int = 0, size: Optional[int] = None,
                 durable: bool = True) -> None:
    """Write a temp file beside `path`, flush, fsync, rename over it: old bytes or new, never half.

    `data` may be chunks (a list, or an iterator: each is written as it comes, so a large file need
    not be held whole), written in order; a chunk may be a `Spool`, whose text is copied. A chunk
    may also be a (start, end) range of the current file — which must then be exactly `size` bytes
    long — copied by the kernel where it can, so that rewriting a large ledger never needs a second
    copy of it in memory. `keep` is short for a first range (0, keep) with size `keep`: an append.
    `durable=False` skips the fsync: readers still see old bytes or new, but a power cut may leave the
    file empty — only for a file whose loss is harmless and which is written on a hot path (an fsync
    can wait 10 ms on a busy disk)."""
    check_inside(path)
    chunks: Iterable[Chunk] = [data] if isinstance(data, (bytes, bytearray)) else data  # (taken as they come)
    if keep:
        chunks, size = itertools.chain([(0, keep)], chunks), keep
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        if os.path.lexists(str(tmp)):
            os.unlink(str(tmp))  # a dead writer's temp with our pid (or a planted link): never write through it
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0)
        fd = os.open(str(tmp), flags, 0o644)
        try:
            src: Optional[int] = None
            try:
                for chunk in chunks:
                    if isinstance(chunk, Spool):
                        copy_range(chunk.fd, 0, chunk.size, fd)
                    elif isinstance(chunk, tuple):
                        if src is None:  # (the current file, opened when the first range of it is reached)
                            src = _open_base(path, size)
                        copy_range(src, chunk[0], chunk[1] - chunk[0], fd)
                    else:
                        write_all(fd, chunk)
            except EOFError:
                raise MachineError(f"priors: {path} shrank while this verb ran; nothing was written"
                                   " — run it again") from None
            finally:
                if src is not None:
                    os.close(src)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if path.is_symlink():
            raise UsageError(f"priors: {path} is a symlink; refusing to write through it")
        os.replace(str(tmp), str(path))
        CHANGED.append(str(path))
    except BaseException:
        try:
            os.unlink(str(tmp))
        except OSError:
            pass
        raise
    if durable:
        _fsync_dir(path.parent)


def write_all(fd: int, data: Bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _open_base(path: Path, size: Optional[int]) -> int:
    """The current file, to copy ranges from; it must still be `size` bytes long."""
    src = os.open(str(path), os.O_RDONLY | _NOFOLLOW | getattr(os, "O_BINARY", 0))
    if size is None or os.fstat(src).st_size != size:
        os.close(src)
        raise MachineError(f"priors: {path} changed while this verb ran (another program wrote it); "
                           "nothing was written — run it again")
    return src


def copy_range(src: int, offset: int, n: int, dst: int) -> None:
    """Append bytes [offset, offset + n) of file `src` to `dst`: in the kernel where it can, else read
    and write. EOFError if `src` is shorter than that."""
    copy = getattr(os, "copy_file_range", None)
    while n and copy is not None:
        try:
            done = copy(src, dst, n, offset)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                raise
            done = 0
        if not done:
            break  # not supported here (or nothing copied): the plain loop below takes over
        offset, n = offset + done, n - done
    while n:
        chunk = os.pread(src, min(n, 1 << 20), offset) if hasattr(os, "pread") else _read_at(src, offset, n)
        if not chunk:
            raise EOFError("the file to copy from is shorter than it was")
        write_all(dst, chunk)
        offset, n = offset + len(chunk), n - len(chunk)


class Spool:
    """Text written once, piece by piece, and read back: in a private file with no name (Linux's
    `O_TMPFILE` — no other process can open it, and it is gone when closed). `relevant`'s verify
    list at 100k priors is 19 MB that would otherwise be held in memory until it is printed.
    `Spool.open` gives None where there is no such file. Written with `pwrite` at its own end, so a
    forked child can fill one the parent reads once the child is done (the parent then sets `size`)."""

    __slots__ = ("fd", "size")

    def __init__(self, fd: int) -> None:
        self.fd, self.size = fd, 0

    @staticmethod
    def open(directory: Path) -> Optional[Spool]:
        flag = getattr(os, "O_TMPFILE", 0)
        if not flag or not hasattr(os, "pwrite"):
            return None
        try:
            return Spool(os.open(str(directory), flag | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o600))
        except OSError:  # a file system without unnamed files, or none writable here
            return None

    def reset(self) -> None:
        """Empty (work begun again after a child that wrote some of it failed)."""
        os.ftruncate(self.fd, 0)
        self.size = 0

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            done = os.pwrite(self.fd, view, self.size)
            self.size += done
            view = view[done:]

    def chunks(self) -> Iterator[bytes]:
        """The text, a megabyte at a time."""
        at = 0
        while at < self.size:
            chunk = os.pread(self.fd, min(self.size - at, 1 << 20), at)
            if not chunk:
                raise MachineError("priors: a private temporary file lost its text; run the verb again")
            yield chunk
            at += len(chunk)

    def __bytes__(self) -> bytes:
        return b"".join(self.chunks())

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _read_at(fd: int, offset: int, n: int) -> bytes:  # pragma: no cover - Windows has no os.pread
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, min(n, 1 << 20))


def remove_tree(path: Path, aside: bool = False) -> None:
    """Remove a folder under .priors/ (staging, the cache); a symlink is unlinked, never followed.

    With `aside` (the cache, which lock-free readers write) the folder is first renamed aside, so a
    reader racing us can no longer add to it: `rmtree` then removes a folder nobody else writes into
    ("Directory not empty" was that race). A crash leaves `.<name>.<pid>.gone`, which the next lock
    holder deletes. Staging is written only under the lock: it is removed in place."""
    if path.is_symlink():
        CHANGED.append(str(path))
        path.unlink()
        return
    check_inside(path)
    if not path.exists():
        return
    CHANGED.append(str(path))
    target = path
    if aside:
        target = path.parent / f".{path.name}.{os.getpid()}.gone"
        try:
            os.rename(str(path), str(target))
        except FileNotFoundError:
            return
        except OSError:
            target = path  # cannot rename (Windows with an open file): remove it in place
    import shutil  # here, not at the top: it pulls in bz2, lzma and zlib, which no other verb needs (~4 ms a call)

    for attempt in range(3):
        try:
            shutil.rmtree(str(target))
            return
        except FileNotFoundError:
            return
        except OSError:
            if attempt == 2:
                raise


def discard_tree(path: Path) -> None:
    """Take back a folder this call made and could not finish (a run that failed to open or to
    seal): it is removed, and once it is gone nothing inside it counts as changed, so the message
    can say "nothing was changed" when nothing else was. If the removal fails, the folder stays
    named among the changes (and the caller's own error stands)."""
    try:
        remove_tree(path)
    except OSError:
        return
    inside = str(path)
    CHANGED[:] = [c for c in CHANGED if c != inside and not c.startswith(inside + os.sep)]


def iter_files(path: Path) -> Iterator[Path]:
    for dirpath, _dirs, files in os.walk(str(path)):
        for name in sorted(files):
            yield Path(dirpath) / name
