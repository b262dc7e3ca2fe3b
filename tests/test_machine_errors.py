"""Errors say whose fault they are: exit 2 when the call was wrong (fix the call), exit 3 when the
machine failed a right call — a lock that cannot be created or cleared, a full disk, an I/O error,
an unexpected exception — and 1 stays a rule's refusal (a live lock is KEEPER_LOCKED).

Each kind runs end to end through the real command line in its own process: a few lines planted
before `priors.cli.main.main` make the machine fail (root ignores file modes, so a real chmod would
not bite in CI), or tests/faultrun.py fails the Nth write.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from conftest import REPO, Keeper
from priors.core.errors import MachineError, Refusal, UsageError, os_failure

posix_only = pytest.mark.skipif(os.name == "nt", reason="the planted faults use POSIX errno values and paths")


def _one_finding(k: Keeper) -> None:
    """A committed run with one open finding, P-0001."""
    k.write("a.py", "a = 1\n")
    run = k.open_run("web", {"a.py": k.hash("a.py")})["run"]
    assert k.propose(run, "web", {"type": "conclusion", "claim": "a is magic", "scope_ref": "a.py"}).code == 0
    k.ok("commit", "--run", run)


def _planted(k: Keeper, plant: str, *argv: str) -> subprocess.CompletedProcess:
    """`priors ARGV` in the keeper's root, in a new process where `plant` ran first."""
    code = "import errno, os, sys\n" + plant + "\nfrom priors.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=str(k.root), capture_output=True, text=True,
                          encoding="utf-8", env=env, timeout=120)


def _faulted(k: Keeper, fault: str, *argv: str, log: Optional[Path] = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), PRIORS_FAULT=fault)
    if log is not None:
        env["PRIORS_FAULT_LOG"] = str(log)
    return subprocess.run([sys.executable, str(REPO / "tests" / "faultrun.py"), *argv], cwd=str(k.root),
                          capture_output=True, text=True, encoding="utf-8", env=env, timeout=120)


