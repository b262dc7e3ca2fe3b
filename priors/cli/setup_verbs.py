"""Setting up on the command line: init, hash, snapshot, render."""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.errors import UsageError, os_failure
from priors.ops import setup
from priors.snapshot.hashing import dumps_map
from priors.snapshot.listing import resolve_paths
from priors.snapshot.scan import parse_tool, read_merge, take_snapshot, tty_progress
from priors.store.files import atomic_write
from priors.store.paths import Paths, output_target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Dict

    from priors.cli.args import Parsed
    from priors.cli.main import Context


def cmd_init(a: Parsed, ctx: Context) -> Answer:
    return Answer(0, None, "\n".join(setup.init(Paths(ctx.root), a.has("--git"))))


def cmd_hash(a: Parsed, ctx: Context) -> Answer:
    modes = len(a.pos) + sum(1 for f in ("--text", "--raw", "--stdin-raw") if a.has(f))
    if modes != 1:
        raise UsageError("priors hash: give exactly one of FILE, --text, --raw FILE, --stdin-raw")
    if a.has("--text"):
        return Answer(0, None, setup.hash_text(str(a.get("text"))))
    if a.has("--stdin-raw"):
        return Answer(0, None, setup.hash_stdin())
    return Answer(0, None, setup.hash_file(str(a.get("raw")) if a.has("--raw") else a.pos[0], a.has("--raw")))


def cmd_render(a: Parsed, ctx: Context) -> Answer:
    setup.render_all(Paths(ctx.root))
    return Answer(0, None, "rendered .priors/PRIORS.md")


def cmd_snapshot(a: Parsed, ctx: Context) -> int:
    """The scope map, printed or written to `-o FILE`; a progress line on a terminal meanwhile."""
    tools: Dict[str, str] = {}
    for t in a.get("tool", []) or []:
        name, command = parse_tool(t)
        if name in tools:
            raise UsageError(f"priors snapshot: --tool {name} given twice")
        tools[name] = command
    merge: Dict[str, str] = {}
    for m in a.get("merge", []) or []:
        for k, v in read_merge(m).items():
            if k in merge and merge[k] != v:
                raise UsageError(f"priors snapshot: --merge files disagree on {k!r}")
            merge[k] = v
    root = ctx.root
    where = list(a.pos) or None
    resolve_paths(root, where)  # bad PATHs are usage errors before any work
    output = a.get("output")
    target = output_target("snapshot", "-o", str(output), root) if output else None
    progress = tty_progress(ctx.err)
    result = take_snapshot(root, where, anchors=not a.get("no_anchors"), tools=tools, merge=merge,
                           progress=progress, use_cache=not a.get("no_cache"))
    if progress is not None:
        progress(-1, -1)
    text = dumps_map(result) + "\n"
    if target is None:
        ctx.print(text[:-1])
        return 0
    try:
        atomic_write(target, text.encode("utf-8"))
    except OSError as exc:
        raise os_failure(f"priors snapshot: -o {output}: {exc.strerror or exc}", exc) from None
    return 0

