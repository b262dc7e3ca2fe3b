"""The agent's run on the command line, past its opening: disposition, commit, carry. Each handler calls
one `ops/run.py` function; the dispatcher prints the `Answer`. Opening a run (relevant), staging
findings (propose, scopes) and taking staged work back (withdraw, abort) have modules of their
own, so each verb loads the code it runs.
"""

from __future__ import annotations

from priors.cli.inputs import read_input, verdict_pairs
from priors.core.errors import UsageError
from priors.ops import run
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_disposition(a: Parsed, ctx: Context) -> Answer:
    if len(a.pos) % 2:
        raise UsageError("priors disposition: give ID VERDICT pairs\nusage: " + a.spec.usage)
    pairs = [(a.pos[i], a.pos[i + 1]) for i in range(0, len(a.pos), 2)]
    name = a.get("from")
    if name is not None:  # (after those on the command line, in order)
        pairs += verdict_pairs(read_input(str(name), "verdicts"), str(name))
    if not pairs:
        raise UsageError("priors disposition: give ID VERDICT pairs, or --from FILE\nusage: " + a.spec.usage)
    return run.disposition(Paths(ctx.root), a.get("run"), pairs)


def cmd_commit(a: Parsed, ctx: Context) -> Answer:
    return run.commit(Paths(ctx.root), a.get("run"))


def cmd_carry(a: Parsed, ctx: Context) -> Answer:
    return run.carry(Paths(ctx.root), a.get("run"))
