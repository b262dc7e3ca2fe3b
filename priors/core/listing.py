"""`priors list`: one row a prior, as data and as a table — made a row at a time from the folded
ledger, so that a list of 100k priors is written without ever being held (its rows were ~70 MB,
its table ~40 MB and its text 30 MB more).
"""

from __future__ import annotations

from priors.core.canonical import dumps
from priors.core.controls import one_line
from priors.core.fold import fold
from priors.core.history import cut
from priors.core.selection import records_of
from priors.core.vocabulary import display_status

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

    from priors.core.fold import PriorState, State

BATCH = 1024  # priors whose records are read back at once (one read and one parse, not one of each a record)
HEAD = ("id", "namespace", "type", "status", "where", "what")


def list_rows(records: Sequence[Dict[str, Any]], ns: Optional[str] = None, status: Optional[str] = None,
              typ: Optional[str] = None) -> List[Dict[str, Any]]:
    """The rows of the ledger's `records`, of namespace `ns`, shown status `status`, type `typ` (None: any)."""
    return list(each_row(fold(records), ns, status, typ))


def each_row(st: State, ns: Optional[str] = None, status: Optional[str] = None,
             typ: Optional[str] = None) -> Iterator[Dict[str, Any]]:
    """`list_rows` of the folded state `st`, a row at a time: the records are read back a batch at a
    time (`selection.records_of`) and none is kept."""
    batch: List[PriorState] = []
    for p in st.priors.values():
        if ns is not None and p.ns != ns:
            continue
        if status is not None and not (display_status(p) == status or (status == "binding" and p.binding)):
            continue
        batch.append(p)
        if len(batch) == BATCH:
            yield from _rows(batch, typ)
            batch = []
    yield from _rows(batch, typ)


def _rows(ps: List[PriorState], typ: Optional[str]) -> Iterator[Dict[str, Any]]:
    for p, rec in zip(ps, records_of(ps) if ps else []):
        if typ is not None and rec.get("type") != typ:
            continue
        row: Dict[str, Any] = {"id": p.id, "ns": p.ns, "status": display_status(p), "born": rec.get("born")}
        if rec.get("redacted") is True:
            row["redacted"] = True
        else:
            for key in ("type", "claim", "scope_ref", "severity", "rule"):
                if key in rec:
                    row[key] = rec[key]
            f = rec.get("facets")  # (`p.facet`, from the record read here: a prior whose facets are not kept
            scope = f.get("scope") if isinstance(f, dict) else None  # beside it would keep its record)
            if isinstance(scope, str):
                row["scope"] = scope
        yield row


def list_text(rows: Sequence[Dict[str, Any]]) -> str:
    """The table a person reads: one line a row, each column as wide as its widest cell."""
    return "".join(text_pieces(lambda: rows, widths(rows)))


def widths(rows: Iterable[Dict[str, Any]]) -> Optional[List[int]]:
    """The widths of the table's first five columns over the heading and `rows` (None: no row)."""
    out = [len(h) for h in HEAD[:5]]
    seen = False
    for r in rows:
        seen = True
        out = [max(w, len(c)) for w, c in zip(out, _cells(r))]
    return out if seen else None


def text_pieces(rows: Callable[[], Iterable[Dict[str, Any]]], sizes: Optional[List[int]]) -> Iterator[str]:
    """`list_text` a line at a time, of the rows `rows()` makes again (`sizes`: their `widths`,
    measured on a first making): no row, cell or line is held but the one being written."""
    if sizes is None:
        yield "no priors match"
        return
    held = _line(HEAD, sizes)
    for r in rows():
        yield held + "\n"
        held = _line(_cells(r), sizes)
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
    return "  ".join(c.ljust(sizes[i]) for i, c in enumerate(cells[:5])) + "  " + cells[5]
