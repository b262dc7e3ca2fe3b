"""A one-pass reader's records: what the timeline verbs that fold the whole ledger and keep none of
it (history, report) are handed, a block at a time (store.ledger.read_spans).
"""

from __future__ import annotations

from itertools import chain

from priors.core.fold import facets_of
from priors.core.ledger_parse import SHAPE_CARE, Deviation, blocks_read, line_shapes, lines_of, scanner

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple


def quick_spans(blocks: Iterable[Tuple[bytes, int]]) -> Iterator[Tuple[Dict[str, Any], int, int]]:
    """`quick_lists`, one record at a time."""
    return chain.from_iterable(quick_lists(blocks))


def quick_lists(blocks: Iterable[Tuple[bytes, int]]) -> Iterator[List[Tuple[Dict[str, Any], int, int]]]:
    """`ledger_parse.clean_lists` for a reader that folds the records and `pack`s every prior's at
    once (history, report): a prior's line in the shape keepers write is matched as text, not decoded,
    and handed over as a record of only what a fold reads of it — born, facets (shared), id, ns,
    redacted, review_every, scope_hash, scope_ref — its claim and evidence never decoded (~0.5 s at
    100k priors). Not a record to keep or show: its line, read back through the pack, is the record."""
    scan = scanner()
    one: Dict[str, str] = {}  # one string a namespace and a run, not one a line (a reader may keep them)
    for block, base in blocks_read(blocks):
        try:
            out = _quick_block(block, base, scan, one)
        except (ValueError, RecursionError, StopIteration):  # (as `each_block`: UnicodeDecodeError is a ValueError)
            out = None
        if out is None:
            raise Deviation()
        yield out


def _quick_block(block: bytes, base: int, scan: Any, one: Dict[str, str]) -> Optional[List[Tuple[Dict[str, Any], int, int]]]:
    text, bfind = lines_of(block)
    prior_line = line_shapes(len(block.translate(None, SHAPE_CARE)) == len(block))[0]
    out: List[Tuple[Dict[str, Any], int, int]] = []
    add = out.append
    i, n, b, at = 0, len(text), 0, base
    while i < n:
        j = text.find("\n", i)  # (the block ends with one)
        if bfind is None:
            at, ln = base + i, j - i
        else:
            e = bfind(b"\n", b)
            at, ln, b = base + b, e - b, e + 1
        m = None if text.startswith('{"action":', i) else prior_line(text, i, j)
        if m is None:
            rec, e = scan(text, i)
            if e != j or type(rec) is not dict:
                return None
        else:
            born, facets, pid, ns, redacted, every, sh, ref = m.groups()
            rec = {"t": "prior", "id": pid}
            if born is not None:
                rec["born"] = one.setdefault(born, born)
            if ns is not None:
                rec["ns"] = one.setdefault(ns, ns)
            if sh is not None:
                rec["scope_hash"] = sh
            if ref is not None:
                rec["scope_ref"] = ref
            if facets is not None:
                rec["facets"] = facets_of(facets, scan)
            if redacted is not None:
                rec["redacted"] = True
            if every is not None:
                rec["review_every"] = int(every)
        add((rec, at, ln))
        i = j + 1
    return out
