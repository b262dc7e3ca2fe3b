"""`priors verify` reads a large ledger the quick way (one parse per line, canonical form proved by
lengths, rules checked from a line's values by their places, PRIORS.md kept as rows). The strict
way — every line parsed, encoded and checked by the strict rules, PRIORS.md rendered from a full
fold — is the reference: on any ledger, sound or broken, both must report the same problems,
warnings and rendering, in the same order."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from priors.core.canonical import dumps, proves_canonical
from priors.core.ledger_checks import check_ledger, render_expected
from priors.core.vocabulary import PRESETS

ids = st.sampled_from(["P-0001", "P-0002", "P-0003", "P-0010", "P-0002", "P-01", "P-00003", "x", ""])
runs = st.sampled_from(["run-001", "run-002", "run-003", "run-004", "run-1", "nope"])
spaces = st.sampled_from(["web", "api", "web", "", 5, None])
texts = st.sampled_from([
    "a claim", "another claim, with a comma", "  spaced", "two  spaces", "tab\there", "pipe | here",
    "back\\slash", 'quote " here', "emoji \U0001f600 here", "private \ue000 use", "x" * 71 + " y" * 3, "z" * 90,
    "", " ", "dash — here", "ctrl \x1b here", "sep \u2028 here", "nbsp\u00a0here", "soft\u00adhyphen", "{braces}",
    "[brackets]", ":colon", "-0", "a\u200fb", "lone \ud800 surrogate",
])
facet_sets = [dict(p) for p in PRESETS.values()] + [
    dict(PRESETS["conclusion"], authority="binding"),
    dict(PRESETS["conclusion"], scope="repo-wide"),
    dict(PRESETS["calibration"], obligation="veto-only"),
    {k: v for k, v in PRESETS["coverage"].items() if k != "lifecycle"},
    dict(PRESETS["behavioral"], extra="x"),
    dict(PRESETS["conclusion"], scope=["content-hash"]),
    dict(reversed(list(PRESETS["conclusion"].items()))),
]
facets = st.one_of(st.sampled_from(facet_sets), st.sampled_from([None, "x", {}, 3]))
scalars = st.one_of(texts, st.sampled_from([0, 1, 3, -1, True, None, 2 ** 60, 1.5, [], ["a"], {"a": "b"}, [[[1]]]]))

prior = st.fixed_dictionaries(
    {"t": st.just("prior"), "id": ids, "born": runs, "ns": spaces, "type": st.sampled_from(["conclusion", "calibration", "", 1]),
     "claim": texts, "facets": facets},
    optional={"scope_ref": st.one_of(texts, st.sampled_from(["src/a.ts", "src/b|c.ts"])),
              "scope_hash": st.sampled_from(["abcdef012345", "", 7]),
              "severity": st.sampled_from(["minor", "major", "gate", "huge", 1]),
              "depth": st.sampled_from(["minor", "gate", "deep"]),
              "review_every": st.sampled_from([1, 3, 0, -2, True, "2", 2 ** 60, 1.0]),
              "direction": st.sampled_from(["up", "", None]),
              "evidence": scalars, "distinct_from": st.sampled_from([["P-0001"], [], "P-0002", [1]]),
              "redacted": st.sampled_from([True, False, 1]), "content_hash": st.sampled_from(["abcdef012345", "nope"]),
              "t2": scalars},
)
event = st.fixed_dictionaries(
    {"t": st.sampled_from(["event", "event", "event", "prior", "bogus"]), "id": ids,
     "action": st.sampled_from(["disposition", "disposition", "decide", "scope-missing", "redact", "bogus", 3])},
    optional={"by": st.sampled_from(["agent", "human", "bot", None]),
              "to": st.sampled_from(["fixed", "still-open", "stale", "reaffirmed", "challenged", "accepted", "wontfix",
                                     "obsolete", "reopen", "keep", "nonsense", 4]),
              "run": runs, "reason": st.one_of(texts, st.just(5)), "scope_hash": st.sampled_from(["abcdef012345", 1]),
              "reason_redacted": st.sampled_from([True, False]), "reason_hash": st.sampled_from(["abcdef012345", "x"])},
)
commit = st.fixed_dictionaries(
    {"t": st.just("run"), "action": st.sampled_from(["commit", "commit", "open"]), "run": runs, "ns": spaces},
    optional={"summary": st.sampled_from([["ok"], [], "x", [1]])},
)
other = st.one_of(
    st.fixed_dictionaries({"t": st.just("call"), "call_id": st.sampled_from(["run-001-C-01", "run-002-C-01", "c"]),
                           "kind": st.just("reversal"), "run": runs, "ns": spaces, "conflicts_with": ids},
                          optional={"claim": texts, "redacted": st.just(True)}),
    st.fixed_dictionaries({"t": st.just("score"), "run": runs, "outcome": st.sampled_from(["success", "meh"]),
                           "by": st.just("human")}),
    st.fixed_dictionaries({"t": st.just("injected"), "run": runs, "ids": st.sampled_from([["P-0001"], "x"])}),
    st.fixed_dictionaries({"t": st.just("learned"), "runs": st.sampled_from([["run-001"], [2]])}),
    st.fixed_dictionaries({"t": st.sampled_from(["mystery", 7])}),
    st.dictionaries(st.sampled_from(["id", "run", "x"]), scalars, max_size=3),
)
record = st.one_of(prior, prior, event, event, event, commit, other)


def _written(rec, how):
    """A record's line as a keeper writes it, or as a hand edit, another tool or a bad merge might."""
    if how == "canonical" or how == "canonical2" or how == "canonical3":
        return dumps(rec)
    if how == "spaced":
        return json.dumps(rec, ensure_ascii=False, sort_keys=True)
    if how == "reversed":
        return json.dumps(dict(reversed(list(rec.items()))), ensure_ascii=False, separators=(",", ":"))
    if how == "ascii":
        return json.dumps(rec, sort_keys=True, separators=(",", ":"))
    if how == "twice":  # a key written twice: the last one wins on reading
        return '{"t":"x",' + dumps(rec)[1:] if rec else "{}"
    if how == "crlf":
        return dumps(rec) + "\r"
    if how == "padded":
        return " " + dumps(rec)
    if how == "slash":
        return dumps(rec).replace("/", "\\/")
    return how  # a damaged or blank line, as given


