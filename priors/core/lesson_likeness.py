"""When a lesson says what another lesson says in other words (door 5).

Findings have been compared by meaning since issue 28; lessons were compared only when their words
folded alike, so a lesson a person retired (`obsolete`) or settled (`wontfix`, `accepted`), reworded,
came back as a new open lesson and was injected into the next run. From `door: 5` the door compares a
lesson candidate with the lessons of its namespace by `similarity.similar` (the same measure and
threshold as findings), and with the lessons a person decided in every namespace (`core/protocol.py`,
`judge_pool`); `verify` replays the rule for every run sealed by that door.

A lesson's scope does not choose where it is given (`lessons --inject` ignores it), nor its namespace
which coding session gets it (`lessons --inject` gives every namespace's): so lessons are compared
whatever their scopes, and a lesson a person decided — accepted, marked `wontfix` or retired — holds in
every namespace.

A namespace can hold thousands of lessons and a figure costs ~0.1–0.15 ms, so neither the door nor
`verify`'s replay works one out for every pair. Three steps, each exact — they change how many
figures are worked out, never the answer; property tests hold the measure to each:

- `signature`: every key under which two claims can share weight in the measure (the same term, two
  words the other writes as one, an `un-` prefix, related ideas, claims that fold alike). Disjoint
  signatures: figure 0.
- `could_be_similar`: a bound on the figure from what each claim holds (`Likeness`, worked out once a
  claim), a few microseconds a pair: a pair it rules out cannot reach the threshold. On lessons that
  share words but say different things it rules out nearly every pair that meets.
- `LessonIndex.meeting` (the replay's lookup): a pair can pass the bound only if one claim holds a key
  of the other's `Likeness.head` — its keys but the commonest, as many of those as could not bring the
  pair to the threshold together (prefix filtering over the bound's weights) — so a lesson meets only
  the lessons holding a key of its head or whose head holds one of its keys, and only those passing the
  bound are given.

What they bought is measured in docs/reliability.md ("Lessons by meaning at scale").
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from priors.core.errors import Refusal
from priors.core.lessons import is_lesson, person_settled
from priors.core.letters import plain_letters
from priors.core.lexicon import KIN
from priors.core.reading import DETAIL_WEIGHT, clash, fold, read
from priors.core.similarity import KIN_SHARE, SIMILAR_AT, claim_key, forget_joins, similar
from priors.core.unseen import lessons_unseen
from priors.core.vocabulary import DOOR, PERSON_STATUSES, REVISION_DOOR, SETTLED_LESSON_DOOR, prior_number

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

    from priors.core.fold import PriorState
    from priors.core.grammar import Candidate

    Terms = Tuple[Tuple[Tuple[str, ...], FrozenSet[Any], float], ...]


def is_lesson_line(facets: Any) -> bool:
    """A run-start prior: shown to a run at its start (a lesson), never dispositioned."""
    return type(facets) is dict and facets.get("activation") == "run-start"


@lru_cache(maxsize=4096)
def signature(claim: str) -> FrozenSet[Any]:
    """Every key under which `claim` can share weight with another claim in `similarity.similarity`:
    its terms as the measure reads them (with no scope: a lesson has no code of its own), each pair of
    adjacent terms joined (`hard coded` meeting `hardcoded`), a term's `un-`-less form (`unescaped`
    meeting `escape`), the groups of related ideas a term is in (`lexicon.KIN`), and the claim's fold
    (`claim_key`: claims that fold alike are 1.0 whatever they weigh). Disjoint signatures ⇒ figure 0. Of the
    claim's `plain_letters`, as lessons are compared: the keys of its `Likeness`, and its fold."""
    like = likeness(claim)
    return frozenset(like.signature())


