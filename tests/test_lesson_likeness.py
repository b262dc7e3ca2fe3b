"""Issue 27, door 5: a lesson that says what another lesson says in other words.

A person's `wontfix` or retired lesson, reworded, used to come back through `suggest` or `propose`
as a new open lesson — and open lessons are injected. The door now compares a lesson with lessons
by meaning, as it compares findings, and `verify` replays the rule for every run sealed `door: 5`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from priors.core.canonical import dumps
from priors.core.errors import Refusal
from priors.core.vocabulary import DOOR, LESSON_DOOR

NS = "code-review"
SUITE = "Before committing a change, always run the full test suite"
SUITE_REWORDED = "Always run the full test suite before you commit any change"
QUOTE = "Quote shell variables in scripts"
QUOTE_REWORDED = "Always quote the shell variables in your scripts"


def _decided(keeper):
    """P-0001 settled `wontfix` by a person (binding: still injected), P-0002 retired by a person."""
    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, SUITE)
    keeper.ok("decide", "P-0001", "wontfix", "--because", "the suite takes an hour here")
    keeper.ok("suggest", "--ns", NS, QUOTE)
    keeper.ok("decide", "P-0002", "obsolete", "--because", "we write no shell any more")


def test_a_reworded_lesson_a_person_turned_down_or_retired_is_refused_everywhere(keeper):
    _decided(keeper)
    before = keeper.ledger_bytes()
    body = keeper.refused("RERAISE", "suggest", "--ns", NS, SUITE_REWORDED)
    assert (body["of"], body["status"], body["similar"]) == ("P-0001", "wontfix", True), body
    # `wontfix` keeps a lesson in force (injected), so the hint says so rather than "turned down"
    assert "a person settled this lesson as wontfix (binding, like accepted: it is still injected)" in body["hint"]
    assert "turned down" not in body["hint"]
    given = json.loads(keeper.ok("lessons", "--inject", "--peek", "--json"))
    assert [x["id"] for x in given["inject"]] == ["P-0001"], given
    body = keeper.refused("RERAISE", "suggest", "--ns", NS, QUOTE_REWORDED)
    assert (body["of"], body["status"]) == ("P-0002", "obsolete") and "retired" in body["hint"], body
    # the agent's word that it differs does not set a person's decision aside
    keeper.refused("RERAISE", "suggest", "--ns", NS, "--distinct-from", "P-0001", SUITE_REWORDED)
    # nor does calling it a revision of the lesson the person retired: a retired lesson is not revised (door 6)
    err = keeper.usage("suggest", "--revises", "P-0002", QUOTE_REWORDED)
    assert "`supersedes` names P-0002, a lesson a person retired: there is nothing to revise" in err, err
    # a person's decision holds in every namespace
    body = keeper.refused("RERAISE", "suggest", "--ns", "docs", SUITE_REWORDED)
    assert (body["of"], body["ns"]) == ("P-0001", NS), body
    # ... and its hint says so, with what to do, as the same namespace's does
    assert body["hint"].startswith(f"a person settled this lesson as wontfix (binding, like accepted: it is still"
                                   f" injected) in namespace {NS} (a person's decision holds in every namespace),"
                                   " and yours says the same in other words"), body
    assert "`priors add` is theirs" in body["hint"], body
    assert keeper.ledger_bytes() == before  # nothing written
    # in a run, through `propose`, and through the MCP tool
    run = keeper.open_run(NS, {})["run"]
    r = keeper.propose(run, NS, {"type": "calibration", "claim": SUITE_REWORDED})
    assert r.code == 1 and r.json["refused"] == "RERAISE" and r.json["of"] == "P-0001", r
    keeper.ok("abort", "--run", run)
    # another lesson is still welcome, and the ledger the keeper wrote replays clean
    keeper.ok("suggest", "--ns", NS, "Ask the user before deleting files")
    keeper.ok("verify", "--no-git")


def test_neither_a_scope_nor_a_namespace_keeps_a_rewording_apart(keeper):
    """Hostile pass 27r: a lesson's scope does not choose where it is given, nor its namespace which
    coding session gets it (`lessons --inject` gives every namespace's). A behavioral lesson on a made-up
    tool scope, or a retired lesson re-suggested in another namespace, used to pass and be injected."""
    _decided(keeper)
    run = keeper.open_run(NS, {"tool:pytest": "v8.1"})["run"]
    for claim in (SUITE, SUITE_REWORDED):
        r = keeper.propose(run, NS, {"type": "behavioral", "claim": claim, "scope_ref": "tool:pytest"})
        assert r.code == 1 and (r.json["refused"], r.json["of"]) == ("RERAISE", "P-0001"), r
    keeper.ok("abort", "--run", run)
    for ns, claim in (("docs", QUOTE), ("docs2", QUOTE_REWORDED)):  # P-0002: retired by a person in code-review
        body = keeper.refused("RERAISE", "suggest", "--ns", ns, claim)
        assert (body["of"], body["status"], body["ns"]) == ("P-0002", "obsolete", NS), body
    assert "shell variables" not in keeper.ok("lessons", "--inject").lower()
    # typed into the ledger instead, both are named by verify
    base = keeper.ledger_bytes()
    lesson = next(r for r in keeper.ledger() if r.get("t") == "prior")
    forged = [dict(lesson, id="P-0009", claim=QUOTE_REWORDED, born="run-009", ns="docs"),
              dict(lesson, id="P-0010", claim=SUITE_REWORDED, born="run-009", type="behavioral", scope_ref="tool:pytest",
                   scope_hash="v8.1", facets=dict(lesson["facets"], scope="tool-version"))]
    seal = {"t": "run", "action": "commit", "run": "run-009", "ns": "docs", "via": "suggest", "door": DOOR,
            "summary": ["Suggested by an agent: 2 lessons — open, awaiting your review"]}
    forged[1]["ns"] = "docs"
    lines = forged + [{"t": "injected", "run": "run-009", "ids": []}, seal]
    (keeper.root / ".priors/ledger.jsonl").write_bytes(base + "".join(dumps(r) + "\n" for r in lines).encode())
    keeper.ok("render")
    r = keeper("verify", "--no-git", "--json")
    got = [(p["code"], p["line"]) for p in json.loads(r.out)["problems"]]
    n = base.count(b"\n")
    assert r.code == 1 and ("RERAISE", n + 1) in got and ("RERAISE", n + 2) in got, r


def test_an_agent_s_lesson_reworded_is_a_duplicate_that_a_revision_or_distinct_from_answers(keeper):
    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, QUOTE)  # P-0001, an agent's: open
    body = keeper.refused("DUPLICATE", "suggest", "--ns", NS, QUOTE_REWORDED)
    assert (body["of"], body["status"], body["similar"]) == ("P-0001", "open", True), body
    assert "`--revises P-0001`" in body["hint"] and "`--distinct-from P-0001`" in body["hint"]
    # a revision says much the same on purpose; two revisions of one lesson are a person's choice
    assert "P-0002 suggested" in keeper.ok("suggest", "--revises", "P-0001", QUOTE_REWORDED)
    assert "P-0003 suggested" in keeper.ok("suggest", "--revises", "P-0001", "Always quote shell variables in bash scripts")
    # the agent's word that it is another lesson sets an agent's lesson aside — naming every one it sounds like
    keeper.refused("DUPLICATE", "suggest", "--ns", NS, "--distinct-from", "P-0001", "Quote every shell variable in scripts")
    out = keeper.ok("suggest", "--ns", NS, "--distinct-from", "P-0001", "--distinct-from", "P-0002",
                    "--distinct-from", "P-0003", "Quote every shell variable in scripts")
    assert out.startswith("P-0004 suggested"), out
    assert keeper.ledger()[-3]["distinct_from"] == ["P-0001", "P-0002", "P-0003"]
    keeper.usage("suggest", "--ns", NS, "--distinct-from", "seven", "Quote things")
    keeper.ok("verify", "--no-git")


def test_a_revision_of_a_standing_lesson_may_sound_like_the_lessons_it_replaced(keeper):
    """A person replaced P-0001 with P-0002 (`add --supersedes`: P-0001 retired in P-0002's favour). An
    agent's revision of P-0002 sounds like P-0001 as much as like P-0002, on purpose: it is a proposal
    for the person, not a re-raise. Once the person retires P-0002 too, it is not revised (door 6), and a
    lesson of its own that says the same is judged against both."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, "Run the narrowest test first.")
    keeper.ok("add", "--ns", NS, "--supersedes", "P-0001", "Run the narrowest relevant test first.")
    assert "P-0003 suggested" in keeper.ok("suggest", "--revises", "P-0002", "Run the narrowest failing test first.")
    keeper.ok("verify", "--no-git")
    keeper.ok("decide", "P-0002", "obsolete", "--because", "we run everything")
    keeper.ok("decide", "P-0003", "obsolete", "--because", "no")
    assert "a lesson a person retired" in keeper.usage("suggest", "--revises", "P-0002", "Run the narrowest test first!")
    body = keeper.refused("RERAISE", "suggest", "--ns", NS, "Always run the narrowest test first.")
    assert body["of"] in ("P-0001", "P-0002", "P-0003") and body["status"] == "obsolete", body


def test_redacting_the_revised_lesson_keeps_the_ledger_sound(keeper):
    """A redaction rewrites the revised lesson as a tombstone that no longer says what it replaced; the
    replay still knows (the person's "superseded by" decision), so the revision the door took stands."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, "Run the narrowest test first.")
    keeper.ok("add", "--ns", NS, "--supersedes", "P-0001", "Run the narrowest relevant test first.")
    keeper.ok("suggest", "--revises", "P-0002", "Run every test first.")
    keeper.ok("redact", "P-0002", "--because", "it named a customer")
    assert keeper.ok("verify", "--no-git").startswith("ledger sound")


def test_the_lookup_reads_a_filed_lesson_as_it_is_now():
    """A lesson filed under its words and redacted afterwards has no claim left: the lookup leaves it out
    (it looked the filed words up by the claim, gone: a `KeyError`)."""
    from priors.core.lesson_likeness import LessonIndex

    class Lesson:
        def __init__(self, claim):
            self.claim = claim

    index = LessonIndex()
    gone, kept = Lesson("always run the full test suite before committing"), Lesson("run the full test suite first")
    index.add(gone)
    index.add(kept)
    assert index.meeting("run the full test suite before you commit") == [gone, kept]
    gone.claim = None
    assert index.meeting("run the full test suite before you commit") == [kept]


def test_retiring_a_lesson_names_the_open_revision_now_given_in_its_place(keeper):
    """Hostile pass 27r: an agent's open revision waits only while the lesson it revises is given. When the
    person retires that lesson, `decide` and `status --calls` say the revision is given in its place."""
    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, QUOTE)
    keeper.ok("suggest", "--revises", "P-0001", QUOTE_REWORDED)
    out = keeper.ok("decide", "P-0001", "obsolete", "--because", "no shell any more")
    assert ("P-0002 (an agent's revision of P-0001, open) is now given to runs in its place — to retire it too:"
            " priors decide P-0002 obsolete") in out, out
    calls = keeper.ok("status", "--calls")
    assert ("(it revises P-0001 'Quote shell variables in scripts', which you retired: given to runs in its place until"
            " you decide)") in calls, calls
    assert "priors decide P-0002 obsolete" in calls
    keeper.ok("suggest", "--ns", NS, "Keep commits small")  # P-0003
    keeper.ok("suggest", "--revises", "P-0003", "Keep every commit small and focused")  # P-0004
    assert "(it revises P-0003 'Keep commits small': accepting it retires P-0003)" in keeper.ok("status", "--calls")
    keeper.ok("add", "--ns", NS, "Ask the user before deleting files")  # P-0005, a person's
    keeper.ok("suggest", "--revises", "P-0005", "Ask the user before you delete any file or folder")
    assert ("(it revises P-0005 'Ask the user before deleting files', which a person settled: accepting it leaves P-0005"
            " in force unless you name it)") in keeper.ok("status", "--calls")
    keeper.ok("suggest", "--ns", NS, "Ask before pushing to main")  # P-0007: no revision of it
    assert "revision" not in keeper.ok("decide", "P-0007", "obsolete", "--because", "no")


def _forge(keeper, base: bytes, claim: str, door, run: str = "run-009", pid: str = "P-0009") -> None:
    """A lesson typed into the ledger as a suggest run of its own, sealed `door` (None: no door named)."""
    lesson = next(r for r in keeper.ledger() if r.get("t") == "prior")
    prior = dict(lesson, id=pid, claim=claim, born=run)
    seal = {"t": "run", "action": "commit", "run": run, "ns": NS, "via": "suggest",
            "summary": [f"Suggested by an agent: {pid} (a new lesson) — open, awaiting your review"]}
    if door is not None:
        seal["door"] = door
    lines = [prior, {"t": "injected", "run": run, "ids": []}, seal]
    (keeper.root / ".priors/ledger.jsonl").write_bytes(base + "".join(dumps(r) + "\n" for r in lines).encode())
    keeper.ok("render")


def test_verify_names_a_reworded_lesson_typed_into_a_run_sealed_by_today_s_door(keeper):
    assert DOOR >= LESSON_DOOR == 5
    _decided(keeper)
    base = keeper.ledger_bytes()
    for claim, code, of in ((SUITE_REWORDED, "RERAISE", "P-0001"), (QUOTE_REWORDED, "RERAISE", "P-0002")):
        for door in (LESSON_DOOR, None, 4):  # after a door-5 seal, a later run is held to door 5 whatever it says
            _forge(keeper, base, claim, door)
            r = keeper("verify", "--no-git", "--json")
            problems = json.loads(r.out)["problems"]
            assert r.code == 1 and [(p["code"], p["line"]) for p in problems] == [(code, base.count(b"\n") + 1)], r
            said = problems[0]["message"]
            # plain words: the rewording is the lesson's, the decision the person's; a lesson has no scope state
            assert f"re-raises {of} in other words (similarity " in said and "which a person decided (" in said, said
            assert "scope state" not in said and "rebase" not in said, said
    # an agent's lesson reworded: DUPLICATE
    (keeper.root / ".priors/ledger.jsonl").write_bytes(base)
    keeper.ok("suggest", "--ns", NS, "Ask the user before deleting files")
    base = keeper.ledger_bytes()
    _forge(keeper, base, "Never delete files without asking the user first, always ask the user", LESSON_DOOR)
    assert keeper("verify", "--no-git").code == 0  # (the measure calls these two different: a denial)
    _forge(keeper, base, "Always ask the user before you delete any files", LESSON_DOOR)
    r = keeper("verify", "--no-git", "--json")
    assert r.code == 1 and [p["code"] for p in json.loads(r.out)["problems"]] == ["DUPLICATE"], r


def test_a_ledger_sealed_before_door_5_replays_clean_but_a_change_adding_the_line_is_held_to_it(keeper):
    """A run an older keeper sealed (`door: 4`) was judged without the rule: the same reworded lesson in
    it is not named. A change that adds it is held to today's door whatever its seal says."""
    import subprocess

    _decided(keeper)
    old = keeper.ledger_bytes().replace(b'"door":%d' % DOOR, b'"door":4')
    _forge(keeper, old, SUITE_REWORDED, 4)
    assert keeper("verify", "--no-git").code == 0
    (keeper.root / ".priors/ledger.jsonl").write_bytes(old)
    keeper.ok("render")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=str(keeper.root), check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base", "--allow-empty")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "ledger")
    _forge(keeper, old, SUITE_REWORDED, 4)
    r = keeper("verify", "--since", "HEAD", "--json")
    assert r.code == 1 and [p["code"] for p in json.loads(r.out)["problems"]] == ["RERAISE"], r


def test_commit_judges_a_reworded_lesson_typed_into_staging(keeper):
    """Staging is untrusted: a lesson typed into `staged.jsonl` is judged again at commit, by meaning too."""
    _decided(keeper)
    run = keeper.open_run(NS, {})["run"]
    r = keeper.propose(run, NS, {"type": "calibration", "claim": "Ask the user before deleting files"})
    assert r.code == 0, r
    staged = keeper.root / ".priors/runs" / run / "staged.jsonl"
    line = json.loads(staged.read_text().splitlines()[0])
    staged.write_text(dumps(dict(line, claim=SUITE_REWORDED)) + "\n")
    before = keeper.ledger_bytes()
    r = keeper("commit", "--run", run)
    assert r.code == 1 and "RERAISE" in r.out and "P-0001" in r.out and "staged.jsonl" in r.out, r
    assert keeper.ledger_bytes() == before


def test_the_lookup_never_changes_the_answer():
    """`signature` is exact: claims whose signatures are disjoint have figure 0; and the replay's lookup
    (`LessonIndex.meeting`) finds every lesson a brute-force comparison finds alike — whichever lessons
    came before, so whichever keys are common — and every lesson that folds alike."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from priors.core.lesson_likeness import LessonIndex, signature
    from priors.core.similarity import SIMILAR_AT, claim_key, similarity

    words = ("run the full test suite before committing a change always never quote shell variables hard coded "
             "hardcoded unescaped escape swallows caught exceptions timeout hangs leaks closes file handle "
             "max_retries max retries retry backoff validate accepts input user ask delete files push main "
             "not without 80 443 port README docs").split()
    claim = st.lists(st.sampled_from(words), min_size=1, max_size=9).map(" ".join)

    class Lesson:
        def __init__(self, claim: str) -> None:
            self.claim = claim

    @settings(max_examples=400, deadline=None)
    @given(claim, st.lists(claim, min_size=1, max_size=12), st.integers(0, 12))
    def exact(a, others, first):
        index = LessonIndex()
        for c in others[:first]:  # (some filed before the rest: their keys counted when fewer were known)
            index.add(Lesson(c))  # type: ignore[arg-type]
        index.meeting(others[0])
        for c in others[first:]:
            index.add(Lesson(c))  # type: ignore[arg-type]
        met = {p.claim for p in index.meeting(a)}
        for c in others:
            if signature(a).isdisjoint(signature(c)):
                assert similarity(c, a) == 0.0, (a, c)
                assert c not in met
            elif claim_key(c) == claim_key(a) or max(similarity(c, a, polar=polar) for polar in (True, False)) >= SIMILAR_AT:
                assert c in met, (a, c)

    exact()


def test_the_bound_never_drops_a_lesson_the_measure_finds_similar():
    """`could_be_similar` is exact: whenever the measure gives two claims `SIMILAR_AT` or more (either way
    round, with or without `polar`), the bound says they could be — so skipping the measure on its word
    never changes which lesson the door or the replay names. Words chosen to reach every rule the measure
    has: related ideas, `un-` forms, compounds written as one word or two, names spelled out, numbers on
    one side or both, asides, issue words, negations, look-alike letters."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from priors.core.lesson_likeness import Likeness, could_be_similar
    from priors.core.letters import plain_letters
    from priors.core.lexicon import RELATED
    from priors.core.similarity import SIMILAR_AT, similarity

    words = (" ".join(RELATED) + " run the full test suite before committing always never quote shell variables "
             "hard coded hardcoded unescaped escape unvalidated validated swallows caught exceptions timeout time out "
             "hangs leaks closes file handle max_retries max retries retry backoff `max_retries` refund() Cart.total "
             "cart total e.g. 007 0 1 12 80 443 8080 not without instead of should use logging print data base "
             "database fails to flush flushes Never Don't Nevr Don\u02bct l\u043egging \u2014 , ; ( ) injection sql "
             "formatted case-sensitive lower-cased first last page").split()
    claim = st.lists(st.sampled_from(words), min_size=1, max_size=12).map(" ".join)

    @settings(max_examples=800, deadline=None)
    @given(claim, claim, st.booleans())
    def exact(a, b, mixed):
        if mixed:  # a rewording: some of a's words, shuffled, and some of its own
            b = " ".join(sorted(a.split(), key=len)[: max(1, len(a.split()) // 2)]) + " " + b
        figure = max(similarity(plain_letters(x), plain_letters(y), polar=polar)
                     for x, y in ((a, b), (b, a)) for polar in (False, True))
        if figure >= SIMILAR_AT:
            assert could_be_similar(Likeness(a), Likeness(b)), (a, b, figure)

    exact()


def test_the_bound_keeps_every_similar_pair_of_a_real_corpus():
    """The same (either way round, with or without `polar`), over every pair of the similarity corpus's
    claims (tests/data/similarity_corpus.json: pairs people judged alike and not), and it spares the
    measure for most pairs that differ."""
    from priors.core.lesson_likeness import Likeness, could_be_similar
    from priors.core.similarity import SIMILAR_AT, similarity

    corpus = json.loads((Path(__file__).parent / "data" / "similarity_corpus.json").read_text(encoding="utf-8"))
    claims: list = []

    def walk(x):
        if isinstance(x, str) and len(x.split()) > 2:
            claims.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(corpus)
    claims = sorted(set(claims))[:200]
    likes = [Likeness(c) for c in claims]
    spared = dissimilar = 0
    for i, a in enumerate(claims):
        for j in range(i):
            b = claims[j]
            alike = max(similarity(x.said, y.said, polar=polar) for x, y in ((likes[i], likes[j]), (likes[j], likes[i]))
                        for polar in (True, False)) >= SIMILAR_AT
            kept = could_be_similar(likes[i], likes[j])
            assert kept or not alike, (a, b)
            dissimilar += not alike
            spared += not kept
    assert spared > dissimilar // 2, (spared, dissimilar)


def test_the_bench_ledger_with_door_differs_only_in_its_seals_and_lessons(tmp_path):
    """`gen_ledger.py N DIR --door`: the same ledger line for line, but each seal names today's door and
    each lesson's claim is made of other words; `verify`'s replay then holds its runs to today's rules
    (lessons compared by meaning among them: a lesson reworded into a later run is named, and nothing
    else changes)."""
    from conftest import gen_ledger
    from priors.core.ledger_replay import replay

    gen = gen_ledger()
    gen.generate(600, tmp_path / "plain")
    gen.generate(600, tmp_path / "door", door=True)
    plain = (tmp_path / "plain" / ".priors" / "ledger.jsonl").read_bytes().splitlines()
    door = (tmp_path / "door" / ".priors" / "ledger.jsonl").read_bytes().splitlines()
    assert len(plain) == len(door)
    lessons = 0
    for a, b in zip(plain, door):
        ra, rb = json.loads(a), json.loads(b)
        if ra.get("t") == "run" and ra.get("action") == "commit":
            assert rb == dict(ra, door=DOOR)
        elif ra != rb:
            assert ra.get("t") == "prior" and ra["facets"]["activation"] == "run-start"
            assert {k: v for k, v in ra.items() if k != "claim"} == {k: v for k, v in rb.items() if k != "claim"}
            lessons += 1
    assert lessons > 50
    data = b"\n".join(door) + b"\n"
    before = {(p.line, p.code) for p in replay(data)}
    first = next(json.loads(line) for line in door if b'"run-start"' in line)
    # a reworded copy of the first lesson, in a run of its own sealed by today's door, at the end
    ns, n = first["ns"], len(door)
    copy = dict(first, id=f"P-{601:04d}", born="run-999", claim=first["claim"].upper() + " again")
    seal = {"t": "run", "action": "commit", "run": "run-999", "ns": ns, "summary": ["New this run: 1"], "door": DOOR}
    more = data + (dumps(copy) + "\n" + dumps(seal) + "\n").encode()
    named = [p for p in replay(more) if p.line == n + 1]
    assert named and named[0].code in ("DUPLICATE", "RERAISE") and first["id"] in named[0].message, named
    assert {(p.line, p.code) for p in replay(more)} - {(n + 1, named[0].code)} == before


def test_the_mcp_tool_passes_distinct_from_and_answers_the_refusal(keeper):
    """`priors_lessons` `propose` with `distinct_from`, through the MCP server: the same door as `suggest`."""
    from test_mcp import INITIALIZED, _call, _init, serve

    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, QUOTE)
    replies, _err, code = serve(keeper.root, [
        _init(), INITIALIZED,
        _call(1, "priors_lessons", {"action": "propose", "ns": NS, "text": QUOTE_REWORDED}),
        _call(2, "priors_lessons", {"action": "propose", "ns": NS, "text": QUOTE_REWORDED, "distinct_from": ["P-0001"]}),
        _call(3, "priors_lessons", {"action": "propose", "ns": NS, "text": "x y z", "distinct_from": ["seven"]})])
    assert code == 0
    first, second = (r["result"] for r in replies[1:3])
    assert first["isError"] and '"refused":"DUPLICATE"' in first["content"][0]["text"], first
    assert "the lessons tool's `revise` with id P-0001" in first["content"][0]["text"], first
    assert not second["isError"] and second["structuredContent"]["id"] == "P-0002", second
    assert replies[3]["error"]["code"] == -32602 and "--distinct-from 'seven'" in replies[3]["error"]["message"]
    assert keeper.ledger()[-3]["distinct_from"] == ["P-0001"]


def test_a_split_replay_names_another_namespace_s_rewording_as_the_whole_one_does(keeper):
    """`verify` splits its replay by namespace on a large ledger (forced here): the half judging `docs`
    still knows the person's lesson of `code-review` that a lesson typed into `docs` rewords."""
    _decided(keeper)
    keeper.ok("suggest", "--ns", "docs", "Link every page from the index.")
    base = keeper.ledger_bytes()
    lesson = next(r for r in keeper.ledger() if r.get("t") == "prior")
    prior = dict(lesson, id="P-0009", claim=SUITE_REWORDED, born="run-009", ns="docs")
    seal = {"t": "run", "action": "commit", "run": "run-009", "ns": "docs", "via": "suggest", "door": DOOR,
            "summary": ["Suggested by an agent: P-0009 (a new lesson) — open, awaiting your review"]}
    lines = [prior, {"t": "injected", "run": "run-009", "ids": []}, seal]
    (keeper.root / ".priors/ledger.jsonl").write_bytes(base + "".join(dumps(r) + "\n" for r in lines).encode())
    keeper.ok("render")
    code, problems = _verify_both_ways(keeper)
    assert code == 1 and problems == [("RERAISE", base.count(b"\n") + 1)], problems


def test_retiring_a_lesson_names_an_agent_lesson_said_to_differ_from_it(keeper):
    """Hostile pass 27t: an agent's lesson that named an agent's open lesson in `distinct_from` (its word
    that it says something else, which sets an agent's lesson aside) stays given to runs when the person
    retires that lesson — though it may say the same. A parallel branch cut before the
    person's decision lets an agent write one at any time: the merge marks its run as not having seen
    the decision, and verify sends the person to `status --calls`. So `decide` names it, and
    `status --calls` says which of the person's decisions it claims to differ from."""
    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, QUOTE)
    keeper.ok("suggest", "--ns", NS, "--distinct-from", "P-0001", QUOTE_REWORDED)
    keeper.ok("suggest", "--ns", NS, "Ask the user before deleting files")  # P-0003: says nothing of P-0001
    out = keeper.ok("decide", "P-0001", "obsolete", "--because", "no shell any more")
    assert ("P-0002 (an agent's lesson, open, that says it differs from P-0001) is still given to runs — if it"
            " says the same, retire it too: priors decide P-0002 obsolete") in out, out
    assert "P-0003" not in out
    calls = keeper.ok("status", "--calls")
    assert (f"(the agent says it differs from P-0001, which you retired: {QUOTE!r})") in calls, calls
    asks = {a["id"]: a for a in json.loads(keeper.ok("status", "--calls", "--json"))["calls"]}
    assert asks["P-0002"]["differs_from_decided"] == [{"id": "P-0001", "status": "obsolete", "claim": QUOTE}]
    assert "differs_from_decided" not in asks["P-0003"]
    keeper.ok("suggest", "--ns", NS, "Write commit messages in the imperative")  # P-0004
    assert "differs" not in keeper.ok("decide", "P-0004", "wontfix", "--because", "no")


def test_look_alike_letters_do_not_carry_a_retired_lesson_past_the_door(keeper):
    """Hostile pass 27t: a retired lesson copied with Cyrillic or Greek look-alike letters, or in full-width
    forms, reads the same to a model and a person; lessons are compared as they read (`plain_letters`)."""
    _decided(keeper)
    cyrillic = "Alw\u0430ys qu\u043ete the shell v\u0430ri\u0430bles in y\u043eur scripts"
    fullwidth = "\uff31\uff55\uff4f\uff54\uff45 shell variables in scripts"
    accents = "Alw\u00e1ys q\u00fc\u00f6t\u00e9 th\u00e9 sh\u00e9ll v\u00e0ri\u00e0bl\u00e9s in y\u00f6ur scr\u00efpts"
    small_caps = "\u1d00\u029f\u1d21\u1d00\u028f\ua731 quote the shell variables in your scr\u026a\u1d18\u1d1b\ua731"
    dotless = "Always quote the shell var\u0131ables \u0131n your scr\u0131pts"
    for claim in (cyrillic, fullwidth, accents, small_caps, dotless):
        body = keeper.refused("RERAISE", "suggest", "--ns", "web", claim)
        assert (body["of"], body["status"]) == ("P-0002", "obsolete"), body
    base = keeper.ledger_bytes()
    _forge(keeper, base, cyrillic, LESSON_DOOR)
    r = keeper("verify", "--no-git", "--json")
    assert r.code == 1 and [p["code"] for p in json.loads(r.out)["problems"]] == ["RERAISE"], r


def test_a_chain_of_open_revisions_does_not_reach_past_a_lesson_the_person_retired(keeper):
    """Hostile pass 27u: P-0002, an open revision of P-0001, stood when the person retired P-0001 outright —
    it did not replace it. A revision of P-0002 rewording P-0001 is held to P-0001 like any other lesson."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, "Always run the full test suite before committing to the main branch")
    keeper.ok("suggest", "--revises", "P-0001", "Run the whole test suite before every commit to main, including slow tests")
    keeper.ok("decide", "P-0001", "obsolete", "--because", "CI runs it")
    body = keeper.refused("RERAISE", "suggest", "--revises", "P-0002",
                          "Always run the complete test suite before committing to the main branch")
    assert (body["of"], body["status"]) == ("P-0001", "obsolete"), body


def test_a_lesson_that_reads_as_blank_is_refused(keeper):
    """Hostile pass 27u: a lesson of combining marks, a zero-width space or a Hangul filler was injected as
    an empty line. `suggest`, `add` and a run's `propose` refuse it (exit 2), nothing written."""
    keeper.ok("init")
    before = keeper.ledger_bytes()
    for text in ("\u0301\u0301", "\u200b", "\u3164", "\u3164 \u0301"):
        assert "no letter or digit a reader would see" in keeper.usage("suggest", "--ns", NS, text)
        assert "no letter or digit a reader would see" in keeper.usage("add", "--ns", NS, text)
    assert keeper.ledger_bytes() == before
    run = keeper.open_run(NS, {})["run"]
    r = keeper.propose(run, NS, {"type": "calibration", "claim": "\u3164"})
    assert r.code == 2 and "no letter or digit" in (r.out + r.err), r
    keeper.ok("abort", "--run", run)
    keeper.ok("suggest", "--ns", "web", "Ask first")  # (a short lesson is fine)


SLEEP = "Don't use sleep in tests to wait for async work"
SECRETS = "Never commit secrets or API keys to the repository"


def test_a_person_s_lesson_is_met_whatever_the_candidate_denies(keeper):
    """Hostile pass 27v: a misspelt or look-alike negation (`Nevr`, `Donʼt` with U+02BC, `Do n0t`) or a
    second one (`…, no exceptions`) read as the denial of a retired lesson, which capped the figure, and the
    lesson came back. From door 6 a person's lesson is met whatever the candidate denies — its opposite
    too, which only the person may say: an accepted lesson's denial is not an agent's lesson."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, SLEEP)
    keeper.ok("add", "--ns", NS, SECRETS)
    keeper.ok("add", "--ns", NS, "Always run the full test suite before pushing changes")
    keeper.ok("decide", "P-0001", "obsolete", "--because", "we need it for the timers")
    keeper.ok("decide", "P-0002", "obsolete", "--because", "the pre-commit hook does it")
    before = keeper.ledger_bytes()
    for claim, of in (("Don\u02bct use sleep in tests to wait for async work", "P-0001"),
                      ("Do n0t use sleep in tests to wait for async work", "P-0001"),
                      ("Dnot use sleep in tests to wait for async work", "P-0001"),
                      ("Dont use sleep in tests to wait for async work (no exceptions)", "P-0001"),
                      ("Nevr commit secrets or API keys to the repository", "P-0002"),
                      ("Nev3r commit secrets or API keys to the repository", "P-0002"),
                      ("Ne\u0475er commit secrets or API keys to the repository", "P-0002"),
                      (SECRETS + ", not even in tests", "P-0002"),
                      ("Never run the full test suite before pushing changes", "P-0003")):
        body = keeper.refused("RERAISE", "suggest", "--ns", NS, claim)
        assert body["of"] == of and "or denies it: only a person reverses their decision" in body["hint"], (claim, body)
    assert keeper.ledger_bytes() == before
    base = keeper.ledger_bytes()
    for door, code in ((DOOR, 1), (LESSON_DOOR, 1), (None, 1)):  # after a door-6 seal, every later run is held to it
        _forge(keeper, base, "Nevr commit secrets or API keys to the repository", door)
        assert keeper("verify", "--no-git").code == code, door
    old = base.replace(b'"door":%d' % DOOR, b'"door":%d' % LESSON_DOOR)  # a ledger sealed by door 5: clean
    _forge(keeper, old, "Nevr commit secrets or API keys to the repository", LESSON_DOOR)
    assert keeper("verify", "--no-git").code == 0
    _forge(keeper, old, "Nevr commit secrets or API keys to the repository", DOOR)  # a run sealed by door 6: named
    r = keeper("verify", "--no-git", "--json")
    assert r.code == 1 and [p["code"] for p in json.loads(r.out)["problems"]] == ["RERAISE"], r


def test_a_person_s_lesson_is_the_refusal_given_before_an_agent_s(keeper):
    """Newcomer pass 27w: a candidate like an agent's revision and like the person's lesson it revises was
    refused DUPLICATE of the agent's, whose hint (`--distinct-from`) led only to the person's RERAISE."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, "Always pin dependency versions in requirements files.")
    keeper.ok("decide", "P-0001", "wontfix", "--because", "binding as it stands")
    keeper.ok("suggest", "--revises", "P-0001", "Always pin dependency versions in requirements and lock files.")
    body = keeper.refused("RERAISE", "suggest", "--ns", NS, "Pin dependency versions in lock files too.")
    assert (body["of"], body["status"]) == ("P-0001", "wontfix"), body


def test_a_retired_lesson_is_not_revised(keeper):
    """Newcomer pass 27w: any lesson could be attached to a retired one as its "revision" (and shown so)."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, "Never mock the database in integration tests.")
    keeper.ok("decide", "P-0001", "obsolete", "--because", "we use a container now")
    before = keeper.ledger_bytes()
    err = keeper.usage("suggest", "--revises", "P-0001", "Prefer small focused commits with clear messages.")
    assert "a lesson a person retired: there is nothing to revise — suggest yours as a lesson of its own" in err, err
    run = keeper.open_run(NS, {})["run"]
    r = keeper.propose(run, NS, {"type": "calibration", "claim": "Prefer small commits.", "supersedes": "P-0001"})
    assert r.code == 2 and "a lesson a person retired" in r.err, r
    keeper.ok("abort", "--run", run)
    assert keeper.ledger_bytes() == before
    keeper.ok("add", "--ns", NS, "--supersedes", "P-0001", "Mock nothing but the network.")  # a person may
    assert keeper("verify", "--no-git").code == 0
    # typed into the ledger: named from door 6, clean in a run sealed by door 5
    base = keeper.ledger_bytes()
    lesson = next(r for r in keeper.ledger() if r.get("id") == "P-0001" and r.get("t") == "prior")
    for door, code in ((DOOR, 1), (LESSON_DOOR, 0)):
        head = base if door == DOOR else base.replace(b'"door":%d' % DOOR, b'"door":%d' % LESSON_DOOR)
        prior = dict({k: v for k, v in lesson.items() if k != "by"}, id="P-0009", claim="Prefer small focused commits.",
                     born="run-009", supersedes="P-0001")  # (an agent's line names no author)
        seal = {"t": "run", "action": "commit", "run": "run-009", "ns": NS, "via": "suggest", "door": door,
                "summary": ["Suggested by an agent: P-0009 (a revision of P-0001) — open, awaiting your review"]}
        lines = [prior, {"t": "injected", "run": "run-009", "ids": []}, seal]
        (keeper.root / ".priors/ledger.jsonl").write_bytes(head + "".join(dumps(x) + "\n" for x in lines).encode())
        keeper.ok("render")
        r = keeper("verify", "--no-git", "--json")
        assert r.code == code, (door, r)
        if code:
            assert [p["code"] for p in json.loads(r.out)["problems"]] == ["SUPERSEDES_NOT_LESSON"], r


def test_status_calls_says_where_an_open_revision_is_given(keeper):
    """Newcomer pass 27w: `status --calls` said a revision was "injected as advice" while sessions held it
    back (a session is given one version of a lesson), and "given to runs in its place" of a retired lesson
    while `require_review` held it back."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, "Always pin dependency versions in requirements files.")
    keeper.ok("decide", "P-0001", "wontfix", "--because", "binding as it stands")
    said = keeper.ok("suggest", "--revises", "P-0001", "Always pin dependency versions in requirements and lock files.")
    assert said.splitlines()[1:] == ["  priors decide P-0002 accepted", "  priors decide P-0002 accepted --retires P-0001",
                                     "  priors decide P-0002 obsolete"], said  # as `status --calls` offers them
    assert "accepting it leaves P-0001 in force unless they name it" in said.splitlines()[0]
    line = next(x for x in keeper.ok("status", "--calls").splitlines() if x.startswith("  ? P-0002"))
    assert "held back while P-0001 is given (a run or session is given one version of a lesson)" in line
    assert json.loads(keeper.ok("lessons", "--inject", "--peek", "--json"))["awaiting_review"] == ["P-0002"]
    given = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))  # (hostile pass 27aq: runs too)
    assert ([i["id"] for i in given["inject"]], given["awaiting_review"]) == (["P-0001"], ["P-0002"]), given
    keeper.ok("commit", "--run", given["run"])
    assert keeper.ledger()[-2] == {"t": "injected", "run": given["run"], "ids": ["P-0001"]}  # what the run was given
    keeper.ok("suggest", "--ns", NS, "Prefer small focused commits.")  # P-0003, an agent's
    keeper.ok("suggest", "--revises", "P-0003", "Prefer small focused commits with clear messages.")  # P-0004
    keeper.ok("config", "require_review", "on")
    keeper.ok("decide", "P-0003", "obsolete", "--because", "squash on merge")
    line = next(x for x in keeper.ok("status", "--calls").splitlines() if x.startswith("  ? P-0004"))
    assert ("a proposed lesson, not injected until you accept it (it revises P-0003 'Prefer small focused commits.',"
            " which you retired)") in line, line
    assert "given to runs" not in line


def test_import_skips_a_lesson_that_reads_like_one_a_person_retired(keeper):
    """A bundle (a file anyone can hand the person) brought a rewording of a retired lesson back, open and
    injected (hostile passes 27u, 27v). `import` skips it, saying which lesson and what to do; a lesson
    like one the person accepted may still be copied into another namespace."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, SLEEP)  # P-0001
    keeper.ok("add", "--ns", NS, "Prefer small focused commits")  # P-0002
    keeper.ok("export", "--ns", NS, "-o", "bundle.json")
    keeper.ok("decide", "P-0001", "obsolete", "--because", "we need it for the timers")
    bundle = json.loads((keeper.root / "bundle.json").read_text())
    said = [x["claim"] for x in bundle["lessons"]]
    assert said == [SLEEP, "Prefer small focused commits"], bundle
    bundle["lessons"][0]["claim"] = "Dont use sleep calls in tests to wait for async work, no exceptions"
    (keeper.root / "bundle.json").write_text(json.dumps(bundle))
    for ns in (NS, "web"):
        out = keeper.ok("import", "bundle.json", "--ns", ns)
        assert "skipped lessons[0] (it reads like P-0001, which a person retired" + (f" in {NS}" if ns != NS else "") \
            in out and "if it is meant, `priors add` it)" in out, out
    given = json.loads(keeper.ok("lessons", "--inject", "--peek", "--json"))
    assert [x["claim"] for x in given["inject"]] == ["Prefer small focused commits"] * 2, given  # (web's copy)
    assert all("sleep" not in str(r.get("claim")) or r.get("id") == "P-0001" for r in keeper.ledger()), keeper.ledger()
    assert keeper("verify", "--no-git").code == 0
    # a copy of a person's standing lesson is taken, even where it reversed one they retired (hostile pass 27ag)
    keeper.ok("add", "--ns", NS, "--supersedes", "P-0001", "Use sleep in tests to wait for async work")  # P-0005
    bundle["lessons"] = [dict(bundle["lessons"][1], claim="Use sleep in tests to wait for async work"),
                         dict(bundle["lessons"][1], claim="Always run the tests before committing, not after")]
    (keeper.root / "bundle.json").write_text(json.dumps(bundle))
    out = keeper.ok("import", "bundle.json", "--ns", "docs")
    assert "imported 2 lessons into docs" in out and "skipped" not in out, out
    calls = keeper.ok("status", "--calls")  # no agent proposed them: the person imported them (hostile pass 27ag)
    assert "a lesson imported from a bundle: injected as advice until you decide" in calls, calls
    assert "a lesson an agent proposed" not in calls, calls


def test_status_calls_shows_the_agent_s_lesson_another_says_it_differs_from(keeper):
    """Newcomer pass 27z: a near copy of an agent's open lesson, let in by `--distinct-from`, reached the person
    as a plain proposal; `show` called lessons "findings"."""
    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, "Run mypy on the touched package before you push.")  # P-0001
    keeper.refused("DUPLICATE", "suggest", "--ns", NS, "Run mypy on the touched package before you push!")
    keeper.ok("suggest", "--ns", NS, "--distinct-from", "P-0001", "Run mypy on the changed package before pushing.")
    line = next(x for x in keeper.ok("status", "--calls").splitlines() if x.startswith("  ? P-0002"))
    assert ("(the agent says it differs from P-0001, an agent's lesson, open: 'Run mypy on the touched package before"
            " you push.')") in line, line
    assert "(the agent said this differs from those lessons, which the door found alike or nearby)" in keeper.ok("show", "P-0002")


def test_a_lesson_saying_what_a_person_s_decided_finding_says_is_a_reraise(keeper):
    """Hostile pass 27ah: the claim of a finding a person marked `wontfix`, suggested as a lesson (a
    calibration lesson is repo-wide, so it never met the finding on its scope), was staged and then given
    to every run — the settled finding back before every agent. From door 7 a lesson is held to a
    person's decided finding with its claim (case and punctuation aside), in any namespace: the door
    refuses it, commit judges it again in staging, verify names it typed into a run sealed door 7 — not in
    a run an older keeper sealed, which was judged without the rule."""
    from priors.core.vocabulary import DECIDED_FINDING_DOOR

    assert DOOR >= DECIDED_FINDING_DOOR == 7
    keeper.write("src/app.py", "def total(items):\n    return sum(items)\n")
    keeper.ok("init")
    run = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))["run"]
    claim = "total() ignores discounts on items"
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": claim, "scope_ref": "src/app.py#total"}),
              "--run", run, "--ns", NS)
    keeper.ok("commit", "--run", run)
    keeper.ok("decide", "P-0001", "wontfix", "--because", "discounts are applied upstream")
    for ns, text in ((NS, claim), ("other", "Total() ignores discounts on items!"),
                     (NS, "total() ign\u043ere\u0455 discounts on items")):  # (look-alike letters: hostile pass 27aj)
        r = keeper("suggest", "--ns", ns, text)
        assert r.code == 1 and "RERAISE" in r.out and "P-0001" in r.out and "decided this as a finding" in r.out, r
        run = json.loads(keeper.ok("relevant", "--ns", ns, "--snapshot"))["run"]
        r = keeper.propose(run, ns, {"type": "calibration", "claim": text})
        assert r.code == 1 and "RERAISE" in r.out and "P-0001" in r.out, r
        keeper.ok("abort", "--run", run)
    assert [p["id"] for p in keeper.ledger() if p.get("t") == "prior"] == ["P-0001"]
    # typed into staging: commit judges it again
    run = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))["run"]
    keeper.ok("propose", keeper.candidate({"type": "calibration", "claim": "Ask the user before deleting files"}),
              "--run", run, "--ns", NS)
    staged = keeper.root / ".priors/runs" / run / "staged.jsonl"
    line = json.loads(staged.read_text().splitlines()[0])
    staged.write_text(dumps(dict(line, claim=claim)) + "\n")
    before = keeper.ledger_bytes()
    r = keeper("commit", "--run", run)
    assert r.code == 1 and "RERAISE" in r.out and "P-0001" in r.out, r
    assert keeper.ledger_bytes() == before
    keeper.ok("abort", "--run", run)
    # typed into the ledger: named in a run sealed door 7, not in one sealed door 6
    for named, r in _typed_lesson_named(keeper, {"claim": claim}, DECIDED_FINDING_DOOR):
        assert ("a finding a person made wontfix (on src/app.py#total)" in r.out) == named, r


def _typed_lesson_named(keeper, fields, door):
    """A lesson (`fields` over an agent's calibration lesson P-0009) typed into the ledger in a run sealed
    `door`, then in one sealed the door before: (whether verify should name it, verify's result) for each,
    after checking it names the line RERAISE in the first and nothing in the second. A later run is held
    to the newest door before it, so the ledger's own seals are set to the door under test."""
    base = keeper.ledger_bytes()
    lesson = {"t": "prior", "id": "P-0009", "born": "run-009", "ns": NS, "type": "calibration",
              "facets": {"activation": "run-start", "authority": "advisory", "lifecycle": "only-by-supersession",
                         "obligation": "inject-as-instruction", "scope": "repo-wide"}, **fields}
    out = []
    for at, named in ((door, True), (door - 1, False)):
        old = base.replace(b'"door":%d' % DOOR, b'"door":%d' % at)
        seal = {"t": "run", "action": "commit", "run": "run-009", "ns": NS, "via": "suggest", "door": at,
                "summary": ["Suggested by an agent: P-0009 (a new lesson) — open, awaiting your review"]}
        (keeper.root / ".priors/ledger.jsonl").write_bytes(
            old + "".join(dumps(r) + "\n" for r in (lesson, {"t": "injected", "run": "run-009", "ids": []}, seal)).encode())
        keeper.ok("render")
        r = keeper("verify", "--no-git", "--json")
        problems = [(p["code"], p["line"]) for p in json.loads(r.out)["problems"]]
        assert problems == ([("RERAISE", old.count(b"\n") + 1)] if named else []), (at, r)
        out.append((named, r))
    return out


def test_verify_reads_a_lesson_typed_by_hand_with_the_mark_the_reading_uses(keeper):
    """Hostile pass 27ao: `reading.read` marks a lifted identifier as U+0001, its number, U+0001. A lesson
    claim typed into the ledger holding that very text (no door lets a control character in; another keeper
    or a hand edit can) made `verify` fail with an unexpected IndexError (exit 3) instead of judging it."""
    from priors.core.lesson_likeness import Likeness
    from priors.core.similarity import similarity

    odd = "Always run the full test suite \x0199\x01 before committing"
    assert similarity(odd, SUITE) >= 0.45 and Likeness(odd).weights
    _decided(keeper)
    base = keeper.ledger_bytes()
    _forge(keeper, base, odd, DOOR)
    r = keeper("verify", "--no-git", "--json")
    assert r.code == 1 and [p["code"] for p in json.loads(r.out)["problems"]] == ["RERAISE"], r


def test_a_claim_of_many_numbers_reads_in_linear_time():
    """Hostile pass 27ao: `reading.example` walked back over the run of numbers before each number, so a
    lesson of 50,000 numbers typed into the ledger took `verify` 150 s (quadratic). Where each run starts
    is worked out once a claim now — with the same answer as the walk for every number, and the same
    reading of a long run of numbers as the walk gives (the time is the benchmarks' to measure, not a
    test's: ~25 s before for 30,000 numbers, ~0.2 s after)."""
    import random

    from priors.core import reading
    from priors.core.reading import _cued, _word_before_numbers, example, read

    rng = random.Random(27)
    for _ in range(2000):
        words = [rng.choice(("e", "g", "i", "such", "as", "like", "port", "7", "80", "0123", "x")) for _ in range(12)]
        lasts = _word_before_numbers(words)
        assert all(_cued(words, lasts[k]) == example(words, k) for k in range(len(words))), words
    claim = "such as " + " ".join(str(k) for k in range(1, 400)) + " port 80 e.g. 7 8"
    read.cache_clear()
    fast = read(claim).items
    walked = []
    real = reading._word_before_numbers
    try:  # every number asked of the walk, as before
        reading._word_before_numbers = lambda words: []  # type: ignore[assignment]
        read.cache_clear()
        walked = read(claim).items
    finally:
        reading._word_before_numbers = real  # type: ignore[assignment]
        read.cache_clear()
    assert fast == walked and fast


def test_a_name_of_many_parts_reads_as_before_in_linear_time(monkeypatch):
    """Hostile pass 27ao: a dotted or snake_case name of 20,000 parts (`a.b.a.b…`, typed into the ledger)
    took `read` ~8 s — every ending of the name was joined to ask the lexicon whether it is a word. No
    ending longer than the lexicon's longest word is one, so only those are joined now: the same terms
    as joining every ending (here, with the cut-off lifted), for names built from the lexicon's own words."""
    import random

    from priors.core import reading
    from priors.core.lexicon import WORDS

    rng = random.Random(2702)
    words = sorted(WORDS)
    pieces = [w for w in words if len(w) <= 12] + ["a", "b", "x", "7", "get", "max", "digest", "compare"]
    names = []
    for _ in range(600):
        parts = [rng.choice(pieces) for _ in range(rng.randint(2, 14))]
        names.append(rng.choice((".", "_")).join(parts))
    names += ["hmac.compare_digest", "a.b." * 50 + "c", "run_" * 60 + "x"]
    fast = [reading._ident(n, frozenset()) for n in names]
    monkeypatch.setattr(reading, "_LONGEST", 10 ** 9)  # every ending joined, as before
    assert [reading._ident(n, frozenset()) for n in names] == fast


NEVER_LOG = "Never log user email addresses in plain text"
ALWAYS_LOG = "Always log user email addresses in plain text"


def test_a_revision_may_refine_a_person_s_lesson_but_never_deny_it(keeper):
    """Hostile pass 27aq: a revision (`supersedes`) was exempt from the comparison with the lesson it
    revises, a person's included, so "Always …" as a revision of a person's accepted "Never …" was
    staged, verified clean and given to every run beside it. From door 8 a revision of a lesson a
    person accepted or set as wontfix — or of one an open revision of it stands in for — is RERAISE
    (`denies`) where it says the opposite; a revision that rewords or refines it is still let in.
    Through `suggest --revises`, `propose`'s `supersedes`, a hand-edited staging and the ledger itself
    (named in a run sealed door 8, not in one sealed door 7). A denial the door does not read as one
    (`Never prefer …` beside `Prefer …`) still never reaches a run beside the lesson: an open revision
    waits while the lesson it revises is given (`selection.one_version`)."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, NEVER_LOG)  # P-0001: accepted
    keeper.ok("suggest", "--ns", NS, "Keep functions small and focused")  # P-0002
    keeper.ok("decide", "P-0002", "wontfix", "--because", "binding as it is")
    for pid, denial in (("P-0001", ALWAYS_LOG), ("P-0001", "Log user email addresses in plain text"),
                        ("P-0002", "Do not keep functions small and focused")):
        body = keeper.refused("RERAISE", "suggest", "--ns", NS, "--revises", pid, denial)
        assert (body["of"], body["denies"]) == (pid, True), body
        assert "your revision of it says the opposite" in body["hint"] and f"priors decide {pid} obsolete" in body["hint"]
    # a revision that refines it is what a revision is for
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0001", NEVER_LOG + ", nor hashed")  # P-0003
    # an open revision stands in for the person's lesson: a revision of it may not deny P-0001 either
    body = keeper.refused("RERAISE", "suggest", "--ns", NS, "--revises", "P-0003", ALWAYS_LOG)
    assert (body["of"], body["denies"]) == ("P-0001", True), body
    run = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))["run"]
    r = keeper("propose", keeper.candidate({"type": "calibration", "claim": ALWAYS_LOG, "supersedes": "P-0001"}),
               "--run", run, "--ns", NS)
    assert r.code == 1 and json.loads(r.out)["denies"] is True, r
    # typed into staging: commit judges it again
    keeper.ok("propose", keeper.candidate({"type": "calibration", "claim": "Name tests after what they prove"}),
              "--run", run, "--ns", NS)
    staged = keeper.root / ".priors/runs" / run / "staged.jsonl"
    line = json.loads(staged.read_text().splitlines()[0])
    staged.write_text(dumps(dict(line, claim=ALWAYS_LOG, supersedes="P-0001")) + "\n")
    before = keeper.ledger_bytes()
    r = keeper("commit", "--run", run)
    assert r.code == 1 and "RERAISE" in r.out and "P-0001" in r.out, r
    assert keeper.ledger_bytes() == before
    keeper.ok("abort", "--run", run)
    given = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert ALWAYS_LOG not in json.dumps(given), given
    keeper.ok("abort", "--run", given["run"])
    # typed into the ledger: named in a run sealed door 8, not in one sealed door 7
    for named, r in _typed_lesson_named(keeper, {"claim": ALWAYS_LOG, "supersedes": "P-0001"}, DOOR):
        assert ("prior P-0009 denies P-0001 in a revision of it" in r.out) == named, r


def test_door_8_is_today_s_door():
    from priors.core.vocabulary import REVISION_DOOR

    assert DOOR == REVISION_DOOR == 8


def test_a_revision_waits_while_a_lesson_it_revises_through_a_retired_one_is_given(keeper):
    """Hostile pass 27ar: an open revision waited only while the very lesson it names was given. A
    revision of an agent's revision of a person's lesson was let in as a version of that lesson; once
    the person retired the middle one outright, it went to every run and session beside the lesson it
    denies ("now given to runs in its place"). It now waits while any lesson along its `supersedes`
    chain is given, and `decide` and `status --calls` say so. Nor does an agent's `review_every` on its
    held revision put its words into a run as a nudge, or before a person as a lesson due for review."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, NEVER_LOG)  # P-0001, accepted
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0001", NEVER_LOG + ", nor hashed")  # P-0002
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0002", ALWAYS_LOG + "; never log passwords")  # P-0003
    said = keeper.ok("decide", "P-0002", "obsolete", "--because", "hashing is fine")
    assert ("P-0003 (an agent's revision of P-0002, open) still waits while P-0001, which P-0002 revised, is given"
            in said), said
    line = _p3_held_beside_p1(keeper, "abort")
    assert "held back while P-0001 is given" in line and "given to runs in its place" not in line, line
    # once the person retires P-0001 as well, nothing holds P-0003 back: it is a lesson of its own
    keeper.ok("decide", "P-0001", "obsolete", "--because", "we log nothing of users any more")
    given = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert [i["id"] for i in given["inject"]] == ["P-0003"] and "awaiting_review" not in given, given
    keeper.ok("abort", "--run", given["run"])


def test_an_agent_s_review_every_on_its_held_revision_asks_nothing(keeper):
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, NEVER_LOG)
    run = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))["run"]
    r = keeper.propose(run, NS, {"type": "calibration", "claim": "You must log user email addresses in plain text",
                                 "supersedes": "P-0001", "review_every": 1})
    assert r.code == 0, r
    keeper.ok("commit", "--run", run)
    for _ in range(2):
        given = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
        keeper.ok("commit", "--run", given["run"])
    assert (given["awaiting_review"], given["nudges"]) == (["P-0002"], []), given
    calls = keeper.ok("status", "--calls")
    line = next(x for x in calls.splitlines() if x.startswith("  ? P-0002"))
    assert "due for review" not in line and "held back while P-0001 is given" in line, calls
    assert "priors decide P-0002 keep" not in calls, calls


