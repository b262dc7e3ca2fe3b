"""`priors lessons --inject` end to end: the same ranking and budgets as `relevant`, require_review,
nothing written to the ledger, nothing at all without .priors/, the local session record, and
`priors score last` crediting a coding session."""

from __future__ import annotations

import json

from conftest import Keeper
from priors.core.canonical import sha12
from priors.core.inject import ADVISORY, HEADING

CLAIMS = [
    ("dev", "Run the narrowest relevant test before the full suite.", ["testing"]),
    ("dev", "Prefer small commits with honest messages.", []),
    ("dev", "The parser tests are flaky under load; rerun them once before debugging.", ["parser"]),
    ("docs", "Docs change in the same commit as behaviour.", []),
    ("dev", "Never edit generated files by hand.", []),
]


def seed(k: Keeper) -> None:
    """Four open lessons (ranked and budgeted) and one a person accepted (P-0005: no budget drops it)."""
    for ns, text, tags in CLAIMS:
        extra = [x for t in tags for x in ("--tag", t)]
        k.ok("add", "--ns", ns, *extra, *(() if text.startswith("Never") else ("--open",)), text)


def inject(k: Keeper, *args: str) -> dict:
    return json.loads(k.ok("lessons", "--inject", "--json", *args))


def session_file(key: str) -> str:
    return f".priors/cache/sessions/{sha12(key)}.json"


def ids(items):
    return [x["id"] if isinstance(x, dict) else x for x in items]


def test_nothing_without_priors_dir_or_lessons(tmp_path):
    (tmp_path / "bare").mkdir()
    (tmp_path / "k").mkdir()
    bare, keeper = Keeper(tmp_path / "bare"), Keeper(tmp_path / "k")
    keeper.ok("init")
    r = bare("lessons", "--inject", "--query", "anything")
    assert (r.code, r.out, r.err) == (0, "", "")
    assert not (bare.root / ".priors").exists()  # nothing created
    assert bare.ok("lessons", "--inject", "--json") == '{"inject":[],"inject_omitted":[]}\n'
    r = keeper("lessons", "--inject")
    assert (r.code, r.out) == (0, "")
    assert not (keeper.root / ".priors" / "cache" / "session.json").exists()


def test_a_misspelt_namespace_is_silent_for_the_hooks_and_its_help_says_why(keeper: Keeper):
    """The hooks run `lessons --inject` at every prompt and must never fail: an unknown --ns gives nothing,
    exit 0 — the help says so, and the listing (`lessons --ns`) still names the typo."""
    seed(keeper)
    r = keeper("lessons", "--inject", "--ns", "devv")
    assert (r.code, r.out, r.err) == (0, "", "")
    assert "did you mean dev?" in keeper.usage("lessons", "--ns", "devv")
    help_text = " ".join(keeper.ok("lessons", "--help").split())
    assert "With --inject a namespace the ledger does not hold prints nothing, exit 0, on purpose" in help_text
    assert "hooks run it at every prompt and must never fail" in help_text


def test_ranks_and_budgets_exactly_as_relevant(keeper: Keeper):
    seed(keeper)
    keeper.ok("config", "max_inject", "2")
    keeper.ok("config", "max_chars", "100")
    before = keeper.ledger_bytes()
    for query in ("fix the flaky parser test", "write docs", "commit messages"):
        got = inject(keeper, "--ns", "dev", "--query", query)
        assert keeper.ledger_bytes() == before  # read-only with respect to the ledger
        assert not (keeper.root / ".priors" / "runs" / "run-006").exists()  # no run opened
        rel = json.loads(keeper.ok("relevant", "--ns", "dev", "--query", query))
        keeper.ok("abort", "--run", rel["run"])
        assert ids(got["inject"]) == ids(rel["inject"])
        assert got["inject_omitted"] == rel["inject_omitted"]
        assert [{k: x[k] for k in ("id", "claim", "status")} for x in got["inject"]] == rel["inject"]
    # options win over the config, as with relevant
    got = inject(keeper, "--ns", "dev", "--query", "parser", "--max-inject", "2", "--max-chars", "500")
    assert ids(got["inject"]) == ["P-0005", "P-0003"] and got["inject_omitted"] == ["P-0001", "P-0002"]
    # the accepted lesson fills a budget of one by itself, and is never the one left out
    got = inject(keeper, "--ns", "dev", "--query", "parser", "--max-inject", "1", "--fresh")
    assert ids(got["inject"]) == ["P-0005"] and got["inject_omitted"] == ["P-0003", "P-0001", "P-0002"]
    got = inject(keeper, "--ns", "dev", "--query", "parser", "--max-chars", "10", "--fresh")  # shorter than its claim
    assert ids(got["inject"]) == ["P-0005"] and got["inject_omitted"] == ["P-0003", "P-0001", "P-0002"]


