"""A person's settled ground holds in every namespace (door 4): a finding of another namespace beside a
person's decision is refused SETTLED_NEARBY unless it names the decision in `distinct_from`, which puts
it to the person — at the door, at commit (hand-made staging) and in `verify`'s replay; a run sealed by
an older door is held to that door's rules."""

from __future__ import annotations

import json

from priors.core.canonical import dumps
from priors.core.vocabulary import DOOR
from test_settled import NS, TAX, conclusion
from test_settled import _settled as settled_in

OTHER = "security"
WEAK = "the VAT percentage is a literal in the code"  # a rewording too weak for RERAISE


def _settled(k):
    """NS's run-001 finds the hard-coded rate; the person marks it wontfix; OTHER's run-002 is open."""
    return settled_in(k, OTHER)


def test_a_weak_rewording_in_another_namespace_is_the_person_s_call(keeper):
    _settled(keeper)
    body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py")),
                          "--run", "run-002", "--ns", OTHER)
    (settled,) = body["settled"]
    assert (settled["id"], settled["ns"], settled["status"], settled["reason"]) == (
        "P-0001", NS, "wontfix", "the rate is set by law")
    assert body["of"] == "P-0001" and '"distinct_from": ["P-0001"]' in body["hint"]
    # the same words, named in `distinct_from`, are still the person's decision
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "The tax-rate is hardcoded!", scope_ref="src/tax.py", distinct_from=["P-0001"])), "--run", "run-002", "--ns", OTHER)
    assert body["of"] == "P-0001" and body["ns"] == NS
    assert keeper.ok("propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py", distinct_from=["P-0001"])),
                     "--run", "run-002", "--ns", OTHER) == "P-0002 staged (new)\n"
    assert "? 1 need your call" in keeper.ok("commit", "--run", "run-002")
    keeper.ok("verify")
    calls = json.loads(keeper.ok("status", "--calls", "--json"))["calls"]
    (call,) = [c for c in calls if c["kind"] == "differs"]
    assert (call["id"], call["differs_from"], call["ns"]) == ("P-0002", "P-0001", OTHER)
    # `duplicate --of` names a prior of P-0002's own namespace only: "the same" is an obsolete with the reason
    assert call["commands"] == [
        'priors decide P-0002 obsolete --because "the same finding as P-0001 (code-review)"',
        "priors decide P-0002 keep", 'priors decide P-0002 reopen --because "a different finding from P-0001"']
    assert "the agent says P-0002 differs from your wontfix P-0001" in keeper.ok("status", "--calls")
    assert ("your call: whether it is the same finding as your wontfix P-0001 (in code-review) — `priors status"
            " --calls`") in keeper.ok("show", "P-0002")
    assert json.loads(keeper.ok("show", "P-0002", "--json"))["waits_for_call"] == [
        {"id": "P-0001", "status": "wontfix", "ns": NS}]
    # an agent's verdict does not answer the person's call
    keeper.ok("relevant", "--ns", OTHER, "--snapshot")
    keeper.ok("disposition", "P-0002", "fixed", "--run", "run-003")
    keeper.ok("commit", "--run", "run-003")
    assert "differs from your wontfix P-0001" in keeper.ok("status", "--calls")
    keeper.ok("decide", "P-0002", "obsolete", "--because", "the same finding as P-0001 (code-review)")
    assert "differs" not in keeper.ok("status", "--calls")
    assert "your call" not in keeper.ok("show", "P-0002")
    keeper.ok("verify")


def test_settled_here_lists_another_namespace_s_decision_with_its_ns(keeper):
    """Newcomer pass 27i: the refusal named another namespace's decision, but `relevant`'s
    `settled_here` — the first thing an agent reads before proposing — did not list it."""
    rel = _settled(keeper)
    assert rel["settled_here"] == [{"id": "P-0001", "status": "wontfix", "scope_ref": "src/tax.py#rate",
                                    "claim": "the tax rate is hard-coded", "scopeState": "unchanged", "ns": NS}]
    body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py")),
                          "--run", "run-002", "--ns", OTHER)
    assert "as `relevant`'s `settled_here` lists them; one with `ns` is another namespace's decision" in body["hint"]
    keeper.ok("abort", "--run", "run-002")
    own = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert own["settled_here"] == [{"id": "P-0001", "status": "wontfix", "scope_ref": "src/tax.py#rate",
                                    "claim": "the tax rate is hard-coded", "scopeState": "unchanged"}]  # (no `ns`)
    keeper.ok("abort", "--run", own["run"])
    keeper.write("src/tax.py", TAX.replace("return RATE", "return RATE * 1"))  # the person's code changed
    rel = json.loads(keeper.ok("relevant", "--ns", OTHER, "--snapshot"))
    assert [(x["id"], x["scopeState"]) for x in rel["settled_here"]] == [("P-0001", "changed")]


