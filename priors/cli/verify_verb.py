"""`priors verify` on the command line (for CI and pre-commit hooks): the problems, and under GitHub
Actions each one again as an `::error` annotation where the workflow reads it."""

from __future__ import annotations

import os

from priors.core.errors import UsageError
from priors.ops.verify import verify as verify_target
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context


def cmd_verify(a: Parsed, ctx: Context) -> int:
    if a.has("--since") and a.has("--no-git"):
        raise UsageError("priors verify: give --since REV or --no-git, not both")
    since = a.get("since")
    answer, annotations = verify_target(Paths(ctx.root), None if since is None else str(since), bool(a.get("no_git")))
    as_json = bool(a.get("json"))
    ctx.print(answer.json() if as_json else answer.text or "")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        # Workflow commands on stdout; with --json stdout stays pure JSON, so they go to stderr.
        for line in annotations:
            if as_json:
                ctx.err.write(line + "\n")
            else:
                ctx.print(line)
    return answer.code