class Likeness:
    """What `could_be_similar` needs of a lesson's claim, worked out once: its `plain_letters` (`said`) and
    fold (`key`: `claim_key`); per key of its `signature` the most weight a term of the measure's can carry
    under it (`weights`: a term, two adjacent terms joined, the `un-`-less form of either); the
    `lexicon.KIN` groups of those keys (`kin`, `groups`). Its terms (`terms`) are its own words with the
    keys and groups each could be compared under — its own, its joins with its neighbours, their
    `un-`-less forms — and the least weight each keeps when the other claim has none of them (a name
    weighs nothing there: a name the other spells out is set to 0, and a number may fall to
    `DETAIL_WEIGHT`); of them it holds what all keep (`total`) and, per key or `("kin", group)`, what the
    terms it touches keep together (`loss`), and the terms themselves only once `kept` has needed them:
    the bound with what a side can lose at most settles all but a few pairs in a thousand of lessons that
    differ (262 of 154,222 in the replay of a 46k ledger sealed door 7), and the replay holds a Likeness
    for every lesson (the terms are a third of one). Tuples and one dict, not sets, for the same reason
    (`groups` is the one set, and mostly the one empty set every Likeness shares)."""

    __slots__ = ("key", "said", "weights", "kin", "groups", "total", "loss", "terms")

    def __init__(self, claim: str, cached: bool = True) -> None:
        said = plain_letters(claim)
        self.said, self.key = said, claim_key(said)
        weights, terms = _parts(said, cached)
        self.weights = weights
        self.kin = tuple((v, KIN[k]) for k, v in weights.items() if k in KIN)
        self.groups: FrozenSet[Any] = frozenset(g for _v, gs in self.kin for g in gs) if self.kin else _NONE
        loss: Dict[Any, float] = {}  # a key or ("kin", group) → what its terms keep, together
        for under, gs, v in terms:
            for k in under + tuple(("kin", g) for g in gs):
                loss[k] = loss.get(k, 0.0) + v
        for k, v in loss.items():
            loss[k] = _one(v)
        self.total = sum(v for _u, _g, v in terms)
        self.loss = loss
        self.terms: Optional[Terms] = None  # (worked out again the first time `kept` needs them: see there)

    def kept(self, other: "Likeness") -> float:
        """The least weight this claim keeps beside `other`: its terms none of whose keys or groups `other` has."""
        weights, groups = other.weights, other.groups
        total = 0.0
        terms = self.terms
        if terms is None:
            terms = self.terms = _parts(self.said)[1]
        for under, gs, v in terms:
            for k in under:
                if k in weights:
                    break
            else:
                if gs is _NONE or gs.isdisjoint(groups):
                    total += v
        return total

    def signature(self) -> List[Any]:
        """Its keys and its fold: `signature`'s, kept by the door between calls (`KnownKeys`)."""
        return self.keys() + [("key", self.key)]

    def keys(self) -> List[Any]:
        """Its signature less its fold: the keys the index files it under (`("kin", group)` for a group)."""
        return list(self.weights) + [("kin", g) for g in self.groups]

    def head(self, filed: Dict[Any, Any]) -> List[Any]:
        """The keys of which another claim must have one for the pair to pass `could_be_similar` on this
        claim's account (its figure's bound reaching the threshold with this side's kept weight; prefix
        filtering). Each key weighs what it can add to the shared weight when the other has it — its
        most weight, half its related ideas' — and what it can take from this side's kept weight (each
        term it touches, times `_RATIO`): a pair reaches the threshold on this side's account only if the
        keys the other has weigh `_RATIO` times this side's whole kept weight or more. So the commonest
        keys (`filed`: the lessons holding each), as many as weigh less than that together, cannot do it
        alone: the rest are the head. Any choice of keys would be as exact; the commonest left out makes
        the lookup short."""
        mass: Dict[Any, float] = dict(self.weights)
        for v, gs in self.kin:
            for g in gs:
                mass[("kin", g)] = mass.get(("kin", g), 0.0) + KIN_SHARE * v
        for k, keep in self.loss.items():
            mass[k] = mass.get(k, 0.0) + _RATIO * keep
        budget = _RATIO * self.total * (1.0 - 1e-9) - 1e-9  # (a margin for float sums, on the safe side)
        order = sorted(mass, key=lambda k: -(1 if type(n := filed.get(k)) is int else len(n or ())))  # (`_post`)
        spent = 0.0
        for i, k in enumerate(order):
            spent += mass[k]
            if spent >= budget:
                return order[i:]
        return []


_NONE: FrozenSet[Any] = frozenset()
_FLOATS: Dict[float, float] = {}


def _one(v: float) -> float:
    """One object for each of the few values a `loss` holds (sums of a handful of weights): a Likeness holds
    ~15, 24 bytes each, and the replay one for every lesson (~3 MB of verify's process at 100k priors)."""
    got = _FLOATS.get(v)
    if got is None:
        if len(_FLOATS) >= 4096:
            return v
        got = _FLOATS[v] = v
    return got


