"""Nothing gets around a person (issue 27): staging is untrusted input. `commit` judges every staged
verdict, prior and call again, from scratch, by the rules `disposition` and `propose` apply, against
the ledger as it is then; a line they would refuse refuses the commit, naming its file and line. And a
run id sealed elsewhere with other content (a fast-forward pull of another clone's run) is refused,
the staging kept, and `priors carry` moves it to a new run. Each test is one reproduction, through
the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import ledgerkit as k
from conftest import Keeper
from test_integrity import _one_finding, _two_clones


def _run_dir(kp: Keeper, run: str) -> Path:
    return kp.root / ".priors" / "runs" / run


def _refused_at(kp: Keeper, code: str, run: str, kind: str, line: int) -> dict:
    """The commit is refused naming the staging file and line; nothing is written, the staging stays."""
    staged_before = {p.name: p.read_bytes() for p in _run_dir(kp, run).iterdir()}
    body = kp.refused(code, "commit", "--run", run)
    assert body["file"] == f".priors/runs/{run}/{kind}.jsonl" and body["line"] == line, body
    assert {p.name: p.read_bytes() for p in _run_dir(kp, run).iterdir()} == staged_before
    return body


def _wontfix(kp: Keeper) -> str:
    """P-0001 on a.py, decided wontfix by a person; a new run open (run-002); returns the run."""
    scopes = _one_finding(kp)
    kp.ok("decide", "P-0001", "wontfix", "--because", "a is fine")
    return json.loads(kp.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]


def _ledger_line(kp: Keeper, pid: str) -> dict:
    return next(r for r in kp.ledger() if r["t"] == "prior" and r["id"] == pid)


# ------------------------------------------------------------------ staged priors


def test_a_wontfix_priors_own_line_staged_under_a_new_id_is_refused(keeper):
    run = _wontfix(keeper)
    forged = dict(_ledger_line(keeper, "P-0001"), id="P-0002", born=run)
    keeper.write(f".priors/runs/{run}/staged.jsonl", json.dumps(forged) + "\n")
    body = _refused_at(keeper, "MALFORMED_STAGING", run, "staged", 1)
    assert body["ids"] == ["P-0002"] and body["because"]["refused"] == "RERAISE" and body["because"]["of"] == "P-0001"
    assert f"priors withdraw --run {run} P-0002" in body["hint"]
    keeper.ok("abort", "--run", run)  # abort recovers
    assert keeper("verify").code == 0


def _one_staged(kp: Keeper) -> tuple:
    """An open run-002 with one finding staged by `propose` (P-0002 on b.py); (run, its staged line)."""
    scopes = _one_finding(kp)
    kp.write("b.py", "b = 2\n")
    sc = json.loads(kp.read(scopes))
    sc["b.py"] = kp.hash("b.py")
    run = kp.open_run("web", sc)["run"]
    kp.ok("disposition", "P-0001", "still-open", "--run", run)
    assert kp.propose(run, "web", {"type": "conclusion", "claim": "b is two", "scope_ref": "b.py",
                                   "severity": "minor"}).code == 0
    return run, json.loads(kp.read(f".priors/runs/{run}/staged.jsonl"))


@pytest.mark.parametrize("edit, why", [
    ({"id": "hello"}, "rule"),
    ({"severity": "catastrophic"}, "usage"),
    ({"claim": "b is \x1b[2J two"}, "usage"),
    ({"scope_ref": "../../etc/passwd"}, "UNKNOWN_SCOPE"),
    ({"facets": dict(k.CONCLUSION, authority="binding")}, "usage"),
    ({"status": "wontfix"}, "differs"),
    ({"born": "run-001"}, "differs"),
    ({"claim": "b  is   three"}, "differs"),
    ({"scope_hash": "000000000000"}, "SCOPE_MISMATCH"),
    ({"evidence": "AKIAIOSFODNN7EXAMPLE"}, "SECRET_SUSPECTED"),
])
def test_a_hand_written_staged_line_the_door_refuses_refuses_the_commit(keeper, edit, why):
    run, good = _one_staged(keeper)
    bad = {**good, "id": "P-0003", "claim": "b is three", **edit}
    # a blank line in between: the line named is the file's own
    keeper.write(f".priors/runs/{run}/staged.jsonl", json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")
    body = _refused_at(keeper, "MALFORMED_STAGING", run, "staged", 3)
    because = body["because"]
    assert why in because or because.get("refused") == why, body
    keeper.write(f".priors/runs/{run}/staged.jsonl", json.dumps(good) + "\n")  # the keeper's own line commits
    keeper.ok("commit", "--run", run)
    assert keeper("verify").code == 0


def test_a_staged_line_that_is_no_prior_or_not_json_is_named_by_its_line(keeper):
    run, good = _one_staged(keeper)
    keeper.write(f".priors/runs/{run}/staged.jsonl", json.dumps(good) + "\n{not json\n")
    body = _refused_at(keeper, "MALFORMED_STAGING", run, "staged", 2)
    assert body["ids"] == ["line 2"]
    # a line without a prior id cannot be withdrawn: the hint offers what works (it once said
    # `priors withdraw --run run-002 line 2`, a usage error)
    assert "withdraw" not in body["hint"] and f"priors abort --run {run}" in body["hint"], body
    keeper.write(f".priors/runs/{run}/staged.jsonl", json.dumps(good) + "\n" + json.dumps(dict(good, id="P-0002")) + "\n")
    assert keeper.refused("STAGED_ID_COLLISION", "commit", "--run", run)["line"] == 2


def test_a_withdrawal_is_judged_again_too(keeper):
    """P-0003 said it differs from P-0002; P-0002 is withdrawn: the door would refuse P-0003 now."""
    run, good = _one_staged(keeper)
    assert keeper.propose(run, "web", {"type": "conclusion", "claim": "b is really two", "scope_ref": "b.py",
                                       "distinct_from": ["P-0002"]}).code == 0
    keeper.ok("withdraw", "--run", run, "P-0002")
    body = _refused_at(keeper, "MALFORMED_STAGING", run, "staged", 1)
    assert body["ids"] == ["P-0003"] and body["because"]["refused"] == "DISTINCT_FROM_UNKNOWN"
    keeper.ok("withdraw", "--run", run, "P-0003")
    keeper.ok("commit", "--run", run)


def test_a_finding_that_a_pulled_run_recorded_meanwhile_is_refused_not_recorded_twice(keeper):
    """Another clone's run, brought by a pull mid-run, recorded the same finding: the door says DUPLICATE."""
    run, good = _one_staged(keeper)
    assert keeper.propose(run, "web", {"type": "conclusion", "claim": "b is odd", "scope_ref": "b.py",
                                       "severity": "minor"}).code == 0  # P-0003
    keeper.ok("withdraw", "--run", run, "P-0002")
    theirs = dict(good, claim="b is odd", born="run-009")  # P-0002: the same claim on the same state, sealed by run-009
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes() + k.to_bytes([theirs, k.commit("run-009")]))
    body = _refused_at(keeper, "MALFORMED_STAGING", run, "staged", 1)
    assert body["because"]["refused"] == "DUPLICATE" and body["because"]["of"] == "P-0002"
    keeper.ok("withdraw", "--run", run, "P-0003")
    keeper.ok("commit", "--run", run)
    assert [r["id"] for r in keeper.ledger() if r["t"] == "prior"] == ["P-0001", "P-0002"]


