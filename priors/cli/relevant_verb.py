"""`priors relevant` on the command line: the run's snapshot (taken now, or read from `--scopes`),
the injection budget, and the one call that opens the run."""

from __future__ import annotations

from priors.cli.args import required
from priors.cli.inputs import scopes_from
from priors.ops import opening
from priors.ops.budget import budget_for
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_relevant(a: Parsed, ctx: Context) -> Answer:
    ns = required(a, "ns", "NS")
    paths = Paths(ctx.root)
    if a.get("run") is not None:  # checked before the snapshot is taken: a bad id costs no scan
        opening.check_chosen_run(str(a.get("run")))
    opening.check_settled(a.get("settled"))
    scopes = scopes_from(a, ctx, "relevant")
    budget = budget_for(paths, a.get("max_inject"), a.get("max_chars"), a.get("query"))
    return opening.open_run(paths, ns, scopes, a.get("run"), budget, a.get("settled"),
                        say=lambda line: ctx.err.write(line + "\n"))
