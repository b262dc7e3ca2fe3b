"""The human's verbs and set-up: init, hash, render, decide, redact, status.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from priors.cli.args import BOOL, VALUE, Spec, parse
from priors.cli.inputs import Answer, emit, paths_of
from priors.core.canonical import dumps
from priors.core.errors import UsageError
from priors.store.files import aftercare, atomic_write, read_bytes, remove_tree
from priors.store.ledger import (
    ensure_dirs,
    first_files,
    load,
    load_ledger,
    open_runs,
    render,
)
from priors.store.lock import Lock
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List


# ------------------------------------------------------------------ init / hash / render


INIT = Spec("init", "priors init", {"--git": BOOL}, help="""usage: priors init [--git]

Create .priors/ (ledger, runs/, .gitignore) in the target root and render
.priors/PRIORS.md. Safe to run again: nothing existing is touched.
Commit .priors/ with your repository so every agent shares the history.

  --git   also register the ledger merge driver: `merge.priors` and
          `merge.priors-render` in the repo's git config, and .gitattributes
          lines so two branches' runs merge without id collisions and
          PRIORS.md never blocks a merge (see docs/ci.md)""")


def cmd_init(argv: List[str], ctx) -> int:
    a = parse(argv, INIT)
    paths = Paths(ctx.root)
    if a.has("--git"):
        from priors.store.git import require_git

        require_git(ctx.root)
    existed = paths.ledger.is_file()
    ensure_dirs(paths)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        first_files(paths)
        render(paths, loaded.state, loaded.mark, (), loaded.mark)
    if existed:
        ctx.print(f"priors: already set up at {paths.dir} — nothing to do")
    else:
        ctx.print(f"priors: set up {paths.dir} — commit it with your repo")
    if a.has("--git"):
        from priors.store.git import register_git

        for what in register_git(ctx.root):
            ctx.print(f"priors: merge driver registered ({what})")
    return 0


HASH = Spec("hash", "priors hash FILE | --text TEXT | --raw FILE | --stdin-raw",
            {"--text": VALUE, "--raw": VALUE, "--stdin-raw": BOOL}, max_pos=1, help="""usage: priors hash FILE | --text TEXT | --raw FILE | --stdin-raw

Print the sha12 (first 12 hex digits of SHA-256) the keeper uses for scopes.
  FILE          the file read as UTF-8 text, whitespace runs collapsed and trimmed
  --text TEXT   the given text, normalized the same way
  --raw FILE    the file's bytes exactly as they are
  --stdin-raw   standard input's bytes exactly as they are""")


def cmd_hash(argv: List[str], ctx) -> int:
    from priors.core.canonical import normalize, sha12
    from priors.core.vocabulary import MAX_STREAM_BYTES
    from priors.snapshot.hashing import digest_stream
    from priors.store.files import check_stdin, iter_chunks, open_regular

    a = parse(argv, HASH)
    modes = len(a.pos) + sum(1 for f in ("--text", "--raw", "--stdin-raw") if a.has(f))
    if modes != 1:
        raise UsageError("priors hash: give exactly one of FILE, --text, --raw FILE, --stdin-raw")
    if a.has("--text"):
        ctx.print(sha12(normalize(str(a.get("text")))))
    elif a.has("--stdin-raw"):  # a pipe may be endless: it is hashed as a stream, up to a limit
        check_stdin("hash --stdin-raw")
        chunks = iter_chunks(os.dup(sys.stdin.fileno()), MAX_STREAM_BYTES, "standard input")
        ctx.print(digest_stream(chunks, "raw", 0)[0])
    else:  # a regular file only (a FIFO would block, /dev/zero never ends), streamed: any size, little memory
        name = str(a.get("raw")) if a.has("--raw") else a.pos[0]
        fd = open_regular(Path(name))
        if fd is None:
            raise UsageError(f"priors hash: {name}: no such file")
        from priors.snapshot.scan import read_or_stream

        ctx.print(read_or_stream(fd, "raw" if a.has("--raw") else "text")[0])
    return 0


RENDER = Spec("render", "priors render", help="""usage: priors render

Rewrite .priors/PRIORS.md — a table of every prior for people to read — from
the ledger. Every writing verb does this already; run it after a git merge.""")


def cmd_render(argv: List[str], ctx) -> int:
    parse(argv, RENDER)
    paths = paths_of(ctx)
    with Lock(paths):
        render(paths)
    ctx.print("rendered .priors/PRIORS.md")
    return 0