def _parts(said: str, cached: bool = True) -> Tuple[Dict[str, float], Terms]:
    """A claim's `weights` and terms, as `Likeness` describes them. Not `cached`: the claim's reading is not
    kept among `reading.read`'s 4,096 (a verb that meets each lesson once, `suggest`: ~9 MB at 100k priors)."""
    items = (read if cached else read.__wrapped__)(said).items
    weights: Dict[str, float] = {}
    near: List[List[Tuple[str, float]]] = [[(t, w)] for t, w in items]
    for i in range(len(items) - 1):  # a pair joined weighs the heavier of the two
        joined = (fold(items[i][0] + items[i + 1][0]), max(items[i][1], items[i + 1][1]))
        near[i].append(joined)
        near[i + 1].append(joined)
    touch: Dict[str, set] = {}
    keeps: Dict[str, float] = {}
    for (t, w), keys in zip(items, near):
        keys = keys + [(fold(k[2:]), v) for k, v in keys if k.startswith("un") and len(k) > 5]
        for k, v in keys:
            if k.isdigit() and v < DETAIL_WEIGHT:
                v = DETAIL_WEIGHT  # (a number the other claim has none of is set to it, whatever it weighed)
            if v > weights.get(k, -1.0):
                weights[k] = v
        touch.setdefault(t, set()).update(k for k, _v in keys)
        least = 0.0 if t.startswith("=") else min(w, DETAIL_WEIGHT) if t.isdigit() else w
        keeps[t] = max(keeps.get(t, 0.0), least)
    terms = []
    for t, v in keeps.items():
        if v > 0.0:
            under = tuple(sorted(touch[t]))
            gs = frozenset(g for k in under for g in KIN.get(k, ()))
            terms.append((under, gs or _NONE, v))
    return weights, tuple(terms)


@lru_cache(maxsize=4096)
def likeness(claim: str) -> Likeness:
    """(Cached: the door compares one candidate with every lesson of a namespace, each in turn. Its reading
    is not kept among `reading.read`'s: read once here, and a figure's rare second reading is cheaper than
    verify's replay keeping 4,096 lessons' readings it never asks for again, ~8 MB of each half at 100k.)"""
    return Likeness(claim, False)


def could_be_similar(a: Likeness, b: Likeness) -> bool:
    """False only when `similarity.similarity` of the two claims (as they read) is certainly under
    `SIMILAR_AT`, whatever `polar` (its caps only lower a figure) — so a lesson it rules out needs no figure.
    The bound: the weight the two can share, `S`, is at most each common key's lighter most weight, plus
    half the lighter side's weight in related ideas (`KIN_SHARE`); a side's weight is at least `S` plus
    what its terms that nothing of the other's touches keep (joins, `un-` forms and related ideas all need a
    key or group of the other's, and so does a term another is merged into); so the figure, the mean of the
    Dice and overlap coefficients, is at most the mean of `2S / (kept a + kept b + 2S)` and
    `S / (S + the lesser kept)`.
    Claims with disjoint signatures share nothing: False at once. A property test holds the figure to it."""
    if a.key == b.key:
        return True  # (claims that fold alike are 1.0)
    wa, wb = a.weights, b.weights
    common = wa.keys() & wb.keys()
    groups = a.groups & b.groups if a.kin and b.kin else _NONE
    if not common and not groups:
        return False
    # the weight shared, and — first with what each side can lose at most, every term a common key touches,
    # counted once a key — what each keeps: a bound at least as high as the exact one, which is worked out
    # only when this one does not settle it (one loop over the common keys: this runs for every pair the
    # replay's lookup finds, ~750k at 100k priors)
    lost_a, lost_b = a.loss, b.loss
    shared, la, lb = 0.0, a.total, b.total
    for k in common:
        v, w = wa[k], wb[k]
        shared += v if v < w else w
        la -= lost_a.get(k, 0.0)
        lb -= lost_b.get(k, 0.0)
    if groups:
        ka = sum(v for v, gs in a.kin if not gs.isdisjoint(groups))
        kb = sum(v for v, gs in b.kin if not gs.isdisjoint(groups))
        shared += KIN_SHARE * min(ka, kb)
        for g in groups:
            la -= lost_a.get(("kin", g), 0.0)
            lb -= lost_b.get(("kin", g), 0.0)
    if shared <= 0.0:
        return False
    if _bound(shared, la if la > 0.0 else 0.0, lb if lb > 0.0 else 0.0) < _AT:
        return False
    return _bound(shared, a.kept(b), b.kept(a)) >= _AT


