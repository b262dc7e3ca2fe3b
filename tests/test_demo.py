"""`priors demo`: the zero-reading first run works end to end."""

from __future__ import annotations

import json

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
