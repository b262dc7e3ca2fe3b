"""Staging findings on the command line: propose (candidate files in, one call to ops/propose.py)
and scopes (what a candidate may point at, with line spans)."""

from __future__ import annotations

from priors.cli.args import required
from priors.cli.inputs import read_candidates
from priors.core.grammar import check_run_id, unknown_fields
from priors.ops import ground, propose
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_propose(a: Parsed, ctx: Context) -> Answer:
    check_run_id(a.get("run"), "propose")
    ns = required(a, "ns", "NS")
    items = read_candidates(a.pos)
    for label, raw in items:
        for key, near in unknown_fields(raw):
            # the reference keeper ignores a field it does not know; so do we, but never silently
            ctx.err.write(f"priors propose: {label}: ignored the field {key!r}, which candidates do not have"
                          + (f" — did you mean {near!r}?" if near else "") + "\n")
            del raw[key]
    return propose.propose(Paths(ctx.root), a.get("run"), ns, items)


def cmd_scopes(a: Parsed, ctx: Context) -> Answer:
    return ground.list_scopes(Paths(ctx.root), a.get("run"), a.pos, bool(a.get("lines")))
