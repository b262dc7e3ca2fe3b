"""`priors merge-driver` on the command line: git calls it with %O %A %B %P (see `init --git`)."""

from __future__ import annotations

import os

from priors.ops.merge import merge_ledgers, merge_rendering

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context


def cmd_merge_driver(a: Parsed, ctx: Context) -> int:
    base_p, ours_p, theirs_p = a.pos[:3]
    path = a.pos[3] if len(a.pos) > 3 else None
    if a.get("render"):
        merge_rendering(ours_p, os.path.dirname(path) if path is not None else None)
        return 0
    merge_ledgers(base_p, ours_p, theirs_p, path, lambda text: ctx.err.write(text + "\n"))
    return 0