# ------------------------------------------------------------------ decide / redact


DECIDE = Spec("decide", "priors decide ID VERDICT [--because TEXT] | priors decide [--open [--ns NS] [PATH…]]",
              {"--because": VALUE, "--open": BOOL, "--ns": VALUE}, max_pos=None,
              help="""usage: priors decide ID VERDICT [--because TEXT]
       priors decide [--open [--ns NS] [PATH…]]      (on a terminal: one call at a time)

A human verdict — it sticks. Only run this on a person's explicit instruction.
  accepted   make the prior binding (a lesson or preference to follow)
  wontfix    the finding stands but will not be fixed; re-raising it is refused
  obsolete   retire the prior
  reopen     reopen a settled prior (needs --because)
  keep       keep a challenged or due-for-review prior (binding)
Decisions happen between runs. Accepting (or keeping) a lesson whose candidate
named `supersedes: P-…` retires that lesson in the same write.

With no ID, on a terminal, walks through what waits for you — challenges,
proposed retirements, reversals, losing lessons, lessons awaiting review,
review nudges — one at a time: claim, scope, severity, evidence, origin.
Answer with one key (a accepted, w wontfix, o obsolete, r reopen, k keep;
s skips, q stops), then an optional reason (required for reopen). Each answer
is written at once, exactly as `priors decide ID VERDICT --because …` writes it.
  --open       then walk the open findings too
  --ns NS      open findings of namespace NS only
  PATH…        open findings whose scope lies under these paths only
Not on a terminal, `priors status --calls` lists the same calls with commands.""")


def cmd_decide(argv: List[str], ctx) -> int:
    a = parse(argv, DECIDE)
    if a.has("--open") or a.has("--ns") or not a.pos:
        if a.has("--because"):
            raise UsageError("priors decide: --because goes with ID VERDICT; the walk asks for each reason\n"
                             f"usage: {DECIDE.usage}")
        if a.has("--ns") and not a.has("--open"):
            raise UsageError(f"priors decide: --ns goes with --open\nusage: {DECIDE.usage}")
        if a.get("ns") == "":
            raise UsageError("priors decide: --ns needs a non-empty value")
        if a.pos and not a.has("--open"):
            raise UsageError(f"priors decide: wrong number of arguments\nusage: {DECIDE.usage}")
        from priors.cli.desk_walk import walk

        return walk(ctx, bool(a.get("open")), a.get("ns"), a.pos)
    if len(a.pos) != 2:
        raise UsageError(f"priors decide: wrong number of arguments\nusage: {DECIDE.usage}")
    pid, verdict = a.pos
    reason = a.get("because")
    from priors.cli.decision import write_decision

    for line in write_decision(ctx, pid, verdict, None if reason is None else str(reason)):
        ctx.print(line)
    return 0


REDACT = Spec("redact", "priors redact ID --because TEXT", {"--because": VALUE}, min_pos=1, max_pos=1,
              help="""usage: priors redact ID --because TEXT

Remove a prior's content from everything under .priors/ (the ledger keeps a
tombstone with a content hash; reasons and calls about it are scrubbed).
Git history still holds the old content — rewrite it too if it must go.""")


