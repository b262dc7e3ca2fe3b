"""show, list, history and report never hold the ledger's records (docs/reliability.md, issue 32's memory
line): they read it a block at a time, fold priors down to where their lines are, or find a prior's few
lines by their bytes. Each answer must be the one a straightforward reading gives — every record parsed
and held, then folded — on ledgers whose lines straddle the blocks they are read in, that stray from the
clean form (a blank line, CRLF, no final newline, an escaped id) and that are damaged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

import ledgerkit as k
from conftest import gen_ledger
from priors.core.answer import Answer
from priors.core.canonical import dumps
from priors.core.desk import waiting_plan
from priors.core.errors import DamagedLedger, Refusal
from priors.core.fold import parse_lines
from priors.core.history import history_and_state, history_rows, history_text, spans_of, timeline
from priors.core.lessons import Ledger
from priors.core.listing import list_rows, list_text
from priors.core.report_html import PageFacts, report_html
from priors.ops import timeline as views
from priors.ops.desk import lesson_calls
from priors.ops.report import report
from priors.store import ledger as store
from priors.store.paths import Paths

# a prior's line cut across blocks of 61 bytes, and across 4 KiB
BLOCKS = (61, 4096)


def _tree(root: Path, data: bytes) -> Paths:
    (root / ".priors").mkdir(parents=True, exist_ok=True)
    (root / ".priors" / "ledger.jsonl").write_bytes(data)
    return Paths(root)


def _odd_ledger() -> List[Dict[str, Any]]:
    """The sample, plus what the shortcuts must not miss: a reversal resolved by a decision, a call id reused
    against another prior, a run's attempts on a prior, a finding's review cadence, a prior restated, facets
    that are not plain text, a redaction."""
    recs = k.sample() + [
        k.prior("P-0004", "run-004", review_every=1, facets=dict(k.BEHAVIORAL)),
        k.prior("P-0005", "run-004", facets={"scope": ["odd"], "activation": "verify-phase"}),
        k.call("run-004", 1, "P-0002"), k.call("run-004", 2, "P-0003"),
        {"t": "run", "action": "commit", "run": "run-004", "ns": "web", "summary": ["x"],
         "attempts": [{"of": "P-0003", "code": "SETTLED", "claim": "again"}]},
        k.decide("P-0002", "reopen", "changed our minds"),
        k.prior("P-0001", "run-005", claim="restated"), k.disp("P-0003", "run-005", "still-open"),
        k.disp("P-0004", "run-005", "fixed"),
        k.call("run-005", 1, "P-0004"), k.commit("run-005", ns="api"),
    ]
    return k.redact(recs, "P-0005")


def _variants(recs: List[Dict[str, Any]]) -> Dict[str, bytes]:
    """The ledger as the keeper writes it, and as hands and other tools leave it."""
    lines = [dumps(r).encode("utf-8") for r in recs]
    clean = b"".join(x + b"\n" for x in lines)
    escaped = [x.replace(b'"id":"P-0003"', b'"id":"\\u0050-0003"') for x in lines]  # the id as an escape only
    return {
        "clean": clean,
        "escaped": b"".join(x + b"\n" for x in escaped),
        "blank line": b"\n".join(lines[:5]) + b"\n\n" + b"\n".join(lines[5:]) + b"\n",
        "crlf": b"".join(x + b"\r\n" for x in lines),
        "no final newline": clean[:-1],
        "spaced": b"".join(json.dumps(r, indent=None).encode("utf-8") + b"\n" for r in recs),
    }


def _generated(tmp_path: Path) -> bytes:
    gen_ledger().main(["60", str(tmp_path / "gen")])
    recs = parse_lines((tmp_path / "gen" / ".priors" / "ledger.jsonl").read_bytes())
    for i, r in enumerate(recs):  # review cadences, so review nudges count too
        if r.get("t") == "prior" and i % 7 == 0 and r.get("redacted") is not True:
            recs[i] = dict(r, review_every=1 + i % 4)
    return k.to_bytes(recs)


@pytest.mark.parametrize("block", BLOCKS)
def test_read_spans_hands_over_what_read_records_holds(tmp_path, monkeypatch, block):
    monkeypatch.setattr(store, "SPAN_BLOCK", block)
    for name, data in _variants(_odd_ledger()).items():
        paths = _tree(tmp_path / name, data)
        want = store.read_records(paths)
        assert store.read_spans(paths, lambda spans, src: [rec for rec, _at, _n in spans]) == want, name
        quick = store.read_spans(paths, lambda spans, src: list(spans), packs=True)
        assert len(quick) == len(want), name
        for (rec, at, n), full in zip(quick, want):
            line = data[at:at + n]
            assert json.loads(line) == full, name  # each record's line is where it says
            if rec != full:  # a prior's line in the keepers' shape: only what a fold reads of it, all of it right
                assert rec["t"] == "prior" and all(full[key] == value for key, value in rec.items()), name
                assert set(full) - set(rec) <= {"claim", "evidence", "type", "severity", "depth", "direction",
                                                "content_hash", "supersedes"}, name


def test_a_damaged_ledger_is_refused_as_when_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "SPAN_BLOCK", 61)
    lines = k.to_bytes(_odd_ledger()).split(b"\n")
    for bad in (b'{"t":"event",', b"<<<<<<< HEAD", b"[1]", b"\xff{}"):
        paths = _tree(tmp_path / str(len(bad)), b"\n".join(lines[:6] + [bad] + lines[6:]))
        with pytest.raises(DamagedLedger) as whole:
            store.read_records(paths)
        for packs in (False, True):
            with pytest.raises(DamagedLedger) as streamed:
                store.read_spans(paths, lambda spans, src: list(spans), packs=packs)
            assert str(streamed.value) == str(whole.value)
        for verb, args in ((views.show, (paths, "P-0001")), (views.history, (paths, None, None)),
                           (views.list_priors, (paths, None, None, None)), (report, (paths, "-", None))):
            with pytest.raises(DamagedLedger) as refused:
                verb(*args)
            assert str(refused.value) == str(whole.value)


def _page_read_whole(paths: Paths, recs: List[Dict[str, Any]], since: Any = None, only: Any = None) -> str:
    """The report's page as it was made before: every record parsed and held, the whole fold kept."""
    facts = PageFacts(since)
    rows, st = history_and_state(list(rec for rec, _at, _n in facts.see(list(spans_of(recs)))))
    ledger = Ledger(st)
    low, held = lesson_calls(paths, st, ledger)
    name = paths.root.name
    return report_html(f"priors report — {name}", st, facts, rows, waiting_plan(st, low, held), ledger, since, only)


