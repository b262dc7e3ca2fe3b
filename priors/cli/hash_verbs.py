"""Hashing on the command line: hash (a file, a text, raw bytes) and snapshot (the scope map)."""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.errors import UsageError
from priors.ops import mapping
from priors.snapshot.scan import tty_progress

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context


def cmd_hash(a: Parsed, ctx: Context) -> Answer:
    modes = len(a.pos) + sum(1 for f in ("--text", "--raw", "--stdin-raw") if a.has(f))
    if modes != 1:
        raise UsageError("priors hash: give exactly one of FILE, --text, --raw FILE, --stdin-raw")
    if a.has("--text"):
        return Answer(0, None, mapping.hash_text(str(a.get("text"))))
    if a.has("--stdin-raw"):
        return Answer(0, None, mapping.hash_stdin())
    return Answer(0, None, mapping.hash_file(str(a.get("raw")) if a.has("--raw") else a.pos[0], a.has("--raw")))


def cmd_snapshot(a: Parsed, ctx: Context) -> Answer:
    """The scope map, printed or written to `-o FILE`; a progress line on a terminal meanwhile."""
    progress = tty_progress(ctx.err)
    try:
        return mapping.snapshot_map(ctx.root, list(a.pos) or None, list(a.get("tool") or []), list(a.get("merge") or []),
                                  a.get("output"), not a.get("no_anchors"), not a.get("no_cache"), progress)
    finally:
        if progress is not None:
            progress(-1, -1)
