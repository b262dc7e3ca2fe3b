"""What `verify` judges a change's lines on: the code in the checkout, where the door would have.

The ledger keeps no snapshot of the code a run saw, only the hashes its lines state, and `verify`
believes them — but the door never takes a run's word for a scope that holds a person's binding
decision: it hashes it from disk (ops/opening.py `settled_from_disk`), and it moves a finding only
when its definition is gone (core/moves.py). So for the lines a compared change adds (`verify
--since`, or the lines not yet committed), `verify` hands the replay the code's own hashes of the
scopes they name (ops/verify.py `on_the_code`), and these two rules judge them as the door did.
Pure: the hashes come in as a mapping (whose `fetch`, when it has one, reads more of them at once).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from priors.core.fold import PriorState
from priors.core.grammar import Candidate
from priors.core.moves import is_definition, is_file_ref, moved_copy
from priors.core.scope_index import ScopeIndex
from priors.core.unseen import seen_through
from priors.core.vocabulary import PRIOR_RE, id_number


def as_on_disk(decided: Tuple[ScopeIndex, ...], disk: Any, cand: Candidate, scopes: Dict[str, str],
               current: Any, stated: Any = None, mark: Any = None) -> Tuple[Dict[str, str], Any, str, Dict[str, str]]:
    """(scopes, the finding's own hash, a note for the message, the decisions judged as holding the
    scope's hash now) as the door would have judged `cand`:
    every person's binding scope around it (`decided`: indexes of every namespace's) is taken in the state the
    code has (`disk`), as the door hashes it from disk whatever the run's snapshot says — a line
    typed into the ledger with a made-up hash for a person's scope, to make it look changed, or on
    the file or folder around it, stating nothing of it, is judged on the code as it is. A run from
    a parallel branch, merged after the person decided, never saw the decision: its seal says so
    (`mark`, core/unseen.py), and the decision is taken as the run saw it. `stated`: every scope the
    block states, `scopes`' and those it states two hashes for (which `scopes` leaves out: no run's
    snapshot holds two), for the message. A decision
    recorded before indentation counted whose scope is unchanged under that scheme (`disk.blind`)
    holds the scope's hash now, as the door judges it (`rehashed`, core/moves.py `as_run_sees`)."""
    if stated is None:
        stated = scopes
    around = [p for index in decided if index.items for p in seen_through(index.around(cand), mark)
              if isinstance(p.scope_ref, str) and p.binding and not p.redacted]
    fetch = getattr(disk, "fetch", None)
    if fetch is not None and around:  # (verify's `OnDisk`: the scopes it has not read yet, read together)
        fetch([p.scope_ref for p in around])
    out: Optional[Dict[str, str]] = None
    moved: List[str] = []
    rehashed: Dict[str, str] = {}
    blind = getattr(disk, "blind", None)
    for p in around:
        ref = p.scope_ref
        h = disk.get(ref)
        if h is not None and h != p.scope_hash and blind is not None and blind(ref) == p.scope_hash:
            rehashed[p.id] = h
        if h is None or scopes.get(ref) == h:  # type: ignore[arg-type]  # (`around` holds only str refs)
            continue
        if out is None:
            out = dict(scopes)
        said = (f"the ledger says {scopes[ref]}" if ref in scopes else "the ledger states two hashes" if ref in stated
                else "the run's lines state nothing of it")
        moved.append(f"{ref}: {said}, the code is {h}")
        out[ref] = h  # type: ignore[index]
    if out is None:
        return scopes, current, "", rehashed
    own = cand.scope_ref
    if isinstance(own, str) and own in out and disk.get(own) is not None:
        current = disk.get(own)  # (the door stamps a finding on a person's scope with the hash from disk)
    return out, current, (" — judged, as the door judges a person's scope, on the code in this checkout ("
                          + "; ".join(sorted(set(moved))) + ")"), rehashed


