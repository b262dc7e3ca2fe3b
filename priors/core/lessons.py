"""The lessons loop's rules: configuration, scores and statistics, ranking under a budget.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from priors.core.errors import UsageError
from priors.core.fold import PriorState, State, fold, prior_number
from priors.core.plain import Plain
from priors.core.vocabulary import (  # noqa: F401 (the lessons verbs read them here)
    BINDING,
    BLOCK_TYPES,
    INJECTABLE,
    LESSON_TYPES,
    OUTCOMES,
    PRIOR_RE,
    RUN_RE,
    SUGGEST_VIA,
    is_run_id,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple


class Ratio:
    """A score as an exact fraction in lowest terms (ranking must not depend on float rounding).

    Not `fractions.Fraction`: importing it pulls in `decimal` and `numbers`, ~2 ms of every scored
    ledger's `lessons --inject`, which runs at every prompt. It compares and hashes with anything that
    has a numerator and a denominator (an int, a Fraction), exactly as a Fraction would."""

    __slots__ = ("numerator", "denominator")

    def __init__(self, numerator: int, denominator: int) -> None:
        a, b = abs(numerator), abs(denominator)
        while b:  # Euclid, here rather than `math.gcd`: `math` is a module to load on this build (~0.2 ms)
            a, b = b, a % b
        g = (a or 1) * (-1 if denominator < 0 else 1)
        self.numerator, self.denominator = numerator // g, denominator // g

    def _cross(self, other: Any) -> Tuple[int, int]:
        return self.numerator * other.denominator, other.numerator * self.denominator

    def __eq__(self, other: object) -> bool:
        if not hasattr(other, "numerator") or not hasattr(other, "denominator"):
            return NotImplemented
        a, b = self._cross(other)
        return a == b

    def __hash__(self) -> int:
        return hash((self.numerator, self.denominator))

    def __lt__(self, other: Any) -> bool:
        a, b = self._cross(other)
        return a < b

    def __le__(self, other: Any) -> bool:
        a, b = self._cross(other)
        return a <= b

    def __gt__(self, other: Any) -> bool:
        a, b = self._cross(other)
        return a > b

    def __ge__(self, other: Any) -> bool:
        a, b = self._cross(other)
        return a >= b

    def __repr__(self) -> str:
        return f"Ratio({self.numerator}, {self.denominator})"


def exact(numerator: int, denominator: int) -> Ratio:
    """A score as an exact fraction."""
    return Ratio(numerator, denominator)


def neutral() -> Ratio:
    """The score of a lesson no scored run used: ½."""
    return exact(1, 2)


LOW_SCORE = (1, 3)  # under this score, after LOW_SCORE_MIN_USES scored uses, a lesson comes back to a person
LOW_SCORE_MIN_USES = 3


def check_supersedes(st: State, value: Any, ns: str, retired_ok: bool = False) -> Optional[str]:
    """`supersedes: P-…` must name a live lesson of the same namespace (usage error otherwise): only a
    lesson is retired by its successor — a finding a person settled never is (accepting an agent's
    lesson that named a wontfix finding used to make the finding obsolete, and its re-raise new) — and
    not one a person retired (`retired_ok`: a run sealed before `door: 6`), which is no lesson to revise."""
    if value is None:
        return None
    if not isinstance(value, str) or not PRIOR_RE.match(value):
        raise UsageError("priors: `supersedes` must be a prior id like P-0003")
    p = st.priors.get(value)
    if p is None or p.redacted:
        raise UsageError(f"priors: `supersedes` names {value}, which is not a prior in the ledger")
    if p.ns != ns:
        raise UsageError(f"priors: `supersedes` names {value} from namespace {p.ns!r}, not {ns!r}")
    if not is_lesson(p):
        raise UsageError(f"priors: `supersedes` names {value}, which is not a lesson (a run-start prior): only a"
                         " lesson is retired by the lesson that replaces it")
    if p.status == "obsolete" and not retired_ok:
        raise UsageError(f"priors: `supersedes` names {value}, a lesson a person retired: there is nothing to revise —"
                         f" suggest yours as a lesson of its own (one that says what {value} said is refused)")
    return value


def is_lesson(p: PriorState) -> bool:
    return p.facet("activation") == "run-start" and not p.redacted


def person_settled(p: PriorState) -> bool:
    """A lesson a person decided: accepted or wontfix (binding, both injected), or retired (`obsolete` is only ever a
    person's verdict: an agent proposes `obsolete-proposed`). No agent's word sets such a lesson aside."""
    return p.binding or p.status == "obsolete"


def tags_of(p: PriorState) -> List[str]:
    t = p.rec.get("tags")
    return [x for x in t if isinstance(x, str)] if isinstance(t, list) else []


# ------------------------------------------------------------------ runs and what they were shown


class RunInfo(Plain):
    """A committed run: its id, namespace, the ledger index of its commit record, and that record."""

    __slots__ = ("run", "ns", "index", "rec")

    def __init__(self, run: str, ns: Any, index: int, rec: Dict[str, Any]) -> None:
        self.run, self.ns, self.index, self.rec = run, ns, index, rec

    @property
    def by_human(self) -> bool:
        """Sealed by `add`/`import`: lessons a person wrote, not an agent run."""
        return self.rec.get("by") == "human"

    @property
    def scorable(self) -> bool:
        """An agent run that did work: not a person's lessons, not an agent's suggestion sealed on its own."""
        return not self.by_human and self.rec.get("via") != SUGGEST_VIA


def injections(records: Sequence[Dict[str, Any]]) -> Dict[str, List[str]]:
    """The lesson ids each committed agent run was shown.

    A run's inject list depends only on the ledger before its first line (the lessons of its
    namespace that were open or binding then). A run whose list was cut by a budget or held back
    for review left an `injected` record (just before its seal); that wins.
    """
    return Ledger(fold(records)).shown


# ------------------------------------------------------------------ outcome scores


class Stats(Plain):
    """A lesson's record: uses and outcome credits."""

    __slots__ = ("uses", "wins", "partials", "losses")

    def __init__(self, uses: int = 0, wins: int = 0, partials: int = 0, losses: int = 0) -> None:
        self.uses, self.wins, self.partials, self.losses = uses, wins, partials, losses

    @property
    def scored(self) -> int:
        return self.wins + self.partials + self.losses

    @property
    def score(self) -> Ratio:
        """(wins + ½·partials) / scored uses, exactly; ½ with none."""
        if not self.scored:
            return neutral()
        return exact(2 * self.wins + self.partials, 2 * self.scored)

    def credit(self, outcome: Any) -> None:
        if outcome == "success":
            self.wins += 1
        elif outcome == "partial":
            self.partials += 1
        elif outcome == "failure":
            self.losses += 1

    def as_dict(self) -> Dict[str, int]:
        return {"uses": self.uses, "wins": self.wins, "partials": self.partials, "losses": self.losses}


