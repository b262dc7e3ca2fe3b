"""The quadratic history and timeline as they were before they were made linear: the reference the
linear ones must match output for output (tests only)."""


from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

STATUSES = (
    "open", "fixed", "stale", "challenged", "obsolete-proposed",
    "accepted", "wontfix", "obsolete", "redacted", "resting", "binding",
)
CATEGORIES = ("fixed", "carried", "touched", "your_call", "new")
BAR_CHARS = {"fixed": "#", "carried": "=", "touched": "~", "your_call": "?", "new": "+"}
LABELS = {"fixed": "fixed", "carried": "carried", "touched": "touched", "your_call": "your call", "new": "new"}
COLORS = {"fixed": "#2e7d32", "carried": "#90a4ae", "touched": "#f9a825", "your_call": "#c62828", "new": "#1565c0"}
OPEN_COLOR = "#6a1b9a"
CLAIM_WIDTH = 72


def display_status(p: Any) -> str:
    """The status a human reads: `resting` for resting priors, else the folded status."""
    return "resting" if p.resting else p.status


def cut(text: str, width: int = CLAIM_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _belongs(rec: Dict[str, Any]) -> Optional[str]:
    """The run a ledger line was written by (commit blocks), else None."""
    t = rec.get("t")
    if t == "prior":
        v = rec.get("born")
    elif t == "event" and rec.get("action") in ("disposition", "scope-missing"):
        v = rec.get("run")
    elif t in ("call", "run"):
        v = rec.get("run")
    else:
        return None
    return v if isinstance(v, str) else None


# ------------------------------------------------------------------ show


def timeline(records: Sequence[Dict[str, Any]], pid: str) -> Optional[Dict[str, Any]]:
    """The prior and every ledger line that touched it, with resting and resurrection read from the fold."""
    from priors.core.fold import State, apply

    st = State()
    events: List[Dict[str, Any]] = []
    calls: Dict[str, Dict[str, Any]] = {}
    found = False
    for no, rec in enumerate(records, 1):
        before = st.priors.get(pid)
        was_resting = before.resting if before else False
        call_before = {str(c.rec.get("call_id")): c.resolved for c in st.calls}
        apply(st, rec)
        p = st.priors.get(pid)
        if p is None:
            continue
        t = rec.get("t")
        run = rec.get("run") if isinstance(rec.get("run"), str) else None
        if t == "prior" and rec.get("id") == pid and not found:
            found = True
            events.append(_ev(no, rec.get("born"), "born", f"born in {rec.get('born')} (namespace {rec.get('ns')})"))
        elif t == "event" and rec.get("id") == pid:
            events.append(_event_entry(no, run, rec, p))
        elif t == "call" and rec.get("conflicts_with") == pid:
            cid = rec.get("call_id")
            if rec.get("redacted") is True:
                text = f"call {cid}: a reversal of this prior (redacted)"
            else:
                text = f"call {cid}: {cut(str(rec.get('claim', '')), 60)!s} — reverses this ({rec.get('direction')})"
            entry = _ev(no, run, "call", text)
            entry["call_id"] = cid
            calls[str(cid)] = entry
            events.append(entry)
        for c in st.calls:
            cid = str(c.rec.get("call_id"))
            if c.conflicts_with == pid and c.resolved and call_before.get(cid) is False and cid in calls:
                calls[str(cid)]["resolved_on_line"] = no
        if not was_resting and p.resting:
            events.append(_ev(no, run, "resting",
                              f"resting — its scope was missing {p.miss} runs in a row; it wakes if the scope returns"))
        elif was_resting and not p.resting and not p.redacted and t == "event" and rec.get("id") == pid:
            events.append(_ev(no, run, "resurrected", "resurrected — back from resting"))
    if not found:
        return None
    p = st.priors[pid]
    rec = p.rec
    body: Dict[str, Any] = {
        "id": pid,
        "ns": rec.get("ns"),
        "status": display_status(p),
        "born": rec.get("born"),
        "timeline": events,
    }
    if p.redacted or rec.get("redacted") is True:
        body["redacted"] = True
        body["content_hash"] = rec.get("content_hash")
    else:
        for key in ("type", "claim", "facets", "scope_ref", "direction", "severity", "depth", "evidence", "review_every"):
            if key in rec:
                body[key] = rec[key]
        if p.scope_hash is not None:
            body["scope_hash"] = p.scope_hash
    if p.miss:
        body["missing_runs"] = p.miss
    return body


def _ev(line: int, run: Any, kind: str, text: str) -> Dict[str, Any]:
    e: Dict[str, Any] = {"line": line, "kind": kind, "text": text}
    if isinstance(run, str):
        e["run"] = run
    return e


def _event_entry(no: int, run: Optional[str], rec: Dict[str, Any], p: Any) -> Dict[str, Any]:
    action, to = rec.get("action"), rec.get("to")
    reason = rec.get("reason")
    why = f" — “{reason}”" if isinstance(reason, str) else " — (reason redacted)" if rec.get("reason_redacted") else ""
    if action == "disposition":
        text = f"agent: {to}"
    elif action == "scope-missing":
        text = f"scope missing ({p.miss} in a row)" if not p.redacted else "scope missing"
    elif action == "decide":
        same = rec.get("same_as")  # `decide P duplicate --of Q`: obsolete, as the same finding as Q
        text = f"you decided: {to}" + (f" (the same finding as {same})" if isinstance(same, str) and to == "obsolete"
                                       else "") + why
    elif action == "redact":
        text = f"redacted by you{why}"
    else:
        text = f"{action} {to or ''}".strip()
    if rec.get("restated") is True:
        text += " (restated by a merge, so it stays the last word)"
    e = _ev(no, run, str(action), text)
    if isinstance(to, str):
        e["to"] = to
    return e


# ------------------------------------------------------------------ history


@dataclass
class RunRow:
    run: str
    ns: Any
    line: int
    checked: int = 0
    fixed: int = 0
    carried: int = 0
    touched: int = 0
    your_call: int = 0
    new: int = 0
    resting: int = 0
    open: int = 0
    quiescent: bool = False

    def as_dict(self) -> Dict[str, Any]:
        return {k: getattr(self, k) for k in ("run", "ns", "line", "checked", "fixed", "carried", "touched", "your_call", "new",
                                              "resting", "open", "quiescent")}


@dataclass
class _Acc:
    counts: Dict[str, int] = field(
        default_factory=lambda: {k: 0 for k in ("checked", "fixed", "carried", "touched", "your_call", "new")})
    nudges: Dict[Any, int] = field(default_factory=dict)


def _nudges(st: Any) -> Dict[Any, int]:
    """Review nudges `relevant` would have given when the run opened, per namespace (the state just before its block)."""
    from priors.core.fold import review_due

    out: Dict[Any, int] = {}
    for p in st.priors.values():
        if p.facet("activation") == "run-start" and p.status in ("open", "accepted", "wontfix") and review_due(st, p):
            out[p.ns] = out.get(p.ns, 0) + 1
    return out


def open_count(st: Any, ns: Any) -> int:
    """Open as `priors status` counts it: not redacted, resting, fixed, retired, binding or a locked lesson; open or stale."""
    n = 0
    for p in st.priors.values():
        if p.ns != ns or p.redacted or p.resting or p.status in ("fixed", "obsolete") or p.binding:
            continue
        if p.facet("obligation") == "inject-as-instruction" and p.status == "open":
            continue
        if p.status in ("open", "stale"):
            n += 1
    return n


def history_rows(records: Sequence[Dict[str, Any]], ns: Optional[str] = None) -> List[RunRow]:
    """One row per committed run, counted from the ledger's events (never from summary text).

    checked = dispositions of verify-phase priors + scope-missing events of the run
    (the verify items it accounted for); fixed; carried = still-open + reaffirmed;
    touched = stale; your call = challenged + obsolete-proposed + calls of the run +
    review nudges due when it opened + new findings said to differ from a person's decision;
    new = priors born in it; resting and open = priors of its namespace in that state right after its commit record.
    """
    from priors.core.fold import State, apply

    st = State()
    rows: List[RunRow] = []
    acc: Dict[str, _Acc] = {}
    for no, rec in enumerate(records, 1):
        run = _belongs(rec)
        if run is not None and run not in acc and run not in st.commits:
            acc[run] = _Acc(nudges=_nudges(st))
        t, action = rec.get("t"), rec.get("action")
        a = acc.get(run) if run is not None else None
        if a is not None and run not in st.commits:
            c = a.counts
            pid = rec.get("id")
            p = st.priors.get(pid) if t == "event" and isinstance(pid, str) else None
            if t == "event" and p is not None and action == "disposition":
                to = rec.get("to")
                if p.facet("activation") != "run-start":
                    c["checked"] += 1
                if to == "fixed":
                    c["fixed"] += 1
                elif to in ("still-open", "reaffirmed"):
                    c["carried"] += 1
                elif to == "stale":
                    c["touched"] += 1
                elif to in ("challenged", "obsolete-proposed"):
                    c["your_call"] += 1
            elif t == "event" and p is not None and action == "scope-missing":
                c["checked"] += 1
            elif t == "prior" and isinstance(rec.get("id"), str) and rec.get("id") not in st.priors:
                c["new"] += 1
                named = rec.get("distinct_from")
                if isinstance(named, list) and any(isinstance(q, str) and q in st.priors and st.priors[q].binding
                                                   for q in named):
                    c["your_call"] += 1  # "it differs" from a person's decision: put to them
            elif t == "call":
                c["your_call"] += 1
        fresh_commit = t == "run" and action == "commit" and isinstance(run, str) and run not in st.commits
        apply(st, rec)
        if fresh_commit and a is not None:
            rns = rec.get("ns")
            c = a.counts
            row = RunRow(run, rns, no, **c)  # type: ignore[arg-type]
            row.your_call += a.nudges.get(rns, 0)
            row.resting = sum(1 for p in st.priors.values() if p.ns == rns and p.resting)
            row.open = open_count(st, rns)
            row.quiescent = (row.checked > 0 and row.carried == row.checked
                             and not (row.fixed or row.touched or row.new or row.your_call))
            if ns is None or rns == ns:
                rows.append(row)
    return rows
