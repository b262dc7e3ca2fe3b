"""Issue 28: a reworded re-raise is refused or put before the person, never silent — SETTLED_NEARBY,
`decide X duplicate --of Y` and the keeper learning the person's answer; the tax-rate variants."""

from __future__ import annotations

import json
import re

import pytest

from priors.core.similarity import SIMILAR_AT, similarity
from priors.core.vocabulary import DOOR

NS = "code-review"
TAX = "RATE = 0.2\n\n\ndef rate():\n    return RATE\n\n\ndef total(x):\n    return x * (1 + rate())\n"


def conclusion(claim, **kw):
    return dict({"type": "conclusion", "claim": claim}, **kw)


def _settled(k, then=NS):
    """run-001 finds the hard-coded rate; the person marks it wontfix; run-002 is open (in namespace `then`)."""
    k.write("src/tax.py", TAX)
    k.ok("init")
    k.ok("relevant", "--ns", NS, "--snapshot")
    k.ok("propose", k.candidate(conclusion("the tax rate is hard-coded", scope_ref="src/tax.py#rate")),
         "--run", "run-001", "--ns", NS)
    k.ok("commit", "--run", "run-001")
    k.ok("decide", "P-0001", "wontfix", "--because", "the rate is set by law")
    return json.loads(k.ok("relevant", "--ns", then, "--snapshot"))


def test_an_agent_s_verdict_on_a_finding_that_differs_does_not_answer_the_person_s_call(keeper):
    """The call is the person's: a later run's `fixed` on the finding, the code unchanged, leaves it
    waiting (hostile passes 27d, 27f); the person's own word answers it."""
    _settled(keeper)
    claim = "the VAT percentage is a literal in the code"
    keeper.ok("propose", keeper.candidate(conclusion(claim, scope_ref="src/tax.py", distinct_from=["P-0001"])),
              "--run", "run-002", "--ns", NS)
    keeper.ok("commit", "--run", "run-002")
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("disposition", "P-0002", "fixed", "--run", "run-003")
    keeper.ok("commit", "--run", "run-003")
    assert '"status":"fixed"' in keeper.ok("show", "P-0002", "--json").replace(" ", "")
    assert "the agent says P-0002 differs from your wontfix P-0001" in keeper.ok("status", "--calls")
    keeper.ok("decide", "P-0002", "duplicate", "--of", "P-0001")
    assert "differs" not in keeper.ok("status", "--calls")
    keeper.ok("verify")


def test_the_tax_rate_variants_are_refused(keeper):
    rel = _settled(keeper)
    assert [s["id"] for s in rel["settled_here"]] == ["P-0001"]
    for claim in ("The tax rate is hard-coded", "the tax rate is hard-coded.", "the tax rate is hard coded",
                  "the tax rate is hardcoded"):
        body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(claim, scope_ref="src/tax.py#rate")),
                              "--run", "run-002", "--ns", NS)
        assert body["of"] == "P-0001" and "similarity" not in body, claim  # identical once folded
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "tax rate is a hard-coded constant", scope_ref="src/tax.py#rate")), "--run", "run-002", "--ns", NS)
    assert body["of"] == "P-0001" and body["similarity"] >= SIMILAR_AT
    # naming the person's prior does not let the same words through
    keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "The tax-rate is hardcoded!", scope_ref="src/tax.py", distinct_from=["P-0001"])), "--run", "run-002", "--ns", NS)
    assert not (keeper.root / ".priors/runs/run-002/staged.jsonl").exists() or \
        (keeper.root / ".priors/runs/run-002/staged.jsonl").read_text() == ""


def test_a_decide_line_whose_id_is_no_string_does_not_stop_the_reasons(keeper):
    """A hand-written decide event whose id is a list (no prior's) is passed over when a SETTLED_NEARBY
    refusal lists the person's reasons: it stopped `propose` with an unexpected error."""
    _settled(keeper)
    with open(keeper.root / ".priors" / "ledger.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"action":"decide","by":"human","id":["P-0001"],"t":"event","to":"wontfix"}\n')
    body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(
        "the VAT percentage is a literal in the code", scope_ref="src/tax.py")), "--run", "run-002", "--ns", NS)
    assert body["settled"][0]["reason"] == "the rate is set by law"


def test_scope_words_do_not_sink_a_claim():
    a = "the tax rate is hard-coded"
    for b in ("tax rate is a hard-coded constant", "The tax rate is hard coded"):
        assert similarity(a, b, "src/tax.py#rate") >= SIMILAR_AT
    assert similarity(a, "rate() rounds to two places", "src/tax.py#rate") < SIMILAR_AT


