"""Taking staged work back on the command line: withdraw, abort (ops/retract.py)."""

from __future__ import annotations

from priors.ops import retract
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_withdraw(a: Parsed, ctx: Context) -> Answer:
    return retract.withdraw(Paths(ctx.root), a.get("run"), a.pos)


def cmd_abort(a: Parsed, ctx: Context) -> Answer:
    return retract.abort(Paths(ctx.root), a.get("run"))