def _machine(r: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 3: one `priors: …` message on stderr naming the failure, nothing on stdout, no traceback."""
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("priors: "), r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)


# ------------------------------------------------------------------ the classes


def test_a_machine_error_is_neither_a_usage_error_nor_a_refusal() -> None:
    assert not issubclass(MachineError, (UsageError, Refusal))
    assert not issubclass(UsageError, MachineError) and not issubclass(Refusal, MachineError)
    assert MachineError.__doc__ and "exit 3" in MachineError.__doc__


@pytest.mark.parametrize("name", ["ENOENT", "ENOTDIR", "ENAMETOOLONG", "ELOOP", "EISDIR", "EEXIST", "EINVAL"])
def test_an_os_error_about_the_path_itself_is_the_callers(name: str) -> None:
    code = getattr(errno, name)
    err = os_failure("priors: cannot read x", OSError(code, os.strerror(code)))
    assert type(err) is UsageError and str(err) == "priors: cannot read x"


@pytest.mark.parametrize("name", ["EACCES", "EPERM", "EIO", "ENOSPC", "EROFS", "EMFILE"])
def test_an_os_error_of_the_machine_is_the_machines(name: str) -> None:
    code = getattr(errno, name)
    err = os_failure("priors: cannot read x", OSError(code, os.strerror(code)))
    assert type(err) is MachineError and str(err) == "priors: cannot read x"
    assert type(os_failure("m", OSError("no errno at all"))) is MachineError


@posix_only
def test_reading_a_file_tells_a_wrong_path_from_a_failing_machine(tmp_path: Path, monkeypatch) -> None:
    from priors.store import files

    (tmp_path / "plain").write_text("x")
    with pytest.raises(UsageError, match="cannot read"):
        files.read_bytes(tmp_path / "plain" / "below")  # ENOTDIR: the path names a file as a folder
    assert files.read_bytes(tmp_path / "absent") is None

    real = os.open

    def denied(path, flags, *a, **kw):
        if str(path).endswith("plain"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, *a, **kw)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(MachineError, match="Permission denied"):
        files.read_bytes(tmp_path / "plain")
    monkeypatch.setattr(os, "open", real)

    class Failing:
        def __init__(self, fd: int) -> None:
            os.close(fd)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            pass

        def read(self, *a):
            raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Failing(fd))
    with pytest.raises(MachineError, match="Input/output error"):
        files.read_bytes(tmp_path / "plain")


# ------------------------------------------------------------------ end to end: the lock

LOCK_FAILS = """
_real_open = os.open
def _open(path, flags, *a, **kw):
    if "keeper.lock" in os.fspath(path) and flags & os.O_CREAT:
        raise OSError(errno.{name}, os.strerror(errno.{name}), os.fspath(path))
    return _real_open(path, flags, *a, **kw)
os.open = _open
"""


@posix_only
@pytest.mark.parametrize("name", ["EACCES", "EROFS", "ENOSPC"])
def test_a_lock_that_cannot_be_created_is_the_machines_failure(keeper: Keeper, name: str) -> None:
    _one_finding(keeper)
    before = keeper.ledger_bytes()
    r = _planted(keeper, LOCK_FAILS.format(name=name), "decide", "P-0001", "wontfix")
    _machine(r, "cannot create", "keeper.lock")
    assert keeper.ledger_bytes() == before
    assert not (keeper.root / ".priors" / "keeper.lock").exists()
    keeper.ok("decide", "P-0001", "wontfix")  # the same call, once the machine lets it: it was right


@posix_only
def test_a_stale_lock_that_cannot_be_cleared_is_the_machines_failure(keeper: Keeper) -> None:
    _one_finding(keeper)
    before = keeper.ledger_bytes()
    lock = keeper.root / ".priors" / "keeper.lock"
    lock.write_text("2147483646")  # a pid no process has: a dead holder's lock
    plant = """
_real_rename = os.rename
def _rename(src, dst, *a, **kw):
    if os.fspath(src).endswith("keeper.lock"):
        raise PermissionError(errno.EACCES, "Permission denied", os.fspath(src))
    return _real_rename(src, dst, *a, **kw)
os.rename = _rename
"""
    r = _planted(keeper, plant, "decide", "P-0001", "wontfix")
    _machine(r, "cannot clear stale lock", "keeper.lock", "Permission denied")
    assert keeper.ledger_bytes() == before
    keeper.ok("decide", "P-0001", "wontfix")  # without the fault the dead holder's lock is cleared


LOCK_TEMP_FULL = """
_real_write = os.write
def _write(fd, data):
    if os.path.basename(os.readlink("/proc/self/fd/%d" % fd)).startswith(".keeper.lock-new."):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return _real_write(fd, data)
os.write = _write
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names an open file through /proc")
def test_a_full_disk_while_taking_the_lock_leaves_no_temp_file(keeper: Keeper) -> None:
    """The lock is published from a temp file; a disk too full to write our pid into it left that
    empty temp behind, which verify then named as left by an interrupted write."""
    _one_finding(keeper)
    r = _planted(keeper, LOCK_TEMP_FULL, "decide", "P-0001", "wontfix")
    assert r.returncode in (0, 3), r  # the plain create may still publish the lock; either way no temp stays
    assert not list((keeper.root / ".priors").glob(".keeper.lock-new.*.tmp"))
    assert keeper.ok("verify", "--no-git").startswith("ledger sound")


def test_a_live_lock_is_still_a_refusal_and_a_lock_folder_still_a_usage_error(keeper: Keeper) -> None:
    _one_finding(keeper)
    lock = keeper.root / ".priors" / "keeper.lock"
    lock.write_text(str(os.getpid()))  # this test's own process: a live holder
    keeper.refused("KEEPER_LOCKED", "decide", "P-0001", "wontfix")
    lock.unlink()
    lock.mkdir()
    assert "is a directory" in keeper.usage("decide", "P-0001", "wontfix")


# ------------------------------------------------------------------ end to end: writes and reads


@posix_only
@pytest.mark.parametrize("err,words", [("ENOSPC", "No space left on device"), ("EIO", "Input/output error")])
def test_a_full_disk_or_an_io_error_on_the_ledger_write_is_the_machines_failure(
        keeper: Keeper, tmp_path_factory, err: str, words: str) -> None:
    _one_finding(keeper)
    before = keeper.ledger_bytes()
    dry = Keeper(tmp_path_factory.mktemp("dry"))
    shutil.copytree(str(keeper.root / ".priors"), str(dry.root / ".priors"))
    log = tmp_path_factory.mktemp("log") / "calls.log"
    assert _faulted(dry, "0:none", "decide", "P-0001", "wontfix", log=log).returncode == 0
    calls = log.read_text(encoding="utf-8").splitlines()
    temp = next(i for i, c in enumerate(calls) if c.split()[1] == "open" and "/.ledger.jsonl." in c)
    at = next(c.split()[0] for c in calls[temp + 1:] if c.split()[1] == "write")  # the new lines, after the copy
    r = _faulted(keeper, f"{at}:{err}", "decide", "P-0001", "wontfix")
    _machine(r, words)
    assert keeper.ledger_bytes() == before
    assert not [p.name for p in (keeper.root / ".priors").iterdir() if p.name.endswith(".tmp")]
    keeper.ok("decide", "P-0001", "wontfix")


@posix_only
def test_a_ledger_that_cannot_be_read_is_the_machines_failure(keeper: Keeper) -> None:
    _one_finding(keeper)
    plant = """
_real_open = os.open
def _open(path, flags, *a, **kw):
    if os.fspath(path).endswith("ledger.jsonl") and not flags & os.O_CREAT:
        raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
    return _real_open(path, flags, *a, **kw)
os.open = _open
"""
    r = _planted(keeper, plant, "list")
    _machine(r, "cannot read", "ledger.jsonl", "Permission denied")


def test_an_unexpected_exception_exits_3_not_2(keeper: Keeper) -> None:
    _one_finding(keeper)
    before = keeper.ledger_bytes()
    plant = """
from priors.store import lock
def _boom(*a, **kw):
    raise RuntimeError("boom")
lock.Lock.__enter__ = _boom
"""
    r = _planted(keeper, plant, "decide", "P-0001", "wontfix")
    _machine(r, "unexpected error (RuntimeError: boom)", "nothing was changed")
    assert keeper.ledger_bytes() == before


# ------------------------------------------------------------------ what stays the caller's


def test_usage_errors_stay_exit_2(keeper: Keeper, tmp_path: Path) -> None:
    _one_finding(keeper)
    assert "not a directory" in keeper.usage("-C", str(tmp_path / "missing"), "status")
    assert keeper.usage("decide")  # a missing argument
    assert "no such file" in keeper.usage("propose", "nothing.json", "--run", "run-009", "--ns", "web")
    keeper.write("folder/x.txt", "x")
    assert "directory" in keeper.usage("propose", "folder", "--run", "run-009", "--ns", "web")
    if os.name != "nt":  # a.py is a file, named here as a folder (ENOTDIR): the path is wrong, not the machine
        assert "cannot read" in keeper.usage("propose", "a.py/cand.json", "--run", "run-009", "--ns", "web")
    bare = Keeper(tmp_path / "bare")
    bare.root.mkdir()
    assert "priors init" in bare.usage("decide", "P-0001", "wontfix")


RELEVANT_FULL = """
_real_open = os.open
def _open(path, flags, *a, **kw):
    if ".relevant.json." in os.fspath(path) and flags & os.O_CREAT:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(path))
    return _real_open(path, flags, *a, **kw)
os.open = _open
"""


def test_a_first_run_on_a_full_disk_is_the_machines_failure_not_a_change_that_stands(tmp_path: Path) -> None:
    """A first `relevant` makes an empty ledger before it opens the run: that is no landing. When the
    run cannot be written it used to answer exit 0, "the change stands", with no run opened."""
    k = Keeper(tmp_path)
    k.write("a.py", "x = 1\n")
    r = _planted(k, RELEVANT_FULL, "relevant", "--ns", "cr", "--snapshot")
    assert r.returncode == 3 and r.stdout == "" and "the change stands" not in r.stderr, r
    assert "No space left on device" in r.stderr and "this call changed" in r.stderr
    assert not list((tmp_path / ".priors" / "runs").iterdir())
    assert json.loads(k.ok("relevant", "--ns", "cr", "--snapshot"))["run"] == "run-001"
