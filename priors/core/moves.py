"""Findings and decisions follow code that moved (issue 28): a definition holding priors goes missing
and the run's snapshot holds one whose body, without its name, is the same or nearly the same —
renamed in place or moved to another file. Pure rules over plain data; the shapes themselves are
computed from disk by `snapshot/shapes.py`.

In the ledger a move is an event in the run's block, before its verdicts:
`{"t":"event","action":"moved","id","run","by":"agent","from":old ref,"to":new ref,["scope_hash"]}`
— `scope_hash` (the new definition's) only when the body is the same, so that the prior stays
`unchanged` there; a moved and edited one keeps its old hash and is `changed`. The reference keeper
skips an action it does not know, so it reads the prior on its old ref (missing) as before. Each
run's seal keeps, in `shapes`, the shape of every definition a prior was judged on whose shape the
ledger did not know yet (`""` forgets one: its code is gone and no move was found), which is what
the next run compares a vanished definition with.
"""

from __future__ import annotations

from priors.core.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, List, Optional

MOVED = "moved"


def note_shapes(st: Any, rec: Dict[str, Any]) -> None:
    """The fold's part: a run seal's `shapes` (prior id → shape, `""` to forget one) into `st.shapes`."""
    shapes = rec.get("shapes")
    if rec.get("t") != "run" or not isinstance(shapes, dict):
        return
    for pid, shape in shapes.items():
        if type(shape) is not str:
            continue
        if shape:
            st.shapes[pid] = shape
        else:
            st.shapes.pop(pid, None)


def move(p: Any, to: Any, sh: Any) -> None:
    """A `moved` event on the folded prior `p`: its scope is `to` from now on, and its hash `sh` when
    the event gives one (the body is the same: unchanged there). Its record is held in memory with
    the new ref — the ledger's prior line keeps the ref it was born with."""
    if type(to) is not str or p.redacted:
        return
    rec = p.rec
    if rec.get("scope_ref") != to:
        p.rec = dict(rec, scope_ref=to)
    if type(sh) is str:
        p.scope_hash = sh


def moved_copy(p: Any, m: Dict[str, Any]) -> Any:
    """`p` as it stands once the run's move `m` is recorded (a copy: the folded state is untouched)."""
    q = p.copy()
    move(q, m.get("to"), m.get("scope_hash"))
    return q


def as_run_sees(p: Any, moves: Dict[str, Dict[str, Any]], rehashed: Dict[str, str]) -> Any:
    """`p` as this run judges it (a copy when it differs): judged before indentation counted and
    unchanged under the old scheme, it holds the scope's hash now (`rehashed`); its definition
    moved, it stands on the new one (`moves`)."""
    if p.id in rehashed:
        p = p.copy()
        p.scope_hash = rehashed[p.id]
    if p.id in moves:
        p = moved_copy(p, moves[p.id])
    return p


def is_definition(ref: Any) -> bool:
    return isinstance(ref, str) and "#" in ref and not ref.endswith("#")


def find_moves(missing: List[Any], known: Callable[[str], Optional[str]], scopes: Dict[str, str],
               shapes: Dict[str, str], similarity: Callable[[str, str], float], near: float) -> List[Dict[str, Any]]:
    """The moves of a run, in the order of `missing` (priors whose definition is not in `scopes`):
    each the definition of `shapes` (ref → shape, from disk) most like the prior's last shape
    (`known(pid)`), the same body without its name or sharing at least `near` of its lines; a tie
    goes to the prior's own file, then the first ref. Without a known shape (a prior judged before
    shapes were kept) only the same body under the same name elsewhere counts: a definition whose
    hash is the prior's. A definition an earlier move of the run took is no target again."""
    taken: Dict[str, str] = {}  # target ref -> the ref that moved there (priors on one definition move together)
    out: List[Dict[str, Any]] = []
    for p in missing:
        old = p.scope_ref
        file = old.split("#", 1)[0]
        mine = known(p.id)
        best = None
        went = [t for t, o in taken.items() if o == old]
        if went and mine is None:
            best = ((1.0 if scopes[went[0]] == p.scope_hash else 0.0, True), went[0])
        elif mine:
            for ref in sorted(shapes):
                if taken.get(ref, old) != old or ref == old:
                    continue
                score = similarity(mine, shapes[ref])
                if score < near:
                    continue
                key = (score, ref.split("#", 1)[0] == file)
                if best is None or key > best[0]:
                    best = (key, ref)
        else:
            tail = "#" + old.split("#", 1)[1]
            same = [r for r in sorted(scopes) if r.endswith(tail) and r != old and taken.get(r, old) == old
                    and scopes[r] == p.scope_hash]
            if len(same) == 1:
                best = ((1.0, False), same[0])
        if best is None:
            continue
        ref = best[1]
        taken[ref] = old
        m: Dict[str, Any] = {"id": p.id, "from": old, "to": ref}
        if best[0][0] >= 1.0:
            m["scope_hash"] = scopes[ref]
        out.append(m)
    return out


