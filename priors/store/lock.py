"""The writer lock: one keeper writes at a time, and a dead holder's lock is broken safely.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from priors.core.errors import MachineError, Refusal, UsageError
from priors.store.files import check_inside
from priors.store.paths import LOCK, Paths, list_run_dirs

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Optional

STALE_EMPTY_S = 0.0  # kept for callers: the lock is published with its pid inside, so an empty one is stale at once
MAX_PID = 2 ** 31 - 1  # a pid above this (or 0, or negative) is not a plausible live process: stale


def remove_stray_temps(paths: Paths) -> None:
    """Temp files left by a writer that died are never data; the next writer (holding the lock) clears them.

    Covers .priors/, every runs/<run>/ folder and cache/ (which lock-free readers also write): every
    `.*.tmp` whose writer pid (the last dotted part of its name) is not a live process.
    """
    dirs = [paths.dir]
    for name in list_run_dirs(paths):
        d = paths.runs / name
        if d.is_dir() and not d.is_symlink():
            dirs.append(d)
    for d in dirs:
        _remove_temps_in(d, only_dead=True)  # a live keeper's temp (its lock being published) is not ours
    cache = paths.dir / "cache"
    if cache.is_dir() and not cache.is_symlink():
        _remove_temps_in(cache, only_dead=True)


def _remove_temps_in(d: Path, only_dead: bool) -> None:
    try:
        names = os.listdir(str(d))
    except OSError:
        return
    for name in names:
        if name.startswith(".") and name.endswith(".gone"):
            _remove_gone(d, name)  # a folder `remove_tree` moved aside and did not finish deleting
            continue
        if not (name.endswith(".tmp") and name.startswith(".")):
            continue
        if only_dead and writer_alive(name):
            continue  # a live writer's (a lock-free reader's cache write, a keeper publishing its lock)
        try:
            os.unlink(str(d / name))
        except OSError:
            pass


def writer_alive(temp_name: str) -> bool:
    """Whether the process that is writing the temp file `.<name>.<pid>.tmp` is alive: its file is
    work in progress, not one left by an interrupted write."""
    pid = temp_name[:-4].rsplit(".", 1)[-1] if temp_name.endswith(".tmp") else ""
    return pid.isdigit() and len(pid) < 20 and pid_alive(int(pid))


def _remove_gone(d: Path, name: str) -> None:
    """`.<folder>.<pid>.gone`: moved aside to be deleted. Its remover's pid is dead (or it is us, and
    we already finished with it): delete it now."""
    import shutil

    pid = name[: -len(".gone")].rsplit(".", 1)[-1]
    if pid.isdigit() and len(pid) < 20 and int(pid) != os.getpid() and pid_alive(int(pid)):
        return
    path = d / name
    if path.is_symlink():
        try:
            os.unlink(str(path))
        except OSError:
            pass
        return
    shutil.rmtree(str(path), ignore_errors=True)


# ---------------------------------------------------------------- the writer lock


def pid_alive(pid: int) -> bool:
    """Is `pid` a live process? Never signals it (os.kill(pid, 0) would kill it on Windows)."""
    if pid <= 0 or pid > MAX_PID:
        return False
    if os.name == "nt":
        return _pid_alive_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError, ValueError):
        return False
    return True


def _pid_alive_windows(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]  # Windows-only; mypy checks as on this platform
    SYNCHRONIZE, QUERY_LIMITED = 0x00100000, 0x1000
    handle = kernel32.OpenProcess(SYNCHRONIZE | QUERY_LIMITED, False, pid)
    if not handle:
        return ctypes.get_last_error() == 5  # type: ignore[attr-defined]  # Windows-only, as windll; 5: access denied, it exists
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
        """Publish the lock with our pid already inside: write a temp file, then link it into place
        (atomic, and fails if a lock exists). Where hard links are not supported, create exclusively
        and write the pid."""
        tmp: Optional[Path] = self.paths.dir / f".{LOCK}-new.{os.getpid()}.tmp"
        try:
            if os.path.lexists(str(tmp)):
                os.unlink(str(tmp))
            fd = os.open(str(tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_BINARY", 0), 0o644)
            try:
                os.write(fd, str(os.getpid()).encode("ascii"))
            finally:
                os.close(fd)
        except OSError:
            try:  # created but not written (a full disk): take it back, or verify would call it stray
                os.unlink(str(tmp))
            except OSError:
                pass
            tmp = None  # cannot even write a temp here: the plain create below says why
        if tmp is not None:
            try:
                os.link(str(tmp), str(self.paths.lock))
                return True
            except FileExistsError:
                return False
            except OSError as exc:
                if exc.errno == errno.EEXIST:
                    return False
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV, errno.EMLINK,
                                     getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)):
                    raise MachineError(f"priors: cannot create {self.paths.lock}: {exc.strerror}") from None
            finally:
                try:
                    os.unlink(str(tmp))
                except OSError:
                    pass
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
            raise MachineError(f"priors: cannot create {self.paths.lock}: permission denied") from None
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                return False
            raise MachineError(f"priors: cannot create {self.paths.lock}: {exc.strerror}") from None
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
            raise MachineError(f"priors: cannot write {self.paths.lock}: {exc.strerror or exc}; nothing was changed") from None
        return True

    def _stale_content(self) -> Optional[bytes]:
        """The lock's bytes when its holder is gone; None while it may be live.

        An unreadable or implausible pid is stale (the contract), and so is an empty lock: this keeper
        publishes its lock with the pid already inside (temp file, then a hard link), so an empty
        one was left by a keeper that died (or one that creates, then writes) and is stale at once.
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
            return raw if age >= STALE_EMPTY_S else None  # published with its pid: empty is abandoned
        text = raw.decode("ascii", "replace").strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 10:
            return raw  # not a plausible pid
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
            raise MachineError(f"priors: cannot clear stale lock {self.paths.lock}: {exc.strerror}") from None
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