def fmt_score(x: Ratio) -> str:
    """Two decimals, rounded half up, from the exact fraction."""
    hundredths = (x.numerator * 200 + x.denominator) // (2 * x.denominator)
    return f"{hundredths // 100}.{hundredths % 100:02d}"


class Score(Plain):
    """A score record and its ledger position."""

    __slots__ = ("index", "rec")

    def __init__(self, index: int, rec: Dict[str, Any]) -> None:
        self.index, self.rec = index, rec

    @property
    def run(self) -> str:
        return self.rec["run"]

    @property
    def outcome(self) -> Any:
        return self.rec.get("outcome")

    @property
    def injected(self) -> Optional[List[str]]:
        ids = self.rec.get("injected")
        return [x for x in ids if isinstance(x, str)] if isinstance(ids, list) else None


def effective_scores(pairs: Iterable[Tuple[int, Dict[str, Any]]]) -> Dict[str, List[Score]]:
    """Per run, the scores that count: each plain score adds one, a `replaces` score replaces the latest.

    `pairs` are (ledger position, record) in ledger order."""
    out: Dict[str, List[Score]] = {}
    for i, rec in pairs:
        if rec.get("t") != "score" or not isinstance(rec.get("run"), str) or rec.get("outcome") not in OUTCOMES:
            continue
        lst = out.setdefault(rec["run"], [])
        if rec.get("replaces") is True and lst:
            lst[-1] = Score(i, rec)
        else:
            lst.append(Score(i, rec))
    return out


