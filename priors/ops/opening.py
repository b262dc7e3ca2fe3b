"""Opening a run (`relevant`): the run's id, what applies to it (the pure selection, ranked and
budgeted by the lessons loop's hook), its staging folder. `open_run_locked` is the one way a run
is opened: `ingest-sarif` comes through it too.
"""

from __future__ import annotations

import os

from priors.core.answer import Answer
from priors.core.canonical import dumps, object_pieces_utf8
from priors.core.errors import Refusal, UsageError
from priors.core.fold import REST_AFTER, next_run_id
from priors.core.grammar import aliased_refs, check_run_id, ref_alias
from priors.core.moves import as_run_sees, file_follows, find_moves, is_definition, is_file_ref
from priors.core.record_text import plain_rows, printable_utf8
from priors.core.selection import select, settled_refs, verify_rows
from priors.core.spelling import nearest
from priors.core.views import known_namespaces
from priors.core.vocabulary import BINDING, LAST_CHOSEN_RUN, RUN_RE, id_number
from priors.ops.budget import relevant_hook
from priors.snapshot.hashing import indent_counts, indented_refs
from priors.snapshot.scan import rehash
from priors.snapshot.shapes import NEAR, blind_hashes, definition_shapes, shape_similarity
from priors.store.background import cancel, start
from priors.store.files import Spool, atomic_write, discard_tree, make_dir
from priors.store.ledger import ensure_dirs, first_files, load_ledger, open_runs, render
from priors.store.lock import Lock
from priors.store.paths import Paths, list_run_dirs

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from pathlib import Path
    from typing import Any, Callable, Dict, List, Optional, Tuple

    from priors.core.fold import PriorState, State
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
    bad = aliased_refs(scopes)  # the first in sorted order is named, or a folder ref before it that names a file
    for ref in sorted(r for r in scopes if r.endswith("/") and "#" not in r and (not bad or r < bad[0])):
        full = os.path.join(str(paths.root), *ref[:-1].split("/"))
        if os.path.lexists(full) and not os.path.isdir(full):
            bad.insert(0, ref)
            break
    if bad:
        ref = bad[0]
        why = ref_alias(ref) or "a folder ref naming a file (the file's ref has no `/` at the end)"
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
    rehashed_checked(paths, st, rf)
    refs = settled_refs(st, scopes)
    if refs:
        disk_checked(paths, st, rf, refs)
    moves_checked(paths, st, rf)


def disk_checked(paths: Paths, st: State, rf: RunFiles, refs: List[str]) -> None:
    """`stored_scopes_checked`'s part for the scopes that hold a person's decision (`refs`)."""
    scopes = rf.scopes
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


def moves_checked(paths: Paths, st: State, rf: RunFiles) -> None:
    """Commit's check of where `relevant.json` says a person's decisions went with their code (`moves`
    of the namespace's own, `followed` of another's: staging anyone can edit — an entry left out cut a
    decision loose from its renamed code, and the door then let its re-raise there through): worked
    out again from the snapshot and the disk (`follow_code`), and believed for the binding priors
    alone. Only when the run stages a finding (nothing else is judged by them); `rf` is changed in place."""
    if not isinstance(rf.relevant, dict) or not any(
            isinstance(r, dict) and r.get("t") == "prior" for r in rf.staged):
        return
    fresh = follow_code(paths, st, rf.ns, rf.scopes)
    fresh.pop("moves_by_id", None)

    def binding(pid: str) -> bool:
        p = st.priors.get(pid)
        return p is not None and p.binding

    stored = rf.move_entries("moves")
    theirs = [m for m in fresh.get("moves", ()) if binding(m["id"])]
    followed = list(fresh.get("followed", ()))
    if [m for m in stored if binding(m["id"])] != theirs or followed != rf.followed:
        rf.relevant = dict(rf.relevant, moves=[m for m in stored if not binding(m["id"])] + theirs, followed=followed)