def test_distinct_from_names_another_namespace_s_prior_only_when_a_person_settled_it(keeper):
    _settled(keeper)
    keeper.ok("propose", keeper.candidate(conclusion("total() ignores discounts", scope_ref="src/tax.py#total",
                                                     distinct_from=["P-0001"])), "--run", "run-002", "--ns", OTHER)
    keeper.ok("commit", "--run", "run-002")  # P-0002, open in OTHER
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    body = keeper.refused("DISTINCT_FROM_UNKNOWN", "propose", keeper.candidate(conclusion(
        "total() rounds half-even", scope_ref="src/tax.py#total", distinct_from=["P-0001", "P-0002"])),
        "--run", "run-003", "--ns", NS)
    assert body["other_namespace"] == ["P-0002"] and "a person's decision of another" in body["hint"]


def test_an_open_finding_of_another_namespace_is_not_settled_ground(keeper):
    """Only a person's decision holds across namespaces: another namespace's open finding nearby is not it."""
    keeper.write("src/tax.py", TAX)
    keeper.ok("init")
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("propose", keeper.candidate(conclusion("the tax rate is hard-coded", scope_ref="src/tax.py#rate")),
              "--run", "run-001", "--ns", NS)
    keeper.ok("commit", "--run", "run-001")
    keeper.ok("relevant", "--ns", OTHER, "--snapshot")
    assert keeper.ok("propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py")),
                     "--run", "run-002", "--ns", OTHER) == "P-0002 staged (new)\n"


def test_hand_made_staging_beside_another_namespace_s_decision_is_refused_at_commit(keeper):
    _settled(keeper)
    keeper.ok("propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py", distinct_from=["P-0001"])),
              "--run", "run-002", "--ns", OTHER)
    staged = keeper.root / ".priors/runs/run-002/staged.jsonl"
    rec = json.loads(staged.read_text())
    del rec["distinct_from"]
    staged.write_text(dumps(rec) + "\n")
    before = keeper.ledger_bytes()
    body = keeper.refused("MALFORMED_STAGING", "commit", "--run", "run-002")
    assert body["file"].endswith("staged.jsonl") and body["line"] == 1 and "SETTLED_NEARBY" in json.dumps(body)
    assert keeper.ledger_bytes() == before


def _forged(keeper, door, distinct=None):
    """The ledger with OTHER's finding beside P-0001 typed in, sealed by `door` (None: no door said)."""
    lines = keeper.ledger()
    # (on P-0001's own scope: the replay knows a run's snapshot only as far as its block's lines reveal it)
    prior = dict(lines[0], id="P-0002", ns=OTHER, claim=WEAK, born="run-002")
    if distinct is not None:
        prior["distinct_from"] = distinct
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": OTHER, "summary": ["New this run: 1"]}
    if door is not None:
        seal["door"] = door
    return prior, seal


def _verify_with(keeper, base, prior, seal):
    (keeper.root / ".priors/ledger.jsonl").write_bytes(base + (dumps(prior) + "\n" + dumps(seal) + "\n").encode())
    keeper.ok("render")
    return keeper("verify", "--no-git")


def test_verify_replays_the_rule_by_the_door_that_sealed_the_run(keeper):
    """Door 4 on: the typed-in finding is named SETTLED_NEARBY, and naming the decision clears it; a run
    sealed door 3 (before the rule) was judged without it, and its door refused such a `distinct_from`."""
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    today = keeper.ledger_bytes()
    assert b'"door":%d' % DOOR in today
    door3 = today.replace(b'"door":%d' % DOOR, b'"door":3')
    for base, door, distinct, code in (
            (today, 4, None, "SETTLED_NEARBY"), (today, None, None, "SETTLED_NEARBY"),  # (after a door-4 seal)
            (today, 4, ["P-0001"], None), (door3, 3, None, None),
            (door3, 3, ["P-0001"], "DISTINCT_FROM_UNKNOWN"), (door3, 4, None, "SETTLED_NEARBY")):
        r = _verify_with(keeper, base, *_forged(keeper, door, distinct))
        if code is None:
            assert r.code == 0, (door, distinct, r)
        else:
            assert r.code == 1 and code in r.out and "P-0002" in r.out, (door, distinct, code, r)
            assert code != "SETTLED_NEARBY" or f"(namespace {NS})" in r.out, r