def test_a_refinement_is_no_denial_and_a_rival_revision_is_named_when_another_is_chosen(keeper):
    """Newcomer pass 27as: door 8 refused `Mask user email addresses before logging them` as a denial
    of `Never log user email addresses in plain text` (the reading sees `logging` on the other side of
    a `never`): a revision denies a person's lesson only when it says nearly all of it (0.85 as
    though neither denied anything). And a person choosing one of two revisions (`decide … accepted
    --retires`, `add --supersedes`) put the other before every run beside it without a word; the report
    said a held revision was "injected as advice"."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, NEVER_LOG)  # P-0001
    for refinement in ("Mask user email addresses before logging them",  # P-0002
                       "Redact user email addresses before writing log lines"):  # P-0003
        keeper.ok("suggest", "--ns", NS, "--revises", "P-0001", refinement)
    keeper.refused("RERAISE", "suggest", "--ns", NS, "--revises", "P-0001", NEVER_LOG.replace("Never log", "Log"))
    keeper.ok("report", "-o", "r.html")
    page = keeper.read("r.html")
    assert "held back while P-0001 is given" in page and "injected as advice" not in page
    said = keeper.ok("decide", "P-0003", "accepted", "--retires", "P-0001")
    assert ("P-0002 (an agent's other revision of P-0001, open) is now given to runs and sessions beside P-0003 — if"
            " P-0003 answers it, retire it: priors decide P-0002 obsolete") in said, said
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0003", "Keep a list of the log lines that may hold user data")  # P-0004
    said = keeper.ok("add", "--ns", NS, "--supersedes", "P-0003", "Never write user email addresses to any log")
    assert "P-0004 (an agent's other revision of P-0003, open) is now given to runs and sessions beside P-0005" in said


def test_a_revision_past_a_redacted_link_still_waits_and_verify_stays_clean(keeper):
    """Hostile pass 27at: a person's redaction of the middle of a chain of revisions dropped its
    `supersedes` (a tombstone keeps no more), so the chain walk stopped there: an agent's "Always log …"
    revision went to every run and session beside the person's "Never log …", and `verify` named the
    line the keeper wrote as a re-raise. It now waits for a person (its chain cannot be followed past the
    tombstone), `status --calls` says why, and the replay sets aside what the door set aside."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, NEVER_LOG)
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0001", NEVER_LOG + ", nor hashed")
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0002", ALWAYS_LOG + "; never log passwords")  # held, not refused
    keeper.ok("redact", "P-0002", "--because", "pasted a customer address")
    line = _p3_held_beside_p1(keeper, "commit")
    assert "held back (it revises P-0002, since redacted" in line and "retires P-0002" not in line, line
    assert keeper("verify", "--no-git").code == 0


