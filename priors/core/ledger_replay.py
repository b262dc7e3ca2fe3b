"""`verify` replays the protocol: every block of the ledger held to the rules the door held it to then.

`ledger_checks` proves each line well formed on its own; a line can be well formed and still be one
the keeper's door (`propose`, `disposition`, `commit`, `add`) would have refused — a finding that
repeats what a person settled, typed into the ledger by hand. The replay folds the ledger line by
line (`fold.apply`, the keeper's own fold) and, at each run block's seal, judges the block's lines
against the state just before them with the door's own rule functions:

- a finding that repeats a prior on the same scope state, exactly or by meaning — `RERAISE` of a
  binding prior, `DUPLICATE` of any other —, that reverses a settled one (`REVERSAL`) or falls
  below a coverage floor (`BELOW_FLOOR`): `protocol.judge_pool`, `similarity.similar`;
- `supersedes` naming a prior that is not a live lesson of the namespace (`lessons.check_supersedes`);
- `distinct_from` naming a prior of another namespace, or one that says the same in the same words
  (`protocol.same_words`);
- a run's calls numbered other than `-C-01`, `-C-02`, … in order, as commit numbers them;
- authority the line cannot have: a prior line carrying `by`, `status` or `authority` (the keeper's
  to set, never a candidate's), a run sealed `by: human` that is not a person's `add`/`import` of
  lessons and nothing else, and a lesson a person added that repeats one already there.

What the ledger does not keep is not guessed. The run's snapshot is known only as far as its own
lines reveal it (a disposition's `scope_hash`, a new prior's); a prior whose scope state the block
does not reveal is not compared by meaning or by floor. The definitions inside a scope, whose names
the door weighs as the scope's own when it compares by meaning, are those the ledger names. A prior
the run had to give a verdict on (an open finding whose scope the run saw) and did not is one the run never saw — the block came
from a parallel branch through the merge driver — and is left out of its pool; a person's decision
such a run never saw is one its seal names, and it is judged as the run saw it (core/unseen.py). A tombstone's
content is gone: nothing is judged against it. So a ledger only the keeper wrote replays clean.

Pure: records in, problems out. Each prior is indexed by scope ref per namespace as it arrives
(`scope_index.ScopeIndex`, the door's own index), so a finding meets only the priors around its scope.
"""

from __future__ import annotations

import gc
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, Union

from priors.core.block_snapshot import revealed
from priors.core.canonical import stored_claim
from priors.core.errors import Refusal, UsageError
from priors.core.fold import PriorState, State, apply
from priors.core.grammar import OPPOSED, Candidate, ref_alias
from priors.core.ledger_parse import records
from priors.core.lesson_likeness import LessonIndex, is_lesson_line, lineage, with_lessons_met
from priors.core.lessons import check_supersedes, is_lesson
from priors.core.moves import as_run_sees
from priors.core.named_ground import DecidedNames, ground_of, named_ground
from priors.core.on_the_code import as_on_disk, followed_here, judge_change_line
from priors.core.plain import Unkept
from priors.core.problem import Problem
from priors.core.protocol import door_of, judge_pool, read_key, same_words, settled_by_person
from priors.core.replay_kept import KeptPriors, Shapes, pack, stored, unpacked
from priors.core.replay_split import Overlooked, Share, SplitHalf, half_records
from priors.core.sameness import wordings
from priors.core.scope_index import ScopeIndex, dropped_from, held_in, inner_named
from priors.core.similarity import claim_key, folded, norm_direction, similar
from priors.core.unseen import UNSEEN, seen_through
from priors.core.vocabulary import (
    ACROSS_DOOR,
    DECIDED_FINDING_DOOR,
    DOOR,
    LESSON_DOOR,
    LEXICON_DOOR,
    PERSON_STATUSES,
    PRIOR_RE,
    SETTLED_LESSON_DOOR,
    facets_known,
    id_number,
)

_SELF_ASSIGNED = frozenset(("authority", "by", "status"))  # the keeper's to set: no candidate, and so no prior line, holds them
_SEEN_BY_RUN = ("open", "stale", "challenged")  # a verify-phase prior in these is a verify item of the next run
_HUMAN_VIA = ("add", "import")  # the verbs that seal a person's lessons as a run of their own
_BLOCK_ACTIONS = ("disposition", "scope-missing", "moved")
_INDEXED = ("verify-phase", "propose-gate")  # a prior of these, on a scope, is in its namespace's `ScopeIndex`
_NOT_CODE = ("tool-version", "env-fingerprint")  # a scope the door takes as given, never hashes from disk (`settled_refs`)