def cmd_redact(argv: List[str], ctx) -> int:
    from priors.core.fold import apply
    from priors.core.human import (
        check_redactable,
        fold_redaction,
        joined,
        redact_event,
        redact_pieces,
    )
    from priors.store import fold_cache as cache
    from priors.store import rendered as rendered

    a = parse(argv, REDACT)
    pid = a.pos[0]
    reason = a.get("because")
    if not reason:
        raise UsageError("priors redact: --because TEXT is required (it stays in the ledger)")
    paths = paths_of(ctx)
    with Lock(paths):
        loaded = load_ledger(paths)
        st = loaded.state
        check_redactable(st, pid)
        data = loaded.data or b""
        lines = loaded.lines + (0 if loaded.ends_with_newline else 1)  # lines in the file, the last one included
        blank_free = bool(data) and st.records == lines  # one record per line: no line is blank
        pieces, content_hash, named = redact_pieces(data, pid, str(reason), blank_free)
        measured = cache.measure(data, pieces, lines + 1 if blank_free else None)  # every line kept, one added
        shown = rendered.read_mark(paths.dir)  # which ledger PRIORS.md shows: cache/ is about to go
        atomic_write(paths.ledger, pieces, size=len(data))  # kept spans copied from the file, not from memory
        # The ledger is redacted: what follows scrubs the copies, and none of it may turn the answer
        # into a failure — a step that fails is a loud warning, and the next writer retries it.
        aftercare("removing .priors/cache/ (it may still hold the redacted content)",
                  remove_tree, paths.dir / "cache", aside=True)  # no cache file may keep what was removed
        aftercare("scrubbing run staging under .priors/runs/ (it may still hold the redacted content)",
                  _scrub_runs, paths, pid, content_hash or "")
        from priors.cli.lessons_verbs import scrub_reflections

        aftercare("scrubbing .priors/reflection/ (it may still hold the redacted content)", scrub_reflections, paths, pid)
        from priors.store.lock import remove_stray_temps

        aftercare("removing temporary files", remove_stray_temps, paths)
        # the fold of the rewritten ledger, from the fold of the old one: only this prior's state moves
        derived = fold_redaction(st, pid, named)
        if not derived:
            st = cache.fresh_fold(joined(data, pieces))[0]
        apply(st, redact_event(pid, str(reason)))
        # the snapshot points at ledger lines, so it holds no claim; a derived state's records still
        # point into the old ledger, and every offset is carried over to where its line moved
        after = aftercare("writing the fold cache", cache.store, paths.dir, st, measured,
                          pieces if derived else None)
        aftercare("rendering .priors/PRIORS.md (it may still show the redacted claim)",
                  rendered.write, paths, st, loaded.mark, {pid: True}, after, old=shown)
    ctx.print(f"{pid} redacted — its content is gone from .priors/ (a tombstone keeps its hash); "
              "git history still holds it: rewrite history if it must go")
    return 0


def _scrub_runs(paths: Paths, pid: str, content_hash: str) -> None:
    from priors.core.canonical import JSONError, loads
    from priors.core.human import scrub
    from priors.store.files import iter_files

    if not paths.runs.is_dir():
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


# ------------------------------------------------------------------ status


STATUS = Spec("status", "priors status [--calls] [--json]", {"--calls": BOOL, "--json": BOOL},
              help="""usage: priors status [--calls] [--json]

One line per namespace, counting its priors:
  open            findings still standing (open or stale)
  fixed           findings a run reported fixed
  decided by you  priors you accepted or marked wontfix (they bind every run)
  lessons locked  lessons in force: run-start priors injected into every run
  retired         priors you marked obsolete (only when there are any)
  resting         priors whose scope was missing 5 runs in a row (only when
                  there are any; they wake if the scope returns)
An open run is named with the command that ends it. --calls lists what needs
your call, each with the exact `priors decide` command to answer it, or says
that nothing waits for you.
Once runs are scored, each scored lesson gets a line with its score (see
`priors lessons`), and a lesson that keeps losing becomes one of your calls.
--json prints one canonical JSON object: {"namespaces": [{"ns", "open", "fixed",
"settled", "learned", "retired", "resting"}], "open_runs": [...]}, and with
--calls "calls": each waiting call with the `priors decide` commands that answer it.""")


def cmd_status(argv: List[str], ctx) -> int:
    a = parse(argv, STATUS)
    return emit(ctx, a, status(a, ctx))


def status(a, ctx) -> Answer:
    """Where each namespace stands; the JSON form lists the calls as the desk holds them (with commands)."""
    from priors.core.views import BUCKETS, namespaces, status_text, tally

    paths = Paths(ctx.root)
    _, st = load(paths, want_data=False)
    running = open_runs(paths, st)
    calls = bool(a.get("calls"))
    if not a.get("json"):
        from priors.cli.lessons_verbs import status_hook

        return Answer(0, None, status_text(st, calls, status_hook(paths, st), running))
    counts = tally(st)
    rows = [dict(counts.get(ns) or dict.fromkeys(BUCKETS, 0), ns=ns) for ns in namespaces(st, list(counts))]
    obj = {"namespaces": rows, "open_runs": list(running)}
    if calls:
        from priors.cli.desk_walk import lesson_calls
        from priors.core.desk import commands, waiting

        low, held = lesson_calls(paths, st)
        obj["calls"] = [dict(ask, commands=commands(ask)) for ask in waiting(st, low, held)]
    return Answer(0, obj)
