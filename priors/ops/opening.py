"""Opening a run (`relevant`): the run's id, what applies to it (the pure selection, ranked and
budgeted by the lessons loop's hook), its staging folder. `open_run_locked` is the one way a run
is opened: `ingest-sarif` comes through it too.
"""

from __future__ import annotations

import os

from priors.core.answer import Answer
from priors.core.canonical import dumps, dumps_object, dumps_rows
from priors.core.errors import Refusal, UsageError
from priors.core.fold import next_run_id
from priors.core.grammar import check_run_id, ref_alias
from priors.core.protocol import select, settled_refs
from priors.core.vocabulary import LAST_CHOSEN_RUN, RUN_RE, id_number
from priors.ops.budget import relevant_hook
from priors.snapshot.scan import rehash
from priors.store.files import atomic_write, discard_tree, make_dir
from priors.store.ledger import ensure_dirs, first_files, load_ledger, open_runs, render
from priors.store.lock import Lock
from priors.store.paths import Paths, list_run_dirs

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, Optional, Tuple

    from priors.core.fold import State
    from priors.core.lessons import Budget
    from priors.core.run_files import RunFiles


def check_chosen_run(run: str) -> str:
    """A run id the caller picks for a new run: a run id, and one that leaves room after it — the next
    run is numbered one higher, and an id past LAST_CHOSEN_RUN would soon leave none."""
    check_run_id(run, "relevant")
    if id_number(RUN_RE, run) > LAST_CHOSEN_RUN:
        raise UsageError(f"priors relevant: --run {run} leaves no room for the runs after it (run ids have at most"
                         f" nine digits): pick one up to run-{LAST_CHOSEN_RUN}, or let the keeper number the run")
    return run


def check_settled(cap: Any) -> int:
    """`relevant --settled N`: how many binding priors `settled_here` lists (50 unless given)."""
    if cap is None:
        return 50
    if not str(cap).isdigit() or len(str(cap)) > 9:
        raise UsageError(f"priors relevant: --settled takes a whole number, not {cap!r}")
    return int(str(cap))


def settled_from_disk(paths: Paths, st: State, scopes: Dict[str, str]) -> Dict[str, str]:
    """The run's snapshot with every scope that holds a binding prior hashed by the keeper from disk,
    whatever `--scopes` (or a tool call) said — added when the snapshot holds a scope related to it
    but not it (`settled_refs`): what a person settled is judged against the code as it is. Such a
    scope that names nothing on disk is left out of the run (missing)."""
    for ref in sorted(scopes):
        why = ref_alias(ref)
        if why is None and ref.endswith("/") and "#" not in ref:
            full = os.path.join(str(paths.root), *ref[:-1].split("/"))
            if os.path.lexists(full) and not os.path.isdir(full):
                why = "a folder ref naming a file (the file's ref has no `/` at the end)"
        if why is not None:
            raise UsageError(f"priors: the run's snapshot holds {ref!r}, which is not a scope ref: {why} — refs "
                             "are POSIX paths relative to the root, as `priors snapshot` writes them; nothing was changed")
    refs = settled_refs(st, scopes)
    if not refs:
        return scopes
    disk = rehash(paths.root, refs)
    out = dict(scopes)
    for ref in refs:
        if ref in disk:
            out[ref] = disk[ref]
        else:
            out.pop(ref, None)
    return out


