"""The core verbs: parse arguments, load, call the pure core, write, print.

Each verb takes the writer lock before it reads anything it will write back.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from priors.args import BOOL, MULTI, REST, VALUE, Spec, parse, required
from priors.canonical import dumps, dumps_object
from priors.errors import Refusal, UsageError
from priors.store import Lock, Paths, atomic_write, read_bytes, remove_tree, require_init

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence, Tuple

RUN_ID = re.compile(r"^run-\d{3,}$")


# ------------------------------------------------------------------ shared shell helpers


def check_run_id(run: Optional[str], verb: str) -> str:
    if run is None:
        raise UsageError(f"priors {verb}: --run RUN is required")
    if not RUN_ID.match(run):
        raise UsageError(f"priors {verb}: bad run id {run!r} — run ids must match ^run-\\d{{3,}}$ (e.g. run-001)")
    return run


def load(paths: Paths, want_data: bool = True):
    """(ledger bytes, folded state) — the one way every verb reads the ledger.

    Goes through the fold cache (priors.cache), which is exact or ignored. Read-only callers pass
    want_data=False and get None for the bytes, sparing the memory of a large ledger.
    """
    loaded = load_ledger(paths, want_data)
    return loaded.data, loaded.state


def load_ledger(paths: Paths, want_data: bool = True):
    """The folded ledger with its length and digest (priors.cache.Loaded): what a writing verb needs."""
    from priors.cache import load as cached_load
    from priors.store import check_inside

    check_inside(paths.ledger)
    return cached_load(paths.dir, paths.ledger, want_data)


def append_ledger(paths: Paths, data: Optional[bytes], records: List[Dict[str, Any]],
                  loaded=None) -> Optional[Tuple[int, bytes]]:
    """Old bytes plus new canonical lines, written atomically.

    With `data` None the old bytes are copied from the file the `loaded` fold came from (they are
    never read into memory). Given `loaded`, returns the new ledger's (length, sha256)."""
    body = "".join(dumps(r) + "\n" for r in records).encode("utf-8")
    if data is None:
        if loaded is None:
            raise ValueError("append_ledger needs the old bytes or the loaded ledger")
        sep = b"\n" if loaded.length and not loaded.ends_with_newline else b""
        new = sep + body
        atomic_write(paths.ledger, [new], keep=loaded.length)
    else:
        new = (b"\n" if data and not data.endswith(b"\n") else b"") + body
        atomic_write(paths.ledger, [data, new])
    return None if loaded is None else loaded.mark_after(new)


def render(paths: Paths, state=None, base: Optional[Tuple[int, bytes]] = None,
           appended: Sequence[Dict[str, Any]] = (), after: Optional[Tuple[int, bytes]] = None,
           shown: Optional[Dict[str, str]] = None) -> None:
    """Write PRIORS.md for `state`, the fold of ledger `after` = ledger `base` + `appended`.

    With both marks known only the rows that can have changed are rendered (priors.rendered);
    `shown` (id → status column before the append) drops those whose column did not move.
    Without a state the ledger is loaded: it is `after` (and `base` too, unless given)."""
    from priors.rendered import named_in, write
    from priors.views import display_status

    if state is None:
        loaded = load_ledger(paths, want_data=False)
        state, after = loaded.state, loaded.mark
        base = after if base is None else base
    named = named_in(appended)
    if shown:
        priors = state.priors
        named = {pid: whole for pid, whole in named.items()
                 if whole or pid not in priors or shown.get(pid) != display_status(priors[pid])}
    write(paths, state, base, named, after)


def read_jsonl(path: Path) -> List[Any]:
    """Staging lines; an unparseable line is kept as None so commit can name it malformed."""
    from priors.canonical import JSONError, loads

    data = read_bytes(path)
    out: List[Any] = []
    if not data:
        return out
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            out.append(loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, JSONError):
            out.append(None)
    return out


def write_jsonl(path: Path, items: List[Any]) -> None:
    atomic_write(path, "".join(dumps(x) + "\n" for x in items).encode("utf-8"))