hows = st.sampled_from(["canonical", "canonical2", "canonical3", "spaced", "reversed", "ascii", "twice", "crlf", "padded",
                        "slash"])
junk = st.sampled_from(["", " ", "[1]", "{", '{"t":"prior"}x', "<<<<<<< HEAD", '"x"', "{\"t\":NaN}", "{\"a\":1}{}", "\ud800"])
lines = st.lists(st.one_of(st.tuples(record, hows).map(lambda p: _written(*p)),
                           st.tuples(record, hows).map(lambda p: _written(*p)), junk),
                 max_size=14)


def _run_block(recs):
    """Lines shaped like one committed run, so the quick rules for whole blocks are exercised."""
    run = recs[0].get("born") if recs and isinstance(recs[0].get("born"), str) else "run-001"
    out = []
    for i, rec in enumerate(recs):
        out.append(dict(rec, id=f"P-{i + 1:04d}", born=run, ns="web"))
    out += [{"t": "event", "id": f"P-{i + 1:04d}", "action": "disposition", "by": "agent", "to": "fixed", "run": run}
            for i in range(len(recs) // 2)]
    out.append({"t": "run", "action": "commit", "run": run, "ns": "web", "summary": []})
    return out


blocks = st.lists(prior, max_size=6).map(_run_block)


bad_values = st.sampled_from([None, "", 0, 7, True, [], ["x"], {}, "x", "P-0001", "run-001", "gate", "  two", 2 ** 60, 1.5])
prior_keys = st.sampled_from(["id", "born", "ns", "type", "claim", "facets", "scope_ref", "scope_hash", "severity",
                              "depth", "review_every", "direction", "redacted", "t", "evidence"])
event_keys = st.sampled_from(["id", "action", "by", "to", "run", "reason", "t", "reason_redacted", "scope_hash"])


@st.composite
def ledgers(draw):
    """A ledger as keepers write it — runs sealed by commits, decisions between them — with now and
    then one line broken: a field given a bad value, a line moved, repeated or written another way."""
    recs, known, next_id = [], [], 1
    for r in range(draw(st.integers(0, 5))):
        run = f"run-{r + 1:03d}"
        ns = draw(st.sampled_from(["web", "api"]))
        for pid in draw(st.lists(st.sampled_from(known), unique=True, max_size=4)) if known else []:
            rec = {"t": "event", "id": pid, "action": "disposition", "by": "agent", "run": run,
                   "to": draw(st.sampled_from(["fixed", "still-open", "stale", "reaffirmed", "challenged", "obsolete-proposed"]))}
            if draw(st.booleans()):
                rec["scope_hash"] = "abcdef012345"
            recs.append(rec)
        for pid in draw(st.lists(st.sampled_from(known), unique=True, max_size=2)) if known else []:
            recs.append({"t": "event", "id": pid, "action": "scope-missing", "run": run})
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(sorted(PRESETS)))
            rec = {"t": "prior", "id": f"P-{next_id:04d}", "born": run, "ns": ns, "type": kind,
                   "claim": draw(st.sampled_from(["a claim", "dash — here", "x" * 90, "with, comma"])),
                   "facets": dict(PRESETS[kind])}
            if PRESETS[kind]["scope"] != "repo-wide" or draw(st.booleans()):
                rec["scope_ref"], rec["scope_hash"] = draw(st.sampled_from(["src/a.ts", "docs/b.md"])), "abcdef012345"
            extras = draw(st.dictionaries(st.sampled_from(["severity", "depth", "review_every", "direction", "evidence"]),
                                          st.sampled_from(["minor", "gate", 3, "up", "repo:1 x"]), max_size=3))
            for key, value in extras.items():
                rec[key] = value
            recs.append(rec)
            known.append(rec["id"])
            next_id += 1
        recs.append({"t": "run", "action": "commit", "run": run, "ns": ns, "summary": ["ok"]})
        for pid in draw(st.lists(st.sampled_from(known), unique=True, max_size=2)) if known else []:
            to = draw(st.sampled_from(["accepted", "wontfix", "obsolete", "reopen", "keep"]))
            rec = {"t": "event", "id": pid, "action": "decide", "by": "human", "to": to}
            if to == "reopen" or draw(st.booleans()):
                rec["reason"] = "because"
            recs.append(rec)
    lines = [dumps(rec) for rec in recs]
    for _ in range(draw(st.integers(0, 2))):
        if not recs:
            break
        i = draw(st.integers(0, len(recs) - 1))
        rec = dict(recs[i])
        how = draw(st.sampled_from(["field", "field", "drop", "move", "again", "written"]))
        if how == "field":
            rec[draw(prior_keys if rec["t"] == "prior" else event_keys)] = draw(bad_values)
            lines[i] = dumps(rec)
        elif how == "drop":
            rec.pop(draw(prior_keys if rec["t"] == "prior" else event_keys), None)
            lines[i] = dumps(rec)
        elif how == "move":
            lines.insert(draw(st.integers(0, len(lines))), lines.pop(i))
        elif how == "again":
            lines.insert(draw(st.integers(0, len(lines))), lines[i])
        else:
            lines[i] = _written(rec, draw(hows))
    return lines


def _same_answer(data: bytes) -> None:
    quick = check_ledger(data, render=True)
    strict = check_ledger(data, render=True, strict=True)
    assert quick.problems == strict.problems
    assert quick.warnings == strict.warnings
    assert (quick.damaged, quick.lines, quick.committed) == (strict.damaged, strict.lines, strict.committed)
    want = render_expected(data)  # PRIORS.md from parsing every line and folding every record
    if want is None:
        assert quick.renders_as(b"") is None and strict.renders_as(b"") is None
        return
    assert quick.renders_as(want) is True and strict.renders_as(want) is True
    assert quick.renders_as(want + b"\n") is False and quick.renders_as(want[:-1]) is False


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(lines, st.booleans())
def test_quick_verify_agrees_with_strict_on_any_ledger(lines, final_newline):
    data = "\n".join(lines).encode("utf-8", "surrogatepass") + (b"\n" if final_newline and lines else b"")
    _same_answer(data)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(blocks, max_size=4), st.lists(st.tuples(record, hows), max_size=4), st.randoms())
