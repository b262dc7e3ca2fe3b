"""`priors hash` on the command line: a file, a text or raw bytes (ops/digest.py)."""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.errors import UsageError
from priors.ops import digest

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context


def cmd_hash(a: Parsed, ctx: Context) -> Answer:
    modes = len(a.pos) + sum(1 for f in ("--text", "--raw", "--stdin-raw") if a.has(f))
    if modes != 1:
        raise UsageError("priors hash: give exactly one of FILE, --text, --raw FILE, --stdin-raw")
    if a.has("--text"):
        return Answer(0, None, digest.hash_text(str(a.get("text"))))
    if a.has("--stdin-raw"):
        return Answer(0, None, digest.hash_stdin())
    return Answer(0, None, digest.hash_file(str(a.get("raw")) if a.has("--raw") else a.pos[0], a.has("--raw")))