def move_events(st: Any, rf: Any) -> List[Dict[str, Any]]:
    """The `moved` events a commit writes for the moves `relevant` found (its stored `relevant.json`,
    staging anyone can edit): each must name a live prior of the run's namespace still on the ref it
    moved from, a ref the snapshot lacks, to a definition the snapshot holds (with its hash, when
    the body is the same) — else the commit is refused MALFORMED_STAGING."""
    out: List[Dict[str, Any]] = []
    scopes = rf.scopes
    for pid, m in rf.moves.items():
        p = st.priors.get(pid)
        old, new, sh = m["from"], m["to"], m.get("scope_hash")
        if (p is None or p.ns != rf.ns or p.redacted or p.scope_ref != old or old in scopes or new not in scopes
                or not is_definition(new) or (sh is not None and sh != scopes[new])):
            raise Refusal("MALFORMED_STAGING", run=rf.run, file=f".priors/runs/{rf.run}/relevant.json", line=1,
                          because={"rule": f"the move of {pid} from {old} to {new} is none the keeper found"},
                          hint=f"`priors abort --run {rf.run}` and open the run again")
        ev: Dict[str, Any] = {"t": "event", "id": pid, "action": MOVED, "run": rf.run, "from": old, "to": new}
        if sh is not None:
            ev["scope_hash"] = sh
        out.append(ev)
    return out


def seal_shapes(st: Any, rf: Any) -> Dict[str, str]:
    """The seal's `shapes` (`st`: the ledger with the run's lines folded in): the shape of each
    definition a prior of the run now holds as judged — its hash the snapshot's — that the ledger
    did not know; and `""` for each prior whose definition the run looked for and did not find
    (`relevant.json`'s `lost`): it is looked for once, in the run that lost it."""
    got = (rf.relevant or {}).get("shapes")
    shapes = got if isinstance(got, dict) else {}
    scopes = rf.scopes
    out: Dict[str, str] = {}
    for pid in sorted(shapes):
        shape, p = shapes[pid], st.priors.get(pid)
        if (isinstance(shape, str) and shape and p is not None and p.ns == rf.ns and not p.redacted
                and p.scope_ref in scopes and p.scope_hash == scopes[p.scope_ref] and st.shapes.get(pid) != shape):
            out[pid] = shape
    lost = (rf.relevant or {}).get("lost")
    for pid in sorted(x for x in lost if isinstance(x, str)) if isinstance(lost, list) else ():
        p = st.priors.get(pid)
        if pid not in out and pid in st.shapes and p is not None and p.ns == rf.ns and p.scope_ref not in scopes:
            out[pid] = ""
    return out


def is_file_ref(ref: Any) -> bool:
    """A file's scope ref: no definition, no folder, not the whole repo."""
    return isinstance(ref, str) and "#" not in ref and not ref.endswith("/") and ref not in ("", "*")


def file_follows(gone: List[Any], scopes: Dict[str, str]) -> List[Dict[str, Any]]:
    """Where a person's decisions on whole files that are gone (`gone`: binding priors scoped to a file
    the snapshot lacks and the disk no longer holds) went: every file of the snapshot whose content
    hash is the decided scope state — git's exact rename detection (a rename plus an edit is a new
    file). `{id, from, to, scope_hash}` each, by prior, then target."""
    want = {p.scope_hash for p in gone}
    by_hash: Dict[str, List[str]] = {}
    for ref in sorted(scopes):
        h = scopes[ref]
        if h in want and is_file_ref(ref):
            by_hash.setdefault(h, []).append(ref)
    return [{"id": p.id, "from": p.scope_ref, "to": ref, "scope_hash": p.scope_hash}
            for p in gone for ref in by_hash.get(p.scope_hash, ())]


def followed_copies(followed: List[Dict[str, Any]], priors: Dict[str, Any], keep: Callable[[Any], bool]) -> List[Any]:
    """The door's copies of the binding priors `followed` takes to where their code went (a decision of
    another namespace on a moved definition; a decision on a file renamed as it was) — for its
    comparison alone: no `moved` event is written for them. `keep`: which priors (their namespace)."""
    out = []
    for m in followed:
        p = priors.get(m["id"])
        if p is not None and p.binding and not p.redacted and p.scope_ref == m["from"] and keep(p):
            out.append(moved_copy(p, m))
    return out
