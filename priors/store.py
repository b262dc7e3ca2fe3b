"""The imperative shell: where `.priors/` is, the writer lock, and atomic file replacement.

Everything that touches the disk for the ledger lives here so the core stays pure.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path

from priors.errors import Refusal, UsageError
from priors.plain import Plain

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Iterator, List, Optional, Sequence, Tuple, Union

    Chunk = Union[bytes, bytearray, memoryview, Tuple[int, int]]  # bytes, or a (start, end) range of the old file

LEDGER = "ledger.jsonl"
LOCK = "keeper.lock"
STALE_EMPTY_S = 2.0  # a pid-less lock younger than this is being written, not abandoned
GITIGNORE_LINES = ["runs/", "keeper.lock", "*.tmp", "cache/", "reflection/"]


def find_root(root_opt: Optional[str]) -> Path:
    """The target root: -C DIR, else here — or, inside git, the nearest ancestor holding .priors/."""
    if root_opt is not None:
        root = Path(root_opt)
        if not root.is_dir():
            raise UsageError(f"priors: -C {root_opt}: not a directory")
        return Path(os.path.abspath(root))
    here = Path(os.path.abspath(os.getcwd()))
    if (here / ".priors").is_dir():
        return here
    top = _git_top(here)
    if top is None:
        return here
    for cand in [here, *here.parents]:
        if (cand / ".priors").is_dir():
            return cand
        if cand == top:
            break
    return here


def _git_top(start: Path) -> Optional[Path]:
    for cand in [start, *start.parents]:
        if (cand / ".git").exists():
            return cand
    return None


class Paths(Plain):
    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def dir(self) -> Path:
        return self.root / ".priors"

    @property
    def ledger(self) -> Path:
        return self.dir / LEDGER

    @property
    def runs(self) -> Path:
        return self.dir / "runs"

    @property
    def lock(self) -> Path:
        return self.dir / LOCK

    @property
    def rendered(self) -> Path:
        return self.dir / "PRIORS.md"

    def run_dir(self, run: str) -> Path:
        return self.runs / run


def read_bytes(path: Path) -> Optional[bytes]:
    """File bytes, or None when it does not exist; other failures are usage errors."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UsageError(f"priors: {path} is a directory, expected a file") from None
    except OSError as exc:
        raise UsageError(f"priors: cannot read {path}: {exc.strerror or exc}") from None


def read_ledger_bytes(paths: Paths) -> bytes:
    data = read_bytes(paths.ledger)
    return b"" if data is None else data


def require_init(paths: Paths) -> None:
    if not paths.dir.is_dir():
        raise UsageError(f"priors: no .priors/ in {paths.root} — run `priors init` first")


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
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"priors: cannot create {path}: {exc.strerror or exc}") from None


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def atomic_write(path: Path, data: Union[bytes, Sequence[Chunk]], keep: int = 0, size: Optional[int] = None) -> None:
    """Write a temp file beside `path`, flush, fsync, rename over it: old bytes or new, never half.

    `data` may be a list of chunks, written in order. A chunk may also be a (start, end) range of
    the current file — which must then be exactly `size` bytes long — copied by the kernel where it
    can, so that rewriting a large ledger never needs a second copy of it in memory. `keep` is
    short for a first range (0, keep) with size `keep`: an append."""
    check_inside(path)
    chunks = [data] if isinstance(data, (bytes, bytearray)) else list(data)
    if keep:
        chunks, size = [(0, keep)] + chunks, keep
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        if os.path.lexists(str(tmp)):
            os.unlink(str(tmp))  # a dead writer's temp with our pid (or a planted link): never write through it
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0)
        fd = os.open(str(tmp), flags, 0o644)
        try:
            src = _open_base(path, size) if any(isinstance(c, tuple) for c in chunks) else None
            try:
                for chunk in chunks:
                    if isinstance(chunk, tuple):
                        copy_range(src, chunk[0], chunk[1] - chunk[0], fd)
                    else:
                        write_all(fd, chunk)
            except EOFError:
                raise UsageError(f"priors: {path} shrank while this verb ran; nothing was written — run it again") from None
            finally:
                if src is not None:
                    os.close(src)
            os.fsync(fd)
        finally:
            os.close(fd)
        if path.is_symlink():
            raise UsageError(f"priors: {path} is a symlink; refusing to write through it")
        os.replace(str(tmp), str(path))
    except BaseException:
        try:
            os.unlink(str(tmp))
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)


def write_all(fd: int, data: Chunk) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _open_base(path: Path, size: Optional[int]) -> int:
    """The current file, to copy ranges from; it must still be `size` bytes long."""
    src = os.open(str(path), os.O_RDONLY | _NOFOLLOW | getattr(os, "O_BINARY", 0))
    if size is None or os.fstat(src).st_size != size:
        os.close(src)
        raise UsageError(f"priors: {path} changed while this verb ran (another program wrote it); "
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


def _read_at(fd: int, offset: int, n: int) -> bytes:  # pragma: no cover - Windows has no os.pread
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, min(n, 1 << 20))


def remove_tree(path: Path) -> None:
    """Remove a run's staging folder; a symlink is unlinked, never followed."""
    if path.is_symlink():
        path.unlink()
        return
    check_inside(path)
    if path.exists():
        shutil.rmtree(str(path))


