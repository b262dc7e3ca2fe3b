"""pi-prior's loop in the keeper: an agent's lesson outside a run (`suggest`, the `priors_lessons`
tool), traces of coding sessions (`trace`) that a score keeps and `reflect` quotes, and the config
keys a harness honours (`inject`, `capture`, `max_traces`)."""

from __future__ import annotations

import json

from conftest import Keeper
from test_mcp import _call, _init, serve


def seeded(k: Keeper) -> None:
    k.ok("init")
    k.ok("add", "--ns", "dev", "--tag", "testing", "Run the narrowest relevant test before the full suite.")


def test_suggest_is_judged_like_propose_and_stays_open(keeper: Keeper):
    seeded(keeper)
    out = keeper.ok("suggest", "--ns", "dev", "--tag", "docs", "--because", "twice missed", "Read AGENTS.md first.")
    assert out.startswith("P-0002 suggested in dev (a new lesson) — open until a person decides")
    prior, injected, seal = keeper.ledger()[-3:]
    assert (prior["id"], prior["claim"], prior["tags"], prior["evidence"]) == (
        "P-0002", "Read AGENTS.md first.", ["docs"], "twice missed")
    assert injected == {"t": "injected", "run": "run-002", "ids": []}  # it was shown nothing: credits nothing
    assert seal["via"] == "suggest" and "by" not in seal
    rows = {r["id"]: r for r in json.loads(keeper.ok("lessons", "--status", "proposed", "--json"))}
    assert list(rows) == ["P-0002"] and rows["P-0002"]["uses"] == 0
    # the door's rules: a re-raise of a person's lesson and a secret are refused, nothing written
    before = keeper.ledger_bytes()
    keeper.refused("RERAISE", "suggest", "--ns", "dev", "Run the narrowest relevant test before the full suite.")
    keeper.refused("SECRET_SUSPECTED", "suggest", "--ns", "dev", "Use token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB")
    assert keeper.ledger_bytes() == before
    # a revision takes the lesson's namespace; a person accepting it retires nothing binding silently
    out = keeper.ok("suggest", "--revises", "P-0001", "Run the narrowest test, then the suite once.")
    assert out.startswith("P-0003 suggested in dev (revises P-0001, which a person settled: accepting it leaves P-0001"
                          " in force unless they name it)")
    keeper.refused("NOT_SCORABLE", "score", "run-003", "success")  # a suggestion is not a run to score
    keeper.refused("UNKNOWN_RUN", "score", "last", "success")  # nor what `last` means
    keeper.usage("suggest", "Text without a namespace.")
    # a revision of a prior the ledger does not hold says so (not "give --ns", which would not help)
    err = keeper.usage("suggest", "--revises", "P-0099", "A revision of nothing.")
    assert "P-0099" in err and "not a prior in the ledger" in err and "--ns" not in err
    assert keeper.ok("verify").startswith("ledger sound")


def test_a_person_edits_deactivates_and_deletes(keeper: Keeper):
    seeded(keeper)
    out = keeper.ok("add", "--supersedes", "P-0001", "Run the narrowest test first, always.")  # /priors edit
    assert out.splitlines() == ["P-0002 added to dev as run-002 — accepted (binding)",
                                "P-0001 → obsolete (superseded by P-0002)"]
    assert [r["id"] for r in json.loads(keeper.ok("lessons", "--status", "inactive", "--json"))] == ["P-0001"]
    assert [r["id"] for r in json.loads(keeper.ok("lessons", "--status", "active", "--json"))] == ["P-0002"]
    keeper.usage("lessons", "--status", "sleeping")


def test_traces_are_redacted_kept_when_scored_and_quoted_by_reflect(keeper: Keeper):
    seeded(keeper)
    keeper.ok("lessons", "--inject", "--session", "pi-1", "--query", "tests")
    trace = {"prompt": "fix the flaky test; my key is AKIAIOSFODNN7EXAMPLE ok", "assistant": ["x" * 900, "done"],
             "tools": [{"name": "bash", "input": {"command": "pytest -k parser"}, "output": "1 failed", "error": True}]}
    assert keeper.ok("trace", "-", "--session", "pi-1", stdin=json.dumps(trace)) == "kept trace 1 of session pi-1\n"
    kept = [json.loads(x) for x in keeper.read(".priors/traces/traces.jsonl").splitlines()]
    assert kept[0]["given"] == ["P-0001"]  # what the session was given, from its record
    assert "AKIA" not in json.dumps(kept) and "[redacted: " in kept[0]["prompt"]
    assert len(kept[0]["assistant"][0]) == 600  # cut to size
    assert keeper.read(".priors/traces/.gitignore").splitlines()[-1] == "*"  # never committed
    keeper.ok("score", "failure", "--session", "pi-1", "--because", "wrong test")
    kept = [json.loads(x) for x in keeper.read(".priors/traces/traces.jsonl").splitlines()]
    assert kept[0]["runs"] == ["run-002"]
    keeper.ok("reflect", "1")
    packet = keeper.read(".priors/reflection/reflect-run-002.md")
    assert "trace 1: given P-0001" in packet and "pytest -k parser" in packet and "error 1 failed" in packet
    assert "priors_lessons" in packet  # the packet asks for the tool in a coding session
    # redaction: a trace that was only given the prior keeps its words, the id taken out
    keeper.ok("redact", "P-0001", "--because", "wrong")
    [kept] = [json.loads(x) for x in keeper.read(".priors/traces/traces.jsonl").splitlines()]
    assert kept["given"] == [] and kept["runs"] == ["run-002"] and kept["prompt"].startswith("fix the flaky")