def test_messages_name_the_lesson_that_is_given_and_a_rival_still_held(keeper):
    """Hostile pass 27at: along P-0001 (a person's) ← P-0002 ← P-0003, `status --calls` said P-0003 waited
    while P-0002 was given — P-0002 is held itself; and choosing one of two revisions of P-0002 said the
    other was "now given" while P-0001 still held it. A hand-edited `supersedes` that is no id made
    `status --calls` and `report` fail."""
    keeper.ok("init")
    keeper.ok("add", "--ns", NS, NEVER_LOG)
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0001", NEVER_LOG + ", nor hashed")  # P-0002
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0002", NEVER_LOG + ", nor hashed, nor encrypted")  # P-0003
    keeper.ok("suggest", "--ns", NS, "--revises", "P-0002",
              "Never log user email addresses or phone numbers in plain text, nor hashed")  # P-0004
    line = next(x for x in keeper.ok("status", "--calls").splitlines() if x.startswith("  ? P-0003"))
    assert "held back while P-0001 is given" in line, line
    said = keeper.ok("decide", "P-0003", "accepted", "--retires", "P-0002")
    assert "P-0004 (an agent's other revision of P-0002, open) still waits while P-0001, which P-0002 revised, is given" \
        in said, said
    assert json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))["awaiting_review"] == ["P-0004"]  # (P-0003: accepted)
    ledger = keeper.root / ".priors/ledger.jsonl"
    lines = ledger.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if '"id":"P-0004"' in x and '"t":"prior"' in x)
    lines[at] = lines[at].replace('"supersedes":"P-0002"', '"supersedes":["P-0002"]')
    ledger.write_text("\n".join(lines) + "\n")
    keeper.ok("status", "--calls")
    keeper.ok("report", "-o", "r.html")


