"""What a run from a parallel branch did not see: the person's decisions made meanwhile on the other side.

Two branches grow the ledger from one base. On ours a person decides P-0001 `wontfix`; on theirs an
agent's run, which saw P-0001 open, gives it a verdict and finds something else beside it. The
merge driver puts our lines first (so `verify --since <our old tip>` holds) and theirs after: read
in that order, their run stands after a decision it never saw, and the replay would hold it to it
(`SETTLED_NEARBY`, or `RERAISE` from another namespace) — an honest merge failing `verify`.

So the driver writes on each of their seals what that run saw of the priors our side's people
decided: `"unseen": {"P-0001": "open"}` — the status each had in the run's own ledger (the base and
their lines before the seal), `null` for a prior the run's ledger did not hold. The replay judges the
block against those states instead (`as_seen`); nothing else changes. The mark is an agent-side
line's field like any other: the structural checks and the replay name a mark that is malformed or
names a prior no person decided before the block, and `verify` with git (ops/verify.py
`merge_marks`) holds every mark a compared change adds to the merge it came from, by recomputing
it with `marks` below; `verify --no-git` believes it, as it believes a line's hashes.
"""

from __future__ import annotations

from priors.core.fold import PriorState, State, apply
from priors.core.vocabulary import PRIOR_RE, STATUSES

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: `relevant` and `lessons --inject` read this module
    from typing import Any, Dict, List, Optional, Sequence

UNSEEN = "unseen"  # the seal's field


def is_seal(rec: Dict[str, Any]) -> bool:
    """An agent's run seal: the record a mark goes on (a person's `add`/`import` seal is judged as theirs)."""
    return rec.get("t") == "run" and rec.get("action") == "commit" and rec.get("by") != "human"


def decided_ids(ours_new: Sequence[Dict[str, Any]]) -> List[str]:
    """The priors a person decided in our new lines, in order of first decision."""
    return list(dict.fromkeys(r["id"] for r in ours_new if r.get("t") == "event" and r.get("action") == "decide"
                              and isinstance(r.get("id"), str)))


def marks(base: Sequence[Dict[str, Any]], ours_new: Sequence[Dict[str, Any]],
          theirs_new: Sequence[Dict[str, Any]]) -> List[Optional[Dict[str, Optional[str]]]]:
    """For each of their new records (not renumbered yet), the entries the merge adds to its mark — a
    seal's: each prior our people decided whose status in that run's ledger is not the one the merged
    ledger gives it there — or None.

    A prior our side decided is either the base's (their lines name it by the same id: only new ids
    are renumbered) or born on our side, which their runs never saw (`None`)."""
    decided = decided_ids(ours_new)
    out: List[Optional[Dict[str, Optional[str]]]] = [None] * len(theirs_new)
    if not decided or not any(is_seal(r) for r in theirs_new):
        return out
    theirs, merged = State(), State()  # the run's ledger, and the merged one, as far as these priors go
    wanted = set(decided)  # (a prior's status is made by its own lines alone: only theirs are folded)
    for rec in base:
        if rec.get("t") in ("prior", "event") and rec.get("id") in wanted:
            apply(theirs, rec)
            apply(merged, rec)
    known = {pid for pid in decided if pid in theirs.priors}
    for rec in ours_new:
        if rec.get("t") in ("prior", "event") and rec.get("id") in wanted:
            apply(merged, rec)
    for i, rec in enumerate(theirs_new):
        if is_seal(rec):
            saw = {pid: (theirs.priors[pid].status if pid in known else None) for pid in decided}
            now = merged.priors
            got = {pid: saw[pid] for pid in decided if saw[pid] != (now[pid].status if pid in now else None)}
            out[i] = got or None
        if rec.get("t") in ("prior", "event") and rec.get("id") in known:
            apply(theirs, rec)  # (their lines on a base prior; their own new priors are never ours to mark)
            apply(merged, rec)
    return out


def with_mark(rec: Dict[str, Any], added: Optional[Dict[str, Optional[str]]]) -> Dict[str, Any]:
    """`rec` with `added` joined to the mark it already carries (from a merge on their side)."""
    if not added:
        return rec
    have = rec.get(UNSEEN)
    mark = dict(added)
    if isinstance(have, dict):
        mark.update(have)  # (what it already says it did not see, it saw least of: a decision made even earlier)
    return dict(rec, **{UNSEEN: {k: mark[k] for k in sorted(mark, key=_id_order)}})


def _id_order(pid: str) -> tuple:
    m = PRIOR_RE.match(pid)
    return (0, int(m.group(1)), pid) if m else (1, 0, pid)


def mark_problem(mark: Any) -> Optional[str]:
    """Why a seal's `unseen` is not one the driver writes, or None."""
    if not isinstance(mark, dict) or not mark:
        return "`unseen` maps prior ids to the status each had in the run's ledger (or null)"
    for pid, status in mark.items():
        if not PRIOR_RE.match(pid):
            return f"`unseen` names {pid!r}, which is not a prior id"
        if status is not None and status not in STATUSES:
            return f"`unseen` gives {pid} the status {status!r}, which no prior has"
    return None


def as_seen(p: PriorState, mark: Dict[str, Optional[str]]) -> Optional[PriorState]:
    """`p` as the marked run saw it: in the status its ledger gave it (a copy), or None when its ledger
    did not hold it."""
    if p.id not in mark:
        return p
    status = mark[p.id]
    if status is None:
        return None
    if status == p.status:
        return p
    q = p.copy()
    q.status = status
    return q


def seen_through(ps: List[PriorState], mark: Any) -> List[PriorState]:
    """`ps` as a marked run saw them (`as_seen`), less those its ledger did not hold; `ps` unmarked."""
    if not mark:
        return ps
    return [q for q in (as_seen(p, mark) for p in ps) if q is not None]


def lessons_unseen(st: State, p: PriorState) -> List[str]:
    """The lessons a person decided (accepted, wontfix, retired) that the run of agent lesson `p` — a
    parallel branch's, cut before those decisions — never saw, while `p` is open and undecided. Had the
    run seen them, the door might have refused `p` as their rewording (door 5); the replay judges the
    run as it saw the ledger. So `p` waits for the person: held back from every run and session
    (`relevant`, `lessons --inject`) like a proposal awaiting review, and `status --calls` says which of
    those decisions it reads like (`lesson_likeness.reads_like_unseen`). Cheap, with no measure: a run's
    start pays nothing for it (hostile pass 27u)."""
    named = st.unseen.get(p.id)
    if not named or p.status != "open" or p.redacted or p.id in st.loop["decided"] \
            or p.facet("activation") != "run-start":
        return []
    out = []
    for qid in named:
        q = st.priors.get(qid)
        if q is not None and not q.redacted and q.facet("activation") == "run-start" \
                and (q.binding or q.status == "obsolete"):
            out.append(qid)
    return out