def _bound(shared: float, la: float, lb: float) -> float:
    """The figure's bound for shared weight `shared` and kept weights `la`, `lb` (see `could_be_similar`)."""
    return shared / (la + lb + 2.0 * shared) + 0.5 * shared / (shared + (la if la < lb else lb))


# A revision denies the person's lesson it revises when, read as though neither denied anything, it says
# nearly all of it (this figure or more) and the reading finds one denying what the other says: `Always log
# user email addresses in plain text` beside `Never log …` (0.96) — not `Mask user email addresses before
# logging them` (0.70), a refinement whose `logging` the reading also sees on the other side of a `never`
# (newcomer pass 27as). A denial in more words of its own waits for the person instead (`selection.one_version`).
DENIES_AT = 0.85
_AT = SIMILAR_AT - 0.006  # (the figure is rounded to two places: 0.445 reads as 0.45; a margin for float sums)
_RATIO = _AT / (1.0 - _AT)  # S / (S + kept) >= _AT  ⟺  S >= _RATIO * kept


# What a person's decision on a lesson did, for a refusal's hint. `wontfix` on a lesson is binding like
# `accepted` (the protocol injects open, accepted and wontfix run-start priors): it does not turn it down.
_SETTLED = {"accepted": "a person accepted this lesson",
            "wontfix": "a person settled this lesson as wontfix (binding, like accepted: it is still injected)",
            "obsolete": "a person retired this lesson"}


def lineage(priors: Dict[str, PriorState], pid: Any, replaced: Optional[Dict[str, List[str]]] = None) -> FrozenSet[str]:
    """`pid` and every lesson it superseded, and they in turn — the lesson a revision revises and the
    lessons it replaced — while it stands; nothing once a person retired it: a revision of a retired
    lesson is judged against all of them. A redaction rewrites a prior's line as a tombstone that no
    longer says what it superseded: for a redacted `pid`, every prior before it (what it replaced is
    not known: a revision of it is judged against none of them, as the door judged it when `pid`
    stood); for one further down the walk, `replaced` (`verify`'s replay, which meets the tombstone
    before the redaction) gives those a person's decision retired as "superseded by" it. (A loop a hand
    edit made ends the walk.)"""
    first = priors.get(pid) if isinstance(pid, str) else None
    if first is not None and first.redacted and prior_number(pid):
        # its tombstone no longer says what it revised, which the door set aside when it stood: any lesson
        # before it may have been (hostile pass 27at: a person redacted the middle of a chain of revisions,
        # and verify named its revision, which the keeper wrote, as a re-raise of the first)
        return frozenset(q for q in priors if 0 < prior_number(q) < prior_number(pid))
    if first is None or first.redacted or first.status == "obsolete":
        return frozenset()
    out: set = set()
    todo = [pid]
    while todo:
        one = todo.pop()
        p = priors.get(one)
        if p is None or one in out:
            continue
        out.add(one)
        rec = p.rec
        if rec.get("redacted") is True:
            todo.extend(replaced.get(one, ()) if replaced is not None else ())
        elif isinstance(rec.get("supersedes"), str):
            before = priors.get(rec["supersedes"])
            # a lesson retired while its revision was still open was retired outright, not replaced by it
            # (hostile pass 27u: a chain of open revisions walked through it to a person's retired lesson)
            if before is not None and (before.status != "obsolete" or p.binding or p.status == "obsolete"):
                todo.append(rec["supersedes"])
    return frozenset(out)


def claim_of(rec: Dict[str, Any]) -> str:
    """A record's claim as `PriorState.claim` reads it (a hand edit's other value: the empty claim)."""
    c = rec.get("claim")
    return c if isinstance(c, str) else ""


