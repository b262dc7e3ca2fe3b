"""`priors report`: the ledger as one self-contained static page — one parse and one fold give the
history and the state; the page itself is pure (core/report_html.py).
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.desk import waiting
from priors.core.errors import UsageError
from priors.core.history import history_and_state
from priors.core.lessons import Ledger, lesson_rows
from priors.core.report_html import report_html
from priors.core.views import check_namespace, known_namespaces
from priors.core.vocabulary import is_run_id
from priors.ops.desk import lesson_calls
from priors.store.files import atomic_write
from priors.store.ledger import read_records
from priors.store.paths import Paths, output_target, require_init

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List, Optional


def report(paths: Paths, out: str, since: Optional[str], only: Optional[List[str]] = None) -> Answer:
    """Write the page to `out` (a new or regular file outside `.priors/`; `-`: print it, as every
    verb that takes `-o` does); `since`: a committed run after which the chart and the changes start."""
    target = None if out == "-" else output_target("report", "-o", out, paths.root)
    if since is not None and not is_run_id(since):
        raise UsageError(f"priors report: --since {since!r}: expected a run id like run-007")
    require_init(paths)
    records = read_records(paths)
    rows, st = history_and_state(records)
    if only:
        check_namespace("report", only, known_namespaces(st))
    if since is not None and since not in st.commits:
        raise UsageError(f"priors report: --since {since}: no committed run of that id in the ledger")
    ledger = Ledger.of(records, st)
    low, held = lesson_calls(paths, st, ledger)
    lessons = lesson_rows(ledger, None, False)
    name = paths.root.name
    title = f"priors report — {name}" if name else "priors report"
    page = report_html(title, st, records, rows, waiting(st, low, held), lessons, since, only)
    if target is None:
        return Answer(0, None, page[:-1] if page.endswith("\n") else page)
    atomic_write(target, page.encode("utf-8"))
    return Answer(0, None, f"wrote {out}")