def test_settled_nearby_then_duplicate_then_refused_next_time(keeper):
    _settled(keeper)
    # a rewording the measure misses lands on settled ground: refused, listing what the person settled
    claim = "the VAT percentage is a literal in the code"
    assert similarity("the tax rate is hard-coded", claim, "src/tax.py#rate") < SIMILAR_AT
    body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(claim, scope_ref="src/tax.py")),
                          "--run", "run-002", "--ns", NS)
    assert body["settled"] == [{"id": "P-0001", "status": "wontfix", "scope_ref": "src/tax.py#rate",
                                "claim": "the tax rate is hard-coded", "reason": "the rate is set by law"}]
    assert '"distinct_from": ["P-0001"]' in body["hint"]
    # the agent insists it differs: staged, and put to the person
    assert keeper.ok("propose", keeper.candidate(conclusion(claim, scope_ref="src/tax.py", distinct_from=["P-0001"])),
                     "--run", "run-002", "--ns", NS) == "P-0002 staged (new)\n"
    keeper.ok("commit", "--run", "run-002")
    calls = keeper.ok("status", "--calls")
    assert "the agent says P-0002 differs from your wontfix P-0001" in calls
    assert "the VAT percentage is a literal in the code" in calls and "the tax rate is hard-coded" in calls
    assert "\n      priors decide P-0002 duplicate --of P-0001\n      priors decide P-0002 keep" in calls
    asks = json.loads(keeper.ok("status", "--calls", "--json"))["calls"]
    assert asks[0]["kind"] == "differs" and "priors decide P-0002 duplicate --of P-0001" in asks[0]["commands"]
    keeper.ok("report", "-o", "r.html")
    page = keeper.read("r.html")
    assert "the agent says P-0002 differs from your wontfix P-0001" in page and "the VAT percentage" in page
    assert "priors decide P-0002 duplicate --of P-0001" in re.sub(r"</?span>", "", page)
    # one command settles it; the line is an obsolete decision carrying same_as (the reference reads it)
    out = keeper.ok("decide", "P-0002", "duplicate", "--of", "P-0001")
    assert "P-0002 → obsolete, the same finding as P-0001" in out
    last = keeper.ledger()[-1]
    assert last == {"t": "event", "id": "P-0002", "action": "decide", "to": "obsolete", "by": "human", "same_as": "P-0001"}
    assert "differs" not in keeper.ok("status", "--calls")
    assert "you decided: obsolete (the same finding as P-0001)" in keeper.ok("show", "P-0002")
    # the person's answer taught the keeper: the same rewording is refused next time, as a re-raise of P-0001
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "The VAT percentage is a literal in the code", scope_ref="src/tax.py", distinct_from=["P-0001"])),
        "--run", "run-003", "--ns", NS)
    assert body["of"] == "P-0001" and body["status"] == "wontfix"  # P-0002's words, now P-0001's
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "the VAT percentage is a literal in the code", scope_ref="src/tax.py#rate")), "--run", "run-003", "--ns", NS)
    assert body["of"] == "P-0001" and body["similarity"] == 1  # by meaning, on the definition: the folded wording
    keeper.ok("abort", "--run", "run-003")
    keeper.ok("verify")


def test_duplicate_needs_of_and_a_prior_of_the_namespace(keeper):
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    keeper.usage("decide", "P-0001", "duplicate")
    keeper.usage("decide", "P-0001", "obsolete", "--of", "P-0001")
    keeper.usage("decide", "P-0001", "duplicate", "--of", "P-0001")
    keeper.refused("UNKNOWN_PRIOR", "decide", "P-0001", "duplicate", "--of", "P-0099")


def test_verify_replays_settled_nearby(keeper):
    """A finding typed into the ledger on settled ground, not naming the person's decision, in a run
    sealed by today's door, is one `verify` names; the same line in a ledger all of whose runs were
    sealed before issue 28 is not (judged by the rules then) — but once the ledger holds a run sealed
    by today's door, a later run that does not say so is held to today's rules too."""
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    lines = keeper.ledger()
    prior = dict(lines[0], id="P-0002", claim="the VAT percentage is a literal in the code", born="run-002",
                 scope_ref="src/tax.py#rate")
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": NS, "summary": ["New this run: 1"]}
    from priors.core.canonical import dumps
    base = keeper.ledger_bytes()
    door = b'"door":%d' % DOOR
    assert door in base
    before = base.replace(b"," + door, b"").replace(door + b",", b"")
    ledger = keeper.root / ".priors/ledger.jsonl"
    for head, last, named in ((before, seal, False), (base, seal, True), (base, dict(seal, door=3), True),
                              (before.replace(b'"action":"commit",', b'"action":"commit","door":2,'), seal, True)):
        ledger.write_bytes(head + (dumps(prior) + "\n" + dumps(last) + "\n").encode())
        keeper.ok("render")
        r = keeper("verify", "--no-git")
        assert (r.code != 0 and "SETTLED_NEARBY" in r.out) if named else r.code == 0, (named, r)