def rehashed_checked(paths: Paths, st: State, rf: RunFiles) -> None:
    """Commit's check of `relevant.json`'s `rehashed` (staging anyone can edit): a prior is judged as
    holding the scope's hash now only when the keeper finds, on disk, its scope unchanged under the
    whitespace-blind scheme it was judged with (`follow_code`); any other entry is dropped, so the
    prior is judged on its own hash — an invented entry made a person's decision look out of date.
    `rf` is changed in place."""
    claimed = rf.rehashed
    if not claimed or not isinstance(rf.relevant, dict):
        return
    refs: Dict[str, str] = {}
    for pid in claimed:
        p = st.priors.get(pid)
        if p is not None and not p.redacted and isinstance(p.scope_ref, str) and isinstance(p.scope_hash, str):
            refs[pid] = p.scope_ref
    files = sorted({r for r in refs.values() if indent_counts(r.split("#", 1)[0])})
    blind = blind_hashes(paths.root, files) if files else {}
    disk = rehash(paths.root, files) if files else {}
    kept = {pid: disk[ref] for pid, ref in refs.items()
            if ref in blind and ref in disk and blind[ref] == st.priors[pid].scope_hash and disk[ref] == claimed[pid]}
    if kept != claimed:
        rf.relevant = dict(rf.relevant, rehashed=kept)


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
        opened, pieces, shown = open_run_locked(paths, st, ns, scopes, run, budget, fresh, cap)
    if say is not None:
        close = new_namespace_near(st, ns)
        if close is not None:  # a typo would start a namespace of its own, blind to everything settled in the one meant
            say(f"priors: note: {ns} is a new namespace, close to {close} that the ledger holds — if you meant {close},"
                f" `priors abort --run {opened}` and open the run with --ns {close}")
    return Answer(0, None, pieces=pieces, shown=shown)  # the object is read back from the line only when asked for


def new_namespace_near(st: State, ns: str) -> Optional[str]:
    """The namespace of the ledger `ns` looks like a misspelling of, when `ns` is new to it (else None)."""
    if any(p.ns == ns for p in st.priors.values()):  # (stops at the first: a namespace in use costs nothing)
        return None
    known = known_namespaces(st)
    return None if ns in known else nearest(ns, known)


