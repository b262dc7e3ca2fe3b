"""What people read: the status lines, the calls awaiting a human, and the rendered PRIORS.md."""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from priors.fold import PriorState, State, review_due

NO_PRIORS = "no priors yet — first run writes them"


def namespaces(st: State) -> List[str]:
    order: List[str] = []
    for p in st.priors.values():
        if isinstance(p.ns, str) and p.ns not in order:
            order.append(p.ns)
    for call in st.calls:
        ns = call.rec.get("ns")
        if not call.resolved and isinstance(ns, str) and ns not in order:
            order.append(ns)
    return order


def count_bucket(p: PriorState) -> str:
    """Which status column a prior counts in — first match wins (contract §7, status)."""
    if p.redacted:
        return ""
    if p.resting:
        return "resting"
    if p.status == "fixed":
        return "fixed"
    if p.status == "obsolete":
        return "retired"
    if p.binding:
        return "settled"
    if p.facet("obligation") == "inject-as-instruction" and p.status == "open":
        return "learned"
    if p.status in ("open", "stale"):
        return "open"
    return ""


def by_namespace(st: State) -> Dict[str, List[PriorState]]:
    """Priors grouped by (string) namespace in ledger order — one pass instead of one per namespace."""
    groups: Dict[str, List[PriorState]] = {}
    for p in st.priors.values():
        ns = p.ns
        if isinstance(ns, str):
            groups.setdefault(ns, []).append(p)
    return groups


def status_line(st: State, ns: str, group: Optional[List[PriorState]] = None) -> str:
    counts: Dict[str, int] = {"open": 0, "fixed": 0, "settled": 0, "learned": 0, "retired": 0, "resting": 0}
    for p in (st.in_ns(ns) if group is None else group):
        bucket = count_bucket(p)
        if bucket:
            counts[bucket] += 1
    line = (f"{ns}: {counts['open']} open · {counts['fixed']} fixed · {counts['settled']} decided by you"
            f" · {counts['learned']} lessons locked")
    if counts["retired"]:
        line += f" · {counts['retired']} retired"
    if counts["resting"]:
        line += f" · {counts['resting']} resting"
    return line


def call_lines(st: State, ns: str, group: Optional[List[PriorState]] = None) -> List[str]:
    out: List[str] = []
    for p in (st.in_ns(ns) if group is None else group):
        if p.redacted:
            continue
        if p.status in ("challenged", "obsolete-proposed"):
            out.append(f"  ? {p.id} — {p.claim} (decide {p.id} keep | obsolete)")
        elif (p.status == "open" or p.binding) and review_due(st, p):
            out.append(f"  ? {p.id} — still true? decide {p.id} keep | obsolete")
    for call in st.calls:
        rec = call.rec
        if call.resolved or rec.get("ns") != ns:
            continue
        target = rec.get("conflicts_with")
        cid = rec.get("call_id")
        out.append(f"  ? {cid} — {rec.get('claim')} reverses {target}; "
                   f"decide {target} reopen --because \"accept {cid}\" | keep")
    return out


def status_text(st: State, with_calls: bool, extras=None) -> str:
    """`extras(ns, with_calls) -> (info lines, call lines)` adds the lessons loop's lines (docs/lessons.md)."""
    spaces = namespaces(st)
    if not st.priors:
        return NO_PRIORS
    lines: List[str] = []
    groups = by_namespace(st)
    for ns in spaces:
        lines.append(status_line(st, ns, groups.get(ns, [])))
        info, calls = extras(ns, with_calls) if extras is not None else ([], [])
        lines.extend(info)
        if with_calls:
            lines.extend(call_lines(st, ns, groups.get(ns, [])))
            lines.extend(calls)
    return "\n".join(lines)


_PLAIN = re.compile(r"[^\\|\s]*")


def _cell(text: object) -> str:
    s = "" if text is None else str(text)
    if _PLAIN.fullmatch(s):
        return s  # nothing to escape or collapse (the common case: ids, areas, statuses)
    s = s.replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(s.split())


def _cut(text: str, width: int = 72) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render_markdown(st: State) -> str:
    """The human table. Pure: same ledger, same bytes."""
    head = [
        "# Priors",
        "",
        "Rendered from `.priors/ledger.jsonl` by `priors render` — do not edit by hand.",
        "",
    ]
    if not st.priors:
        return "\n".join(head + ["No priors yet — the first run writes them.", ""])
    rows = ["| id | area | type | status | where | what |", "|---|---|---|---|---|---|"]
    rows.extend(table_row(p) for p in st.priors.values())
    return "\n".join(head + rows + [""])


def table_row(p: PriorState) -> str:
    """One prior's line of the table."""
    if p.redacted:
        return f"| {_cell(p.id)} | {_cell(p.ns)} | — | redacted | — | *(redacted)* |"
    rec = p.record()  # read once, not kept: this runs for every prior on every ledger write
    status = "resting" if p.resting else p.status
    ref = rec.get("scope_ref")
    if isinstance(ref, str):
        where = ref
    else:
        facets = rec.get("facets")
        where = (facets.get("scope") if isinstance(facets, dict) else None) or ""
    claim = rec.get("claim")
    what = _cut(" ".join(claim.split())) if isinstance(claim, str) else ""
    return (f"| {_cell(p.id)} | {_cell(rec.get('ns'))} | {_cell(rec.get('type'))} | {_cell(status)} | "
            f"{_cell(where)} | {_cell(what)} |")