def last_decides(pairs: Iterable[Tuple[int, Dict[str, Any]]]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for i, rec in pairs:
        if rec.get("t") == "event" and rec.get("action") == "decide" and isinstance(rec.get("id"), str):
            out[rec["id"]] = i
    return out


class Ledger:
    """Everything the lessons loop derives from the folded ledger (`State.loop`), computed once per call."""

    def __init__(self, state: State) -> None:
        self.state = state
        self._loop = state.loop
        self._runs: Optional[Dict[str, RunInfo]] = None
        self._scores: Optional[Dict[str, List[Score]]] = None
        self._starts: Optional[Dict[str, int]] = None
        self._shown: Dict[str, List[str]] = {}
        self._stats: Dict[Any, Dict[str, Stats]] = {}
        self._scored: Optional[Dict[Any, List[Tuple[PriorState, Stats]]]] = None

    @classmethod
    def of(cls, records: List[Dict[str, Any]], state: Optional[State] = None) -> "Ledger":
        return cls(state if state is not None else fold(records))

    @property
    def runs(self) -> Dict[str, RunInfo]:
        """Committed runs, by their first commit record."""
        if self._runs is None:
            at = self._loop["commit_at"]
            self._runs = {run: RunInfo(run, rec.get("ns"), at[run], rec) for run, rec in self.state.commits.items()}
        return self._runs

    @property
    def scores(self) -> Dict[str, List[Score]]:
        if self._scores is None:
            self._scores = effective_scores(self._loop["scores"])
        return self._scores

    @property
    def decided(self) -> Dict[str, int]:
        """Prior id → position of its last human decide."""
        return self._loop["decided"]

    def block_starts(self) -> Dict[str, int]:
        """Committed runs → the position of the first line of their block."""
        commits = self.state.commits
        return {r: i for r, i in self._loop["first"].items() if r in commits}

    def starts(self) -> Dict[str, int]:
        """Committed agent runs → the position their block starts at (what they were shown is read there)."""
        if self._starts is None:
            commits = self.state.commits
            by_index = {i: r for r, i in self._loop["first"].items()
                        if r in commits and commits[r].get("by") != "human"}
            self._starts = {r: i for i, r in by_index.items()}
        return self._starts

    def shown_for(self, run: str) -> Optional[List[str]]:
        """The lesson ids committed agent run `run` was shown; None for any other run."""
        got = self._shown.get(run)
        if got is not None:
            return got
        start = self.starts().get(run)
        if start is None:
            return None
        ids = self._loop["injected"].get(run)
        if ids is None:
            ns = self.state.commits[run].get("ns")
            spans = self._loop["spans"]
            try:
                lessons = self._loop["lessons"].get(ns, ())
            except TypeError:
                lessons = ()
            ids = [pid for pid in lessons if bisect_right(spans[pid], start) % 2]
        self._shown[run] = ids = list(ids)
        return ids

    @property
    def shown(self) -> Dict[str, List[str]]:
        """The lesson ids each committed agent run was shown."""
        # shown_for is None only for a run starts() does not hold
        return {run: self.shown_for(run) for run in sorted(self.starts(), key=self.starts().__getitem__)}  # type: ignore[misc]

    def credited(self, score: Score) -> List[str]:
        ids = score.injected
        return ids if ids is not None else (self.shown_for(score.run) or [])

    def uses(self, only: Optional[Any] = None) -> Dict[str, int]:
        """Per lesson, the agent runs it was shown to — counted from the lessons' spans, not run by run.
        `only`: a set of ids, to count just those lessons."""
        out: Dict[str, int] = {}
        injected = self._loop["injected"]
        commits = self.state.commits
        by_ns: Dict[Any, List[int]] = {}
        for run, start in self.starts().items():
            ids = injected.get(run)
            if ids is not None:
                for pid in ids:
                    if only is None or pid in only:
                        out[pid] = out.get(pid, 0) + 1
                continue
            ns = commits[run].get("ns")
            try:
                by_ns.setdefault(ns, []).append(start)
            except TypeError:
                continue
        spans = self._loop["spans"]
        for ns, ids in self._loop["lessons"].items():
            arr = by_ns.get(ns)
            if not arr:
                continue
            arr.sort()
            last = len(arr)
            for pid in ids if only is None else [x for x in ids if x in only]:
                sp = spans[pid]
                n = 0
                for k in range(0, len(sp), 2):
                    lo = bisect_left(arr, sp[k])
                    hi = bisect_left(arr, sp[k + 1]) if k + 1 < len(sp) else last
                    n += hi - lo
                if n:
                    out[pid] = out.get(pid, 0) + n
        return out

    def stats(self, since: Optional[Dict[str, int]] = None, uses: bool = True) -> Dict[str, Stats]:
        """Per prior: uses (agent runs it was shown to) and outcome credits (once per call: memoized).

        With `since` ({id: ledger index}), only scores written after that index count —
        the evidence a human has not yet seen when deciding. `uses=False` skips counting uses.
        """
        key = ("all" if uses else "credits") if since is None else "recent" if since is self.decided else None
        got = self._stats.get(key) if key is not None else None
        if got is not None:
            return got
        out: Dict[str, Stats] = {}
        if since is None and uses:
            for pid, n in self.uses().items():
                out[pid] = Stats(uses=n)
        for lst in self.scores.values():
            for s in lst:
                outcome = s.outcome
                for pid in self.credited(s):
                    if since is not None and s.index <= since.get(pid, -1):
                        continue
                    st = out.get(pid)
                    if st is None:
                        st = out[pid] = Stats()
                    st.credit(outcome)
        if key is not None:
            self._stats[key] = out
        return out

    def scored_lessons(self) -> Dict[Any, List[Tuple[PriorState, Stats]]]:
        """Per namespace, its lessons with a scored use, not obsolete, in the ledger's order, with
        their statistics: one walk over the priors per call, however many namespaces `status`
        prints (after a score at 100k priors a walk per namespace cost ~0.08 s)."""
        if self._scored is None:
            credits = self.stats(uses=False)
            scored = {pid for pid, s in credits.items() if s.scored}
            by_ns: Dict[Any, List[Tuple[PriorState, Stats]]] = {}
            if scored:
                uses = self.uses(scored)  # (only theirs: `status` shows no other lesson's uses)
                for p in self.state.priors.values():
                    if p[0] in scored and is_lesson(p) and p.status != "obsolete":  # (p[0]: the id, read 100k times)
                        c = credits[p[0]]
                        s = Stats(uses.get(p[0], 0), c.wins, c.partials, c.losses)
                        try:
                            by_ns.setdefault(p.ns, []).append((p, s))
                        except TypeError:  # a namespace that is not a plain value: no namespace's lesson
                            continue
            self._scored = by_ns
        return self._scored

    def low_scores(self) -> Dict[str, Stats]:
        """Lessons whose outcomes since the last human decision put them to the human: keep or retire."""
        got = self._stats.get("low")
        if got is not None:
            return got
        self._stats["low"] = out = self._low_scores()
        return out

    def _low_scores(self) -> Dict[str, Stats]:
        recent = self.stats(self.decided)
        out: Dict[str, Stats] = {}
        for pid, s in recent.items():
            p = self.state.priors.get(pid)
            if p is None or not is_lesson(p) or p.status not in INJECTABLE:
                continue
            if s.scored >= LOW_SCORE_MIN_USES and s.score < exact(*LOW_SCORE):
                out[pid] = s
        return out

    def learned_after(self) -> Dict[str, int]:
        """Per run: the ledger index of the last `learned` record naming it."""
        return self._loop["learned"]

    def scored_runs(self, ns: Optional[str] = None, include_learned: bool = False) -> List[str]:
        """Scored runs, oldest score first; learned ones left out unless asked (a later score revives a run)."""
        learned = self.learned_after()
        rows: List[Tuple[int, str]] = []
        for run, lst in self.scores.items():
            if not lst or run not in self.runs:
                continue
            if ns is not None and self.runs[run].ns != ns:
                continue
            last = max(s.index for s in lst)
            if not include_learned and learned.get(run, -1) > last:
                continue
            rows.append((last, run))
        return [r for _, r in sorted(rows)]


def score_lines_for(ledger: Ledger, ns: str) -> List[str]:
    """`status` lines for scored lessons of a namespace (none when nothing was scored)."""
    return [f"  · {p.id} score {fmt_score(s.score)} — {describe(s)}" for p, s in ledger.scored_lessons().get(ns, ())]


def describe(s: Stats) -> str:
    def n(k: int, word: str, plural: str) -> str:
        return f"{k} {word if k == 1 else plural}"

    return (f"{n(s.uses, 'use', 'uses')}: {n(s.wins, 'win', 'wins')} · {n(s.partials, 'partial', 'partials')}"
            f" · {n(s.losses, 'loss', 'losses')}")


def low_score_ask(pid: str, s: Stats) -> str:
    return (f"scored {fmt_score(s.score)} over {s.scored} runs — keep or retire? "
            f"reply: decide {pid} keep — or decide {pid} obsolete")


# ------------------------------------------------------------------ ranking and budgets

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an and are as at be by do does for from has have if in into is it its no not of on or so than that the "
    "then this to was were when with you your".split()
)


