"""What `relevant` selects for a run (contract §7): the lessons to inject, the findings to verify —
their records read back in batches —, the floors, what a person settled on the code under review,
and which scopes a person's decisions need hashed from disk. The door's rules are in protocol.py.
"""

from __future__ import annotations

import bisect

from priors.core.fold import PriorState, State, review_due, scope_state
from priors.core.inject import inject_item, lesson_applies
from priors.core.moves import as_run_sees
from priors.core.vocabulary import BINDING

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Tuple

NUDGE_ASK = "still true? reply: decide <id> keep — or retire it"


def select(st: State, ns: str, scopes: Dict[str, str], run: str, settled_cap: int = 50,
           moves: Optional[Dict[str, Dict[str, Any]]] = None, rehashed: Optional[Dict[str, str]] = None
           ) -> Dict[str, Any]:
    """Deterministic selection of what applies to a run (contract §7, relevant).

    `settled_here` (a key after the reference's): the binding priors whose scope is in this
    snapshot — what a human settled on the code under review — at most `settled_cap`, in id order;
    `settled_here_more` counts the rest. `moves`: the priors whose definition moved (core/moves.py):
    a verify item says `scopeState: "moved"` with its new `scope_ref`, `moved_from`, and
    `changed: true` when the body was edited too; a binding one is settled here under its new ref.
    `rehashed`: priors judged before indentation counted, unchanged under the old scheme (id → the
    hash they are taken to hold)."""
    moves = moves or {}
    rehashed = rehashed or {}
    inject: List[Dict[str, Any]] = []
    verify: List[Dict[str, Any]] = []
    nudges: List[Dict[str, Any]] = []
    floors: List[Dict[str, Any]] = []
    settled = archived = 0
    partial = partial_snapshot(scopes)
    here: List[Dict[str, Any]] = []
    more = 0
    owed: List[Tuple[PriorState, str, Optional[str]]] = []  # the verify items, their records read in one batch
    for p in st.in_ns(ns):
        if p.status in ("obsolete", "redacted"):
            continue
        if p.id in rehashed or p.id in moves:
            p = as_run_sees(p, moves, rehashed)
        act = p.facet("activation")
        if lesson_applies(p):  # the one rule `lessons --inject` shares
            item = inject_item(p)  # the record is read, not kept: a large run reads thousands
            inject.append(item)
            if review_due(st, p):
                nudges.append({"id": p.id, "claim": item["claim"], "ask": NUDGE_ASK.replace("<id>", p.id)})
        elif act == "verify-phase" and p.status in ("open", "stale", "challenged"):
            state, current = scope_state(p, scopes)
            if state == "missing" and partial and not looked_at(p.scope_ref, scopes):
                pass  # outside the paths this snapshot covers: not looked at, so not missing either
            elif p.resting and state == "missing":
                archived += 1
            else:
                owed.append((p, state, current))
        elif p.binding:
            settled += 1
        if p.binding and p.scope_ref is not None and p.scope_ref in scopes:
            if len(here) < settled_cap:
                here.append({"id": p.id, "status": p.status, "scope_ref": p.scope_ref, "claim": p.record().get("claim")})
            else:
                more += 1
        if act == "propose-gate" and p.status == "open":
            state, _ = scope_state(p, scopes)
            rec = p.record()
            floors.append(_drop_none({"id": p.id, "scope_ref": rec.get("scope_ref"), "depth": rec.get("depth", "major"),
                                      "scopeState": state}))
    for at in range(0, len(owed), 2000):  # read in batches: a record lives only until its item is made
        batch = owed[at:at + 2000]
        for (p, state, current), rec in zip(batch, records_of([p for p, _, _ in batch])):
            item = {"id": p.id, "claim": rec.get("claim"), "scope_ref": rec.get("scope_ref"),
                    "severity": rec.get("severity"), "scopeState": state, "current_hash": current}
            if p.resting:
                item["resurrected"] = True
            if p.id in moves:  # the code moved: the finding follows it (core/moves.py)
                item.update(scopeState="moved", moved_from=moves[p.id]["from"])
                if state == "changed":
                    item["changed"] = True
            verify.append(_drop_none(item, keep_null=("claim",)))
    return {"run": run, "ns": ns, "inject": inject, "verify": verify, "nudges": nudges,
            "settled": settled, "archived": archived, "floors": floors,
            "settled_here": here, "settled_here_more": more}