def test_a_run_sealed_by_door_2_is_not_judged_by_today_s_measure(keeper):
    """Door 3 (the concept lexicon) finds rewordings door 2 did not: a rewording of the person's wontfix
    naming it in `distinct_from` (the person's call, at door 2) is refused RERAISE today. A ledger the
    door-2 keeper wrote must still replay clean, so a run sealed `door: 2` is held to every rule but
    today's measure — and a run sealed `door: 3`, or any run after one, to all of them."""
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    claim = "the rate is a literal constant in rate()"
    assert similarity("the tax rate is hard-coded", claim, "src/tax.py#rate") >= SIMILAR_AT
    lines = keeper.ledger()
    prior = dict(lines[0], id="P-0002", claim=claim, born="run-002", distinct_from=["P-0001"])
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": NS, "summary": ["New this run: 1"]}
    from priors.core.canonical import dumps
    door2 = keeper.ledger_bytes().replace(b'"door":%d' % DOOR, b'"door":2')
    ledger = keeper.root / ".priors/ledger.jsonl"
    for head, last, named in ((door2, dict(seal, door=2), False), (door2, dict(seal, door=3), True),
                              (keeper.ledger_bytes(), dict(seal, door=2), True)):
        ledger.write_bytes(head + (dumps(prior) + "\n" + dumps(last) + "\n").encode())
        keeper.ok("render")
        r = keeper("verify", "--no-git")
        assert (r.code != 0 and "RERAISE" in r.out and "P-0002" in r.out) if named else r.code == 0, (named, r)


def _git(root, *args):
    import subprocess

    return subprocess.run(["git", *args], cwd=str(root), check=True, capture_output=True, text=True).stdout.strip()


def _settled_in_git(keeper):
    """`_settled` in a git work tree, its run-002 aborted and all committed: the base's revision."""
    _in_git(keeper.root)
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    return _commit(keeper.root, "base")


def _append_block(keeper, *priors):
    """The priors typed into the ledger as a run of their own (born's), sealed as the keeper seals one."""
    from priors.core.canonical import dumps
    run = priors[0]["born"]
    seal = {"t": "run", "action": "commit", "run": run, "ns": NS, "summary": [f"New this run: {len(priors)}"], "door": 3}
    ledger = keeper.root / ".priors/ledger.jsonl"
    ledger.write_bytes(keeper.ledger_bytes() + "".join(dumps(r) + "\n" for r in priors + (seal,)).encode())


def _commit(root, message):
    """Everything committed: the new revision."""
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", message)
    return _git(root, "rev-parse", "HEAD")


def _in_git(root):
    """The keeper's folder made a git work tree with an author (commits unsigned)."""
    _git(root, "init", "-q")
    for k, v in (("user.name", "A"), ("user.email", "a@example.com"), ("commit.gpgsign", "false")):
        _git(root, "config", k, v)


def test_a_made_up_hash_for_a_person_s_scope_is_judged_on_the_code(keeper):
    """A block typed into the ledger that repeats a person's wontfix on their scope under a made-up hash
    (so the scope looks changed) passed verify: the door hashes a person's scope from disk, verify only
    saw the line. A change's lines are now judged on the code in the checkout, as the door judges a
    person's scope — a rewording too; a real change of the code is not; the base's lines are not judged
    again (they were judged on the code of their day)."""
    from priors.core.canonical import dumps
    root = keeper.root
    base = _settled_in_git(keeper)
    lines = keeper.ledger()
    decided = lines[0]
    ledger = root / ".priors/ledger.jsonl"
    clean = keeper.ledger_bytes()
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": NS, "summary": ["New this run: 1"], "door": 3}
    for claim, ref in (("the tax rate is hard-coded", "src/tax.py#rate"),
                       ("tax rate is a hard-coded constant", "src/tax.py#rate")):
        forged = dict(decided, id="P-0002", claim=claim, born="run-002", scope_ref=ref, scope_hash="deadbeef0000")
        ledger.write_bytes(clean + (dumps(forged) + "\n" + dumps(seal) + "\n").encode())
        keeper.ok("render")
        for args in (("verify", "--since", base, "--json"), ("verify", "--json")):
            r = keeper(*args)
            got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
            assert r.code == 1 and got and got[0][0] == len(lines) + 1, (claim, args, r)
            assert got[0][1] in ("RERAISE", "SETTLED_NEARBY"), got
            said = json.loads(r.out)["problems"][0]["message"]
            assert "on the code in this checkout" in said
            assert f"({ref}: the ledger says deadbeef0000, the code is " in said, said  # (which hash is which)
        assert keeper("verify", "--no-git").code == 0  # (no base to compare with: the line is believed)
    # the code really changed: the line's hash is the code's, and a person's decision no longer holds there
    keeper.write("src/tax.py", TAX.replace("RATE = 0.2", "RATE = load_rate()").replace("return RATE", "return RATE or 0.2"))
    now = json.loads(keeper.ok("snapshot"))
    forged = dict(decided, id="P-0002", claim="the tax rate is hard-coded", born="run-002", scope_ref="src/tax.py#rate",
                  scope_hash=now["src/tax.py#rate"])
    ledger.write_bytes(clean + (dumps(forged) + "\n" + dumps(seal) + "\n").encode())
    keeper.ok("render")
    r = keeper("verify", "--since", base, "--json")
    assert r.code == 0, r
    # at the base already: judged when it was added, not again
    keeper.write("src/tax.py", TAX)
    forged = dict(forged, scope_hash="deadbeef0000")
    ledger.write_bytes(clean + (dumps(forged) + "\n" + dumps(seal) + "\n").encode())
    keeper.ok("render")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "forged at the base")
    assert keeper("verify", "--since", "HEAD").code == 0


