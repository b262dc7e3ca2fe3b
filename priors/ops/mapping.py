"""What the keeper hashes, without touching `.priors/`: `hash` (the sha12 it uses for scopes, of a
file, a text or raw bytes) and `snapshot` (the scope map of the code). A module apart from the
set-up verbs: hashing a text loads no ledger code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from priors.core.answer import Answer
from priors.core.canonical import normalize, sha12
from priors.core.errors import UsageError, os_failure
from priors.core.vocabulary import MAX_STREAM_BYTES
from priors.snapshot.hashing import digest_stream, dumps_map
from priors.snapshot.listing import resolve_paths
from priors.snapshot.scan import parse_tool, read_merge, read_or_stream, take_snapshot
from priors.store.files import atomic_write, check_stdin, iter_chunks, open_regular
from priors.store.paths import output_target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Dict, List, Optional

    from priors.snapshot.scan import Progress


def hash_text(text: str) -> str:
    """The sha12 of a text, whitespace runs collapsed and trimmed."""
    return sha12(normalize(text))


def hash_stdin() -> str:
    """The sha12 of standard input's bytes as they are: a pipe may be endless, so it is hashed as a
    stream, up to a limit."""
    check_stdin("hash --stdin-raw")
    chunks = iter_chunks(os.dup(sys.stdin.fileno()), MAX_STREAM_BYTES, "standard input")
    return digest_stream(chunks, "raw", 0)[0]


def hash_file(name: str, raw: bool) -> str:
    """The sha12 of a regular file (a FIFO would block, /dev/zero never ends), streamed: any size,
    little memory. `raw`: its bytes exactly; else as text, normalized."""
    fd = open_regular(Path(name))
    if fd is None:
        raise UsageError(f"priors hash: {name}: no such file")
    return read_or_stream(fd, "raw" if raw else "text")[0]


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
    target = output_target("snapshot", "-o", str(output), root) if output else None
    text = dumps_map(take_snapshot(root, where, anchors=anchors, tools=tools, merge=merge, progress=progress,
                                   use_cache=use_cache))
    if target is None:
        return Answer(0, None, text, encoded=text)
    try:
        atomic_write(target, (text + "\n").encode("utf-8"))
    except OSError as exc:
        raise os_failure(f"priors snapshot: -o {output}: {exc.strerror or exc}", exc) from None
    return Answer(0, None, "")
