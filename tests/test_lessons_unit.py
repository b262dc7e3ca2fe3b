"""Pure parts of the lessons loop: what runs were shown, score arithmetic, ranking and budgets, bundles."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as S

from priors.core.canonical import dumps, loads
from priors.core.errors import UsageError
from priors.core.grammar import check_tags
from priors.core.inject import injected_record
from priors.core.lesson_bundles import Bundle, RunRecords, reflection_packet
from priors.core.lessons import (
    Budget,
    Ledger,
    Stats,
    fmt_score,
    injections,
    is_lesson,
    overlap,
    shape,
    words,
)
from priors.core.settings import check_config, set_config

CAL = {"scope": "repo-wide", "activation": "run-start", "obligation": "inject-as-instruction",
       "authority": "advisory", "lifecycle": "only-by-supersession"}
CONCL = {"scope": "content-hash", "activation": "verify-phase", "obligation": "disposition-required",
         "authority": "advisory", "lifecycle": "stale-on-scope-change"}


def prior(pid: str, run: str, claim: str, ns: str = "a", tags: List[str] = (), facets=None) -> Dict[str, Any]:
    rec = {"t": "prior", "id": pid, "ns": ns, "type": "calibration", "facets": dict(facets or CAL), "claim": claim,
           "born": run}
    if tags:
        rec["tags"] = list(tags)
    return rec


def seal(run: str, ns: str = "a", **extra) -> Dict[str, Any]:
    return {"t": "run", "action": "commit", "run": run, "ns": ns, "summary": ["New this run: 0"], **extra}


def decide(pid: str, to: str) -> Dict[str, Any]:
    return {"t": "event", "id": pid, "action": "decide", "to": to, "by": "human"}


def score(run: str, outcome: str, **extra) -> Dict[str, Any]:
    return {"t": "score", "run": run, "outcome": outcome, "by": "human", **extra}


# ------------------------------------------------------------------ what a run was shown


def _served(recs):
    """The lessons view of a state folded as the cache serves it: a prefix folded, the tail applied."""
    from priors.core.fold import apply, fold

    st = fold(recs[: len(recs) // 2])
    for r in recs[len(recs) // 2:]:
        apply(st, r)
    return Ledger(st)


def test_injections_are_recomputed_from_the_ledger_before_each_run():
    recs = [
        prior("P-0001", "run-001", "lesson one"), seal("run-001"),
        prior("P-0002", "run-002", "lesson two"), seal("run-002"),
        decide("P-0001", "obsolete"),
        seal("run-003"),
    ]
    shown = injections(recs)
    assert shown == {"run-001": [], "run-002": ["P-0001"], "run-003": ["P-0002"]}


def test_injections_skip_human_runs_and_other_namespaces_and_honor_injected_records():
    recs = [
        prior("P-0001", "run-001", "mine", ns="a"), seal("run-001", by="human", via="add"), decide("P-0001", "accepted"),
        prior("P-0002", "run-002", "theirs", ns="b"), seal("run-002", ns="b"),
        seal("run-003", ns="a"),
        {"t": "injected", "run": "run-004", "ids": []}, seal("run-004", ns="a"),
    ]
    assert injections(recs) == {"run-002": [], "run-003": ["P-0001"], "run-004": []}


def test_injected_record_only_when_something_was_withheld():
    assert injected_record({"inject": [{"id": "P-0001"}], "inject_omitted": []}, "run-002") is None
    assert injected_record({"inject": [{"id": "P-0001"}]}, "run-002") is None
    assert injected_record({"inject": [{"id": "P-0001"}], "inject_omitted": ["P-0002"]}, "run-002") == \
        {"t": "injected", "run": "run-002", "ids": ["P-0001"]}
    assert injected_record({"inject": [], "awaiting_review": ["P-0002"]}, "run-009")["ids"] == []


# ------------------------------------------------------------------ score arithmetic


def test_stats_credit_every_injected_lesson_and_replace_supersedes():
    recs = [
        prior("P-0001", "run-001", "one"), prior("P-0002", "run-001", "two"), seal("run-001"),
        seal("run-002"), seal("run-003"),
        score("run-002", "success"),
        score("run-003", "failure"),
        score("run-003", "partial", replaces=True),
        score("run-002", "failure"),  # --again: both count
    ]
    led = Ledger.of(recs)
    st = led.stats()
    assert st["P-0001"].as_dict() == {"uses": 2, "wins": 1, "partials": 1, "losses": 1}
    assert st["P-0001"].score == Fraction(3, 6)
    assert fmt_score(st["P-0001"].score) == "0.50"


def test_scores_use_the_ids_stored_in_the_score_record():
    recs = [prior("P-0001", "run-001", "one"), seal("run-001"), seal("run-002"),
            score("run-002", "success", injected=[])]
    assert Ledger.of(recs).stats()["P-0001"].wins == 0


def test_low_score_call_counts_only_evidence_since_the_last_human_decision():
    recs = [prior("P-0001", "run-001", "bad advice"), seal("run-001")]
    for i in range(2, 5):
        recs += [seal(f"run-{i:03d}"), score(f"run-{i:03d}", "failure", injected=["P-0001"])]
    led = Ledger.of(recs)
    assert set(led.low_scores()) == {"P-0001"}
    recs.append(decide("P-0001", "keep"))
    assert Ledger.of(recs).low_scores() == {}
    for i in range(5, 8):
        recs += [seal(f"run-{i:03d}"), score(f"run-{i:03d}", "failure" if i < 7 else "partial", injected=["P-0001"])]
    low = Ledger.of(recs).low_scores()
    assert low["P-0001"].scored == 3 and low["P-0001"].score == Fraction(1, 6)
    assert _served(recs).low_scores() == low


@given(S.integers(0, 50), S.integers(0, 50), S.integers(0, 50))
def test_score_is_exact(w, p, lo):
    s = Stats(uses=w + p + lo, wins=w, partials=p, losses=lo)
    if w + p + lo == 0:
        assert s.score == Fraction(1, 2)
    else:
        assert s.score == Fraction(2 * w + p, 2 * (w + p + lo))
    assert 0 <= s.score <= 1
    text = fmt_score(s.score)
    assert abs(Fraction(text) - Fraction(s.score.numerator, s.score.denominator)) <= Fraction(1, 200)
    assert (s.scored >= 3 and s.score < Fraction(1, 3)) == (s.scored >= 3 and 3 * (2 * w + p) < 2 * s.scored)


def test_fmt_score_rounds_half_up():
    assert fmt_score(Fraction(1, 8)) == "0.13"
    assert fmt_score(Fraction(1, 3)) == "0.33"
    assert fmt_score(Fraction(2, 3)) == "0.67"
    assert fmt_score(Fraction(1)) == "1.00"
    assert fmt_score(Fraction(0)) == "0.00"


# ------------------------------------------------------------------ ranking and budgets

VOCAB = ["test", "suite", "narrow", "lint", "docs", "readme", "cache", "retry", "deploy", "types"]


def _inject_out(led: Ledger) -> Dict[str, Any]:
    items = [{"id": p.id, "claim": p.claim, "status": p.status} for p in led.state.priors.values()
             if p.status in ("open", "accepted", "wontfix")]
    return {"run": "run-099", "ns": "a", "inject": items, "verify": [], "nudges": [], "settled": 0,
            "archived": 0, "floors": []}


def test_no_budget_leaves_the_contract_output_alone():
    recs = [prior("P-0001", "run-001", "alpha"), prior("P-0002", "run-001", "beta"), seal("run-001")]
    led = Ledger.of(recs)
    out = _inject_out(led)
    assert shape(out, led, Budget()) == out


def test_binding_first_then_overlap_then_score_then_id():
    recs = [
        prior("P-0001", "run-001", "run the narrow test first"),
        prior("P-0002", "run-001", "keep the readme short", tags=["docs"]),
        prior("P-0003", "run-001", "cache the lint results"),
        prior("P-0004", "run-001", "unrelated words here"),
        seal("run-001"), decide("P-0004", "accepted"),
        seal("run-002"), score("run-002", "success", injected=["P-0003"]),
    ]
    led = Ledger.of(recs)
    out = shape(_inject_out(led), led, Budget(query="update the docs and readme"))
    assert [x["id"] for x in out["inject"]] == ["P-0004", "P-0002", "P-0003", "P-0001"]
    assert out["inject_omitted"] == []
    cut = shape(_inject_out(led), led, Budget(query="docs", max_inject=2))
    assert [x["id"] for x in cut["inject"]] == ["P-0004", "P-0002"]
    assert cut["inject_omitted"] == ["P-0003", "P-0001"]


def test_char_budget_skips_what_does_not_fit_and_keeps_going():
    recs = [prior("P-0001", "run-001", "x" * 50), prior("P-0002", "run-001", "y" * 10),
            prior("P-0003", "run-001", "z" * 10), seal("run-001")]
    led = Ledger.of(recs)
    out = shape(_inject_out(led), led, Budget(max_chars=25))
    assert [x["id"] for x in out["inject"]] == ["P-0002", "P-0003"]
    assert out["inject_omitted"] == ["P-0001"]


def test_require_review_holds_open_lessons():
    recs = [prior("P-0001", "run-001", "proposed by an agent"), prior("P-0002", "run-001", "accepted one"),
            seal("run-001"), decide("P-0002", "accepted")]
    led = Ledger.of(recs)
    out = shape(_inject_out(led), led, Budget(require_review=True))
    assert [x["id"] for x in out["inject"]] == ["P-0002"]
    assert out["awaiting_review"] == ["P-0001"]


lesson_st = S.lists(
    S.tuples(S.lists(S.sampled_from(VOCAB), min_size=1, max_size=5), S.lists(S.sampled_from(VOCAB), max_size=2),
             S.sampled_from(["open", "accepted", "wontfix"]), S.lists(S.sampled_from(["success", "partial", "failure"]),
                                                                     max_size=3)),
    min_size=1, max_size=10)


@settings(max_examples=150, deadline=None)
@given(lesson_st, S.lists(S.sampled_from(VOCAB), max_size=4), S.one_of(S.none(), S.integers(1, 6)),
       S.one_of(S.none(), S.integers(1, 120)), S.booleans())
def test_ranking_is_deterministic_and_budgets_hold(lessons, query, max_inject, max_chars, review):
    recs: List[Dict[str, Any]] = []
    for i, (ws, tags, _status, _outs) in enumerate(lessons, 1):
        recs.append(prior(f"P-{i:04d}", "run-001", " ".join(ws), tags=sorted(set(tags))))
    recs.append(seal("run-001"))
    for i, (_, _, status, _) in enumerate(lessons, 1):
        if status != "open":
            recs.append(decide(f"P-{i:04d}", status))
    n = 2
    for i, (_, _, _, outs) in enumerate(lessons, 1):
        for o in outs:
            run = f"run-{n:03d}"
            recs += [seal(run), score(run, o, injected=[f"P-{i:04d}"])]
            n += 1
    led = Ledger.of(recs)
    budget = Budget(max_inject, max_chars, " ".join(query), review)
    base = _inject_out(led)
    a = shape(base, led, budget)
    assert shape(base, _served(recs), budget) == a  # the state a cache serves ranks exactly like a fresh read
    rev = dict(base, inject=list(reversed(base["inject"])))
    b = shape(rev, led, budget)
    assert a == b  # input order does not matter: ties break by id
    ids = [x["id"] for x in a["inject"]]
    held = a.get("awaiting_review", [])
    assert sorted(ids + a["inject_omitted"] + held) == sorted(x["id"] for x in base["inject"])
    binding = [led.state.priors[i].binding for i in ids]
    assert binding == sorted(binding, reverse=True)
    # a person's accepted lesson is never dropped by a budget; the others fill what the budget leaves
    assert not [i for i in a["inject_omitted"] if led.state.priors[i].binding]
    kept = [x for x in a["inject"] if not led.state.priors[x["id"]].binding]
    if max_inject is not None:
        assert len(ids) <= max_inject or not kept
        assert len(ids) - len(kept) >= max_inject or len(ids) <= max_inject
    if max_chars is not None:
        assert sum(len(x["claim"]) for x in a["inject"]) <= max_chars or not kept


def test_words_drop_stopwords_and_case():
    assert words("Run THE tests, then the Suite!") == {"run", "tests", "suite"}


@settings(max_examples=300, deadline=None)
@given(S.lists(S.sampled_from(["the", "a", "x", "Parser", "parser,", "tests", "flaky", "an", "7", "io-bound", "é"]),
               max_size=8).map(" ".join),
       S.lists(S.sampled_from(["the", "b", "parser", "tests", "flakyness", "IO", "bound", "é", "3"]), max_size=10)
       .map(" ".join),
       S.lists(S.sampled_from(["parser", "tests", "the"]), max_size=2))
def test_overlap_counts_the_query_words_of_the_claim_and_tags(query, claim, tags):
    # The lessons block ranks every lesson on every prompt: the claim's words are not filtered one
    # by one any more — the count must stay the words the query and the claim share, plus the tags.
    q = words(query)
    assert overlap(q, claim, tags) == len(q & words(claim)) + len(q & set(tags))


# ------------------------------------------------------------------ config and tags


def test_config_validation():
    assert set_config({}, "max_inject", "5") == {"max_inject": 5}
    assert set_config({"max_inject": 5}, "max_inject", "none") == {}
    assert set_config({}, "require_review", "on") == {"require_review": True}
    for key, val in [("max_inject", "0"), ("max_chars", "x"), ("require_review", "maybe"), ("bogus", "1")]:
        with pytest.raises(UsageError):
            set_config({}, key, val)
    with pytest.raises(UsageError):
        check_config({"max_inject": 1.5})
    with pytest.raises(UsageError):
        check_config([])
    assert check_config({"max_chars": 10, "require_review": False}) == {"max_chars": 10, "require_review": False}


def test_tags():
    assert check_tags(["testing", "#ci", "testing"]) == ["ci", "testing"]
    for bad in (["Upper"], ["two words"], "notalist", [3], ["x" * 30]):
        with pytest.raises(UsageError):
            check_tags(bad)
    with pytest.raises(UsageError):
        check_tags([f"t{i}" for i in range(9)])


# ------------------------------------------------------------------ reflection and export


def test_reflection_packet_names_only_what_existed_at_the_time():
    recs = [
        prior("P-0001", "run-001", "old lesson"), seal("run-001"),
        seal("run-002"),
        prior("P-0002", "run-003", "lesson learned from run-002"), seal("run-003"),
        score("run-002", "failure", reason="missed the flaky test"),
    ]
    led = Ledger.of(recs)
    noted = RunRecords(led.state, ["run-002"])
    for r in recs:
        noted.see(r)
    text = "".join(reflection_packet(led, ["run-002"], "a", noted))
    run_part = text.split("### run-002")[1]
    injected = run_part.split("- lessons injected at that time:")[1].split("- lessons born after")[0]
    assert "P-0001" in injected and "P-0002" not in injected
    assert "born after this run (it could not have used them): P-0002" in run_part
    assert "missed the flaky test" in run_part


def test_export_bundle_leaves_out_retired_redacted_and_non_lessons():
    recs = [
        prior("P-0001", "run-001", "keep me", tags=["ci"]),
        prior("P-0002", "run-001", "retire me"),
        {"t": "prior", "id": "P-0003", "ns": "a", "redacted": True, "content_hash": "abc", "born": "run-001"},
        prior("P-0004", "run-001", "a finding", facets=CONCL),
        seal("run-001"), decide("P-0002", "obsolete"),
    ]
    made = Bundle(Ledger.of(recs), None, None)
    text = "".join(made.pieces())
    bundle = loads(text)
    assert dumps(bundle) == text and made.lessons == len(bundle["lessons"])
    assert [x["origin"]["id"] for x in bundle["lessons"]] == ["P-0001"]
    item = bundle["lessons"][0]
    assert item["tags"] == ["ci"] and item["score"] == {"uses": 0, "wins": 0, "partials": 0, "losses": 0}
    assert loads("".join(Bundle(Ledger.of(recs), "b", None).pieces()))["lessons"] == []
    none = Bundle(Ledger.of(recs), None, "behavioral")
    assert loads("".join(none.pieces()))["lessons"] == [] and none.lessons == 0


# ------------------------------------------------------------------ folded lesson statistics vs a fresh computation


def _reference_shown(recs):
    """What each committed agent run was shown, recomputed the slow, obvious way: fold up to its first line."""
    from priors.core.fold import fold

    commits = {}
    for i, r in enumerate(recs):
        if r.get("t") == "run" and r.get("action") == "commit" and isinstance(r.get("run"), str):
            commits.setdefault(r["run"], (i, r))
    starts = {}
    for i, r in enumerate(recs):
        if r.get("t") in ("prior", "event", "call", "run"):
            for v in (r.get("run"), r.get("born")):
                if isinstance(v, str) and v in commits and v not in starts:
                    starts[v] = i
    out = {}
    for run, i in starts.items():
        rec = commits[run][1]
        if rec.get("by") == "human":
            continue
        st = fold(recs[:i])
        firsts = []
        seen = set()
        for r in recs[:i]:
            pid = r.get("id")
            if r.get("t") == "prior" and isinstance(pid, str) and pid not in seen:
                seen.add(pid)
                if st.priors.get(pid) is not None and isinstance(r.get("facets"), dict) \
                        and r["facets"].get("activation") == "run-start" and r.get("redacted") is not True:
                    firsts.append((pid, r.get("ns")))
        out[run] = [pid for pid, ns in firsts if ns == rec.get("ns") and st.priors[pid].status in ("open", "accepted", "wontfix")]
    for r in recs:
        if r.get("t") == "injected" and r.get("run") in out and isinstance(r.get("ids"), list):
            out[r["run"]] = [x for x in r["ids"] if isinstance(x, str)]
    return out


def _reference_stats(recs, shown):
    from priors.core.lessons import effective_scores

    out = {}
    for ids in shown.values():
        for pid in ids:
            out.setdefault(pid, Stats()).uses += 1
    for lst in effective_scores(list(enumerate(recs))).values():
        for s in lst:
            for pid in (s.injected if s.injected is not None else shown.get(s.run, [])):
                out.setdefault(pid, Stats()).credit(s.outcome)
    return {k: v.as_dict() for k, v in out.items()}


_step = S.one_of(
    S.tuples(S.just("lesson"), S.sampled_from("ab")),
    S.tuples(S.just("verify"), S.sampled_from("ab")),
    S.tuples(S.just("decide"), S.integers(1, 8), S.sampled_from(["obsolete", "accepted", "reopen", "keep", "wontfix"])),
    S.tuples(S.just("dispose"), S.integers(1, 8), S.sampled_from(["challenged", "still-open", "fixed"])),
    S.tuples(S.just("run"), S.sampled_from("ab"), S.booleans(), S.booleans()),
    S.tuples(S.just("score"), S.integers(1, 12), S.sampled_from(["success", "partial", "failure"]), S.booleans(), S.booleans()),
)


@settings(max_examples=120, deadline=None)
@given(S.lists(_step, max_size=30))
def test_folded_lesson_stats_match_a_fresh_computation(steps):
    """Uses, wins and what each run was shown, read from the folded state (also folded in two parts,
    as the cache serves it after a `score`), equal the obvious recomputation from the records."""
    recs: List[Dict[str, Any]] = []
    n_prior, n_run = 0, 0
    pending: List[Dict[str, Any]] = []
    for step in steps:
        kind = step[0]
        if kind in ("lesson", "verify"):
            n_prior += 1
            n_run += 1
            run = f"run-{n_run:03d}"
            recs += [prior(f"P-{n_prior:04d}", run, f"claim {n_prior}", ns=step[1],
                           facets=CAL if kind == "lesson" else CONCL), seal(run, ns=step[1], by="human")]
        elif kind == "decide" and step[1] <= n_prior:
            recs.append(decide(f"P-{step[1]:04d}", step[2]))
        elif kind == "dispose" and step[1] <= n_prior:
            pending.append({"t": "event", "id": f"P-{step[1]:04d}", "action": "disposition", "to": step[2], "by": "agent"})
        elif kind == "run":
            n_run += 1
            run = f"run-{n_run:03d}"
            recs += [dict(e, run=run) for e in pending]
            pending = []
            if step[2]:
                recs.append({"t": "injected", "run": run, "ids": [f"P-{i:04d}" for i in range(1, n_prior + 1, 2)]})
            recs.append(seal(run, ns=step[1], **({"by": "human"} if step[3] else {})))
        elif kind == "score" and step[1] <= n_run:
            extra: Dict[str, Any] = {"replaces": True} if step[3] else {}
            if step[4]:
                extra["injected"] = [f"P-{i:04d}" for i in range(1, n_prior + 1, 3)]
            recs.append(score(f"run-{step[1]:03d}", step[2], **extra))
    shown = _reference_shown(recs)
    want = _reference_stats(recs, shown)
    for led in (Ledger.of(recs), _served(recs)):
        assert led.shown == shown
        assert {k: v.as_dict() for k, v in led.stats().items()} == want
        assert injections(recs) == shown
        # what `status` lists per namespace: the scored lessons, not obsolete, in ledger order, with
        # the same uses and credits (counted only for them)
        priors = led.state.priors
        listed = [pid for pid, p in priors.items()
                  if sum(want.get(pid, {}).get(k, 0) for k in ("wins", "partials", "losses"))
                  and is_lesson(p) and p.status != "obsolete"]
        got = [(ns, p.id, s.as_dict()) for ns, lst in led.scored_lessons().items() for p, s in lst]
        assert sorted(got, key=lambda x: listed.index(x[1])) == [(priors[pid].ns, pid, want[pid]) for pid in listed]
        for ns, lst in led.scored_lessons().items():
            assert [p.id for p, _ in lst] == [pid for pid in listed if priors[pid].ns == ns]


def test_scored_lessons_are_listed_per_namespace_with_all_their_uses():
    """`status`'s score lines: each scored lesson under its namespace, its uses counted from runs
    that recorded what they injected and from runs that were shown it, like `stats()`."""
    recs = [prior("P-0001", "run-001", "c1", ns="a", facets=CAL), prior("P-0002", "run-001", "c2", ns="a", facets=CAL),
            prior("P-0003", "run-001", "c3", ns="b", facets=CAL), seal("run-001", ns="a", by="human"),
            {"t": "injected", "run": "run-002", "ids": ["P-0001"]}, seal("run-002", ns="a"),
            seal("run-003", ns="a"), seal("run-004", ns="b"),
            score("run-002", "success"), score("run-004", "partial")]
    led = Ledger.of(recs)
    got = {ns: [(p.id, s.as_dict()) for p, s in lst] for ns, lst in led.scored_lessons().items()}
    assert got == {"a": [("P-0001", {"uses": 2, "wins": 1, "partials": 0, "losses": 0})],
                   "b": [("P-0003", {"uses": 1, "wins": 0, "partials": 1, "losses": 0})]}
    assert got["a"][0][1] == led.stats()["P-0001"].as_dict()


@given(S.integers(-50, 50), S.integers(1, 50), S.integers(-50, 50), S.integers(1, 50))
def test_a_ratio_orders_hashes_and_equals_as_the_fraction_does(a, b, c, d):
    from priors.core.lessons import Ratio

    x, y = Ratio(a, b), Ratio(c, d)
    fx, fy = Fraction(a, b), Fraction(c, d)
    assert (x < y, x <= y, x > y, x >= y, x == y) == (fx < fy, fx <= fy, fx > fy, fx >= fy, fx == fy)
    assert x == fx and (hash(x) == hash(y)) >= (x == y)
    assert sorted([y, x, Ratio(1, 2)]) == sorted([fy, fx, Fraction(1, 2)])
    assert (x.numerator, x.denominator) == (fx.numerator, fx.denominator)



_TEXT = S.text(S.sampled_from(list("aZ 9.-'") + ["\u2014", "\u2013", "\u2019", "\u2018", "\u201c", "\u201d",
                                                 "\u2022", "\u00b7", "\u2026", "\u00a0", "\u0301", "\u0430",
                                                 "\uff21", "\u00e9", "\u0131", "\u200b"]), max_size=30)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_a_claim_of_ascii_and_typographic_marks_reads_as_it_is_written(claim) -> None:
    """`plain_letters` leaves a claim of ASCII and the usual typographic marks (`—`, `’`, …) as it is,
    without its character-by-character walk; any text reads as the full fold reads it (NFKC, the
    look-alikes, NFKD, combining marks dropped: what a claim with an accented letter more is given —
    the letter, a starter, folds on its own)."""
    from priors.core.letters import plain_letters

    assert plain_letters(claim) == plain_letters(claim + "\u00e9")[:-1]
    if claim.isascii() or all(c.isascii() or c in "\u2014\u2013\u2019\u2018\u201c\u201d\u2022\u00b7" for c in claim):
        assert plain_letters(claim) == claim
