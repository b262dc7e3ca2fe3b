"""`priors redact` on the command line. A module of its own so that redacting loads only the
redaction (the report's renderer, history and chart stay unloaded)."""

from __future__ import annotations

from priors.core.answer import Answer
from priors.ops.redact import redact as redact_prior
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context


def cmd_redact(a: Parsed, ctx: Context) -> Answer:
    return Answer(0, None, redact_prior(Paths(ctx.root), a.pos[0], str(a.get("because") or "")))