def test_every_namespace_by_default_and_ns_filters(keeper: Keeper):
    seed(keeper)
    everything = inject(keeper)
    assert ids(everything["inject"]) == ["P-0001", "P-0002", "P-0003", "P-0005", "P-0004"]  # dev, then docs
    assert {x["ns"] for x in everything["inject"]} == {"dev", "docs"}
    assert everything["inject"][0]["tags"] == ["testing"]
    assert ids(inject(keeper, "--ns", "docs", "--fresh")["inject"]) == ["P-0004"]
    assert ids(inject(keeper, "--ns", "docs", "--ns", "nothing-here")["inject"]) == ["P-0004"]


def test_the_block_is_advisory_and_compact(keeper: Keeper):
    seed(keeper)
    text = keeper.ok("lessons", "--inject", "--ns", "dev", "--query", "parser", "--max-inject", "2")
    lines = text.splitlines()
    assert lines[:4] == [HEADING, "", ADVISORY, ""]
    assert "AGENTS.md" in ADVISORY and "override" in ADVISORY and "user's instructions" in ADVISORY
    assert lines[4:] == ["- [P-0005] Never edit generated files by hand.",  # accepted: first, whatever the budget
                         "- [P-0003] #parser The parser tests are flaky under load; rerun them once before debugging."]


def test_require_review_holds_agent_lessons(keeper: Keeper):
    keeper.ok("add", "--ns", "dev", "Accepted by a person.")
    run = keeper.open_run("dev", {})["run"]
    assert keeper.propose(run, "dev", {"type": "calibration", "claim": "Proposed by an agent."}).code == 0
    keeper.ok("commit", "--run", run)
    assert ids(inject(keeper)["inject"]) == ["P-0001", "P-0002"]  # open lessons are injected, as by relevant
    keeper.ok("config", "require_review", "on")
    got = inject(keeper, "--fresh")
    assert ids(got["inject"]) == ["P-0001"] and got["awaiting_review"] == ["P-0002"]
    keeper.ok("decide", "P-0002", "accepted")
    assert ids(inject(keeper, "--fresh")["inject"]) == ["P-0001", "P-0002"]


def test_hold_proposals_keeps_open_lessons_back_unless_require_review_is_off(keeper: Keeper):
    keeper.ok("init")
    keeper.ok("add", "--ns", "dev", "Accepted by a person.")
    keeper.ok("suggest", "--ns", "dev", "Proposed by a model.")
    got = inject(keeper, "--hold-proposals")  # pi-prior's default: proposals wait for a person
    assert ids(got["inject"]) == ["P-0001"] and got["awaiting_review"] == ["P-0002"]
    keeper.ok("config", "require_review", "off")  # the person's word wins over the default
    assert ids(inject(keeper, "--hold-proposals", "--fresh")["inject"]) == ["P-0001", "P-0002"]
    keeper.ok("config", "require_review", "none")
    assert ids(inject(keeper, "--fresh")["inject"]) == ["P-0001", "P-0002"]  # without the option: the contract's set
    keeper.usage("lessons", "--hold-proposals")


def test_an_open_revision_is_never_given_beside_the_lesson_it_revises(keeper: Keeper):
    keeper.ok("init")
    keeper.ok("add", "--ns", "dev", "Keep commits small.")
    keeper.ok("suggest", "--revises", "P-0001", "Keep commits small and focused.")
    got = inject(keeper)
    assert ids(got["inject"]) == ["P-0001"] and got["awaiting_review"] == ["P-0002"]
    assert "P-0002" not in keeper.ok("lessons", "--inject", "--fresh")
    keeper.ok("decide", "P-0002", "accepted", "--retires", "P-0001")  # applied: the revision replaces it
    assert ids(inject(keeper, "--fresh")["inject"]) == ["P-0002"]