def words(text: str) -> set:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS}


def overlap(query: set, claim: str, tags: Iterable[str]) -> int:
    """Query words found in the claim, plus query words that are tags (a tag match counts again).
    `query` is `words` of the query: no stopword, no one-letter word.

    A claim that holds no query word even as a substring has no word in common with the query:
    it is not split into words at all (the same count, for a fraction of the cost). One that does
    is intersected with its raw words: a word the query cannot hold needs no filtering out (a Python
    step per word was most of the lessons block's ranking)."""
    low = claim.lower()
    hits = len(query.intersection(_WORD.findall(low))) if any(w in low for w in query) else 0
    return hits + len(query & set(tags))


class Budget(Plain):
    """`relevant`'s (and `lessons --inject`'s) injection budget, query and review hold."""

    __slots__ = ("max_inject", "max_chars", "query", "require_review")

    def __init__(self, max_inject: Optional[int] = None, max_chars: Optional[int] = None,
                 query: Optional[str] = None, require_review: bool = False) -> None:
        self.max_inject, self.max_chars, self.query, self.require_review = max_inject, max_chars, query, require_review

    @property
    def active(self) -> bool:
        return (self.max_inject is not None or self.max_chars is not None or self.query is not None
                or self.require_review)


def rank_key(p: PriorState, query: set, score_rank: int) -> tuple:
    """Binding first, then query overlap, then outcome score (`score_rank`: the score's place among
    the distinct scores, higher for a higher score — the same order as the exact fractions, without
    comparing fractions in the sort), then id."""
    hits = overlap(query, p.claim, tags_of(p)) if query else 0
    return (0 if p.binding else 1, -hits, -score_rank, prior_number(p.id), p.id)