def test_redaction_deletes_the_traces_that_name_or_quote_the_lesson_and_no_others(keeper: Keeper):
    keeper.ok("init")
    for i in range(1, 11):
        keeper.ok("add", "--ns", "dev", f"Lesson number {i}: keep the build green on branch {i}.")
    keeper.ok("lessons", "--inject", "--session", "s")  # given all ten
    for prompt, said in [("apply P-0001 here", "ok"),  # names it: goes
                         ("apply P-00010 and P-0010", "ok"),  # another id that starts alike: stays
                         ("what now", "The rule says: lesson NUMBER 1: keep the build green on branch 1. So."),  # quotes it
                         ("what else", "x " * 278 + "Lesson number 1: keep the build green on branch 1."),  # quoted up to a cut
                         ("nothing about it", "fine")]:
        keeper.ok("trace", "-", "--session", "s", stdin=json.dumps({"prompt": prompt, "assistant": [said]}))
    keeper.ok("score", "success", "--session", "s")
    keeper.ok("redact", "P-0001", "--because", "wrong")
    kept = [json.loads(x) for x in keeper.read(".priors/traces/traces.jsonl").splitlines()]
    assert [t["prompt"] for t in kept] == ["apply P-00010 and P-0010", "nothing about it"]
    assert all("P-0001" not in t["given"] and "P-0010" in t["given"] and t["runs"] for t in kept)  # scored: kept


def test_a_trace_cannot_name_lessons_its_session_was_not_given(keeper: Keeper):
    seeded(keeper)
    keeper.ok("lessons", "--inject", "--session", "a", "--query", "tests")  # session a: P-0001
    r = keeper("trace", "-", "--session", "b", stdin=json.dumps({"prompt": "x", "given": ["P-0001"]}))
    assert r.code == 2 and "which session b was not given" in r.err  # b has no record: it was given nothing
    assert not (keeper.root / ".priors" / "traces" / "traces.jsonl").exists()
    keeper.ok("trace", "-", "--session", "a", stdin=json.dumps({"prompt": "x", "given": ["P-0001"]}))


def test_unscored_traces_are_pruned_scored_ones_kept(keeper: Keeper):
    seeded(keeper)
    keeper.ok("config", "max_traces", "2")
    keeper.ok("lessons", "--inject", "--session", "a")
    keeper.ok("trace", "-", "--session", "a", stdin='{"prompt": "scored one"}')
    keeper.ok("score", "success", "--session", "a")
    for i in range(3):
        keeper.ok("trace", "-", "--session", "b", stdin=json.dumps({"prompt": f"unscored {i}"}))
    prompts = [json.loads(x)["prompt"] for x in keeper.read(".priors/traces/traces.jsonl").splitlines()]
    assert prompts == ["scored one", "unscored 1", "unscored 2"]
    assert keeper.ok("trace", "--prune-scored", "1") == "removed 0 traces, kept 3\n"
    assert keeper.ok("trace", "--prune", "1") == "removed 1 trace, kept 2\n"
    assert "traces" in keeper.ok("trace", "--where") and "1/2 unscored, 1 scored" in keeper.ok("trace", "--where")
    keeper.ok("config", "capture", "off")
    assert keeper.ok("trace", "-", stdin='{"prompt": "x"}').startswith("not kept: capture is off")
    keeper.usage("trace", "-", stdin='{"prompt": "x", "secret": 1}')
    keeper.usage("trace")


def test_the_lessons_tool_lists_retrieves_proposes_and_revises_but_never_accepts(keeper: Keeper):
    seeded(keeper)
    replies, _, _ = serve(keeper.root, [
        _init(),
        _call(1, "priors_lessons", {"action": "list"}),
        _call(2, "priors_lessons", {"action": "retrieve", "query": "full suite tests"}),
        _call(3, "priors_lessons", {"action": "propose", "ns": "dev", "text": "Read AGENTS.md first.", "tags": ["docs"]}),
        _call(4, "priors_lessons", {"action": "revise", "id": "P-0001", "text": "Run the narrowest test first."}),
        _call(5, "priors_lessons", {"action": "accept", "id": "P-0002"}),
    ])
    assert "structuredContent" not in replies[1]["result"]  # MCP's structured content is an object, never a list
    listed = json.loads(replies[1]["result"]["content"][0]["text"])
    assert [r["id"] for r in listed] == ["P-0001"]
    assert "Run the narrowest" in replies[2]["result"]["content"][0]["text"]
    assert replies[3]["result"]["structuredContent"]["id"] == "P-0002"
    assert replies[4]["result"]["structuredContent"]["supersedes"] == "P-0001"
    assert replies[5]["error"]["code"] == -32602  # there is no accept
    assert "unknown action 'accept'" in replies[5]["error"]["message"], replies[5]
    assert not (keeper.root / ".priors" / "cache" / "session.json").exists()  # retrieve gave no session anything
    statuses = {r["id"]: r["status"] for r in json.loads(keeper.ok("lessons", "--json"))}
    assert statuses == {"P-0001": "accepted", "P-0002": "open", "P-0003": "open"}