def test_the_chain_walk_answers_alike_with_and_without_what_it_learned():
    from priors.core.fold import State, apply
    from priors.core.inject import given_in_chain

    st = State()
    facets = {"activation": "run-start", "authority": "advisory", "lifecycle": "only-by-supersession",
              "obligation": "inject-as-instruction", "scope": "repo-wide"}
    apply(st, {"t": "prior", "id": "P-0001", "ns": NS, "facets": facets, "claim": "a"})
    for n in range(2, 60):  # a chain of revisions a person retired, over P-0001 (given)
        apply(st, {"t": "prior", "id": f"P-{n:04d}", "ns": NS, "facets": facets, "claim": str(n),
                   "supersedes": f"P-{n - 1:04d}"})
        apply(st, {"t": "event", "id": f"P-{n:04d}", "action": "decide", "to": "obsolete", "by": "human"})
    memo: dict = {}
    for n in range(59, 0, -1):
        assert given_in_chain(st, f"P-{n:04d}", memo) == given_in_chain(st, f"P-{n:04d}") == "P-0001"
    apply(st, {"t": "prior", "id": "P-0060", "ns": NS, "facets": facets, "claim": "loop", "supersedes": "P-0060"})
    assert given_in_chain(st, "P-0060") == "P-0060"  # (a loop ends the walk: itself, open, applies)


