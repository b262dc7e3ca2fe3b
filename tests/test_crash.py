"""Crash consistency: kill the keeper at every disk mutation it makes, or fail that call with an errno.

After each interrupted call: the ledger is exactly the old bytes or the new bytes; the lock
recovers; a retry (of commit always; of decide/redact when it did not land) converges to the
ledger of an uninterrupted run; once the next writer has run no temp file is left; and an
injected error (ENOSPC, EIO, EACCES, EROFS) is a clear message, never a traceback.

Two injectors: tests/faultrun.py (pure Python, always runs) and strace's syscall fault
injection (when strace is installed), which also covers what Python does not see.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from conftest import REPO, Keeper, Result

pytestmark = [pytest.mark.one_cache_mode,
              pytest.mark.skipif(os.name == "nt", reason="SIGKILL-based crash injection is POSIX-only")]

FAULTRUN = str(REPO / "tests" / "faultrun.py")
ERRORS = ("ENOSPC", "EIO", "EACCES", "EROFS")


def _env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONIOENCODING"] = "utf-8"
    env["PRIORS_CACHE_MIN_BYTES"] = "0"
    env.pop("PRIORS_NO_CACHE", None)
    env.update(extra or {})
    return env


class _Zygote:
    """`faultrun.py --serve`: priors imported once, each call a forked child of that process.

    The pure-Python injector hooks the same os calls either way; what a fork saves is the
    interpreter start and the imports (most of a call's time). strace needs a real process and
    keeps using subprocess.
    """

    def __init__(self) -> None:
        self.proc: Optional[subprocess.Popen] = None

    def call(self, root: Path, argv: List[str], fault: str, log: Optional[Path]) -> subprocess.CompletedProcess:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, FAULTRUN, "--serve"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, encoding="utf-8", env=_env())
        req = {"cwd": str(root), "argv": argv, "fault": fault, "log": None if log is None else str(log)}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert answer["rc"] != "timeout", (argv, fault)
        return subprocess.CompletedProcess(argv, answer["rc"], answer["stdout"], answer["stderr"])

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(timeout=30)
            self.proc.stdout.close()  # type: ignore[union-attr]
            self.proc = None


_ZYGOTE = _Zygote()


@pytest.fixture(scope="module", autouse=True)
def _zygote():
    yield _ZYGOTE
    _ZYGOTE.close()


def _run(root: Path, argv: List[str], fault: str = "0:none", log: Optional[Path] = None,
         prefix: Optional[List[str]] = None) -> subprocess.CompletedProcess:
    if prefix is None:
        return _ZYGOTE.call(root, argv, fault, log)
    extra = {"PRIORS_FAULT": fault}
    if log is not None:
        extra["PRIORS_FAULT_LOG"] = str(log)
    cmd = prefix + [sys.executable, FAULTRUN, *argv]
    return subprocess.run(cmd, cwd=str(root), capture_output=True, text=True, encoding="utf-8", env=_env(extra),
                          timeout=120)


def _retry(root: Path, argv: List[str]) -> subprocess.CompletedProcess:
    """A retry as a user would. A crash right after creating the lock leaves it empty, which counts
    as being written until it is store.STALE_EMPTY_S old: rather than wait that long, the empty
    lock is aged by that much (its mtime set back), and the retry must then break it and succeed."""
    from priors.store.lock import STALE_EMPTY_S

    r = _run(root, argv)
    lock = root / ".priors" / "keeper.lock"
    if r.returncode == 1 and "KEEPER_LOCKED" in r.stdout and lock.is_file() and lock.stat().st_size == 0:
        old = lock.stat().st_mtime - STALE_EMPTY_S - 1
        os.utime(str(lock), (old, old))
        r = _run(root, argv)
    return r


def _tree(root: Path) -> Dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(str(root / ".priors")):
        for name in files:
            p = Path(dirpath, name)
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


_PID_TEMP = re.compile(r"^(.*\.)\d+(\.tmp)$")


def _state_key(tree: Dict[str, bytes]) -> Tuple[Tuple[str, bytes], ...]:
    """A tree with the dead writers' pids (in temp names and in the lock) made equal."""
    out = []
    for name, data in tree.items():
        name = _PID_TEMP.sub(r"\1PID\2", name)
        if name.endswith("keeper.lock") and data.strip().isdigit():
            data = b"PID"
        out.append((name, data))
    return tuple(sorted(out))


def _temps(root: Path) -> List[str]:
    return [k for k in _tree(root) if k.endswith(".tmp")]


# ------------------------------------------------------------------ scenarios


class _ForkKeeper(Keeper):
    """The conftest Keeper, its CLI calls made through the zygote (no fault) instead of a new interpreter."""

    def __call__(self, *args: str, stdin: Optional[str] = None, env=None) -> Result:
        assert stdin is None and env is None
        r = _run(self.root, list(args))
        assert "Traceback" not in r.stderr, r.stderr
        return Result(r)


def _base(root: Path) -> Keeper:
    """A ledger with a committed run, priors of several kinds and an escalation, then run-002 open and staged."""
    k = _ForkKeeper(root)
    k.ok("init")
    k.write("a.txt", "alpha")
    k.write("b.txt", "beta")
    sc = {"a.txt": k.hash("a.txt"), "b.txt": k.hash("b.txt")}
    rel = k.open_run("web", sc)
    run = rel["run"]
    for obj in [
        {"type": "conclusion", "claim": "alpha lacks a label", "scope_ref": "a.txt", "severity": "major", "direction": "terser"},
        {"type": "conclusion", "claim": "beta leaks a secret token", "scope_ref": "b.txt", "severity": "gate"},
        {"type": "calibration", "claim": "prefer short answers"},
    ]:
        assert k.propose(run, "web", obj).code == 0
    k.ok("commit", "--run", run)
    k.ok("decide", "P-0001", "accepted", "--because", "agreed in review")
    return k


def _open_second_run(k: Keeper) -> str:
    k.write("b.txt", "beta changed")
    sc = {"a.txt": k.hash("a.txt"), "b.txt": k.hash("b.txt"), "c.txt": "c0c0c0c0c0c0"}
    rel = k.open_run("web", sc)
    run = rel["run"]
    k.ok("disposition", "P-0002", "stale", "--run", run)
    assert k.propose(run, "web", {"type": "conclusion", "claim": "gamma is slow", "scope_ref": "c.txt",
                                  "severity": "minor"}).code == 0
    r = k.propose(run, "web", {"type": "conclusion", "claim": "alpha should expand", "scope_ref": "a.txt",
                               "severity": "major", "direction": "expand"})
    assert r.code == 1 and json.loads(r.out)["refused"] == "REVERSAL", r
    return run


# (name, setup(k) -> argv, retry policy) ; retry: "always" | "if-old" | "never"
def _commit(k: Keeper) -> List[str]:
    return ["commit", "--run", _open_second_run(k)]


def _decide(k: Keeper) -> List[str]:
    return ["decide", "P-0002", "wontfix", "--because", "not worth it"]


def _redact(k: Keeper) -> List[str]:
    return ["redact", "P-0002", "--because", "contained a secret"]


def _relevant(k: Keeper) -> List[str]:
    k.scopes({"a.txt": k.hash("a.txt")}, "s.json")
    return ["relevant", "--ns", "web", "--scopes", "s.json"]


def _disposition(k: Keeper) -> List[str]:
    k.write("b.txt", "beta changed")
    rel = k.open_run("web", {"a.txt": k.hash("a.txt"), "b.txt": k.hash("b.txt")})
    return ["disposition", "P-0002", "stale", "--run", rel["run"]]


def _propose(k: Keeper) -> List[str]:
    rel = k.open_run("web", {"a.txt": k.hash("a.txt"), "c.txt": "c0c0c0c0c0c0"})
    k.candidate({"type": "conclusion", "claim": "gamma is slow", "scope_ref": "c.txt", "severity": "minor"}, "g.json")
    return ["propose", "g.json", "--run", rel["run"], "--ns", "web"]


def _abort(k: Keeper) -> List[str]:
    return ["abort", "--run", _open_second_run(k)]


def _render(k: Keeper) -> List[str]:
    (k.root / ".priors" / "PRIORS.md").unlink()
    return ["render"]


SCENARIOS = {
    "commit": (_commit, "always"),
    "decide": (_decide, "if-old"),
    "redact": (_redact, "if-old"),
    "relevant": (_relevant, "never"),
    "disposition": (_disposition, "if-old-run"),
    "propose": (_propose, "if-old-run"),
    "abort": (_abort, "if-old-run"),
    "render": (_render, "always"),
}


class Scenario:
    """A prepared tree (built once per test process), the verb's argv, and the uninterrupted outcome."""

    def __init__(self, name: str, workdir: Path, base: Path) -> None:
        setup, self.retry = SCENARIOS[name]
        self.name = name
        self.template = workdir / f"{name}-template"
        shutil.copytree(str(base), str(self.template))
        k = _ForkKeeper(self.template)
        self.argv = setup(k)
        self.old = _tree(self.template)
        ref = self.copy(workdir / f"{name}-reference")
        log = workdir / f"{name}.log"
        r = _run(ref, self.argv, log=log)
        assert r.returncode == 0, (r.stdout, r.stderr)
        self.stdout = r.stdout
        self.new = _tree(ref)
        self.calls = [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip()]
        self.workdir = workdir
        self.recovered: set = set()

    def copy(self, dst: Path) -> Path:
        if dst.exists():
            shutil.rmtree(str(dst))
        shutil.copytree(str(self.template), str(dst))
        return dst

    def ledger_key(self) -> str:
        return os.path.join(".priors", "ledger.jsonl")

    def check_after_fault(self, root: Path, r: subprocess.CompletedProcess, label: str) -> None:
        assert "Traceback" not in r.stderr, (label, r.stderr)
        now = _tree(root)
        led = now.get(self.ledger_key())
        assert led in (self.old[self.ledger_key()], self.new[self.ledger_key()]), label
        if self.name in ("disposition", "propose"):
            # staging files are old or new, never half-written
            for key in set(self.old) | set(self.new):
                if key.endswith((".jsonl", ".json")) and "runs" in key:
                    assert now.get(key) in (self.old.get(key), self.new.get(key)), (label, key)
        # The retry / next writer. What it does depends only on the tree the fault left (every
        # pid in it is dead), so a tree already seen to recover — byte for byte, up to the dead
        # pids in temp names and the lock — is not recovered again.
        seen = _state_key(now)
        if seen in self.recovered:
            return
        self.recovered.add(seen)
        landed = led == self.new[self.ledger_key()] and led != self.old[self.ledger_key()]
        if self.retry == "always" or (self.retry == "if-old" and not landed):
            rr = _retry(root, self.argv)
            assert rr.returncode == 0, (label, rr.stdout, rr.stderr)
            if self.name == "commit":
                assert rr.stdout == self.stdout, label  # a retried commit prints the same summary
        elif self.retry == "if-old-run":
            staged_now = {k: v for k, v in _tree(root).items() if "runs" in k and not k.endswith(".tmp")}
            staged_new = {k: v for k, v in self.new.items() if "runs" in k}
            if staged_now != staged_new:
                rr = _retry(root, self.argv)
                assert rr.returncode == 0, (label, rr.stdout, rr.stderr)
        rr = _retry(root, ["render"])  # the next writer: takes the (recovered) lock, clears temps
        assert rr.returncode == 0, (label, rr.stdout, rr.stderr)
        assert not _temps(root), (label, _temps(root))
        final = _tree(root)
        if self.name != "relevant":
            assert final[self.ledger_key()] == self.new[self.ledger_key()], label
            for key in self.new:
                if not key.endswith(".tmp") and "cache" not in key:
                    assert final.get(key) == self.new[key], (label, key)
            extra = [k for k in final if k not in self.new and "cache" not in k]
            assert not extra, (label, extra)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("crash")


_SCENARIOS: Dict[Tuple[str, str], Scenario] = {}


def scenario(name: str, workdir: Path) -> Scenario:
    """Each scenario is built once per test process (its template is only ever copied, never changed)
    on one shared base ledger, also built once."""
    key = (str(workdir), name)
    if key not in _SCENARIOS:
        base = workdir / "base"
        if not base.exists():
            base.mkdir()
            _base(base)
        _SCENARIOS[key] = Scenario(name, workdir, base)
    return _SCENARIOS[key]


@pytest.mark.parametrize("kind", ["kill", "killafter"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_kill_at_every_mutation(name: str, kind: str, workdir: Path) -> None:
    sc = scenario(name, workdir)
    assert sc.calls, "the verb made no disk mutation?"
    for n in range(1, len(sc.calls) + 1):
        root = sc.copy(workdir / f"{name}-{kind}")
        r = _run(root, sc.argv, fault=f"{n}:{kind}")
        assert r.returncode == -9, (sc.calls[n - 1], r.returncode, r.stderr)
        sc.check_after_fault(root, r, f"{kind} at {sc.calls[n - 1]}")


@pytest.mark.parametrize("err", ERRORS)
@pytest.mark.parametrize("name", ["commit", "decide", "redact", "relevant", "propose"])
def test_injected_errors_are_clean(name: str, err: str, workdir: Path) -> None:
    sc = scenario(name, workdir)
    for n in range(1, len(sc.calls) + 1):
        root = sc.copy(workdir / f"{name}-{err}")
        r = _run(root, sc.argv, fault=f"{n}:{err}")
        label = f"{err} at {sc.calls[n - 1]}"
        assert r.returncode in (0, 3), (label, r.returncode, r.stderr)
        if r.returncode == 3:
            assert r.stderr.strip() and r.stdout == "", label
            assert "priors" in r.stderr, label
        sc.check_after_fault(root, r, label)


# ------------------------------------------------------------------ strace: real syscalls


STRACE = shutil.which("strace")
SYSCALLS = ("openat", "write", "copy_file_range", "fsync", "rename", "unlink", "mkdir", "rmdir", "unlinkat")


def _strace_counts(sc: Scenario) -> Dict[str, int]:
    root = sc.copy(sc.workdir / f"{sc.name}-count")
    out = sc.workdir / f"{sc.name}.strace"
    r = _run(root, sc.argv, prefix=[STRACE, "-f", "-qq", "-o", str(out), "-e", "trace=" + ",".join(SYSCALLS)])
    assert r.returncode == 0, r.stderr
    counts: Dict[str, int] = {}
    for ln in out.read_text(errors="replace").splitlines():
        m = re.match(r"^(?:\d+\s+)?(\w+)\(", ln)
        if m and m.group(1) in SYSCALLS:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


@pytest.mark.skipif(STRACE is None, reason="strace not installed (apt-get install strace); the pure-Python injector still runs")
@pytest.mark.parametrize("name", ["commit", "decide", "redact"])
def test_strace_kill_at_every_syscall(name: str, workdir: Path) -> None:
    sc = scenario(name, workdir)
    base = workdir / "strace"
    base.mkdir(exist_ok=True)
    counts = _strace_counts(sc)
    # openat is also every import; only the writes after start-up matter, so step through them sparsely
    for syscall in ("write", "copy_file_range", "fsync", "rename", "unlink", "mkdir", "rmdir", "unlinkat", "openat"):
        total = counts.get(syscall, 0)
        step = 1 if syscall != "openat" else max(1, total // 25)
        for n in range(1, total + 1, step):
            root = sc.copy(base / f"{name}-s")
            r = _run(root, sc.argv, prefix=[STRACE, "-f", "-qq", "-o", os.devnull,
                                            "-e", f"inject={syscall}:signal=KILL:when={n}"])
            sc.check_after_fault(root, r, f"strace KILL at {syscall} #{n}")


@pytest.mark.skipif(STRACE is None, reason="strace not installed (apt-get install strace); the pure-Python injector still runs")
@pytest.mark.parametrize("err", ["ENOSPC", "EIO"])
def test_strace_errors_on_writes(err: str, workdir: Path) -> None:
    sc = scenario("commit", workdir)
    base = workdir / f"strace-{err}"
    base.mkdir(exist_ok=True)
    counts = _strace_counts(sc)
    for syscall in ("write", "copy_file_range", "fsync", "rename"):
        for n in range(1, counts.get(syscall, 0) + 1):
            root = sc.copy(base / "c")
            r = _run(root, sc.argv, prefix=[STRACE, "-f", "-qq", "-o", os.devnull,
                                            "-e", f"inject={syscall}:error={err}:when={n}"])
            assert r.returncode in (0, 3), (syscall, n, r.returncode, r.stderr)
            sc.check_after_fault(root, r, f"strace {err} at {syscall} #{n}")