def test_a_run_a_change_adds_is_held_to_today_s_door_whatever_its_seal_says(keeper):
    """Hostile pass 27h: in a ledger no run of which names a door (written before issue 28), a run typed
    into a change without `door` (or with an old one) was judged by the old rules — claims compared byte
    for byte — so a re-raise in other case and punctuation passed `verify --since`. A change's run is
    held to today's door; the base's runs keep their own rules (`--no-git` compares nothing: it believes)."""
    import re

    git = _git_here(keeper)
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    ledger = keeper.root / ".priors/ledger.jsonl"
    old = re.sub(r',"shapes":\{[^}]*\}', "", ledger.read_text().replace(f'"door":{DOOR},', ""))  # as before issue 28
    ledger.write_text(old)
    keeper.ok("render")
    git("add", "-A")
    git("commit", "-qm", "a ledger from before issue 28")
    base = git("rev-parse", "HEAD")
    lines = keeper.ledger()
    prior = dict(lines[0], id="P-0002", ns=OTHER, claim="The tax-rate is hardcoded!", born="run-002")
    for door in (None, 1, 3):
        seal = {"t": "run", "action": "commit", "run": "run-002", "ns": OTHER, "summary": ["New this run: 1"]}
        if door is not None:
            seal["door"] = door
        ledger.write_text(old + dumps(prior) + "\n" + dumps(seal) + "\n")
        keeper.ok("render")
        r = keeper("verify", "--since", base)
        assert r.code == 1 and "RERAISE" in r.out and "P-0002" in r.out, (door, r)
        if door is None:
            assert keeper("verify", "--no-git").code == 0  # (the base's rules: nothing says it was added)


def _asked(tmp_path, name):
    """A target where OTHER's P-0002 says it differs from NS's wontfix P-0001: the person's call."""
    from conftest import Keeper

    keeper = Keeper(tmp_path / name)
    keeper.root.mkdir(parents=True)
    _settled(keeper)
    keeper.ok("propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py", distinct_from=["P-0001"])),
              "--run", "run-002", "--ns", OTHER)
    keeper.ok("commit", "--run", "run-002")
    return keeper


def test_the_walk_answers_another_namespace_s_call_with_the_offered_commands(tmp_path):
    """Newcomer pass 27i: the walk printed `obsolete --because "the same finding as P-0001 (code-review)"` and
    `reopen --because "a different finding from P-0001"`, but `o` + Enter wrote an obsolete with no reason and
    `r` + Enter skipped (reopen "needs one"); its question said "the same (duplicate)" beside an `o` key, and
    nothing said P-0001 was another namespace's. Enter now takes the reason the printed command carries."""
    pytest = __import__("pytest")
    pytest.importorskip("pty")
    from test_desk import PROMPT, Pty

    for key, typed in (("o", ("obsolete", "--because", "the same finding as P-0001 (code-review)")),
                       ("r", ("reopen", "--because", "a different finding from P-0001"))):
        walked, by_hand = _asked(tmp_path, f"walked-{key}"), _asked(tmp_path, f"typed-{key}")
        assert "differs from your wontfix P-0001 (in code-review)" in walked.ok("status", "--calls")
        t = Pty(walked.root, "decide")
        out = t.expect(PROMPT)
        assert "the same (obsolete)" in out and "(duplicate)" not in out, out
        assert "the agent says P-0002 differs from your wontfix P-0001 (in code-review):" in out, out
        t.send(key)
        t.expect(f"Enter for “{typed[-1]}”")
        t.expect("): ")
        t.send("\n")
        code, rest = t.finish()
        assert code == 0 and "1 decided, 0 skipped" in rest, rest
        by_hand.ok("decide", "P-0002", *typed)
        assert walked.ledger_bytes() == by_hand.ledger_bytes()
        walked.ok("verify")


