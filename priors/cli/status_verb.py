"""`priors status` on the command line. A module of its own: the verb every session calls most
loads nothing but what it reads (ops/desk.py)."""

from __future__ import annotations

from priors.ops.desk import status as desk_status
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_status(a: Parsed, ctx: Context) -> Answer:
    return desk_status(Paths(ctx.root), bool(a.get("calls")), bool(a.get("json")))
