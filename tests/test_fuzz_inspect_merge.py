"""No ledger line, however odd, crashes verify, show/list/history, the SVG or the merge."""

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st, HealthCheck  # noqa: E402
from priors.core.canonical import dumps
from priors.core.ledger_checks import check, render_expected, check_since
from priors.core.history import history_rows, list_rows, timeline, history_svg, history_text, show_text, list_text
from priors.core.merge_rules import merge
import ledgerkit as k
vals = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["P-0001","P-0002","run-001","run-002","web","fixed","decide","disposition","redact","scope-missing","commit","prior","event","call","run","x", "still-open","accepted","reopen"]), st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.sampled_from(["scope","activation","obligation","authority","lifecycle"]), st.sampled_from(["content-hash","repo-wide","run-start","verify-phase","binding","advisory","veto-only"]), max_size=5))
keys = st.sampled_from(["t","id","ns","type","facets","claim","born","run","action","to","by","reason","call_id","conflicts_with","redacted","content_hash","summary","scope_ref","scope_hash","review_every","direction","severity"])
rec = st.dictionaries(keys, vals, max_size=8)
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(rec, st.sampled_from(k.sample())), max_size=10))
def test_never_crashes(recs):
    data = "".join(dumps(r)+"\n" for r in recs).encode()
    check(data); render_expected(data)
    rows = history_rows(recs); history_text(rows); history_svg(rows)
    list_text(list_rows(recs))
    for pid in ("P-0001","P-0002"):
        b = timeline(recs, pid)
        if b: show_text(b)
    merge(b"", data, data); merge(k.to_bytes(k.sample()), data, k.to_bytes(k.sample()))
    check_since(data, data[::-1])
