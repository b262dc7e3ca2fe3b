"""No ledger line, however odd, crashes verify, show/list/history, the SVG or the merge — and what
they return still holds its basic promises on such input."""

import xml.dom.minidom

import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ledgerkit as k
from priors.core.canonical import dumps, split_lines
from priors.core.history import history_rows, history_svg, history_text, show_text, timeline
from priors.core.ledger_checks import check, render_expected
from priors.core.ledger_growth import check_since
from priors.core.listing import list_rows, list_text
from priors.core.merge_rules import Conflict, merge

vals = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3),
    st.sampled_from(["P-0001", "P-0002", "run-001", "run-002", "web", "fixed", "decide", "disposition", "redact",
                     "scope-missing", "commit", "prior", "event", "call", "run", "x", "still-open", "accepted", "reopen"]),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.sampled_from(["scope", "activation", "obligation", "authority", "lifecycle"]),
                    st.sampled_from(["content-hash", "repo-wide", "run-start", "verify-phase", "binding", "advisory",
                                     "veto-only"]), max_size=5))
keys = st.sampled_from(["t", "id", "ns", "type", "facets", "claim", "born", "run", "action", "to", "by", "reason", "call_id",
                        "conflicts_with", "redacted", "content_hash", "summary", "scope_ref", "scope_hash", "review_every",
                        "direction", "severity"])
rec = st.dictionaries(keys, vals, max_size=8)


def _has_tombstone(recs) -> bool:
    return any(r.get("t") == "prior" and r.get("redacted") is True for r in recs)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(rec, st.sampled_from(k.sample())), max_size=10))
def test_never_crashes(recs):
    data = "".join(dumps(r)+"\n" for r in recs).encode()
    n = len(split_lines(data))

    # verify: problems name a line of this ledger (0 = the file as a whole), with a code; same answer twice
    probs, warns = check(data)
    for p in probs + warns:
        assert isinstance(p.line, int) and 0 <= p.line <= n + 1, p
        assert p.code and p.code == p.code.upper() and p.message, p
    assert check(data) == (probs, warns)
    md = render_expected(data)
    assert md is None or (isinstance(md, bytes) and md.endswith(b"\n"))
    if not probs:
        assert md is not None  # a sound ledger always has a rendering

    # history / list / show
    rows = history_rows(recs)
    text = history_text(rows)
    assert (text == "no committed runs yet") == (not rows)
    for r in rows:
        assert r.run in text
    svg = history_svg(rows)
    xml.dom.minidom.parseString(svg.encode("utf-8"))  # well-formed, whatever the names hold
    assert svg.count("✓</text>") == sum(1 for r in rows if r.quiescent)
    listed = list_rows(recs)
    lt = list_text(listed)
    assert (lt == "no priors match") == (not listed)
    for row in listed:
        assert row["id"] in lt
    for pid in ("P-0001","P-0002"):
        b = timeline(recs, pid)
        if b:
            assert show_text(b).startswith(pid + " ")

    # merge: identical sides over an empty base give our ledger back (when nothing redacts it)
    m = merge(b"", data, data)
    assert isinstance(m, (bytes, Conflict))
    if isinstance(m, bytes) and not _has_tombstone(recs):
        assert m.startswith(data)
    # the other side added nothing: the merge is our side, byte for byte
    s = k.to_bytes(k.sample())
    m = merge(s, s + data, s)
    assert isinstance(m, Conflict) or m == s + data
    m = merge(k.to_bytes(k.sample()), data, k.to_bytes(k.sample()))
    assert isinstance(m, (bytes, Conflict))

    # verify --since: a ledger only grew from itself and from any of its prefixes
    assert check_since(data, data) == []
    half = data.rfind(b"\n", 0, len(data) // 2) + 1  # the first whole lines, about half
    assert check_since(data[:half], data) == []
    assert all(isinstance(p.line, int) and p.code for p in check_since(data, data[::-1]))