def most_similar_lesson(pool: List[PriorState], cand: Candidate, revised_from: FrozenSet[str] = frozenset(),
                        door: int = DOOR, like: Any = None,
                        known: Optional[KnownKeys] = None, keep: bool = True) -> Optional[Tuple[PriorState, float]]:
    """(lesson, figure) for the lesson of `pool` (in pool order, whatever their scopes) that says what the
    lesson candidate says in other words — the highest figure, the first on a tie — or None. Skipped:
    redacted priors and findings; the lesson the candidate revises (`supersedes`: a revision says much
    the same on purpose) unless a person retired it — while it stands, also the lessons it replaced
    (`revised_from`: `lineage` of the revised lesson) — but, from `door: 8`, where it denies one a person
    accepted or set as wontfix (only a person reverses their decision), and an agent's other revision of that lesson
    (two proposals for one lesson, for a person to choose); and one the candidate names in
    `distinct_from` unless a person decided it (the agent's word that it is another lesson sets aside an
    agent's lesson, never a person's decision). Compared as they read (`plain_letters`). A lesson a person
    decided comes first (its refusal is the one no agent's word answers), and from `door: 6` it is met
    whatever the candidate denies (`similar`'s `polar`): its opposite is no more an agent's to say than
    its rewording, and a misspelt `Nevr` or `Donʼt` must not read as a denial of it (hostile pass 27v).
    `like`: a claim → its `Likeness` (`LessonIndex.like`, which keeps every lesson's), else `likeness`.
    `known`: each lesson's `signature` as the door last worked it out (`KnownKeys`): a lesson whose
    signature is disjoint from the candidate's is under the threshold (`could_be_similar` says so in
    every branch below), so its `Likeness` is never worked out. `keep`: False where one candidate is judged
    (`suggest`): each lesson's record is read for its claim and not kept (~14 MB at 100k)."""
    if not is_lesson_line(cand.facets):
        return None
    revised = cand.raw.get("supersedes")
    skip = set(cand.distinct_from)
    like = likeness if like is None else like
    mine = like(cand.claim)
    sig = frozenset(mine.signature()) if known is not None else None
    best: Optional[Tuple[PriorState, float]] = None
    blind = door >= SETTLED_LESSON_DOOR
    for p in pool:
        if not is_lesson(p):  # (asked first: a finding's record is never read, let alone kept — suggest at 100k ~30 MB)
            continue
        claim = p.claim if keep else claim_of(p.record())
        if not isinstance(claim, str):
            continue
        if known is not None:
            theirs_keys = known.get(claim)
            if theirs_keys is not None and sig.isdisjoint(theirs_keys):  # type: ignore[union-attr]
                continue
        settled = person_settled(p)
        if (p.id == revised and p.status != "obsolete") or p.id in revised_from:
            # What the candidate revises says much the same on purpose; a lesson a person accepted or set
            # as wontfix it may not deny (from door 8: hostile pass 27aq's "Always …" as a revision of a
            # person's "Never …" was given to every run beside it).
            if not (p.binding and door >= REVISION_DOOR):
                continue
            theirs = like(claim)
            if not could_be_similar(theirs, mine):
                continue
            got = similar(theirs.said, mine.said, polar=False)
            if got is None or got < DENIES_AT or not clash(read(theirs.said), read(mine.said)):
                continue  # (a rewording, a refinement or another lesson — what a revision may be — not its denial)
        elif (p.id in skip and not settled) or (revised is not None and p.rec.get("supersedes") == revised
                                                  and not settled):
            continue
        else:
            theirs = like(claim)
            if not could_be_similar(theirs, mine):
                continue  # (under the threshold: see the module's docstring)
            got = similar(theirs.said, mine.said, polar=not (settled and blind))
        if got is not None and (best is None or (settled, got) > (person_settled(best[0]), best[1])):
            best = (p, got)
    return best


class KnownKeys:
    """Each lesson claim's `signature` (its keys and fold), by the claim's digest: those the door worked out on
    earlier calls (`known`, kept under `.priors/cache/` by store/lesson_keys.py, MAC'd like every cache file
    a verb believes) and those worked out on this one (`added`, for the store to keep). A lesson candidate
    is compared with every lesson of its namespace; at 7,000 of them (100k priors) a `Likeness` each cost
    ~1.2 s a call, where a signature disjoint from the candidate's settles most without one."""

    __slots__ = ("_known", "_load", "added", "words")

    def __init__(self, load: Any = None) -> None:
        self._known: Optional[Dict[bytes, Tuple[Any, ...]]] = None
        self._load = load  # () → the kept signatures, or None: read on first use (a finding's call never reads them)
        self.added: Dict[bytes, Tuple[Any, ...]] = {}
        # one object for each key of the signatures added: a call that works out every lesson (the first, or one
        # after a change of the code) holds each word once, not once per lesson (~12 MB at 100k priors)
        self.words: Dict[Any, Any] = {}

    @property
    def known(self) -> Dict[bytes, Tuple[Any, ...]]:
        if self._known is None:
            self._known = (self._load() if self._load is not None else None) or {}
        return self._known

    @known.setter
    def known(self, every: Dict[bytes, Tuple[Any, ...]]) -> None:
        self._known = every

    def get(self, claim: str) -> Optional[Tuple[Any, ...]]:
        d = claim_digest(claim)
        got = self.known.get(d)
        return self.added.get(d) if got is None else got

    def put(self, claim: str, like: Likeness) -> None:
        d = claim_digest(claim)
        if d not in self.known:
            words = self.words
            self.added[d] = tuple(words.setdefault(k, k) for k in sorted(like.signature(), key=repr))