def test_a_change_s_finding_on_another_spelling_of_a_person_s_scope_is_named(keeper):
    """The door refuses a finding on a ref that spells a path another way (`./src/tax.py#rate`,
    `src/tax.py#`: no snapshot holds it) — a change's line typed into the ledger so passed `verify
    --since`, never related to the person's scope."""
    from priors.core.canonical import dumps
    root = keeper.root
    _in_git(root)
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    keeper.write("src/other.py", "X = 1\n")
    base = _commit(root, "base")
    decided = keeper.ledger()[0]
    ledger = root / ".priors/ledger.jsonl"
    clean = keeper.ledger_bytes()
    now = json.loads(keeper.ok("snapshot"))
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": NS, "summary": ["New this run: 1"], "door": 3}
    for ref, h, code in (("./src/tax.py#rate", "deadbeef0000", "UNKNOWN_SCOPE"),
                         ("src/tax.py#", "deadbeef0000", "UNKNOWN_SCOPE"), ("/src/tax.py", "deadbeef0000", "UNKNOWN_SCOPE")):
        forged = dict(decided, id="P-0002", born="run-002", scope_ref=ref, scope_hash=h)
        ledger.write_bytes(clean + (dumps(forged) + "\n" + dumps(seal) + "\n").encode())
        keeper.ok("render")
        r = keeper("verify", "--since", base, "--json")
        got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
        assert r.code == 1 and (len(clean.splitlines()) + 1, code) in got, (ref, h, r)
    # a real finding elsewhere in the folder still passes (the person's scope is as they decided it)
    forged = dict(decided, id="P-0002", born="run-002", claim="X is never read", scope_ref="src/other.py",
                  scope_hash=now["src/other.py"])
    ledger.write_bytes(clean + (dumps(forged) + "\n" + dumps(seal) + "\n").encode())
    keeper.ok("render")
    assert keeper("verify", "--since", base).code == 0


@pytest.mark.parametrize("claim, shorter", [("total() prints the key sk-0000", False),
                                           ("total() prints the key " + "sk-0000 " * 80 + "again", True)])
def test_a_person_s_redaction_in_the_change_does_not_stop_its_lines_being_judged_on_the_code(keeper, claim, shorter):
    """A person's redaction rewrites a base line in place, so the ledger no longer starts with the
    base's bytes — and, of a long line, can leave it shorter than the base's even with a block added
    after it: the change's added lines were then not judged on the code at all (taken to add
    nothing), and a repeat of a wontfix under a made-up hash, added beside the redaction, passed
    `verify --since`."""
    root = keeper.root
    _in_git(root)
    _settled(keeper)
    keeper.ok("propose", keeper.candidate(conclusion(claim, scope_ref="src/tax.py#total")), "--run", "run-002", "--ns", NS)
    keeper.ok("commit", "--run", "run-002")
    base = _commit(root, "base")
    at_base = len(keeper.ledger_bytes())
    keeper.ok("redact", "P-0002", "--because", "a secret")
    decided = keeper.ledger()[0]
    n = len(keeper.ledger())
    _append_block(keeper, dict(decided, id="P-0003", born="run-003", scope_hash="deadbeef0000"))
    assert (len(keeper.ledger_bytes()) <= at_base) == shorter  # (the case: shorter than the base's, lines added)
    keeper.ok("render")
    for args in (("verify", "--since", base, "--json"), ("verify", "--json")):
        r = keeper(*args)
        got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
        assert r.code == 1 and (n + 1, "RERAISE") in got, (args, r)