def test_a_lesson_is_at_most_2000_characters_and_a_session_gets_at_most_8000_by_default(keeper: Keeper):
    keeper.ok("init")
    long = " ".join(["word"] * 420)  # 2,099 characters
    for verb in (("add", "--ns", "dev"), ("suggest", "--ns", "dev")):
        r = keeper(*verb, long)
        assert r.code == 2 and "a lesson holds at most 2000" in r.err, r
    assert "word word" not in keeper.read(".priors/ledger.jsonl")  # nothing written
    run = keeper.open_run("dev", {})["run"]
    assert keeper.propose(run, "dev", {"type": "calibration", "claim": long}).code == 2
    keeper.ok("abort", "--run", run)
    for i in range(6):  # 6 × ~1,900 characters of proposals: more than 8,000 together
        keeper.ok("suggest", "--ns", "dev", f"Lesson {i}: " + " ".join(["text"] * 378))
    got = inject(keeper)
    assert ids(got["inject"]) == ["P-0001", "P-0002", "P-0003", "P-0004"] and len(got["inject_omitted"]) == 2
    assert sum(len(x["claim"]) for x in got["inject"]) <= 8000
    keeper.ok("config", "max_chars", "100000")  # a person's budget wins
    assert len(inject(keeper, "--fresh")["inject"]) == 6


def test_session_record_is_local_content_free_and_dedupes(keeper: Keeper):
    seed(keeper)
    assert "cache/" in keeper.read(".priors/.gitignore").splitlines()  # never committed
    first = inject(keeper, "--session", "abc-1", "--query", "parser", "--max-inject", "2")
    assert first["seq"] == 1
    rec = json.loads(keeper.read(session_file("abc-1")))
    assert rec == {"format": "priors-session", "version": 1, "key": "abc-1", "seq": 1, "start": 11, "at": 11,
                   "ids": ["P-0003", "P-0005"], "last": ["P-0005", "P-0003"]}
    assert "parser" not in keeper.read(session_file("abc-1"))  # ids and positions, never text
    # the same prompt again: nothing new for this session
    r = keeper("lessons", "--inject", "--session", "abc-1", "--query", "parser", "--max-inject", "2", "--new-only")
    assert (r.code, r.out) == (0, "")
    again = inject(keeper, "--session", "abc-1", "--query", "commits", "--max-inject", "2", "--new-only")
    assert ids(again["inject"]) == ["P-0002"] and again["already_given"] == ["P-0005"]
    assert json.loads(keeper.read(session_file("abc-1")))["ids"] == ["P-0002", "P-0003", "P-0005"]
    # another session id is another session: everything is new to it, and the first keeps its record
    other = inject(keeper, "--session", "abc-2", "--query", "parser", "--max-inject", "2", "--new-only")
    assert ids(other["inject"]) == ["P-0005", "P-0003"] and other["seq"] == 3  # counts injections that gave something
    assert json.loads(keeper.read(session_file("abc-2")))["ids"] == ["P-0003", "P-0005"]
    assert json.loads(keeper.read(session_file("abc-1")))["ids"] == ["P-0002", "P-0003", "P-0005"]
    assert not (keeper.root / ".priors" / "cache" / "session.json").exists()  # no keyless session was given anything


