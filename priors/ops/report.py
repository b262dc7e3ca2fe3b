"""`priors report`: the ledger as one self-contained static page — one pass over the records gives
the history, the state and what the page reads of the records themselves, none of them held; the
page itself is pure (core/report_html.py), written a piece at a time.
"""

from __future__ import annotations

import gc

from priors.core.answer import Answer
from priors.core.desk import waiting_plan
from priors.core.errors import UsageError
from priors.core.history import history_of
from priors.core.lessons import Ledger
from priors.core.report_html import PageFacts, report_pieces
from priors.core.views import check_namespace, known_namespaces
from priors.core.vocabulary import is_run_id
from priors.ops.desk import lesson_calls
from priors.store.files import atomic_write
from priors.store.ledger import read_spans
from priors.store.paths import Paths, output_target, require_init

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Iterable, Iterator, List, Optional


def report(paths: Paths, out: str, since: Optional[str], only: Optional[List[str]] = None) -> Answer:
    """Write the page to `out` (a new or regular file outside `.priors/`; `-`: print it, as every
    verb that takes `-o` does); `since`: a committed run after which the chart and the changes start."""
    target = None if out == "-" else output_target("report", "-o", out, paths.root)
    if since is not None and not is_run_id(since):
        raise UsageError(f"priors report: --since {since!r}: expected a run id like run-007")
    require_init(paths)
    facts = PageFacts(since)
    gc.disable()  # the fold holds no cycles: a collection would only walk it
    try:
        rows, st = read_spans(paths, lambda spans, src: _walk(facts, spans, src), packs=True, see=facts.see)
    finally:
        if hasattr(gc, "freeze"):
            gc.freeze()  # (as a load does: the fold lives until exit, later collections need not walk it)
        gc.enable()
    if only:
        check_namespace("report", only, known_namespaces(st))
    if since is not None and since not in st.commits:
        raise UsageError(f"priors report: --since {since}: no committed run of that id in the ledger")
    ledger = Ledger(st)  # (the lessons loop's view: its calls and rows read the fold, not the records)
    low, held = lesson_calls(paths, st, ledger)
    name = paths.root.name
    title = f"priors report — {name}" if name else "priors report"
    pieces = report_pieces(title, st, facts, rows, waiting_plan(st, low, held), ledger, since, only)
    if target is None:
        return Answer(0, None, chunks=_text(pieces))
    atomic_write(target, _utf8(pieces))
    return Answer(0, None, f"wrote {out}")


def _walk(facts: PageFacts, spans: Any, src: Any) -> Any:
    """The history and the whole fold of the records (each pass of `read_spans` sees them afresh)."""
    facts.clear()
    return history_of(spans, src, None, True)


def _text(pieces: Iterable[str]) -> Iterator[str]:
    """The page as a text answer: without its last newline, which printing it adds."""
    held = None
    for piece in pieces:
        if held is not None:
            yield held
        held = piece
    if held is not None:
        yield held[:-1] if held.endswith("\n") else held


def _utf8(pieces: Iterable[str]) -> Iterator[bytes]:
    """The page in UTF-8, a piece at a time. A character UTF-8 cannot hold (a lone surrogate a hand
    wrote) fails as encoding the page whole did, at its place in the page."""
    done = 0
    for piece in pieces:
        try:
            yield piece.encode("utf-8")
        except UnicodeEncodeError as exc:  # (the page's text before it stands in as padding, only to say where)
            raise UnicodeEncodeError(exc.encoding, "\0" * done + piece, done + exc.start, done + exc.end,
                                     exc.reason) from None
        done += len(piece)
