"""Property-based tests of the pure core: canonical encoding, normalization, and the fold."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from priors.core.canonical import dumps, normalize, sha12
from priors.core.errors import UsageError
from priors.core.fold import BINDING, fold
from priors.core.grammar import AGENT_VERDICTS, HUMAN_VERDICTS, validate

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_canonical_round_trips_and_is_stable(value):
    text = dumps(value)
    back = json.loads(text)
    assert dumps(back) == text
    assert "\n" not in text
    assert text.encode("utf-8")


@given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=6))
def test_canonical_sorts_keys_without_spaces(d):
    text = dumps(d)
    assert list(json.loads(text)) == sorted(d, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
    assert text == "{" + ",".join(dumps(k) + ":" + dumps(d[k]) for k in json.loads(text)) + "}"


@given(st.text())
def test_normalize_is_idempotent_and_trimmed(s):
    n = normalize(s)
    assert normalize(n) == n
    assert not n.startswith(" ") and not n.endswith(" ") and "  " not in n
    assert len(sha12(n)) == 12


NODE = shutil.which("node")
JS = r"""
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter(Boolean);
function canon(v) {
  if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
  if (v && typeof v === 'object')
    return '{' + Object.keys(v).sort().map(k => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}';
  return JSON.stringify(v);
}
for (const l of lines) {
  const [kind, v] = JSON.parse(l);
  console.log(JSON.stringify(kind === 'n' ? v.replace(/\s+/g, ' ').trim() : canon(v)));
}
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed; the JS cross-check needs it")
@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["n", "c"]), json_values), min_size=1, max_size=30))
def test_matches_javascript_byte_for_byte(cases):
    cases = [(k, v if k == "c" else json.dumps(v)) for k, v in cases]
    feed = "".join(json.dumps([k, v]) + "\n" for k, v in cases)
    out = subprocess.run([NODE, "-e", JS], input=feed, capture_output=True, text=True, encoding="utf-8", check=True)
    got = [json.loads(x) for x in out.stdout.split("\n") if x]
    want = [normalize(v) if k == "n" else dumps(v) for k, v in cases]
    assert got == want


@pytest.mark.skipif(NODE is None, reason="node is not installed; the JS cross-check needs it")
def test_ecmascript_whitespace_set_matches_javascript():
    chars = "".join(chr(c) for c in range(0x3100) if not 0xD800 <= c <= 0xDFFF) + "\ufeff"
    out = subprocess.run([NODE, "-e", "const s=require('fs').readFileSync(0,'utf8');"
                          "console.log(JSON.stringify([...s].filter(c=>/\\s/.test(c)).map(c=>c.codePointAt(0))))"],
                         input=chars, capture_output=True, text=True, encoding="utf-8", check=True)
    js_ws = set(json.loads(out.stdout))
    py_ws = {ord(c) for c in chars if normalize("a" + c + "b") == "a b"}
    assert py_ws == js_ws


# ---------------------------------------------------------------- the fold

ids = st.sampled_from(["P-0001", "P-0002", "P-0003", "P-0009"])
runs = st.sampled_from(["run-001", "run-002", "run-003", "run-004"])
prior = st.builds(lambda i, r, sh: {"t": "prior", "id": i, "ns": "n", "type": "conclusion", "claim": "c",
                                    "facets": {"activation": "verify-phase"}, "scope_ref": "a", "scope_hash": sh,
                                    "born": r}, ids, runs, st.sampled_from(["h1", "h2"]))
disposition = st.builds(lambda i, r, v: {"t": "event", "id": i, "action": "disposition", "to": v, "run": r,
                                         "by": "agent"}, ids, runs, st.sampled_from(AGENT_VERDICTS))
decide = st.builds(lambda i, v: {"t": "event", "id": i, "action": "decide", "to": v, "by": "human"},
                   ids, st.sampled_from(HUMAN_VERDICTS))
missing = st.builds(lambda i, r: {"t": "event", "id": i, "action": "scope-missing", "run": r}, ids, runs)
redact = st.builds(lambda i: {"t": "event", "id": i, "action": "redact", "by": "human", "reason": "x"}, ids)
commit = st.builds(lambda r: {"t": "run", "action": "commit", "run": r, "ns": "n", "summary": []}, runs)
records = st.lists(st.one_of(prior, disposition, decide, missing, redact, commit), max_size=40)


