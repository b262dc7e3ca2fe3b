"""`priors demo`: the zero-reading first run works end to end."""

from __future__ import annotations

import json
import os

from conftest import run_priors


def test_demo_tells_the_whole_story(tmp_path):
    keep = tmp_path / "demo"
    r = run_priors(tmp_path, "demo", "--keep", str(keep))
    assert r.code == 0, r
    out = r.out
    assert "Checked against 0 priors:\n    New this run: 3" in out
    assert ("Checked against 2 priors:\n      ✓ 1 fixed — nice work\n"
            "      → 1 carried (same identities, current scope state)\n    New this run: 1") in out
    assert ("Checked against 2 priors:\n      → 2 carried (same identities, current scope state)\n"
            "    New this run: 0\n    Everything settled still holds. Nothing new.") in out
    assert '"refused":"RERAISE"' in out and '"refused":"DUPLICATE"' in out
    assert "$ priors decide P-0003 wontfix" in out
    assert "Next: `priors init --git` in your repo" in out  # the set-up README.md gives, merge driver included
    ledger = [json.loads(x) for x in (keep / ".priors" / "ledger.jsonl").read_text().splitlines()]
    assert [r["run"] for r in ledger if r["t"] == "run"] == ["run-001", "run-002", "run-003"]
    verified = run_priors(keep, "verify")
    assert verified.code == 0, verified
    assert run_priors(keep, "status").out == "code-review: 2 open · 1 fixed · 1 decided by you · 0 lessons locked\n"


def test_demo_without_keep_cleans_up_and_refuses_a_busy_dir(tmp_path):
    r = run_priors(tmp_path, "demo")
    assert r.code == 0 and "Everything settled still holds. Nothing new." in r.out
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    r = run_priors(tmp_path, "demo", "--keep", "busy")
    assert r.code == 2 and "empty" in r.err


def test_demo_kept_inside_a_repo_never_touches_that_repos_ledger(tmp_path):
    """`priors demo --keep DIR` with DIR inside a repository that has `.priors/`: the demo's calls
    used to find the enclosing repository's ledger, sealed a run in it and crashed on the next."""
    import subprocess
    import sys

    from conftest import REPO

    outer = tmp_path / "outer"
    outer.mkdir()
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = lambda *a: subprocess.run([sys.executable, "-m", "priors", *a], cwd=str(outer), env=env,  # noqa: E731
                                    capture_output=True, text=True, timeout=300)
    assert run("init").returncode == 0
    ledger = outer / ".priors" / "ledger.jsonl"
    before = ledger.read_bytes()
    r = run("demo", "--keep", "kept")
    assert r.returncode == 0 and "Everything settled still holds" in r.stdout, r
    assert ledger.read_bytes() == before and not list((outer / ".priors" / "runs").iterdir())
    assert (outer / "kept" / ".priors" / "ledger.jsonl").stat().st_size > 0