def _p3_held_beside_p1(keeper, end):
    """A run (then ended by `end`: commit or abort) and a session are given P-0001 and hold P-0003 back;
    `status --calls`' line for P-0003."""
    given = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert ([i["id"] for i in given["inject"]], given["awaiting_review"]) == (["P-0001"], ["P-0003"]), given
    keeper.ok(end, "--run", given["run"])
    session = json.loads(keeper.ok("lessons", "--inject", "--peek", "--json"))
    assert ([i["id"] for i in session["inject"]], session["awaiting_review"]) == (["P-0001"], ["P-0003"]), session
    return next(x for x in keeper.ok("status", "--calls").splitlines() if x.startswith("  ? P-0003"))


def _seal(run: str, ns: str, via: str = "suggest", **extra):
    return dict({"t": "run", "action": "commit", "run": run, "ns": ns, "via": via, "door": DOOR, "summary": ["typed in"]},
                **extra)


def _verify_both_ways(keeper):
    """What `verify --no-git --json` names, whole and split (forced), as (code, line) pairs: the same or an error."""
    got = []
    for env in ({}, {"PRIORS_PARALLEL_MIN_BYTES": "1"}):
        r = keeper("verify", "--no-git", "--json", env=env)
        got.append((r.code, [(p["code"], p["line"]) for p in json.loads(r.out)["problems"]]))
    assert got[0] == got[1], got
    return got[0]