@given(records, records)
def test_fold_is_incremental(a, b):
    from priors.core.fold import apply

    whole = fold(a + b)
    step = fold(a)
    for rec in b:
        apply(step, rec)
    assert {k: (p.status, p.scope_hash, p.miss, p.human_idx) for k, p in whole.priors.items()} == \
        {k: (p.status, p.scope_hash, p.miss, p.human_idx) for k, p in step.priors.items()}
    assert whole.runs_order == step.runs_order


@given(st.lists(st.one_of(prior, disposition, missing, commit), max_size=40))
def test_agents_alone_never_make_anything_binding(recs):
    state = fold(recs)
    assert not any(p.status in BINDING for p in state.priors.values())


@given(records)
def test_redaction_is_final_and_resting_needs_five_misses(recs):
    state = fold(recs)
    for p in state.priors.values():
        if p.resting:
            assert p.miss >= 5 and p.status not in BINDING and p.status != "redacted"
    redacted_at = {}
    for i, r in enumerate(recs):
        if r.get("action") == "redact" and r["id"] in state.priors:
            redacted_at.setdefault(r["id"], i)
    for pid, i in redacted_at.items():
        touched_later = any(r.get("id") == pid for r in recs[i + 1:])
        if not touched_later:
            assert state.priors[pid].status == "redacted"


@given(st.dictionaries(st.sampled_from(["type", "facets", "claim", "scope_ref", "severity", "authority"]),
                       st.one_of(st.text(max_size=12), st.sampled_from(["conclusion", "calibration", "binding"]),
                                 st.fixed_dictionaries({"authority": st.sampled_from(["binding", "advisory"])}))))
def test_no_candidate_is_ever_binding(raw):
    try:
        cand = validate(raw)
    except UsageError:
        return
    assert cand.facets["authority"] == "advisory"


# ---------------------------------------------------------------- the fast paths agree with the strict ones

wild_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(alphabet=st.characters(), max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=40,
)


def _odd_numbers(value):
    """Floats and whole numbers over 2**53 in `value`: what verify's parser notes for itself."""
    from priors.core.canonical import too_large

    if isinstance(value, dict):
        return any(_odd_numbers(v) for v in value.values())
    if isinstance(value, list):
        return any(_odd_numbers(v) for v in value)
    return isinstance(value, float) or (type(value) is int and too_large(value))


@given(wild_values)
@example("\ud800")
@example({"a": ["\udfff"]})
def test_the_text_precheck_never_passes_a_value_the_writer_refuses(value):
    """verify skips the walk over a line's value when its text (and the numbers its parser noted)
    prove the walk would find nothing. Its text is a ledger line decoded from UTF-8, so the value
    is written either way a line can hold it: its characters as they are (not possible for a lone
    surrogate, which UTF-8 cannot carry) or escaped as `\\uXXXX`."""
    from priors.core.canonical import plainly_writable, value_problem
    from priors.core.vocabulary import MAX_DEPTH

    for ascii_only in (False, True):
        text = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            continue  # no ledger line holds this text: its bytes would not decode
        for depth in (3, MAX_DEPTH):
            if plainly_writable(text, depth) and not _odd_numbers(value):
                assert value_problem(value, depth) is None


def test_verify_names_values_no_keeper_writes(tmp_path):
    """The lines the text precheck cannot clear still get the walk: each is named BAD_VALUE."""
    from priors.core.ledger_checks import check_ledger

    base = {"t": "call", "call_id": "run-001-C-01", "kind": "challenge", "run": "run-001", "ns": "n",
            "conflicts_with": "P-0001"}
    lines = [dumps(dict(base, note=value))
             for value in ("\ud800", 2 ** 60, [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])]
    lines.append(dumps(dict(base, note=2 ** 53 - 1)))
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    bad = sorted(p.line for p in check_ledger(data).problems if p.code == "BAD_VALUE")
    assert bad == [1, 2, 3]


ledger_lines = st.lists(st.one_of(
    st.one_of(prior, disposition, decide, missing, redact, commit).map(dumps),
    st.sampled_from(["", " ", "[1]", "{}", '{"t":"prior"} ', "{\"t\":NaN}", "<<<<<<< HEAD", '"x"', "{\"a\":1}{}"]),
), max_size=12)