def test_score_last_credits_the_latest_session(keeper: Keeper):
    seed(keeper)
    inject(keeper, "--session", "s1", "--query", "parser", "--max-inject", "2")
    inject(keeper, "--session", "s1", "--ns", "docs", "--new-only")
    out = keeper.ok("score", "last", "success", "--because", "tests passed")
    assert out == ("run-006 → success (coding session s1: credits 2 lessons: P-0003, P-0005)\n"
                   "run-007 → success (coding session s1: credits 1 lesson: P-0004)\n")
    tail = keeper.ledger()[-6:]
    assert tail[0] == {"t": "injected", "run": "run-006", "ids": ["P-0003", "P-0005"]}
    assert tail[1]["t"] == "run" and tail[1]["via"] == "session" and tail[1]["ns"] == "dev" and "by" not in tail[1]
    assert tail[4] == {"t": "score", "run": "run-006", "outcome": "success", "by": "human",
                       "injected": ["P-0003", "P-0005"], "reason": "tests passed"}
    assert keeper.ok("verify").startswith("ledger sound")
    history = [r["run"] for r in json.loads(keeper.ok("history", "--json"))["runs"]]
    assert "run-006" not in history and "run-007" not in history  # a coding session reviewed nothing
    rows = {r["id"]: r for r in json.loads(keeper.ok("lessons", "--json"))}
    assert (rows["P-0003"]["uses"], rows["P-0003"]["wins"]) == (1, 1)
    assert (rows["P-0002"]["uses"], rows["P-0002"]["wins"]) == (0, 0)  # never given to that session
    assert json.loads(keeper.read(session_file("s1")))["sealed"] == ["run-006", "run-007"]
    keeper.refused("ALREADY_SCORED", "score", "last", "failure")
    assert keeper.ok("score", "last", "partial", "--replace").count("→ partial") == 2  # both runs of the session
    # a keeper run committed after the session is the latest now
    run = keeper.open_run("dev", {})["run"]
    keeper.ok("commit", "--run", run)
    assert keeper.ok("score", "last", "failure").startswith(f"{run} → failure (credits 4 lessons")
    # a new session after that run is the latest again; it starts fresh (the old one was sealed)
    inject(keeper, "--session", "s1", "--ns", "docs")
    assert keeper.ok("score", "last", "success") == \
        "run-009 → success (coding session s1: credits 1 lesson: P-0004)\n"


def test_a_peek_gives_no_session_anything_so_score_last_scores_the_run(keeper: Keeper):
    """Newcomer pass 27av: a person who ran `lessons --inject` to see the block had it noted as a coding
    session, which `score last` then scored (the README's table says so now); `--peek` only looks."""
    seed(keeper)
    run = keeper.open_run("dev", {})["run"]
    keeper.ok("commit", "--run", run)
    assert keeper.ok("lessons", "--inject", "--peek").startswith(HEADING)
    assert keeper.ok("score", "last", "success").startswith(f"{run} → success (credits")
    keeper.ok("lessons", "--inject")
    assert "(a coding session: credits" in keeper.ok("score", "last", "success")


def test_a_session_record_a_power_cut_emptied_reads_as_none(keeper: Keeper):
    # The record is written on every prompt and not forced to disk (an fsync can cost a prompt
    # 10 ms): a power cut may leave it empty. That is a session nothing is credited to, never an error.
    seed(keeper)
    inject(keeper, "--session", "s1", "--ns", "docs")
    (keeper.root / session_file("s1")).write_bytes(b"")
    out = inject(keeper, "--session", "s1", "--ns", "docs", "--new-only")
    assert ids(out["inject"]) == ["P-0004"] and out["already_given"] == []  # given again: nothing was remembered
    assert json.loads(keeper.read(session_file("s1")))["ids"] == ["P-0004"]
    assert keeper.ok("score", "last", "success") == "run-006 → success (coding session s1: credits 1 lesson: P-0004)\n"


def test_score_last_session_refusals(keeper: Keeper):
    seed(keeper)
    inject(keeper, "--ns", "dev", "--max-inject", "1")
    keeper.refused("NOT_SCORED", "score", "last", "success", "--replace")
    run = keeper.open_run("dev", {})["run"]
    body = keeper.refused("RUN_OPEN", "score", "last", "success")  # `last` is not guessed while a run is open
    assert body["run"] == run and f"priors commit --run {run}" in body["hint"]
    keeper.ok("abort", "--run", run)
    keeper.ok("redact", "P-0001", "--because", "wrong")  # cache/ is emptied, but the session records stay
    assert (keeper.root / ".priors" / "cache" / "session.json").is_file()
    keeper.ok("redact", "P-0005", "--because", "wrong")  # the one lesson the session was given
    body = keeper.refused("UNKNOWN_RUN", "score", "last", "success")
    assert "gone from the ledger" in body["hint"]


