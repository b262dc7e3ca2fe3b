"""Setting up on the command line: init, render, doctor."""

from __future__ import annotations

from priors.core.answer import Answer
from priors.ops import doctor, setup
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context


def cmd_init(a: Parsed, ctx: Context) -> Answer:
    return Answer(0, None, "\n".join(setup.init(Paths(ctx.root), a.has("--git"))))


def cmd_render(a: Parsed, ctx: Context) -> Answer:
    setup.render_all(Paths(ctx.root))
    return Answer(0, None, "rendered .priors/PRIORS.md")


def cmd_doctor(a: Parsed, ctx: Context) -> Answer:
    return doctor.doctor(Paths(ctx.root))
