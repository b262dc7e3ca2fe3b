"""Text views of the folded state: status lines, calls, the PRIORS.md table.
"""

from __future__ import annotations

import re

from priors.core.controls import one_line, visible
from priors.core.errors import UsageError
from priors.core.fold import BINDING, REST_AFTER, PriorState, State
from priors.core.spelling import nearest
from priors.core.vocabulary import display_status

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

NO_PRIORS = "no priors yet — first run writes them"
NO_PRIORS_OPEN = "no priors yet — the open run's commit writes the first ones"
NOTHING_WAITS = "Nothing waits for you."


BUCKETS = ("open", "fixed", "settled", "learned", "proposed", "retired", "resting")
# The statuses at which a run-start lesson counts apart from findings: accepted (locked by a person) or
# open (an agent's proposal no person decided yet).
_LESSON_STATUSES = ("open", "accepted")


def count_bucket(p: PriorState) -> str:
    """Which status column a prior counts in — first match wins (contract §7, status, except that
    "lessons locked" counts the lessons a person accepted, as its name says, and an undecided lesson
    counts as proposed: docs/protocol.md)."""
    status = p.status
    return _bucket(status, p.miss >= REST_AFTER,
                   status in _LESSON_STATUSES and p.facet("obligation") == "inject-as-instruction")


def plural(n: int, word: str) -> str:
    """`1 lesson`, `2 lessons`: a count and its noun, the noun in the plural unless the count is one."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def tally(st: State) -> Dict[str, Dict[str, int]]:
    """Counts per (string) namespace, in the order of each namespace's first prior — one pass.

    `count_bucket` per prior, counted first by (namespace, status, resting, learned) — a handful of
    distinct keys — so the loop over 100k priors does no more than build one small tuple each."""
    seen: Dict[Any, int] = {}
    for p in st.priors.values():
        r = p[5]
        ns = p[8] if r is None else r.get("ns")
        status = p[1]
        lesson = status in _LESSON_STATUSES and p.facet("obligation") == "inject-as-instruction"
        key = (ns, status, p[3] >= REST_AFTER, lesson)
        try:
            seen[key] = seen.get(key, 0) + 1
        except TypeError:  # an unhashable namespace: not a string, not counted
            continue
    out: Dict[str, Dict[str, int]] = {}
    for (ns, status, resting, lesson), n in seen.items():
        if not isinstance(ns, str):
            continue
        counts = out.get(ns)
        if counts is None:
            counts = out[ns] = dict.fromkeys(BUCKETS, 0)
        bucket = _bucket(status, resting, lesson)
        if bucket:
            counts[bucket] += n
    return out


def _bucket(status: str, resting: bool, lesson: bool) -> str:
    """`count_bucket`'s rules over the fields it reads (`lesson`: a run-start lesson, open or accepted)."""
    if status == "redacted":
        return ""
    if resting and status not in BINDING:
        return "resting"
    if status == "fixed":
        return "fixed"
    if status == "obsolete":
        return "retired"
    if lesson:
        return "learned" if status == "accepted" else "proposed"
    if status in BINDING:
        return "settled"
    if status in ("open", "stale"):
        return "open"
    return ""


def namespaces(st: State, known: Optional[List[str]] = None) -> List[str]:
    """Namespaces of priors in ledger order, then those known only from an unresolved call."""
    order = list(tally(st)) if known is None else list(known)
    for call in st.calls:
        ns = call.rec.get("ns")
        if not call.resolved and isinstance(ns, str) and ns not in order:
            order.append(ns)
    return order


def known_namespaces(st: State) -> List[str]:
    """Every namespace the ledger holds: of its priors, its unresolved calls and its sealed runs (a run
    may have found nothing). What a verb's `--ns` is checked against."""
    order = namespaces(st)
    seen = set(order)
    for rec in st.commits.values():
        ns = rec.get("ns") if isinstance(rec, dict) else None
        if isinstance(ns, str) and ns not in seen:
            seen.add(ns)
            order.append(ns)
    return order