def shape(out: Dict[str, Any], ledger: Ledger, budget: Budget) -> Dict[str, Any]:
    """Apply ranking, budgets and review holds to `relevant`'s contract output.

    Without a budget the inject list is left exactly as the contract made it;
    low-score nudges are added whenever the ledger has earned them.
    """
    res = dict(out)
    inject = [x for x in out.get("inject", []) if isinstance(x, dict)]
    stats = ledger.stats(uses=False)
    low = ledger.low_scores()
    nudges = list(out.get("nudges", []))
    nudged = {n.get("id") for n in nudges if isinstance(n, dict)}
    for item in sorted(inject, key=lambda x: (prior_number(x.get("id")), str(x.get("id")))) if low else ():
        pid = item.get("id")
        if pid in low and pid not in nudged:
            nudges.append({"id": pid, "claim": item.get("claim"), "ask": low_score_ask(pid, low[pid])})
    res["nudges"] = nudges
    if not budget.active:
        return res
    held: List[str] = []
    pool: List[Tuple[tuple, Dict[str, Any]]] = []
    query = words(budget.query or "")
    live: List[Tuple[PriorState, Optional[Ratio], Dict[str, Any]]] = []
    for item in inject:
        p = ledger.state.priors.get(item.get("id", ""))
        if p is None:
            continue
        if budget.require_review and p.status == "open":
            held.append(p.id)
            continue
        s = stats.get(p.id)
        live.append((p, None if s is None else s.score, item))  # None: unscored, the neutral ½
    half = neutral()
    place = {score: i for i, score in enumerate(sorted({half, *(s for _, s, _ in live if s is not None)}))}
    neutral_place = place[half]
    for p, score, item in live:
        pool.append((rank_key(p, query, neutral_place if score is None else place[score]), item))
    pool.sort(key=lambda kv: kv[0])
    taken: List[Dict[str, Any]] = []
    omitted: List[str] = []
    chars = 0
    for key, item in pool:
        size = len(str(item.get("claim") or ""))
        if key[0] == 0:  # binding: a person accepted it, and no budget drops a person's word (it still counts)
            taken.append(item)
            chars += size
        elif budget.max_inject is not None and len(taken) >= budget.max_inject:
            omitted.append(item["id"])
        elif budget.max_chars is not None and chars + size > budget.max_chars:
            omitted.append(item["id"])
        else:
            taken.append(item)
            chars += size
    res["inject"] = taken
    res["inject_omitted"] = omitted
    if budget.require_review:  # (beside any the selection held back already: an open revision, `one_version`)
        res["awaiting_review"] = sorted({*res.get("awaiting_review", ()), *held}, key=lambda i: (prior_number(i), i))
    return res




