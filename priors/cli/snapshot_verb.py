"""`priors snapshot`: print the scope map.
"""

from __future__ import annotations

import sys
from typing import Dict, List

from priors.core.errors import UsageError
from priors.snapshot.hashing import dumps_map
from priors.snapshot.listing import resolve_paths
from priors.snapshot.scan import _tty_progress, parse_tool, read_merge, take_snapshot

# ---------------------------------------------------------------- the verb

USAGE = "priors snapshot [PATH ...] [-o FILE] [--no-anchors] [--merge FILE] [--tool NAME=COMMAND ...]"
HELP = f"""usage: {USAGE}

Print a canonical JSON map of scope refs to 12-hex hashes for the target root
(or only under PATHs): files (`src/a.py`), definitions (`src/a.py#Class.method`),
directories (`src/`) and the whole target (`*`). Feed it to
`priors relevant --ns N --scopes FILE`, or use `priors relevant --snapshot`.

  -o FILE             write the map to FILE instead of stdout
  --no-anchors        leave out definition anchors (faster on a cold tree)
  --merge FILE        add refs from a JSON object of strings (`-` = stdin); repeatable
  --tool NAME=CMD     run CMD in the root and record its stdout's hash as NAME; repeatable
  --no-cache          neither read nor write .priors/cache/

See docs/snapshot.md for exactly what each hash covers."""


def cmd_snapshot(argv: List[str], ctx) -> int:
    from priors.cli.args import BOOL, MULTI, VALUE, Spec, parse

    spec = Spec(
        verb="snapshot", usage=USAGE, help=HELP, max_pos=None,
        flags={"--output": VALUE, "--no-anchors": BOOL, "--merge": MULTI, "--tool": MULTI, "--no-cache": BOOL},
        aliases={"-o": "--output"},
    )
    args = parse(argv, spec)
    tools: Dict[str, str] = {}
    for t in args.get("tool", []) or []:
        name, command = parse_tool(t)
        if name in tools:
            raise UsageError(f"priors snapshot: --tool {name} given twice")
        tools[name] = command
    merge: Dict[str, str] = {}
    for m in args.get("merge", []) or []:
        for k, v in read_merge(m).items():
            if k in merge and merge[k] != v:
                raise UsageError(f"priors snapshot: --merge files disagree on {k!r}")
            merge[k] = v
    root = ctx.root
    paths = list(args.pos) or None
    resolve_paths(root, paths)  # bad PATHs are usage errors before any work
    progress = _tty_progress(getattr(ctx, "err", sys.stderr))
    result = take_snapshot(root, paths, anchors=not args.get("no_anchors"), tools=tools, merge=merge,
                           progress=progress, use_cache=not args.get("no_cache"))
    if progress is not None:
        progress(-1, -1)
    text = dumps_map(result) + "\n"
    output = args.get("output")
    if output:
        from priors.cli.inputs import output_target
        from priors.store.files import atomic_write

        target = output_target("snapshot", "-o", str(output), ctx.root)
        try:
            atomic_write(target, text.encode("utf-8"))
        except OSError as exc:
            from priors.core.errors import os_failure

            raise os_failure(f"priors snapshot: -o {output}: {exc.strerror or exc}", exc) from None
    else:
        ctx.print(text[:-1])
    return 0
