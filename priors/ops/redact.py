"""`priors redact`: remove a prior's content from everything under `.priors/` for good — the one
rewrite of the ledger (a tombstone keeps the content's hash), then the copies scrubbed: the fold
cache dropped, run staging and reflection packets cleaned, PRIORS.md rewritten.
"""

from __future__ import annotations

import os

from priors.core.canonical import JSONError, dumps, loads
from priors.core.errors import UsageError
from priors.core.fold import apply
from priors.core.human import (
    check_redactable,
    fold_redaction,
    joined,
    lines_naming,
    redact_event,
    redact_pieces,
    redact_spans,
    scrub,
)
from priors.store import fold_cache as cache
from priors.store.files import aftercare, atomic_write, iter_files, open_regular, read_bytes, remove_tree
from priors.store.ledger import load_ledger, render, rewrite_ledger
from priors.store.ledger_digest import scan_lines
from priors.store.lock import Lock, remove_stray_temps
from priors.store.paths import Paths, require_init
from priors.store.reflection import scrub_reflections
from priors.store.rendered import read_mark
from priors.store.rendered import write as write_rendered
from priors.store.session import all_sessions, write_session
from priors.store.signing import sign_lines
from priors.store.traces import scrub_traces

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List


def redact(paths: Paths, pid: str, reason: str) -> str:
    """Redact `pid` with the person's `reason` (it stays in the ledger); returns the line to print."""
    if not reason:
        raise UsageError("priors redact: --because TEXT is required (it stays in the ledger)")
    require_init(paths)
    with Lock(paths):
        # where the file may stay open while it is replaced, the ledger is read a block at a time below and
        # never held whole (58 MB at 100k priors); Windows cannot replace a file that is open: bytes there
        loaded = load_ledger(paths, want_data=not cache.KEEP_OPEN)
        st = loaded.state
        done = st.priors.get(pid)
        if done is not None and done.redacted:  # a retry — maybe of a redact killed while it scrubbed
            _finish_scrub(paths, pid, done.rec.get("content_hash"))
        check_redactable(st, pid)
        event = redact_event(pid, str(reason))
        lines = loaded.lines + (0 if loaded.ends_with_newline else 1)  # lines in the file, the last one included
        blank_free = loaded.length > 0 and st.records == lines  # one record per line: no line is blank
        fd = open_regular(paths.ledger, "the ledger") if blank_free and loaded.data is None else None
        try:
            if fd is not None and os.fstat(fd).st_size != loaded.length:
                os.close(fd)
                fd = None
            if fd is None and loaded.data is None:  # blank lines to drop (or a ledger that moved): the bytes, as folded
                loaded = load_ledger(paths)
                st = loaded.state
            data = loaded.data
            size = loaded.length

            def ledger_before() -> bytes:  # a person's signature covers the prior it redacts, as the ledger holds it
                return data if data is not None else (read_bytes(paths.ledger) or b"")[:size]

            # signed (when the repository asks) before a byte is rewritten
            sign_lines(paths.root, [event], ledger_before)
            if fd is not None:
                hits = scan_lines(fd, size, lambda block: lines_naming(block, pid))
                pieces, content_hash, named = redact_spans(hits, size, loaded.ends_with_newline, pid, str(reason), event)
                measured = cache.measure_from(fd, size, pieces, lines + 1)  # every line kept, one added
            else:
                data = data or b""
                pieces, content_hash, named = redact_pieces(data, pid, str(reason), blank_free, event)
                measured = cache.measure(data, pieces, lines + 1 if blank_free else None)
            shown = read_mark(paths.dir)  # which ledger PRIORS.md shows: cache/ is about to go
            claim = st.priors[pid].record().get("claim")  # traces quoting it go too
            rewrite_ledger(paths, pieces, size)  # kept spans copied from the file, not from memory
            # The ledger is redacted: what follows scrubs the copies, and none of it may turn the answer
            # into a failure — a step that fails is a loud warning, and the next writer retries it.
            _scrub_copies(paths, pid, content_hash, claim)
            # the fold of the rewritten ledger, from the fold of the old one: only this prior's state moves
            derived = fold_redaction(st, pid, named)
            if not derived:
                st = cache.fresh_fold(joined(data if data is not None else ledger_before(), pieces))[0]
            apply(st, event)
            # the snapshot points at ledger lines, so it holds no claim; a derived state's records still
            # point into the old ledger, and every offset is carried over to where its line moved
            after = aftercare("writing the fold cache", cache.store, paths.dir, st, measured,
                              pieces if derived else None)
        finally:
            if fd is not None:
                os.close(fd)
        aftercare("rendering .priors/PRIORS.md (it may still show the redacted claim)",
                  write_rendered, paths, st, loaded.mark, {pid: True}, after, old=shown)
    return (f"{pid} redacted — its content is gone from .priors/ (a tombstone keeps its hash); "
            "git history still holds it: rewrite history if it must go")