def test_a_redaction_keeps_what_each_session_was_given(keeper: Keeper):
    seed(keeper)
    inject(keeper, "--session", "s1", "--ns", "dev", "--max-inject", "2")  # P-0005 (binding) and P-0001
    inject(keeper, "--session", "s2", "--ns", "docs")
    keeper.ok("redact", "P-0001", "--because", "wrong")
    # the session is still scored for what else it was given (a redaction used to forget every session)
    assert keeper.ok("score", "success", "--session", "s1") == \
        "run-006 → success (coding session s1: credits 1 lesson: P-0005)\n"
    assert "credits 1 lesson: P-0004" in keeper.ok("score", "failure", "--session", "s2")


def test_usage_errors(keeper: Keeper):
    keeper.usage("lessons", "--query", "x")
    keeper.usage("lessons", "--new-only")
    keeper.usage("lessons", "--inject", "--all")
    keeper.usage("lessons", "--inject", "--session", "has space")
    keeper.usage("lessons", "--inject", "--max-inject", "0")
    keeper.usage("lessons", "--inject", "--ns", "Bad NS")


def test_two_interleaved_sessions_are_scored_separately(keeper: Keeper):
    keeper.ok("init")
    keeper.ok("add", "--ns", "dev", "Run the narrowest test before the suite.")
    keeper.ok("add", "--ns", "ops", "Drain the queue before a deploy.")
    inject(keeper, "--session", "pi-A", "--ns", "dev")  # session A is given P-0001
    inject(keeper, "--session", "pi-B", "--ns", "ops")  # then session B, beside it, P-0002
    out = keeper.ok("score", "failure", "--session", "pi-A")  # typed in A: A's lesson, not B's
    assert out == "run-003 → failure (coding session pi-A: credits 1 lesson: P-0001)\n"
    score = keeper.ledger()[-1]
    assert score == {"t": "score", "run": "run-003", "outcome": "failure", "by": "human", "injected": ["P-0001"]}
    # `last` is the session given lessons most recently — B — even though A's seal came later
    assert keeper.ok("score", "last", "success") == "run-004 → success (coding session pi-B: credits 1 lesson: P-0002)\n"
    keeper.refused("ALREADY_SCORED", "score", "last", "failure", "--session", "pi-A")
    assert "→ partial" in keeper.ok("score", "last", "partial", "--session", "pi-A", "--replace")
    rows = {r["id"]: r for r in json.loads(keeper.ok("lessons", "--json"))}
    assert (rows["P-0001"]["wins"], rows["P-0001"]["partials"], rows["P-0001"]["losses"]) == (0, 1, 0)
    assert (rows["P-0002"]["wins"], rows["P-0002"]["losses"]) == (1, 0)
    body = keeper.refused("UNKNOWN_RUN", "score", "success", "--session", "pi-C")
    assert "pi-C" in body["hint"]
    keeper.usage("score", "run-003", "success", "--session", "pi-A")  # a run id and a session: which?
    keeper.usage("score", "success")  # no run and no session
    assert keeper.ok("verify").startswith("ledger sound")


def test_score_last_with_a_run_open_refuses_naming_it(keeper: Keeper):
    keeper.ok("init")
    keeper.ok("add", "--ns", "dev", "Run the narrowest test before the suite.")
    done = keeper.open_run("dev", {})["run"]
    keeper.ok("commit", "--run", done)
    run = keeper.open_run("dev", {})["run"]
    before = keeper.read(".priors/ledger.jsonl")
    body = keeper.refused("RUN_OPEN", "score", "last", "failure")
    assert body["run"] == run and f"priors score {done} failure" in body["hint"]
    assert keeper.read(".priors/ledger.jsonl") == before  # nothing scored silently
    assert keeper.ok("score", done, "failure").startswith(f"{done} → failure")  # naming the run still works


def test_config_inject_off_gives_sessions_nothing(keeper: Keeper):
    seed(keeper)
    keeper.ok("config", "inject", "off")
    r = keeper("lessons", "--inject", "--session", "s1")
    assert (r.code, r.out) == (0, "")
    assert json.loads(keeper.ok("lessons", "--inject", "--json"))["off"] is True
    keeper.ok("config", "inject", "on")
    assert HEADING in keeper.ok("lessons", "--inject")
