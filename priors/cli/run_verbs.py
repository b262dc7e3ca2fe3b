"""The agent's run ritual: relevant, disposition, propose, commit, abort.
"""

from __future__ import annotations

from priors.cli.args import BOOL, REST, VALUE, Spec, parse, required

from priors.cli.inputs import Answer, check_run_id, emit, parse_json_input, paths_of, read_input
from priors.core.canonical import dumps, dumps_object
from priors.core.errors import Refusal, UsageError
from priors.store.files import aftercare, atomic_write, discard_tree, remove_tree
from priors.store.ledger import (
    append_ledger,
    ensure_dirs,
    first_files,
    load,
    load_ledger,
    open_runs,
    read_run,
    render,
    write_jsonl,
)
from priors.store.lock import Lock
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Tuple


# ------------------------------------------------------------------ relevant


RELEVANT = Spec("relevant", "priors relevant --ns NS [--scopes FILE|-] [--snapshot [PATH ...]] [--run RUN]"
                " [--max-inject N] [--max-chars C] [--query TEXT] [--settled N]",
                {"--settled": VALUE, "--ns": VALUE, "--scopes": VALUE, "--run": VALUE, "--snapshot": REST,
                 "--max-inject": VALUE, "--max-chars": VALUE, "--query": VALUE},
                help="""usage: priors relevant --ns NS [--scopes FILE|-] [--snapshot [PATH ...]] [--run RUN]
                       [--max-inject N] [--max-chars C] [--query TEXT] [--settled N]

Open a run and print, as one JSON line, what applies to it:
  inject   instructions to follow this run (lessons, preferences, decisions)
  verify   old findings to re-check — each needs a disposition before anything new
  nudges   priors asking to be re-confirmed by a human
  floors   review depths below which new findings are refused
  settled  how many binding decisions apply; archived: resting priors not listed
  settled_here  the binding priors on scopes in this snapshot (id, status,
           scope_ref, claim): read them before proposing — a finding that
           repeats one is refused; settled_here_more counts those not listed

  --ns NS            the namespace (one per job, e.g. code-review)
  --scopes FILE|-    JSON object {scope_ref: hash} — the run's trusted snapshot
  --snapshot [PATH]  take the snapshot now (see `priors snapshot`)
  --run RUN          the run id (default: the next free one, e.g. run-004)
  --max-inject N     inject at most N lessons (default: .priors/config.json, else all)
  --max-chars C      inject at most C characters of lesson text (same default)
  --settled N        list at most N priors in settled_here (default 50)
  --query TEXT       rank lessons by word overlap with TEXT: binding first, then
                     overlap, outcome score, id; what did not fit is in inject_omitted

Only one run may be open at a time. Finish it with `priors commit` or `priors abort`.""")


def scopes_from(a, ctx, verb: str = "relevant", default_snapshot: bool = False, given: Any = None) -> Dict[str, str]:
    """The run's snapshot from `--scopes FILE|-` or `--snapshot [PATH ...]` (`relevant`, `ingest-sarif`),
    or `given` as an object when a tool call carries it in-band."""
    if (a.has("--scopes") or given is not None) and a.has("--snapshot"):
        raise UsageError(f"priors {verb}: give --scopes or --snapshot, not both")
    if given is not None:
        if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
            raise UsageError(f"priors {verb}: scopes must be a JSON object mapping scope refs to hash strings")
        return given
    if a.has("--snapshot") or (default_snapshot and not a.has("--scopes")):
        from priors.snapshot.scan import _tty_progress, take_snapshot

        return take_snapshot(ctx.root, list(a.get("snapshot") or []) or None, progress=_tty_progress(ctx.err),
                             cwd=getattr(ctx, "cwd", None))
    name = a.get("scopes")
    if name is None:
        return {}
    scopes = parse_json_input(read_input(str(name), "scopes file"), str(name), "scopes file")
    if not isinstance(scopes, dict) or not all(isinstance(v, str) for v in scopes.values()):
        raise UsageError(f"priors {verb}: scopes file {name} must be a JSON object mapping scope refs to hash strings")
    return scopes


