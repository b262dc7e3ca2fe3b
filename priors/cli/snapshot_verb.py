"""`priors snapshot` on the command line: a progress line on a terminal, the map (ops/mapping.py)."""

from __future__ import annotations

from priors.ops import mapping
from priors.snapshot.scan import tty_progress

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_snapshot(a: Parsed, ctx: Context) -> Answer:
    """The scope map, printed or written to `-o FILE`; a progress line on a terminal meanwhile."""
    progress = tty_progress(ctx.err)
    try:
        return mapping.snapshot_map(ctx.root, list(a.pos) or None, list(a.get("tool") or []), list(a.get("merge") or []),
                                  a.get("output"), not a.get("no_anchors"), not a.get("no_cache"), progress)
    finally:
        if progress is not None:
            progress(-1, -1)