def test_each_half_of_a_split_replay_knows_a_person_s_status_an_agent_s_verdict_forged(keeper):
    """An agent's verdict giving a lesson a status only a person gives (`accepted`, typed in: the door refuses
    it, BAD_VERDICT) still holds in the fold, so the whole replay names the rewording that follows in another
    namespace as RERAISE; a split replay names it too, wherever the verdict stands — in the lesson's own
    namespace's block, which the half judging `docs` otherwise skips, or in `docs`' own (hostile pass 27au:
    the split named only the verdict)."""
    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, SUITE)
    keeper.ok("suggest", "--ns", "docs", "Link every page from the index.")
    for claim in ("Prefer small pull requests", "Name branches after the ticket", "Keep the changelog current",
                  "Pin dependency versions in CI"):  # (NS outweighs docs: the split gives them different halves)
        keeper.ok("suggest", "--ns", NS, claim)
    keeper.ok("suggest", "--ns", "api", QUOTE)
    base = keeper.ledger_bytes()
    n = base.count(b"\n")
    lesson = next(r for r in keeper.ledger() if r.get("t") == "prior")
    for where in (NS, "docs"):
        verdict = {"t": "event", "action": "disposition", "by": "agent", "id": "P-0001", "run": "run-009", "to": "accepted"}
        lines = [verdict, {"t": "injected", "run": "run-009", "ids": []}, _seal("run-009", where, "commit"),
                 dict(lesson, id="P-0009", claim=SUITE_REWORDED, born="run-010", ns="docs"),
                 {"t": "injected", "run": "run-010", "ids": []}, _seal("run-010", "docs")]
        (keeper.root / ".priors/ledger.jsonl").write_bytes(base + "".join(dumps(r) + "\n" for r in lines).encode())
        keeper.ok("render")
        code, problems = _verify_both_ways(keeper)
        assert code == 1 and ("BAD_VERDICT", n + 1) in problems and ("RERAISE", n + 4) in problems, (where, problems)


