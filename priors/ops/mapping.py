"""`priors snapshot`: the scope map of the code (files, definitions, folders, tools), printed or
written to a file a person names. `.priors/` is never touched.
"""

from __future__ import annotations

from pathlib import Path

from priors.core.answer import Answer
from priors.core.errors import UsageError, os_failure
from priors.snapshot.listing import resolve_paths
from priors.snapshot.scan import parse_tool, read_merge, snapshot_line
from priors.store.files import atomic_write
from priors.store.paths import output_target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Dict, List, Optional

    from priors.snapshot.scan import Progress


def snapshot_map(root: Path, where: Optional[List[str]], tool_args: List[str], merge_files: List[str],
                 output: Optional[str], anchors: bool, use_cache: bool, progress: Optional[Progress]) -> Answer:
    """`priors snapshot`: the scope map of `root` (or of `where` under it), with `--tool NAME=COMMAND`
    hashes and `--merge FILE` refs added, printed or written to `output` (never one of the keeper's
    own files). Every argument is checked before the tree is read."""
    tools: Dict[str, str] = {}
    for t in tool_args:
        name, command = parse_tool(t)
        if name in tools:
            raise UsageError(f"priors snapshot: --tool {name} given twice")
        tools[name] = command
    merge: Dict[str, str] = {}
    for m in merge_files:
        for k, v in read_merge(m).items():
            if k in merge and merge[k] != v:
                raise UsageError(f"priors snapshot: --merge files disagree on {k!r}")
            merge[k] = v
    resolve_paths(root, where)  # bad PATHs are usage errors before any work
    target = output_target("snapshot", "-o", str(output), root) if output is not None and output != "-" else None
    text, plain = snapshot_line(root, where, anchors, tools, merge, progress, use_cache)
    if target is None:
        if plain:  # (printable ASCII: the line, its JSON and its UTF-8 are one; printed as it is)
            return Answer(0, None, None, encoded=text, utf8=text.encode("ascii"), shown=True)
        return Answer(0, None, text, encoded=text)
    try:
        atomic_write(target, (text + "\n").encode("utf-8"))
    except OSError as exc:
        raise os_failure(f"priors snapshot: -o {output}: {exc.strerror or exc}", exc) from None
    return Answer(0, None, "")