# ------------------------------------------------------------------ staged verdicts


def test_a_hand_written_verdict_the_door_refuses_refuses_the_commit(keeper):
    scopes = _one_finding(keeper)
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    disp = f".priors/runs/{run}/dispositions.jsonl"
    keeper.write(disp, json.dumps(k.disp("P-0001", run, "reaffirmed")) + "\n")  # the scope did not change
    body = _refused_at(keeper, "MALFORMED_DISPOSITIONS", run, "dispositions", 1)
    assert body["because"]["refused"] == "REAFFIRM_REQUIRES_CHANGE" and body["ids"] == ["P-0001"]
    keeper.write(disp, "\n" + json.dumps(k.disp("P-0001", run, "still-open", scope_hash="000000000000")) + "\n")
    body = _refused_at(keeper, "MALFORMED_DISPOSITIONS", run, "dispositions", 2)
    assert body["because"] == {"differs": ["scope_hash"]}
    keeper.write(disp, "")
    keeper.ok("disposition", "P-0001", "still-open", "--run", run)
    keeper.ok("commit", "--run", run)


# ------------------------------------------------------------------ staged calls


def test_a_hand_written_call_is_refused_and_report_still_answers(keeper, tmp_path):
    run, good = _one_staged(keeper)
    esc = f".priors/runs/{run}/escalations.jsonl"
    for line, why in [({"conflicts_with": ["P-0001"], "claim": {"x": 1}}, "rule"),
                      ({"kind": "reversal", "conflicts_with": "P-0001", "claim": "a is not magic"}, "rule"),  # open
                      ({"kind": "reversal", "conflicts_with": "P-0042", "claim": "x"}, "rule"),
                      ({"kind": "reversal", "conflicts_with": "P-0001", "claim": "x \x1b[2J"}, "usage")]:
        keeper.write(esc, json.dumps(line) + "\n")
        assert why in _refused_at(keeper, "MALFORMED_STAGING", run, "escalations", 1)["because"]
    keeper.ok("abort", "--run", run)
    keeper.ok("report", "-o", str(tmp_path / "r.html"))
    assert keeper("verify").code == 0