def unfounded_move(p: PriorState, disk: Any, to: Any, shape: Optional[str] = None) -> Optional[str]:
    """Why a `moved` event could not be the keeper's, or None: it carries `p`, a person's decision,
    away from a definition the code still holds in the state they decided on — the keeper moves a
    finding only when its definition is gone, so this one would set their decision on other code and
    leave its own free for a re-raise — or, its definition gone, onto one whose shape is not `shape`
    (the one the ledger recorded for it) while another definition — in its file or the target's, else
    anywhere in the checkout (hostile pass 27al) — holds that shape or one nearly the same and more
    like it than the target: the keeper moves a finding to the definition most like its recorded shape
    (core/moves.py `find_moves`), so this one would leave the code a person decided on free for a
    re-raise under its new name (hostile pass 27ah)."""
    ref = p.scope_ref
    if not p.binding or p.redacted or not isinstance(ref, str):
        return None
    if disk.get(ref) == p.scope_hash:
        return (f"event moves {p.id}, which a person made {p.status}, from {ref} to {to!r}, but the checkout still "
                f"holds {ref} in the state they decided on — the keeper moves a finding only when its definition is "
                "gone: the keeper never wrote this line")
    have, inside = getattr(disk, "shape", None), getattr(disk, "inside", None)
    like, near = getattr(disk, "like", None), getattr(disk, "near", 1.0)
    here = have(to) if have is not None and isinstance(to, str) and is_definition(to) else None
    if not shape or here == shape or have is None or inside is None or not isinstance(to, str) or not is_definition(to):
        return None
    score = like(shape, here) if like is not None and here else 0.0
    went, best = None, max(near, score)
    files = sorted({ref.split("#", 1)[0], to.split("#", 1)[0]})
    for where in (files, ["*"]):  # its file and the target's first; the whole checkout only when neither holds it
        for r in (r for f in where for r in inside(f)):  # (the keeper looks at every definition of its snapshot)
            theirs = have(r) if r != to and is_definition(r) and (where is files or r.split("#", 1)[0] not in files) \
                else None
            got = 1.0 if theirs == shape else like(shape, theirs) if like is not None and theirs else 0.0
            if got > best:
                went, best = r, got
        if went is not None:
            break
    if went is None:
        return None
    how = "its code — the shape the ledger recorded for it —" if best == 1.0 else "code nearly the same as its own"
    return (f"event moves {p.id}, which a person made {p.status}, from {ref} to {to}, but the checkout holds {how}"
            f" at {went}, and {to} is other code: the keeper moves a finding to the definition most like its code, so"
            " the keeper never wrote this line")


def unfounded_shape(p: PriorState, disk: Any, shape: Any) -> Optional[str]:
    """Why a seal's `shapes` entry for `p`, a person's decision, could not be the keeper's, or None: the
    checkout holds its definition in the state they decided on, and the keeper takes a shape only from
    that code (`""` only when the definition is gone) — a made-up or forgotten shape is what a later run
    follows a renamed or moved definition by, so this one would leave the decision behind and the
    re-raise on the new name free."""
    ref = p.scope_ref
    if (not p.binding or p.redacted or type(shape) is not str or not isinstance(ref, str) or "#" not in ref
            or disk.get(ref) != p.scope_hash):
        return None
    have = getattr(disk, "shape", None)
    real = have(ref) if have is not None else None
    if real is None or real == shape:
        return None
    said = "forgets its shape (\"\")" if shape == "" else f"gives it the shape {shape!r}"
    return (f"run record {said} for {p.id}, which a person made {p.status}, but the checkout still holds {ref} in "
            f"the state they decided on, whose shape is {real} — the keeper takes a shape only from the code "
            "(and forgets one only when its definition is gone): the keeper never wrote this line")


def decided_by_code(rp: Any) -> Tuple[Dict[str, List[PriorState]], Dict[str, List[PriorState]]]:
    """The priors a person ever made binding (`rp.in_decided`) by what a move is found by: those on a
    definition by its last shape (`rp.st.shapes`), those on a whole file by its decided content hash.
    Made when first asked and kept until a seal or a `moved` event (`judge_change_line`) or a new decision."""
    got = rp.by_code
    if got is not None and got[0] == len(rp.in_decided):
        return got[1]
    shapes: Dict[str, List[PriorState]] = {}
    files: Dict[str, List[PriorState]] = {}  # (by hash alone: what else a decision must be, asked of the few found)
    known, priors = rp.st.shapes, rp.st.priors
    for pid in rp.in_decided:
        p = priors.get(pid)
        if p is None:
            continue
        shape = known.get(pid) if known else None
        if shape:
            shapes.setdefault(shape, []).append(p)
        else:
            files.setdefault(p.scope_hash, []).append(p)
    rp.by_code = (len(rp.in_decided), (shapes, files))
    return shapes, files