def test_a_change_that_moves_a_person_s_decision_off_code_still_there_is_named(keeper):
    """A `moved` event typed into the ledger that carries a person's wontfix from `rate` (still in
    the checkout, as they decided it) to `total`, then the very re-raise on `rate` — verify passed
    both. The keeper moves a finding only when its definition is gone: MOVE_UNFOUNDED at the move,
    and the re-raise is then judged against the decision still standing on `rate`."""
    from priors.core.canonical import dumps
    root = keeper.root
    base = _settled_in_git(keeper)
    now = json.loads(keeper.ok("snapshot"))
    decided = keeper.ledger()[0]
    n = len(keeper.ledger())
    move = {"t": "event", "action": "moved", "id": "P-0001", "run": "run-002", "from": "src/tax.py#rate",
            "to": "src/tax.py#total", "scope_hash": now["src/tax.py#total"]}
    again = dict(decided, id="P-0002", born="run-002", scope_hash=now["src/tax.py#rate"])
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": NS, "summary": ["New this run: 1"], "door": 3}
    ledger = root / ".priors/ledger.jsonl"
    ledger.write_bytes(keeper.ledger_bytes() + "".join(dumps(r) + "\n" for r in (move, again, seal)).encode())
    keeper.ok("render")
    r = keeper("verify", "--since", base, "--json")
    got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
    assert r.code == 1 and (n + 1, "MOVE_UNFOUNDED") in got, r
    assert "still holds src/tax.py#rate in the state they decided on" in r.out
    # the code really moved: `rate` is gone, and the move is the keeper's kind
    keeper.write("src/tax.py", TAX.replace("def rate():\n    return RATE\n\n\n", ""))
    r = keeper("verify", "--since", base, "--json")
    assert "MOVE_UNFOUNDED" not in r.out, r


def test_a_change_that_moves_a_person_s_decision_to_other_code_after_a_rename_is_named(keeper):
    """Hostile pass 27ah: `rate` renamed `tax_rate` (the same body), then a `moved` event typed into the
    ledger that carries the person's wontfix to `total` (code that exists, but other code), and the
    re-raise on `tax_rate` — verify passed, the old ref being gone. The keeper moves a finding to the
    definition most like its recorded shape: MOVE_UNFOUNDED names where its code is. The keeper's own
    move of the same rename passes."""
    from priors.core.canonical import dumps
    root = keeper.root
    base = _settled_in_git(keeper)
    keeper.write("src/tax.py", TAX.replace("def rate():", "def tax_rate():").replace("+ rate()", "+ tax_rate()"))
    now = json.loads(keeper.ok("snapshot"))
    decided = keeper.ledger()[0]
    clean = keeper.ledger_bytes()
    n = len(keeper.ledger())
    move = {"t": "event", "action": "moved", "id": "P-0001", "run": "run-003", "from": "src/tax.py#rate",
            "to": "src/tax.py#total"}
    again = dict(decided, id="P-0002", born="run-003", scope_ref="src/tax.py#tax_rate",
                 claim="tax_rate() hard-codes the tax rate", scope_hash=now["src/tax.py#tax_rate"])
    seal = {"t": "run", "action": "commit", "run": "run-003", "ns": NS, "summary": ["New this run: 1"], "door": 6}
    ledger = root / ".priors/ledger.jsonl"
    ledger.write_bytes(clean + "".join(dumps(r) + "\n" for r in (move, again, seal)).encode())
    keeper.ok("render")
    for args in (("verify", "--since", base, "--json"), ("verify", "--json")):
        r = keeper(*args)
        got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
        assert r.code == 1 and (n + 1, "MOVE_UNFOUNDED") in got, (args, r)
        assert "holds its code — the shape the ledger recorded for it — at src/tax.py#tax_rate" in r.out, r
    # renamed with a line added (nearly the same code, as the keeper follows a move): named too (hostile pass 27aj)
    keeper.write("src/tax.py", TAX.replace("def rate():\n", "def tax_rate():\n    # set by law\n")
                 .replace("+ rate()", "+ tax_rate()"))
    r = keeper("verify", "--since", base, "--json")
    assert r.code == 1 and "code nearly the same as its own at src/tax.py#tax_rate" in r.out, r
    # moved to a third file (neither its own nor the target's): the whole checkout is looked at (hostile pass 27al)
    keeper.write("src/tax.py", TAX.replace("def rate():\n    return RATE\n\n\n", "").replace("+ rate()", "+ 1"))
    keeper.write("src/rates.py", "RATE = 0.2\n\n\ndef rate_of():\n    return RATE\n")
    r = keeper("verify", "--since", base, "--json")
    assert r.code == 1 and "its code — the shape the ledger recorded for it — at src/rates.py#rate_of" in r.out, r
    (root / "src/rates.py").unlink()
    keeper.write("src/tax.py", TAX.replace("def rate():", "def tax_rate():").replace("+ rate()", "+ tax_rate()"))
    # the keeper's own run follows the rename to `tax_rate`, and refuses the re-raise there
    ledger.write_bytes(clean)
    keeper.ok("render")
    got = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    keeper.ok("commit", "--run", got["run"])
    assert keeper.ledger()[-2]["to"] == "src/tax.py#tax_rate", keeper.ledger()[-2:]
    r = keeper("verify", "--since", base)
    assert r.code == 0 and "MOVE_UNFOUNDED" not in r.out, r


