"""Run the priors CLI with a fault injected at the Nth file-system mutation (pure Python, any OS).

    PRIORS_FAULT=N:KIND python tests/faultrun.py [priors args...]

Every call that changes the disk — os.open for writing, os.write, os.copy_file_range, os.fsync, os.replace,
os.rename, os.unlink, os.remove, os.rmdir, os.mkdir — is counted, in order. At call N:
  kill       the process SIGKILLs itself before the call (a crash mid-write)
  killafter  the call completes, then the process SIGKILLs itself
  ENOSPC / EIO / EACCES / EROFS   the call raises that OSError instead of running
N may be `all`: every mutation fails (a read-only or full file system).
With PRIORS_FAULT_LOG=FILE the calls made are written there (one per line) at exit.
"""

from __future__ import annotations

import errno
import os
import signal
import sys

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_ERRNOS = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO, "EACCES": errno.EACCES, "EROFS": errno.EROFS}


def _install(target: int, kind: str, log: list) -> None:
    count = [0]

    def wrap(name, real):
        def hooked(*args, **kwargs):
            if name == "open" and not (args[1] & _WRITE_FLAGS):
                return real(*args, **kwargs)
            count[0] += 1
            n = count[0]
            what = args[0] if args and isinstance(args[0], (str, bytes, os.PathLike)) else ""
            log.append(f"{n} {name} {os.fspath(what) if what != '' else ''}")
            if n == target or target == -1:
                if kind == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                elif kind in _ERRNOS:
                    code = _ERRNOS[kind]
                    raise OSError(code, os.strerror(code), *([os.fspath(what)] if what != "" else []))
            result = real(*args, **kwargs)
            if n == target and kind == "killafter":
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return hooked

    for name in ("open", "write", "copy_file_range", "fsync", "replace", "rename", "unlink", "remove", "rmdir", "mkdir"):
        if hasattr(os, name):
            setattr(os, name, wrap(name, getattr(os, name)))


def main() -> int:
    spec = os.environ.get("PRIORS_FAULT", "0:none")
    n, _, kind = spec.partition(":")
    log: list = []
    log_path = os.environ.get("PRIORS_FAULT_LOG")
    real_open = open
    _install(-1 if n == "all" else int(n), kind, log)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from priors.cli.main import main as priors_main

    try:
        return priors_main(sys.argv[1:])
    finally:
        if log_path:
            with real_open(log_path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(log) + "\n")


if __name__ == "__main__":
    sys.exit(main())