@given(ledger_lines, st.booleans())
def test_folding_while_parsing_agrees_with_parsing_then_folding(lines, final_newline):
    """The first call of a fresh clone folds each line as it is decoded (fold_data); any ledger,
    clean or damaged, ends exactly as parsing every line strictly and then folding would."""
    from priors.core.errors import DamagedLedger
    from priors.core.fold import fold_data, parse_lines

    data = "\n".join(lines).encode("utf-8") + (b"\n" if final_newline and lines else b"")
    try:
        want = fold(parse_lines(data))
    except DamagedLedger as exc:
        with pytest.raises(DamagedLedger) as got:
            fold_data(data)
        assert str(got.value) == str(exc)
        return
    have = fold_data(data)
    assert {k: (p.status, p.scope_hash, p.miss, p.human_idx, p.rec) for k, p in have.priors.items()} == \
        {k: (p.status, p.scope_hash, p.miss, p.human_idx, p.rec) for k, p in want.priors.items()}
    assert (have.runs_order, have.commits, have.max_prior, have.max_run, have.records) == \
        (want.runs_order, want.commits, want.max_prior, want.max_run, want.records)


facet_values = st.one_of(st.sampled_from(["run-start", "1", "advisory"]), st.sampled_from([True, 1, 1.0, None, 0, False]))


@given(st.lists(st.tuples(st.sampled_from(["P-0001", "P-0002", "P-0003"]),
                          st.dictionaries(st.sampled_from(["activation", "authority", "x"]), facet_values, max_size=3)),
                max_size=8))
def test_the_fold_keeps_every_record_exactly_as_its_line_says(priors):
    """Equal facet sets share one dict in the folded state; a facet `true` never turns into `1`."""
    from priors.core.fold import fold_data

    lines = [dumps({"t": "prior", "id": pid, "ns": "n", "facets": facets}) for pid, facets in priors]
    state = fold_data(("".join(line + "\n" for line in lines)).encode("utf-8"))
    last = {pid: line for (pid, _), line in zip(priors, lines)}
    assert {pid: dumps(p.rec) for pid, p in state.priors.items()} == last


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.sampled_from(["P-0001", "P-12345", "P-001", "P-0001\n", "P-\u0660\u0660\u0660\u0661", "P-00a1", "p-0001",
                                  "P-0000", "P-²²²²", "run-001", ""]),
                 st.text(alphabet="P-0123456789\u0661 ", max_size=9)))
def test_the_fold_numbers_prior_ids_as_the_vocabulary_does(pid):
    from priors.core.vocabulary import PRIOR_RE, id_number

    st_ = fold([{"t": "prior", "id": pid, "ns": "web", "claim": "x"}])
    assert st_.max_prior == max(0, id_number(PRIOR_RE, pid))


_prior_rec = st.fixed_dictionaries({
    "t": st.just("prior"), "id": st.sampled_from(["P-0001", "P-0002", "P-0003", "P-0004"]),
    "ns": st.one_of(st.sampled_from(["web", "api"]), st.integers(0, 2), st.lists(st.just("web"), max_size=1)),
    "facets": st.sampled_from([{"obligation": "inject-as-instruction", "activation": "run-start"},
                               {"obligation": "disposition-required", "activation": "verify-phase"}, "x"])})
_event_rec = st.fixed_dictionaries({
    "t": st.just("event"), "id": st.sampled_from(["P-0001", "P-0002", "P-0003", "P-0004"]),
    "action": st.sampled_from(["disposition", "decide", "scope-missing", "redact"]),
    "to": st.sampled_from(["fixed", "still-open", "stale", "accepted", "wontfix", "obsolete", "keep", "reopen"])})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_prior_rec, _event_rec), max_size=40))
def test_status_counts_are_each_priors_bucket_counted(recs):
    """`tally` groups before it counts; the counts are still one `count_bucket` per prior."""
    from priors.core.views import BUCKETS, count_bucket, tally

    state = fold(recs)
    want: dict = {}
    for p in state.priors.values():
        if isinstance(p.ns, str):
            counts = want.setdefault(p.ns, dict.fromkeys(BUCKETS, 0))
            if count_bucket(p):
                counts[count_bucket(p)] += 1
    got = tally(state)
    assert got == want and list(got) == list(want)