def _scrub_copies(paths: Paths, pid: str, content_hash: Any, claim: Any = None) -> None:
    """Scrub every copy of a redacted prior's content under .priors/: the cache (no cache file may
    keep what was removed — the coding sessions' records, which hold ids and ledger positions only,
    are written back, so a session still scores what else it was given), run staging, reflection
    packets, the traces that quote it (`claim`: its text, while the ledger still had it), stray temp
    files. Each step is aftercare (a failure is a loud warning) and idempotent: a redact and its
    retry both run it."""
    sessions = all_sessions(paths)  # ids and ledger positions only: no content to scrub, and scores need them
    aftercare("removing .priors/cache/ (it may still hold the redacted content)",
              remove_tree, paths.dir / "cache", aside=True)
    aftercare("keeping the coding sessions' records in .priors/cache/sessions/", _put_back, paths, sessions)
    aftercare("scrubbing run staging under .priors/runs/ (it may still hold the redacted content)",
              _scrub_runs, paths, pid, content_hash if isinstance(content_hash, str) else "")
    aftercare("scrubbing .priors/reflection/ (it may still hold the redacted content)", scrub_reflections, paths, pid)
    aftercare("scrubbing .priors/traces/ (a trace may quote the redacted prior)", scrub_traces, paths, pid, claim)
    aftercare("removing temporary files", remove_stray_temps, paths)


def _put_back(paths: Paths, sessions: List[Dict[str, Any]]) -> None:
    for rec in sessions:
        write_session(paths, rec)


def _finish_scrub(paths: Paths, pid: str, content_hash: Any) -> None:
    """A redact killed after the ledger was rewritten left the claim in the copies, and its retry is
    refused ALREADY_REDACTED: scrub them again and write PRIORS.md whole before refusing."""
    _scrub_copies(paths, pid, content_hash)
    aftercare("rendering .priors/PRIORS.md (it may still show the redacted claim)", render, paths)


def _scrub_runs(paths: Paths, pid: str, content_hash: str) -> None:
    """Staging that names the prior, or holds its content, rewritten without it. A `runs` that is a
    symlink is left alone: the files it leads to are not the keeper's to rewrite."""
    if paths.runs.is_symlink() or not paths.runs.is_dir():
        return
    for path in iter_files(paths.runs):
        if path.suffix not in (".json", ".jsonl") or path.is_symlink():
            continue
        data = read_bytes(path) or b""
        rows = data.split(b"\n") if path.suffix == ".jsonl" else [data]
        out: List[str] = []
        changed = False
        for row in rows:
            if not row.strip():
                continue
            try:
                obj = loads(row.decode("utf-8"))
            except (UnicodeDecodeError, JSONError):
                if pid.encode() in row:
                    changed = True
                    continue
                out.append(row.decode("utf-8", "replace"))
                continue
            new = scrub(obj, pid, content_hash)
            changed = changed or new != obj
            out.append(dumps(new))
        if changed:
            atomic_write(path, "".join(s + "\n" for s in out).encode("utf-8"))
