"""What people read: the status lines, the calls awaiting a human, and the rendered PRIORS.md."""

from __future__ import annotations

from typing import Dict, List

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


def status_line(st: State, ns: str) -> str:
    counts: Dict[str, int] = {"open": 0, "fixed": 0, "settled": 0, "learned": 0, "retired": 0, "resting": 0}
    for p in st.in_ns(ns):
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


def call_lines(st: State, ns: str) -> List[str]:
    out: List[str] = []
    for p in st.in_ns(ns):
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
    for ns in spaces:
        lines.append(status_line(st, ns))
        info, calls = extras(ns, with_calls) if extras is not None else ([], [])
        lines.extend(info)
        if with_calls:
            lines.extend(call_lines(st, ns))
            lines.extend(calls)
    return "\n".join(lines)


def _cell(text: object) -> str:
    s = "" if text is None else str(text)
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
    for p in st.priors.values():
        if p.redacted:
            rows.append(f"| {_cell(p.id)} | {_cell(p.ns)} | — | redacted | — | *(redacted)* |")
            continue
        status = "resting" if p.resting else p.status
        where = p.scope_ref if p.scope_ref is not None else p.facet("scope") or ""
        what = _cut(" ".join(p.claim.split()))
        rows.append(f"| {_cell(p.id)} | {_cell(p.ns)} | {_cell(p.rec.get('type'))} | {_cell(status)} | "
                    f"{_cell(where)} | {_cell(what)} |")
    return "\n".join(head + rows + [""])