def test_a_rewording_in_another_namespace_is_judged_by_the_decision_its_run_saw(keeper):
    """A run whose seal carries the merge driver's mark of what it saw (`unseen`: a parallel branch's run that
    saw P-0001 accepted, which a person has since reopened) is judged as it saw the ledger: a rewording of
    P-0001 it wrote in another namespace is RERAISE, as one in P-0001's own namespace is (hostile pass 27au:
    only the one in P-0001's namespace was named)."""
    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, SUITE)
    keeper.ok("decide", "P-0001", "accepted", "--because", "yes")
    keeper.ok("decide", "P-0001", "reopen", "--because", "we look at it again")
    base = keeper.ledger_bytes()
    lesson = next(r for r in keeper.ledger() if r.get("t") == "prior")
    for ns in (NS, "docs"):
        lines = [dict(lesson, id="P-0002", claim=SUITE_REWORDED, born="run-002", ns=ns),
                 {"t": "injected", "run": "run-002", "ids": []}, _seal("run-002", ns, unseen={"P-0001": "accepted"})]
        (keeper.root / ".priors/ledger.jsonl").write_bytes(base + "".join(dumps(r) + "\n" for r in lines).encode())
        keeper.ok("render")
        code, problems = _verify_both_ways(keeper)
        assert code == 1 and problems == [("RERAISE", base.count(b"\n") + 1)], (ns, problems)