def read_run(paths: Paths, run: str):
    from priors.canonical import JSONError, loads
    from priors.protocol import RunFiles

    from priors.store import check_inside

    rdir = paths.run_dir(run)
    check_inside(rdir / "relevant.json")  # staging read through a symlink could be anyone's data
    rel_bytes = read_bytes(rdir / "relevant.json")
    relevant = None
    if rel_bytes is not None:
        try:
            relevant = loads(rel_bytes.decode("utf-8"))
        except (UnicodeDecodeError, JSONError):
            raise UsageError(f"priors: {rdir / 'relevant.json'} is damaged; `priors abort --run {run}` and reopen") from None
        if not isinstance(relevant, dict):
            raise UsageError(f"priors: {rdir / 'relevant.json'} is not an object; `priors abort --run {run}` and reopen")
    return RunFiles(run, relevant, read_jsonl(rdir / "dispositions.jsonl"), read_jsonl(rdir / "staged.jsonl"),
                    read_jsonl(rdir / "escalations.jsonl"))


def open_runs(paths: Paths, state) -> List[str]:
    from priors.store import list_run_dirs

    return [name for name in list_run_dirs(paths)
            if RUN_ID.match(name) and name not in state.commits and (paths.run_dir(name) / "relevant.json").is_file()]


def read_input(name: str, what: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    data = read_bytes(Path(name))
    if data is None:
        raise UsageError(f"priors: {what} {name}: no such file")
    return data


def parse_json_input(data: bytes, name: str, what: str) -> Any:
    from priors.canonical import JSONError, loads

    try:
        return loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"priors: {what} {name}: not UTF-8") from None
    except JSONError as exc:
        raise UsageError(f"priors: {what} {name}: not valid JSON ({exc})") from None


def _paths(ctx) -> Paths:
    paths = Paths(ctx.root)
    require_init(paths)
    return paths


def ensure_dirs(paths: Paths) -> None:
    """Create .priors/ and runs/ (what init and a first `relevant` need)."""
    for d in (paths.dir, paths.runs):
        if d.is_symlink() or (d.exists() and not d.is_dir()):
            raise UsageError(f"priors: {d} exists and is not a directory")
        try:
            d.mkdir(exist_ok=True)
        except OSError as exc:
            raise UsageError(f"priors: cannot create {d}: {exc.strerror or exc}") from None


# ------------------------------------------------------------------ init / hash / render


INIT = Spec("init", "priors init", {"--git": BOOL}, help="""usage: priors init [--git]

Create .priors/ (ledger, runs/, .gitignore) in the target root and render
.priors/PRIORS.md. Safe to run again: nothing existing is touched.
Commit .priors/ with your repository so every agent shares the history.

  --git   also register the ledger merge driver: `merge.priors` and
          `merge.priors-render` in the repo's git config, and .gitattributes
          lines so two branches' runs merge without id collisions and
          PRIORS.md never blocks a merge (see docs/ci.md)""")


def _first_files(paths: Paths) -> None:
    from priors.store import GITIGNORE_LINES

    if not paths.ledger.exists():
        atomic_write(paths.ledger, b"")
    gi = paths.dir / ".gitignore"
    have = (read_bytes(gi) or b"").decode("utf-8", "replace").splitlines()
    want = [ln for ln in GITIGNORE_LINES if ln not in have]
    if want:
        atomic_write(gi, ("\n".join([*have, *want]) + "\n").encode("utf-8"))


def cmd_init(argv: List[str], ctx) -> int:
    a = parse(argv, INIT)
    paths = Paths(ctx.root)
    if a.has("--git"):
        from priors.merge import require_git

        require_git(ctx.root)
    ensure_dirs(paths)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        _first_files(paths)
        render(paths, loaded.state, loaded.mark, (), loaded.mark)
    ctx.print("priors: ready (.priors/ created — commit it with your repo)")
    if a.has("--git"):
        from priors.merge import register_git

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
    from priors.canonical import decode_text, normalize, sha12, sha12_bytes

    a = parse(argv, HASH)
    modes = len(a.pos) + sum(1 for f in ("--text", "--raw", "--stdin-raw") if a.has(f))
    if modes != 1:
        raise UsageError("priors hash: give exactly one of FILE, --text, --raw FILE, --stdin-raw")
    if a.has("--text"):
        ctx.print(sha12(normalize(str(a.get("text")))))
    elif a.has("--stdin-raw"):
        ctx.print(sha12_bytes(sys.stdin.buffer.read()))
    else:
        name = str(a.get("raw")) if a.has("--raw") else a.pos[0]
        data = read_bytes(Path(name))
        if data is None:
            raise UsageError(f"priors hash: {name}: no such file")
        ctx.print(sha12_bytes(data) if a.has("--raw") else sha12(normalize(decode_text(data))))
    return 0