def test_a_finding_naming_a_person_s_decided_definition_stands_on_its_ground_wherever_it_is_placed(keeper):
    """Hostile pass 27ah: a rewording of a person's wontfix that the measure misses, placed on the folder,
    on `*` or on a sibling definition, was staged as new — SETTLED_NEARBY holds only on the decided
    definition, its file and what is inside. From door 7 a finding whose words name a definition a
    person decided a finding on (in the file of the definition it stands on, or inside its folder or `*`)
    stands on that ground: it must name the decision in `distinct_from`, which puts it to the person.
    verify names such a line a change adds; a finding that names no decided definition is new."""
    from priors.core.canonical import dumps
    base = _settled_in_git(keeper)
    claim = "rate() returns a constant instead of reading the configuration"
    run = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))["run"]
    for ref, said in (("src/", claim), ("*", claim), ("src/tax.py#total", claim),
                      ("src/", claim.replace("rate", "r\u0430te")), ("src/tax.py#total", claim.replace("rate", "\uff52ate")),
                      ("src/tax.py#total", claim.replace("rate()", "rate ()")), ("src/", claim.replace("rate()", "self->rate"))):
        body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(said, scope_ref=ref)),
                              "--run", run, "--ns", NS)  # (look-alike and full-width letters read as the name: 27aj)
        assert body["of"] == "P-0001" and [s["id"] for s in body["settled"]] == ["P-0001"], (ref, body)
        assert body["named"] == ["P-0001"] and body["hint"].startswith("your claim names code a person settled"), body
    keeper.ok("propose", keeper.candidate(conclusion("total() ignores the exchange rate of foreign currencies",
                                                     scope_ref="src/tax.py#total")), "--run", run, "--ns", NS)
    # (names no decided definition as code — the word "rate" is not `rate()`: hostile pass 27aj's false positive)
    keeper.ok("propose", keeper.candidate(conclusion(claim, scope_ref="src/", distinct_from=["P-0001"])),
              "--run", run, "--ns", NS)  # (the agent's word that it differs: the person's call)
    keeper.ok("commit", "--run", run)
    assert "P-0003" in keeper.ok("status", "--calls")
    assert keeper("verify", "--since", base).code == 0
    # typed into the ledger by a change: named
    now = json.loads(keeper.ok("snapshot"))
    clean = keeper.ledger_bytes()
    decided = keeper.ledger()[0]
    n = len(keeper.ledger())
    for ref in ("src/tax.py#total", "src/"):
        again = dict(decided, id="P-0009", born="run-009", claim=claim, scope_ref=ref, scope_hash=now[ref])
        seal = {"t": "run", "action": "commit", "run": "run-009", "ns": NS, "summary": ["New this run: 1"], "door": 7}
        (root := keeper.root / ".priors/ledger.jsonl").write_bytes(clean + (dumps(again) + "\n" + dumps(seal) + "\n").encode())
        keeper.ok("render")
        r = keeper("verify", "--since", base, "--json")
        got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
        assert r.code == 1 and got == [(n + 1, "SETTLED_NEARBY")], (ref, r)
        assert "names code a person settled P-0001 on" in r.out, r  # (not "stands where": newcomer pass 27ak)
        root.write_bytes(clean)


def test_a_decision_recorded_before_indentation_counted_holds_on_unchanged_code(keeper):
    """A person's wontfix stored with the whitespace-blind hash a Python scope had before indentation
    counted: the door judges it unchanged while the code is unchanged under that scheme (`rehashed`),
    and refuses a re-raise stamped with today's hash — a change typing that re-raise into the ledger
    passed verify, the decision looking out of date. Judged on the code now, it is named."""
    from priors.core.canonical import dumps
    from priors.snapshot.shapes import blind_hashes
    root = keeper.root
    _in_git(root)
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    old = blind_hashes(root, ["src/tax.py#rate"])["src/tax.py#rate"]
    now = json.loads(keeper.ok("snapshot"))["src/tax.py#rate"]
    assert old != now
    ledger = root / ".priors/ledger.jsonl"
    ledger.write_bytes(keeper.ledger_bytes().replace(now.encode(), old.encode()))
    keeper.ok("render")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "a ledger from before indentation counted")
    base = _git(root, "rev-parse", "HEAD")
    decided = keeper.ledger()[0]
    assert decided["scope_hash"] == old
    n = len(keeper.ledger())
    again = dict(decided, id="P-0002", born="run-002", scope_hash=now)
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": NS, "summary": ["New this run: 1"], "door": 3}
    ledger.write_bytes(keeper.ledger_bytes() + (dumps(again) + "\n" + dumps(seal) + "\n").encode())
    keeper.ok("render")
    r = keeper("verify", "--since", base, "--json")
    got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
    assert r.code == 1 and (n + 1, "RERAISE") in got, r