def cmd_relevant(argv: List[str], ctx) -> int:
    a = parse(argv, RELEVANT)
    return emit(ctx, a, relevant(a, ctx))


def relevant(a, ctx, scopes_given: Any = None) -> Answer:
    """Open a run. `scopes_given`: the snapshot as an object, when a tool call carries it in-band."""
    ns = required(a, RELEVANT, "ns", "NS")
    run = a.get("run")
    if run is not None:
        check_run_id(str(run), "relevant")
    cap = a.get("settled")
    if cap is not None and (not str(cap).isdigit() or len(str(cap)) > 9):
        raise UsageError(f"priors relevant: --settled takes a whole number, not {cap!r}")
    paths = Paths(ctx.root)
    scopes = scopes_from(a, ctx, given=scopes_given)
    from priors.cli.lesson_config import budget_from

    budget = budget_from(a, paths)
    fresh = not paths.dir.is_dir()
    if fresh:  # the first run starts the ledger, and says where
        ensure_dirs(paths)
        ctx.err.write(f"priors: set up {paths.dir} for this first run — commit it with your repo\n")
    with Lock(paths):
        _, st = load(paths, want_data=False)
        _, printed = open_run_locked(paths, st, str(ns), scopes, run, budget, fresh, 50 if cap is None else int(str(cap)))
    return Answer(0, None, encoded=printed)  # the object is read back from the line only when asked for


def open_run_locked(paths: Paths, st, ns: str, scopes: Dict[str, str], run, budget, fresh: bool,
                    cap: int = 50) -> Tuple[str, str]:
    """Open a run with the writer lock held: (its id, the JSON line `relevant` prints).

    The one way a run is opened — `relevant` and `ingest-sarif` both come through here."""
    from priors.cli.lessons_verbs import relevant_hook
    from priors.core.fold import next_run_id
    from priors.core.protocol import select
    from priors.store.files import make_dir
    from priors.store.paths import list_run_dirs

    if fresh:
        first_files(paths)
        render(paths, st)
    active = open_runs(paths, st)
    if active:
        raise Refusal("ACTIVE_RUN_EXISTS", run=active[0],
                      hint=f"finish it first: `priors commit --run {active[0]}` or `priors abort --run {active[0]}`")
    if run is None:
        run = next_run_id(st, list_run_dirs(paths))
    elif run in st.commits or paths.run_dir(str(run)).exists():
        raise Refusal("RUN_EXISTS", run=run)
    out = relevant_hook(budget, paths, st, select(st, ns, scopes, str(run), cap))
    rdir = paths.run_dir(str(run))
    make_dir(rdir)
    parts = {k: dumps(v) for k, v in out.items()}  # the verify list can be 10k items: encode it once
    printed = dumps_object(parts)
    parts["scopes"] = dumps(scopes)
    parts["ledger_records"] = str(st.records)  # where the ledger stood: commit finds what a person decided since
    try:
        atomic_write(rdir / "relevant.json", (dumps_object(parts) + "\n").encode("utf-8"))
    except BaseException:  # a run that could not be opened leaves no folder behind
        discard_tree(rdir)
        raise
    return str(run), printed


# ------------------------------------------------------------------ disposition


DISPOSITION = Spec("disposition", "priors disposition ID VERDICT [ID VERDICT ...] --run RUN [--json]",
                   {"--run": VALUE, "--json": BOOL}, min_pos=2, max_pos=None,
                   help="""usage: priors disposition ID VERDICT [ID VERDICT ...] --run RUN [--json]

Record your verdict on an old finding the run had to verify:
  fixed              the issue is gone
  still-open         unchanged code, issue still there (carried)
  reaffirmed         the code changed and the issue is still there
  stale              the code changed; the finding no longer fits as written
  challenged         an injected lesson failed in practice (send it to the human)
  obsolete-proposed  suggest the human retire it

Several ID VERDICT pairs may be given; each is judged as if alone, in order.
--json prints one canonical JSON object {"items": [...], "run": ...} instead of lines.
Human verdicts (accepted, wontfix, obsolete, reopen, keep) belong to `priors decide`.""")