def claim_digest(claim: str) -> bytes:
    """What `KnownKeys` files a claim under: 16 bytes of its SHA-256 (the cache holds no claim's text)."""
    return hashlib.sha256(claim.encode("utf-8", "surrogatepass")).digest()[:16]


def lesson_refusal(p: PriorState, figure: float, elsewhere: bool = False, denies: bool = False) -> Refusal:
    """A lesson that says what `p` says in other words: a person's decision on it is RERAISE, which nothing
    an agent writes sets aside; an agent's lesson is DUPLICATE, which a revision (`supersedes`) or
    `distinct_from` answers. `elsewhere`: `p` is another namespace's (a person's binding lesson): RERAISE,
    naming its namespace. `denies`: the lesson is a revision of `p`, a person's, that says its opposite
    (door 8): RERAISE, `denies` in the answer."""
    extra: Dict[str, Any] = {"similar": True, "similarity": figure}
    if elsewhere or person_settled(p):
        said = _SETTLED.get(str(p.status), "a person decided this lesson")
        if elsewhere:
            extra["ns"] = p.ns
            said += f" in namespace {p.ns} (a person's decision holds in every namespace)"
        if denies:
            return Refusal("RERAISE", of=p.id, status=p.status, denies=True, **extra,
                           hint=f"{said}, and your revision of it says the opposite: a revision may refine a person's"
                                " lesson, never deny it — only a person reverses their decision; do not suggest it"
                                f" again (if {p.id} no longer holds, tell the person: `priors decide {p.id} obsolete`"
                                " and `priors add` are theirs)")
        return Refusal("RERAISE", of=p.id, status=p.status, **extra,
                       hint=f"{said}, and yours says the same in other words (or denies it: only a person reverses"
                            " their decision); do not suggest it"
                            " again (`distinct_from` cannot set a person's decision aside: if yours is really another"
                            " lesson, tell the person — `priors add` is theirs)")
    return Refusal("DUPLICATE", of=p.id, status=p.status, **extra,
                   hint=f"{p.id} says the same in other words; to improve it, revise it (suggest's `--revises {p.id}`,"
                        f" the lessons tool's `revise` with id {p.id}, or \"supersedes\": \"{p.id}\" in a candidate); if"
                        f" yours is another lesson, name it (`--distinct-from {p.id}`, or \"distinct_from\": [\"{p.id}\"])")