_ids = st.sampled_from(["P-0001", "P-0002", "P-0003"])
_runs = st.one_of(st.sampled_from(["run-001", "run-002", "run-003", "run-1"]), st.none(), st.integers(0, 2))
_line = st.one_of(
    st.fixed_dictionaries({"t": st.just("prior"), "id": _ids, "born": _runs, "ns": st.just("web")},
                          optional={"redacted": st.just(True), "scope_hash": st.sampled_from(["abc", 1])}),
    st.fixed_dictionaries({"t": st.just("event"), "id": _ids, "run": _runs,
                           "action": st.sampled_from(["disposition", "decide", "scope-missing", "redact", "other"]),
                           "to": st.sampled_from(["fixed", "still-open", "stale", "keep", "reopen", "wontfix", 3])}),
    st.fixed_dictionaries({"t": st.just("call"), "run": _runs, "conflicts_with": _ids, "call_id": st.just("c")}),
    st.fixed_dictionaries({"t": st.just("run"), "run": _runs, "action": st.sampled_from(["commit", "abort"])}),
    st.fixed_dictionaries({"t": st.sampled_from(["score", "injected", "learned", None]), "run": _runs}),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, max_size=30))
def test_the_history_fold_moves_priors_runs_and_commits_as_the_whole_fold_does(recs):
    """`apply_priors` (what `priors history` folds with) leaves the priors, the run order and the
    commits exactly as `apply` does, after every line."""
    from priors.core.fold import State, apply, apply_priors

    whole, lean = State(), State()
    for rec in recs:
        apply(whole, rec)
        apply_priors(lean, rec)
        assert lean.priors == whole.priors
        assert [list(p) for p in lean.priors.values()] == [list(p) for p in whole.priors.values()]
        assert (lean.runs_order, lean.commits) == (whole.runs_order, whole.commits)


# ------------------------------------------------------------------ a line read as text (the first call's fold)

_text = st.one_of(st.sampled_from(["web", "api", "w\u00e9b", "a\"b", "back\\slash", "tab\there", "\u2028", "", "run-002",
                                   "\U0001f600", "x\u0000y"]), st.text(max_size=6))
_plainish = st.one_of(st.sampled_from(["web", "api", "w\u00e9b", "run-001", "run-002", "run-1", "P-0001"]), _text)
_values = st.one_of(_plainish, st.integers(-3, 3), st.booleans(), st.none(), st.just(2.0), st.lists(st.just("x"), max_size=1))
_facets = st.one_of(
    st.dictionaries(st.sampled_from(["activation", "obligation", "authority", "a\"k"]),
                    st.one_of(st.sampled_from(["run-start", "verify-phase", "inject-as-instruction", "advisory"]), _text),
                    max_size=3),
    st.dictionaries(st.sampled_from(["activation", "x"]), _values, max_size=2), _values)
_quick_prior = st.fixed_dictionaries(
    {"t": st.just("prior"), "id": st.one_of(st.sampled_from(["P-0001", "P-0002", "P-0003", "P-12345"]), _values)},
    optional={"born": _plainish, "claim": _text, "content_hash": _text, "depth": _values, "direction": _text,
              "evidence": _text, "facets": _facets, "ns": st.one_of(_plainish, _values), "redacted": _values,
              "review_every": st.one_of(st.integers(-1, 10**20), _values), "scope_hash": _plainish,
              "scope_ref": st.one_of(_plainish, _values), "severity": _text, "supersedes": _text, "type": _text,
              "tags": st.lists(_text, max_size=1), "run": _plainish})
_quick_event = st.fixed_dictionaries(
    {"t": st.just("event"), "id": st.one_of(st.sampled_from(["P-0001", "P-0002", "P-0003"]), _values),
     "action": st.one_of(st.sampled_from(["disposition", "decide", "scope-missing", "redact"]), _values)},
    optional={"by": st.one_of(st.sampled_from(["agent", "human"]), _values), "reason": _text,
              "run": st.one_of(_plainish, _values), "scope_hash": st.one_of(_plainish, _values),
              "to": st.one_of(st.sampled_from(["fixed", "still-open", "stale", "keep", "reopen", "wontfix"]), _values),
              "via": _text})
_plain_text = st.sampled_from(["web", "api", "w\u00e9b", "run-001", "run-002", "\U0001f600", ""])
_keeper_prior = st.fixed_dictionaries(  # as the keeper writes them: most are read as text
    {"t": st.just("prior"), "id": st.sampled_from(["P-0001", "P-0002", "P-0003", "P-12345", "P-01"]),
     "born": st.sampled_from(["run-001", "run-002", "run-003", "run-1", "x"]), "claim": _text},
    optional={"evidence": _text, "ns": _plain_text, "redacted": st.just(True), "content_hash": _text,
              "facets": st.dictionaries(st.sampled_from(["activation", "obligation", "authority"]),
                                        st.sampled_from(["run-start", "verify-phase", "inject-as-instruction", "advisory",
                                                         "w\u00e9b", "q\"uote"]), max_size=3),
              "review_every": st.one_of(st.integers(0, 12), st.just(10**17)), "scope_hash": _plain_text,
              "scope_ref": _plain_text, "severity": _text, "type": _text})
