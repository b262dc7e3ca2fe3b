"""Shell helpers every verb group shares: the target's paths, run ids, input files and JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path

from priors.core.errors import UsageError
from priors.store.files import read_bytes
from priors.store.paths import Paths, require_init
from priors.core.vocabulary import RUN_RE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Optional


# ------------------------------------------------------------------ shared shell helpers


def check_run_id(run: Optional[str], verb: str) -> str:
    if run is None:
        raise UsageError(f"priors {verb}: --run RUN is required")
    if not RUN_RE.match(run):
        raise UsageError(f"priors {verb}: bad run id {run!r} — a run id is `run-` and three to nine ASCII digits (e.g. run-001)")
    return run


def read_input(name: str, what: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    data = read_bytes(Path(name))
    if data is None:
        raise UsageError(f"priors: {what} {name}: no such file")
    return data


def parse_json_input(data: bytes, name: str, what: str) -> Any:
    from priors.core.canonical import JSONError, loads

    try:
        return loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"priors: {what} {name}: not UTF-8") from None
    except JSONError as exc:
        raise UsageError(f"priors: {what} {name}: not valid JSON ({exc})") from None


def paths_of(ctx) -> Paths:
    paths = Paths(ctx.root)
    require_init(paths)
    return paths