RENDER = Spec("render", "priors render", help="""usage: priors render

Rewrite .priors/PRIORS.md — a table of every prior for people to read — from
the ledger. Every writing verb does this already; run it after a git merge.""")


def cmd_render(argv: List[str], ctx) -> int:
    parse(argv, RENDER)
    paths = _paths(ctx)
    with Lock(paths):
        render(paths)
    ctx.print("rendered .priors/PRIORS.md")
    return 0


# ------------------------------------------------------------------ relevant


RELEVANT = Spec("relevant", "priors relevant --ns NS [--scopes FILE|-] [--snapshot [PATH ...]] [--run RUN]"
                " [--max-inject N] [--max-chars C] [--query TEXT]",
                {"--ns": VALUE, "--scopes": VALUE, "--run": VALUE, "--snapshot": REST,
                 "--max-inject": VALUE, "--max-chars": VALUE, "--query": VALUE},
                help="""usage: priors relevant --ns NS [--scopes FILE|-] [--snapshot [PATH ...]] [--run RUN]
                       [--max-inject N] [--max-chars C] [--query TEXT]

Open a run and print, as one JSON line, what applies to it:
  inject   instructions to follow this run (lessons, preferences, decisions)
  verify   old findings to re-check — each needs a disposition before anything new
  nudges   priors asking to be re-confirmed by a human
  floors   review depths below which new findings are refused
  settled  how many binding decisions apply; archived: resting priors not listed

  --ns NS            the namespace (one per job, e.g. code-review)
  --scopes FILE|-    JSON object {scope_ref: hash} — the run's trusted snapshot
  --snapshot [PATH]  take the snapshot now (see `priors snapshot`)
  --run RUN          the run id (default: the next free one, e.g. run-004)
  --max-inject N     inject at most N lessons (default: .priors/config.json, else all)
  --max-chars C      inject at most C characters of lesson text (same default)
  --query TEXT       rank lessons by word overlap with TEXT: binding first, then
                     overlap, outcome score, id; what did not fit is in inject_omitted

Only one run may be open at a time. Finish it with `priors commit` or `priors abort`.""")


def _scopes_from(a, ctx) -> Dict[str, str]:
    if a.has("--scopes") and a.has("--snapshot"):
        raise UsageError("priors relevant: give --scopes or --snapshot, not both")
    if a.has("--snapshot"):
        from priors.snapshot import _tty_progress, take_snapshot

        return take_snapshot(ctx.root, list(a.get("snapshot") or []) or None, progress=_tty_progress(ctx.err))
    name = a.get("scopes")
    if name is None:
        return {}
    scopes = parse_json_input(read_input(str(name), "scopes file"), str(name), "scopes file")
    if not isinstance(scopes, dict) or not all(isinstance(v, str) for v in scopes.values()):
        raise UsageError(f"priors relevant: scopes file {name} must be a JSON object mapping scope refs to hash strings")
    return scopes