def remove_stray_temps(paths: Paths) -> None:
    """Temp files left by a writer that died are never data; the next writer (holding the lock) clears them.

    Covers .priors/ and every runs/<run>/ folder; in cache/, which lock-free readers also write,
    only temps whose writer pid is gone.
    """
    dirs = [paths.dir]
    for name in list_run_dirs(paths):
        d = paths.runs / name
        if d.is_dir() and not d.is_symlink():
            dirs.append(d)
    for d in dirs:
        _remove_temps_in(d, only_dead=False)
    cache = paths.dir / "cache"
    if cache.is_dir() and not cache.is_symlink():
        _remove_temps_in(cache, only_dead=True)


def _remove_temps_in(d: Path, only_dead: bool) -> None:
    try:
        names = os.listdir(str(d))
    except OSError:
        return
    for name in names:
        if not (name.endswith(".tmp") and name.startswith(".")):
            continue
        if only_dead:
            pid = name[:-4].rsplit(".", 1)[-1]
            if not pid.isdigit() or pid_alive(int(pid)):
                continue
        try:
            os.unlink(str(d / name))
        except OSError:
            pass


# ---------------------------------------------------------------- the writer lock


def pid_alive(pid: int) -> bool:
    """Is `pid` a live process? Never signals it (os.kill(pid, 0) would kill it on Windows)."""
    if pid <= 0:
        return False
    if os.name == "nt":
        return _pid_alive_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _pid_alive_windows(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    SYNCHRONIZE, QUERY_LIMITED = 0x00100000, 0x1000
    handle = kernel32.OpenProcess(SYNCHRONIZE | QUERY_LIMITED, False, pid)
    if not handle:
        return ctypes.get_last_error() == 5  # access denied: it exists
    try:
        return kernel32.WaitForSingleObject(handle, 0) == 0x00000102  # WAIT_TIMEOUT: still running
    finally:
        kernel32.CloseHandle(handle)


class Lock:
    """`.priors/keeper.lock` created exclusively with our pid — the protocol every keeper shares."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.held = False

    def __enter__(self) -> "Lock":
        check_inside(self.paths.lock)
        for attempt in range(2):
            if self._try_create():
                self.held = True
                remove_stray_temps(self.paths)
                return self
            if attempt == 0:
                seen = self._stale_content()
                if seen is not None and self._break_stale(seen):
                    continue
            break
        raise Refusal(
            "KEEPER_LOCKED",
            hint="another keeper is writing this ledger; retry in a moment (a dead holder's lock is cleared automatically)",
        )

    def _try_create(self) -> bool:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(str(self.paths.lock), flags, 0o644)
        except FileExistsError:
            return False
        except IsADirectoryError:
            return False
        except PermissionError:
            if self.paths.lock.exists():
                return False
            raise UsageError(f"priors: cannot create {self.paths.lock}: permission denied") from None
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                return False
            raise UsageError(f"priors: cannot create {self.paths.lock}: {exc.strerror}") from None
        try:
            try:
                os.write(fd, str(os.getpid()).encode("ascii"))
            finally:
                os.close(fd)
        except OSError as exc:
            try:
                os.unlink(str(self.paths.lock))  # never leave a lock without a pid behind
            except OSError:
                pass
            raise UsageError(f"priors: cannot write {self.paths.lock}: {exc.strerror or exc}; nothing was changed") from None
        return True

    def _stale_content(self) -> Optional[bytes]:
        """The lock's bytes when its holder is gone; None while it may be live.

        An unreadable pid is stale (the contract), except an *empty* lock: that is one being written
        this very moment (create, then write the pid) — or one whose writer died in between — and
        it counts as stale only once it is STALE_EMPTY_S old. Without this grace two keepers could
        both hold the lock.
        """
        if self.paths.lock.is_dir():
            raise UsageError(f"priors: {self.paths.lock} is a directory, not a lock file; remove it by hand")
        try:
            with open(self.paths.lock, "rb") as fh:
                raw = fh.read(64)
                age = time.time() - os.fstat(fh.fileno()).st_mtime
        except FileNotFoundError:
            return b""  # released meanwhile: just try again
        except OSError:
            return None
        if not raw:
            return raw if age >= STALE_EMPTY_S else None
        text = raw.decode("ascii", "replace").strip()
        if not text.isdigit():
            return raw
        return None if pid_alive(int(text)) else raw

    def _break_stale(self, seen: bytes) -> bool:
        """Remove a dead holder's lock — and only that one, even if another keeper breaks it too.

        The lock is first renamed aside (atomic: one breaker wins); if what was moved is not the
        stale lock we judged (a live keeper re-created it in between), it is put back.
        """
        aside = self.paths.dir / f".{LOCK}.{os.getpid()}.tmp"
        try:
            os.rename(str(self.paths.lock), str(aside))
        except FileNotFoundError:
            return True
        except OSError as exc:
            raise UsageError(f"priors: cannot clear stale lock {self.paths.lock}: {exc.strerror}") from None
        try:
            with open(aside, "rb") as fh:
                moved = fh.read(64)
        except OSError:
            moved = seen
        if moved != seen:
            try:
                os.link(str(aside), str(self.paths.lock))
            except OSError:
                pass
            try:
                os.unlink(str(aside))
            except OSError:
                pass
            return False
        try:
            os.unlink(str(aside))
        except OSError:
            pass
        return True

    def __exit__(self, *exc) -> None:
        if self.held:
            try:
                os.unlink(str(self.paths.lock))
            except OSError:
                pass
            self.held = False


def list_run_dirs(paths: Paths) -> List[str]:
    try:
        return sorted(os.listdir(str(paths.runs)))
    except OSError:
        return []


def iter_files(path: Path) -> Iterator[Path]:
    for dirpath, _dirs, files in os.walk(str(path)):
        for name in sorted(files):
            yield Path(dirpath) / name
