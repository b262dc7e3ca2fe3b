"""Integrity under attack (issue 14): a person's decision always wins, no write ever lies,
nothing poisons the ledger. Each test is one reproduction from the issue."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import ledgerkit as k
from conftest import REPO, Keeper, run_priors
from priors.core.fold import fold, parse_lines
from priors.core.ledger_checks import check

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_MERGE_AUTOEDIT": "no",
}


class Clone(Keeper):
    def env(self) -> dict:
        env = dict(os.environ)
        env.update(GIT_ENV)
        env["HOME"] = str(self.root.parent)
        return env

    def git(self, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=str(self.root), capture_output=True, text=True, env=self.env())
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc.stdout

    def __call__(self, *args: str, stdin=None, env=None):
        return run_priors(self.root, *args, stdin=stdin, env={**GIT_ENV, "HOME": str(self.root.parent), **(env or {})})


def _one_finding(kp: Keeper, ns: str = "web") -> str:
    """A committed run with one open finding P-0001 on a.py; returns the scopes file."""
    kp.write("a.py", "a = 1\n")
    scopes = {"a.py": kp.hash("a.py")}
    run = kp.open_run(ns, scopes)["run"]
    assert kp.propose(run, ns, {"type": "conclusion", "claim": "a is magic", "scope_ref": "a.py"}).code == 0
    kp.ok("commit", "--run", run)
    return kp.scopes(scopes)


def status_of(kp: Keeper, pid: str) -> str:
    return fold(parse_lines(kp.ledger_bytes())).priors[pid].status


# ------------------------------------------------------------------ 1. human decisions always win


@pytest.mark.one_cache_mode
def test_decision_pulled_mid_run_wins_over_the_staged_verdict(tmp_path: Path):
    """Clone A stages still-open, clone B decides wontfix and pushes, A pulls (fast-forward) and commits."""
    a = Clone(tmp_path / "a")
    a.root.mkdir()
    a.git("init", "-q", "-b", "main")
    a.ok("init")
    a.write(".gitignore", "cand.json\nscopes.json\n")
    _one_finding(a)
    a.git("add", "-A")
    a.git("commit", "-qm", "run-001")
    b = Clone(tmp_path / "b")
    subprocess.run(["git", "clone", "-q", str(a.root), str(b.root)], check=True, env=b.env())

    run = a.open_run("web", {"a.py": a.hash("a.py")})["run"]
    a.ok("disposition", "P-0001", "still-open", "--run", run)

    b.ok("decide", "P-0001", "wontfix", "--because", "we like it")
    b.git("commit", "-qam", "decide")
    a.git("pull", "-q", "--ff-only", str(b.root), "main")

    out = a.ok("commit", "--run", run)
    assert "Everything settled still holds" not in out
    assert "1 verdict set aside" in out and "P-0001" in out
    assert status_of(a, "P-0001") == "wontfix"
    assert json.loads(a.ok("show", "P-0001", "--json"))["status"] == "wontfix"
    assert not any(r.get("action") == "disposition" for r in a.ledger())
    assert a("verify").code == 0
    a.assert_rendered()


@pytest.mark.one_cache_mode
def test_a_pulled_reopen_also_wins(tmp_path: Path):
    """Not only binding verdicts: any decision a person made after the run opened keeps its word."""
    a = Clone(tmp_path / "a")
    a.root.mkdir()
    a.git("init", "-q", "-b", "main")
    a.ok("init")
    a.write(".gitignore", "cand.json\nscopes.json\n")
    _one_finding(a)
    a.ok("decide", "P-0001", "wontfix")
    a.git("add", "-A")
    a.git("commit", "-qm", "run-001")
    b = Clone(tmp_path / "b")
    subprocess.run(["git", "clone", "-q", str(a.root), str(b.root)], check=True, env=b.env())
    a.ok("decide", "P-0001", "reopen", "--because", "it is back")
    a.git("commit", "-qam", "reopen")
    b.git("pull", "-q", "--ff-only", str(a.root), "main")
    # B: the prior is open again; open a run, judge it, then A decides once more and B pulls
    run = b.open_run("web", {"a.py": b.hash("a.py")})["run"]
    b.ok("disposition", "P-0001", "fixed", "--run", run)
    a.ok("decide", "P-0001", "reopen", "--because", "still back")
    a.git("commit", "-qam", "reopen again")
    b.git("pull", "-q", "--ff-only", str(a.root), "main")
    out = b.ok("commit", "--run", run)
    assert "1 verdict set aside" in out
    assert status_of(b, "P-0001") == "open"


def test_hand_edited_staging_cannot_overturn_a_binding_decision(keeper):
    """Add a wontfix prior to relevant.json's verify list and a `fixed` to dispositions.jsonl by hand."""
    scopes = _one_finding(keeper)
    keeper.ok("decide", "P-0001", "wontfix")
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    rdir = keeper.root / ".priors" / "runs" / run
    rel = json.loads((rdir / "relevant.json").read_text())
    assert rel["verify"] == []
    rel["verify"] = [{"id": "P-0001", "claim": "a is magic", "scope_ref": "a.py", "scopeState": "unchanged"}]
    (rdir / "relevant.json").write_text(json.dumps(rel))
    (rdir / "dispositions.jsonl").write_text(json.dumps(k.disp("P-0001", run, "fixed")) + "\n")
    out = keeper.ok("commit", "--run", run)
    assert "set aside" in out and "P-0001" in out
    assert status_of(keeper, "P-0001") == "wontfix"
    assert keeper("verify").code == 0


def test_hand_edited_staging_naming_an_unknown_prior_is_refused(keeper):
    scopes = _one_finding(keeper)
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    rdir = keeper.root / ".priors" / "runs" / run
    rel = json.loads((rdir / "relevant.json").read_text())
    rel["verify"].append({"id": "P-0042", "claim": "x", "scope_ref": "a.py", "scopeState": "unchanged"})
    (rdir / "relevant.json").write_text(json.dumps(rel))
    (rdir / "dispositions.jsonl").write_text(
        json.dumps(k.disp("P-0001", run, "still-open")) + "\n" + json.dumps(k.disp("P-0042", run, "fixed")) + "\n")
    body = keeper.refused("PRIOR_OUTSIDE_RUN", "commit", "--run", run)
    assert body["ids"] == ["P-0042"]


def test_the_fold_never_lets_an_agent_verdict_move_a_binding_status():
    recs = k.sample() + [k.disp("P-0002", "run-004", "fixed"), k.commit("run-004")]
    st = fold(recs)
    assert st.priors["P-0002"].status == "wontfix"
    # the person's later word still moves it
    st = fold(recs + [k.decide("P-0002", "reopen", "back"), k.disp("P-0002", "run-005", "fixed"), k.commit("run-005")])
    assert st.priors["P-0002"].status == "fixed"


def test_verify_reports_an_agent_verdict_after_a_binding_decision():
    recs = k.sample() + [k.disp("P-0002", "run-004", "fixed"), k.commit("run-004")]
    problems, _ = check(k.to_bytes(recs))
    assert [(p.code, p.line) for p in problems] == [("AGENT_AFTER_BINDING", len(k.sample()) + 1)]
    # a later decision restating the person's word (what the merge driver writes) answers it
    restated = recs + [dict(k.decide("P-0002", "wontfix", "we like it"), restated=True)]
    assert check(k.to_bytes(restated))[0] == []
    # after a reopen the agent may judge again
    reopened = k.sample() + [k.decide("P-0002", "reopen", "back"), k.disp("P-0002", "run-004", "fixed"), k.commit("run-004")]
    assert check(k.to_bytes(reopened))[0] == []
