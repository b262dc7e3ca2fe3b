"""Reading the ledger's timeline: `show` (one prior and everything that happened to it), `list` (a
line a prior) and `history` (a row a committed run, with the convergence chart). None holds the
ledger's records: `list` and `show` read the folded ledger (through the fold cache) and `show` the
few lines naming its prior; `history` folds the records as they are read (`store.ledger.read_spans`).
Nothing is written but the chart a person asks for (`list` and `show` read the fold cache, never write it).
"""

from __future__ import annotations

import gc

from priors.core.answer import Answer, batched
from priors.core.canonical import loads
from priors.core.chart import small_multiples
from priors.core.errors import Refusal, UsageError
from priors.core.history import history_of, history_svg, history_text, lines_suffice, show_text, timeline_of
from priors.core.listing import each_cells, each_row, json_pieces, text_pieces, widths
from priors.core.spelling import nearest
from priors.core.views import check_namespace, known_namespaces, record_namespaces, tally
from priors.core.vocabulary import LIST_STATUSES, PRESETS, PRIOR_RE
from priors.store.files import atomic_write
from priors.store.ledger import load_ledger, numbered_lines, read_spans
from priors.store.paths import Paths, output_target, require_init

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterator, List, Optional, Tuple


def show(paths: Paths, pid: str) -> Answer:
    """One prior's timeline; JSON: `show --json`'s object."""
    if not PRIOR_RE.match(pid):
        hint = f" — did you mean {pid.upper()}?" if PRIOR_RE.match(pid.upper()) else ""  # `show p-0004`
        raise UsageError(f"priors show: {pid!r} is not a prior id (P- and four to eighteen digits){hint}")
    require_init(paths)
    loaded = load_ledger(paths, want_data=False, write=False)
    st = loaded.state
    body = None
    if pid in st.priors:
        # the lines that can name it: its id as a JSON string, or any escape (an id spelt `\u0050-…`)
        lines = numbered_lines(paths, loaded, [f'"{pid}"'.encode("utf-8"), b"\\"]) if lines_suffice(st, pid) else None
        if lines is not None:
            body = timeline_of(((no, loads(raw.decode("utf-8")), 0, 0) for no, raw in lines), pid, None, st)
        else:
            del loaded, st  # (let go before the ledger is folded again, with the timeline, record by record)
            body = read_spans(paths, lambda spans, src: timeline_of(_numbered(spans), pid, src))
    if body is None:
        first, last, many = read_spans(paths, _prior_ids, packs=True)
        hint = (f"the ledger's priors are {first} … {last}: `priors list` shows them" if many else
                f"the ledger's one prior is {first}" if first is not None else "the ledger holds no priors yet")
        raise Refusal("UNKNOWN_PRIOR", id=pid, hint=hint)
    return Answer(0, body, show_text(body))


def _numbered(spans: Any) -> Iterator[Tuple[int, Dict[str, Any], int, int]]:
    return ((no, rec, at, n) for no, (rec, at, n) in enumerate(spans, 1))


def _prior_ids(spans: Any, _src: Any) -> Tuple[Optional[str], Optional[str], bool]:
    """(the first prior record's id, the last one's, whether there are two or more)."""
    first = last = None
    many = False
    for rec, _at, _n in spans:
        pid = rec.get("id")
        if rec.get("t") == "prior" and isinstance(pid, str):
            many = first is not None
            first = pid if first is None else first
            last = pid
    return first, last, many


def list_priors(paths: Paths, ns: Optional[str], status: Optional[str], typ: Optional[str],
                as_json: bool = False) -> Answer:
    """One row a prior, filtered; JSON: `{"priors": [rows]}`. The answer is printed as it is made
    (`Answer.chunks`): the text with `as_json` False, else the JSON."""
    if status is not None and status not in LIST_STATUSES:
        close = nearest(status, LIST_STATUSES)
        raise UsageError(f"priors list: --status {status!r}: expected one of {', '.join(LIST_STATUSES)}"
                         + (f" — did you mean {close}?" if close else ""))
    for key, value in (("ns", ns), ("type", typ)):
        if value == "":
            raise UsageError(f"priors list: --{key} needs a non-empty value")
    require_init(paths)
    st = load_ledger(paths, want_data=False, write=False).state
    if ns is not None:
        check_namespace("list", [ns], namespaces_read(paths, st, ns))
    if typ is not None and typ not in PRESETS:  # a misspelt type would list nothing and look like an empty ledger
        known = list(PRESETS) + read_spans(paths, _types)
        if typ not in known:
            raise UsageError(f"priors list: --type {typ!r}: expected one of {', '.join(known)}")
    if as_json:
        return Answer(0, None, chunks=batched(json_pieces(each_row(st, ns, status, typ))))
    sizes = widths(each_cells(st, ns, status, typ, False))  # (the rows read twice, once to measure, never held)
    return Answer(0, None, chunks=batched(text_pieces(lambda: each_cells(st, ns, status, typ), sizes)))


def _types(spans: Any, _src: Any) -> List[str]:
    """The types the ledger's prior records name beside the presets, sorted."""
    return sorted({str(rec["type"]) for rec, _at, _n in spans if rec.get("t") == "prior"
                   and isinstance(rec.get("type"), str) and rec["type"] not in PRESETS})


def history(paths: Paths, ns: Optional[str], svg: Optional[str]) -> Answer:
    """A row a committed run (of `ns`, or all); JSON: `{["ns",] "runs": [rows]}`; `svg`: the chart too."""
    if ns == "":
        raise UsageError("priors history: --ns needs a non-empty value")
    to_stdout = svg == "-"  # `--svg -`: the chart on stdout instead of the table, as `-o -` means everywhere
    target = output_target("history", "--svg", svg, paths.root) if svg is not None and not to_stdout else None
    gc.disable()  # the fold holds no cycles: a collection would only walk it (~2 % of the call)
    try:  # the chart's line ends where `status` stands now: the whole fold, decisions included
        rows, st = read_spans(paths, lambda spans, src: history_of(spans, src, ns, svg is not None), packs=True)
        if ns is not None:
            check_namespace("history", [ns], namespaces_read(paths, st, ns))
        now = {name: c["open"] for name, c in tally(st).items()} if svg is not None else {}
        del st
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


def namespaces_read(paths: Paths, st: Any, ns: str) -> List[str]:
    """What a `--ns` is checked against: every namespace a prior, call or run record of the ledger
    names (`record_namespaces`), in order. The folded state names most — its priors' and sealed runs',
    all among them — so the ledger is read again only for a namespace the state does not know."""
    known = known_namespaces(st)
    return known if ns in known else read_spans(paths, lambda spans, _src: record_namespaces(r for r, _at, _n in spans))
