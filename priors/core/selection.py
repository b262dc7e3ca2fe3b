"""What `relevant` selects for a run (contract §7): the lessons to inject, the findings to verify —
their fields read from the ledger lines as text, in batches —, the floors, what a person settled on the code under review,
and which scopes a person's decisions need hashed from disk. The door's rules are in protocol.py.
"""

from __future__ import annotations

import bisect

from priors.core.canonical import dumps
from priors.core.fold import REST_AFTER, PriorState, State, prior_number, review_due
from priors.core.inject import given_in_chain, inject_row, lesson_applies
from priors.core.moves import as_run_sees
from priors.core.record_text import COMMON_ROW, line_texts, plain_strings, string_text, value_of, verify_row
from priors.core.vocabulary import BINDING

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

    from priors.core.record_text import Texts

NUDGE_ASK = "still true? reply: decide <id> keep — or retire it"


def select(st: State, ns: str, scopes: Dict[str, str], run: str, settled_cap: int = 50,
           moves: Optional[Dict[str, Dict[str, Any]]] = None, rehashed: Optional[Dict[str, str]] = None,
           rows: Optional[Callable[..., List[bytes]]] = None) -> Dict[str, Any]:
    """Deterministic selection of what applies to a run (contract §7, relevant).

    `verify` comes back as its items' canonical JSON texts in UTF-8 (bytes each), not dicts: a verify
    list can hold 70k items, assembled from their ledger lines' bytes (core/record_text.py), never
    parsed; `opening` joins them into the answer. Every other list holds dicts.

    `settled_here` (a key after the reference's): the binding priors whose scope is in this
    snapshot — what a human settled on the code under review, in this namespace or, as findings,
    in another (with its `ns`: a person's decision holds in every namespace) — at most
    `settled_cap`, in id order, each with `scopeState`: `unchanged` while the code is in the state
    the person decided on (where the door holds the decision), else `changed`;
    `settled_here_more` counts the rest. `moves`: the priors whose definition moved (core/moves.py):
    a verify item says `scopeState: "moved"` with its new `scope_ref`, `moved_from`, and
    `changed: true` when the body was edited too; a binding one is settled here under its new ref.
    `rehashed`: priors judged before indentation counted, unchanged under the old scheme (id → the
    hash they are taken to hold). `rows`: what makes the verify items of the priors owed one (each
    prior, its scope's state, the snapshot's hash; the snapshot; the moves) — `verify_rows` unless
    the caller shares the work out (ops/opening.py); called before the lessons are read, so work it
    hands elsewhere runs beside them."""
    moves = moves or {}
    rehashed = rehashed or {}
    settled = archived = 0
    partial = partial_snapshot(scopes)
    lessons: List[PriorState] = []
    gates: List[Tuple[PriorState, str]] = []
    here: List[PriorState] = []
    more = 0
    owed: List[Tuple[PriorState, str, Optional[str]]] = []  # the verify items, their lines read in batches
    special = bool(rehashed or moves)
    now = scopes.get
    absent: Any = object()  # what `now` gives for a ref the snapshot does not hold
    # A prior at a time, 100k at a large ledger: a packed prior's fields by position (PriorState.LAYOUT:
    # 0 id, 1 status, 2 scope_hash, 5 the record when kept, 7 facets, 8 ns, 9 scope_ref) and
    # `scope_state` written out, as the fold does on its hot path.
    for p in st.priors.values():
        packed = p[5] is None
        if (p[8] if packed else p.ns) != ns:
            if p[1] in BINDING and p[1] != "redacted":  # another namespace's decision holds here too (door 4)
                facets = p[7] if packed else None
                ref = p[9] if packed else p.scope_ref
                if ref is not None and ref in scopes and (
                        facets.get("activation") if facets is not None else p.facet("activation")) == "verify-phase":
                    if len(here) < settled_cap:
                        here.append(p)
                    else:
                        more += 1
            continue
        status = p[1]
        if status == "obsolete" or status == "redacted":
            continue
        if special and (p[0] in rehashed or p[0] in moves):
            p = as_run_sees(p, moves, rehashed)
            packed = p[5] is None
        facets = p[7] if packed else None
        act = facets.get("activation") if facets is not None else p.facet("activation")
        binding = status in BINDING
        if act == "run-start" and lesson_applies(p):  # the one rule `lessons --inject` shares
            lessons.append(p)
        elif act == "verify-phase" and (status == "open" or status == "stale" or status == "challenged"):
            ref = p[9] if packed else p.scope_ref
            current = now(ref, absent) if ref is not None else absent
            if current is absent:
                if partial and not looked_at(ref, scopes):
                    pass  # outside the paths this snapshot covers: not looked at, so not missing either
                elif p.resting:
                    archived += 1
                else:
                    owed.append((p, "missing", None))
            else:
                owed.append((p, "unchanged" if current == p[2] else "changed", current))
        elif binding:
            settled += 1
        if binding:
            ref = p.scope_ref
            if ref is not None and ref in scopes:
                if len(here) < settled_cap:
                    here.append(p)
                else:
                    more += 1
        if act == "propose-gate" and status == "open":
            gates.append((p, scope_state(p, scopes)[0]))
    verify = (rows or verify_rows)(owed, scopes, moves)
    del owed  # (70k tuples at 100k priors: their memory serves the lessons' rows)
    inject: List[Dict[str, Any]] = []
    nudges: List[Dict[str, Any]] = []
    revising: Dict[str, Any] = {}  # an open lesson -> the lesson it revises (`supersedes`)
    for p, texts, rec in with_texts(lessons):  # the record is read, not kept: a large run reads thousands
        item = inject_row(p, value_of(texts[0]) if texts is not None else rec.get("claim"))
        inject.append(item)
        if p[1] == "open":
            revises = value_of(texts[5]) if texts is not None else rec.get("supersedes")
            if revises is not None:
                revising[p[0]] = revises
        if review_due(st, p):
            nudges.append({"id": p.id, "claim": item["claim"], "ask": NUDGE_ASK.replace("<id>", p.id)})
    waiting = one_version(st, revising)
    if waiting:  # (and no nudge of its own: a review an agent's `review_every` asks for is not a person's)
        inject = [i for i in inject if i["id"] not in waiting]
        nudges = [n for n in nudges if n["id"] not in waiting]
    floors: List[Dict[str, Any]] = []
    for (p, state), (_, texts, rec) in zip(gates, with_texts([p for p, _ in gates])):
        if texts is not None:
            ref, depth = value_of(texts[3]), "major" if texts[1] is None else value_of(texts[1])
        else:
            ref, depth = rec.get("scope_ref"), rec.get("depth", "major")
        floors.append(_drop_none({"id": p.id, "scope_ref": ref, "depth": depth, "scopeState": state}))
    settled_here = [dict({"id": p.id, "status": p.status, "scope_ref": p.scope_ref,
                          "claim": value_of(texts[0]) if texts is not None else rec.get("claim"),
                          "scopeState": "unchanged" if scopes.get(p.scope_ref or "") == p.scope_hash else "changed"},
                         **({"ns": p.ns} if p.ns != ns else {}),
                         **({"moved_from": moves[p.id]["from"]} if p.id in moves else {}))  # (newcomer pass 27ai)
                    for p, texts, rec in with_texts(here)]
    out = {"run": run, "ns": ns, "inject": inject, "verify": verify, "nudges": nudges,
           "settled": settled, "archived": archived, "floors": floors,
           "settled_here": settled_here, "settled_here_more": more}
    if waiting:
        out["awaiting_review"] = waiting
    return out