# ------------------------------------------------------------------ what a person's verdict retires, and the list


def superseded_by(st: State, pid: str) -> Optional[PriorState]:
    """The live lesson that accepting (or keeping) lesson `pid` would retire: the one its
    `supersedes` names, when that is a lesson that still has content and is not retired yet."""
    p = st.priors.get(pid)
    old = p.rec.get("supersedes") if p is not None and not p.redacted else None
    q = st.priors.get(old) if isinstance(old, str) else None
    if q is None or q.redacted or q.status == "obsolete" or q.id == pid or not is_lesson(q):
        return None  # (a hand-written `supersedes` of a finding retires nothing)
    return q


def kept_in_force(st: State, pid: str) -> Optional[str]:
    """The binding lesson (a person accepted or kept it) that lesson `pid` supersedes: accepting `pid`
    leaves it in force unless the person names it in the same decision (`decide … --retires ID`).
    `show`, the decide walk, `status --calls` and the report say so; `verify` may call this too."""
    q = superseded_by(st, pid)
    return q.id if q is not None and q.binding else None


def said_to_differ(st: State, pid: str) -> List[str]:
    """The agents' open lessons whose `distinct_from` names lesson `pid` — their word that they say something
    else, which set `pid` aside while an agent's: when a person retires `pid`, that word was
    never put to them (such a lesson may say the same), so `decide` and `status --calls` name it (hostile pass 27t)."""
    return [p.id for p in st.priors.values() if p.status == "open" and not p.redacted and is_lesson(p)
            and isinstance(p.rec.get("distinct_from"), list) and pid in p.rec["distinct_from"]]


def check_retires(st: State, pid: str, verdict: str, retires: Optional[str]) -> None:
    """`decide ID accepted|keep --retires OLD`: OLD must be what ID supersedes (usage error otherwise)."""
    if retires is None:
        return
    if verdict not in ("accepted", "keep"):
        raise UsageError(f"priors decide: --retires goes with accepted or keep (the lesson that replaces {retires}),"
                         f" not {verdict}; nothing was written")
    if not PRIOR_RE.match(retires):
        raise UsageError(f"priors decide: --retires takes a prior id like P-0003, not {retires!r}")
    p = st.priors.get(pid)
    named = p.rec.get("supersedes") if p is not None and not p.redacted else None
    if named != retires:
        what = f"it supersedes {named}" if isinstance(named, str) else "it names no `supersedes`"
        raise UsageError(f"priors decide: --retires {retires}: {pid} does not supersede {retires} ({what});"
                         " nothing was written")


