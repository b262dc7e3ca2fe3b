"""Run the priors CLI with a fault injected at the Nth file-system mutation (pure Python, any OS).

    PRIORS_FAULT=N:KIND python tests/faultrun.py [priors args...]

Every call that changes the disk — os.open for writing, os.write, os.copy_file_range, os.fsync, os.replace,
os.rename, os.unlink, os.remove, os.rmdir, os.mkdir — is counted, in order. At call N:
  kill       the process SIGKILLs itself before the call (a crash mid-write)
  killafter  the call completes, then the process SIGKILLs itself
  term       the process sends itself SIGTERM before the call (POSIX: `kill PID`, a CI job cancelled)
  ENOSPC / EIO / EACCES / EROFS   the call raises that OSError instead of running
N may be `all`: every mutation fails (a read-only or full file system).
With PRIORS_FAULT_LOG=FILE the calls made are written there (one per line) at exit.

    python tests/faultrun.py --serve

is the same injector without an interpreter start per call (tests/test_crash.py runs hundreds):
it imports all of priors once, then for each JSON request on stdin ({"cwd", "argv", "fault", "log"})
forks a child that is a fresh copy of that just-imported process — stdout and stderr to their own
files, stdin from /dev/null, the hooks installed with a zero count — runs the verb there exactly
as main() would, and answers one JSON line: {"rc", "stdout", "stderr"}, rc negative for a signal
as subprocess reports it. The child is reaped before the answer, so its pid is dead (a lock it
left behind is a dead holder's).
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
                elif kind == "term":
                    os.kill(os.getpid(), signal.SIGTERM)
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


def _child(req: dict, out_fd: int, err_fd: int) -> None:
    """In the forked child: become `python tests/faultrun.py ARGV` started in req["cwd"]."""
    import traceback

    code = 1
    try:
        _become(req, out_fd, err_fd)
        code = _run_main()
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
    finally:
        os._exit(code if isinstance(code, int) else 1)


def _become(req: dict, out_fd: int, err_fd: int) -> None:
    import io

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    for fd in (null, out_fd, err_fd):
        os.close(fd)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    os.chdir(req["cwd"])
    sys.argv = [os.path.abspath(__file__), *req["argv"]]
    os.environ["PRIORS_FAULT"] = req.get("fault") or "0:none"
    if req.get("log"):
        os.environ["PRIORS_FAULT_LOG"] = req["log"]
    else:
        os.environ.pop("PRIORS_FAULT_LOG", None)


def _run_main() -> int:
    import traceback

    try:
        code = main()
    except SystemExit as exc:  # what the interpreter does with it
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            sys.stderr.write(f"{exc.code}\n")
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = 120  # as Python reports a failed flush at exit
    return code


def serve() -> int:
    import json
    import tempfile

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import importlib
    import pkgutil

    import priors  # every module imported once here (the verbs import theirs lazily); each child starts from it

    for mod in pkgutil.walk_packages(priors.__path__, "priors."):
        importlib.import_module(mod.name)

    requests, answers = sys.stdin, sys.stdout
    for line in requests:
        if not line.strip():
            continue
        req = json.loads(line)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            answers.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(req, os.dup(out.fileno()), os.dup(err.fileno()))
            fired = []
            signal.signal(signal.SIGALRM, lambda *_, pid=pid, fired=fired: fired.append(os.kill(pid, signal.SIGKILL)))
            signal.alarm(int(req.get("timeout", 120)))
            _, status = os.waitpid(pid, 0)
            signal.alarm(0)
            if fired:
                status = None
            if status is None:
                rc = "timeout"
            elif os.WIFSIGNALED(status):
                rc = -os.WTERMSIG(status)
            else:
                rc = os.WEXITSTATUS(status)
            out.seek(0)
            err.seek(0)
            answer = {"rc": rc, "stdout": out.read().decode("utf-8", "replace"),
                      "stderr": err.read().decode("utf-8", "replace")}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        sys.exit(serve())
    sys.exit(main())
