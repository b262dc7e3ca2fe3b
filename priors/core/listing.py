"""`priors list`: one row a prior, as data and as a table — made a row at a time from the folded
ledger, so that a list of 100k priors is written without ever being held (its rows were ~70 MB,
its table ~40 MB and its text 30 MB more).
"""

from __future__ import annotations

from priors.core.canonical import dumps
from priors.core.controls import one_line
from priors.core.fold import fold
from priors.core.history import cut
from priors.core.selection import each_record
from priors.core.vocabulary import display_status

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

    from priors.core.fold import PriorState, State

HEAD = ("id", "namespace", "type", "status", "where", "what")


def list_rows(records: Sequence[Dict[str, Any]], ns: Optional[str] = None, status: Optional[str] = None,
              typ: Optional[str] = None) -> List[Dict[str, Any]]:
    """The rows of the ledger's `records`, of namespace `ns`, shown status `status`, type `typ` (None: any)."""
    return list(each_row(fold(records), ns, status, typ))


def each_row(st: State, ns: Optional[str] = None, status: Optional[str] = None,
             typ: Optional[str] = None) -> Iterator[Dict[str, Any]]:
    """`list_rows` of the folded state `st`, a row at a time: the records are read back a batch at a
    time (`selection.each_record`) and none is kept."""
    for p, rec in each_record(_chosen(st, ns, status)):
        if typ is None or rec.get("type") == typ:
            yield _row(p, rec)


def each_cells(st: State, ns: Optional[str] = None, status: Optional[str] = None, typ: Optional[str] = None,
               what: bool = True) -> Iterator[Tuple[str, ...]]:
    """The table's cells of each row `each_row` makes — made from the prior and its record, not from the
    row (a row a prior is not needed to print it); `what` False: the first five only (their widths)."""
    for p, rec in each_record(_chosen(st, ns, status)):
        if typ is None or rec.get("type") == typ:
            yield _cells_of(p, rec, what)


def _chosen(st: State, ns: Optional[str], status: Optional[str]) -> Iterator[PriorState]:
    for p in st.priors.values():
        if ns is not None and p.ns != ns:
            continue
        if status is not None and not (display_status(p) == status or (status == "binding" and p.binding)):
            continue
        yield p


def _row(p: PriorState, rec: Dict[str, Any]) -> Dict[str, Any]:
    row: Dict[str, Any] = {"id": p.id, "ns": p.ns, "status": display_status(p), "born": rec.get("born")}
    if rec.get("redacted") is True:
        row["redacted"] = True
    else:
        for key in ("type", "claim", "scope_ref", "severity", "rule"):
            if key in rec:
                row[key] = rec[key]
        scope = _scope(rec)
        if isinstance(scope, str):
            row["scope"] = scope
    return row


def _scope(rec: Dict[str, Any]) -> Any:
    """`p.facet("scope")`, from the record read here: a prior whose facets are not kept beside it
    would otherwise keep its record."""
    f = rec.get("facets")
    return f.get("scope") if isinstance(f, dict) else None


def _cells_of(p: PriorState, rec: Dict[str, Any], what: bool) -> Tuple[str, ...]:
    """`_cells(_row(p, rec))`, read straight from the record (a property test holds the two equal)."""
    pid, ns = p.id, p.ns
    ns = ns if type(ns) is str else str(ns)
    if rec.get("redacted") is True:
        return (one_line(pid), one_line(ns), "—", display_status(p), "—") + (("▒ redacted",) if what else ())
    if "scope_ref" in rec:
        where = rec["scope_ref"]
    else:
        scope = _scope(rec)
        where = scope if isinstance(scope, str) else "—"
    cells = (one_line(pid), one_line(ns), one_line(str(rec["type"])) if "type" in rec else "—",
             display_status(p), one_line(where if type(where) is str else str(where)))
    if not what:
        return cells
    rule = rec.get("rule")
    return cells + (one_line(cut((f"[{rule}] " if isinstance(rule, str) else "") + str(rec.get("claim", "")))),)


def list_text(rows: Sequence[Dict[str, Any]]) -> str:
    """The table a person reads: one line a row, each column as wide as its widest cell."""
    return "".join(text_pieces(lambda: map(_cells, rows), widths(map(_cells, rows))))


def widths(cells: Iterable[Sequence[str]]) -> Optional[List[int]]:
    """The widths of the table's first five columns over the heading and the rows' `cells` (None: no row)."""
    w0, w1, w2, w3, w4 = (len(h) for h in HEAD[:5])
    seen = False
    for c in cells:  # (a comparison a cell: this runs twice a prior at 100k priors)
        seen = True
        c0, c1, c2, c3, c4 = c[:5]
        if len(c0) > w0:
            w0 = len(c0)
        if len(c1) > w1:
            w1 = len(c1)
        if len(c2) > w2:
            w2 = len(c2)
        if len(c3) > w3:
            w3 = len(c3)
        if len(c4) > w4:
            w4 = len(c4)
    return [w0, w1, w2, w3, w4] if seen else None


def text_pieces(cells: Callable[[], Iterable[Sequence[str]]], sizes: Optional[List[int]]) -> Iterator[str]:
    """`list_text` a line at a time, of the rows' cells `cells()` makes again (`sizes`: their `widths`,
    measured on a first making): no row, cell or line is held but the one being written."""
    if sizes is None:
        yield "no priors match"
        return
    held = _line(HEAD, sizes)
    for c in cells():
        yield held + "\n"
        held = _line(c, sizes)
    yield held.rstrip()  # (as the whole table's text stripped: only its last line can end in padding)


def json_pieces(rows: Iterable[Dict[str, Any]]) -> Iterator[str]:
    """`{"priors": [rows]}` in canonical JSON, a row at a time: the pieces joined are `dumps` of it."""
    yield '{"priors":['
    first = True
    for r in rows:
        yield dumps(r) if first else "," + dumps(r)
        first = False
    yield "]}"


def _cells(r: Dict[str, Any]) -> Tuple[str, ...]:
    rule = f"[{r['rule']}] " if isinstance(r.get("rule"), str) else ""  # an analyzer's result: its rule first
    what = "▒ redacted" if r.get("redacted") else cut(rule + str(r.get("claim", "")))
    where = str(r.get("scope_ref", r.get("scope", "—")))
    return (one_line(r["id"]), one_line(str(r.get("ns"))), one_line(str(r.get("type", "—"))), r["status"],
            one_line(where), one_line(what))  # (a line feed a hand wrote cannot start a row of its own)


def _line(cells: Sequence[str], sizes: List[int]) -> str:
    c0, c1, c2, c3, c4, what = cells
    s0, s1, s2, s3, s4 = sizes
    return f"{c0.ljust(s0)}  {c1.ljust(s1)}  {c2.ljust(s2)}  {c3.ljust(s3)}  {c4.ljust(s4)}  {what}"
