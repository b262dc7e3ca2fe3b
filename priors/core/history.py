"""See what is settled: timelines, lists and per-run history as data, text and SVG.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from priors.core.vocabulary import SESSION_VIA, display_status

from priors.core.chart import CATEGORIES, LABELS, chart_svg, quiet_streak  # noqa: F401 (re-exported)

BAR_CHARS = {"fixed": "#", "carried": "=", "touched": "~", "your_call": "?", "new": "+"}
CLAIM_WIDTH = 72


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
    mine: List[Any] = []  # the calls against `pid`, in ledger order
    last: Dict[str, Any] = {}  # call id → the last call with that id (what a lookup by id finds)
    for no, rec in enumerate(records, 1):
        before = st.priors.get(pid)
        was_resting = before.resting if before else False
        call_before = {cid: last[cid].resolved for cid in {str(c.rec.get("call_id")) for c in mine} if cid in last}
        n_calls = len(st.calls)
        apply(st, rec)
        if len(st.calls) > n_calls:
            c = st.calls[-1]
            cid = str(c.rec.get("call_id"))
            if cid in last and cid not in call_before:
                call_before[cid] = last[cid].resolved
            last[cid] = c
            if c.conflicts_with == pid:
                mine.append(c)
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
        for c in mine:
            cid = str(c.rec.get("call_id"))
            if c.resolved and call_before.get(cid) is False and cid in calls:
                calls[str(cid)]["resolved_on_line"] = no
        if not was_resting and p.resting:
            events.append(_ev(no, run, "resting", f"resting — its scope was missing {p.miss} runs in a row; it wakes if the scope returns"))
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
        for key in ("type", "claim", "facets", "scope_ref", "direction", "severity", "depth", "evidence", "review_every",
                    "distinct_from"):
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
        text = f"you decided: {to}{why}"
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


def show_text(body: Dict[str, Any]) -> str:
    lines = [f"{body['id']} · {body.get('ns')} · {body.get('type', 'redacted')} — {body['status']}"]
    if body.get("redacted"):
        lines.append(f"  (content redacted; content_hash {body.get('content_hash')})")
    else:
        lines.append(f"  {body.get('claim', '')}")
        f = body.get("facets") if isinstance(body.get("facets"), dict) else {}
        where = body.get("scope_ref") or ("the whole repo" if f.get("scope") == "repo-wide" else "—")
        sh = f" @ {body['scope_hash']}" if body.get("scope_hash") else ""
        lines.append(f"  where: {where}{sh}")
        if f:
            lines.append("  facets: " + " · ".join(str(f.get(k)) for k in ("scope", "activation", "obligation", "authority", "lifecycle")))
        extra = [f"{k.replace('_', ' ')} {body[k]}" for k in ("severity", "depth", "direction", "review_every") if k in body]
        if extra:
            lines.append("  " + " · ".join(extra))
        if isinstance(body.get("distinct_from"), list):
            lines.append("  distinct from: " + ", ".join(str(x) for x in body["distinct_from"])
                         + " (the agent said this differs from those similar findings)")
        if "evidence" in body:
            ev = body["evidence"]
            lines.append("  evidence: " + cut(ev if isinstance(ev, str) else _compact(ev), 100))
    lines.append("timeline:")
    for e in body["timeline"]:
        resolved = ""
        if e.get("kind") == "call":
            resolved = f" — resolved by your decision on line {e['resolved_on_line']}" if "resolved_on_line" in e else " — awaiting your call"
        lines.append(f"  line {e['line']:<5} {e.get('run', ''):<9} {e['text']}{resolved}")
    return "\n".join(lines)


def _compact(v: Any) -> str:
    from priors.core.canonical import dumps

    return dumps(v)


# ------------------------------------------------------------------ list


def list_rows(records: Sequence[Dict[str, Any]], ns: Optional[str] = None, status: Optional[str] = None, typ: Optional[str] = None) -> List[Dict[str, Any]]:
    from priors.core.fold import fold

    st = fold(records)
    rows = []
    for p in st.priors.values():
        rec = p.rec
        shown = display_status(p)
        if ns is not None and p.ns != ns:
            continue
        if status is not None and not (shown == status or (status == "binding" and p.binding)):
            continue
        if typ is not None and rec.get("type") != typ:
            continue
        row: Dict[str, Any] = {"id": p.id, "ns": p.ns, "status": shown, "born": rec.get("born")}
        if rec.get("redacted") is True:
            row["redacted"] = True
        else:
            for key in ("type", "claim", "scope_ref", "severity"):
                if key in rec:
                    row[key] = rec[key]
            if isinstance(p.facet("scope"), str):
                row["scope"] = p.facet("scope")
        rows.append(row)
    return rows


def list_text(rows: Sequence[Dict[str, Any]]) -> str:
    if not rows:
        return "no priors match"
    table = [("id", "area", "type", "status", "where", "what")]
    for r in rows:
        what = "▒ redacted" if r.get("redacted") else cut(str(r.get("claim", "")))
        where = str(r.get("scope_ref", r.get("scope", "—")))
        table.append((r["id"], str(r.get("ns")), str(r.get("type", "—")), r["status"], where, what))
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    return "\n".join("  ".join(c.ljust(widths[i]) for i, c in enumerate(row[:5])) + "  " + row[5] for row in table).rstrip()


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
        return {k: getattr(self, k) for k in ("run", "ns", "line", "checked", "fixed", "carried", "touched", "your_call", "new", "resting", "open", "quiescent")}


@dataclass
class _Acc:
    counts: Dict[str, int] = field(default_factory=lambda: {k: 0 for k in ("checked", "fixed", "carried", "touched", "your_call", "new")})
    nudges: Dict[Any, int] = field(default_factory=dict)


def _counts_open(p: Any) -> bool:
    """Open as `priors status` counts it: not redacted, resting, fixed, retired, binding or a locked lesson; open or stale."""
    if p.redacted or p.resting or p.status in ("fixed", "obsolete") or p.binding:
        return False
    if p.facet("obligation") == "inject-as-instruction" and p.status == "open":
        return False
    return p.status in ("open", "stale")


def open_count(st: Any, ns: Any) -> int:
    """Open as `priors status` counts it, for namespace `ns`."""
    return sum(1 for p in st.priors.values() if p.ns == ns and _counts_open(p))


class _Tally:
    """Per namespace, resting and open priors and the review nudges due, kept current record by
    record (a record changes only the prior it names; a nudge falls due as runs pass) — so history
    is linear in the ledger instead of walking every prior for every run."""

    def __init__(self) -> None:
        self.resting: Dict[Any, int] = {}
        self.open: Dict[Any, int] = {}
        self.due: Dict[Any, int] = {}
        self.review: Dict[str, List[Any]] = {}  # id → [ns, the run position it falls due at, due yet]
        self.heap: List[Any] = []
        self.n = 0

    def move(self, p: Any, sign: int) -> None:
        if p is None:
            return
        ns = p.ns
        try:
            hash(ns)
        except TypeError:
            return  # counted the slow way, only for a run whose namespace is not a plain value
        if p.resting:
            self.resting[ns] = self.resting.get(ns, 0) + sign
        if _counts_open(p):
            self.open[ns] = self.open.get(ns, 0) + sign
        if sign < 0:
            e = self.review.pop(p.id, None)
            if e is not None and e[2]:
                self.due[e[0]] -= 1
            return
        every = p.review_every  # as fold.review_due: due once `every` runs passed its last human decision
        if (isinstance(every, int) and not isinstance(every, bool) and p.facet("activation") == "run-start"
                and p.status in ("open", "accepted", "wontfix")):
            e = self.review[p.id] = [ns, p.human_idx + every, False]
            self.n += 1
            heapq.heappush(self.heap, (e[1], self.n, p.id, e))

    def nudges(self, st: Any) -> Dict[Any, int]:
        """Review nudges `relevant` would give now, per namespace (taken when a run opens)."""
        now = len(st.runs_order) - 1
        heap = self.heap
        while heap and heap[0][0] <= now:
            _, _, pid, e = heapq.heappop(heap)
            if self.review.get(pid) is e and not e[2]:
                e[2] = True
                self.due[e[0]] = self.due.get(e[0], 0) + 1
        return {k: v for k, v in self.due.items() if v}

    def after_commit(self, st: Any, ns: Any) -> Tuple[int, int]:
        try:
            return self.resting.get(ns, 0), self.open.get(ns, 0)
        except TypeError:
            return sum(1 for p in st.priors.values() if p.ns == ns and p.resting), open_count(st, ns)


def history_rows(records: Sequence[Dict[str, Any]], ns: Optional[str] = None) -> List[RunRow]:
    """One row per committed run, counted from the ledger's events (never from summary text).

    checked = dispositions of verify-phase priors + scope-missing events of the run
    (the verify items it accounted for); fixed; carried = still-open + reaffirmed;
    touched = stale; your call = challenged + obsolete-proposed + calls of the run +
    review nudges due when it opened; new = priors born in it; resting and open =
    priors of its namespace in that state right after its commit record.
    """
    return history_and_state(records, ns)[0]


def history_and_state(records: Sequence[Dict[str, Any]], ns: Optional[str] = None):
    """(history_rows, the folded state): one pass for callers that need both (the report)."""
    from priors.core.fold import State, apply

    st = State()
    tally = _Tally()
    rows: List[RunRow] = []
    acc: Dict[str, _Acc] = {}
    for no, rec in enumerate(records, 1):
        run = _belongs(rec)
        if run is not None and run not in acc and run not in st.commits:
            acc[run] = _Acc(nudges=tally.nudges(st))
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
            elif t == "call":
                c["your_call"] += 1
        fresh_commit = t == "run" and action == "commit" and isinstance(run, str) and run not in st.commits
        named = rec.get("id") if t in ("prior", "event") else None
        if isinstance(named, str):
            tally.move(st.priors.get(named), -1)
        apply(st, rec)
        if isinstance(named, str):
            p = st.priors.get(named)
            tally.move(p, 1)
        if fresh_commit and a is not None:
            rns = rec.get("ns")
            c = a.counts
            row = RunRow(run, rns, no, **c)  # type: ignore[arg-type]
            row.your_call += a.nudges.get(rns, 0)
            row.resting, row.open = tally.after_commit(st, rns)
            row.quiescent = row.checked > 0 and row.carried == row.checked and not (row.fixed or row.touched or row.new or row.your_call)
            if (ns is None or rns == ns) and rec.get("via") != SESSION_VIA:
                rows.append(row)  # (a scored coding session is sealed as a run, but reviewed nothing: no row)
    return rows, st


def _bar(row: RunRow, scale: float) -> str:
    out = []
    for k in CATEGORIES:
        n = getattr(row, k)
        if n:
            out.append(BAR_CHARS[k] * max(1, int(round(n * scale))))
    return "".join(out)


def history_text(rows: Sequence[RunRow], width: int = 40) -> str:
    if not rows:
        return "no committed runs yet"
    head = ("run", "ns", "checked", "fixed", "carried", "touched", "call", "new", "resting", "open")
    table = [head]
    for r in rows:
        table.append((r.run, str(r.ns), *(str(getattr(r, k)) for k in ("checked", "fixed", "carried", "touched", "your_call", "new", "resting", "open"))))
    widths = [max(len(t[i]) for t in table) for i in range(len(head))]
    biggest = max(sum(getattr(r, k) for k in CATEGORIES) for r in rows)
    scale = min(1.0, width / biggest) if biggest else 1.0
    lines = []
    for i, t in enumerate(table):
        cells = [t[0].ljust(widths[0]), t[1].ljust(widths[1])] + [t[j].rjust(widths[j]) for j in range(2, len(head))]
        line = "  ".join(cells)
        if i:
            r = rows[i - 1]
            line += "  " + _bar(r, scale) + ("  quiescent" if r.quiescent else "")
        lines.append(line.rstrip())
    lines.append("")
    lines.append("bars: " + "  ".join(f"{BAR_CHARS[k]} {LABELS[k]}" for k in CATEGORIES) + (f"   (1 mark ≈ {1 / scale:.1f})" if scale < 1 else ""))
    q = sum(1 for r in rows if r.quiescent)
    if q:
        lines.append(f"quiescent runs (everything settled still held, nothing new): {q} of {len(rows)}")
    streak = quiet_streak(rows)
    if streak:
        lines.append(f"quiescent since {streak[0].run} ({len(streak)} run{'s' if len(streak) != 1 else ''} in a row)")
    return "\n".join(lines)


def history_svg(rows: Sequence[RunRow], title: str = "priors history") -> str:
    """A self-contained SVG: stacked bars per run, a line for the open count, quiescent runs marked. Deterministic."""
    return chart_svg(rows, title)