def test_quick_verify_agrees_with_strict_on_committed_runs(runs, extra, rnd):
    recs = [rec for block in runs for rec in block]
    lines = [dumps(rec) for rec in recs]
    for rec, how in extra:  # a few odd lines slipped in anywhere
        lines.insert(rnd.randint(0, len(lines)), _written(rec, how))
    _same_answer(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(ledgers())
def test_quick_verify_agrees_with_strict_on_ledgers_keepers_write(lines):
    _same_answer(("\n".join(lines) + "\n").encode("utf-8"))


def test_a_generated_ledger_reads_alike_both_ways(tmp_path):
    """Thousands of reference-shaped lines (the bench generator), sound, then with a line edited."""
    from conftest import gen_ledger

    gen_ledger().generate(1500, tmp_path, seed=7)
    data = (tmp_path / ".priors" / "ledger.jsonl").read_bytes()
    assert not check_ledger(data).problems
    _same_answer(data)
    lines = data.split(b"\n")
    lines[40] = lines[40].replace(b'"t":', b'"t" :', 1)
    lines[41] = lines[41].replace(b'"ns":"', b'"ns":"x', 1)
    _same_answer(b"\n".join(lines))


# ---------------------------------------------------------------- the canonical proof by length

plain_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0xD7FF), max_size=6)
flat = st.dictionaries(plain_text, plain_text, min_size=1, max_size=5)
nested = st.builds(lambda d, f: dict(d, facets=f), flat, flat)