def test_a_call_the_door_filed_still_commits(keeper):
    keeper.write("a.py", "a = 1\n")
    scopes = {"a.py": keeper.hash("a.py")}
    run = keeper.open_run("web", scopes)["run"]
    keeper.propose(run, "web", {"type": "conclusion", "claim": "keep messages terse", "scope_ref": "a.py",
                                "direction": "terser"})
    keeper.ok("commit", "--run", run)
    keeper.ok("decide", "P-0001", "accepted")
    run = keeper.open_run("web", scopes)["run"]
    r = keeper.propose(run, "web", {"type": "conclusion", "claim": "spell messages out", "scope_ref": "a.py",
                                    "direction": "expand"})
    assert json.loads(r.out)["refused"] == "REVERSAL"
    esc = keeper.root / ".priors" / "runs" / run / "escalations.jsonl"
    filed = esc.read_text()
    esc.write_text(filed + filed)  # the same call twice: the door files it once
    assert "twice" in _refused_at(keeper, "MALFORMED_STAGING", run, "escalations", 2)["because"]["rule"]
    esc.write_text(filed)
    assert "need your call" in keeper.ok("commit", "--run", run)
    assert keeper("verify").code == 0


# ------------------------------------------------------------------ a run id sealed elsewhere


@pytest.mark.one_cache_mode
def test_a_run_id_sealed_by_another_clone_is_refused_and_carried_to_a_new_run(tmp_path):
    """A and B both open run-002; B commits and pushes; A pulls (fast-forward) and commits."""
    a, b = _two_clones(tmp_path)
    scopes = {"a.py": a.hash("a.py")}
    run = a.open_run("web", scopes)["run"]
    assert b.open_run("web", scopes)["run"] == run == "run-002"
    a.ok("disposition", "P-0001", "still-open", "--run", run)
    assert a.propose(run, "web", {"type": "conclusion", "claim": "a is global", "scope_ref": "a.py"}).code == 0
    b.ok("disposition", "P-0001", "still-open", "--run", run)
    assert b.propose(run, "web", {"type": "conclusion", "claim": "a is mutable", "scope_ref": "a.py"}).code == 0
    b.ok("commit", "--run", run)
    b.git("add", "-A")
    b.git("commit", "-qm", "run-002")
    a.git("pull", "-q", "--ff-only", str(b.root), "main")

    before = a.ledger_bytes()
    body = a.refused("RUN_COMMITTED", "commit", "--run", run)
    assert body["sealed_elsewhere"] is True and f"priors carry --run {run}" in body["hint"], body
    assert (a.root / ".priors" / "runs" / run / "staged.jsonl").exists()  # the staging is kept
    a.refused("RUN_COMMITTED", "commit", "--run", run)  # and stays refused: never the other clone's summary
    # the run's other verbs point the same way (a disposition once said only "open a new one")
    body = a.refused("RUN_COMMITTED", "disposition", "P-0001", "fixed", "--run", run)
    assert f"priors carry --run {run}" in body["hint"], body

    moved = json.loads(a.ok("carry", "--run", run, "--json"))
    assert moved == {"carried": run, "ids": {"P-0002": "P-0003"}, "run": "run-003"}
    assert not (a.root / ".priors" / "runs" / run).exists() and a.ledger_bytes() == before
    out = a.ok("commit", "--run", "run-003")
    assert "New this run: 1" in out
    claims = {r["id"]: (r["claim"], r["born"]) for r in a.ledger() if r["t"] == "prior"}
    assert claims["P-0002"] == ("a is mutable", "run-002") and claims["P-0003"] == ("a is global", "run-003")
    assert a("verify").code == 0


