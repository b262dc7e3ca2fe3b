"""Reading the ledger's timeline: `show` (one prior and everything that happened to it), `list` (a
line a prior) and `history` (a row a committed run, with the convergence chart). Each parses the
records once (`store.ledger.read_records`); nothing is written but the chart a person asks for.
"""

from __future__ import annotations

import gc

from priors.core.answer import Answer
from priors.core.chart import small_multiples
from priors.core.errors import Refusal, UsageError
from priors.core.history import (
    history_and_state,
    history_rows,
    history_svg,
    history_text,
    list_rows,
    list_text,
    show_text,
    timeline,
)
from priors.core.spelling import nearest
from priors.core.views import check_namespace, record_namespaces, tally
from priors.core.vocabulary import LIST_STATUSES, PRESETS, PRIOR_RE
from priors.store.files import atomic_write
from priors.store.ledger import read_records
from priors.store.paths import Paths, output_target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Optional


def show(paths: Paths, pid: str) -> Answer:
    """One prior's timeline; JSON: `show --json`'s object."""
    if not PRIOR_RE.match(pid):
        hint = f" — did you mean {pid.upper()}?" if PRIOR_RE.match(pid.upper()) else ""  # `show p-0004`
        raise UsageError(f"priors show: {pid!r} is not a prior id (P- and four to eighteen digits){hint}")
    records = read_records(paths)
    body = timeline(records, pid)
    if body is None:
        ids = [r["id"] for r in records if r.get("t") == "prior" and isinstance(r.get("id"), str)]
        hint = (f"the ledger's priors are {ids[0]} … {ids[-1]}: `priors list` shows them" if len(ids) > 1 else
                f"the ledger's one prior is {ids[0]}" if ids else "the ledger holds no priors yet")
        raise Refusal("UNKNOWN_PRIOR", id=pid, hint=hint)
    return Answer(0, body, show_text(body))


def list_priors(paths: Paths, ns: Optional[str], status: Optional[str], typ: Optional[str]) -> Answer:
    """One row a prior, filtered; JSON: `{"priors": [rows]}`."""
    if status is not None and status not in LIST_STATUSES:
        close = nearest(status, LIST_STATUSES)
        raise UsageError(f"priors list: --status {status!r}: expected one of {', '.join(LIST_STATUSES)}"
                         + (f" — did you mean {close}?" if close else ""))
    for key, value in (("ns", ns), ("type", typ)):
        if value == "":
            raise UsageError(f"priors list: --{key} needs a non-empty value")
    records = read_records(paths)
    if ns is not None:
        check_namespace("list", [ns], record_namespaces(records))
    if typ is not None:
        known = list(PRESETS) + sorted({str(r["type"]) for r in records if r.get("t") == "prior"
                                        and isinstance(r.get("type"), str) and r["type"] not in PRESETS})
        if typ not in known:  # a misspelt type would list nothing and look like an empty ledger
            raise UsageError(f"priors list: --type {typ!r}: expected one of {', '.join(known)}")
    rows = list_rows(records, ns, status, typ)
    return Answer(0, {"priors": rows}, list_text(rows))


def history(paths: Paths, ns: Optional[str], svg: Optional[str]) -> Answer:
    """A row a committed run (of `ns`, or all); JSON: `{["ns",] "runs": [rows]}`; `svg`: the chart too."""
    if ns == "":
        raise UsageError("priors history: --ns needs a non-empty value")
    to_stdout = svg == "-"  # `--svg -`: the chart on stdout instead of the table, as `-o -` means everywhere
    target = output_target("history", "--svg", svg, paths.root) if svg is not None and not to_stdout else None
    gc.disable()  # the records and the fold hold no cycles: a collection would only walk them all (~2 % of the call)
    try:
        records = read_records(paths)
        if ns is not None:
            check_namespace("history", [ns], record_namespaces(records))
        if svg is not None:  # the chart's line ends where `status` stands now: the whole fold, decisions included
            rows, st = history_and_state(records, ns)
            now = {name: c["open"] for name, c in tally(st).items()}
        else:
            rows, now = history_rows(records, ns), {}
    finally:
        gc.enable()
    runs = [r.as_dict() for r in rows]
    obj: Dict[str, Any] = {"ns": ns, "runs": runs} if ns is not None else {"runs": runs}
    text = history_text(rows)
    # one namespace's chart, or one chart per namespace: an open line never mixes two namespaces' counts
    chart = (history_svg(rows, f"priors history — {ns}", now.get(ns)) if ns is not None
             else small_multiples(rows, "priors history", now)) if svg is not None else ""
    if to_stdout:
        return Answer(0, obj, chart[:-1] if chart.endswith("\n") else chart)
    if target is not None:
        atomic_write(target, chart.encode("utf-8"))
        text += f"\nwrote {svg}"
    return Answer(0, obj, text)