def followed_here(rp: Any, cand: Candidate,
                  scopes: Dict[str, str]) -> Optional[Tuple[List[PriorState], Dict[str, str], str, str]]:
    """A change's finding (judged on the code, `rp.disk`) on a definition whose shape in the checkout is
    the recorded shape of a person's decided definition that the checkout no longer holds at its own
    ref — or on a file whose content is the decided state of a person's decision on a file gone from
    the checkout (an exact rename) — stands where that decision's code went, as the door follows a
    move (core/moves.py): (the decisions moved there, `scopes` with the finding's scope as the code
    has it, that hash, a note for the message), or None. So does a finding on a file, a folder or `*`
    that holds such a definition or file (hostile pass 27h: the door relates the finding to the
    decision where `relevant` followed it, inside the finding's scope). Only the finding's own ref is
    read, and the decisions looked up by its shape or hash — or, for a finding around code (a file, a
    folder, `*`), and only while a person's decided code is gone from its own ref, the code inside it."""
    ref = cand.scope_ref
    definition = is_definition(ref)
    if not isinstance(ref, str) or not ref:
        return None
    shapes, files = decided_by_code(rp)
    disk = rp.disk
    pairs: List[Tuple[PriorState, str, str]] = []  # (a decision, where its code went, that code's hash)
    if definition or is_file_ref(ref):
        pairs.extend(_gone_to(disk, ref, definition, shapes, files))
    if not definition:
        inside = getattr(disk, "inside", None)
        if inside is not None and _any_gone(disk, shapes, files):
            for inner in inside(ref):
                pairs.extend(_gone_to(disk, inner, is_definition(inner), shapes, files))
    h = disk.get(ref) if pairs else None
    if h is None:
        return None
    pairs.sort(key=lambda x: (id_number(PRIOR_RE, x[0].id), x[1]))
    how = ("its shape in this checkout is the one the person decided on" if definition
           else "its content in this checkout is the state the person decided on (an exact rename)"
           if all(not is_definition(to) for _p, to, _h in pairs)
           else "the code in this checkout is the one the person decided on")
    note = "".join(f" — the code of {p.id} moved there from {p.scope_ref}" for p, _to, _h in pairs)
    out = dict(scopes)
    out[ref] = h
    for _p, to, th in pairs:
        out[to] = th
    return [moved_copy(p, {"to": to, "scope_hash": th}) for p, to, th in pairs], out, h, f"{note} ({how})"


def _any_gone(disk: Any, shapes: Dict[str, List[PriorState]], files: Dict[str, List[PriorState]]) -> bool:
    """Whether any person's decision the code can be followed by stands on a ref the checkout no longer holds."""
    for group in list(shapes.values()) + list(files.values()):
        for p in group:
            if p.binding and not p.redacted and (is_definition(p.scope_ref) or is_file_ref(p.scope_ref)) \
                    and disk.get(p.scope_ref) is None:
                return True
    return False


def _gone_to(disk: Any, ref: str, definition: bool, shapes: Dict[str, List[PriorState]],
             files: Dict[str, List[PriorState]]) -> List[Tuple[PriorState, str, str]]:
    """The decisions whose code, gone from their own ref, is `ref`'s (a definition by shape, a file by its content hash)."""
    if definition:
        have = getattr(disk, "shape", None) if shapes else None
        key = have(ref) if have is not None else None
        got = shapes.get(key) if key is not None else None
    else:
        h = disk.get(ref) if files else None
        got = files.get(h) if h is not None else None
    h = disk.get(ref) if got else None
    if h is None:
        return []
    return [(p, ref, h) for p in got  # type: ignore[union-attr]
            if p.binding and not p.redacted and p.scope_ref != ref
            and (is_definition(p.scope_ref) if definition else
                 is_file_ref(p.scope_ref) and p.facet("scope") == "content-hash")
            and disk.get(p.scope_ref) is None]


def judge_change_line(rp: Any, no: int, rec: Any) -> None:
    """The replay's (`rp`, core/ledger_replay.py) judging, on the code, of a line the compared change adds
    (from `rp.from_line` on, with `rp.disk` the code's own hashes) that no candidate rule reads: a `moved`
    event (MOVE_UNFOUNDED) and a seal's `shapes` (SHAPE_UNFOUNDED), each of a person's decision."""
    if rec is not None and rp.by_code is not None:
        rp.by_code = None  # (a seal's shapes or a move: `decided_by_code` is made again when next asked)
    if rec is None or not rp.disk or no < rp.from_line:
        return
    if rec.get("t") == "event" and rec.get("action") == "moved":
        pid: Any = rec.get("id")
        p = rp.st.priors.get(pid) if isinstance(pid, str) else None
        why = unfounded_move(p, rp.disk, rec.get("to"), rp.st.shapes.get(pid)) if p is not None and rp.judges(p.ns) \
            else None
        if why is not None:
            rp.add(no, "MOVE_UNFOUNDED", why)
    shapes = rec.get("shapes") if rec.get("t") == "run" else None
    for pid, shape in sorted(shapes.items()) if isinstance(shapes, dict) else ():
        p = rp.st.priors.get(pid)
        why = unfounded_shape(p, rp.disk, shape) if p is not None and rp.judges(p.ns) else None
        if why is not None:
            rp.add(no, "SHAPE_UNFOUNDED", why)
