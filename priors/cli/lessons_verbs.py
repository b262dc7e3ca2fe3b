"""The lessons loop's writing verbs on the command line: config, add, score, reflect, export,
import. Each handler reads its arguments and calls one `ops` function (`lessons`, run at every
prompt by the hooks, has a module of its own)."""

from __future__ import annotations

from priors.cli.args import required
from priors.cli.inputs import parse_json_input, read_input
from priors.core.answer import Answer
from priors.core.errors import UsageError
from priors.ops import lessons, traces
from priors.ops.export import export
from priors.ops.score import score
from priors.ops.suggest import suggest
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
    # `--supersedes P-…` alone: the new lesson goes to that lesson's namespace (Pi's `/priors edit`)
    ns = required(a, "ns", "NS") if not a.get("supersedes") or a.get("ns") else None
    return lessons.add_lesson(Paths(ctx.root), ns, str(a.get("type") or "calibration"), a.pos, a.get("scope_ref"),
                              a.get("scope_hash"), list(a.get("tag") or []), a.get("supersedes"),
                              a.get("review_every"), not a.get("open"))


def cmd_score(a: Parsed, ctx: Context) -> Answer:
    key = a.get("session")
    if len(a.pos) == 1 and key is None:
        raise UsageError(f"priors score: give RUN (or last) and the outcome\nusage: {a.spec.usage}")
    run, outcome = a.pos if len(a.pos) == 2 else ("last", a.pos[0])
    reason = a.get("because")
    return score(Paths(ctx.root), run, outcome, None if reason is None else str(reason), bool(a.get("again")),
                 bool(a.get("replace")), None if key is None else str(key))


def cmd_suggest(a: Parsed, ctx: Context) -> Answer:
    ns, revises, note = a.get("ns"), a.get("revises"), a.get("because")
    return suggest(Paths(ctx.root), None if ns is None else str(ns), a.pos, list(a.get("tag") or []),
                   None if revises is None else str(revises), None if note is None else str(note),
                   [str(x) for x in a.get("distinct_from") or []])


def cmd_trace(a: Parsed, ctx: Context) -> Answer:
    paths = Paths(ctx.root)
    pruning = a.get("prune") is not None or a.get("prune_scored") is not None
    traces.check_modes(bool(a.pos), pruning, bool(a.get("where")))
    if a.get("where"):
        return traces.where(paths)
    if pruning:
        return traces.prune_traces(paths, a.get("prune"), a.get("prune_scored"))
    key = a.get("session")
    name = a.pos[0]
    obj = parse_json_input(read_input(name, "trace"), name, "trace")
    return traces.record(paths, None if key is None else str(key), obj)


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
    # (the parsed bundle handed over, not kept here: import lets it go once its lessons are read)
    return lessons.import_bundle(Paths(ctx.root), name, parse_json_input(read_input(name, "bundle"), name, "bundle"),
                                 ns, bool(a.get("accept")))