def open_run_locked(paths: Paths, st: State, ns: str, scopes: Dict[str, str], run: Optional[str],
                    budget: Optional[Budget], fresh: bool, cap: int = 50) -> Tuple[str, List[Any], bool]:
    """Open a run with the writer lock held: (its id, the JSON line `relevant` prints in UTF-8 — as
    the pieces it is made of, bytes and spools, never joined: 19 MB at 100k priors —, whether it
    prints as it is).

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
    encoded = dumps(scopes).encode("utf-8")  # (a 70k-scope snapshot is encoded before the answer is made: less at once)
    follow = follow_code(paths, st, ns, scopes)
    tail: List[Callable[[], Any]] = []
    try:
        parts, extra, shown = answer_parts(st, ns, scopes, str(run), cap, budget, follow, tail, paths.dir)
        extra["scopes"] = encoded
    except BaseException:
        for pending in tail:  # a failure before the second process's items were needed: it is stopped
            cancel(pending)
        raise
    answer = object_pieces_utf8(parts)
    parts.update(extra)
    rdir = paths.run_dir(str(run))
    make_dir(rdir)
    try:  # (the same verify pieces in both texts, written out one at a time)
        atomic_write(rdir / "relevant.json", object_pieces_utf8(parts, b"\n"))
    except BaseException:  # a run that could not be opened leaves no folder behind
        discard_tree(rdir)
        raise
    return str(run), answer, shown


SHARE = 0.2  # of the verify items, those this process makes while the second makes the rest (this one also
# reads the lessons and floors and encodes the rest: 0.2 evens the two at 10k, CPU 26 ms each where 0.4 gave 32 and 21)
PIECE = 2000  # verify items made and written to a spool at a time
SPLIT_BYTES = 1 << 20  # a second process pays for itself from this many bytes of the rest's lines
SPOOL_ITEMS = 20000  # from this many verify items (~5 MB) they go to spools as they are made, not held


def answer_parts(st: State, ns: str, scopes: Dict[str, str], run: str, cap: int, budget: Optional[Budget],
                 follow: Dict[str, Any], tail: List[Callable[[], Any]],
                 where: Optional[Path] = None) -> Tuple[Dict[str, Any], Dict[str, Any], bool]:
    """What `relevant` selects, encoded: (the answer's values, the values `relevant.json` adds, whether
    the answer prints as it is). A long verify list is shared with a second process (`shared_rows`;
    `tail` gets the second process, to be stopped if this one fails first), and from SPOOL_ITEMS items each part is written to
    a private file in `where` as it is made (`Spool`), never held; each value is encoded once, in
    UTF-8. The verify list's value is a list of pieces (bytes or spools), each the texts of items
    joined by commas."""
    got: List[Callable[[], Any]] = []
    out = relevant_hook(budget, st, select(st, ns, scopes, run, cap, follow.get("moves_by_id"),
                                           follow.get("rehashed"), shared_rows(tail, got, where)))
    follow.pop("moves_by_id", None)
    # The verify list can be 70k items, each encoded already (`select`, in UTF-8 from the ledger's bytes):
    # joined into each text, never walked again; the lessons and floors, thousands of small objects of
    # strings, are written by their keys' template.
    parts: Dict[str, Any] = {}
    for key, value in out.items():
        if key != "verify":
            parts[key] = rows_text(value)
    shown = all([printable_utf8(v) for value in parts.values()  # (each looked at: any may name a changed ledger)
                 for v in (value if type(value) is list else [value])])
    extra: Dict[str, Any] = {}  # (and the snapshot, `scopes`: the caller has it encoded)
    for key in ("moves", "rehashed", "shapes", "lost", "followed"):  # kept beside the run, not printed (core/moves.py)
        if follow.get(key):
            extra[key] = dumps(follow[key]).encode("utf-8")
    extra["ledger_records"] = str(st.records).encode("ascii")  # where the ledger stood: commit finds what a person decided since
    verify = []
    for part in got:  # this process's items, then the second's: each (bytes or a spool, whether it prints as it is)
        piece, ok = part()
        shown = ok and shown
        if len(piece) if isinstance(piece, bytes) else piece.size:
            verify.append(piece)
    parts["verify"] = verify
    return parts, extra, shown


def rows_text(value: Any) -> Any:
    """A value of the answer in UTF-8: a list of plain rows (`plain_rows`) as pieces of PIECE rows
    joined by commas, made a piece at a time (15k lessons are 4 MB of text); anything else encoded."""
    if type(value) is list:
        pieces = []
        for at in range(0, len(value), PIECE):
            rows = plain_rows(value[at:at + PIECE])
            if rows is None:
                break
            pieces.append(",".join(rows).encode("utf-8"))
        else:
            return pieces
    return dumps(value).encode("utf-8")


def shared_rows(tail: List[Callable[[], Any]], got: List[Callable[[], Any]],
                where: Optional[Path] = None) -> Callable[..., List[bytes]]:
    """`select`'s maker of verify items, sharing a long list with a second process (store/background.py):
    it makes the last items while this one makes the first, reads the lessons and encodes the rest
    of the answer. `got` gets a function giving each part in order — its text (bytes, or a spool
    holding it), and whether it prints as it is (`printable_utf8`, which also names a ledger
    changed in place) — the second's made here when it is called if no second process took it;
    `tail` the second part's as soon as it is begun. `select` itself gets no items (an empty list)."""

    def rows(owed: List[Tuple[PriorState, str, Optional[str]]], scopes: Dict[str, str],
             moves: Dict[str, Dict[str, Any]]) -> List[bytes]:
        cut = int(len(owed) * SHARE)
        first = second = None
        if where is not None and len(owed) >= SPOOL_ITEMS:
            first, second = Spool.open(where), Spool.open(where)
            if first is None or second is None:
                first = second = None

        later = owed[cut:]  # (`select` lets go of the rest)

        def made() -> Tuple[Any, bool]:  # (in the second process: only plain values go back, a spool's size)
            return items_text(later, scopes, moves, second)

        child = start(made, (len(owed) - cut) << 9, SPLIT_BYTES, True)  # (~500 bytes a prior's line; True: short work)
        tail.append(child)
        mine = items_text(owed[:cut], scopes, moves, first)
        got.append(lambda: mine if first is None else _filled(first, mine))
        got.append(child if second is None else lambda: _filled(second, child()))
        return []

    return rows


