"""The agent's run past its opening, one transaction a function: judge the old findings
(`disposition`), seal it (`commit`: every staged line judged again by the door's rules), and move
a run's staging to a new run id (`carry`: its id sealed elsewhere, or its staged ids taken).
Opening a run is ops/opening.py, staging new findings ops/propose.py, taking staged work back
(`withdraw`, `abort`) ops/retract.py.

Each takes the writer lock, loads the ledger, plans with the pure core and writes — and returns the
`Answer` the command line prints and the MCP server hands back. `ingest-sarif` (ops/ingest.py)
drives a whole run through `open_run_locked`, `propose_one` and `commit_locked`: a run has one way
to open, one way to stage a candidate and one way to be sealed.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.canonical import dumps
from priors.core.commit_plan import block_of, carried, decided_since, plan_commit
from priors.core.errors import Refusal
from priors.core.fold import fold, next_run_id
from priors.core.grammar import check_agent_verdict, check_run_id
from priors.core.inject import injected_record
from priors.core.protocol import (
    judge_disposition,
)
from priors.core.run_files import NO_SUCH_RUN
from priors.core.views import display_status
from priors.ops.opening import staged_shapes, stored_scopes_checked
from priors.store import lesson_keys
from priors.store.files import aftercare
from priors.store.ledger import append_and_apply, load_ledger, open_runs, read_records, read_spans, render
from priors.store.lock import Lock
from priors.store.paths import Paths, list_run_dirs, require_init
from priors.store.staging import drop_staging, move_staging, moved_relevant, read_run, write_jsonl

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Tuple

    from priors.core.fold import State
    from priors.core.run_files import RunFiles


# ------------------------------------------------------------------ disposition


def disposition(paths: Paths, run: str, pairs: List[Tuple[str, str]]) -> Answer:
    """Judge each (ID, VERDICT) pair in order, each as if alone. JSON: `{"run", "items": [{"id", "to"}
    | refusal + "item"]}`; one pair refused alone is the refusal itself."""
    for _, verdict in pairs:
        check_agent_verdict(verdict)
    check_run_id(run, "disposition")
    require_init(paths)
    batch = len(pairs) > 1
    with Lock(paths):
        st = load_ledger(paths, want_data=False).state
        rf = read_run(paths, run, snapshot="compact", known=st.priors)
        refused: Dict[int, Dict[str, Any]] = {}  # a pair's place -> its refusal, naming the pair's id
        added = 0
        for i, (pid, verdict) in enumerate(pairs):
            try:
                event = judge_disposition(st, rf, pid, verdict)
            except Refusal as r:
                if not batch:
                    raise
                refused[i] = body = r.payload()
                body["item"] = pid
                continue
            rf.dispositions.append(event)
            added += 1
        if added:
            write_jsonl(paths.run_dir(run) / "dispositions.jsonl", rf.dispositions)
    # the answer's text and JSON made from the pairs, not a dict and a line held a pair: a batch of 70k
    # verdicts (an open-heavy run at 100k priors) held ~25 MB so
    text = "\n".join(dumps(refused[i]) if i in refused else f"{pid} → {verdict}" for i, (pid, verdict) in enumerate(pairs))
    items = ",".join(dumps(refused[i]) if i in refused else dumps({"id": pid, "to": verdict})
                     for i, (pid, verdict) in enumerate(pairs))
    return Answer(1 if refused else 0, None, text, encoded=f'{{"items":[{items}],"run":{dumps(run)}}}')


def refused_item(r: Refusal, item: str, results: List[Tuple[bool, str]], out: List[Dict[str, Any]]) -> None:
    """One item of a batch refused: its refusal, naming the item, goes to the answer; the rest go on."""
    body = r.payload()
    body["item"] = item
    results.append((False, dumps(body)))
    out.append(body)


# ------------------------------------------------------------------ commit


def commit(paths: Paths, run: str) -> Answer:
    """Seal the run; JSON: `{"run", "summary": [lines]}` (a retry answers the sealed run's summary)."""
    check_run_id(run, "commit")
    require_init(paths)
    with Lock(paths):
        summary = commit_locked(paths, run)
    return Answer(0, {"run": run, "summary": summary}, "\n".join(summary))


def commit_locked(paths: Paths, run: str, judged: Optional[RunFiles] = None) -> List[str]:
    """Seal `run` with the writer lock held and return its summary lines (a sealed run: its old
    summary, nothing written). The one way a run is sealed — `commit` and `ingest-sarif` use it.

    `judged`: the staging, when this very hold of the lock opened the run and staged each line
    through the door (`ingest-sarif`): sealed from memory, not read back and judged twice."""
    loaded = load_ledger(paths, want_data=False)
    st = loaded.state
    sealed = st.commits.get(run)
    if sealed is not None:  # a retry — maybe of a commit killed after the ledger landed
        rf = read_run(paths, run, snapshot="compact")
        if rf.relevant is not None and not sealed_as_staged(paths, rf):
            raise Refusal("RUN_COMMITTED", run=run, sealed_elsewhere=True,
                          hint=f"the ledger holds another {run} (a git pull brought another clone's run of that id);"
                               f" this staging is kept: `priors carry --run {run}` moves it to a new open run,"
                               f" `priors abort --run {run}` drops it")
        aftercare("rendering .priors/PRIORS.md", render, paths, st, loaded.mark, (), loaded.mark)
        drop_staging(paths, run)
        summary = sealed.get("summary")
        return [str(s) for s in summary] if isinstance(summary, list) else [""]
    rf = read_run(paths, run, snapshot="compact", known=st.priors) if judged is None else judged
    if rf.relevant is None:
        raise Refusal("UNKNOWN_RUN", run=run, hint=NO_SUCH_RUN)
    shown = {pid: display_status(st.priors[pid]) for pid in rf.verify_states() if pid in st.priors}
    staged_shapes(paths, rf)
    if judged is None:
        stored_scopes_checked(paths, st, rf)
        rf.known_keys = lesson_keys.load(paths.dir)  # (lessons' signatures from earlier calls)
        try:
            plan = plan_commit(st, rf, decided_since_open(paths, st, rf))  # folds the plan's lines into `st`
        finally:
            lesson_keys.save(paths.dir, rf.known_keys)
    else:
        plan = plan_commit(st, rf, judged=True)
    lines = plan.lines.before_last(commit_extra(rf, run))
    append_and_apply(paths, loaded, lines, folded=True, shown=shown)
    # the run is sealed: nothing after this line may turn the answer into a failure
    aftercare(f"removing {run}'s staging", drop_staging, paths, run)
    return list(plan.summary)


def sealed_as_staged(paths: Paths, rf: RunFiles) -> bool:
    """Whether the ledger's block for `rf.run` is exactly what this staging commits against the
    ledger as it stood before that block: a retry after a kill, not another clone's run of the same
    id. Rare (a sealed run with staging left), so the ledger is read and folded whole."""
    records = read_records(paths)
    span = block_of(records, rf.run)
    if span is None:
        return False
    start, end = span
    opened = (rf.relevant or {}).get("ledger_records")
    decided: List[str] = []
    if isinstance(opened, int) and not isinstance(opened, bool) and opened != start:
        decided = decided_since(records[opened:start] if 0 <= opened <= start else records[:start])
    staged_shapes(paths, rf)
    before = fold(records[:start])
    try:
        stored_scopes_checked(paths, before, rf)  # (as commit judged it: the staging's snapshot and moves checked)
        plan = plan_commit(before, rf, decided)
    except Refusal:
        return False
    lines = plan.lines.before_last(commit_extra(rf, rf.run))
    return [dumps(x) for x in lines] == [dumps(x) for x in records[start:end]]


def decided_since_open(paths: Paths, st: State, rf: RunFiles) -> List[str]:
    """The priors a person decided in ledger lines that arrived after the run opened (a git pull
    or merge brings them; `decide` itself is refused while a run is open). Read only when the
    ledger's record count moved since `relevant` noted it — the common case reads nothing."""
    opened = (rf.relevant or {}).get("ledger_records")
    if not isinstance(opened, int) or isinstance(opened, bool) or opened == st.records:
        return []

    def note(spans: Any, _src: Any) -> List[str]:  # (a block at a time, none held: called again on a strict parse)
        after: List[str] = []  # decided in the lines since the run opened
        every: List[str] = []  # and in all: the ledger holds fewer lines than it did then
        count = 0
        for rec, _at, _n in spans:
            got = decided_since([rec]) if rec.get("t") == "event" else None
            if got:
                every += got
                if count >= opened:
                    after += got
            count += 1
        return after if 0 <= opened <= count else every

    return read_spans(paths, note, packs=True)


def commit_extra(rf: RunFiles, run: str) -> List[Dict[str, Any]]:
    """Lines to append just before the run record: what a budgeted run was actually shown."""
    relevant = rf.relevant
    if not isinstance(relevant, dict) or not (relevant.get("inject_omitted") or relevant.get("awaiting_review")):
        return []
    rec = injected_record(relevant, run, rf.inject_ids())
    return [] if rec is None else [rec]


# ------------------------------------------------------------------ carry


def carry(paths: Paths, run: str) -> Answer:
    """Move a run's staging to a new open run, its staged priors renumbered after the ledger's — for
    a run whose id another clone sealed (a git pull brought it), or whose staged ids the ledger took.
    Nothing is judged: the new run's commit judges every line. JSON: `{"carried", "run", "ids": {old: new}}`."""
    check_run_id(run, "carry")
    require_init(paths)
    with Lock(paths):
        st = load_ledger(paths, want_data=False).state
        rf = read_run(paths, run, snapshot="none")  # (its snapshot read to know it sound, then rewritten below)
        if rf.relevant is None:
            raise Refusal("UNKNOWN_RUN", run=run, hint=NO_SUCH_RUN)
        others = [r for r in open_runs(paths, st) if r != run]
        if others:
            raise Refusal("ACTIVE_RUN_EXISTS", run=others[0],
                          hint=f"finish it first: `priors commit --run {others[0]}` or `priors abort --run {others[0]}`")
        if run in st.commits and sealed_as_staged(paths, read_run(paths, run)):
            raise Refusal("RUN_COMMITTED", run=run,
                          hint=f"the ledger's {run} is this very staging: `priors commit --run {run}` finishes it")
        new = next_run_id(st, list_run_dirs(paths))
        files, ids = carried(rf, new, st.max_prior)
        move_staging(paths, run, new, moved_relevant(paths, run, new), files)
    moved = "".join(f"; {old} is now {pid}" for old, pid in ids.items())
    text = (f"{run}'s staging is now {new}, open{moved}. `priors commit --run {new}` judges all of it against the"
            " ledger as it is now")
    return Answer(0, {"carried": run, "ids": ids, "run": new}, text)
