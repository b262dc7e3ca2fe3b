"""The lessons loop's writing verbs on the command line: config, add, score, reflect, export,
import. Each handler reads its arguments and calls one `ops` function (`lessons`, run at every
prompt by the hooks, has a module of its own)."""

from __future__ import annotations

from priors.cli.args import required
from priors.cli.inputs import parse_json_input, read_input
from priors.core.answer import Answer
from priors.ops import lessons
from priors.ops.export import export
from priors.ops.score import score
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.cli.args import Parsed
    from priors.cli.main import Context

def cmd_config(a: Parsed, ctx: Context) -> Answer:
    paths = Paths(ctx.root)
    if len(a.pos) == 2:
        return lessons.set_config_key(paths, a.pos[0], a.pos[1])
    return lessons.show_config(paths, a.pos[0] if a.pos else None)


def cmd_add(a: Parsed, ctx: Context) -> Answer:
    ns = required(a, "ns", "NS")
    return lessons.add_lesson(Paths(ctx.root), ns, str(a.get("type") or "calibration"), a.pos, a.get("scope_ref"),
                              a.get("scope_hash"), list(a.get("tag") or []), a.get("supersedes"),
                              a.get("review_every"), not a.get("open"))


def cmd_score(a: Parsed, ctx: Context) -> Answer:
    run, outcome = a.pos
    reason = a.get("because")
    return score(Paths(ctx.root), run, outcome, None if reason is None else str(reason), bool(a.get("again")),
                 bool(a.get("replace")))


def cmd_reflect(a: Parsed, ctx: Context) -> Answer:
    ns = a.get("ns")
    return lessons.reflect(Paths(ctx.root), a.pos[0] if a.pos else None, str(ns) if ns else None,
                           bool(a.get("dry_run")), bool(a.get("include_learned")), bool(a.get("mark_existing")))


def cmd_export(a: Parsed, ctx: Context) -> Answer:
    ns, typ, out = a.get("ns"), a.get("type"), a.get("out")
    return export(Paths(ctx.root), str(ns) if ns else None, str(typ) if typ is not None else None,
                  bool(a.get("sarif")), bool(a.get("current")), None if out is None else str(out))


def cmd_import(a: Parsed, ctx: Context) -> Answer:
    ns = required(a, "ns", "NS")
    name = a.pos[0]
    obj = parse_json_input(read_input(name, "bundle"), name, "bundle")
    return lessons.import_bundle(Paths(ctx.root), name, obj, ns, bool(a.get("accept")))