def replay(data: Union[bytes, Iterable[bytes], Callable[[], Iterable[bytes]]], share: Optional[Share] = None,
           needed: Optional[FrozenSet[str]] = None, disk: Optional[Dict[str, str]] = None,
           from_line: int = 0, distrust: FrozenSet[int] = frozenset(), packed: bool = True) -> List[Problem]:
    """Every line the door would have refused, in ledger order (`in_order`). `data`: the ledger's
    bytes, its bytes in pieces, or a function giving its pieces afresh. Lines that do not parse are
    skipped (the well-formedness checks name them). `share`: judge only the lines of these namespaces
    (`Share`); all when None. `needed` (with `share`, and `data` that can be read again): the priors
    other lines name (`replay_split.survey`) — another namespace's block naming none of them is not
    folded (core/replay_split.py); a line naming one skipped so starts the replay again, folding all.
    `disk`, `from_line`: the code's own hashes of the scopes a change's findings stand on, and the
    change's first line (core/on_the_code.py). `distrust`: the seals whose mark no merge wrote (core/unseen.py),
    judged as if unmarked. `packed`: the priors folded are held packed (core/replay_kept.py: the same answer,
    in a third of the memory, for ~2% more time)."""
    skipping = share is not None and needed is not None and (callable(data) or isinstance(data, bytes))
    try:
        return _replay(data, share, needed if skipping else None, disk, from_line, distrust, packed)
    except Overlooked:
        return _replay(data, share, None, disk, from_line, distrust, packed)


def _replay(data: Any, share: Optional[Share], needed: Optional[FrozenSet[str]], disk: Optional[Dict[str, str]],
            from_line: int, distrust: FrozenSet[int], packed: bool) -> List[Problem]:
    rp = Replay(share, needed, disk, from_line, distrust)
    rp.packed = packed
    collecting = gc.isenabled()
    gc.disable()  # a few hundred thousand acyclic records and states: a collection would only cost time
    try:
        source = data() if callable(data) else data
        for no, rec in records(source) if needed is None else half_records(source, rp):
            rp.line(no, rec)
        rp.finish()
    finally:
        if collecting:
            gc.enable()
    return rp.problems


def in_order(problems: Iterable[Problem]) -> List[Problem]:
    """Problems by line, and on one line by code and message: the same order however they were found."""
    return sorted(problems, key=lambda p: (p.line, p.code, p.message))