def record_namespaces(records: Iterable[Dict[str, Any]]) -> List[str]:
    """`known_namespaces` from parsed records (for verbs that read records, not the fold)."""
    order: Dict[str, None] = {}
    for rec in records:
        ns = rec.get("ns")
        if isinstance(ns, str) and rec.get("t") in ("prior", "call", "run"):
            order.setdefault(ns, None)
    return list(order)


def check_namespace(verb: str, names: Iterable[str], known: Sequence[str]) -> None:
    """A `--ns` naming a namespace the ledger does not hold is a usage error with the nearest one:
    a misspelt namespace would otherwise list nothing and look like a clean slate."""
    for ns in names:
        if ns in known:
            continue
        close = nearest(ns, known)
        hint = (f" — did you mean {close}?" if close else "") + (
            f" (it holds {', '.join(known)})" if known else " (it holds none yet)")
        raise UsageError(f"priors {verb}: --ns {ns}: the ledger holds no namespace of that name{hint}")


def by_namespace(st: State) -> Dict[str, List[PriorState]]:
    """Priors grouped by (string) namespace in ledger order — one pass instead of one per namespace."""
    groups: Dict[str, List[PriorState]] = {}
    for p in st.priors.values():
        ns = p.ns
        if isinstance(ns, str):
            groups.setdefault(ns, []).append(p)
    return groups


def status_line(ns: str, counts: Dict[str, int]) -> str:
    line = (f"{one_line(ns)}: {counts['open']} open · {counts['fixed']} fixed · {counts['settled']} decided by you"
            f" · {plural(counts['learned'], 'lesson')} locked")
    if counts["proposed"]:
        line += f" · {plural(counts['proposed'], 'lesson')} proposed"
    if counts["retired"]:
        line += f" · {counts['retired']} retired"
    if counts["resting"]:
        line += f" · {counts['resting']} resting"
    return line


# A settled prior that agents raised again in this many runs since the person's decision becomes one of
# the person's calls (once may be an accident; twice is pressure). `show` and the report show any count.
# Runs, not attempts: an agent writes its own attempts file, and twenty thousand lines from one run are
# one run's pressure (commit keeps at most ATTEMPTS_KEPT per prior per run: core/commit_plan.py).
PRESSED_AT = 2


def attempts_index(st: State) -> Dict[str, List[Tuple[int, str, Dict[str, Any]]]]:
    """Prior id → (run position, run, attempt) for every refusal a sealed run kept (`attempts`), in order."""
    out: Dict[str, List[Tuple[int, str, Dict[str, Any]]]] = {}
    for run, rec in st.commits.items():
        tried = rec.get("attempts") if isinstance(rec, dict) else None
        if not isinstance(tried, list):
            continue
        pos = st.run_pos.get(run, -1)
        for a in tried:
            if isinstance(a, dict) and isinstance(a.get("of"), str):
                out.setdefault(a["of"], []).append((pos, run, a))
    return out


