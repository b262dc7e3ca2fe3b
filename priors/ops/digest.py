"""`priors hash`: the sha12 the keeper uses for scopes, of a text, a file or raw bytes. A module of
its own: hashing a text loads neither the ledger's code nor the snapshot's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from priors.core.canonical import normalize, sha12
from priors.core.errors import UsageError
from priors.core.vocabulary import MAX_STREAM_BYTES
from priors.snapshot.hashing import digest_stream, read_or_stream
from priors.store.files import check_stdin, iter_chunks, open_regular


def hash_text(text: str) -> str:
    """The sha12 of a text, whitespace runs collapsed and trimmed."""
    return sha12(normalize(text))


def hash_stdin() -> str:
    """The sha12 of standard input's bytes as they are: a pipe may be endless, so it is hashed as a
    stream, up to a limit."""
    check_stdin("hash --stdin-raw")
    try:
        fd = os.dup(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):  # (a caller's in-memory stand-in for stdin has no descriptor)
        raise UsageError("priors hash --stdin-raw: standard input is not a file or pipe — give it one, or use "
                         "--raw FILE") from None
    chunks = iter_chunks(fd, MAX_STREAM_BYTES, "standard input")
    return digest_stream(chunks, "raw", 0)[0]


def hash_file(name: str, raw: bool) -> str:
    """The sha12 of a regular file (a FIFO would block, /dev/zero never ends), streamed: any size,
    little memory. `raw`: its bytes exactly; else as text, normalized — a Python, YAML or Makefile
    keeping its lines' relative indentation, as the snapshot hashes it (every other file as the
    reference keeper does)."""
    fd = open_regular(Path(name))
    if fd is None:
        raise UsageError(f"priors hash: {name}: no such file")
    return read_or_stream(fd, "raw" if raw else "text", name)[0]