def cmd_relevant(argv: List[str], ctx) -> int:
    from priors.fold import next_run_id
    from priors.protocol import select
    from priors.store import list_run_dirs

    a = parse(argv, RELEVANT)
    ns = required(a, RELEVANT, "ns", "NS")
    run = a.get("run")
    if run is not None:
        check_run_id(str(run), "relevant")
    paths = Paths(ctx.root)
    scopes = _scopes_from(a, ctx)
    from priors.lessons_cmd import budget_from, relevant_hook  # lessons loop: budgets, ranking, review holds

    budget = budget_from(a, paths)
    fresh = not paths.dir.is_dir()
    if fresh:  # the first run quietly starts the ledger
        ensure_dirs(paths)
    with Lock(paths):
        _, st = load(paths, want_data=False)
        if fresh:
            _first_files(paths)
            render(paths, st)
        active = open_runs(paths, st)
        if active:
            raise Refusal("ACTIVE_RUN_EXISTS", run=active[0],
                          hint=f"finish it first: `priors commit --run {active[0]}` or `priors abort --run {active[0]}`")
        if run is None:
            run = next_run_id(st, list_run_dirs(paths))
        elif run in st.commits or paths.run_dir(str(run)).exists():
            raise Refusal("RUN_EXISTS", run=run)
        out = relevant_hook(budget, paths, st, select(st, str(ns), scopes, str(run)))
        from priors.store import make_dir

        rdir = paths.run_dir(str(run))
        make_dir(rdir)
        parts = {k: dumps(v) for k, v in out.items()}  # the verify list can be 10k items: encode it once
        printed = dumps_object(parts)
        parts["scopes"] = dumps(scopes)
        atomic_write(rdir / "relevant.json", (dumps_object(parts) + "\n").encode("utf-8"))
    ctx.print(printed)
    return 0


# ------------------------------------------------------------------ disposition


DISPOSITION = Spec("disposition", "priors disposition ID VERDICT [ID VERDICT ...] --run RUN",
                   {"--run": VALUE}, min_pos=2, max_pos=None, help="""usage: priors disposition ID VERDICT [ID VERDICT ...] --run RUN

Record your verdict on an old finding the run had to verify:
  fixed              the issue is gone
  still-open         unchanged code, issue still there (carried)
  reaffirmed         the code changed and the issue is still there
  stale              the code changed; the finding no longer fits as written
  challenged         an injected lesson failed in practice (send it to the human)
  obsolete-proposed  suggest the human retire it

Several ID VERDICT pairs may be given; each is judged as if alone, in order.
Human verdicts (accepted, wontfix, obsolete, reopen, keep) belong to `priors decide`.""")


def _check_agent_verdict(verdict: str) -> None:
    from priors.grammar import AGENT_VERDICTS, HUMAN_VERDICTS

    if verdict in HUMAN_VERDICTS:
        raise UsageError(f"priors disposition: {verdict!r} is a human verdict — only `priors decide` records it")
    if verdict not in AGENT_VERDICTS:
        raise UsageError(f"priors disposition: unknown verdict {verdict!r} — one of {', '.join(AGENT_VERDICTS)}")


def cmd_disposition(argv: List[str], ctx) -> int:
    from priors.protocol import judge_disposition

    a = parse(argv, DISPOSITION)
    if len(a.pos) % 2:
        raise UsageError("priors disposition: give ID VERDICT pairs\nusage: " + DISPOSITION.usage)
    pairs = [(a.pos[i], a.pos[i + 1]) for i in range(0, len(a.pos), 2)]
    for _, verdict in pairs:
        _check_agent_verdict(verdict)
    run = check_run_id(a.get("run"), "disposition")
    paths = _paths(ctx)
    batch = len(pairs) > 1
    with Lock(paths):
        _, st = load(paths, want_data=False)
        rf = read_run(paths, run)
        results: List[Tuple[bool, str]] = []
        added = 0
        for pid, verdict in pairs:
            try:
                event = judge_disposition(st, rf, pid, verdict)
            except Refusal as r:
                if not batch:
                    raise
                body = r.payload()
                body["item"] = pid
                results.append((False, dumps(body)))
                continue
            rf.dispositions.append(event)
            added += 1
            results.append((True, f"{pid} → {verdict}"))
        if added:
            write_jsonl(paths.run_dir(run) / "dispositions.jsonl", rf.dispositions)
    for _, text in results:
        ctx.print(text)
    return 0 if all(ok for ok, _ in results) else 1


# ------------------------------------------------------------------ propose