def _check_agent_verdict(verdict: str) -> None:
    from priors.core.grammar import AGENT_VERDICTS, HUMAN_VERDICTS

    if verdict in HUMAN_VERDICTS:
        raise UsageError(f"priors disposition: {verdict!r} is a human verdict — only `priors decide` records it")
    if verdict not in AGENT_VERDICTS:
        raise UsageError(f"priors disposition: unknown verdict {verdict!r} — one of {', '.join(AGENT_VERDICTS)}")


def cmd_disposition(argv: List[str], ctx) -> int:
    a = parse(argv, DISPOSITION)
    return emit(ctx, a, disposition(a, ctx))


def disposition(a, ctx) -> Answer:
    """Judge each ID VERDICT pair in order; JSON: `{"run", "items": [{"id", "to"} | refusal + "item"]}`."""
    from priors.core.protocol import judge_disposition

    if len(a.pos) % 2:
        raise UsageError("priors disposition: give ID VERDICT pairs\nusage: " + DISPOSITION.usage)
    pairs = [(a.pos[i], a.pos[i + 1]) for i in range(0, len(a.pos), 2)]
    for _, verdict in pairs:
        _check_agent_verdict(verdict)
    run = check_run_id(a.get("run"), "disposition")
    paths = paths_of(ctx)
    batch = len(pairs) > 1
    with Lock(paths):
        _, st = load(paths, want_data=False)
        rf = read_run(paths, run)
        results: List[Tuple[bool, str]] = []
        items: List[Dict[str, Any]] = []
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
                items.append(body)
                continue
            rf.dispositions.append(event)
            added += 1
            results.append((True, f"{pid} → {verdict}"))
            items.append({"id": pid, "to": verdict})
        if added:
            write_jsonl(paths.run_dir(run) / "dispositions.jsonl", rf.dispositions)
    code = 0 if all(ok for ok, _ in results) else 1
    return Answer(code, {"items": items, "run": run}, "\n".join(text for _, text in results))


# ------------------------------------------------------------------ propose


PROPOSE = Spec("propose", "priors propose FILE [FILE ...] --run RUN --ns NS [--json]",
               {"--run": VALUE, "--ns": VALUE, "--json": BOOL}, min_pos=1, max_pos=None,
               help="""usage: priors propose FILE [FILE ...] --run RUN --ns NS [--json]

Stage a new prior from a JSON candidate (FILE, or - for stdin):
  {"type": "conclusion", "claim": "…", "scope_ref": "src/app.py#Cart.total",
   "severity": "minor|major|gate", "direction": "…", "evidence": "…"}
Types: conclusion (a finding to re-check), behavioral (a tool lesson),
coverage (a review-depth floor), calibration (a repo-wide preference);
or give "facets" yourself. The keeper takes the scope's hash from the run's
snapshot and refuses duplicates, re-raises of human decisions, reversals
and findings below a coverage floor. Every verify item needs a disposition first.

A FILE may hold one candidate, a JSON array of them, or JSON lines; each is
judged as if proposed alone, in order, with one output line per item.
--json prints one canonical JSON object {"items": [...], "run": ...} instead:
each staged item names its id and the scope_ref it landed on.""")


def _candidates(names: List[str]) -> List[Tuple[str, Any]]:
    from priors.core.canonical import JSONError, loads

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


