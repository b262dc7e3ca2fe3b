"""Reading what is settled, on the command line: show, list, history."""

from __future__ import annotations

from priors.core.errors import UsageError
from priors.ops import session, timeline
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_show(a: Parsed, ctx: Context) -> Answer:
    return timeline.show(Paths(ctx.root), a.pos[0])


def cmd_list(a: Parsed, ctx: Context) -> Answer:
    if a.get("lessons"):  # the lessons loop's view (docs/lessons.md): same as `priors lessons`
        if a.has("--status") or a.has("--type"):
            raise UsageError("priors list: --lessons takes only --ns and --json")
        ns = a.get("ns")
        return session.list_lessons(Paths(ctx.root), [str(ns)] if ns else None, False, "list")
    return timeline.list_priors(Paths(ctx.root), a.get("ns"), a.get("status"), a.get("type"), bool(a.get("json")))


def cmd_history(a: Parsed, ctx: Context) -> Answer:
    if a.get("svg") == "-" and a.get("json"):
        raise UsageError("priors history: --svg - prints the chart, --json the rows — give one or the other")
    return timeline.history(Paths(ctx.root), a.get("ns"), a.get("svg"))