def one_version(st: State, revising: Dict[str, Any]) -> List[str]:
    """The open revisions (`revising`: an open lesson's id -> the lesson it revises) that wait while the
    lesson they revise — or one it revises in turn — is given (`inject.given_in_chain`), in id order: a
    run is never given two versions of one lesson — a person's activation of the revision retires what
    it revises —, so an agent's "Always …" as a revision of a person's "Never …" is never put beside it
    (hostile passes 27aq, 27ar), as `lessons --inject` holds a session's back."""
    memo: Dict[str, Optional[str]] = {}
    return sorted((pid for pid, old in revising.items() if given_in_chain(st, old, memo) is not None),
                  key=lambda i: (prior_number(i), i))


def verify_rows(owed: List[Tuple[PriorState, str, Optional[str]]], scopes: Dict[str, str],
                moves: Dict[str, Dict[str, Any]]) -> List[bytes]:
    """The verify items of `owed` (each prior, its scope's state and the snapshot's hash), as their
    canonical JSON texts in UTF-8: the claim, id, scope ref and severity taken from the ledger line as
    written where it is in the keepers' shape (`record_text.line_texts`), from the parsed record
    otherwise. 2,000 at a time: a line lives only until its item is made."""
    plain = plain_strings([c for _, _, c in owed if c is not None])  # the snapshot's hashes need no escape
    out: List[bytes] = []
    add = out.append
    for at in range(0, len(owed), 2000):
        batch = owed[at:at + 2000]
        got = texts_of([p for p, _, _ in batch])
        left = [p for (p, _, _), t in zip(batch, got) if t is None]
        recs = iter(records_of(left) if left else ())
        for (p, state, current), texts in zip(batch, got):
            moved = moves.get(p[0]) if moves else None
            if texts is not None:
                claim, _, pid, ref, sev, _ = texts
                if (plain and current is not None and moved is None and claim is not None and ref is not None
                        and sev is not None and p[3] < REST_AFTER):  # nearly every item (3: its misses in a row;
                    # an open, stale or challenged prior rests by them alone, `PriorState.resting`)
                    add(COMMON_ROW % (claim, current.encode("utf-8"), pid, STATES[state], ref, sev))
                    continue
            else:
                rec = next(recs)
                claim, ref, sev = (None if rec.get(k) is None else dumps(rec[k]).encode("utf-8")
                                   for k in ("claim", "scope_ref", "severity"))
                pid = string_text(p[0]).encode("utf-8")
            cur = None if current is None else string_text(current).encode("utf-8")
            if moved is None:
                add(verify_row(claim, cur, pid, STATES[state], ref, sev, p.resting))
            else:  # the code moved: the finding follows it (core/moves.py)
                frm = moved["from"]
                add(verify_row(claim, cur, pid, b"moved", ref, sev, p.resting,
                               None if frm is None else dumps(frm).encode("utf-8"), state == "changed"))
    return out


