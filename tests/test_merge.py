"""The ledger merge: pure merges of hand-built ledgers, then real git repositories merged with the driver."""

from __future__ import annotations

from typing import Any, Dict, List

import ledgerkit as k
from priors.canonical import loads
from priors.fold import fold, parse_lines
from priors.merge import Conflict, merge
from priors.verify import check


def b(recs: List[Dict[str, Any]]) -> bytes:
    return k.to_bytes(recs)


def recs(data: bytes) -> List[Dict[str, Any]]:
    return [loads(x) for x in data.decode().splitlines()]


def ours_side() -> List[Dict[str, Any]]:
    return k.sample() + [
        k.disp("P-0003", "run-004", "still-open"),
        k.prior("P-0004", "run-004", claim="ours four"),
        k.commit("run-004"),
        k.decide("P-0004", "accepted", "ours likes it"),
    ]


def theirs_side() -> List[Dict[str, Any]]:
    return k.sample() + [
        k.disp("P-0003", "run-004", "fixed"),
        k.prior("P-0004", "run-004", claim="theirs four"),
        k.prior("P-0005", "run-004", claim="theirs five"),
        k.call("run-004", 1, "P-0001"),
        k.commit("run-004"),
        k.decide("P-0004", "wontfix", "theirs says no"),
        k.prior("P-0006", "run-005", claim="theirs six", ns="api"),
        k.commit("run-005", ns="api"),
    ]


def test_diverging_runs_are_renumbered_after_ours():
    base, ours, theirs = b(k.sample()), b(ours_side()), b(theirs_side())
    out = merge(base, ours, theirs)
    assert isinstance(out, bytes)
    assert check(out)[0] == []
    lines = recs(out)
    assert len(lines) == len(k.sample()) + 4 + 8
    assert lines[: len(k.sample()) + 4] == ours_side()
    tail = lines[len(k.sample()) + 4 :]
    assert tail[0] == k.disp("P-0003", "run-005", "fixed")
    assert [r["id"] for r in tail if r["t"] == "prior"] == ["P-0005", "P-0006", "P-0007"]
    assert tail[3]["call_id"] == "run-005-C-01" and tail[3]["run"] == "run-005" and tail[3]["conflicts_with"] == "P-0001"
    assert tail[5] == k.decide("P-0005", "wontfix", "theirs says no")
    assert tail[6]["born"] == "run-006" and tail[7]["run"] == "run-006"
    st = fold(parse_lines(out))
    assert st.priors["P-0004"].status == "accepted" and st.priors["P-0005"].status == "wontfix"
    assert st.priors["P-0005"].claim == "theirs four"


def test_merge_is_deterministic_and_trivial_sides():
    base, ours, theirs = b(k.sample()), b(ours_side()), b(theirs_side())
    assert merge(base, ours, theirs) == merge(base, ours, theirs)
    assert merge(base, ours, base) == ours
    assert merge(base, base, theirs) == theirs


def test_no_renumbering_without_collision():
    base = b(k.sample())
    ours = b(k.sample() + [k.decide("P-0001", "keep")])
    theirs = b(theirs_side())
    out = merge(base, ours, theirs)
    assert isinstance(out, bytes)
    assert recs(out)[len(k.sample()) + 1 :] == theirs_side()[len(k.sample()) :]


def test_redaction_on_ours_wins_over_their_new_lines():
    base = k.sample()
    ours = k.redact(list(base), "P-0002", "leaked a token")
    theirs = base + [
        k.decide("P-0002", "reopen", "the secret is hunter2"),
        k.disp("P-0002", "run-004", "fixed"),
        k.call("run-004", 1, "P-0002"),
        k.commit("run-004"),
    ]
    out = merge(b(base), b(ours), b(theirs))
    assert isinstance(out, bytes)
    assert b"hunter2" not in out and b"we like it" not in out
    assert check(out)[0] == []
    lines = recs(out)
    assert lines[-1] == {"t": "event", "id": "P-0002", "action": "redact", "by": "human", "reason": "leaked a token"}
    assert lines[1]["redacted"] is True
    assert fold(parse_lines(out)).priors["P-0002"].status == "redacted"
    call = [r for r in lines if r["t"] == "call"][0]
    assert call == {"t": "call", "call_id": "run-004-C-01", "kind": "reversal", "run": "run-004", "ns": "web", "conflicts_with": "P-0002", "redacted": True}


def test_redaction_on_theirs_wins_over_our_new_lines():
    base = k.sample()
    ours = base + [k.decide("P-0001", "keep", "secret words"), k.disp("P-0001", "run-004", "fixed"), k.commit("run-004")]
    theirs = k.redact(list(base), "P-0001", "oops")
    out = merge(b(base), b(ours), b(theirs))
    assert isinstance(out, bytes)
    assert b"secret words" not in out and b"claim of P-0001" not in out
    assert check(out)[0] == []
    assert fold(parse_lines(out)).priors["P-0001"].status == "redacted"


def test_both_sides_redact_the_same_prior():
    base = k.sample()
    out = merge(b(base), b(k.redact(list(base), "P-0002", "a")), b(k.redact(list(base), "P-0002", "b")))
    assert isinstance(out, bytes)
    assert check(out)[0] == []
    assert [r.get("reason") for r in recs(out) if r.get("action") == "redact"] == ["a", "b"]


def test_their_redaction_of_their_own_prior_is_renumbered():
    base = k.sample()
    theirs = k.redact(theirs_side(), "P-0005", "private")
    out = merge(b(base), b(ours_side()), b(theirs))
    assert isinstance(out, bytes)
    assert check(out)[0] == []
    assert fold(parse_lines(out)).priors["P-0006"].status == "redacted"


def test_not_append_only_is_a_conflict():
    base = k.sample()
    edited = [dict(r) for r in base]
    edited[4]["to"] = "still-open"
    res = merge(b(base), b(edited), b(theirs_side()))
    assert isinstance(res, Conflict) and "ours is not an append-only extension" in res.reason and "line 5" in res.reason
    res = merge(b(base), b(ours_side()), b(base[:-2]))
    assert isinstance(res, Conflict) and "theirs" in res.reason
    res = merge(b(base), b(ours_side()), b(theirs_side()) + b"<<<<<<< HEAD\n")
    assert isinstance(res, Conflict) and "damaged" in res.reason


def test_forged_tombstone_is_a_conflict():
    base = k.sample()
    red = k.redact(list(base), "P-0002")
    red[1]["content_hash"] = "000000000000"
    assert isinstance(merge(b(base), b(red), b(theirs_side())), Conflict)
