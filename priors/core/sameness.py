"""What a person said about two findings being one: `decide X duplicate --of Y` folds X's words into
Y (`State.same_as`), and a finding whose `distinct_from` names a person's decision waits for their
answer (`State.distinct`) — and so does a finding a parallel branch's run made beside a person's
decision it never saw (`State.unseen`, from its seal's mark: core/unseen.py). Pure reads of the
folded state; `fold.apply` keeps the maps.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Tuple

# (`st` is a `fold.State`, `p` a `fold.PriorState`: the fold calls `note`, so this module cannot import it)


def note(st: Any, rec: Dict[str, Any]) -> None:
    """The fold's part: a person's `decide X duplicate --of Y` (obsolete, `same_as` Y) makes X's claim
    one more wording of Y; a prior's `distinct_from` is kept by id, and a seal's `unseen` (`note_unseen`)."""
    pid = rec.get("id")
    if rec.get("t") == "run":
        note_unseen(st, rec)
    if type(pid) is not str:
        return
    if rec.get("t") == "prior" and type(rec.get("distinct_from")) is list:
        st.distinct[pid] = [x for x in rec["distinct_from"] if type(x) is str]
    target = rec.get("same_as")
    if (rec.get("t") == "event" and rec.get("action") == "decide" and rec.get("to") == "obsolete"
            and type(target) is str and pid in st.priors and target != pid):
        if pid not in st.same_as.setdefault(target, []):
            st.same_as[target].append(pid)


def note_unseen(st: Any, rec: Dict[str, Any]) -> None:
    """The fold's part of a seal's `unseen`: each prior its run added (a block ends at its seal, so they
    are the last ones folded) is noted with the decisions the run never saw."""
    mark, run = rec.get("unseen"), rec.get("run")
    if type(mark) is not dict or type(run) is not str:
        return
    named = [k for k in mark if type(k) is str]
    for pid in reversed(st.priors):
        if st.priors[pid].rec.get("born") != run:
            break
        st.unseen[pid] = named


def beside_unseen(st: Any, p: Any) -> List[str]:
    """The decisions a person made, unseen by the parallel branch's run that found finding `p`,
    that `p` stands beside (the same scope, its file or a definition in it, a folder holding it):
    whether it is the same finding is their call, as it would have been at the door (SETTLED_NEARBY). A
    repo-wide finding stands on no scope: it stands beside every repo-wide decision, which the door's
    exact rule compares it with (`protocol._same_scope`)."""
    named = st.unseen.get(p.id)
    wide = p.facet("scope") == "repo-wide"
    if not named or p.redacted or not (wide or isinstance(p.scope_ref, str)) or p.id in st.loop["decided"]:
        return []  # (as `differs_from`: a person's word on it answers it, and nothing else does)
    out = []
    for q in named:
        other = st.priors.get(q)
        if other is not None and other.binding and not other.redacted and (
                (wide and other.facet("scope") == "repo-wide")
                or (isinstance(p.scope_ref, str) and _beside(other.scope_ref, p.scope_ref))
                or (isinstance(p.scope_hash, str) and p.scope_hash == other.scope_hash)):  # its code, moved there
            out.append(q)
    return out


def _beside(a: Any, b: str) -> bool:
    if not isinstance(a, str):
        return False
    if "*" in (a, b) or a.split("#")[0] == b.split("#")[0]:
        return True
    return (a.endswith("/") and b.startswith(a)) or (b.endswith("/") and a.startswith(b))


def wordings(st: Any, pid: str) -> Tuple[str, ...]:
    """The claims a person folded into prior `pid` (`State.same_as`), and theirs in turn — not a
    redacted one's: its content is gone."""
    out: List[str] = []
    seen = {pid}
    todo = list(st.same_as.get(pid, ()))
    while todo:
        other = todo.pop(0)
        if other in seen:
            continue
        seen.add(other)
        q = st.priors.get(other)
        if q is not None and not q.redacted and q.claim:
            out.append(q.claim)
        todo.extend(st.same_as.get(other, ()))
    return tuple(out)


def folded_into(st: Any, pid: str) -> str:
    """The prior a person decided `pid` is the same as (`duplicate --of`), followed to the end: a
    repeat of `pid`'s words is a repeat of that one. `pid` itself when it was folded into none."""
    seen = {pid}
    while True:
        home = next((t for t, ids in st.same_as.items() if pid in ids), None)
        if home is None or home in seen or home not in st.priors:
            return pid
        seen.add(home)
        pid = home


def differs_from(st: Any, p: Any) -> List[str]:
    """The decisions a person made that finding `p` says it differs from (its `distinct_from` naming a
    binding prior): until the person answers — `decide P duplicate --of Q`, `keep` or `reopen` — that
    is their call, whatever an agent's verdict on `p` says since (a `fixed` on unchanged code would
    otherwise clear it: hostile passes 27d, 27f)."""
    named = st.distinct.get(p.id)
    if not named or p.redacted or p.id in st.loop["decided"]:
        return []  # (a person's word on it since — `reopen`: a different finding, left open — answers it)
    out = []
    for q in named:
        other = st.priors.get(q)
        if other is not None and other.binding and not other.redacted:
            out.append(q)
    return out
