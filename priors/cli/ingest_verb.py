"""`priors ingest-sarif` on the command line: read the logs, take (or read) the snapshot, and hand
both to the one transaction (ops/ingest.py)."""

from __future__ import annotations

import os

from priors.cli.args import required
from priors.cli.inputs import read_json_file, scopes_from
from priors.core.errors import UsageError
from priors.ops.budget import budget_for
from priors.ops.ingest import ingest, read_findings
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List, Tuple

    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_ingest_sarif(a: Parsed, ctx: Context) -> Answer:
    ns = required(a, "ns", "NS")
    logs, snap = split_logs(a.pos, a.get("snapshot") or [])
    if a.has("--snapshot"):
        a.opts["snapshot"] = snap
    if not logs:
        raise UsageError(f"priors ingest-sarif: give at least one SARIF log\nusage: {a.spec.usage}")
    found, tools = read_findings(logs, read_json_file("SARIF file"), ctx.root)
    paths = Paths(ctx.root)
    scopes = scopes_from(a, ctx, "ingest-sarif", default_snapshot=True)
    budget = budget_for(paths, a.get("max_inject"), a.get("max_chars"), a.get("query"))
    return ingest(paths, ns, scopes, budget, found, say=lambda line: ctx.err.write(line + "\n"), tools=tools)


def split_logs(pos: List[str], snapshot: List[str]) -> Tuple[List[str], List[str]]:
    """(the logs, the snapshot's paths): `--snapshot` takes every word up to the next option, so a
    log named after it (`--snapshot src ruff.sarif`) is taken back — a file ending in `.sarif`, or a
    `.json` file holding a SARIF log (an object with `runs`). Source paths are never logs."""
    logs: List[str] = list(pos)
    paths: List[str] = []
    for word in snapshot:
        (logs if _is_log(word) else paths).append(word)
    return logs, paths


def _is_log(word: str) -> bool:
    low = word.lower()
    if not (low.endswith(".sarif") or low.endswith(".json")) or not os.path.isfile(word):
        return False
    if low.endswith(".sarif"):
        return True
    try:
        head = read_json_file("SARIF file")(word)
    except UsageError:
        return False
    return isinstance(head, dict) and "runs" in head and "version" in head