def supersede_events(st: State, pid: str, verdict: str, retires: Optional[str] = None) -> List[Dict[str, Any]]:
    """When a human accepts a lesson that supersedes another, the old one retires in the same write —
    unless the old one is binding (a person settled it) and the person did not name it (`retires`):
    a person's decision is only ever undone by a person's word about that very prior."""
    if verdict not in ("accepted", "keep"):
        return []
    q = superseded_by(st, pid)
    if q is None or (q.binding and retires != q.id):
        return []
    return [{"t": "event", "id": q.id, "action": "decide", "to": "obsolete", "by": "human",
             "reason": f"superseded by {pid}"}]


def lesson_rows(ledger: Ledger, ns: Optional[Sequence[str]], include_all: bool) -> List[Dict[str, Any]]:
    """Rows of `priors lessons`: every lesson of the namespaces `ns` (None: all), retired ones only
    with `include_all` (`listed`), each made by `lesson_row`."""
    return [lesson_row(ledger, p) for p in ledger.state.priors.values() if listed(p, ns, include_all)]


def listed(p: PriorState, ns: Optional[Sequence[str]], include_all: bool) -> bool:
    """Whether `lesson_rows` has a row for `p` (the report counts them before it makes each)."""
    return is_lesson(p) and (ns is None or p.ns in ns) and (include_all or p.status != "obsolete")


def lesson_row(ledger: Ledger, p: PriorState, rec: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """A lesson's row: its outcome record, and whether it waits for a person's call (`rec`: its record)."""
    s = ledger.stats().get(p.id, Stats())
    rec = p.record() if rec is None else rec  # (read, not kept: at 100k priors the 16k lessons' records were ~16 MB)
    claim = rec.get("claim")
    row: Dict[str, Any] = {"id": p.id, "ns": p.ns, "type": rec.get("type"), "status": p.status,
                           "claim": claim if isinstance(claim, str) else "", "score": fmt_score(s.score), **s.as_dict()}
    t = rec.get("tags")
    tags = [x for x in t if isinstance(x, str)] if isinstance(t, list) else []  # (as tags_of reads them)
    if tags:
        row["tags"] = tags
    if isinstance(rec.get("supersedes"), str):
        row["supersedes"] = rec["supersedes"]
    if p.id in ledger.low_scores():
        row["your_call"] = True
    return row


def lessons_table(rows: List[Dict[str, Any]]) -> str:
    """`priors lessons` for people: one line a lesson, its claim cut to 72 characters."""
    if not rows:
        return "no lessons yet — `priors add` one, or let a run propose one"
    # every column as wide as its widest cell (`challenged`, a five-digit id, 100+ uses), so none shifts
    cols = [("id", "id", "<", 8), ("score", "score", ">", 5), ("uses", "uses", ">", 5), ("W", "wins", ">", 2),
            ("P", "partials", ">", 2), ("L", "losses", ">", 2), ("status", "status", "<", 9)]
    widths = [max([least] + [len(str(r[key])) for r in rows]) for _, key, _, least in cols]
    seps = [" ", " ", " ", " ", " ", "  ", "  "]  # before each column but the first, then before the lesson

    def line(cells: List[str]) -> str:
        out = ""
        for i, ((_, _, align, _), cell) in enumerate(zip(cols, cells)):
            out += (seps[i - 1] if i else "") + (cell.ljust(widths[i]) if align == "<" else cell.rjust(widths[i]))
        return out + seps[-1]

    out = [line([head for head, _, _, _ in cols]) + "lesson"]
    for r in rows:
        tags = " " + " ".join("#" + t for t in r.get("tags", [])) if r.get("tags") else ""
        flag = "  ← your call" if r.get("your_call") else ""
        claim = r["claim"] if len(r["claim"]) <= 72 else r["claim"][:71] + "…"
        out.append(line([str(r[key]) for _, key, _, _ in cols]) + f"{claim}{tags}{flag}")
    return "\n".join(out)