def _filled(spool: Spool, made: Tuple[int, bool]) -> Tuple[Spool, bool]:
    spool.size = made[0]  # (written by the second process, or here)
    return spool, made[1]


def items_text(owed: List[Tuple[PriorState, str, Optional[str]]], scopes: Dict[str, str],
               moves: Dict[str, Dict[str, Any]], into: Optional[Spool]) -> Tuple[Any, bool]:
    """The verify items of `owed` joined by commas, and whether they print as they are: the text, or
    — written to `into`, PIECE items at a time, never held whole — its length. Every piece is
    checked (`printable_utf8` names a ledger changed in place in any of them)."""
    if into is None:
        text = b",".join(verify_rows(owed, scopes, moves))
        return text, printable_utf8(text)
    into.reset()  # (a second process that failed may have written some)
    ok = True
    for at in range(0, len(owed), PIECE):
        text = b",".join(verify_rows(owed[at:at + PIECE], scopes, moves))
        ok = printable_utf8(text) and ok
        into.write(b"," + text if at else text)
    return into.size, ok


def follow_code(paths: Paths, st: State, ns: str, scopes: Dict[str, str]) -> Dict[str, Any]:
    """What the run needs to judge priors on code that moved or on hashes of before (issue 28), read
    from disk for the few files that need it:

    - `rehashed`: id → the scope's hash now, for a prior of a Python, YAML or Makefile scope whose
      hash differs from the snapshot's but equals the whitespace-blind hash the keeper gave that
      scope before indentation counted — judged then, unchanged since (docs/snapshot.md);
    - `moves` (and `moves_by_id`, for `select`): the run's priors whose definition left a file the
      snapshot holds (or a file gone from disk) and is found again (core/moves.py); `lost`: those
      looked for in vain, whose shape the seal forgets;
    - `shapes`: id → the shape of the definition each prior of the run stands on, where the ledger
      does not know it for this state (the seal keeps those that hold at commit)."""
    live: List[PriorState] = []
    mine: List[PriorState] = []  # the live priors of this namespace
    defs: List[PriorState] = []  # those of them scoped to a definition, it may be (a `#` in the ref)
    changed = set()  # the scopes whose hash in the snapshot is not the one a live prior was judged on
    theirs: List[Tuple[PriorState, str]] = []  # other namespaces' decisions on code the snapshot lacks
    files_gone: List[Tuple[PriorState, str]] = []  # decisions of any namespace on a file it lacks
    held: Optional[set] = None  # the snapshot's hashes, when first asked
    known = st.shapes
    now = scopes.get
    # 100k at a large ledger: one pass, a packed prior's fields by position (PriorState.LAYOUT: 1 status,
    # 2 scope_hash, 5 the record when kept, 7 facets, 8 ns, 9 scope_ref), as `select` reads them
    for p in st.priors.values():
        status, judged = p[1], p[2]
        packed = p[5] is None
        ref = p[9] if packed else p.scope_ref
        if ref is None or status == "redacted" or not isinstance(judged, str):
            continue
        ours = (p[8] if packed else p.ns) == ns
        facets = p[7] if packed else None
        if status in BINDING or (ours and status in ("open", "stale", "challenged") and (
                facets.get("activation") if facets is not None else p.facet("activation")) == "verify-phase"):
            live.append(p)
            if ours:
                mine.append(p)
                if "#" in ref:
                    defs.append(p)
            h = now(ref)
            if h is None:  # (absent from the snapshot: nothing to compare — a person's decision may have moved)
                if status in BINDING and ("#" not in ref or not ours):
                    if held is None:
                        held = set(scopes.values())
                    if judged in held or p[0] in known:  # (what could be found: see below)
                        (theirs if "#" in ref else files_gone).append((p, ref))
            elif h != judged:
                changed.add(ref)
    old = indented_refs(changed)
    blind = blind_hashes(paths.root, sorted(old)) if old else {}
    rehashed = {p.id: scopes[p.scope_ref] for p in live if p.scope_ref in blind
                and blind[p.scope_ref] == p.scope_hash} if blind else {}
    out: Dict[str, Any] = {"rehashed": rehashed}
    missing = [p for p in defs if is_definition(p.scope_ref) and p.scope_ref not in scopes and p.miss < REST_AFTER
               and _left_file(paths, str(p.scope_ref).split("#", 1)[0], scopes)]
    # a person's decision of another namespace follows its code as the namespace's own findings do, for the
    # door's comparison alone (`followed`: no event is written for it); looked for after the namespace's own
    # (only what could be found is looked for on disk: a decision whose shape the ledger keeps, or whose
    # decided hash the snapshot holds — a definition's under its own name elsewhere, a file's as it was)
    others = [p for p, ref in theirs if is_definition(ref) and _left_file(paths, ref.split("#", 1)[0], scopes)]
    moves = []
    followed: List[Dict[str, Any]] = []
    files = sorted({r.split("#", 1)[0] for r in scopes if is_definition(r)}) if missing or others else []
    if files:  # (a snapshot without definitions, `--no-anchors`, says nothing of where one went)
        both = missing + others
        near = definition_shapes(paths.root, files, scopes) if any(p.id in st.shapes for p in both) else {}
        moves = find_moves(both, st.shapes.get, scopes, near, shape_similarity, NEAR)
        if others:
            ours_ = {p.id for p in missing}
            followed = [m for m in moves if m["id"] not in ours_]
            moves = [m for m in moves if m["id"] in ours_]
        if missing:
            out["moves"] = moves
            found = {m["id"] for m in moves}
            out["lost"] = [p.id for p in missing if p.id not in found and p.id in st.shapes]
    gone = [p for p, ref in files_gone if is_file_ref(ref)
            and p.facet("scope") == "content-hash" and not os.path.lexists(os.path.join(str(paths.root), *ref.split("/")))]
    found_files = file_follows(gone, scopes) if gone else []
    if found_files:  # (the content as the snapshot states it, and as it is on disk: a file is read, not believed)
        disk = rehash(paths.root, sorted({m["to"] for m in found_files}))
        followed += [m for m in found_files if disk.get(m["to"]) == m["scope_hash"]]
    if followed:
        out["followed"] = followed
    by_id = {m["id"]: m for m in moves}
    out["moves_by_id"] = by_id
    want: Dict[str, str] = {}
    for p in mine if by_id or rehashed else defs:  # (a file's scope, the common one, has no definition's shape)
        q = as_run_sees(p, by_id, rehashed) if p.id in by_id or p.id in rehashed else p
        ref = q.scope_ref
        if is_definition(ref) and ref in scopes and (p.id not in st.shapes or p.id in by_id
                                                     or (scopes[ref] != q.scope_hash and not p.binding)):
            want[p.id] = str(ref)
    if want:
        got = definition_shapes(paths.root, {r.split("#", 1)[0] for r in want.values()}, scopes)
        out["shapes"] = {pid: got[ref] for pid, ref in sorted(want.items()) if ref in got}
    return out