STATES = {"changed": b"changed", "unchanged": b"unchanged", "missing": b"missing"}


def with_texts(ps: List[PriorState]) -> Iterator[Tuple[PriorState, Optional[Texts], Any]]:
    """Each of `ps` with its fields' texts read from its ledger line (`record_text.line_texts`), or —
    a line not in that shape, a record known only in memory — with its record. A batch of 2,000 at a
    time: a line or a record lives only until its item is made."""
    for at in range(0, len(ps), 2000):
        batch = ps[at:at + 2000]
        texts = texts_of(batch)
        left = [p for p, t in zip(batch, texts) if t is None]
        recs = iter(records_of(left) if left else ())
        for p, t in zip(batch, texts):
            yield (p, t, None) if t is not None else (p, None, next(recs))


def texts_of(ps: List[PriorState]) -> List[Optional[Texts]]:
    """`line_texts` of each packed prior of `ps` whose store reads lines back (`lines_many`), in
    order; None for the others and for a line not in the shape."""
    if not ps:
        return []
    first = ps[0][11]  # (5: the record, when it is kept; 11: the store that packed it)
    many = getattr(first, "lines_many", None)
    if many is not None and all(p[5] is None and p[11] is first for p in ps):  # one store packed them all
        try:
            return line_texts(many(ps), [p[0] for p in ps])
        except (OSError, TypeError, ValueError):
            return [None] * len(ps)  # the records are read one by one, which names what is wrong
    out: List[Optional[Texts]] = [None] * len(ps)
    by_store: Dict[int, List[int]] = {}
    for i, p in enumerate(ps):
        if p[5] is None:
            by_store.setdefault(id(p[11]), []).append(i)
    for idxs in by_store.values():
        many = getattr(ps[idxs[0]][11], "lines_many", None)
        if many is None:
            continue
        try:
            lines = many([ps[i] for i in idxs])
        except (OSError, TypeError, ValueError):
            continue  # the records are read one by one, which names what is wrong
        for i, t in zip(idxs, line_texts(lines, [ps[i][0] for i in idxs])):
            out[i] = t
    return out


def records_of(ps: List[PriorState]) -> List[Dict[str, Any]]:
    """The records of `ps`, in order: each store that packed some reads them back in one batch where
    it can (`inflate_many`: one read and one parse a megabyte at a time, not one of each per
    record)."""
    out: List[Any] = [p[5] for p in ps]
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


def each_record(ps: Iterable[PriorState], batch: int = 1024) -> Iterator[Tuple[PriorState, Dict[str, Any]]]:
    """Each of `ps` with its record, read back `batch` at a time (`records_of`: one read and one parse
    a batch, not one of each a record) and kept by none — for a reader that writes a row a prior."""
    held: List[PriorState] = []
    for p in ps:
        held.append(p)
        if len(held) == batch:
            yield from zip(held, records_of(held))
            held = []
    if held:
        yield from zip(held, records_of(held))


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
        if p[1] not in BINDING:  # (1: the status — most priors are not a person's decision)
            continue
        ref = p.scope_ref
        if (ref is not None and ref not in refs and not p.redacted
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


def scope_state(p: PriorState, scopes: Dict[str, str]) -> Tuple[str, Optional[str]]:
    """(missing|unchanged|changed, the snapshot's hash when present)."""
    ref = p.scope_ref
    if ref is None or ref not in scopes:
        return "missing", None
    cur = scopes[ref]
    return ("unchanged" if cur == p.scope_hash else "changed"), cur
