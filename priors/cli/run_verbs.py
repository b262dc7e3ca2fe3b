"""The agent's run on the command line: relevant, scopes, disposition, propose, withdraw, commit,
abort. Each handler reads its arguments (and any input file) and calls one `ops` function; the
dispatcher prints the `Answer` (cli/verbs.py declares the verbs).
"""

from __future__ import annotations

from priors.cli.args import required
from priors.cli.inputs import read_candidates, scopes_from
from priors.core.errors import UsageError
from priors.core.grammar import check_run_id
from priors.ops import ground, run
from priors.ops.lessons import budget_for
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
        run.check_chosen_run(str(a.get("run")))
    run.check_settled(a.get("settled"))
    scopes = scopes_from(a, ctx, "relevant")
    budget = budget_for(paths, a.get("max_inject"), a.get("max_chars"), a.get("query"))
    return run.open_run(paths, ns, scopes, a.get("run"), budget, a.get("settled"),
                        say=lambda line: ctx.err.write(line + "\n"))


def cmd_scopes(a: Parsed, ctx: Context) -> Answer:
    return ground.list_scopes(Paths(ctx.root), a.get("run"), a.pos, bool(a.get("lines")))


def cmd_disposition(a: Parsed, ctx: Context) -> Answer:
    if len(a.pos) % 2:
        raise UsageError("priors disposition: give ID VERDICT pairs\nusage: " + a.spec.usage)
    pairs = [(a.pos[i], a.pos[i + 1]) for i in range(0, len(a.pos), 2)]
    return run.disposition(Paths(ctx.root), a.get("run"), pairs)


def cmd_propose(a: Parsed, ctx: Context) -> Answer:
    check_run_id(a.get("run"), "propose")
    ns = required(a, "ns", "NS")
    return run.propose(Paths(ctx.root), a.get("run"), ns, read_candidates(a.pos))


def cmd_withdraw(a: Parsed, ctx: Context) -> Answer:
    return ground.withdraw(Paths(ctx.root), a.get("run"), a.pos)


def cmd_commit(a: Parsed, ctx: Context) -> Answer:
    return run.commit(Paths(ctx.root), a.get("run"))


def cmd_abort(a: Parsed, ctx: Context) -> Answer:
    return run.abort(Paths(ctx.root), a.get("run"))
