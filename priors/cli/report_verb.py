"""`priors report -o FILE.html [--since RUN]`: the ledger as one self-contained static page.
"""

from __future__ import annotations

from pathlib import Path

from priors.cli.args import VALUE, Spec, parse
from priors.core.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List

REPORT = Spec("report", "priors report -o FILE.html [--since RUN]", {"-o": VALUE, "--since": VALUE},
              aliases={"--output": "-o"}, help="""usage: priors report -o FILE.html [--since RUN]

Write one self-contained HTML page — inline CSS and SVG, nothing loaded from
anywhere, so it works opened from disk or attached to a pull request or a CI
run: where each namespace stands, the convergence chart (fixed / carried /
touched / your call / new per run, the open line, quiescent runs marked), what
waits for you per namespace with the exact command to copy, open findings
grouped by file with their severity, what the last run fixed, lessons with
their score, and redacted priors as tombstones only. Same ledger, same bytes.
  -o FILE       where to write the page (--output)
  --since RUN   what changed since committed run RUN: the chart, new findings,
                fixes and your decisions after it (what waits stays complete)""")


def cmd_report(argv: List[str], ctx) -> int:
    from priors.cli.desk_walk import lesson_calls
    from priors.cli.inputs import output_target, paths_of
    from priors.cli.lessons_verbs import lesson_rows
    from priors.core.desk import waiting
    from priors.core.history import history_and_state
    from priors.core.lessons import Ledger
    from priors.core.report_html import report_html
    from priors.core.vocabulary import is_run_id
    from priors.store.files import atomic_write
    from priors.store.ledger import read_records

    a = parse(argv, REPORT)
    out = a.get("o")
    if not out:
        raise UsageError(f"priors report: -o FILE.html is required\nusage: {REPORT.usage}")
    target = output_target("report", "-o", str(out), ctx.root)
    since = a.get("since")
    if since is not None and not is_run_id(since):
        raise UsageError(f"priors report: --since {since!r}: expected a run id like run-007")
    paths = paths_of(ctx)
    records = read_records(paths)  # the one ledger API; one parse and one fold give the history and the state
    rows, st = history_and_state(records)
    if since is not None and since not in st.commits:
        raise UsageError(f"priors report: --since {since}: no committed run of that id in the ledger")
    ledger = Ledger.of(records, st)
    low, held = lesson_calls(paths, st, ledger)
    lessons = lesson_rows(ledger, None, False)
    name = Path(ctx.root).name
    title = f"priors report — {name}" if name else "priors report"
    page = report_html(title, st, records, rows, waiting(st, low, held), lessons, since)
    atomic_write(target, page.encode("utf-8"))
    ctx.print(f"wrote {out}")
    return 0