class LessonIndex:
    """Every lesson `verify`'s replay has folded, of every namespace, in ledger order, with its `Likeness`,
    looked up by the keys a lesson that could be like another must share with it (`meeting`). Built on
    first use: a ledger with no run sealed `door: 5` or later never pays for it."""

    __slots__ = ("items", "likes", "by_key", "by_head", "by_fold", "filed", "spaces", "queue", "held", "at", "whole")

    def __init__(self) -> None:
        self.items: List[PriorState] = []
        self.likes: Dict[str, Likeness] = {}  # a folded lesson's claim → its Likeness
        # a key → the lessons holding it; whose head holds it; a claim's fold → the lessons folding so: each one
        # lesson's place, or a list of them (`_post`: nine keys in ten hold one lesson, a list each cost ~12 MB)
        self.by_key: Dict[Any, Any] = {}
        self.by_head: Dict[Any, Any] = {}
        self.by_fold: Dict[str, Any] = {}
        self.filed: List[Any] = []  # each lesson's claim as it was filed (None: not filed, or it had none)
        self.spaces: List[Any] = []  # each filed lesson's namespace
        self.queue: List[int] = []  # the lessons to file before the next lookup
        self.held: Dict[Any, int] = {}  # a lesson not judged here, by id: filed once an event names it (`touch`)
        self.at: Dict[Any, int] = {}  # each lesson's place, by id
        # what makes a lesson's record whole as it is filed (verify's replay packs its priors, core/replay_kept.py):
        # the lookup reads its claim ~750k times a replay of 100k priors, and compares it by identity
        self.whole: Optional[Callable[[Any], None]] = None

    def add(self, p: PriorState, judged: bool = True) -> None:
        """`p`, filed before the next lookup — or, `judged` false (a lesson of a namespace the other half
        of a split replay judges: core/replay_split.py), only once an event names it (`touch`): until
        then its status is the `open` its line gave it, which no lookup wants of another namespace's lesson
        (`meeting`), so filing it — its `Likeness` worked out, its keys posted — would buy nothing."""
        pos = len(self.items)
        self.items.append(p)
        self.at[getattr(p, "id", None)] = pos
        self.filed.append(None)
        self.spaces.append(None)
        if judged:
            self.queue.append(pos)
        else:
            self.held[p.id] = pos

    def touch(self, pid: Any, now: Any = None) -> None:
        """A line names `pid` (an event: a decision may have settled it): a lesson held back is filed now.
        `now`: its state from a prior line restating it (forged: `DUPLICATE_ID`), which the fold holds from
        then on, decisions and all — the lookup holds it too, filed again (hostile pass 27au: a decision
        after such a line was not seen here)."""
        if type(pid) is not str:
            return
        pos = self.held.pop(pid, None)
        at = self.at.get(pid) if now is not None else None
        if at is not None and self.items[at] is not now:
            self.items[at], pos = now, at
        if pos is not None:
            self.queue.append(pos)

    def like(self, claim: str) -> Likeness:
        """A claim's Likeness: the one kept for a folded lesson, else worked out (cached)."""
        got = self.likes.get(claim)
        return likeness(claim) if got is None else got

    def meeting(self, claim: str, ns: Any = None, order: Optional[Dict[str, int]] = None,
                seen: Any = None) -> List[PriorState]:
        """The lessons, in ledger order, that can say what `claim` says (their claims as they are now: a
        redaction leaves a prior no claim, and `most_similar_lesson` skips it): those that fold alike,
        those holding a key of its head, and those whose head holds a key of its. A pair that passes
        `could_be_similar` passes it on one side's account at least (the lesser kept weight is one
        side's), so the other holds a key of that side's head (`Likeness.head`): no lesson that can be
        like it is left out — the lookup changes how many figures are worked out, never the answer. Of
        those, only the ones that pass `could_be_similar` are given, and, with `order` (the replay's places in
        the ledger), only those a rule of the door's for a lesson of namespace `ns` can meet: of `ns`, every
        one — in a split replay, one another half judges too, when a line restates it in `ns` (a property
        test's example, newcomer pass 27av); of any other, those a person decided (`person_settled`;
        never redacted) — as the candidate's run saw them (`seen`: its seal's mark of decisions made on a
        parallel branch, core/unseen.py) — the exact and reversal rules look the lessons of its scope up
        themselves.

        Each lesson's namespace and claim are kept as it was filed, so a lesson the lookup finds costs a
        glance at its status before any figure (the replay asks this of every lesson candidate: 16k of
        them at 100k priors, each finding ~150 lessons sharing a key with it)."""
        items, by_key, by_head, filed, spaces = self.items, self.by_key, self.by_head, self.filed, self.spaces
        for pos in self.queue:
            p = items[pos]
            if self.whole is not None:
                self.whole(p)
            said = p.claim
            if not isinstance(said, str):
                continue
            filed[pos], spaces[pos] = said, getattr(p, "ns", None)
            like = self.likes.get(said)
            if like is None:
                like = self.likes[said] = likeness(said)  # (the candidate's, worked out when it was judged)
            _post(by_key, like.keys(), pos)
            _post(by_head, like.head(by_key), pos)
            _post(self.by_fold, (like.key,), pos)
        self.queue.clear()
        mine = self.like(claim)
        got = self.by_fold.get(mine.key)
        hits: set = set() if got is None else {got} if type(got) is int else set(got)
        for posts, keys in ((by_key, mine.head(by_key)), (by_head, mine.keys())):
            for key in keys:
                got = posts.get(key)
                if got is None:
                    continue
                if type(got) is int:
                    hits.add(got)
                else:
                    hits.update(got)
        out = []
        likes = self.likes
        for i in sorted(hits):
            p = items[i]
            if order is not None and spaces[i] != ns and (seen[p[0]] if seen and p[0] in seen else p[1]) not in _DECIDED:
                continue
            said = p.claim  # (as it is now: the one filed, unless a redaction took it)
            if said is filed[i]:
                theirs = likes[said]
            elif isinstance(said, str):
                theirs = self.like(said)
            else:
                continue
            if could_be_similar(theirs, mine):
                out.append(p)
        return out


