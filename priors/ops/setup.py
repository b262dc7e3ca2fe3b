"""Setting a target up and the small verbs around it: `init` (`.priors/`, and with `--git` the
merge driver), `render` (PRIORS.md from the ledger) and `hash` (the sha12 the keeper uses for
scopes, of a file, a text or raw bytes).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from priors.core.canonical import normalize, sha12
from priors.core.errors import UsageError
from priors.core.vocabulary import MAX_STREAM_BYTES
from priors.snapshot.hashing import digest_stream
from priors.snapshot.scan import read_or_stream
from priors.store.files import check_stdin, iter_chunks, open_regular
from priors.store.git import register_git, require_git
from priors.store.ledger import ensure_dirs, first_files, load_ledger, render
from priors.store.lock import Lock
from priors.store.paths import Paths, require_init

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List


def init(paths: Paths, git: bool) -> List[str]:
    """Create `.priors/` (nothing existing is touched) and, with `git`, register the merge driver.
    Returns the lines to print."""
    if git:
        require_git(paths.root)
    existed = paths.ledger.is_file()
    ensure_dirs(paths)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        first_files(paths)
        render(paths, loaded.state, loaded.mark, (), loaded.mark)
    out = [f"priors: already set up at {paths.dir} — nothing to do" if existed
           else f"priors: set up {paths.dir} — commit it with your repo"]
    if git:
        out += [f"priors: merge driver registered ({what})" for what in register_git(paths.root)]
    return out


def render_all(paths: Paths) -> None:
    """Rewrite PRIORS.md from the ledger, under the writer lock."""
    require_init(paths)
    with Lock(paths):
        render(paths)


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