def _propose_one(st, rf, raw: Any, ns: str, next_id: List[int], paths=None):
    """Judge one candidate exactly as the contract orders; returns the staged record."""
    from priors.core.fold import next_prior_id
    from priors.core.grammar import validate
    from priors.core.protocol import (
        check_run_for_propose,
        check_distinct_from,
        check_scope,
        escalation_known,
        find_conflict,
        prior_record,
        reversal_refusal,
    )

    check_run_for_propose(st, rf, ns)
    cand = validate(raw)
    if paths is not None and (raw.get("at") is not None or raw.get("file") is not None):
        from priors.cli.ground_verbs import resolve_location

        raw = resolve_location(paths, rf, raw)  # the prior records the resolved scope_ref
        cand = validate(raw)
    from priors.core.lessons import check_supersedes

    check_supersedes(st, raw.get("supersedes"), ns)  # lessons loop: a usage error like any bad field
    current = check_scope(rf, cand)
    check_distinct_from(st, rf, cand, ns)
    from priors.core.secret_patterns import guard

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
    a = parse(argv, PROPOSE)
    return emit(ctx, a, propose(a, ctx))


def propose(a, ctx, given: Optional[List[Tuple[str, Any]]] = None) -> Answer:
    """Judge each candidate in order. `given`: (label, candidate) pairs a tool call carries in-band,
    instead of the files named on the command line. JSON: `{"run", "items": [{"item", "id"[, "scope_ref"]}
    | refusal + "item"]}`."""
    from priors.core.fold import prior_number

    run = check_run_id(a.get("run"), "propose")
    ns = required(a, PROPOSE, "ns", "NS")
    items = _candidates(a.pos) if given is None else given
    if not items:
        raise UsageError("priors propose: give at least one candidate")
    batch = len(items) > 1
    if batch:
        from priors.core.grammar import validate

        for label, raw in items:
            try:
                validate(raw)
            except UsageError as exc:
                raise UsageError(f"{exc} (in {label}; nothing was staged)") from None
    paths = paths_of(ctx)
    with Lock(paths):
        _, st = load(paths, want_data=False)
        rf = read_run(paths, run)
        before = (len(rf.staged), len(rf.escalations))
        biggest = max([st.max_prior] + [prior_number(r.get("id")) for r in rf.staged if isinstance(r, dict)])
        next_id = [biggest]
        results: List[Tuple[bool, str]] = []
        out: List[Dict[str, Any]] = []
        for label, raw in items:
            try:
                rec = _propose_one(st, rf, raw, str(ns), next_id, paths)
            except Refusal as r:
                if not batch:
                    _save_staging(paths, rf, before)
                    raise
                body = r.payload()
                body["item"] = label
                results.append((False, dumps(body)))
                out.append(body)
                continue
            results.append((True, f"{rec['id']} staged (new)"))
            staged = {"id": rec["id"], "item": label}
            if isinstance(rec.get("scope_ref"), str):
                staged["scope_ref"] = rec["scope_ref"]  # where an `at` location resolved to
            out.append(staged)
        _save_staging(paths, rf, before)
    code = 0 if all(ok for ok, _ in results) else 1
    return Answer(code, {"items": out, "run": run}, "\n".join(text for _, text in results))


def _save_staging(paths: Paths, rf, before: Tuple[int, int]) -> None:
    rdir = paths.run_dir(rf.run)
    if len(rf.staged) != before[0]:
        write_jsonl(rdir / "staged.jsonl", rf.staged)
    if len(rf.escalations) != before[1]:
        write_jsonl(rdir / "escalations.jsonl", rf.escalations)


# ------------------------------------------------------------------ commit / abort


COMMIT = Spec("commit", "priors commit --run RUN [--json]", {"--run": VALUE, "--json": BOOL},
              help="""usage: priors commit --run RUN [--json]

Seal the run: append its dispositions, the missing-scope marks, the new
priors and any calls for the human to the ledger in one atomic write, then
print the summary (fixed / carried / touched / your call / new).
Refused while any verify item with a present scope lacks a disposition.
Committing an already committed run prints the same summary and writes nothing.
--json prints {"run": ..., "summary": [lines]}.""")