def _variants(value):
    """Texts that parse to `value` (or to a value like it): the canonical one and near misses."""
    yield dumps(value)
    yield json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # keys in insertion order
    yield json.dumps(value, ensure_ascii=False, sort_keys=True)  # spaces
    yield json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).replace(":", ": ", 1)
    text = dumps(value)
    yield text[:-1] + "," + text[1:-1] + "}" if len(value) else text  # every key twice


@settings(max_examples=500, deadline=None)
@given(st.one_of(flat, nested))
def test_length_proof_of_canonical_text_never_passes_another_text(value):
    """A line the length proof calls canonical is exactly `dumps` of what it parses to."""
    for text in _variants(value):
        if "\\" in text:
            continue  # the proof is only ever asked about lines without an escape
        try:
            parsed = json.loads(text)
        except ValueError:
            continue
        if type(parsed) is dict and proves_canonical(parsed, text):
            assert dumps(parsed) == text


@given(st.one_of(flat, nested))
def test_length_proof_clears_the_canonical_line(value):
    text = dumps(value)
    facets = value.get("facets", {})
    if "\\" not in text and type(facets) is dict and facets != {} and all(type(v) is str for v in facets.values()):
        assert proves_canonical(json.loads(text), text)


# ---------------------------------------------------------------- PRIORS.md cells written as they read

cell_text = st.one_of(
    st.text(alphabet=st.one_of(st.characters(), st.sampled_from(" |\\\u2014\x7f\u202e\u00ad\u2028\ud800")), max_size=12),
    st.text(alphabet="ab -\u2014", max_size=12),
)
words = st.from_regex("[ab\u2014.-]{1,5}( [ab\u2014.-]{1,5}){0,3}", fullmatch=True)  # cells written as they read
cells = st.one_of(cell_text, words, words)


def _cell_the_long_way(text):
    """What a table cell always was: escape `\\` and `|`, show lone surrogates as U+FFFD, collapse
    whitespace, write controls and bidi characters as `\\uXXXX`."""
    import re

    from priors.core.controls import visible

    plain = (r"[^\\|\s\ud800-\udfff\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
             r"\ufff9-\ufffb\U000e0000-\U000e007f]*")
    if re.fullmatch(plain, text):
        return text
    text = re.sub("[\\ud800-\\udfff]", "\ufffd", text.replace("\\", "\\\\").replace("|", "\\|"))
    return visible(" ".join(text.split()))


@given(cell_text)
def test_a_cell_kept_as_it_reads_is_what_escaping_would_give(text):
    from priors.core.views import table_cell

    assert table_cell(text) == _cell_the_long_way(text)


@settings(max_examples=200, deadline=None)
@given(cells, cells, cells, cells, st.one_of(cells, st.from_regex("[ab\u2014]{1,9}( [ab\u2014]{1,9}){8,12}", fullmatch=True)))
def test_a_row_checked_whole_is_the_row_built_cell_by_cell(pid, ns, kind, where, claim):
    from priors.core.views import _cut, row_parts, row_plain

    parts = row_plain(pid, ns, kind, where, claim)
    if parts is not None:
        what = _cut(" ".join(claim.split()))
        assert parts == (f"| {_cell_the_long_way(pid)} | {_cell_the_long_way(ns)} | ", _cell_the_long_way(kind),
                         f" | {_cell_the_long_way(where)} | {_cell_the_long_way(what)} |")
        rec = {"ns": ns, "type": kind, "scope_ref": where, "claim": claim}
        assert row_parts(pid, rec) == parts
