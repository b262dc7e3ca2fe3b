"""What a person is offered to answer (the second outside pass on issue 31): the walk says what each key does
to an open finding, a suggested lesson is a call, and every command offered is whole and copyable."""

from __future__ import annotations

import json
import shlex

import ledgerkit as k
from conftest import Keeper
from test_desk import PROMPT, Pty, make_target


def _command_lines(text: str):
    return [line.strip() for line in text.splitlines() if line.strip().startswith("priors decide ")]


def test_status_calls_prints_each_command_whole_on_its_own_line(tmp_path):
    keeper = make_target(tmp_path / "t")  # a challenged lesson, a reversal, a review nudge
    calls = keeper.ok("status", "--calls")
    assert " | " not in calls, calls  # pasted into a shell, `a | b` would pipe one command into another
    commands = _command_lines(calls)
    assert "priors decide P-0002 keep" in commands and "priors decide P-0002 obsolete" in commands
    assert "priors decide P-0004 keep" in commands
    # the reversal's reopen carries its reason, quoted so that a shell reads it as one word
    reopen = [c for c in commands if " reopen " in c]
    assert [shlex.split(c) for c in reopen] == [["priors", "decide", "P-0003", "reopen", "--because", "accept run-002-C-01"]]
    assert "  ? run-002-C-01 — " in calls and "reverses P-0003" in calls
    # each command is one the keeper takes as it is printed (run without the leading `priors`)
    keeper.ok(*shlex.split(reopen[0])[1:])
    assert not any(" reopen " in c for c in _command_lines(keeper.ok("status", "--calls")))


def test_a_hand_written_claim_never_splits_a_command_line(keeper):
    keeper.ok("init")
    lesson = k.prior("P-0001", "run-001", "a | b; rm -rf ~ $(x)", type="behavioral", facets=dict(k.BEHAVIORAL))
    del lesson["scope_ref"]
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(k.to_bytes([lesson, k.commit("run-001")]))
    keeper.ok("render")
    calls = keeper.ok("status", "--calls")
    assert _command_lines(calls) == ["priors decide P-0001 accepted", "priors decide P-0001 obsolete"], calls


def test_a_suggested_lesson_waits_for_the_person_in_status_and_the_walk(keeper):
    keeper.ok("init")
    out = keeper.ok("suggest", "--ns", "dev", "Run the narrowest test first.")
    assert " | " not in out and _command_lines(out) == ["priors decide P-0001 accepted", "priors decide P-0001 obsolete"]
    assert "1 lesson proposed" in keeper.ok("status")
    calls = keeper.ok("status", "--calls")
    assert "Nothing waits for you" not in calls
    assert "? P-0001 — Run the narrowest test first. — a lesson an agent proposed" in calls, calls
    assert _command_lines(calls) == ["priors decide P-0001 accepted", "priors decide P-0001 obsolete"]
    asks = json.loads(keeper.ok("status", "--calls", "--json"))["calls"]
    assert [(a["kind"], a["id"], a["verdicts"]) for a in asks] == [("proposed-lesson", "P-0001", ["accepted", "obsolete"])]
    t = Pty(keeper.root, "decide")
    out = t.expect(PROMPT)
    assert "P-0001" in out and "a lesson an agent proposed" in out and "a accepted · o obsolete" in out
    t.send("a")
    t.expect("takes this answer back): ")
    t.send("\n")
    t.expect("P-0001 → accepted")
    code, rest = t.finish()
    assert code == 0, rest
    assert "1 lesson locked" in keeper.ok("status") and "Nothing waits for you." in keeper.ok("status", "--calls")


def test_with_require_review_the_held_lesson_is_one_call_not_two(keeper):
    keeper.ok("init")
    keeper.ok("config", "require_review", "on")
    keeper.ok("suggest", "--ns", "dev", "Run the narrowest test first.")
    asks = json.loads(keeper.ok("status", "--calls", "--json"))["calls"]
    assert [a["kind"] for a in asks] == ["awaiting-review"]
    calls = keeper.ok("status", "--calls")
    assert "not injected until you accept it" in calls and len(_command_lines(calls)) == 2, calls