def test_the_loop_through_the_mcp_tools(tmp_path):
    """SETTLED_NEARBY, the staged call and the person's `duplicate --of`, then refused next time — the
    agent's half through the MCP tools, the person's on the command line."""
    from conftest import Keeper
    from test_mcp import _call, _init, serve

    root = tmp_path / "repo"
    root.mkdir()
    k = Keeper(root)
    _settled(k)
    k.ok("abort", "--run", "run-002")
    claim = {"type": "conclusion", "claim": "the VAT percentage is a literal in the code", "scope_ref": "src/tax.py"}
    replies, _, code = serve(root, [
        _init(),
        _call(1, "priors_relevant", {"ns": NS, "snapshot": True}),
        _call(2, "priors_propose", {"run": "run-002", "ns": NS, "candidates": [claim]}),
        _call(3, "priors_propose", {"run": "run-002", "ns": NS, "candidates": [dict(claim, distinct_from=["P-0001"])]}),
        _call(4, "priors_commit", {"run": "run-002"}),
        _call(5, "priors_status", {"calls": True}),
    ])
    assert code == 0
    res = {r["id"]: r["result"] for r in replies[1:]}
    assert res[1]["structuredContent"]["settled_here"][0]["id"] == "P-0001"
    body = res[2]["structuredContent"]
    assert res[2]["isError"] is True and body["refused"] == "SETTLED_NEARBY"
    assert body["settled"][0]["reason"] == "the rate is set by law"
    assert res[3]["isError"] is False and res[4]["isError"] is False
    (call,) = res[5]["structuredContent"]["calls"]
    assert (call["id"], call["kind"], call["differs_from"]) == ("P-0002", "differs", "P-0001")
    assert call["commands"] == ["priors decide P-0002 duplicate --of P-0001", "priors decide P-0002 keep",
                                "priors decide P-0002 reopen --because \"a different finding from P-0001\""]
    k.ok("decide", "P-0002", "duplicate", "--of", "P-0001")
    replies, _, _ = serve(root, [
        _init(),
        _call(1, "priors_relevant", {"ns": NS, "snapshot": True}),
        _call(2, "priors_propose", {"run": "run-003", "ns": NS, "candidates": [
            dict(claim, claim="The VAT percentage is a literal in the code.", distinct_from=["P-0001"])]}),
    ])
    body = replies[2]["result"]["structuredContent"]
    assert body["refused"] == "RERAISE" and body["of"] == "P-0001"
    k.ok("abort", "--run", "run-003")
    k.ok("verify")


def test_a_lessons_only_ledger_is_held_to_today_s_rules(keeper):
    """Every verb that seals a run names today's door (`door: 8`) — `suggest`, a person's `add` and `import`, a scored
    session, not only `commit` — so a ledger that only the lessons loop wrote is not replayed by the
    rules before issue 28 for good: a lesson typed into it that repeats one a person rejected, in
    other case and punctuation (which `suggest` refuses), is named by `verify`."""
    from priors.core.canonical import dumps

    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, "Use tabs for indentation in Python files.")
    keeper.ok("decide", "P-0001", "obsolete", "--because", "we use spaces")
    keeper.refused("DUPLICATE", "suggest", "--ns", NS, "use tabs for indentation in python files")
    keeper.ok("add", "--ns", NS, "Run the whole test suite before a push.")
    lines = keeper.ledger()
    assert all(r.get("door") == DOOR for r in lines if r.get("t") == "run"), lines
    base = keeper.ledger_bytes()
    for claim, code in (("use tabs for indentation in python files", "DUPLICATE"),
                        ("run the whole test suite before a push", "RERAISE")):
        prior = dict(lines[0], id="P-0009", claim=claim, born="run-009")
        forged = [prior, {"t": "injected", "run": "run-009", "ids": []},
                  {"t": "run", "action": "commit", "run": "run-009", "ns": NS, "via": "suggest",
                   "summary": ["Suggested by an agent: P-0009 (a new lesson) — open, awaiting your review"]}]
        (keeper.root / ".priors/ledger.jsonl").write_bytes(base + "".join(dumps(r) + "\n" for r in forged).encode())
        keeper.ok("render")
        r = keeper("verify", "--no-git")
        assert r.code == 1 and f"({code})" in r.out and "P-0009" in r.out, r


