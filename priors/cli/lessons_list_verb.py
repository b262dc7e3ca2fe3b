"""`priors lessons` on the command line: the list, or with `--inject` the lessons for a coding
session's prompt. A module of its own: the hooks call it at every prompt, so it loads the
ranking and the session record and nothing else of the lessons loop."""

from __future__ import annotations

from priors.core.errors import UsageError
from priors.ops import session
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer

INJECT_ONLY = ("query", "session", "fresh", "new_only", "max_inject", "max_chars", "peek", "hold_proposals")


def cmd_lessons(a: Parsed, ctx: Context) -> Answer:
    ns = a.get("ns")
    if a.get("inject"):
        if a.get("all") or a.get("status") is not None:
            raise UsageError("priors lessons: --all and --status list lessons; --inject gives only the live ones")
        return session.inject(Paths(ctx.root), ns, a.get("max_inject"), a.get("max_chars"), a.get("query"),
                              a.get("session"), bool(a.get("fresh")), bool(a.get("new_only")),
                              remember=not a.get("peek"), hold_proposals=bool(a.get("hold_proposals")))
    for name in INJECT_ONLY:
        if a.get(name) is not None:
            raise UsageError(f"priors lessons: --{name.replace('_', '-')} goes with --inject")
    status = a.get("status")
    if status is not None:
        if a.get("all"):
            raise UsageError("priors lessons: give --all or --status, not both")
        return session.lessons_by_status(Paths(ctx.root), str(status), ns)
    return session.list_lessons(Paths(ctx.root), ns, bool(a.get("all")))