def test_the_walk_says_what_each_key_does_to_an_open_finding(tmp_path):
    keeper = make_target(tmp_path / "t")
    t = Pty(keeper.root, "decide", "--open", "--ns", "api")
    for _ in range(3):  # the three calls first
        t.expect(PROMPT)
        t.send("s")
    out = t.expect(PROMPT)
    assert "P-0005" in out and "w wontfix · o obsolete · a accepted" in out
    # `a` is not "yes, fix it": the walk says so, and that skipping is the answer for a bug to fix
    assert "a accepted" in out and "you accept it as it stands" in out and "not “fix it”" in out
    assert "no run checks it again" in out and "agents may not raise it again" in out
    assert "s skip" in out and "leave it open: every run checks it" in out
    t.send("q")
    code, _ = t.finish()
    assert code == 0
    help_text = keeper.ok("decide", "--help")
    assert "On an open finding" in help_text and "not “fix it”" in help_text and "skip (s) leaves it open" in help_text


def test_the_walk_prints_the_answering_commands_one_a_line(tmp_path):
    keeper: Keeper = make_target(tmp_path / "t")
    t = Pty(keeper.root, "decide")
    out = t.expect(PROMPT)
    assert "  answers:\n" in out.replace("\r\n", "\n") and " | " not in out
    assert "    priors decide P-0002 keep" in out and "    priors decide P-0002 obsolete" in out
    t.send("q")
    t.finish()


def test_the_walk_says_what_each_key_does_to_a_call(tmp_path):
    """Newcomer pass 27aw pressed `k` (keep) on a reversal of a fixed finding and on a run's proposal to retire a
    finding it wanted checked still: `keep` made each `accepted`, which no run checks again, and the walk never
    said so (it explained the keys of an open finding only). Every call now says what each key does."""
    from priors.core.desk import ask_text

    keeper = make_target(tmp_path / "t")  # a challenged lesson, a reversal, a review nudge
    asks = {a["id"]: a for a in json.loads(keeper.ok("status", "--calls", "--json"))["calls"]}
    reversal = ask_text(asks["P-0003"], 1, 3)
    assert "    k keep      it stands as it is: settled, as accepted — no run checks it again" in reversal, reversal
    assert "    r reopen    open again: every run checks it (needs a reason)" in reversal, reversal
    assert "    s skip      leave it waiting for you" in reversal, reversal
    assert "    o obsolete  it no longer applies: retired" in ask_text(asks["P-0002"], 2, 3)
    t = Pty(keeper.root, "decide")
    assert "settled, as accepted — no run checks it again" in t.expect(PROMPT)
    t.send("q")


def test_a_finding_a_run_proposed_to_retire_can_be_reopened_for_runs_to_check(keeper):
    """Newcomer pass 27aw wanted a finding a run proposed retiring checked still, and had only `keep` (settled as
    accepted: no run checks it) or `obsolete`: a finding's call offers `reopen` ("it still applies") too."""
    keeper.ok("init")
    run = keeper.open_run("web", {"a.py": "aaaaaaaaaaaa"})["run"]
    assert keeper.propose(run, "web", {"type": "conclusion", "claim": "a() is slow", "scope_ref": "a.py"}).code == 0
    keeper.ok("commit", "--run", run)
    run = keeper.open_run("web", {"a.py": "aaaaaaaaaaaa"})["run"]
    keeper.ok("disposition", "--run", run, "P-0001", "obsolete-proposed")
    keeper.ok("commit", "--run", run)
    (ask,) = json.loads(keeper.ok("status", "--calls", "--json"))["calls"]
    assert (ask["kind"], ask["verdicts"]) == ("obsolete-proposed", ["keep", "obsolete", "reopen"]), ask
    calls = keeper.ok("status", "--calls")
    assert "keep it settled, retire it, or reopen it for runs to check?" in calls, calls
    (reopen,) = [c for c in _command_lines(calls) if " reopen " in c]
    assert shlex.split(reopen) == ["priors", "decide", "P-0001", "reopen", "--because", "it still applies"]
    keeper.ok(*shlex.split(reopen)[1:])
    assert [v["id"] for v in keeper.open_run("web", {"a.py": "aaaaaaaaaaaa"})["verify"]] == ["P-0001"]  # checked again