def cmd_commit(argv: List[str], ctx) -> int:
    a = parse(argv, COMMIT)
    return emit(ctx, a, commit(a, ctx))


def commit(a, ctx) -> Answer:
    """Seal the run; JSON: `{"run", "summary": [lines]}` (a retry answers the sealed run's summary)."""
    run = check_run_id(a.get("run"), "commit")
    paths = paths_of(ctx)
    with Lock(paths):
        summary = commit_locked(paths, run)
    return Answer(0, {"run": run, "summary": summary}, "\n".join(summary))


def commit_locked(paths: Paths, run: str) -> List[str]:
    """Seal `run` with the writer lock held and return its summary lines (a sealed run: its old
    summary, nothing written). The one way a run is sealed — `commit` and `ingest-sarif` use it."""
    from priors.core.commit_plan import plan_commit

    loaded = load_ledger(paths, want_data=False)
    st = loaded.state
    sealed = st.commits.get(run)
    if sealed is not None:
        remove_tree(paths.run_dir(run))
        summary = sealed.get("summary")
        return [str(s) for s in summary] if isinstance(summary, list) else [""]
    rf = read_run(paths, run)
    if rf.relevant is None:
        raise Refusal("UNKNOWN_RUN", run=run)
    from priors.core.views import display_status

    shown = {pid: display_status(st.priors[pid]) for pid in rf.verify_items() if pid in st.priors}
    plan = plan_commit(st, rf, _decided_since_open(paths, st, rf))
    from priors.cli.lessons_verbs import commit_extra

    lines = plan.lines[:-1] + commit_extra(rf.relevant, run) + plan.lines[-1:]
    after = append_ledger(paths, None, lines, loaded)
    # the run is sealed: nothing after this line may turn the answer into a failure
    aftercare(f"removing {run}'s staging", remove_tree, paths.run_dir(run))
    aftercare("rendering .priors/PRIORS.md", render, paths, st, loaded.mark, lines, after, shown)
    return list(plan.summary)


def _decided_since_open(paths: Paths, st, rf) -> List[str]:
    """The priors a person decided in ledger lines that arrived after the run opened (a git pull
    or merge brings them; `decide` itself is refused while a run is open). Read only when the
    ledger's record count moved since `relevant` noted it — the common case reads nothing."""
    from priors.core.fold import parse_lines
    from priors.core.commit_plan import decided_since
    from priors.store.files import read_bytes

    opened = rf.relevant.get("ledger_records")
    if not isinstance(opened, int) or isinstance(opened, bool) or opened == st.records:
        return []
    records = parse_lines(read_bytes(paths.ledger) or b"")
    return decided_since(records[opened:] if 0 <= opened <= len(records) else records)


ABORT = Spec("abort", "priors abort --run RUN [--json]", {"--run": VALUE, "--json": BOOL},
             help="""usage: priors abort --run RUN [--json]

Throw away an open run's staging (dispositions, proposals, escalations).
The ledger is not touched; open a fresh run with `priors relevant`.
--json prints {"aborted": true, "run": ...}.""")


def cmd_abort(argv: List[str], ctx) -> int:
    a = parse(argv, ABORT)
    return emit(ctx, a, abort(a, ctx))


def abort(a, ctx) -> Answer:
    """Drop an open run's staging; JSON: `{"aborted": true, "run"}`."""
    run = check_run_id(a.get("run"), "abort")
    paths = paths_of(ctx)
    with Lock(paths):
        _, st = load(paths, want_data=False)
        if run in st.commits:
            raise Refusal("RUN_COMMITTED", run=run, hint="a sealed run cannot be aborted")
        if not paths.run_dir(run).exists():
            raise Refusal("UNKNOWN_RUN", run=run)
        remove_tree(paths.run_dir(run))
    return Answer(0, {"aborted": True, "run": run}, f"{run} aborted — uncommitted staging removed; the ledger was untouched")