def _text(answer: Answer) -> str:
    return "".join(answer.chunks) if answer.chunks is not None else answer.text


def _same_answers(paths: Paths) -> None:
    recs = store.read_records(paths)
    rows = history_rows(recs)
    got = views.history(paths, None, None)
    assert got.obj == {"runs": [r.as_dict() for r in rows]} and got.text == history_text(rows)
    ids = [r["id"] for r in recs if r.get("t") == "prior" and isinstance(r.get("id"), str)]
    for pid in sorted(set(ids))[::max(1, len(set(ids)) // 6)] + ["P-0999"]:  # (a few of a generated ledger's)
        want = timeline(recs, pid)
        if want is None:
            with pytest.raises(Refusal) as refused:
                views.show(paths, pid)
            assert refused.value.payload()["hint"] == f"the ledger's priors are {ids[0]} … {ids[-1]}: `priors list` shows them"
        else:
            assert views.show(paths, pid).obj == want, pid
    for ns, status, typ in ((None, None, None), ("web", None, None), (None, "open", None), (None, "binding", "conclusion")):
        listed = list_rows(recs, ns, status, typ)
        assert _text(views.list_priors(paths, ns, status, typ)) == list_text(listed)
        assert _text(views.list_priors(paths, ns, status, typ, as_json=True)) == dumps({"priors": listed})
    last_ns = [r["ns"] for r in recs if r.get("t") == "run"][-1]  # (a namespace of the ledger, not the first)
    for since, only in ((None, None), ("run-002", None), (None, [last_ns]), ("run-003", [last_ns])):
        report(paths, str(paths.root / "page.html"), since, only)
        assert (paths.root / "page.html").read_bytes() == _page_read_whole(paths, recs, since, only).encode("utf-8")
        (paths.root / "page.html").unlink()


def test_the_views_answer_as_a_straightforward_reading_does(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "SPAN_BLOCK", 61)
    for name, data in _variants(_odd_ledger()).items():
        _same_answers(_tree(tmp_path / name.replace(" ", "-"), data))
    monkeypatch.setattr(store, "SPAN_BLOCK", 4096)
    _same_answers(_tree(tmp_path / "generated", _generated(tmp_path)))


def test_show_reads_only_the_lines_that_can_name_the_prior(tmp_path, monkeypatch):
    """A byte search for `"P-0002"` (or an escape) finds every line that moves P-0002: on a clean ledger
    no other record is parsed; where a line number is not a record's (a blank line) or a call id is
    shared with another prior's call, every record is read, as before."""
    seen: List[int] = []
    real = store._holding

    def counting(pieces, needles):
        for no, raw in real(pieces, needles):
            seen.append(no)
            yield no, raw

    monkeypatch.setattr(store, "_holding", counting)
    variants = _variants(_odd_ledger())
    paths = _tree(tmp_path / "clean", variants["clean"])
    assert views.show(paths, "P-0002").obj == timeline(store.read_records(paths), "P-0002")
    named = [i for i, line in enumerate(variants["clean"].split(b"\n"), 1) if b'"P-0002"' in line]
    assert seen == named
    for name in ("blank line", "no final newline"):
        seen.clear()
        paths = _tree(tmp_path / name.replace(" ", "-"), variants[name])
        assert views.show(paths, "P-0002").obj == timeline(store.read_records(paths), "P-0002")
        assert seen == []
    shared = _odd_ledger() + [dict(k.call("run-006", 1, "P-0001"), call_id="run-004-C-01"), k.commit("run-006")]
    paths = _tree(tmp_path / "shared", k.to_bytes(shared))
    seen.clear()
    assert views.show(paths, "P-0002").obj == timeline(shared, "P-0002")
    assert seen == []


def test_odd_records_read_streamed_answer_as_read_whole(tmp_path, monkeypatch):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    monkeypatch.setattr(store, "SPAN_BLOCK", 61)
    vals = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(
        ["P-0001", "P-0002", "run-001", "run-002", "web", "api", "fixed", "decide", "disposition", "redact",
         "scope-missing", "commit", "prior", "event", "call", "run", "still-open", "accepted", "reopen",
         "challenged", "run-001-C-01", "human", "a \u202e b"]),
        st.dictionaries(st.sampled_from(["scope", "activation", "obligation"]),
                        st.sampled_from(["content-hash", "run-start", "verify-phase", "inject-as-instruction"])))
    keys = st.sampled_from(["t", "id", "ns", "facets", "born", "run", "action", "to", "by", "call_id",
                            "conflicts_with", "redacted", "review_every", "scope_hash", "scope_ref", "claim", "type"])
    rec = st.dictionaries(keys, vals, max_size=8)
    n = [0]

    @settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.one_of(rec, st.sampled_from(_odd_ledger())), max_size=12))
    def check(recs):
        n[0] += 1
        paths = _tree(tmp_path / str(n[0]), k.to_bytes(recs))
        want = store.read_records(paths)
        for pid in ("P-0001", "P-0002"):
            try:
                body = timeline(want, pid)
            except TypeError:
                continue  # (the straightforward reading fails on an unhashable id too)
            if body is not None:
                assert views.show(paths, pid).obj == body
        try:
            rows = history_rows(want)
        except TypeError:
            return
        assert views.history(paths, None, None).obj == {"runs": [r.as_dict() for r in rows]}
        try:
            listed = list_rows(want)
        except TypeError:
            return
        assert _text(views.list_priors(paths, None, None, None)) == list_text(listed)

    check()


def test_list_and_show_read_the_fold_cache_and_never_write_it(tmp_path):
    """As before: reading a timeline writes nothing under `.priors/` (a first `status` writes the cache)."""
    paths = _tree(tmp_path, k.to_bytes(_odd_ledger()))
    views.show(paths, "P-0002")
    "".join(views.list_priors(paths, None, None, None).chunks or [])
    assert not (tmp_path / ".priors" / "cache").exists()
    from priors.store.ledger import load_ledger

    load_ledger(paths, want_data=False)  # (what `status` does)
    assert (tmp_path / ".priors" / "cache" / "fold.bin").is_file()
    assert views.show(paths, "P-0002").obj == timeline(store.read_records(paths), "P-0002")
