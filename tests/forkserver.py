"""`python -m priors` without an interpreter start per call: what tests/conftest.py's run_priors talks to.

    python tests/forkserver.py

A protocol test makes hundreds of CLI calls, and a fresh interpreter plus priors' imports is most of
what each one costs. This server imports all of priors once, then for each JSON request on stdin
({"cwd", "argv", "env", "stdin"}) forks a child that is a fresh copy of that just-imported process
and becomes `python -m priors ARGV` started in `cwd` with exactly `env`:
  - fd 0 is a pipe holding the request's stdin bytes (or /dev/null), fds 1 and 2 go to files of their own,
    and sys.stdin/stdout/stderr are rebuilt on them as the interpreter builds them at start-up
    (POSIX: newline "\\n", stderr line-buffered and backslashreplace);
  - sys.argv[0] is priors/__main__.py and sys.path[0] the working directory, as under `-m`;
  - main()'s result, a SystemExit, an uncaught exception (traceback, exit 1), KeyboardInterrupt
    (traceback, killed by SIGINT), atexit handlers and the final flush (exit 120 when it fails)
    are handled as the interpreter handles them.
It answers one JSON line: {"rc", "stdout", "stderr"}, the output as raw bytes in latin-1 so the
caller decodes them exactly as subprocess would, rc negative for a signal. The child is reaped
before the answer, so its pid is dead (a lock it left behind is a dead holder's).

What a fork cannot give is a new hash seed per call: every child of one server shares its seed.
run_priors therefore keeps two servers, each with its own random seed, and alternates between
them, so two calls in a row never share one and an output that depended on set order would differ.
The interpreter itself is started for real by every test that spawns `python -m priors` directly,
and PRIORS_TEST_SUBPROCESS=1 sends every run_priors call to a real process too.
"""

from __future__ import annotations

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _stdio(fd: int, mode: str, like, line_buffering: bool = False, errors: str = ""):
    """A standard stream as CPython's create_stdio makes it on POSIX, with the encoding and error handler
    of the server's own stream `like` (the server started with the caller's PYTHONIOENCODING)."""
    import io

    raw = io.FileIO(fd, mode, closefd=False)
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding=like.encoding, errors=errors or like.errors, newline="\n",
                            line_buffering=line_buffering)


def _become(req: dict, stdin_fd: int, out_fd: int, err_fd: int) -> None:
    """In the forked child: the process state `python -m priors ARGV` would start with."""
    import signal

    os.dup2(stdin_fd, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    for fd in {stdin_fd, out_fd, err_fd}:
        os.close(fd)
    stdin, stdout, stderr = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = sys.__stdin__ = _stdio(0, "r", stdin)
    sys.stdout = sys.__stdout__ = _stdio(1, "w", stdout)
    sys.stderr = sys.__stderr__ = _stdio(2, "w", stderr, line_buffering=True, errors="backslashreplace")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    sys.argv = [os.path.join(REPO, "priors", "__main__.py"), *req["argv"]]
    sys.path[0] = os.getcwd()


def _exit_code(exc: SystemExit) -> int:
    """What the interpreter exits with for an uncaught SystemExit (it prints a non-int code)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    sys.stderr.write(f"{exc.code}\n")
    return 1


def _child(req: dict, stdin_fd: int, out_fd: int, err_fd: int) -> None:
    """Run the CLI as `sys.exit(main())` in __main__ would, then leave without the server's cleanup."""
    import signal

    code, interrupted = 1, False
    try:
        _become(req, stdin_fd, out_fd, err_fd)
        code, interrupted = _run_main()
    except BaseException:  # the server's own failure to set the child up: say so on the child's stderr
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
    finally:
        if interrupted:  # as the interpreter ends on an uncaught KeyboardInterrupt: killed by SIGINT
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        os._exit(code & 0xFF)


def _run_main():
    """main() and the interpreter's shutdown: (exit code, ended by an uncaught KeyboardInterrupt)."""
    import atexit

    from priors.cli.main import main

    interrupted = False
    try:
        code = _exit_code(SystemExit(main()))
    except SystemExit as exc:
        code = _exit_code(exc)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        code, interrupted = 1, True
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    if "threading" in sys.modules:
        sys.modules["threading"]._shutdown()  # type: ignore[attr-defined]  # non-daemon threads are waited for
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = 120  # what Py_FinalizeEx makes of a failed flush at exit
    return code, interrupted


def _feed(fd: int, data: bytes) -> None:
    """Write the request's stdin into the child's pipe and close it; a child that stops reading just ends it."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BrokenPipeError:
        pass
    finally:
        os.close(fd)


def _status(status: int) -> int:
    """A wait status as subprocess reports it: the exit code, or minus the signal."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def serve() -> int:
    import gc
    import importlib
    import json
    import pkgutil
    import tempfile

    sys.path.insert(0, REPO)
    import priors  # every module imported once here (the verbs import theirs lazily); each child starts from it

    for mod in pkgutil.walk_packages(priors.__path__, "priors."):
        importlib.import_module(mod.name)
    gc.freeze()  # what the children share stays shared: the collector does not walk (and so copy) it
    requests, answers = sys.stdin.buffer, sys.stdout
    for line in requests:
        if not line.strip():
            continue
        req = json.loads(line)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            answers.flush()
            sys.stderr.flush()
            data = req.get("stdin")
            if data is None:
                stdin_fd, feed_fd = os.open(os.devnull, os.O_RDONLY), None
            else:
                stdin_fd, feed_fd = os.pipe()  # a pipe, as subprocess gives a child its input
            pid = os.fork()
            if pid == 0:
                if feed_fd is not None:
                    os.close(feed_fd)
                _child(req, stdin_fd, os.dup(out.fileno()), os.dup(err.fileno()))
            os.close(stdin_fd)
            if feed_fd is not None:
                _feed(feed_fd, data.encode("latin-1"))
            _, status = os.waitpid(pid, 0)
            out.seek(0)
            err.seek(0)
            answer = {"rc": _status(status), "stdout": out.read().decode("latin-1"),
                      "stderr": err.read().decode("latin-1")}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