def _left_file(paths: Paths, file: str, scopes: Dict[str, str]) -> bool:
    """Whether a definition of `file` that the snapshot lacks left it: the snapshot holds the file,
    or the file is gone from disk (a partial snapshot that leaves the file out says nothing)."""
    if file in scopes:
        return True
    parts = file.split("/")
    return not os.path.lexists(os.path.join(str(paths.root), *parts))


def staged_shapes(paths: Paths, rf: RunFiles) -> None:
    """The shapes of the definitions the run's new findings stand on, added to the run's (in memory)
    for the seal to keep (core/moves.py): read from disk at commit, and only from a file still as
    the snapshot hashed it — one edited meanwhile gives its shape in a later run."""
    if not isinstance(rf.relevant, dict):
        return
    scopes = rf.scopes
    want = {r["id"]: r["scope_ref"] for r in rf.staged if isinstance(r, dict) and isinstance(r.get("id"), str)
            and is_definition(r.get("scope_ref")) and r["scope_ref"] in scopes}
    if not want:
        return
    got = definition_shapes(paths.root, {ref.split("#", 1)[0] for ref in want.values()}, scopes)
    old = rf.relevant.get("shapes")
    shapes = dict(old) if isinstance(old, dict) else {}
    shapes.update({pid: got[ref] for pid, ref in want.items() if ref in got})
    rf.relevant = dict(rf.relevant, shapes=shapes)