class Replay(SplitHalf, KeptPriors):
    """The ledger folded line by line, each run block judged when its seal arrives."""

    def __init__(self, share: Optional[Share] = None, needed: Optional[FrozenSet[str]] = None,
                 disk: Optional[Dict[str, str]] = None, from_line: int = 0, distrust: FrozenSet[int] = frozenset()) -> None:
        self.share = share
        self.needed = needed  # the priors other lines name: never skipped (None: nothing is skipped)
        self.foreign: Dict[str, Any] = {}  # prior -> its namespace, for a prior whose block was skipped
        self.words: Dict[str, str] = {}  # each value of `FEW_VALUES` seen, once
        self.facet_texts: Dict[bytes, bool] = {}  # (`skim`)
        self.others: Dict[bytes, str] = {}
        self.other_names: Set[str] = set()
        self.disk: Dict[str, str] = disk or {}  # the code's own hashes, for the lines from `from_line` on
        self.from_line = from_line  # (core/on_the_code.py)
        self.st = State()
        self.st.loop.update((k, Unkept()) for k in ("first", "commit_at", "lessons", "spans"))  # (never read here,
        self.st.commits = Unkept()  # nor the seals: ~7 MB at 100k)
        self.problems: List[Problem] = []
        self.index: Dict[str, ScopeIndex] = {}  # namespace -> its findings and floors by scope ref
        # namespace -> the hash of (scope ref, None when repo-wide; "claim" | "dir" | "raw"; the claim's key's hash
        # (`key_of`) or the direction) -> priors (one prior, or a list of them when several: most keys hold one, and
        # a list each would cost ~13 MB at 100k). Hashes, not the tuples: ~6 MB less at 100k; a pool that meets
        # another key by a collision only holds one more prior, which the door's own rule tells apart.
        self.same: Dict[str, Dict[int, Any]] = {}
        self.order: Dict[str, int] = {}  # prior judged here, or lesson -> its place in the ledger (the door's pool order)
        # namespace -> a normalized claim (as a packed prior holds it: `held_claim`) -> the first prior saying it
        self.claims: Dict[str, Dict[Any, PriorState]] = {}
        self.shapes = Shapes()  # the shapes of the records kept (`replay_kept.pack`)
        self.packed = True  # whether the priors folded are held packed (`replay`)
        self.pending: List[Tuple[int, Dict[str, Any]]] = []  # the open block's lines
        self.pending_run: Any = None
        self.last_key: Optional[Tuple[str, int]] = None  # (claim, its claim_key's hash): see `key_of`
        self.last_normal: Tuple[Any, str] = (None, "")  # (claim, its normal form): see `normal`
        self.door_seen = 0  # the newest door a seal named so far: no later block is judged by an older one's rules
        self.measure = True  # whether this block is compared by meaning with today's measure (`flush`)
        self.across = True  # whether another namespace's settled ground counts for SETTLED_NEARBY (`door: 4`)
        self.lessons = LessonIndex()  # every lesson folded, looked up by meaning for a run sealed `door: 5` or later
        self.lessons.whole = unpacked  # (a lesson packed, as every prior, until it is filed there)
        self.lesson_level = DOOR  # the door whose lesson rules hold for this block (`flush`)
        self.replaced: Dict[str, List[str]] = {}  # lesson -> those a person retired as "superseded by" it (`lineage`)
        self.mark: Any = None  # what this block's run saw of decisions made on a parallel branch (core/unseen.py)
        self.distrust = distrust  # seals whose mark no merge wrote (ops/verify.py `merge_marks`)
        self.overruled: Dict[str, Tuple[int, str, bool]] = {}  # prior -> (line, status, named here): `agent_verdict`
        # every prior a person ever made binding, of every namespace (filtered by what is binding then): findings by scope
        # (compared by meaning too); the rest — lessons, floors, repo-wide findings, which meet only the same words on the
        # same scope — by the hash of (scope ref or None, claim key), and those on code by scope too (for `as_on_disk`)
        self.decided, self.decided_code = ScopeIndex(), ScopeIndex()
        self.decided_names = DecidedNames()  # the decided findings on definitions, by name (door 7's named ground)
        self.decided_words: Dict[int, Any] = {}
        self.in_decided: Set[str] = set()
        self.decided_claims: Dict[int, Any] = {}  # a claim key's hash -> a person's decided findings saying it (door 7)
        self.unkeyed: List[PriorState] = []  # decided findings not yet in `decided_claims` (keyed when first asked)
        self.claimed: Set[str] = set()  # the findings ever put there
        self.relocated = False  # a `moved` event put a prior under a new key, after priors that came later
        self.by_code: Any = None  # decisions by shape and by file hash (core/on_the_code.py `decided_by_code`)

    def add(self, no: int, code: str, message: str) -> None:
        self.problems.append(Problem(no, code, message))

    def key_of(self, claim: str) -> int:
        """`claim_key(claim)`'s hash, kept for the last claim asked: a new prior's is asked when it is judged
        and again when it is folded in. The hash, not the key: ~6 MB less at 100k priors, and a pool that
        meets another claim by a collision only holds one more prior the door's rule tells apart."""
        last = self.last_key
        if last is not None and last[0] == claim:
            return last[1]
        key = hash(claim_key(claim))
        self.last_key = (claim, key)
        return key

    def normal(self, claim: str) -> str:
        """`stored_claim(claim)`, kept for the last claim asked (as `key_of`: a new prior's, judged, then folded)."""
        if self.last_normal[0] is not claim:
            self.last_normal = (claim, stored_claim(claim))
        return self.last_normal[1]

    # -- the walk

    def line(self, no: int, rec: Dict[str, Any]) -> None:
        t = rec.get("t")
        if t == "prior":
            for key in sorted(_SELF_ASSIGNED) if not _SELF_ASSIGNED.isdisjoint(rec) and self.judges(rec.get("ns")) else ():
                if key in rec:
                    self.add(no, "SELF_ASSIGNED_AUTHORITY", f"prior {rec.get('id')} carries `{key}`, which only the keeper"
                             " sets (from a person's `priors decide`) — no candidate can, so no run writes it")
            kept = self.stored(rec)
            self.block_line(no, kept.get("born"), kept)
        elif t == "event" and rec.get("action") in _BLOCK_ACTIONS:
            self.block_line(no, rec.get("run"), rec)
        elif t in ("call", "injected"):
            self.block_line(no, rec.get("run"), rec)
        elif t == "run" and rec.get("action") == "commit":
            if self.pending and self.pending_run != rec.get("run"):
                self.flush(None)  # (sealed by the wrong record: the structural checks name it)
            self.flush(rec, no)
            apply(self.st, rec)
        else:
            if t == "event" and rec.get("action") in ("decide", "redact"):
                self.human_word(rec)
                why = rec.get("reason")
                if type(why) is str and why.startswith("superseded by ") and type(rec.get("id")) is str:
                    self.replaced.setdefault(why[14:], []).append(rec["id"])
            if self.foreign:
                self.check_refs(rec)
            apply(self.st, rec)  # decisions, redactions, scores: between blocks
            pid = rec.get("id")
            self.lessons.touch(pid)  # (a decision may have settled a lesson the lookup held back)
            if t == "event" and rec.get("action") == "decide" and type(pid) is str:
                self.decided_claim(self.st.priors.get(pid))
            if t == "event" and isinstance(pid, str) and pid not in self.in_decided:
                p = self.st.priors.get(pid)
                wide = p is not None and p.facet("scope") == "repo-wide"
                if p is not None and p.binding and (isinstance(p.scope_ref, str) or wide):
                    self.in_decided.add(pid)  # (all the door's `settled_elsewhere` holds)
                    if p.facet("activation") == "verify-phase" and not wide:
                        self.decided.add(p)
                        self.decided_names.add(p)
                    else:
                        held_in(self.decided_words, hash((None if wide else p.scope_ref, self.key_of(p.claim))), p)
                        if not wide and p.facet("scope") not in _NOT_CODE:
                            self.decided_code.add(p)

    stored = staticmethod(stored)  # (a prior's line as the replay keeps it: core/replay_kept.py)

    def decided_claim(self, p: Optional[PriorState]) -> None:
        """`p`, once a person's decision makes it binding, held by its claim (`decided_claims`) when it is no lesson: a
        lesson is held to it whatever its scope (door 7, `protocol.judge_pool`'s `decided`). Keyed only when a lesson
        asks (`decided_saying`): a key read as it reads costs ~57k instructions of a claim with a dash."""
        if (p is not None and p.binding and not p.redacted and type(p.claim) is str and p.id not in self.claimed
                and p.facet("activation") != "run-start"):
            self.claimed.add(p.id)
            self.unkeyed.append(p)

    def decided_saying(self, claim: str) -> List[PriorState]:
        """The findings a person decided (ever: whether binding still is asked by the rule) whose claim is `claim`'s."""
        for p in self.unkeyed:
            held_in(self.decided_claims, hash(read_key(str(p.claim))), p)
        self.unkeyed.clear()
        got = self.decided_claims.get(hash(read_key(claim)))
        return got if type(got) is list else [got] if got is not None else []

    def block_line(self, no: int, run: Any, rec: Dict[str, Any]) -> None:
        if self.pending and run != self.pending_run:
            self.flush(None)
        self.pending_run = run
        self.pending.append((no, rec))

    def finish(self) -> None:
        if self.pending:
            self.flush(None)  # an unsealed block (named by the structural checks) is still judged
        for pid, (no, status, mine) in self.overruled.items():
            if mine:
                self.add(no, "AGENT_AFTER_BINDING", f"an agent verdict on {pid} after a person made it {status}, and no"
                         f" later decision restates {status} — only `priors decide` changes a person's decision (the door"
                         " refuses the verdict, commit sets it aside)")
        self.problems = in_order(self.problems)

    def human_word(self, rec: Dict[str, Any]) -> None:
        """A person's decision that restates the one an agent verdict went against (as the merge driver
        writes it after a parallel branch's lines) answers that verdict; a redaction leaves nothing to judge."""
        pid: Any = rec.get("id")
        got = self.overruled.get(pid) if isinstance(pid, str) else None
        to = rec.get("to")
        if got is not None and (rec.get("action") == "redact" or ("accepted" if to == "keep" else to) == got[1]):
            del self.overruled[pid]

    def flush(self, seal: Optional[Dict[str, Any]], seal_no: int = 0) -> None:
        lines, self.pending, self.pending_run = self.pending, [], None
        # a run is held to the rules of the door its seal names (`door_of`: every verb that seals a run
        # writes it — commit, ingest-sarif, suggest, a scored session, a person's add or import) — but
        # never to an older door's than a seal before it named: from then on the keeper says so on
        # every seal, so a block that does not is held to the newer rules like any other. Door 2
        # (issue 28 before the concept lexicon) kept every rule of today but its similarity measure,
        # which is no longer in the code: such a run is held to all the others.
        door = door_of(seal, bool(self.from_line) and seal_no >= self.from_line)
        level = max(door, self.door_seen)
        if seal is not None and seal.get("by") == "human":
            self.human_block(lines, seal, seal_no)
        else:
            self.measure, self.across, self.mark = level >= LEXICON_DOOR, level >= ACROSS_DOOR, self.unseen(seal, seal_no)
            self.lesson_level = level
            self.agent_block(lines, level < 2)
            self.measure, self.across, self.mark, self.lesson_level = True, True, None, DOOR
            judge_change_line(self, seal_no, seal)  # (a change's seal: the shapes it gives a person's decisions)
        self.door_seen = level

    def unseen(self, seal: Optional[Dict[str, Any]], seal_no: int) -> Any:
        """The seal's mark of what its run saw of decisions it could not (written by the merge driver), when
        well formed (the field checks name any other); one naming a prior no person decided is named."""
        mark = seal.get(UNSEEN) if seal is not None and seal_no not in self.distrust else None
        if not isinstance(mark, dict) or not all(v is None or isinstance(v, str) for v in mark.values()):
            return None
        decided = self.st.loop["decided"]
        for pid in mark if self.judges(seal.get("ns")) else ():  # type: ignore[union-attr]
            if pid not in decided:
                self.add(seal_no, "UNSEEN_UNFOUNDED", f"the run record of {seal.get('run')} says its run did not see a"  # type: ignore[union-attr]
                         f" person's decision on {pid}, but no person decided {pid} before it — the merge driver marks"
                         " only a parallel branch's run, with decisions made on the other side (core/unseen.py)")
        return mark

    # -- a person's lessons, sealed as a run of their own

    def human_block(self, lines: List[Tuple[int, Dict[str, Any]]], seal: Dict[str, Any], seal_no: int) -> None:
        """`add` and `import` seal a person's lessons, and nothing else, as a run `by: human`."""
        run = seal.get("run")
        if self.foreign:
            for _no, rec in lines:
                self.check_refs(rec)
        if seal.get("via") not in _HUMAN_VIA and self.judges(seal.get("ns")):
            self.add(seal_no, "SELF_ASSIGNED_AUTHORITY", f"the run record of {run} says `by: human` but not `via: add` or"
                     " `via: import` — only a person's `add` or `import` seals a run as theirs")
        for no, rec in lines:
            t = rec.get("t")
            if not self.judges(rec.get("ns") if t == "prior" else seal.get("ns")):
                pass
            elif t != "prior":
                what = f"{rec.get('action')} of {rec.get('id')}" if t == "event" else f"{t} record"
                self.add(no, "SELF_ASSIGNED_AUTHORITY", f"{what} stands in {run}, which is sealed `by: human` — a run a"
                         " person seals (`add`, `import`) holds only their lessons; an agent's line is not theirs")
            elif rec.get("redacted") is not True:
                self.human_lesson(no, rec, run)
            self.fold(rec)

    def human_lesson(self, no: int, rec: Dict[str, Any], run: Any) -> None:
        pid, ns = rec.get("id"), rec.get("ns")
        facets = rec.get("facets")
        if not (isinstance(facets, dict) and facets.get("activation") == "run-start"):
            self.add(no, "SELF_ASSIGNED_AUTHORITY", f"prior {pid} is not a lesson (a run-start prior) but stands in {run},"
                     " which is sealed `by: human` — a person's `add` or `import` writes lessons only")
            return
        if not isinstance(ns, str):
            return
        if self.bad_supersedes(no, rec, ns, person=True):
            return
        claim = rec.get("claim")
        same = self.first_saying(ns, stored_claim(claim)) if isinstance(claim, str) else None
        if same is not None and not same.redacted and same.status != "obsolete" and same.id != rec.get("supersedes"):
            self.add(no, "DUPLICATE", f"lesson {pid} repeats {same.id} ({same.status}), already in {ns!r} — `priors add`"
                     " refuses a lesson that is already in the ledger and `import` skips it")

    # -- an agent's run

    def agent_block(self, lines: List[Tuple[int, Dict[str, Any]]], legacy: bool = False) -> None:
        st = self.st
        if self.share is not None and not self.judges_any(lines):
            for no, rec in lines:  # the other half's block: only its state counts here (its priors are
                if self.needed is None or self.kept(rec):  # never in a pool this half judges, so they need
                    if self.foreign:  # no place in its order)
                        self.check_refs(rec)
                    if rec.get("action") == "disposition":  # (the first verdict on a decision, named by the other half)
                        self.agent_verdict(no, rec)
                    self.fold(rec)  # (a `moved` event relocates a person's decision; a lesson is indexed: a person's
            return  # decision on it holds in this half's namespaces too, by meaning — hostile pass 27r)
        if self.foreign:
            for _no, rec in lines:
                self.check_refs(rec)
        known, disposed = revealed(lines, st.priors)  # (core/block_snapshot.py)
        scopes = {ref: h for ref, h in known.items() if h is not None}
        born: Set[Any] = set()
        calls = 0
        for no, rec in lines:
            t = rec.get("t")
            if t == "event" and rec.get("action") == "disposition":
                self.agent_verdict(no, rec)
            elif t == "event" and rec.get("action") == "moved":
                judge_change_line(self, no, rec)
            elif t == "prior":
                if rec.get("redacted") is not True and self.judges(rec.get("ns")):
                    self.agent_prior(no, rec, scopes, disposed, born, legacy, known)
                if isinstance(rec.get("id"), str):
                    born.add(rec["id"])
            elif t == "call":
                calls += 1
                if self.judges(rec.get("ns")):
                    self.call_number(no, rec, calls)
            self.fold(rec)

    def agent_verdict(self, no: int, rec: Dict[str, Any]) -> None:
        """The first agent verdict on a prior whose status only a person gives (the door refuses it; commit sets it
        aside), named by the half judging its namespace then (a prior restated elsewhere: hostile pass 27aw)."""
        pid: Any = rec.get("id")
        p = self.st.priors.get(pid) if isinstance(pid, str) else None
        if p is not None and p.status in PERSON_STATUSES and pid not in self.overruled:
            self.overruled[pid] = (no, p.status, self.judges(p.ns))

    def agent_prior(self, no: int, rec: Dict[str, Any], scopes: Dict[str, str], disposed: Set[Any],
                    born: Set[Any], legacy: bool = False, stated: Any = None) -> None:
        """The door's checks of a candidate, in its order: supersedes, distinct_from, then the conflicts."""
        pid, ns, claim, facets = rec.get("id"), rec.get("ns"), rec.get("claim"), rec.get("facets")
        if not (isinstance(ns, str) and isinstance(claim, str) and isinstance(facets, dict) and facets_known(facets)):
            return  # the field checks name it
        if self.bad_supersedes(no, rec, ns):
            return
        typ = rec.get("type")
        cand = Candidate(rec, typ if isinstance(typ, str) else "custom", facets, self.normal(claim))
        ref, wide = cand.scope_ref, cand.repo_wide
        why = ref_alias(ref) if self.from_line and no >= self.from_line and not wide and isinstance(ref, str) else None
        if why is not None:  # (a change's line: one at the base was judged on its day)
            self.add(no, "UNKNOWN_SCOPE", f"prior {pid} stands on {ref!r}, which is not a scope ref: {why} —"
                     " no snapshot holds it, so the door refuses it (UNKNOWN_SCOPE) and never relates it to a person's"
                     " decision on the path it spells: the keeper never wrote this line")
            return
        if self.bad_distinct_from(no, pid, ns, cand, legacy):
            return
        current = rec.get("scope_hash")
        if (current is None and not wide and isinstance(ref, str)
                and facets.get("activation") == "verify-phase"):
            # the door stamps every finding with its scope's hash from the run's snapshot: one
            # without it could never be compared with the state a person decided on
            self.add(no, "MISSING_FIELD", f"prior {pid}: a finding on {ref} without the scope's hash "
                     "(`scope_hash`): the door always writes it")
            return
        if not wide and not (isinstance(ref, str) and isinstance(current, str)):
            return
        said, rehashed, went = "", {}, None  # type: str, Dict[str, str], Any
        if self.disk and no >= self.from_line and not wide:
            scopes, current, said, rehashed = as_on_disk((self.decided, self.decided_code), self.disk, cand, scopes,
                                                         current, stated, self.mark)
            went = followed_here(self, cand, scopes)  # a person's decision whose code moved here, no event said so
            if went is not None:
                scopes, current, said = went[1], went[2], said + went[3]
        index = self.index.get(ns)
        st = self.st

        mark = self.mark  # (a parallel branch's run: judged against the states it saw, core/unseen.py)
        marked = mark if isinstance(mark, dict) else {}
        measure = self.measure

        def figure(a: str, b: str, inner_ref: str, inner: tuple) -> Optional[float]:  # (None: a run sealed `door: 2`, `flush`)
            return similar(a, b, inner_ref, inner_named(index, inner_ref, inner), legacy) if measure else None

        pool = self.pool(ns, index, cand)
        words = self.decided_words.get(hash((None if wide else ref, self.key_of(cand.claim))))
        near = self.decided.around(cand) if self.decided.items else []
        if words is not None:  # (in ledger order, as the door's pool: ids grow along the ledger)
            near = sorted(near + (words if type(words) is list else [words]), key=lambda q: id_number(PRIOR_RE, q.id))
        lesson = self.lesson_level >= LESSON_DOOR and not legacy and is_lesson_line(facets)  # (door 5: core/lesson_likeness.py)
        if lesson:
            pool, near = with_lessons_met(self.lessons, cand, pool, near, self.order, mark)
        # the pool as the run saw it: a verify item it owed a verdict and gave none came in on another branch — but
        # not one its seal's mark gives a status: that one was in the run's own ledger, and its door compared the
        # finding with it (written out, not a function: ~600k priors a replay of 100k; 0: id, 1: status)
        pool = [p for p in seen_through(pool, mark) if p[0] in disposed or p[0] in born or p[1] not in _SEEN_BY_RUN
                or p.facet("activation") != "verify-phase" or p.scope_ref not in scopes or marked.get(p[0]) is not None]
        elsewhere = [p for p in seen_through(near, mark)  # a person's decision holds in every namespace
                     if p.ns != ns and not p.redacted and (p.binding or (lesson and p.status == "obsolete" and is_lesson(p)))]
        if went is not None:  # (a change's line only: see on_the_code.followed_here)
            for q in seen_through(went[0], mark):  # (elsewhere as `near`: a decision; one a parallel run saw open: sameness)
                (pool if q.ns == ns else elsewhere if q.binding and not q.redacted else []).append(q)
        decided: List[PriorState] = []
        if lesson and self.lesson_level >= DECIDED_FINDING_DOOR:  # (a person's finding with its claim: door 7)
            decided = [q for q in seen_through(self.decided_saying(cand.claim), mark) if q.binding and not q.redacted]
        ground: List[PriorState] = []
        base = ground_of(cand) if not lesson and not legacy and self.lesson_level >= DECIDED_FINDING_DOOR else None
        if base is not None:  # (a person's decision on a definition the finding's words name: door 7)
            got = self.decided_names.around(base, cand.claim)
            ground = named_ground(seen_through(got, mark), cand) if got else []
            if ground and self.disk and no >= self.from_line:  # (a change's line: their scopes as the code has them)
                scopes = dict(scopes)
                for q in ground:
                    h = self.disk.get(q.scope_ref) if isinstance(q.scope_ref, str) and q.scope_ref not in scopes else None
                    if h is not None:
                        scopes[str(q.scope_ref)] = h
        if not pool and not elsewhere and not decided and not ground:
            return  # nothing any rule compares it with (judge_pool would find nothing)
        if rehashed:  # (decisions made before indentation counted, unchanged under that scheme: see on_the_code)
            pool = [as_run_sees(p, {}, rehashed) for p in pool]
            elsewhere = [as_run_sees(p, {}, rehashed) for p in elsewhere]
        try:
            esc = judge_pool(pool, cand, current if isinstance(current, str) else None, scopes, figure,
                             elsewhere=elsewhere, legacy=legacy, more=lambda p: wordings(st, p.id), across=self.across,
                             lessons=self.lesson_level,
                             revised_from=lineage(st.priors, rec["supersedes"], self.replaced) if lesson and "supersedes" in rec
                             else frozenset(), decided=decided, ground=ground, ns=ns, like=self.lessons.like)
        except Refusal as refusal:
            body = refusal.payload()
            of = st.priors.get(str(body.get("of")))
            if of is not None and of in decided and body["refused"] == "RERAISE" and not body.get("similar"):
                self.add(no, "RERAISE", f"lesson {pid} says what {of.id} says, a finding a person made {of.status}"
                         f" (on {of.scope_ref}{', namespace ' + str(of.ns) if of.ns != ns else ''}) — the door refuses"
                         " it (RERAISE) from door 7: a lesson is given to every run, so it would put the settled finding"
                         " back before every agent; the keeper never wrote this line")
                return
            denies = body.get("denies")  # (a revision saying the opposite of a person's lesson: door 8)
            how = f"{'' if denies else ' in other words'} (similarity {body['similarity']})" if body.get("similar") else ""
            what = {"RERAISE": f"{'denies' if denies else 're-raises'} {body.get('of')}{' in a revision of it' if denies else ''}"
                               f"{how}, which a person decided ({body.get('status')})",
                    "DUPLICATE": f"repeats {body.get('of')} ({body.get('status')}){how}",
                    "BELOW_FLOOR": f"is below the {body.get('depth')} floor {body.get('of')} set",
                    "SETTLED_NEARBY": (f"names code a person settled {body.get('of')} on (its words name the definition"
                                       " as code)" if body.get("of") in body.get("named", ()) else
                                       f"stands where a person settled {body.get('of')}") + " and does not name it in"
                                      " `distinct_from`"}.get(body["refused"],
                                                                                                   f"meets {body.get('of')}") + (
                "" if body["refused"] in ("RERAISE", "DUPLICATE") else how)
            where = (f" on {of.scope_ref}" + (f" (namespace {of.ns})" if of.ns != ns else "")) if of and of.scope_ref else ""
            # (a lesson is compared by meaning whatever its scope, and a repo-wide prior has no scope state)
            state = "" if cand.repo_wide or (lesson and body.get("similar")) else ", on the same scope state"
            rebase = (" (or a rebase or cherry-pick replayed its run after a decision it never saw: docs/ci.md, \"A"
                      " parallel branch's run\")") if self.from_line and no >= self.from_line and of is not None and (
                          of.binding or of.status == "obsolete") else ""
            self.add(no, body["refused"], f"prior {pid} {what}{where}{state} — the door refuses it "
                     f"({body['refused']}), so the keeper never wrote this line" + said + rebase)
            return
        if esc is not None:
            self.add(no, "REVERSAL", f"prior {pid} reverses {esc['conflicts_with']}, which is settled, on the same scope"
                     " state — the door refuses it (REVERSAL) and puts it to a person as a call instead")

    def pool(self, ns: str, index: Optional[ScopeIndex], cand: Candidate) -> List[PriorState]:
        """Every prior of `ns` that can meet one of the door's rules for `cand`, in ledger order: those on
        its very scope with its claim, its direction or the opposite direction (the exact and reversal
        rules: its own direction's opposite and the directions it names in `opposes`), and — for a finding
        that is not repo-wide — the findings and floors around its scope
        (`ScopeIndex.around`: by meaning, by floor). The door scans a namespace's whole pool around a
        scope for each of a run's few candidates; over a whole ledger that is quadratic, so the replay
        looks up what can match instead. The same priors meet the same rules: same answer."""
        ref = cand.scope_ref if not cand.repo_wide else None
        same = self.same.get(ns)
        found: List[List[PriorState]] = []  # the lists that apply; mostly none
        if same is not None:
            keys: List[Tuple[Any, str, Any]] = [(ref, "claim", self.key_of(cand.claim))]
            direction = cand.direction
            if direction is not None:
                cdir = norm_direction(direction)
                if cdir is not None:
                    keys.append((ref, "dir", cdir))
                if direction in OPPOSED:
                    keys.append((ref, "raw", OPPOSED[direction]))
            for named in cand.opposes:  # the directions it says it opposes (`grammar.opposes`; hostile pass 27ao)
                keys.append((ref, "raw", named))
            for key in keys:
                hit = same.get(hash(key))
                if hit is not None:
                    found.append(hit if type(hit) is list else [hit])
        if index is not None and not cand.repo_wide and (cand.severity is not None
                                                         or cand.facets.get("activation") == "verify-phase"):
            hit = index.around(cand)  # (a floor judges a severity; meaning, a finding)
            if hit:  # (on its very scope, a prior the index holds is among these already)
                found = [ps for ps in found if any(q.facet("activation") not in _INDEXED for q in ps)]
                if not found:
                    return hit  # (in ledger order: the index keeps a moved prior's place)
                found.append(hit)
        if not found:
            return []
        if len(found) == 1 and not self.relocated:  # one list, in ledger order (until a move appends out of it)
            return list(found[0])
        order = self.order
        got = {order[p.id]: p for ps in found for p in ps}
        return [got[i] for i in sorted(got)]

    def bad_supersedes(self, no: int, rec: Dict[str, Any], ns: str, person: bool = False) -> bool:
        value = rec.get("supersedes")
        if value is None:
            return False
        target = self.st.priors.get(value) if isinstance(value, str) else None
        if target is not None and (target.redacted or target.rec.get("redacted") is True):
            # its content is gone (a redaction): what it was cannot be judged — a tombstone a person's
            # decide event follows (`add`, `activate`) reads as decided here, not as redacted
            return False
        try:
            check_supersedes(self.st, value, ns, retired_ok=person or self.lesson_level < SETTLED_LESSON_DOOR
                             or (type(self.mark) is dict and self.mark.get(value, "obsolete") != "obsolete"))  # as it saw it
        except UsageError as exc:
            why = str(exc).split(": ", 1)[-1]
            self.add(no, "SUPERSEDES_NOT_LESSON", f"prior {rec.get('id')}: {why}")
            return True
        return False

    def bad_distinct_from(self, no: int, pid: Any, ns: str, cand: Candidate, legacy: bool = False) -> bool:
        if "distinct_from" not in cand.raw:
            return False
        words = folded(cand.claim) if legacy else claim_key(cand.claim)
        for other in sorted(set(cand.distinct_from)):
            p = self.st.priors.get(other)
            if p is None:
                continue  # staged, then withdrawn or dropped at commit: the door saw it, the ledger never did
            if p.ns != ns and not (self.across and settled_by_person(p)):
                self.add(no, "DISTINCT_FROM_UNKNOWN", f"prior {pid}: `distinct_from` names {other}, a prior of namespace "
                         f"{p.ns!r}, not {ns!r}, that no person settled — the door refuses it (DISTINCT_FROM_UNKNOWN)")
                return True
            if same_words(p, words, legacy):
                code = "RERAISE" if p.binding else "DUPLICATE"
                self.add(no, code, f"prior {pid} says what {other} says in the same words, and names it in `distinct_from`"
                         " — that sets aside a finding or lesson that only sounds alike, never the same claim"
                         f" (the door refuses {code})")
                return True
        return False

    def call_number(self, no: int, rec: Dict[str, Any], n: int) -> None:
        run, cid = rec.get("run"), rec.get("call_id")
        if isinstance(run, str) and isinstance(cid, str) and cid.startswith(run + "-C-") and cid != f"{run}-C-{n:02d}":
            self.add(no, "CALL_OUT_OF_SEQUENCE", f"call {cid} is the call number {n} of {run}: commit numbers a run's"
                     f" calls {run}-C-01, -C-02, … in order, so it would be {run}-C-{n:02d}")

    # -- the state

    def fold(self, rec: Dict[str, Any]) -> None:
        st = self.st
        pid: Any = rec.get("id")
        t = rec.get("t")
        new = t == "prior" and isinstance(pid, str) and pid not in st.priors
        if t == "event" and rec.get("action") == "moved" and isinstance(pid, str) and pid in st.priors:
            self.relocate(st.priors[pid], rec)
            return
        apply(st, rec)
        p = st.priors.get(pid) if t == "prior" and type(pid) is str else None
        if not new:
            self.lessons.touch(pid, p)  # (an event, or a prior line restating it)
        if p is None:
            return
        facets, said = rec.get("facets"), rec.get("claim")
        facets = facets if type(facets) is dict else {}
        active = facets.get("activation")
        if not (self.packed and pack(p, rec, self.shapes, self.words)):
            self.interned(rec)  # (held as its values from now on, core/replay_kept.py — else kept as it is)
        if not new:
            return
        said = said if isinstance(said, str) else ""  # (`PriorState.claim`)
        ns, ref = p.ns, p.scope_ref
        if not isinstance(ns, str) or p.redacted:
            return
        mine = self.judges(ns)
        if active == "run-start":  # (another namespace's too: a person's decision on it holds here)
            self.lessons.add(p, mine)
        if active == "run-start" or mine:  # (a lesson another half judges has a place too: a line may restate it
            self.order[pid] = len(self.order)  # in a namespace judged here, `meeting`)
        if not mine:
            return
        if active in _INDEXED and ref is not None:
            index = self.index.get(ns)  # what is compared by meaning or by floor
            if index is None:
                index = self.index[ns] = ScopeIndex()
            index.add(p)
        claim = self.normal(said)
        vals = p[6] if claim is said and p[5] is None else None  # (packed: its claim as UTF-8, `first_saying`)
        self.claims.setdefault(ns, {}).setdefault(vals[0] if vals and type(vals[0]) is bytes else claim, p)
        same = self.same.setdefault(ns, {})
        for key in self.keys(None if facets.get("scope") == "repo-wide" else ref, claim, rec.get("direction")):
            held_in(same, key, p)

    def keys(self, ref: Any, claim: str, direction: Any) -> List[int]:
        """Where a prior is held in `same`: its claim, and its direction as written and normalized, on `ref`
        (claims that fold alike share a key: the door's rule tells them apart or not)."""
        keys: List[Tuple[Any, str, Any]] = [(ref, "claim", self.key_of(claim))]
        if isinstance(direction, str):
            keys.append((ref, "raw", direction))
            ndir = norm_direction(direction)
            if ndir is not None:
                keys.append((ref, "dir", ndir))
        return [hash(k) for k in keys]

    def relocate(self, p: PriorState, rec: Dict[str, Any]) -> None:
        """A `moved` event: the prior stands on its new ref from now on — in the fold, in its namespace's
        index, among the priors a person decided and under the exact rule's keys."""
        old = p.scope_ref
        apply(self.st, rec)
        if p.scope_ref == old:
            return
        self.relocated = True
        if p.id in self.in_decided:
            self.decided_names.relocate(p, old)
        for index in (self.index.get(p.ns), self.decided, self.decided_code):
            if index is not None:
                index.relocate(p, old)
        if p.facet("scope") != "repo-wide" and dropped_from(self.decided_words, hash((old, self.key_of(p.claim))), p):
            held_in(self.decided_words, hash((p.scope_ref, self.key_of(p.claim))), p)  # (a lesson or floor a person decided)
        same = self.same.get(p.ns)
        if same is None or p.facet("scope") == "repo-wide":
            return
        claim, direction = stored_claim(p.claim), p.rec.get("direction")
        for key, new in zip(self.keys(old, claim, direction), self.keys(p.scope_ref, claim, direction)):
            if dropped_from(same, key, p):
                held_in(same, new, p)

