"""The priors a proposal is checked against (`ProposePool`): the run's namespace as the run sees it —
its code's moves and its verdicts applied — and the run's staged priors, indexed by scope. Split from
protocol.py (the door's rules), which judges each candidate against it.

A run's verdicts are applied to a prior when the pool hands it out (`ProposePool.seen`), not to every
prior up front: at 100k priors on a ledger of open findings a run judges 70k, and a copy of each (the
folded state itself stays as it is) held ~14 MB beside the fold, where a candidate meets a handful.
"""

from __future__ import annotations

from priors.core.fold import PriorState, State, new_prior
from priors.core.grammar import Candidate
from priors.core.lesson_likeness import KnownKeys, Likeness, claim_of
from priors.core.lessons import is_lesson, person_settled
from priors.core.letters import plain_letters
from priors.core.moves import as_run_sees, followed_copies
from priors.core.named_ground import ground_of
from priors.core.run_files import RunFiles
from priors.core.scope_index import ScopeIndex
from priors.core.similarity import claim_key
from priors.core.sorted_strings import SortedStrings
from priors.core.verdicts import Verdicts
from priors.core.vocabulary import BINDING

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, Iterator, List, Optional, Tuple


def read_key(claim: str) -> str:
    """A claim's `claim_key` as it reads (`letters.plain_letters`: look-alike letters as the Latin ones they
    show): what a lesson is held to a person's decided finding by (door 7; hostile pass 27aj)."""
    return claim_key(plain_letters(claim))


def verdict_lines(st: State, rf: RunFiles) -> Dict[Any, Any]:
    """Prior id -> where in the run's verdicts a line that is an object names it (several: a list, in
    order), for the priors of the run's namespace."""
    out: Dict[Any, Any] = {}
    priors, ns = st.priors, rf.ns
    for i, pid, _ in rf.dispositions.verdicts():
        p = priors.get(pid)
        if p is not None and p.ns == ns:
            got = out.get(pid)
            out[pid] = i if got is None else got + [i] if type(got) is list else [got, i]
    return out


def as_judged(p: PriorState, at: Any, verdicts: Verdicts, own: bool) -> PriorState:
    """`p` with the run's verdicts at the positions `at` applied in order — those on a prior that is
    (or has just become) binding are not. `own`: `p` is the pool's own copy, changed in place;
    otherwise it is copied on the first verdict that applies (the folded state stays as it is)."""
    for i in at if type(at) is list else (at,):
        if p.binding:
            continue
        if not own:
            p, own = p.copy(), True
        _, to, sh = verdicts.effect(i)
        if isinstance(sh, str):
            p.scope_hash = sh
        p.miss = 0
        p.status = "open" if to in ("still-open", "reaffirmed") else (to if isinstance(to, str) else p.status)
    return p


def run_view(st: State, rf: RunFiles) -> Iterator[Tuple[PriorState, bool]]:
    """The namespace's priors in ledger order as the run saw them — code that moved, hashes of before
    (a copy each: True beside it) — before its verdicts."""
    moves, rehashed = rf.moves, rf.rehashed
    touched = set(moves) | set(rehashed)
    for p in st.in_ns(rf.ns):
        if touched and p.id in touched:
            yield as_run_sees(p, moves, rehashed), True
        else:
            yield p, False


def with_run_dispositions(st: State, rf: RunFiles) -> Iterator[PriorState]:
    """The namespace's priors as they would stand with this run's dispositions applied, one at a time."""
    at = verdict_lines(st, rf)
    for p, own in run_view(st, rf):
        lines = at.get(p.id)
        yield p if lines is None else as_judged(p, lines, rf.dispositions, own)


def staged_states(staged: List[Any]) -> List[PriorState]:
    out = []
    for rec in staged:
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            sh = rec.get("scope_hash")
            out.append(new_prior(rec["id"], rec, "open", sh if isinstance(sh, str) else None))
    return out