@pytest.mark.one_cache_mode
def test_a_commit_retried_after_a_kill_still_succeeds_and_is_not_carried(keeper):
    """This clone's own sealed block matching the staging is a retry (docs/reliability.md), not another clone's."""
    run, _ = _one_staged(keeper)
    keep = keeper.root / "kept"
    shutil.copytree(_run_dir(keeper, run), keep)
    summary = keeper.ok("commit", "--run", run)
    ledger = keeper.ledger_bytes()
    shutil.copytree(keep, _run_dir(keeper, run))  # as if killed after the ledger landed, before the clean-up
    keeper.refused("RUN_COMMITTED", "carry", "--run", run)
    assert keeper.ok("commit", "--run", run) == summary and keeper.ledger_bytes() == ledger
    assert not _run_dir(keeper, run).exists()
    # a sealed run's leftover staging can also be dropped
    shutil.copytree(keep, _run_dir(keeper, run))
    assert "leftover staging removed" in keeper.ok("abort", "--run", run)
    keeper.refused("RUN_COMMITTED", "abort", "--run", run)


def test_carry_takes_staged_ids_the_ledger_took_and_keeps_distinct_from_pointing_home(keeper):
    run, good = _one_staged(keeper)
    assert keeper.propose(run, "web", {"type": "conclusion", "claim": "b is surely two", "scope_ref": "b.py",
                                       "distinct_from": ["P-0002"]}).code == 0
    theirs = dict(good, claim="b is an int", born="run-009")  # a pull brought another P-0002
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes() + k.to_bytes([theirs, k.commit("run-009")]))
    body = keeper.refused("STAGED_ID_COLLISION", "commit", "--run", run)
    assert f"priors carry --run {run}" in body["hint"] and body["line"] == 1
    moved = json.loads(keeper.ok("carry", "--run", run, "--json"))
    assert moved["ids"] == {"P-0002": "P-0003", "P-0003": "P-0004"} and moved["run"] == "run-010"
    keeper.ok("commit", "--run", "run-010")
    mine = [r for r in keeper.ledger() if r["t"] == "prior" and r["born"] == "run-010"]
    assert [(r["id"], r.get("distinct_from")) for r in mine] == [("P-0003", None), ("P-0004", ["P-0003"])]
    assert keeper("verify").code == 0


def test_carry_moves_a_hand_written_distinct_from_of_any_shape(keeper):
    """A staged line's `distinct_from` holding a list (a hand wrote it) is moved as it is, for the commit to
    judge: carry stopped with an unexpected error on it."""
    run, good = _one_staged(keeper)
    staged = _run_dir(keeper, run) / "staged.jsonl"
    line = dict(json.loads(staged.read_text().splitlines()[0]), distinct_from=[["x"], "P-0001"])
    staged.write_text(json.dumps(line) + "\n")
    moved = json.loads(keeper.ok("carry", "--run", run, "--json"))
    again = json.loads((_run_dir(keeper, moved["run"]) / "staged.jsonl").read_text().splitlines()[0])
    assert again["distinct_from"] == ["P-0001", ["x"]] and again["born"] == moved["run"]  # (in order by text, as ever)


def test_carry_refuses_what_it_cannot_move(keeper):
    keeper.refused("UNKNOWN_RUN", "carry", "--run", "run-007")
    keeper.usage("carry", "--run", "nope")
    run, _ = _one_staged(keeper)
    keeper.write(".priors/runs/run-005/relevant.json", json.dumps({"run": "run-005", "ns": "web"}))
    assert keeper.refused("ACTIVE_RUN_EXISTS", "carry", "--run", run)["run"] == "run-005"



def test_an_invented_rehashed_entry_does_not_make_a_decision_look_out_of_date(keeper):
    """`relevant.json`'s `rehashed` (a prior judged before indentation counted, unchanged since) is the
    agent's to write: an entry giving the person's wontfix an invented hash made its verbatim re-raise
    commit (exit 0, "New this run: 1"); the keeper checks each entry on disk and drops the invented one."""
    run = _wontfix(keeper)
    rel = _run_dir(keeper, run) / "relevant.json"
    relevant = json.loads(rel.read_text())
    relevant["rehashed"] = {"P-0001": "deadbeef0000"}
    rel.write_text(json.dumps(relevant))
    forged = dict(_ledger_line(keeper, "P-0001"), id="P-0002", born=run)
    keeper.write(f".priors/runs/{run}/staged.jsonl", json.dumps(forged) + "\n")
    body = _refused_at(keeper, "MALFORMED_STAGING", run, "staged", 1)
    assert body["because"]["refused"] == "RERAISE" and body["because"]["of"] == "P-0001", body