def _post(posts: Dict[Any, Any], keys: Iterable[Any], pos: int) -> None:
    """`pos` posted under each of `keys` in a map of one place or a list of them (`LessonIndex.by_key`)."""
    for key in keys:
        got = posts.get(key)
        if got is None:
            posts[key] = pos
        elif type(got) is int:
            posts[key] = [got, pos]
        else:
            got.append(pos)


_DECIDED = frozenset(PERSON_STATUSES)  # `person_settled`'s statuses: binding, or retired


def with_lessons_met(index: LessonIndex, cand: Candidate, pool: List[PriorState], elsewhere: List[PriorState],
                     order: Dict[str, int], seen: Any = None) -> Tuple[List[PriorState], List[PriorState]]:
    """`verify`'s pool and `elsewhere` for a lesson candidate of a run sealed `door: 5` or later, with
    the lessons `index` finds meeting it: those of its namespace into the pool, in ledger order
    (`order`: each judged prior's place), and the lessons a person decided (accepted, `wontfix`,
    retired — as the run saw them, `seen`: its seal's mark) of every other namespace into `elsewhere`,
    whatever their scopes — the priors the door's `ProposePool.lessons` adds for it."""
    ns = cand.raw.get("ns")
    met = index.meeting(cand.claim, ns, order, seen)
    if not met:
        return pool, elsewhere
    mine = [p for p in met if p.ns == ns]
    theirs = [p for p in met if p.ns != ns]
    if mine:
        got = {p.id: p for p in pool}
        got.update((p.id, p) for p in mine)
        pool = sorted(got.values(), key=lambda p: order.get(p.id, -1))
    if theirs:
        have = {p.id for p in elsewhere}
        elsewhere = elsewhere + [p for p in theirs if p.id not in have]
    return pool, elsewhere


def reads_like_unseen(st: Any, p: PriorState, named: Optional[List[str]] = None) -> List[str]:
    """Of the lessons a person decided that agent lesson `p`'s run never saw (`unseen.lessons_unseen`: a
    parallel branch's run), those it reads like — what the door would have refused as `RERAISE` had the
    run seen them. `status --calls`, the walk and `show` name them. The lesson it revises is left out: a
    revision of a retired lesson is shown as one already. (`st`: a `fold.State`; `named`: `lessons_unseen`,
    when the caller has it.)"""
    named = lessons_unseen(st, p) if named is None else named
    claim, revised = p.claim, p.rec.get("supersedes")
    if not named or not isinstance(claim, str):
        return []
    mine, said = signature(claim), plain_letters(claim)
    out = []
    for qid in named:
        q = st.priors[qid]
        if qid != revised and isinstance(q.claim, str) and not signature(q.claim).isdisjoint(mine) \
                and similar(plain_letters(q.claim), said, polar=False) is not None:
            out.append(qid)
    return out


def forget_readings() -> None:
    """Let go of the readings, signatures and likenesses kept for claims met before (caches sized for a
    namespace's lessons, met again and again): `import` reads thousands of a bundle's claims once each,
    and kept, they held ~35 MB beside the ledger at 100k priors."""
    read.cache_clear()
    forget_joins()
    signature.cache_clear()
    likeness.cache_clear()


def settled_lessons(st: Any) -> List[PriorState]:
    """Every lesson a person decided (accepted, wontfix, retired), of every namespace, in ledger order."""
    return [p for p in st.priors.values() if is_lesson(p) and person_settled(p) and isinstance(p.claim, str)]


def reads_like_settled(settled: List[PriorState], claim: str) -> Optional[Tuple[PriorState, float]]:
    """(lesson, figure) for the lesson a person retired that `claim` reads like — door 6's measure, whatever
    it denies — the highest figure, the first on a tie; or None, also when it reads like a lesson a person
    accepted or kept (a copy of it, into another namespace, say, is taken, even where that lesson reversed
    one they retired: hostile pass 27ag). `import` skips such a lesson of a bundle: a person's decision is not
    undone by a file (`priors add` is theirs to say it again). (Denials of a standing lesson are not told
    apart from rewordings that merely hold a `not`: 27ag's `…, not after`.)"""
    mine, said = signature(claim), plain_letters(claim)
    best: Optional[Tuple[PriorState, float]] = None
    for p in settled:
        if signature(p.claim).isdisjoint(mine):
            continue
        theirs = plain_letters(p.claim)
        if p.status != "obsolete":
            if similar(theirs, said) is not None:
                return None
            continue
        got = similar(theirs, said, polar=False)
        if got is not None and (best is None or got > best[1]):
            best = (p, got)
    return best
