"""Shared fixtures: a temp target repo and a way to call the real `priors` CLI in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

REPO = Path(__file__).resolve().parent.parent


def package_index_reachable(scratch: Path) -> bool:
    """Can pip fetch the build backend (setuptools>=77)? Builds that fail offline skip rather than fail."""
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(scratch / "dl"), "setuptools>=77"],
        capture_output=True, text=True, timeout=300,
    )
    return probe.returncode == 0


def gen_ledger():
    """bench/gen_ledger.py as a module: deterministic, reference-shaped ledgers for tests."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_ledger", REPO / "bench" / "gen_ledger.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


class Result:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    @property
    def json(self) -> Any:
        return json.loads(self.out)

    def __repr__(self) -> str:
        return f"<exit {self.code} out={self.out!r} err={self.err!r}>"


# Variables read as a process starts (encoding, import path, hash seed, locale, the temp folder):
# a call that sets any of them differently from the fork servers' start gets a real process.
_STARTUP = ("PYTHON", "LC_", "LANG", "TMP", "TEMP")


def _startup_env(env: Dict[str, str]) -> Dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(_STARTUP)}


class _ForkServers:
    """Two tests/forkserver.py processes per test process, each with its own hash seed, used in turn."""

    def __init__(self) -> None:
        self.procs: List[Optional[subprocess.Popen]] = [None, None]
        self.env: Optional[Dict[str, str]] = None  # the first call's: what the servers start with
        self.turn = 0

    def usable(self, env: Dict[str, str], cwd: Path) -> bool:
        if os.environ.get("PRIORS_TEST_SUBPROCESS") == "1" or not hasattr(os, "fork") or not cwd.is_dir():
            return False
        if self.env is None:
            self.env = dict(env)
        return _startup_env(env) == _startup_env(self.env)

    def call(self, cwd: Path, args, stdin: Optional[str], env: Dict[str, str]) -> subprocess.CompletedProcess:
        self.turn = (self.turn + 1) % len(self.procs)
        proc = self.procs[self.turn]
        if proc is None or proc.poll() is not None:
            proc = self.procs[self.turn] = subprocess.Popen(
                [sys.executable, str(REPO / "tests" / "forkserver.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                env=self.env)
        stdin_bytes = None if stdin is None else stdin.encode("utf-8")  # as subprocess.run(input=, encoding=) would
        req = {"cwd": str(cwd), "argv": [str(a) for a in args], "env": env,
               "stdin": None if stdin_bytes is None else stdin_bytes.decode("latin-1")}
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(req).encode("utf-8") + b"\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        assert line, "tests/forkserver.py died"
        answer = json.loads(line)
        out, err = (answer[k].encode("latin-1").decode("utf-8") for k in ("stdout", "stderr"))
        return subprocess.CompletedProcess(args, answer["rc"], _newlines(out), _newlines(err))

    def close(self) -> None:
        for i, proc in enumerate(self.procs):
            if proc is not None:
                proc.stdin.close()  # type: ignore[union-attr]  # end of requests: the server exits
                proc.wait(timeout=60)
                proc.stdout.close()  # type: ignore[union-attr]
            self.procs[i] = None


def _newlines(text: str) -> str:
    """subprocess's text mode: universal newlines."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


_FORK = _ForkServers()


def pytest_sessionfinish(session, exitstatus) -> None:
    _FORK.close()


def run_priors(cwd: Path, *args: str, stdin: Optional[str] = None, env: Optional[Dict[str, str]] = None,
               fresh_process: bool = False) -> Result:
    """`python -m priors ARGS` in cwd: forked from a server with priors imported (tests/forkserver.py), or a
    new interpreter when fresh_process is set, the call changes how the interpreter starts, or
    PRIORS_TEST_SUBPROCESS=1 asks for one every time."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("PYTHONIOENCODING", "utf-8")
    if env:
        full_env.update(env)
    if not fresh_process and _FORK.usable(full_env, Path(cwd)):
        proc = _FORK.call(Path(cwd), args, stdin, full_env)
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "priors", *args],
            cwd=str(cwd),
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=full_env,
        )
    assert "Traceback" not in proc.stderr, proc.stderr
    return Result(proc)


class Keeper:
    """A target directory plus helpers to drive the keeper through its CLI."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, *args: str, stdin: Optional[str] = None, env=None) -> Result:
        return run_priors(self.root, *args, stdin=stdin, env=env)

    def ok(self, *args: str, stdin: Optional[str] = None) -> str:
        r = self(*args, stdin=stdin)
        assert r.code == 0, r
        return r.out

    def refused(self, code: str, *args: str) -> Dict[str, Any]:
        before = self.ledger_bytes()
        r = self(*args)
        assert r.code == 1, r
        assert r.out.count("\n") == 1, r
        body = json.loads(r.out)
        assert body["refused"] == code, body
        assert self.ledger_bytes() == before
        return body

    def usage(self, *args: str, stdin: Optional[str] = None) -> str:
        before = self.ledger_bytes()
        r = self(*args, stdin=stdin)
        assert r.code == 2, r
        assert r.err.strip(), r
        assert r.out == "", r
        assert self.ledger_bytes() == before
        return r.err

    # files
    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as fh:  # newline= on write_text needs 3.10
            fh.write(text)
        return path

    def hash(self, rel: str) -> str:
        return self.ok("hash", rel).strip()

    def scopes(self, mapping: Dict[str, str], name: str = "scopes.json") -> str:
        self.write(name, json.dumps(mapping))
        return name

    def candidate(self, obj: Any, name: str = "cand.json") -> str:
        self.write(name, json.dumps(obj))
        return name

    def ledger_bytes(self) -> bytes:
        p = self.root / ".priors" / "ledger.jsonl"
        return p.read_bytes() if p.exists() else b""

    def ledger(self):
        return [json.loads(x) for x in self.ledger_bytes().decode("utf-8").splitlines() if x.strip()]

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def assert_rendered(self) -> None:
        """PRIORS.md is byte for byte the full render of the ledger (however it was written)."""
        from priors.core.fold import fold, parse_lines
        from priors.core.views import render_markdown

        want = render_markdown(fold(parse_lines(self.ledger_bytes()))).encode("utf-8")
        assert (self.root / ".priors" / "PRIORS.md").read_bytes() == want

    def open_run(self, ns: str, scopes: Dict[str, str], run: Optional[str] = None) -> Dict[str, Any]:
        args = ["relevant", "--ns", ns, "--scopes", self.scopes(scopes)]
        if run:
            args += ["--run", run]
        return json.loads(self.ok(*args))

    def propose(self, run: str, ns: str, obj: Any) -> Result:
        return self("propose", self.candidate(obj), "--run", run, "--ns", ns)


# The keeper's own protocol tests run twice: with the fold cache forced on (even for tiny
# ledgers) and with it off — the cache must never change a result. Only tests that can reach the
# cache run twice: those given a directory to keep a ledger in (`tmp_path`, `tmp_path_factory`, and
# so every `keeper`/`bare` fixture). A test with no directory exercises only pure code
# (priors/core/ imports no I/O module, tests/test_layers.py enforces it), where the mode cannot
# matter. Other suites run once, with the cache forced on. Tests that manage the mode themselves
# use @pytest.mark.one_cache_mode.
BOTH_CACHE_MODES = {"test_keeper", "test_batch", "test_demo", "test_inspect", "test_lessons", "test_secrets",
                    "test_hostile_fs", "test_verify", "test_merge"}
_DISK_FIXTURES = {"tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory"}


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "one_cache_mode: run once, not once per fold-cache mode")


def pytest_generate_tests(metafunc) -> None:
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if (
        "cache_mode" in metafunc.fixturenames
        and module in BOTH_CACHE_MODES
        and _DISK_FIXTURES & set(metafunc.fixturenames)
        and metafunc.definition.get_closest_marker("one_cache_mode") is None
    ):
        metafunc.parametrize("cache_mode", ["cache", "nocache"], indirect=True)


@pytest.fixture(autouse=True)
def cache_mode(request, monkeypatch) -> str:
    mode = getattr(request, "param", "cache")
    if mode == "cache":
        monkeypatch.setenv("PRIORS_CACHE_MIN_BYTES", "0")
        monkeypatch.delenv("PRIORS_NO_CACHE", raising=False)
    else:
        monkeypatch.setenv("PRIORS_NO_CACHE", "1")
    return mode


@pytest.fixture
def keeper(tmp_path: Path) -> Keeper:
    k = Keeper(tmp_path)
    k.ok("init")
    return k


@pytest.fixture
def bare(tmp_path: Path) -> Keeper:
    return Keeper(tmp_path)
