"""Contention: 16 processes at once opening runs, proposing, committing and deciding on one ledger.

Every acknowledged write (exit 0 of commit or decide) appears in the ledger exactly once;
every other call is a clean refusal (exit 1, one JSON line); the ledger parses, folds and
— when the keeper has `verify` — verifies; no lock or temp file is left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO, Keeper

WORKERS = 16
ALLOWED_REFUSALS = {"KEEPER_LOCKED", "ACTIVE_RUN_EXISTS", "RUN_EXISTS", "PRIOR_OBLIGATIONS_OPEN"}


def test_sixteen_writers_at_once(keeper: Keeper, tmp_path: Path) -> None:
    k = keeper
    rel = k.open_run("web", {"seed.txt": "aaaaaaaaaaaa"})
    for i in range(3):
        cand = {"type": "conclusion", "claim": f"seed finding {i}", "scope_ref": "seed.txt", "severity": "major"}
        assert k.propose(rel["run"], "web", cand).code == 0
    k.ok("commit", "--run", rel["run"])
    results = tmp_path / "results"
    results.mkdir()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    deadline = time.time() + 150
    procs = [subprocess.Popen([sys.executable, str(REPO / "tests" / "contention_worker.py"), str(k.root), str(w),
                               str(results / f"{w}.jsonl"), str(deadline)], env=env)
             for w in range(WORKERS)]
    for p in procs:
        assert p.wait(timeout=240) == 0
    calls = []
    for w in range(WORKERS):
        for ln in (results / f"{w}.jsonl").read_text(encoding="utf-8").splitlines():
            calls.append((w, json.loads(ln)))
    assert calls
    ledger = k.ledger()
    claims = [r.get("claim") for r in ledger if r.get("t") == "prior"]
    reasons = [r.get("reason") for r in ledger if r.get("t") == "event" and r.get("action") == "decide"]
    commits = [r.get("run") for r in ledger if r.get("t") == "run"]
    assert len(commits) == len(set(commits)), "a run sealed twice"
    acknowledged = 0
    for w, c in calls:
        assert c["code"] in (0, 1), c
        assert "Traceback" not in c["err"], c
        if c["code"] == 1:
            lines = c["out"].splitlines()
            if c["argv"][0] in ("disposition", "propose") and len(lines) > 1:
                continue  # batch forms print one line per item
            assert len(lines) == 1, c
            body = json.loads(lines[0])
            assert body["refused"] in ALLOWED_REFUSALS, c
            continue
        verb = c["argv"][0]
        if verb == "commit":
            acknowledged += 1
            assert claims.count(f"worker {w} finding") == 1, (w, c)
        elif verb == "decide":
            acknowledged += 1
            assert reasons.count(f"worker {w} decision") == 1, (w, c)
    # nothing landed without an acknowledgement either
    for w in range(WORKERS):
        ok_commit = any(c["code"] == 0 and c["argv"][0] == "commit" for ww, c in calls if ww == w)
        assert claims.count(f"worker {w} finding") == (1 if ok_commit else 0), w
        ok_decide = any(c["code"] == 0 and c["argv"][0] == "decide" for ww, c in calls if ww == w)
        assert reasons.count(f"worker {w} decision") == (1 if ok_decide else 0), w
    assert acknowledged >= WORKERS  # the writers made progress, not just refusals
    # the ledger folds, status reads it, no lock or temp remains
    assert k("status").code == 0
    assert not (k.root / ".priors" / "keeper.lock").exists()
    leftovers = [str(p) for p in (k.root / ".priors").rglob("*.tmp")]
    assert not leftovers, leftovers
    from priors.cli.main import VERBS

    if "verify" in VERBS:
        r = k("verify")
        assert r.code == 0, r