PROPOSE = Spec("propose", "priors propose FILE [FILE ...] --run RUN --ns NS",
               {"--run": VALUE, "--ns": VALUE}, min_pos=1, max_pos=None, help="""usage: priors propose FILE [FILE ...] --run RUN --ns NS

Stage a new prior from a JSON candidate (FILE, or - for stdin):
  {"type": "conclusion", "claim": "…", "scope_ref": "src/app.py#Cart.total",
   "severity": "minor|major|gate", "direction": "…", "evidence": "…"}
Types: conclusion (a finding to re-check), behavioral (a tool lesson),
coverage (a review-depth floor), calibration (a repo-wide preference);
or give "facets" yourself. The keeper takes the scope's hash from the run's
snapshot and refuses duplicates, re-raises of human decisions, reversals
and findings below a coverage floor. Every verify item needs a disposition first.

A FILE may hold one candidate, a JSON array of them, or JSON lines; each is
judged as if proposed alone, in order, with one output line per item.""")


def _candidates(names: List[str]) -> List[Tuple[str, Any]]:
    from priors.canonical import JSONError, loads

    items: List[Tuple[str, Any]] = []
    for name in names:
        data = read_input(name, "candidate file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"priors propose: candidate file {name}: not UTF-8") from None
        try:
            obj = loads(text)
            many = obj if isinstance(obj, list) else [obj]
        except JSONError as exc:
            rows = [r for r in text.split("\n") if r.strip()]
            if len(rows) < 2:
                raise UsageError(f"priors propose: candidate file {name}: not valid JSON ({exc})") from None
            many = []
            for no, row in enumerate(rows, 1):
                try:
                    many.append(loads(row))
                except JSONError as err:
                    raise UsageError(f"priors propose: candidate file {name} line {no}: not valid JSON ({err})") from None
        if not many:
            raise UsageError(f"priors propose: candidate file {name} holds no candidate")
        label = name if len(many) == 1 else None
        for i, cand in enumerate(many, 1):
            items.append((label or f"{name}#{i}", cand))
    return items


def _propose_one(st, rf, raw: Any, ns: str, next_id: List[int]):
    """Judge one candidate exactly as the contract orders; returns the staged record."""
    from priors.fold import next_prior_id
    from priors.grammar import validate
    from priors.protocol import (check_run_for_propose, check_scope, escalation_known, find_conflict,
                                 prior_record, reversal_refusal)

    check_run_for_propose(st, rf, ns)
    cand = validate(raw)
    from priors.lessons import check_supersedes

    check_supersedes(st, raw.get("supersedes"), ns)  # lessons loop: a usage error like any bad field
    current = check_scope(rf, cand)
    from priors.secrets import guard

    guard(raw)  # the secret guard: before anything (a staged prior or a call's claim) can hold the text
    esc = find_conflict(st, rf, cand, current)
    if esc is not None:
        if not escalation_known(rf, esc):
            rf.escalations.append({k: v for k, v in esc.items() if v is not None})
        raise reversal_refusal(esc)
    pid = next_prior_id(next_id[0])
    next_id[0] += 1
    rec = prior_record(cand, pid, ns, rf.run, current)
    rf.staged.append(rec)
    return rec


def cmd_propose(argv: List[str], ctx) -> int:
    from priors.fold import prior_number

    a = parse(argv, PROPOSE)
    run = check_run_id(a.get("run"), "propose")
    ns = required(a, PROPOSE, "ns", "NS")
    items = _candidates(a.pos)
    batch = len(items) > 1
    if batch:
        from priors.grammar import validate

        for label, raw in items:
            try:
                validate(raw)
            except UsageError as exc:
                raise UsageError(f"{exc} (in {label}; nothing was staged)") from None
    paths = _paths(ctx)
    with Lock(paths):
        _, st = load(paths, want_data=False)
        rf = read_run(paths, run)
        before = (len(rf.staged), len(rf.escalations))
        biggest = max([st.max_prior] + [prior_number(r.get("id")) for r in rf.staged if isinstance(r, dict)])
        next_id = [biggest]
        results: List[Tuple[bool, str]] = []
        for label, raw in items:
            try:
                rec = _propose_one(st, rf, raw, str(ns), next_id)
            except Refusal as r:
                if not batch:
                    _save_staging(paths, rf, before)
                    raise
                body = r.payload()
                body["item"] = label
                results.append((False, dumps(body)))
                continue
            results.append((True, f"{rec['id']} staged (new)"))
        _save_staging(paths, rf, before)
    for _, text in results:
        ctx.print(text)
    return 0 if all(ok for ok, _ in results) else 1


def _save_staging(paths: Paths, rf, before: Tuple[int, int]) -> None:
    rdir = paths.run_dir(rf.run)
    if len(rf.staged) != before[0]:
        write_jsonl(rdir / "staged.jsonl", rf.staged)
    if len(rf.escalations) != before[1]:
        write_jsonl(rdir / "escalations.jsonl", rf.escalations)


# ------------------------------------------------------------------ commit / abort


COMMIT = Spec("commit", "priors commit --run RUN", {"--run": VALUE}, help="""usage: priors commit --run RUN

Seal the run: append its dispositions, the missing-scope marks, the new
priors and any calls for the human to the ledger in one atomic write, then
print the summary (fixed / carried / touched / your call / new).
Refused while any verify item with a present scope lacks a disposition.
Committing an already committed run prints the same summary and writes nothing.""")


def cmd_commit(argv: List[str], ctx) -> int:
    from priors.protocol import plan_commit

    a = parse(argv, COMMIT)
    run = check_run_id(a.get("run"), "commit")
    paths = _paths(ctx)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        st = loaded.state
        sealed = st.commits.get(run)
        if sealed is not None:
            remove_tree(paths.run_dir(run))
            summary = sealed.get("summary")
            ctx.print("\n".join(str(s) for s in summary) if isinstance(summary, list) else "")
            return 0
        rf = read_run(paths, run)
        if rf.relevant is None:
            raise Refusal("UNKNOWN_RUN", run=run)
        from priors.views import display_status

        shown = {pid: display_status(st.priors[pid]) for pid in rf.verify_items() if pid in st.priors}
        plan = plan_commit(st, rf)
        from priors.lessons_cmd import commit_extra  # lessons loop: what a budgeted run was shown, before the seal

        lines = plan.lines[:-1] + commit_extra(rf.relevant, run) + plan.lines[-1:]
        after = append_ledger(paths, None, lines, loaded)
        remove_tree(paths.run_dir(run))
        render(paths, st, loaded.mark, lines, after, shown)
    ctx.print("\n".join(plan.summary))
    return 0


ABORT = Spec("abort", "priors abort --run RUN", {"--run": VALUE}, help="""usage: priors abort --run RUN

Throw away an open run's staging (dispositions, proposals, escalations).
The ledger is not touched; open a fresh run with `priors relevant`.""")


def cmd_abort(argv: List[str], ctx) -> int:
    a = parse(argv, ABORT)
    run = check_run_id(a.get("run"), "abort")
    paths = _paths(ctx)
    with Lock(paths):
        _, st = load(paths, want_data=False)
        if run in st.commits:
            raise Refusal("RUN_COMMITTED", run=run, hint="a sealed run cannot be aborted")
        if not paths.run_dir(run).exists():
            raise Refusal("UNKNOWN_RUN", run=run)
        remove_tree(paths.run_dir(run))
    ctx.print(f"{run} aborted — uncommitted staging removed; the ledger was untouched")
    return 0


# ------------------------------------------------------------------ decide / redact


DECIDE = Spec("decide", "priors decide ID VERDICT [--because TEXT]", {"--because": VALUE}, min_pos=2, max_pos=2,
              help="""usage: priors decide ID VERDICT [--because TEXT]

A human verdict — it sticks. Only run this on a person's explicit instruction.
  accepted   make the prior binding (a lesson or preference to follow)
  wontfix    the finding stands but will not be fixed; re-raising it is refused
  obsolete   retire the prior
  reopen     reopen a settled prior (needs --because)
  keep       keep a challenged or due-for-review prior (binding)
Decisions happen between runs. Accepting (or keeping) a lesson whose candidate
named `supersedes: P-…` retires that lesson in the same write.""")


def cmd_decide(argv: List[str], ctx) -> int:
    from priors.grammar import AGENT_VERDICTS, HUMAN_VERDICTS
    from priors.human import decide_event

    a = parse(argv, DECIDE)
    pid, verdict = a.pos
    if verdict not in HUMAN_VERDICTS:
        extra = " (that is an agent verdict — see `priors disposition`)" if verdict in AGENT_VERDICTS else ""
        raise UsageError(f"priors decide: unknown verdict {verdict!r}{extra} — one of {', '.join(HUMAN_VERDICTS)}")
    reason = a.get("because")
    if verdict == "reopen" and not reason:
        raise UsageError("priors decide: reopen needs --because TEXT (why the settled judgment no longer holds)")
    paths = _paths(ctx)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        st = loaded.state
        active = open_runs(paths, st)
        event = decide_event(st, pid, verdict, None if reason is None else str(reason), active[0] if active else None)
        from priors.lessons_cmd import supersede_events  # lessons loop: accepting a successor retires the old

        retired = supersede_events(st, pid, verdict)
        after = append_ledger(paths, None, [event] + retired, loaded)
        from priors.fold import apply

        for rec in [event] + retired:
            apply(st, rec)
        render(paths, st, loaded.mark, [event] + retired, after)
    ctx.print(f"{pid} → {verdict} (your call — this sticks)")
    for rec in retired:
        ctx.print(f"{rec['id']} → obsolete (superseded by {pid})")
    return 0


REDACT = Spec("redact", "priors redact ID --because TEXT", {"--because": VALUE}, min_pos=1, max_pos=1,
              help="""usage: priors redact ID --because TEXT

Remove a prior's content from everything under .priors/ (the ledger keeps a
tombstone with a content hash; reasons and calls about it are scrubbed).
Git history still holds the old content — rewrite it too if it must go.""")


def cmd_redact(argv: List[str], ctx) -> int:
    from priors import cache, rendered
    from priors.fold import apply, fold, parse_lines
    from priors.human import check_redactable, fold_redaction, joined, redact_event, redact_pieces

    a = parse(argv, REDACT)
    pid = a.pos[0]
    reason = a.get("because")
    if not reason:
        raise UsageError("priors redact: --because TEXT is required (it stays in the ledger)")
    paths = _paths(ctx)
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
        remove_tree(paths.dir / "cache")  # no cache file may keep what was removed
        _scrub_runs(paths, pid, content_hash or "")
        from priors.lessons_cmd import scrub_reflections

        scrub_reflections(paths, pid)
        from priors.store import remove_stray_temps

        remove_stray_temps(paths)
        # the fold of the rewritten ledger, from the fold of the old one: only this prior's state moves
        derived = fold_redaction(st, pid, named)
        if not derived:
            st = fold(parse_lines(joined(data, pieces)))
        apply(st, redact_event(pid, str(reason)))
        # the snapshot is rewritten where this prior lies; its old record's bytes are zeroed
        after = cache.store(paths.dir, st, measured, loaded if derived else None, scrub=(pid,))
        rendered.write(paths, st, loaded.mark, {pid: True}, after, old=shown)
    ctx.print(f"{pid} redacted — its content is gone from .priors/ (a tombstone keeps its hash); "
              "git history still holds it: rewrite history if it must go")
    return 0


def _scrub_runs(paths: Paths, pid: str, content_hash: str) -> None:
    from priors.canonical import JSONError, loads
    from priors.human import scrub
    from priors.store import iter_files

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


STATUS = Spec("status", "priors status [--calls]", {"--calls": BOOL}, help="""usage: priors status [--calls]

One line per namespace: open · fixed · decided by you · lessons locked
(· retired · resting when there are any). --calls lists what needs your
call, each with the exact `priors decide` command to answer it.
Once runs are scored, each scored lesson gets a line with its score (see
`priors lessons`), and a lesson that keeps losing becomes one of your calls.""")


def cmd_status(argv: List[str], ctx) -> int:
    from priors.views import status_text

    a = parse(argv, STATUS)
    paths = Paths(ctx.root)
    _, st = load(paths, want_data=False)
    from priors.lessons_cmd import status_hook  # lessons loop: scores and keep-or-retire calls

    ctx.print(status_text(st, bool(a.get("calls")), status_hook(paths, st)))
    return 0