def test_a_decision_after_a_restated_lesson_line_holds_for_the_lookup(keeper):
    """A lesson's prior line typed in again (named `DUPLICATE_ID`) gives the fold its state from then on;
    a person's decision after it settles that state, and the lookup reads it: a rewording of the lesson in
    another namespace is RERAISE, whole and split (hostile pass 27au: the lookup held the first line's
    state, still open, and named nothing)."""
    keeper.ok("init")
    keeper.ok("suggest", "--ns", NS, SUITE)
    lesson = next(r for r in keeper.ledger() if r.get("t") == "prior")
    again = [dict(lesson, born="run-002"), {"t": "injected", "run": "run-002", "ids": []}, _seal("run-002", NS)]
    path = keeper.root / ".priors/ledger.jsonl"
    path.write_bytes(keeper.ledger_bytes() + "".join(dumps(r) + "\n" for r in again).encode())
    keeper.ok("decide", "P-0001", "accepted", "--because", "yes")
    base = keeper.ledger_bytes()
    lines = [dict(lesson, id="P-0002", claim="Run the whole test suite before every commit", born="run-003", ns="docs"),
             {"t": "injected", "run": "run-003", "ids": []}, _seal("run-003", "docs")]
    path.write_bytes(base + "".join(dumps(r) + "\n" for r in lines).encode())
    keeper.ok("render")
    code, problems = _verify_both_ways(keeper)
    assert code == 1 and ("RERAISE", base.count(b"\n") + 1) in problems, problems


def _count_likenesses(monkeypatch) -> list:
    """Each claim a `Likeness` is worked out for, in order — with `likeness`'s cache made to hold none, as a
    namespace larger than it makes it."""
    from priors.core import lesson_likeness

    made: list = []
    real_init = lesson_likeness.Likeness.__init__

    def counted(self, claim, cached=True):
        made.append(claim)
        real_init(self, claim, cached)

    monkeypatch.setattr(lesson_likeness.Likeness, "__init__", counted)
    monkeypatch.setattr(lesson_likeness, "likeness", lesson_likeness.Likeness)
    return made


def test_a_run_s_lesson_candidates_read_each_lesson_of_the_namespace_once(keeper, monkeypatch):
    """A lesson candidate is compared with every lesson of its namespace, each needing a `Likeness`;
    `likeness`'s own cache holds 4,096, so at a namespace of more lessons (~7,000 at 100k priors) each
    candidate of a run — and each again when `commit` judges it — worked every one out anew (~1 s a
    candidate there). The run's pool keeps them: here `likeness` caches nothing, as a namespace larger
    than its cache makes it, and still each lesson is read once for the whole batch."""
    from priors.ops.propose import propose
    from priors.store.paths import Paths

    lessons = ["Keep secrets out of the repository", "Prefer small pull requests", "Write the changelog entry first",
               "Run the linter before pushing", "Document every public function"]
    for claim in lessons:
        keeper.ok("suggest", "--ns", NS, claim)
    run = keeper.open_run(NS, {})["run"]
    made = _count_likenesses(monkeypatch)
    cands = ["Pin every tool version in the lockfile", "Ask before deleting a branch", "Name each test after what it proves"]
    items = [(f"c{i}", {"type": "calibration", "claim": c}) for i, c in enumerate(cands)]
    (keeper.root / ".priors" / "cache" / "lesson_keys.bin").unlink()  # (the signatures `suggest` kept: see below)
    propose(Paths(keeper.root), run, NS, items)
    assert len(made) == len(set(made)), made  # each claim read once
    assert set(lessons) <= set(made) and set(cands) <= set(made), made
    keeper.ok("commit", "--run", run)
    keeper.ok("verify", "--no-git")


def test_the_door_keeps_each_lesson_s_signature_and_reads_only_the_lessons_sharing_a_key(keeper, monkeypatch):
    """A lesson candidate needs the `Likeness` of only the lessons whose signature meets its own: the door
    keeps each lesson's signature under .priors/cache/ (MAC'd: one written by anything else is ignored),
    so a later call works out no other (at 7,000 lessons of a namespace, 1.2 s a call)."""
    from priors.core import lesson_likeness
    from priors.ops.suggest import suggest
    from priors.store import cache_key, lesson_keys
    from priors.store.paths import Paths

    keeper.ok("suggest", "--ns", NS, SUITE)
    keeper.ok("decide", "P-0001", "wontfix", "--because", "the suite takes an hour here")
    for claim in ("Keep secrets out of the repository", "Prefer small pull requests", QUOTE):
        keeper.ok("suggest", "--ns", NS, claim)
    kept = keeper.root / ".priors" / "cache" / lesson_keys.KEYS_FILE
    assert kept.exists() and SUITE.encode() not in kept.read_bytes()  # (digests and stems, no claim's text)
    made = _count_likenesses(monkeypatch)
    suggest(Paths(keeper.root), NS, ["Name each branch after its ticket"], [], None, None)
    assert made == ["Name each branch after its ticket"], made  # no lesson shares a key with it
    made.clear()
    with pytest.raises(Refusal) as refused:  # a rewording of the person's lesson meets it all the same
        suggest(Paths(keeper.root), "docs", SUITE_REWORDED.split(), [], None, None)
    assert refused.value.payload()["refused"] == "RERAISE" and refused.value.payload()["of"] == "P-0001"
    assert SUITE in made and "Prefer small pull requests" not in made, made
    # a file of signatures written in the repository (here: one made to say the person's lesson shares no
    # key with anything) is not believed: its MAC is not this user's
    forged = lesson_likeness.KnownKeys()
    forged.added = {lesson_likeness.claim_digest(SUITE): (("key", "nothing"),)}
    with monkeypatch.context() as m:
        m.setattr(cache_key, "cache_key", lambda _dir: b"an agent's own key, 32 bytes...!")
        kept.unlink()
        lesson_keys.save(keeper.root / ".priors", forged)
    body = keeper.refused("RERAISE", "suggest", "--ns", "docs", SUITE_REWORDED)
    assert body["of"] == "P-0001", body
    keeper.ok("verify", "--no-git")
    keeper.ok("suggest", "--ns", NS, "Write the changelog entry first")
    assert kept.exists()
    keeper.ok("redact", "P-0002", "--because", "it named a secret")
    assert not kept.exists()  # a redaction removes the cache, the signatures' stems with it
