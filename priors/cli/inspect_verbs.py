"""`priors show`, `priors list`, `priors history`: read the ledger and print.
"""

from __future__ import annotations

from typing import Any, Dict, List

from priors.core.vocabulary import LIST_STATUSES
from priors.core.history import (
    history_rows,
    history_svg,
    history_text,
    list_rows,
    list_text,
    show_text,
    timeline,
)

# ------------------------------------------------------------------ shared


def load(ctx: Any) -> List[Dict[str, Any]]:
    """The ledger's records, parsed once (priors.store.ledger.read_records): these verbs read timelines."""
    from priors.store.ledger import read_records
    from priors.store.paths import Paths

    return read_records(Paths(ctx.root))


# ------------------------------------------------------------------ verbs


def cmd_show(argv: List[str], ctx: Any) -> int:
    from priors.cli.args import parse
    from priors.cli.inputs import emit

    args = parse(argv, show_spec())
    return emit(ctx, args, show(args, ctx))


def show_spec() -> Any:
    from priors.cli.args import BOOL, Spec

    return Spec("show", "priors show ID [--json]", {"--json": BOOL}, min_pos=1, max_pos=1, help=SHOW_HELP)


def show(args: Any, ctx: Any) -> Any:
    """One prior's timeline: an Answer whose JSON is `show --json`'s object."""
    from priors.cli.inputs import Answer
    from priors.core.errors import Refusal, UsageError
    from priors.core.fold import PRIOR_RE

    pid = args.pos[0]
    if not PRIOR_RE.match(pid):
        raise UsageError(f"priors show: {pid!r} is not a prior id (P- and at least four digits)")
    body = timeline(load(ctx), pid)
    if body is None:
        raise Refusal("UNKNOWN_PRIOR", id=pid)
    return Answer(0, body, show_text(body))


def cmd_list(argv: List[str], ctx: Any) -> int:
    from priors.cli.args import BOOL, VALUE, Spec, parse
    from priors.core.canonical import dumps
    from priors.core.errors import UsageError

    spec = Spec("list", "priors list [--ns N] [--status S] [--type T] [--lessons] [--json]", {"--ns": VALUE, "--status": VALUE, "--type": VALUE, "--json": BOOL, "--lessons": BOOL}, help=LIST_HELP)
    args = parse(argv, spec)
    if args.get("lessons"):  # the lessons loop's view (docs/lessons.md): same as `priors lessons`
        if args.has("--status") or args.has("--type"):
            raise UsageError("priors list: --lessons takes only --ns and --json")
        from priors.cli.lessons_verbs import cmd_lessons

        return cmd_lessons([a for a in argv if a != "--lessons"], ctx)
    status = args.get("status")
    if status is not None and status not in LIST_STATUSES:
        raise UsageError(f"priors list: --status {status!r}: expected one of {', '.join(LIST_STATUSES)}")
    for key in ("ns", "type"):
        if args.get(key) == "":
            raise UsageError(f"priors list: --{key} needs a non-empty value")
    records = load(ctx)
    typ = args.get("type")
    if typ is not None:
        from priors.core.vocabulary import PRESETS

        known = list(PRESETS) + sorted({str(r["type"]) for r in records if r.get("t") == "prior"
                                        and isinstance(r.get("type"), str) and r["type"] not in PRESETS})
        if typ not in known:  # a misspelt type would list nothing and look like an empty ledger
            raise UsageError(f"priors list: --type {typ!r}: expected one of {', '.join(known)}")
    rows = list_rows(records, args.get("ns"), status, typ)  # type: ignore[arg-type]
    ctx.print(dumps({"priors": rows}) if args.get("json") else list_text(rows))
    return 0


def cmd_history(argv: List[str], ctx: Any) -> int:
    from pathlib import Path

    from priors.cli.args import BOOL, VALUE, Spec, parse
    from priors.core.canonical import dumps
    from priors.core.errors import UsageError
    from priors.store.files import atomic_write

    spec = Spec("history", "priors history [--ns N] [--json] [--svg FILE]", {"--ns": VALUE, "--json": BOOL, "--svg": VALUE}, help=HISTORY_HELP)
    args = parse(argv, spec)
    ns = args.get("ns")
    if ns == "":
        raise UsageError("priors history: --ns needs a non-empty value")
    svg = args.get("svg")
    if svg is not None:
        target = Path(str(svg))
        if str(svg) == "" or target.is_dir():
            raise UsageError(f"priors history: --svg {svg!r}: expected a file path")
        if not target.parent.is_dir() and str(target.parent) not in ("", "."):
            raise UsageError(f"priors history: --svg {svg}: no such directory {target.parent}")
    import gc

    gc.disable()  # the records and the fold hold no cycles: a collection would only walk them all (~2 % of the call)
    try:
        rows = history_rows(load(ctx), ns)  # type: ignore[arg-type]
    finally:
        gc.enable()
    if args.get("json"):
        ctx.print(dumps({"ns": ns, "runs": [r.as_dict() for r in rows]} if ns is not None else {"runs": [r.as_dict() for r in rows]}))
    else:
        ctx.print(history_text(rows))
    if svg is not None:
        title = f"priors history — {ns}" if ns is not None else "priors history"
        atomic_write(Path(str(svg)), history_svg(rows, title).encode("utf-8"))
        if not args.get("json"):
            ctx.print(f"wrote {svg}")
    return 0


SHOW_HELP = """usage: priors show ID [--json]

A prior in plain words and its whole timeline: the run it was born in, each
disposition per run, each of your decisions with its reason, calls that reverse
it, resting and resurrection, redaction. Each step names its ledger line."""

LIST_HELP = """usage: priors list [--ns N] [--status S] [--type T] [--lessons] [--json]

One line per prior: id, area, type, status, where, what.
  --ns N       only namespace N
  --status S   open fixed stale challenged obsolete-proposed accepted wontfix
               obsolete redacted resting, or binding (accepted or wontfix)
  --type T     only priors of type T (conclusion, behavioral, coverage, calibration, custom, …)
  --lessons    lessons only, with uses, wins, partials, losses and score (`priors lessons`)
  --json       canonical JSON {"priors":[…]}"""

HISTORY_HELP = """usage: priors history [--ns N] [--json] [--svg FILE]

For every committed run, counted from the ledger's events: checked (verify items
it accounted for), fixed, carried, touched, your call, new, and resting/open after
it — as a table with a bar chart. A run is quiescent when it checked something,
carried everything and nothing was fixed, touched, new or put to you.
  --ns N       only runs of namespace N
  --json       canonical JSON {"runs":[…]}
  --svg FILE   also write a self-contained SVG chart to FILE"""