def stored_scopes_checked(paths: Paths, st: State, rf: RunFiles) -> None:
    """Commit's check of the snapshot the run's `relevant.json` stores — staging anyone can edit
    after `relevant` hashed a person's scopes from disk: a ref that spells a path another way is
    MALFORMED_STAGING, and a scope holding a binding prior (or related to a ref the snapshot holds)
    whose file on disk is still in the state the person decided it on is judged in that state,
    whatever hash the file says or whether it kept the scope at all (`rf` is changed in place, so a
    staged finding stamped with an invented hash differs from what `propose` writes now)."""
    scopes = rf.scopes
    for ref in sorted(scopes):
        why = ref_alias(ref)
        if why is not None:
            raise Refusal("MALFORMED_STAGING", run=rf.run, file=f".priors/runs/{rf.run}/relevant.json", line=1,
                          because={"rule": f"the snapshot holds {ref!r}, which is not a scope ref: {why}"},
                          hint=f"`priors abort --run {rf.run}` and open the run again")
    refs = settled_refs(st, scopes)
    if not refs:
        return
    disk = rehash(paths.root, refs)
    decided: Dict[str, set] = {}
    for p in st.priors.values():
        if p.binding and p.scope_ref in disk and isinstance(p.scope_hash, str):
            decided.setdefault(p.scope_ref, set()).add(p.scope_hash)
    fixed = dict(scopes)
    for ref, h in disk.items():
        if fixed.get(ref) != h and h in decided.get(ref, ()):
            fixed[ref] = h  # the code is as a person decided it: a snapshot saying otherwise is not believed
    if fixed != scopes and isinstance(rf.relevant, dict):
        rf.relevant = dict(rf.relevant, scopes=fixed)


def open_run(paths: Paths, ns: str, scopes: Dict[str, str], run: Optional[str], budget: Optional[Budget],
             settled: Any = None, say: Optional[Callable[[str], object]] = None) -> Answer:
    """Open a run and answer what applies to it. The first run of a target sets up `.priors/` (and
    `say`s so); `scopes` is the run's trusted snapshot, already taken or read."""
    if run is not None:
        check_chosen_run(str(run))
    cap = check_settled(settled)
    fresh = not paths.dir.is_dir()
    if fresh:  # the first run starts the ledger, and says where
        ensure_dirs(paths)
        if say is not None:
            say(f"priors: set up {paths.dir} for this first run — commit it with your repo")
    with Lock(paths):
        st = load_ledger(paths, want_data=False).state
        opened, printed = open_run_locked(paths, st, ns, scopes, run, budget, fresh, cap)
    if say is not None:
        close = new_namespace_near(st, ns)
        if close is not None:  # a typo would start a namespace of its own, blind to everything settled in the one meant
            say(f"priors: note: {ns} is a new namespace, close to {close} that the ledger holds — if you meant {close},"
                f" `priors abort --run {opened}` and open the run with --ns {close}")
    return Answer(0, None, encoded=printed)


def new_namespace_near(st: State, ns: str) -> Optional[str]:
    """The namespace of the ledger `ns` looks like a misspelling of, when `ns` is new to it (else None)."""
    from priors.core.spelling import nearest
    from priors.core.views import known_namespaces

    known = known_namespaces(st)
    return None if ns in known else nearest(ns, known)  # the object is read back from the line only when asked for


def open_run_locked(paths: Paths, st: State, ns: str, scopes: Dict[str, str], run: Optional[str],
                    budget: Optional[Budget], fresh: bool, cap: int = 50) -> Tuple[str, str]:
    """Open a run with the writer lock held: (its id, the JSON line `relevant` prints).

    The one way a run is opened — `relevant` and `ingest-sarif` both come through here."""
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
    scopes = settled_from_disk(paths, st, scopes)
    out = relevant_hook(budget, st, select(st, ns, scopes, str(run), cap))
    rdir = paths.run_dir(str(run))
    make_dir(rdir)
    # the verify list can be 70k items: encode it once, as rows (`dumps_rows`: no walk over every value)
    parts = {k: dumps_rows(v) if k == "verify" else dumps(v) for k, v in out.items()}
    printed = dumps_object(parts)
    parts["scopes"] = dumps(scopes)
    parts["ledger_records"] = str(st.records)  # where the ledger stood: commit finds what a person decided since
    try:
        atomic_write(rdir / "relevant.json", (dumps_object(parts) + "\n").encode("utf-8"))
    except BaseException:  # a run that could not be opened leaves no folder behind
        discard_tree(rdir)
        raise
    return str(run), printed
