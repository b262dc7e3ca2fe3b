"""`priors ingest-sarif` on the command line: read the logs, take (or read) the snapshot, and hand
both to the one transaction (ops/ingest.py)."""

from __future__ import annotations

from priors.cli.args import required
from priors.cli.inputs import read_json_file, scopes_from
from priors.ops.budget import budget_for
from priors.ops.ingest import ingest, read_findings
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


def cmd_ingest_sarif(a: Parsed, ctx: Context) -> Answer:
    ns = required(a, "ns", "NS")
    found = read_findings(a.pos, read_json_file("SARIF file"), ctx.root)
    paths = Paths(ctx.root)
    scopes = scopes_from(a, ctx, "ingest-sarif", default_snapshot=True)
    budget = budget_for(paths, a.get("max_inject"), a.get("max_chars"), a.get("query"))
    return ingest(paths, ns, scopes, budget, found, say=lambda line: ctx.err.write(line + "\n"))