def test_a_claims_key_is_its_letters_and_digits_however_it_is_computed():
    """`claim_key` deletes the usual punctuation with `str.translate` and leaves the rest to a regex
    (verify keys every claim of the ledger): the same key as the regex alone, for any text."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from priors.core.similarity import claim_key

    not_word = re.compile(r"[\W_]+")

    @settings(max_examples=400, deadline=None)
    @given(st.text(alphabet=st.one_of(st.characters(), st.sampled_from(list("aZ9_ -—–'’\"“”.,…•\u00a0\u2009ßİﬁ١Ω")))))
    def same(text):
        assert claim_key(text) == not_word.sub("", text.casefold())

    same()


def test_a_person_s_scope_stated_with_two_hashes_in_a_change_s_block_is_judged_on_the_code(keeper):
    """A block that states a person's scope twice, under two made-up hashes (the re-raise, and a
    second finding on the same definition), left that scope out of what it states — no snapshot holds
    two hashes for one scope — so it was not judged on the code, and the re-raise passed `verify`."""
    base = _settled_in_git(keeper)
    decided = keeper.ledger()[0]
    n = len(keeper.ledger())
    again = dict(decided, id="P-0002", born="run-002", scope_hash="deadbeef0000")
    other = dict(decided, id="P-0003", born="run-002", claim="rate() has no docstring", scope_hash="deadbeef1111")
    _append_block(keeper, again, other)
    keeper.ok("render")
    for args in (("verify", "--since", base, "--json"), ("verify", "--json")):
        r = keeper(*args)
        got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
        assert r.code == 1 and (n + 1, "RERAISE") in got, (args, r)




@pytest.mark.parametrize("ref", ["src/tax.py", "src/", "*"])
def test_a_change_s_repeat_around_a_person_s_scope_is_judged_on_the_code(keeper, ref):
    """A repeat of a person's wontfix on the file around their definition, the folder holding it or `*`
    — a block stating nothing of their scope — is judged on the code as the door judges it (it hashes
    a person's scope from disk): named. A parallel branch's run, which never saw the decision, says so
    on its seal (tests/test_unseen.py), so nothing honest is held to a decision it could not see."""
    from priors.core.canonical import dumps
    root = keeper.root
    _in_git(root)
    _settled(keeper)
    keeper.ok("abort", "--run", "run-002")
    base = _commit(root, "base")
    decided = keeper.ledger()[0]
    now = json.loads(keeper.ok("snapshot"))
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": NS, "summary": ["New this run: 1"], "door": 3}
    forged = dict(decided, id="P-0002", born="run-002", scope_ref=ref, scope_hash=now.get(ref, "deadbeef0000"))
    ledger = root / ".priors/ledger.jsonl"
    n = len(keeper.ledger())
    ledger.write_bytes(keeper.ledger_bytes() + (dumps(forged) + "\n" + dumps(seal) + "\n").encode())
    keeper.ok("render")
    r = keeper("verify", "--since", base, "--json")
    got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
    assert r.code == 1 and got in ([(n + 1, "SETTLED_NEARBY")], [(n + 1, "RERAISE")]), r
    assert "the run's lines state nothing of it" in r.out
    assert keeper("verify", "--no-git").code == 0  # (without the code, the hashes a line states are believed)


@pytest.mark.parametrize("shape", ["", "0123456789ab:00000000"])
def test_a_change_s_seal_that_forgets_or_misstates_a_person_s_shape_is_named(keeper, shape):
    """Hostile pass 27e: a seal typed into the ledger with `"shapes": {"P-0001": ""}` (the keeper's
    "looked for it in vain, forget it") — or a made-up shape — for a person's wontfix whose definition
    the checkout still holds as they decided it. verify passed it; the door then no longer followed
    the decision when its function was renamed and moved, and took the verbatim re-raise on the new
    name. The keeper writes a shape only from the code (the definition's own, or "" when it is gone):
    SHAPE_UNFOUNDED."""
    from priors.core.canonical import dumps
    root = keeper.root
    base = _settled_in_git(keeper)
    n = len(keeper.ledger())
    seal = {"t": "run", "action": "commit", "run": "run-002", "ns": NS, "summary": ["New this run: 0"], "door": 3,
            "shapes": {"P-0001": shape}}
    ledger = root / ".priors/ledger.jsonl"
    clean = keeper.ledger_bytes()
    ledger.write_bytes(clean + (dumps(seal) + "\n").encode())
    keeper.ok("render")
    for args in (("verify", "--since", base, "--json"), ("verify", "--json")):
        r = keeper(*args)
        got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
        assert r.code == 1 and (n + 1, "SHAPE_UNFOUNDED") in got, (args, r)
    # the keeper's own shape of it passes, and so does "" once the definition is gone from the checkout
    kept = keeper.ledger()[1]["shapes"]["P-0001"]
    ledger.write_bytes(clean + (dumps(dict(seal, shapes={"P-0001": kept})) + "\n").encode())
    keeper.ok("render")
    r = keeper("verify", "--since", base)
    assert r.code == 0, r
    ledger.write_bytes(clean + (dumps(dict(seal, shapes={"P-0001": ""})) + "\n").encode())
    keeper.ok("render")
    keeper.write("src/tax.py", TAX.replace("def rate():\n    return RATE\n\n\n", ""))
    r = keeper("verify", "--since", base)
    assert "SHAPE_UNFOUNDED" not in r.out, r