def test_a_call_names_every_decision_the_finding_is_said_to_differ_from(keeper):
    """Newcomer pass 27i: a finding naming two of a person's decisions (its namespace's and another's) was
    set against the first alone; `status --calls`, the walk's text and the report show both."""
    from priors.core.desk import ask_text

    _settled(keeper)
    keeper.ok("propose", keeper.candidate(conclusion("total() ignores discounts", scope_ref="src/tax.py#total")),
              "--run", "run-002", "--ns", OTHER)
    keeper.ok("commit", "--run", "run-002")
    keeper.ok("decide", "P-0002", "accepted", "--because", "known")
    keeper.ok("relevant", "--ns", OTHER, "--snapshot")
    body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py")),
                          "--run", "run-003", "--ns", OTHER)
    assert sorted(s["id"] for s in body["settled"]) == ["P-0001", "P-0002"]
    keeper.ok("propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py", distinct_from=["P-0001", "P-0002"])),
              "--run", "run-003", "--ns", OTHER)
    keeper.ok("commit", "--run", "run-003")
    text = keeper.ok("status", "--calls")
    assert "differs from your wontfix P-0001 (in code-review) and your accepted P-0002" in text, text
    (ask,) = [c for c in json.loads(keeper.ok("status", "--calls", "--json"))["calls"] if c["kind"] == "differs"]
    assert ask["also_differs_from"] == [{"id": "P-0002", "status": "accepted", "claim": "total() ignores discounts"}]
    assert "  also P-0002: total() ignores discounts" in ask_text(ask, 1, 1)
    keeper.ok("report", "-o", "r.html")
    assert "your accepted P-0002" in (keeper.root / "r.html").read_text(encoding="utf-8")


def test_an_analyzer_s_result_beside_another_namespace_s_decision_is_recorded(keeper):
    """Door 4 counts another namespace's decisions as settled ground for a finding an agent writes, not for
    an analyzer's result (`ingest-sarif`, which cannot name `distinct_from`): a linter's unrelated rule hit in
    the function where a person settled a reviewer's finding is new, as it was — the same claim, or one in
    other words, is still refused as the person's decision."""
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")

    def log(message):
        return json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": [
            {"ruleId": "L1", "level": "warning", "message": {"text": message},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/tax.py"},
                                                 "region": {"startLine": 5}}}]}]}]})

    keeper.write("l.sarif", log("RATE is read through a global lookup"))
    got = json.loads(keeper.ok("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json"))
    assert got["counts"]["new"] == 1 and not got["refused"], got
    keeper.write("l2.sarif", log("the tax rate is hard-coded"))
    got = json.loads(keeper.ok("ingest-sarif", "l2.sarif", "--ns", "lint2", "--snapshot", "src", "--json"))
    assert got["counts"]["new"] == 0 and got["refused"][0]["refused"] == "RERAISE", got
    keeper.ok("verify")


def test_verify_since_shows_the_reviewer_the_findings_a_change_adds_that_wait_for_a_person(keeper):
    """Newcomer pass 27i, item 8: `verify --since` listed a change's human lines and parallel-branch
    runs, but not its findings that say they differ from a person's decision — the door let each in
    on its word, so they wait for the person's call. The reviewer of the change sees them now."""
    git = _git_here(keeper)
    _settled(keeper)
    git("add", "-A")
    git("commit", "-qm", "settled")
    base = git("rev-parse", "HEAD")
    assert "your call" not in keeper.ok("verify", "--since", base)
    keeper.ok("propose", keeper.candidate(conclusion(WEAK, scope_ref="src/tax.py", distinct_from=["P-0001"])),
              "--run", "run-002", "--ns", OTHER)
    keeper.ok("commit", "--run", "run-002")
    n = len(keeper.ledger()) - 1  # (the prior's line, before its run's seal)
    text = keeper.ok("verify", "--since", base)
    assert ("1 finding in this change says it differs from a person's decision — your call whether the same"
            " (`priors status --calls`):\n"
            f"  line {n}: P-0002 differs from P-0001 (wontfix, in code-review)\n") in text, text
    body = json.loads(keeper.ok("verify", "--since", base, "--json"))
    assert body["ok"] is True and body["awaiting_call"] == [
        {"line": n, "id": "P-0002", "differs_from": [{"id": "P-0001", "status": "wontfix", "ns": NS}]}]
    keeper.ok("decide", "P-0002", "obsolete", "--because", "the same finding as P-0001 (code-review)")
    body = json.loads(keeper.ok("verify", "--since", base, "--json"))
    assert "awaiting_call" not in body  # the person answered, in the same change


def _git_here(keeper):
    """The keeper's folder made a git work tree with an author; a function running git there."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", *args], cwd=str(keeper.root), check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q")
    for key, v in (("user.name", "A"), ("user.email", "a@example.com"), ("commit.gpgsign", "false")):
        git("config", key, v)
    return git
