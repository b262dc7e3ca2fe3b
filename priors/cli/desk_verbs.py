"""A person's rarer desk verbs on the command line: redact, report (`status`, called at every turn,
and `decide`, which can walk a terminal, have modules of their own)."""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.errors import UsageError
from priors.ops.redact import redact as redact_prior
from priors.ops.report import report as write_report
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context


def cmd_redact(a: Parsed, ctx: Context) -> Answer:
    return Answer(0, None, redact_prior(Paths(ctx.root), a.pos[0], str(a.get("because") or "")))


def cmd_report(a: Parsed, ctx: Context) -> Answer:
    out = a.get("o")
    if not out:
        raise UsageError(f"priors report: -o FILE.html is required\nusage: {a.spec.usage}")
    return Answer(0, None, write_report(Paths(ctx.root), str(out), a.get("since")))