def records_of(ps: List[PriorState]) -> List[Dict[str, Any]]:
    """The records of `ps`, in order: each store that packed some reads them back in one batch where
    it can (`inflate_many`: a verify list of 70k items is one read and one parse a megabyte at a time,
    not 70k of each)."""
    out: List[Any] = [p[5] for p in ps]  # (5: the record, when it is kept; 11: the store that packed it)
    by_store: Dict[int, List[int]] = {}
    for i, p in enumerate(ps):
        if out[i] is None:
            by_store.setdefault(id(p[11]), []).append(i)
    for idxs in by_store.values():
        store = ps[idxs[0]][11]
        many = getattr(store, "inflate_many", None)
        recs = many([ps[i] for i in idxs]) if many is not None else [store.inflate(ps[i]) for i in idxs]
        for i, rec in zip(idxs, recs):
            out[i] = rec
    return out


def partial_snapshot(scopes: Dict[str, str]) -> bool:
    """A snapshot of folders (`--snapshot src/`): it holds the folders it covers whole and no `*`, so
    a finding outside them was not looked at. One with `*` (the whole tree), or with no folder at all
    (a map of files), covers everything, as it always did."""
    return "*" not in scopes and any(r.endswith("/") for r in scopes)


def looked_at(ref: Optional[str], scopes: Dict[str, str]) -> bool:
    """Whether a snapshot of folders (`partial_snapshot`) covers where `ref` lies, so that its absence
    means the code is gone: the scope's file, or a folder holding it is in it."""
    if ref is None:
        return True
    file = ref.split("#", 1)[0]
    if file in scopes:
        return True
    parts = file.rstrip("/").split("/")
    return any("/".join(parts[:i]) + "/" in scopes for i in range(1, len(parts)))


def settled_refs(st: State, scopes: Dict[str, str]) -> List[str]:
    """The scopes holding a binding prior (of any namespace) scoped to code — a file, a definition, a
    folder, `*` — that are in `scopes` or related to a ref in it (contain it or lie inside it): the
    keeper hashes these from disk itself, whatever the run's snapshot says or leaves out, so an
    invented hash can never make a person's decision look out of date, and a snapshot that holds
    `a.py#parse` but not `a.py` cannot keep a finding on `a.py#parse` from meeting a person's
    decision on `a.py` (the door compares by meaning only with a scope the snapshot holds
    unchanged). (A tool or environment scope is no file: its hash is taken as given.)"""
    keys = sorted(scopes)
    refs = set()
    for p in st.priors.values():
        ref = p.scope_ref
        if (ref is not None and p[1] in BINDING and ref not in refs and not p.redacted
                and p.facet("scope") not in ("tool-version", "env-fingerprint")
                and (ref in scopes or _touches(ref, scopes, keys))):
            refs.add(ref)
    return sorted(refs)


def _touches(ref: str, scopes: Dict[str, str], keys: List[str]) -> bool:
    """Whether a ref of `scopes` (`keys`: its refs, sorted) contains `ref` or lies inside it
    (`similarity.scopes_related`), without comparing `ref` with every ref of the snapshot."""
    if not keys:
        return False
    if ref == "*" or "*" in scopes:
        return True
    path, _, inner = ref.partition("#")
    parts = path.split("/")
    for i in range(1, len(parts)):  # the folders holding it
        if "/".join(parts[:i]) + "/" in scopes:
            return True
    if inner:  # the file of a definition, and the definitions it is nested in
        names = inner.split(".")
        if path in scopes or any(path + "#" + ".".join(names[:i]) in scopes for i in range(1, len(names))):
            return True
    lead = ref if ref.endswith("/") else ref + ("." if inner else "#")
    i = bisect.bisect_left(keys, lead)
    return i < len(keys) and keys[i].startswith(lead)


def _drop_none(d: Dict[str, Any], keep_null: tuple = ()) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None or k in keep_null}


