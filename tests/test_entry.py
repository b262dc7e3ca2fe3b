"""The process entry point (`python -m priors`, the `priors` console script): it leaves without
tearing the folded ledger down object by object, yet a user sees every byte of the answer, the
verb's own exit code, and anything else that waits for the end of the process still runs.

Every call here starts a real interpreter: what is tested is how that process ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import REPO


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONIOENCODING"] = "utf-8"
    return env


# -S: no site hooks, so nothing of the machine's registers work at exit and the early exit is taken
PYTHON = [sys.executable, "-S"]


def _priors(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*PYTHON, "-m", "priors", *argv], cwd=str(cwd), env=_env(), capture_output=True,
                          text=True, encoding="utf-8", timeout=120)


def _seeded(tmp_path: Path, n: int) -> Path:
    """A repo whose ledger has `n` priors (written as the keeper would: canonical lines)."""
    from priors.core.canonical import dumps

    root = tmp_path / "repo"
    root.mkdir()
    assert _priors(root, "init").returncode == 0
    lines = [dumps({"born": "run-001", "claim": f"finding number {i} " + "x" * 60, "id": f"P-{i:04d}", "ns": "web",
                    "t": "prior", "type": "conclusion"}) for i in range(1, n + 1)]
    lines.append(dumps({"action": "commit", "ns": "web", "run": "run-001", "summary": [], "t": "run"}))
    (root / ".priors" / "ledger.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_a_large_answer_through_a_pipe_arrives_whole(tmp_path):
    root = _seeded(tmp_path, 3000)
    p = _priors(root, "list", "--json")
    assert p.returncode == 0, p.stderr
    listed = json.loads(p.stdout)  # cut short, it would not parse
    ids = {row["id"] for row in listed["priors"]} if isinstance(listed, dict) else {row["id"] for row in listed}
    assert len(ids) == 3000 and "P-3000" in ids


def test_exit_codes_are_the_verbs_own(tmp_path):
    root = _seeded(tmp_path, 3)
    assert _priors(root, "status").returncode == 0
    refused = _priors(root, "decide", "P-9999", "keep")
    assert refused.returncode == 1 and json.loads(refused.stdout)["refused"] == "UNKNOWN_PRIOR"
    usage = _priors(root, "no-such-verb")
    assert usage.returncode == 2 and "unknown verb" in usage.stderr and usage.stdout == ""


def _run_entry(tmp_path: Path, before: str) -> subprocess.CompletedProcess:
    """`priors status` through the entry point, after `before` ran in the same process."""
    root = _seeded(tmp_path, 3)
    script = textwrap.dedent("""
        import sys
        {before}
        sys.argv = ["priors", "status"]
        from priors.cli.main import run
        run()
    """).format(before=before)
    return subprocess.run([*PYTHON, "-c", script], cwd=str(root), env=_env(), capture_output=True, text=True,
                          encoding="utf-8", timeout=120)


def test_work_registered_to_run_at_exit_still_runs(tmp_path):
    p = _run_entry(tmp_path, "import atexit; atexit.register(lambda: print('atexit ran', file=sys.stderr))")
    assert p.returncode == 0 and "web" in p.stdout
    assert "atexit ran" in p.stderr


def test_a_thread_still_running_is_waited_for(tmp_path):
    p = _run_entry(tmp_path, textwrap.dedent("""
        import threading, time
        def late():
            time.sleep(0.3)
            print("thread finished", file=sys.stderr, flush=True)
        threading.Thread(target=late).start()
    """))
    assert p.returncode == 0 and "web" in p.stdout
    assert "thread finished" in p.stderr


def test_python_m_priors_and_the_console_script_name_the_same_entry():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'priors = "priors.cli.main:run"' in text
    assert "run()" in (REPO / "priors" / "__main__.py").read_text(encoding="utf-8")


def test_the_cli_module_run_as_a_script_says_what_a_verb_it_does_not_know_is(tmp_path):
    p = subprocess.run([*PYTHON, "-m", "priors.cli.main", "statsu"], cwd=str(tmp_path), env=_env(), capture_output=True,
                       text=True, encoding="utf-8", timeout=120)
    assert p.returncode == 2 and "unknown verb 'statsu'" in p.stderr and "did you mean `status`" in p.stderr
    assert "unexpected error" not in p.stderr


def test_decide_with_standard_input_closed_is_a_usage_error_not_a_crash(tmp_path):
    root = _seeded(tmp_path, 3)
    command = " ".join([*PYTHON, "-m", "priors", "decide"]) + " <&-"  # fd 0 closed: sys.stdin is None
    p = subprocess.run(["sh", "-c", command], cwd=str(root), env=_env(), capture_output=True, text=True,
                       encoding="utf-8", timeout=120)
    assert p.returncode == 2 and "this is not one" in p.stderr and "unexpected error" not in p.stderr


def test_python_m_priors_never_imports_the_reviewed_repository_s_modules(tmp_path):
    """`-m` puts the current folder — the repository under review — first on the import path: its `json/`
    and `hashlib.py` were imported in place of the standard library's (newcomer pass 27aw: a print in the
    project's `json/__init__.py` ran inside the keeper; a broken one made an "unexpected error")."""
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text('raise ImportError("the project json/ was imported")\n')
    (tmp_path / "hashlib.py").write_text('raise ImportError("the project hashlib.py was imported")\n')
    r = subprocess.run([sys.executable, "-m", "priors", "hash", "--text", "some text"], cwd=str(tmp_path), env=_env(),
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.strip() == hashlib_sha12("some text")


def hashlib_sha12(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:12]