def tried_since(st: State, p: PriorState, index: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
    """How agents tried to raise `p` again since a person settled it (accepted, wontfix): one entry per
    kept refusal of a run sealed after the decision — `{"run", "code"[, "claim"]}` (no claim: redacted)."""
    if not p.binding or p.redacted:
        return []
    got = (attempts_index(st) if index is None else index).get(p.id, [])
    return [dict({"run": run, "code": a.get("code")}, **({"claim": a["claim"]} if isinstance(a.get("claim"), str) else {}))
            for pos, run, a in got if pos > p.human_idx]


def tried_runs(tried: Sequence[Dict[str, Any]]) -> int:
    """In how many runs agents tried (what the pressure counts: not lines of a file an agent writes)."""
    return len({t.get("run") for t in tried})


def pressure_text(tried: List[Dict[str, Any]], status: str) -> str:
    """`re-raised in 2 runs since your wontfix` (`raised again` for a prior a person accepted)."""
    n = tried_runs(tried)
    verb = "re-raised" if status == "wontfix" else "raised again"
    return f"{verb} in {plural(n, 'run')} since your {status}"


def tried_words(tried: Sequence[Dict[str, Any]], most: int = 5) -> List[str]:
    """The distinct words agents raised a prior again in, newest first (at most `most`; redacted ones left out)."""
    out: List[str] = []
    for t in reversed(tried):
        claim = t.get("claim")
        if isinstance(claim, str) and claim not in out:
            out.append(claim)
    return out[:most]


def status_text(st: State, calls: Optional[Dict[str, List[str]]], extras=None, open_runs: Sequence[str] = ()) -> str:
    """`calls`: with `--calls`, each namespace's call lines (`core.desk.call_text`), else None.
    `extras(ns) -> info lines` adds the lessons loop's score lines (docs/lessons.md).

    `open_runs`: runs opened and not yet committed — named, so a person knows a run is under way."""
    return "\n".join(status_lines(st, calls, extras, open_runs))


def status_lines(st: State, calls: Optional[Dict[str, List[Any]]], extras=None, open_runs: Sequence[str] = ()) -> List[Any]:
    """`status_text`'s lines, not yet joined: a caller holding a large fold lets it go before joining them.
    A namespace's `calls` are put in as they are given (`ops.desk.status` gives each ask's lines as one
    piece of UTF-8)."""
    running = [f"{run} is open — `priors commit --run {run}` seals it, `priors abort --run {run}` drops it"
               for run in open_runs]
    if not st.priors:
        return [NO_PRIORS_OPEN if running else NO_PRIORS, *running]
    counts = tally(st)
    lines: List[str] = []
    for ns in namespaces(st, list(counts)):
        lines.append(status_line(ns, counts.get(ns) or dict.fromkeys(BUCKETS, 0)))
        if extras is not None:
            lines.extend(extras(ns))
        if calls is not None:
            lines.extend(calls.get(ns, ()))
    if calls is not None and not any(calls.values()):
        lines.append(NOTHING_WAITS)
    return lines + running


# Text that needs no escaping in a table cell. Compiled on first use, not at import: the class is
# large (~3 M instructions to compile) and most calls never reach it — every verb that loads the
# ledger imports this module, few render a cell that the fast test in `table_cell` does not clear.
_PLAIN_CLASS = (r"[^\\|\s\ud800-\udfff\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                r"\ufff9-\ufffb\U000e0000-\U000e007f]*")
_LONE = "[\ud800-\udfff]"


def table_cell(text: object) -> str:
    s = "" if text is None else str(text)
    if s.isprintable() and "|" not in s and "\\" not in s and "  " not in s and s[:1] != " " and s[-1:] != " ":
        # Nothing to escape or collapse (the common case: ids, areas, statuses, most claims). Printable
        # text holds no control, format or separator character, no lone surrogate and no whitespace
        # but the space: so only the pipe, the backslash and runs of spaces could change it.
        return s
    if re.fullmatch(_PLAIN_CLASS, s):  # `re` keeps the compiled pattern after the first call
        return s
    s = s.replace("\\", "\\\\").replace("|", "\\|")
    s = re.sub(_LONE, "\ufffd", s)  # a lone surrogate (a ledger another keeper wrote) is not UTF-8: shown as U+FFFD
    return visible(" ".join(s.split()))  # a control or bidi character is shown as `\uXXXX`, never raw


_WIDTH = 72  # the longest claim the table shows whole


def _cut(text: str, width: int = _WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render_markdown(st: State) -> str:
    """The human table. Pure: same ledger, same bytes."""
    return "".join(markdown_pieces(st))


def markdown_pieces(st: State, rows: int = 1024) -> Iterator[str]:
    """`render_markdown(st)` in pieces of about `rows` lines, each ending with a newline: a writer that
    writes each as it comes never holds the whole table (~14 MB of text at 100k priors, and as much
    again encoded, and its rows' list)."""
    batch: List[str] = []
    for line in markdown_lines(bool(st.priors), (table_row(p) for p in st.priors.values())):
        batch.append(line)
        if len(batch) >= rows:
            yield "\n".join(batch) + "\n"
            batch = []
    if batch:
        yield "\n".join(batch) + "\n"


def markdown_lines(any_priors: bool, rows: Iterable[str]) -> Iterator[str]:
    """`PRIORS.md` line by line, each to be followed by a newline: the head, then the table of `rows`
    (one per prior, in ledger order) — or the note that there are no priors yet."""
    yield "# Priors"
    yield ""
    yield "Rendered from `.priors/ledger.jsonl` by `priors render` — do not edit by hand."
    yield ""
    if not any_priors:
        yield "No priors yet — the first run writes them."
        return
    yield "| id | area | type | status | where | what |"
    yield "|---|---|---|---|---|---|"
    yield from rows


REDACTED_ROW = "— | redacted | — | *(redacted)* |"  # a redacted prior's row after its id and area


def table_row(p: PriorState) -> str:
    """One prior's line of the table."""
    if p.redacted:
        return f"| {table_cell(p.id)} | {table_cell(p.ns)} | {REDACTED_ROW}"
    rec = p.record()  # read once, not kept: this runs for every prior on every ledger write
    return row_line(row_parts(p.id, rec), display_status(p))


def row_parts(pid: str, rec: Dict[str, object]) -> Tuple[str, str, str]:
    """A prior's row without its status, from its record: `| id | area | `, the type cell, and
    ` | where | what |` — so a reader of the ledger that folds no state (`verify`) can keep the row
    and add the status it ends with."""
    ref = rec.get("scope_ref")
    if isinstance(ref, str):
        where = ref
    else:
        facets = rec.get("facets")
        where = (facets.get("scope") if isinstance(facets, dict) else None) or ""
    ns, kind, claim, dist = rec.get("ns"), rec.get("type"), rec.get("claim"), rec.get("distinct_from")
    if type(where) is str and type(ns) is str and type(kind) is str and type(claim) is str and not dist:
        parts = row_plain(pid, ns, kind, where, claim)
        if parts is not None:
            return parts
    what = _cut(" ".join(claim.split())) if isinstance(claim, str) else ""
    if isinstance(dist, list) and dist:  # the agent said it differs from a similar finding: a human may audit
        what += " (distinct from " + ", ".join(str(x) for x in dist) + ")"
    return (f"| {table_cell(pid)} | {table_cell(rec.get('ns'))} | ", table_cell(rec.get("type")),
            f" | {table_cell(where)} | {table_cell(what)} |")


def row_plain(pid: str, ns: str, kind: str, where: str, claim: str) -> Optional[Tuple[str, str, str]]:
    """`row_parts` of a record whose id, ns, type, where and claim are these strings (and which has no
    `distinct_from` list), when every cell is written as it reads; None when one needs `table_cell`.

    The row is checked whole: printable, no pipe but the six between cells, no backslash and no two
    spaces together — then every cell is its own `table_cell`, none is empty, and the claim has nothing
    for `split` to collapse."""
    pre, full = f"| {pid} | {ns} | ", f" | {where} | {claim} |"
    probe = pre + kind + full
    if probe.isprintable() and "\\" not in probe and "  " not in probe and probe.count("|") == 6:
        return pre, kind, full if len(claim) <= _WIDTH else f" | {where} | {_cut(claim)} |"
    return None


def row_line(parts: Tuple[str, str, str], status: str) -> str:
    """The row of `row_parts` with the status a person reads (`display_status`)."""
    return f"{parts[0]}{parts[1]} | {table_cell(status)}{parts[2]}"