class ProposePool(ScopeIndex):
    """The priors a proposal is checked against — the namespace's, with this run's verdicts applied,
    then the run's staged ones — as a `ScopeIndex`.

    Kept on the run while the ledger state and the run's verdicts are the ones it was built from;
    staged priors are indexed as they are appended. The index holds the priors as the ledger folds
    them; each is handed out as the run's verdicts leave it (`seen`), worked out on first use."""

    __slots__ = ("st", "dispositions", "n_disp", "staged", "n_staged", "ns", "other", "rehashed", "followed", "settled_lessons",
                 "decided_claims", "likes", "keep_likes", "known", "at", "made", "lazy")

    def __init__(self, st: State, rf: RunFiles) -> None:
        ScopeIndex.__init__(self)
        self.st, self.dispositions, self.n_disp = st, rf.dispositions, len(rf.dispositions)
        self.staged, self.n_staged = rf.staged, 0
        self.ns = rf.ns
        self.rehashed = rf.rehashed
        self.followed = rf.followed  # decisions followed to where their code went (core/moves.py)
        self.other: Optional[ScopeIndex] = None  # the binding priors of other namespaces, indexed on first use
        self.settled_lessons: Optional[List[PriorState]] = None  # other namespaces' lessons a person decided (first use)
        self.decided_claims: Optional[Dict[str, List[PriorState]]] = None  # claim key -> a person's findings (`decided`)
        self.likes: Dict[str, Likeness] = {}  # a lesson's claim -> its Likeness, worked out once for the pool (`like`)
        self.keep_likes = rf.keep_likes  # (False: one candidate — each kept Likeness ~6 KB, 7,000 lessons at 100k)
        self.known: Optional[KnownKeys] = rf.known_keys  # lessons' signatures from earlier calls (`most_similar_lesson`)
        self.at = verdict_lines(st, rf)  # prior id -> its verdicts' positions
        self.made: Dict[int, PriorState] = {}  # id() of a prior held -> it as the run's verdicts leave it
        # The priors are indexed by ref when a candidate first asks around a ref (`indexed`): a repo-wide one (every
        # lesson, `suggest`'s) meets only the repo-wide priors, those on `*` and the lessons (~6 MB at 100k priors)
        self.lazy = True
        self.refs = None
        items = self.items
        items.extend(st.in_ns(rf.ns))
        moves, rehashed = rf.moves, rf.rehashed
        touched = set(moves) | set(rehashed)
        for pos, p in enumerate(items) if touched else ():  # what the run saw: code that moved, hashes of before
            if p.id in touched:
                p = items[pos] = as_run_sees(p, moves, rehashed)  # (the pool's own copy: its verdicts applied now, in place)
                lines = self.at.get(p.id)
                self.made[id(p)] = p if lines is None else as_judged(p, lines, rf.dispositions, True)
        for p in followed_copies(self.followed, st.priors, lambda q: q.ns == self.ns) if self.followed else ():
            self.made[id(p)] = p  # (a person's decision followed to where its code went: no verdict applies)
            self.items.append(p)

    def fields(self) -> tuple:
        return ScopeIndex.__slots__ + self.__slots__

    def fits(self, st: State, rf: RunFiles) -> bool:
        return (self.st is st and self.dispositions is rf.dispositions and self.n_disp == len(rf.dispositions)
                and self.staged is rf.staged and self.n_staged <= len(rf.staged))

    def catch_up(self, rf: RunFiles) -> None:
        new = rf.staged[self.n_staged:]
        self.n_staged = len(rf.staged)
        for p in staged_states(new):
            self.made[id(p)] = p  # (staged by this run: no verdict of it applies)
            self.add(p)

    def add(self, p: PriorState) -> None:
        if self.lazy:
            self.items.append(p)  # (indexed with the rest when a candidate first asks around a ref)
        else:
            ScopeIndex.add(self, p)

    def indexed(self) -> None:
        """Every prior held indexed as `ScopeIndex.add` indexes each — by ref, and the repo-wide ones —, once."""
        if not self.lazy:
            return
        self.lazy = False
        wide, hold = self.wide, self.hold
        for pos, p in enumerate(self.items):
            ref = p.scope_ref
            if isinstance(ref, str):
                hold(ref, pos)
            if p.facet("scope") == "repo-wide":
                wide.append(pos)
        self.refs = SortedStrings(sorted(self.by_ref))

    def seen(self, p: PriorState) -> PriorState:
        """`p`, a prior the pool holds, as the run's verdicts leave it (the same object each time; `p` itself
        when no verdict names it — its own copies, which hold theirs already, included)."""
        got = self.made.get(id(p))
        if got is None:
            lines = self.at.get(p.id)
            got = p if lines is None else as_judged(p, lines, self.dispositions, False)
            if got is not p:
                self.made[id(p)] = got
        return got

    def around_ref(self, ref: Optional[str]) -> List[PriorState]:
        if ref is None and self.lazy:  # (a repo-wide candidate: the repo-wide priors and those on `*`, in pool order)
            got = [p for p in self.items if p.facet("scope") == "repo-wide" or p.scope_ref == "*"]
        else:
            if ref != "*":
                self.indexed()
            got = ScopeIndex.around_ref(self, ref)
        at = self.at  # (a prior no verdict of the run names is handed out as it is held: most, a candidate meets thousands)
        return [self.seen(p) if p.id in at else p for p in got] if at else got

    def settled_elsewhere(self, cand: Candidate) -> List[PriorState]:
        """The binding priors of every other namespace around the candidate's scope (as `around`):
        a person's decision holds in every namespace (indexed on first use)."""
        if self.other is None:
            self.other = ScopeIndex()
            for p in self.st.priors.values():
                if p[1] in BINDING and p.ns != self.ns and not p.redacted:  # (p[1]: the status)
                    self.other.add(as_run_sees(p, {}, self.rehashed) if p.id in self.rehashed else p)
            for p in followed_copies(self.followed, self.st.priors, lambda q: q.ns != self.ns) if self.followed else ():
                self.other.add(p)
        return self.other.around(cand) if self.other.items else []

    def named_ground(self, cand: Candidate) -> List[PriorState]:
        """The decisions `named_ground` may hold `cand` to: every namespace's binding priors in the file of
        a definition `cand` stands on, or inside the file, folder or `*` it stands on."""
        base = ground_of(cand)
        if base is None:
            return []
        self.settled_elsewhere(cand)  # (indexes the other namespaces' decisions)
        return self.around_ref(base) + (self.other.around_ref(base) if self.other is not None and self.other.items else [])

    def lessons(self, pool: List[PriorState], elsewhere: List[PriorState]) -> Tuple[List[PriorState], List[PriorState]]:
        """For a lesson: `pool` and `elsewhere` with every lesson of the namespace (staged too) and every one
        a person decided elsewhere, whatever their scopes (core/lesson_likeness.py says why)."""
        if self.settled_lessons is None:
            self.settled_lessons = [p for p in self.st.priors.values() if p.ns != self.ns and is_lesson(p)
                                    and person_settled(p)]
        have = {p.id for p in pool}
        # (`is_lesson` reads a facet, which no verdict changes, and the status, which one may: asked again as seen)
        at = self.at
        mine = [q for q in (self.seen(p) if p.id in at else p for p in self.items if p.facet("activation") == "run-start")
                if q.id not in have and is_lesson(q)]
        there = {p.id for p in elsewhere}
        return pool + mine, list(elsewhere) + [p for p in self.settled_lessons if p.id not in there]

    def like(self, claim: str) -> Likeness:
        """A lesson's `Likeness`, worked out once while the pool lasts. A lesson candidate is compared with
        every lesson of its namespace: `likeness`'s own cache holds 4,096, so at a namespace of more (7,000
        at 100k priors) each candidate of a run, and each again at commit, worked out every one anew (~1 s).
        Its signature goes to `known`, for later calls (store/lesson_keys.py keeps them). Not kept where the
        run judges one candidate (`RunFiles.keep_likes`: `suggest`), which meets each lesson once: ~40 MB at 100k."""
        got = self.likes.get(claim)
        if got is None:
            got = Likeness(claim, self.keep_likes)  # (meeting each lesson once: its reading is not kept either)
            if self.keep_likes:
                self.likes[claim] = got
            if self.known is not None:
                self.known.put(claim, got)
        return got

    def decided(self, cand: Candidate) -> List[PriorState]:
        """A person's decided findings (and floors) of every namespace, whatever their scopes, whose claim is
        the candidate's (`claim_key`): what a lesson is held to from door 7 (`judge_pool`). Indexed on first use."""
        if self.decided_claims is None:
            self.decided_claims = {}
            for p in self.st.priors.values():
                if p[1] in BINDING and not p.redacted and not is_lesson(p):  # (each record read, not kept: ~5 MB at 100k)
                    self.decided_claims.setdefault(read_key(claim_of(p.record())), []).append(p)
        return self.decided_claims.get(read_key(cand.claim), [])


def pool_for(st: State, rf: RunFiles) -> ProposePool:
    """The run's pool, built once while its ledger state and verdicts are the same, its staged priors caught up."""
    pool = rf._pool
    if pool is None or not pool.fits(st, rf):
        pool = rf._pool = ProposePool(st, rf)
    pool.catch_up(rf)
    return pool
