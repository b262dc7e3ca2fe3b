"""End-to-end tests of the keeper contract through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import Keeper


def finding(claim="cart total ignores discounts", ref="a.py", **extra):
    cand = {"type": "conclusion", "claim": claim, "scope_ref": ref, "severity": "major"}
    cand.update(extra)
    return cand


def seed(k: Keeper, ns="review"):
    """run-001: one finding on a.py committed. Returns the scopes used."""
    k.write("a.py", "def total(cart):\n    return sum(cart)\n")
    k.write("b.py", "def tax():\n    return 0.2\n")
    scopes = {"a.py": k.hash("a.py"), "b.py": k.hash("b.py")}
    k.open_run(ns, scopes)
    assert k.propose("run-001", ns, finding()).out == "P-0001 staged (new)\n"
    k.ok("commit", "--run", "run-001")
    return scopes


# ---------------------------------------------------------------- init, hash, help


def test_init_is_idempotent_and_keeps_staging_out_of_git(bare):
    assert bare.ok("init") == f"priors: set up {bare.root / '.priors'} — commit it with your repo\n"
    assert bare.ok("init") == f"priors: already set up at {bare.root / '.priors'} — nothing to do\n"
    gi = (bare.root / ".priors" / ".gitignore").read_text()
    for entry in ("runs/", "keeper.lock", "*.tmp"):
        assert entry in gi.splitlines()
    assert (bare.root / ".priors" / "ledger.jsonl").read_bytes() == b""
    assert (bare.root / ".priors" / "PRIORS.md").exists()


def test_hash_normalized_vs_raw(keeper):
    keeper.write("crlf.txt", "a  b\r\n\tc\r\n")
    keeper.write("lf.txt", "a b\nc")
    assert keeper.hash("crlf.txt") == keeper.hash("lf.txt")
    assert keeper.ok("hash", "--text", " a b c ").strip() == keeper.hash("lf.txt")
    raw1 = keeper.ok("hash", "--raw", "crlf.txt").strip()
    raw2 = keeper.ok("hash", "--raw", "lf.txt").strip()
    assert raw1 != raw2
    import hashlib

    assert raw2 == hashlib.sha256(b"a b\nc").hexdigest()[:12]
    assert keeper.ok("hash", "--stdin-raw", stdin="a b\nc").strip() == raw2
    # ECMAScript whitespace: U+FEFF and U+00A0 collapse, U+0085 does not
    assert keeper.ok("hash", "--text", "\ufeffx\u00a0y").strip() == keeper.ok("hash", "--text", "x y").strip()
    assert keeper.ok("hash", "--text", "x\u0085y").strip() != keeper.ok("hash", "--text", "x y").strip()
    keeper.usage("hash", "nope.txt")
    keeper.usage("hash")


def test_help_and_version(bare):
    assert "relevant" in bare.ok("--help")
    for verb in ("init", "hash", "relevant", "disposition", "propose", "commit", "abort", "decide", "redact",
                 "status", "render"):
        assert "usage: priors " + verb in bare.ok(verb, "--help")
    assert bare.ok("--version").startswith("priors ")
    bare.usage("frobnicate")


# ---------------------------------------------------------------- replay


def test_replay_fixed_carried_new(keeper):
    scopes = seed(keeper)
    keeper.open_run("review", scopes)
    keeper.candidate(finding("tax rate is hard-coded", "b.py"))
    # run-002 must disposition P-0001 first
    body = keeper.refused("PRIOR_OBLIGATIONS_OPEN", "propose", "cand.json", "--run", "run-002", "--ns", "review")
    assert body["missing"] == ["P-0001"]
    assert keeper.ok("disposition", "P-0001", "still-open", "--run", "run-002") == "P-0001 → still-open\n"
    assert keeper.propose("run-002", "review", finding("tax rate is hard-coded", "b.py")).out == "P-0002 staged (new)\n"
    out = keeper.ok("commit", "--run", "run-002")
    assert out == ("Checked against 1 priors:\n  → 1 carried (same identities, current scope state)\n"
                   "New this run: 1\n")
    # run-003: a.py fixed, b.py carried
    keeper.write("a.py", "def total(cart):\n    return sum(cart) - discount(cart)\n")
    scopes = {"a.py": keeper.hash("a.py"), "b.py": keeper.hash("b.py")}
    rel = keeper.open_run("review", scopes)
    states = {v["id"]: v["scopeState"] for v in rel["verify"]}
    assert states == {"P-0001": "changed", "P-0002": "unchanged"}
    keeper.refused("CHANGED_SCOPE_REQUIRES_REJUDGMENT", "disposition", "P-0001", "still-open", "--run", "run-003")
    keeper.ok("disposition", "P-0001", "fixed", "--run", "run-003")
    keeper.ok("disposition", "P-0002", "still-open", "--run", "run-003")
    out = keeper.ok("commit", "--run", "run-003")
    assert out == ("Checked against 2 priors:\n  ✓ 1 fixed — nice work\n"
                   "  → 1 carried (same identities, current scope state)\nNew this run: 0\n")
    # run-004: nothing changed: quiescence
    rel = keeper.open_run("review", scopes)
    assert [v["id"] for v in rel["verify"]] == ["P-0002"]
    keeper.ok("disposition", "P-0002", "still-open", "--run", "run-004")
    out = keeper.ok("commit", "--run", "run-004")
    assert out.endswith("New this run: 0\nEverything settled still holds. Nothing new.\n")
    assert keeper.ok("status") == "review: 1 open · 1 fixed · 0 decided by you · 0 lessons locked\n"


def test_carried_means_carried_across_runs(keeper):
    scopes = seed(keeper)
    for n in range(2, 5):
        run = f"run-{n:03d}"
        keeper.open_run("review", scopes)
        keeper.ok("disposition", "P-0001", "still-open", "--run", run)
        keeper.refused("DUPLICATE", "propose", keeper.candidate(finding("Cart  total ignores\ndiscounts".lower())),
                       "--run", run, "--ns", "review")
        keeper.ok("commit", "--run", run)
    ids = {r["id"] for r in keeper.ledger() if r["t"] == "prior"}
    assert ids == {"P-0001"}


def test_idempotent_commit_prints_same_summary_and_writes_nothing(keeper):
    seed(keeper)
    before = keeper.ledger_bytes()
    first = [r for r in keeper.ledger() if r["t"] == "run"][0]["summary"]
    again = keeper.ok("commit", "--run", "run-001")
    assert again == "\n".join(first) + "\n"
    assert keeper.ledger_bytes() == before
    # leftover staging is removed
    (keeper.root / ".priors" / "runs" / "run-001").mkdir()
    (keeper.root / ".priors" / "runs" / "run-001" / "staged.jsonl").write_text("junk\n")
    assert keeper.ok("commit", "--run", "run-001") == again
    assert not (keeper.root / ".priors" / "runs" / "run-001").exists()


def test_run_ids_are_path_safe(keeper):
    for bad in ("../x", "run-1", "run-01a", "run-001/../../x", "RUN-001"):
        err = keeper.usage("relevant", "--ns", "review", "--run", bad)
        assert "run ids must match `run-` and three to nine ASCII digits" in err
        keeper.usage("commit", "--run", bad)
        keeper.usage("disposition", "P-0001", "fixed", "--run", bad)
    keeper.open_run("review", {}, run="run-1234")
    keeper.ok("commit", "--run", "run-1234")
    assert json.loads(keeper.ok("relevant", "--ns", "review"))["run"] == "run-1235"


# ---------------------------------------------------------------- decisions


def test_wontfix_blocks_reraise_but_not_unrelated(keeper):
    scopes = seed(keeper)
    assert keeper.ok("decide", "P-0001", "wontfix", "--because", "legacy carts") == \
        "P-0001 → wontfix (your call — this sticks)\n"
    rel = keeper.open_run("review", scopes)
    assert rel["verify"] == [] and rel["settled"] == 1
    body = keeper.refused("RERAISE", "propose", keeper.candidate(finding("cart total ignores  discounts")),
                          "--run", "run-002", "--ns", "review")
    assert body["of"] == "P-0001" and body["status"] == "wontfix"
    # another finding on ground a person settled names what it differs from (SETTLED_NEARBY, issue 28)
    body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(finding("totals overflow on huge carts")),
                          "--run", "run-002", "--ns", "review")
    assert [s["id"] for s in body["settled"]] == ["P-0001"] and body["settled"][0]["reason"] == "legacy carts"
    assert keeper.propose("run-002", "review", dict(finding("totals overflow on huge carts"), distinct_from=["P-0001"])).code == 0
    keeper.refused("BINDING_IMMUTABLE", "disposition", "P-0001", "fixed", "--run", "run-002")
    keeper.ok("commit", "--run", "run-002")
    # once the code changes, the issue may be raised again (different state)
    keeper.write("a.py", "def total(cart):\n    return sum(cart) * 1\n")
    keeper.open_run("review", {"a.py": keeper.hash("a.py")})
    keeper.ok("disposition", "P-0002", "reaffirmed", "--run", "run-003")
    assert keeper.propose("run-003", "review", finding()).code == 0


def test_reversal_becomes_a_call(keeper):
    keeper.write("page.html", "<h1>Buy</h1>")
    scopes = {"page.html": keeper.hash("page.html")}
    keeper.open_run("site", scopes)
    keeper.ok("propose", keeper.candidate(finding("headline too long", "page.html", direction="terser")),
              "--run", "run-001", "--ns", "site")
    keeper.ok("commit", "--run", "run-001")
    keeper.ok("decide", "P-0001", "accepted")
    keeper.open_run("site", scopes)
    cand = keeper.candidate(finding("headline should explain more", "page.html", direction="expand"))
    body = keeper.refused("REVERSAL", "propose", cand, "--run", "run-002", "--ns", "site")
    assert body["of"] == "P-0001"
    keeper.refused("REVERSAL", "propose", cand, "--run", "run-002", "--ns", "site")  # escalated once only
    out = keeper.ok("commit", "--run", "run-002")
    assert "  ? 1 need your call — `priors status --calls` to review" in out
    calls = [r for r in keeper.ledger() if r["t"] == "call"]
    assert calls == [{"t": "call", "call_id": "run-002-C-01", "kind": "reversal", "run": "run-002", "ns": "site",
                      "conflicts_with": "P-0001", "claim": "headline should explain more", "direction": "expand"}]
    status = keeper.ok("status", "--calls")
    assert ('  ? run-002-C-01 — headline should explain more reverses P-0001\n'
            '      priors decide P-0001 reopen --because "accept run-002-C-01"\n'
            '      priors decide P-0001 keep\n') in status
    keeper.ok("decide", "P-0001", "keep")
    assert "run-002-C-01" not in keeper.ok("status", "--calls")


def test_opposes_list_and_repo_wide_scope_share_one_scope(keeper):
    pref = {"type": "calibration", "claim": "keep headlines terse", "direction": "terser"}
    keeper.open_run("copy", {})
    keeper.ok("propose", keeper.candidate(pref), "--run", "run-001", "--ns", "copy")
    body = keeper.refused("DUPLICATE", "propose", keeper.candidate({**pref, "claim": "Keep   headlines terse"}),
                          "--run", "run-001", "--ns", "copy")
    assert body["of"] == "P-0001"
    keeper.ok("commit", "--run", "run-001")
    keeper.ok("decide", "P-0001", "accepted")
    keeper.open_run("copy", {})
    keeper.refused("RERAISE", "propose", keeper.candidate({**pref, "claim": "be terse"}), "--run", "run-002",
                   "--ns", "copy")
    body = keeper.refused("REVERSAL", "propose",
                          keeper.candidate({"type": "calibration", "claim": "write long headlines",
                                            "opposes": ["terser"]}), "--run", "run-002", "--ns", "copy")
    assert body["of"] == "P-0001"


def test_review_nudges(keeper):
    lesson = {"type": "calibration", "claim": "run tests in memory", "review_every": 2}
    keeper.open_run("ops", {})
    keeper.ok("propose", keeper.candidate(lesson), "--run", "run-001", "--ns", "ops")
    keeper.ok("commit", "--run", "run-001")
    rel = keeper.open_run("ops", {})
    assert rel["inject"] == [{"id": "P-0001", "claim": "run tests in memory", "status": "open"}]
    assert rel["nudges"] == []
    keeper.ok("commit", "--run", "run-002")
    assert keeper.open_run("ops", {})["nudges"] == []  # one run since birth
    keeper.ok("commit", "--run", "run-003")
    rel = keeper.open_run("ops", {})  # two runs since birth
    assert rel["nudges"] == [{"id": "P-0001", "claim": "run tests in memory",
                              "ask": "still true? reply: decide P-0001 keep — or retire it"}]
    assert "? 1 need your call" in keeper.ok("commit", "--run", "run-004")
    assert ("  ? P-0001 — run tests in memory — due for review — still true?\n      priors decide P-0001 keep\n"
            "      priors decide P-0001 obsolete\n") in keeper.ok("status", "--calls")
    keeper.ok("decide", "P-0001", "keep")
    assert keeper.open_run("ops", {})["nudges"] == []


def test_challenge_an_injected_lesson(keeper):
    keeper.open_run("ops", {"ruff": "aaaaaaaaaaaa"})
    lesson = {"type": "behavioral", "claim": "use --json with ruff", "scope_ref": "ruff"}
    keeper.ok("propose", keeper.candidate(lesson), "--run", "run-001", "--ns", "ops")
    keeper.ok("commit", "--run", "run-001")
    rel = keeper.open_run("ops", {"ruff": "aaaaaaaaaaaa"})
    assert [i["id"] for i in rel["inject"]] == ["P-0001"]
    keeper.refused("PRIOR_OUTSIDE_RUN", "disposition", "P-0001", "fixed", "--run", "run-002")
    keeper.ok("disposition", "P-0001", "challenged", "--run", "run-002")
    out = keeper.ok("commit", "--run", "run-002")
    assert "? 1 need your call" in out
    assert ("  ? P-0001 — use --json with ruff — a run challenged this lesson — keep it or retire it?\n"
            "      priors decide P-0001 keep\n      priors decide P-0001 obsolete\n") in keeper.ok("status", "--calls")
    keeper.ok("decide", "P-0001", "obsolete")
    assert keeper.ok("status") == "ops: 0 open · 0 fixed · 0 decided by you · 0 lessons locked · 1 retired\n"


# ---------------------------------------------------------------- coverage floors


def test_coverage_floor_follows_the_parent_scope(keeper):
    keeper.write("src/a.py", "x = 1\n")
    scopes = {"src/": "111111111111", "src/a.py": keeper.hash("src/a.py")}
    keeper.open_run("review", scopes)
    keeper.ok("propose", keeper.candidate({"type": "coverage", "claim": "src reviewed at major depth",
                                           "scope_ref": "src/", "depth": "major"}),
              "--run", "run-001", "--ns", "review")
    keeper.ok("commit", "--run", "run-001")
    rel = keeper.open_run("review", scopes)
    assert rel["floors"] == [{"id": "P-0001", "scope_ref": "src/", "depth": "major", "scopeState": "unchanged"}]
    body = keeper.refused("BELOW_FLOOR", "propose",
                          keeper.candidate(finding("nit: rename x", "src/a.py", severity="minor")),
                          "--run", "run-002", "--ns", "review")
    assert body["of"] == "P-0001" and body["depth"] == "major"
    assert keeper.propose("run-002", "review", finding("x is wrong", "src/a.py", severity="gate")).code == 0
    keeper.ok("commit", "--run", "run-002")
    # parent changed: the floor no longer holds
    scopes["src/"] = "222222222222"
    keeper.open_run("review", scopes)
    keeper.ok("disposition", "P-0002", "still-open", "--run", "run-003")
    assert keeper.propose("run-003", "review", finding("nit: rename x", "src/a.py", severity="minor")).code == 0


# ---------------------------------------------------------------- forgetting


def test_resting_and_resurrection(keeper):
    scopes = seed(keeper)
    gone = {"b.py": scopes["b.py"]}
    for n in range(2, 7):
        rel = keeper.open_run("review", gone)
        assert rel["verify"][0]["scopeState"] == "missing"
        keeper.refused("MISSING_SCOPE", "disposition", "P-0001", "fixed", "--run", f"run-{n:03d}")
        out = keeper.ok("commit", "--run", f"run-{n:03d}")
        keeper.assert_rendered()  # its row turns to `resting` on the fifth miss, patched in place
    assert "| resting |" in keeper.read(".priors/PRIORS.md")
    assert "  … 1 resting — the code they point at is gone; they wake if it returns" in out
    assert keeper.ok("status") == "review: 0 open · 0 fixed · 0 decided by you · 0 lessons locked · 1 resting\n"
    rel = keeper.open_run("review", gone)
    assert rel["verify"] == [] and rel["archived"] == 1
    keeper.ok("abort", "--run", "run-007")
    rel = keeper.open_run("review", scopes)
    assert rel["verify"][0]["resurrected"] is True and rel["verify"][0]["scopeState"] == "unchanged"
    keeper.ok("disposition", "P-0001", "still-open", "--run", "run-007")
    keeper.ok("commit", "--run", "run-007")
    keeper.assert_rendered()
    assert "resting" not in keeper.ok("status")


def test_redaction_leaves_no_trace(keeper):
    secret = "cart total leaks customer-4417 card"
    keeper.write("a.py", "x\n")
    scopes = {"a.py": keeper.hash("a.py")}
    keeper.open_run("review", scopes)
    keeper.ok("propose", keeper.candidate(finding(secret, direction="terser")), "--run", "run-001", "--ns", "review")
    keeper.ok("commit", "--run", "run-001")
    keeper.ok("decide", "P-0001", "wontfix", "--because", "customer-4417 asked")
    keeper.open_run("review", scopes)
    keeper.refused("REVERSAL", "propose", keeper.candidate(finding("expand it", direction="expand")),
                   "--run", "run-002", "--ns", "review")
    keeper.ok("commit", "--run", "run-002")
    keeper.open_run("review", scopes)  # open run holding the prior in its snapshot
    out = keeper.ok("redact", "P-0001", "--because", "contains a customer id")
    assert "git history" in out
    for path in (keeper.root / ".priors").rglob("*"):
        if path.is_file():
            assert b"customer-4417" not in path.read_bytes(), path
    recs = keeper.ledger()
    tomb = recs[0]
    assert tomb["redacted"] is True and set(tomb) == {"t", "id", "ns", "redacted", "content_hash", "born"}
    decide = [r for r in recs if r.get("action") == "decide"][0]
    assert decide["reason_redacted"] is True and "reason" not in decide and len(decide["reason_hash"]) == 12
    call = [r for r in recs if r["t"] == "call"][0]
    assert call["redacted"] is True and "claim" not in call
    assert recs[-1] == {"t": "event", "id": "P-0001", "action": "redact", "by": "human",
                        "reason": "contains a customer id"}
    keeper.refused("ALREADY_REDACTED", "redact", "P-0001", "--because", "again")
    keeper.refused("REDACTED", "disposition", "P-0001", "fixed", "--run", "run-003")
    keeper.ok("abort", "--run", "run-003")
    keeper.refused("REDACTED", "decide", "P-0001", "keep")
    assert "*(redacted)*" in (keeper.root / ".priors" / "PRIORS.md").read_text()


# ---------------------------------------------------------------- every refusal code


def test_run_refusals(keeper):
    scopes = seed(keeper)
    keeper.open_run("review", scopes)
    keeper.refused("ACTIVE_RUN_EXISTS", "relevant", "--ns", "review")
    keeper.refused("ACTIVE_RUN_EXISTS", "decide", "P-0001", "wontfix")
    keeper.ok("abort", "--run", "run-002")
    keeper.refused("RUN_EXISTS", "relevant", "--ns", "review", "--run", "run-001")
    (keeper.root / ".priors" / "runs" / "run-009").mkdir()
    (keeper.root / ".priors" / "runs" / "run-009" / "staged.jsonl").write_text("")
    keeper.refused("RUN_EXISTS", "relevant", "--ns", "review", "--run", "run-009")
    keeper.refused("RUN_COMMITTED", "disposition", "P-0001", "fixed", "--run", "run-001")
    keeper.refused("RUN_COMMITTED", "propose", keeper.candidate(finding()), "--run", "run-001", "--ns", "review")
    keeper.refused("RUN_COMMITTED", "abort", "--run", "run-001")
    for verb in (("disposition", "P-0001", "fixed"), ("propose", keeper.candidate(finding()), "--ns", "review"),
                 ("commit",), ("abort",)):  # each says where the open run is named (newcomer pass 27av)
        body = keeper.refused("UNKNOWN_RUN", *verb, "--run", "run-050")
        assert "`priors status` names the open run" in body["hint"], (verb, body)
    assert keeper.ok("abort", "--run", "run-009") == \
        "run-009 aborted — uncommitted staging removed; the ledger was untouched\n"


def test_disposition_refusals(keeper):
    scopes = seed(keeper)
    keeper.open_run("other", {})
    body = keeper.refused("PRIOR_OUTSIDE_RUN", "disposition", "P-0001", "fixed", "--run", "run-002")
    assert body == {"refused": "PRIOR_OUTSIDE_RUN", "id": "P-0001", "run": "run-002", "ns": "other"}
    keeper.refused("UNKNOWN_PRIOR", "disposition", "P-0099", "fixed", "--run", "run-002")
    keeper.ok("abort", "--run", "run-002")
    keeper.open_run("review", scopes)
    body = keeper.refused("REAFFIRM_REQUIRES_CHANGE", "disposition", "P-0001", "reaffirmed", "--run", "run-002")
    assert body["hint"].startswith("its code is unchanged: say still-open (it is carried) or fixed"), body  # (newcomer 27av)
    body = keeper.refused("STALE_REQUIRES_CHANGE", "disposition", "P-0001", "stale", "--run", "run-002")
    assert "stale is for code that changed" in body["hint"], body
    keeper.refused("CHALLENGE_REQUIRES_INJECTED_PRIOR", "disposition", "P-0001", "challenged", "--run", "run-002")
    keeper.ok("disposition", "P-0001", "still-open", "--run", "run-002")
    body = keeper.refused("ALREADY_DISPOSITIONED", "disposition", "P-0001", "fixed", "--run", "run-002")
    assert "`priors abort --run run-002` drops all of the run's staging" in body["hint"], body
    keeper.refused("RUN_NAMESPACE_MISMATCH", "propose", keeper.candidate(finding("x")), "--run", "run-002",
                   "--ns", "other")
    body = keeper.refused("UNKNOWN_SCOPE", "propose", keeper.candidate(finding("x", "zzz.py")), "--run", "run-002",
                          "--ns", "review")
    assert body["scope_ref"] == "zzz.py"
    body = keeper.refused("SCOPE_MISMATCH", "propose",
                          keeper.candidate(finding("x", scope_hash="000000000000")), "--run", "run-002",
                          "--ns", "review")
    assert body["expected"] == scopes["a.py"] and body["received"] == "000000000000"
    err = keeper.usage("disposition", "P-0001", "wontfix", "--run", "run-002")
    assert "decide" in err
    keeper.usage("disposition", "P-0001", "bogus", "--run", "run-002")


def test_changed_scope_stale(keeper):
    seed(keeper)
    keeper.write("a.py", "def total(cart):\n    return 0\n")
    keeper.open_run("review", {"a.py": keeper.hash("a.py")})
    keeper.ok("disposition", "P-0001", "stale", "--run", "run-002")
    out = keeper.ok("commit", "--run", "run-002")
    assert "  ~ 1 touched by changes — queued for re-judgment" in out
    rel = keeper.open_run("review", {"a.py": keeper.hash("a.py")})
    assert rel["verify"][0]["scopeState"] == "unchanged"  # the stale disposition took the current hash


def test_commit_refusals_on_hand_edited_staging(keeper):
    scopes = seed(keeper)
    rdir = keeper.root / ".priors" / "runs" / "run-002"

    def reopen():
        keeper.ok("abort", "--run", "run-002")
        keeper.open_run("review", scopes)

    keeper.open_run("review", scopes)
    keeper.refused("INCOMPLETE_DISPOSITIONS", "commit", "--run", "run-002")
    ev = {"t": "event", "id": "P-0001", "action": "disposition", "to": "still-open", "run": "run-002", "by": "agent"}
    (rdir / "dispositions.jsonl").write_text(json.dumps(ev) + "\n" + json.dumps(ev) + "\n")
    assert keeper.refused("DUPLICATE_DISPOSITIONS", "commit", "--run", "run-002")["ids"] == ["P-0001"]
    (rdir / "dispositions.jsonl").write_text(json.dumps({**ev, "by": "human"}) + "\n")
    assert keeper.refused("MALFORMED_DISPOSITIONS", "commit", "--run", "run-002")["ids"] == ["P-0001"]
    (rdir / "dispositions.jsonl").write_text(json.dumps({**ev, "id": "P-0042"}) + "\n")
    body = keeper.refused("PRIOR_OUTSIDE_RUN", "commit", "--run", "run-002")
    assert body["ids"] == ["P-0042"] and body["run"] == "run-002"
    reopen()
    keeper.ok("disposition", "P-0001", "still-open", "--run", "run-002")
    keeper.ok("propose", keeper.candidate(finding("b is odd", "b.py")), "--run", "run-002", "--ns", "review")
    staged = (rdir / "staged.jsonl").read_text()
    (rdir / "staged.jsonl").write_text(staged.replace("P-0002", "P-0001"))
    assert keeper.refused("STAGED_ID_COLLISION", "commit", "--run", "run-002")["ids"] == ["P-0001"]
    (rdir / "staged.jsonl").write_text(staged.replace('"advisory"', '"binding"'))
    assert keeper.refused("MALFORMED_STAGING", "commit", "--run", "run-002")["ids"] == ["P-0002"]
    (rdir / "staged.jsonl").write_text(staged)
    keeper.ok("commit", "--run", "run-002")


def test_grammar_usage_errors(keeper):
    keeper.write("a.py", "x")
    keeper.open_run("review", {"a.py": keeper.hash("a.py")})
    bad = [
        {"claim": "no type"},
        {"type": "conclusion", "scope_ref": "a.py"},
        {"type": "conclusion", "claim": "   ", "scope_ref": "a.py"},
        {"type": "conclusion", "claim": "x"},
        {"type": "conclusion", "claim": "x", "scope_ref": "a.py", "severity": "huge"},
        {"type": "conclusion", "claim": "x", "scope_ref": "a.py", "facets": {"activation": "run-start"}},
        {"type": "calibration", "claim": "x", "facets": {"lifecycle": "stale-on-scope-change"}},
        {"type": "coverage", "claim": "x", "scope_ref": "a.py", "facets": {"obligation": "disposition-required"}},
        {"type": "behavioral", "claim": "x", "scope_ref": "a.py", "facets": {"activation": "verify-phase"}},
        {"type": "nonsense", "claim": "x"},
        {"facets": {"scope": "repo-wide"}, "claim": "x"},
        {"type": "conclusion", "claim": "x", "scope_ref": "a.py", "review_every": 0},
        [1, 2],
    ]
    for cand in bad:
        keeper.usage("propose", keeper.candidate(cand), "--run", "run-001", "--ns", "review")
    err = keeper.usage("propose", keeper.candidate({"type": "calibration", "claim": "x",
                                                    "facets": {"authority": "binding"}}),
                       "--run", "run-001", "--ns", "review")
    assert "authority is never self-assigned" in err
    keeper.write("broken.json", "{not json")
    keeper.usage("propose", "broken.json", "--run", "run-001", "--ns", "review")
    keeper.usage("propose", "missing.json", "--run", "run-001", "--ns", "review")
    (keeper.root / "bin.json").write_bytes(b"\xff\xfe{")
    keeper.usage("propose", "bin.json", "--run", "run-001", "--ns", "review")
    # custom facets are fine and stored as "custom"
    ok = {"facets": {"scope": "repo-wide", "activation": "run-start", "obligation": "inject-as-instruction",
                     "authority": "advisory", "lifecycle": "only-by-supersession"}, "claim": "a custom rule"}
    assert keeper.propose("run-001", "review", ok).code == 0
    keeper.ok("commit", "--run", "run-001")
    assert keeper.ledger()[0]["type"] == "custom"


def test_candidate_hash_never_overrides_snapshot(keeper):
    keeper.write("a.py", "x")
    h = keeper.hash("a.py")
    keeper.open_run("review", {"a.py": h})
    # a field the keeper does not know (the reference's suite sends `scope_changed`) is named on stderr,
    # with the field it was probably meant to be, and ignored: never stored
    r = keeper("propose", keeper.candidate(finding(scope_hash=h, scope_changed=True, sevrity="major")),
               "--run", "run-001", "--ns", "review")
    assert r.code == 0 and r.out == "P-0001 staged (new)\n", r
    assert "ignored the field 'scope_changed'" in r.err and "did you mean" not in r.err.split("\n")[0], r.err
    assert "ignored the field 'sevrity'" in r.err and "did you mean 'severity'?" in r.err, r.err
    keeper.ok("commit", "--run", "run-001")
    rec = keeper.ledger()[0]
    assert rec["scope_hash"] == h
    assert "scope_changed" not in rec and "sevrity" not in rec


def test_scopes_file_errors(keeper):
    keeper.write("s.json", "[1]")
    keeper.usage("relevant", "--ns", "x", "--scopes", "s.json")
    keeper.write("s.json", '{"a": 1}')
    keeper.usage("relevant", "--ns", "x", "--scopes", "s.json")
    keeper.write("s.json", "{oops")
    keeper.usage("relevant", "--ns", "x", "--scopes", "s.json")
    keeper.usage("relevant", "--ns", "x", "--scopes", "nope.json")
    keeper.usage("relevant", "--scopes", "nope.json")
    rel = json.loads(keeper.ok("relevant", "--ns", "x", "--scopes", "-", stdin='{"a.py": "abc"}'))
    assert rel["run"] == "run-001"
    stored = json.loads((keeper.root / ".priors" / "runs" / "run-001" / "relevant.json").read_text())
    assert stored["scopes"] == {"a.py": "abc"}


def test_decide_usage(keeper):
    seed(keeper)
    keeper.usage("decide", "P-0001", "reopen")
    keeper.usage("decide", "P-0001", "fixed")
    keeper.usage("redact", "P-0001")
    body = keeper.refused("UNKNOWN_PRIOR", "decide", "P-0404", "keep")
    assert body["hint"] == "the ledger's one prior is P-0001", body  # (newcomer pass 27aw: the bare code said nothing)
    keeper.refused("UNKNOWN_PRIOR", "redact", "P-0404", "--because", "x")
    keeper.ok("decide", "P-0001", "wontfix")
    keeper.ok("decide", "P-0001", "reopen", "--because", "customers complain")
    assert keeper.ledger()[-1] == {"t": "event", "id": "P-0001", "action": "decide", "to": "reopen", "by": "human",
                                   "reason": "customers complain"}


# ---------------------------------------------------------------- damaged ledger, lock


@pytest.mark.parametrize("damage", [b"{\"t\":\"prior\"\n", b"<<<<<<< HEAD\n", b"[1,2]\n", b"\xff\xfe\n"])
def test_damaged_ledger_is_named_not_overwritten(keeper, damage):
    seed(keeper)
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes() + damage)
    before = ledger.read_bytes()
    for args in (["status"], ["relevant", "--ns", "review"], ["decide", "P-0001", "keep"], ["render"],
                 ["commit", "--run", "run-001"], ["init"]):
        r = keeper(*args)
        assert r.code == 2, (args, r)
        assert "line 3" in r.err
    assert ledger.read_bytes() == before


def test_lock_contention_and_stale_recovery(keeper):
    lock = keeper.root / ".priors" / "keeper.lock"
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock.write_text(str(holder.pid))
        body = keeper.refused("KEEPER_LOCKED", "relevant", "--ns", "review")
        assert "hint" in body
        assert lock.read_text() == str(holder.pid)
    finally:
        holder.kill()
        holder.wait()
    # the holder is dead now: the lock is stale and recovered
    keeper.ok("relevant", "--ns", "review")
    assert not lock.exists()
    lock.write_text("not a pid")
    keeper.ok("abort", "--run", "run-001")
    assert not lock.exists()


def test_status_without_priors_and_namespace_order(keeper):
    assert keeper.ok("status") == "no priors yet — first run writes them\n"
    keeper.open_run("zeta", {})
    keeper.ok("propose", keeper.candidate({"type": "calibration", "claim": "z"}), "--run", "run-001", "--ns", "zeta")
    keeper.ok("commit", "--run", "run-001")
    keeper.open_run("alpha", {})
    keeper.ok("propose", keeper.candidate({"type": "calibration", "claim": "a"}), "--run", "run-002", "--ns", "alpha")
    keeper.ok("commit", "--run", "run-002")
    keeper.ok("decide", "P-0002", "accepted")
    # "lessons locked" counts what a person accepted; an agent's lesson nobody decided is "proposed"
    assert keeper.ok("status") == ("zeta: 0 open · 0 fixed · 0 decided by you · 0 lessons locked · 1 lesson proposed\n"
                                   "alpha: 0 open · 0 fixed · 0 decided by you · 1 lesson locked\n")
    keeper.ok("decide", "P-0001", "wontfix")
    counts = {n["ns"]: n for n in json.loads(keeper.ok("status", "--json"))["namespaces"]}
    assert (counts["zeta"]["settled"], counts["zeta"]["learned"], counts["zeta"]["proposed"]) == (1, 0, 0)
    assert (counts["alpha"]["settled"], counts["alpha"]["learned"], counts["alpha"]["proposed"]) == (0, 1, 0)


def test_render_is_safe(keeper):
    keeper.open_run("x", {})
    keeper.ok("propose", keeper.candidate({"type": "calibration", "claim": "a | b " + "w" * 100}), "--run", "run-001",
              "--ns", "x")
    keeper.ok("commit", "--run", "run-001")
    assert keeper.ok("render") == "rendered .priors/PRIORS.md\n"
    md = (keeper.root / ".priors" / "PRIORS.md").read_text()
    row = [ln for ln in md.splitlines() if ln.startswith("| P-0001")][0]
    assert row.count(" | ") == 5 and "a \\| b" in row and "…" in row


def test_subfolder_finds_the_repo_ledger(tmp_path):
    from conftest import run_priors

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    run_priors(tmp_path, "init")
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    r = run_priors(sub, "relevant", "--ns", "x")
    assert r.code == 0
    assert (tmp_path / ".priors" / "runs" / "run-001" / "relevant.json").exists()
    assert not (sub / ".priors").exists()
    r = run_priors(tmp_path.parent, "-C", str(tmp_path), "status")
    assert r.code == 0 and r.out == ("no priors yet — the open run's commit writes the first ones\n"
                                     "run-001 is open — `priors commit --run run-001` seals it, "
                                     "`priors abort --run run-001` drops it\n")


def test_determinism_two_identical_sessions(tmp_path):
    ledgers = []
    for name in ("one", "two"):
        root = tmp_path / name
        root.mkdir()
        k = Keeper(root)
        k.ok("init")
        scopes = seed(k)
        k.ok("decide", "P-0001", "wontfix", "--because", "later")
        k.open_run("review", scopes)
        k.propose("run-002", "review", finding("tax is a float", "b.py", evidence="b.py:2"))
        k.ok("commit", "--run", "run-002")
        ledgers.append(k.ledger_bytes())
    assert ledgers[0] == ledgers[1]


def test_first_relevant_starts_the_ledger(bare):
    rel = json.loads(bare.ok("relevant", "--ns", "x"))
    assert rel == {"run": "run-001", "ns": "x", "inject": [], "verify": [], "nudges": [], "settled": 0,
                   "archived": 0, "floors": [], "settled_here": [], "settled_here_more": 0}
    assert (bare.root / ".priors" / "ledger.jsonl").exists()


def test_interop_with_reference_shaped_ledger(keeper):
    """A ledger written by another keeper, with unknown records and fields, folds as the contract says."""
    lines = [
        {"t": "prior", "id": "P-0001", "ns": "r", "type": "conclusion",
         "facets": {"scope": "content-hash", "activation": "verify-phase", "obligation": "disposition-required",
                    "authority": "advisory", "lifecycle": "stale-on-scope-change"},
         "scope_ref": "a.py", "scope_hash": "aaaaaaaaaaaa", "claim": "c", "born": "run-001", "extra": 1},
        {"t": "telemetry", "run": "run-001"},
        {"t": "run", "action": "commit", "run": "run-001", "ns": "r", "summary": ["x"]},
        {"t": "event", "id": "P-0777", "action": "disposition", "to": "fixed", "run": "run-005", "by": "agent"},
    ]
    (keeper.root / ".priors" / "ledger.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    rel = keeper.open_run("r", {"a.py": "aaaaaaaaaaaa"})
    # run-005 counts for numbering, though its event is ignored
    assert rel["run"] == "run-006"
    assert rel["verify"] == [{"id": "P-0001", "claim": "c", "scope_ref": "a.py", "scopeState": "unchanged",
                              "current_hash": "aaaaaaaaaaaa"}]
