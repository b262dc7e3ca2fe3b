"""`priors report -o FILE.html` on the command line: the one self-contained page for a person."""

from __future__ import annotations

from priors.core.errors import UsageError
from priors.ops.report import report as write_report
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_report(a: Parsed, ctx: Context) -> Answer:
    out = a.get("o")
    if out is None:  # `-o ''` is the output guard's one empty-path message, as for every verb
        raise UsageError(f"priors report: -o FILE.html is required\nusage: {a.spec.usage}")
    return write_report(Paths(ctx.root), str(out), a.get("since"), list(a.get("ns") or []) or None)