_keeper_event = st.fixed_dictionaries(
    {"t": st.just("event"), "id": st.sampled_from(["P-0001", "P-0002", "P-0003", "P-0009"]),
     "action": st.sampled_from(["disposition", "decide", "scope-missing", "redact"])},
    optional={"by": st.sampled_from(["agent", "human"]), "reason": _text,
              "run": st.sampled_from(["run-001", "run-002", "run-004"]),
              "scope_hash": _plain_text,
              "to": st.sampled_from(["fixed", "still-open", "stale", "keep", "reopen", "wontfix", "reaffirmed", "obsolete"])})
_other_line = st.sampled_from([
    '{"action":"commit","ns":"web","run":"run-001","summary":[],"t":"run"}',
    '{"action":"commit","ns":"web","run":"run-002","summary":[],"t":"run"}',
    '{"call_id":"c","conflicts_with":"P-0001","run":"run-002","t":"call"}',
    '{"id":"P-0001","t":"prior"}', '{"id": "P-0002", "t": "prior"}', '{"t":"prior","id":"P-0003"}',
    '{"born":"run-001","born":"run-002","id":"P-0001","t":"prior"}', '{"action":"decide","id":"P-0001","t":"event","to":"keep"}',
    '{"action":"redact","by":"human","id":"P-0002","reason":"x","t":"event"}', '{"t":"score","run":"run-001"}'])


@settings(max_examples=400, deadline=None)
def _spoiled(line: str, how: int) -> str:
    """A keeper-shaped line made invalid JSON in one of the ways a pattern could let through."""
    cut = line.index('"claim":"') + 9
    return [line[:cut] + "\u0001" + line[cut:],           # a raw control character inside a string
            line[:cut] + "\\x" + line[cut:],             # an escape JSON does not have
            line[:cut] + "\\u12" + line[cut:],           # a \u escape cut short
            line[:-1],                                    # no closing brace
            line[:-1] + ",}",                             # a trailing comma
            line.replace('":"', '":', 1)][how]            # a string without its opening quote


_spoiled_line = st.builds(_spoiled, _keeper_prior.map(dumps), st.integers(0, 5))


@given(st.lists(st.one_of(_keeper_prior.map(dumps), _keeper_event.map(dumps), _quick_prior.map(dumps),
                          _quick_event.map(dumps), _other_line, _spoiled_line), max_size=14),
       st.sampled_from([1, 64, 1 << 20]))
def test_a_line_read_as_text_folds_as_its_decoded_record(lines, block):
    """The first call folds a prior's or an event's canonical line from its text, without decoding
    it; any ledger ends in exactly the state (every prior's fields and where its line lies, the
    runs, the lessons loop) that decoding each line and applying it gives."""
    from priors.core import ledger_parse
    from priors.core.fold import State, apply_at, fold_data

    class Source:  # reads a record back from its line, as the store's LedgerSource does
        def __init__(self, data: bytes) -> None:
            self.data = data

        def inflate(self, p):
            at, n = p[6]
            return json.loads(self.data[at:at + n])

    from priors.core.errors import DamagedLedger

    data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")
    src = Source(data)
    saved = ledger_parse.BLOCK
    ledger_parse.BLOCK = block
    try:
        try:
            ledger_parse.parse_strict(data, "x")
        except DamagedLedger as exc:  # a line the strict parse refuses: refused alike, naming the same line
            with pytest.raises(DamagedLedger) as got:
                fold_data(data, "x", src)
            assert str(got.value) == str(exc)
            return
        have = fold_data(data, "x", src)
    finally:
        ledger_parse.BLOCK = saved
    want = State()
    for rec, at, n in ledger_parse.parse_strict(data, "x"):
        apply_at(want, rec, at, n, src)
    assert have == want
    assert {k: list(p) for k, p in have.priors.items()} == {k: list(p) for k, p in want.priors.items()}
    assert have.awaiting == want.awaiting
    for k, p in have.priors.items():
        assert dumps(p.record()) == dumps(want.priors[k].record())
