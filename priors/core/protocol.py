"""The run protocol's rules: selection, dispositions, proposals and commit planning.
"""

from __future__ import annotations

from priors.core.canonical import normalize
from priors.core.errors import Refusal
from priors.core.fold import PriorState, State, prior_number
from priors.core.grammar import SEVERITY_RANK, Candidate, check_tags, identity_of, opposes, validate
from priors.core.lesson_likeness import claim_of, is_lesson_line, lesson_refusal, lineage, most_similar_lesson
from priors.core.lessons import check_supersedes, is_lesson, person_settled
from priors.core.moves import as_run_sees
from priors.core.named_ground import ground_of, named_ground
from priors.core.propose_pool import pool_for, read_key, with_run_dispositions
from priors.core.run_files import RunFiles, require_open
from priors.core.sameness import folded_into, wordings
from priors.core.secret_patterns import guard
from priors.core.similarity import claim_key, folded, norm_direction, same_claim, scopes_related, settled_near, similar
from priors.core.vocabulary import DECIDED_FINDING_DOOR, DOOR, LESSON_DOOR

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

QUIESCENT = "Everything settled still holds. Nothing new."
REVERSIBLE = ("fixed", "accepted", "wontfix")  # a candidate opposing a prior in one of these files a call for a person


# ------------------------------------------------------------------ run checks


def missing_dispositions(rf: RunFiles) -> List[str]:
    return [pid for pid, item in rf.verify_states().items() if item[0] != "missing" and not rf.is_disposed(pid)]


# ------------------------------------------------------------------ disposition


def judge_disposition(st: State, rf: RunFiles, pid: str, verdict: str) -> Dict[str, Any]:
    """The disposition event for `pid`, or the refusal the contract orders first."""
    require_open(st, rf)
    p = st.priors.get(pid)
    if p is None:
        raise Refusal("UNKNOWN_PRIOR", id=pid)
    if p.ns != rf.ns:
        raise Refusal("PRIOR_OUTSIDE_RUN", id=pid, run=rf.run, ns=rf.ns)
    if p.binding:
        raise Refusal("BINDING_IMMUTABLE", id=pid, status=p.status,
                      hint="a human decided this; only `priors decide` can change it")
    if p.redacted:
        raise Refusal("REDACTED", id=pid)
    item = rf.verify_states().get(pid)  # (scopeState, changed, a moved item's scope_ref)
    if item is None and not (verdict == "challenged" and rf.is_injected(pid)):
        raise Refusal("PRIOR_OUTSIDE_RUN", id=pid, run=rf.run,
                      hint="only this run's verify items (or a challenged inject item) take a disposition")
    if verdict == "challenged" and not rf.is_injected(pid):
        raise Refusal("CHALLENGE_REQUIRES_INJECTED_PRIOR", id=pid)
    state = item[0] if item else None
    moved = state == "moved"
    if moved:  # the code moved: judged as it stands there, edited or not
        state = "changed" if item and item[1] else "unchanged"
    if state == "missing":
        raise Refusal("MISSING_SCOPE", id=pid,
                      hint="its scope is not in this run's snapshot; leave it — commit records it as missing")
    where = f"its code moved to {item[2]} unedited" if moved and item else "its code is unchanged"
    if verdict == "reaffirmed" and state == "unchanged":
        raise Refusal("REAFFIRM_REQUIRES_CHANGE", id=pid,
                      hint=f"{where}: say still-open (it is carried) or fixed — reaffirmed is for code that changed")
    if verdict == "still-open" and state == "changed":
        raise Refusal("CHANGED_SCOPE_REQUIRES_REJUDGMENT", id=pid,
                      hint="the code changed: re-check it and say fixed, reaffirmed or stale")
    if verdict == "stale" and state == "unchanged":
        raise Refusal("STALE_REQUIRES_CHANGE", id=pid,
                      hint=f"{where}: say still-open (it is carried) or fixed — stale is for code that changed")
    if rf.is_disposed(pid):
        raise Refusal("ALREADY_DISPOSITIONED", id=pid, run=rf.run,
                      hint=f"this run has its verdict on {pid} already; to give another, `priors abort --run {rf.run}`"
                           " drops all of the run's staging (every verdict and proposal), then open a new run")
    event = {"t": "event", "id": pid, "action": "disposition", "to": verdict, "run": rf.run, "by": "agent"}
    ref = item[2] if moved and item is not None else p.scope_ref
    if item is not None and ref is not None:  # as the reference: only verify items carry it
        scopes = rf.scopes
        if ref in scopes:
            event["scope_hash"] = scopes[ref]
    return event


# ------------------------------------------------------------------ propose


def _same_scope(p: PriorState, cand: Candidate, current: Optional[str]) -> bool:
    if cand.repo_wide:
        return p.facet("scope") == "repo-wide"
    return p.scope_ref == cand.scope_ref and p.scope_hash == current


def check_run_for_propose(st: State, rf: RunFiles, ns: str) -> None:
    require_open(st, rf)
    if rf.ns != ns:
        raise Refusal("RUN_NAMESPACE_MISMATCH", run=rf.run, expected=rf.ns, received=ns)
    missing = missing_dispositions(rf)
    if missing:
        raise Refusal("PRIOR_OBLIGATIONS_OPEN", missing=missing,
                      hint="disposition every verify item first: `priors disposition <id> <verdict> --run " + rf.run + "`")


def judge_candidate(st: State, rf: RunFiles, raw: Any, ns: str, analyzer: bool = False
                    ) -> Tuple[Candidate, Optional[str], Optional[Dict[str, Any]]]:
    """The door's rules for one candidate whose location is resolved, in the contract's order:
    grammar, supersedes, scope, distinct_from, secrets, then duplicates, re-raises, reversals and
    floors (`find_conflict`). Returns (candidate, the scope's hash, the escalation a reversal files —
    or None); raises the usage error or the refusal. `propose` stages through it, and `commit`
    judges every staged prior through it again, against the ledger as it is then. `analyzer`: a
    result of `ingest-sarif`, which alone may carry an analyzer's identity (`rule`, `fingerprint`)."""
    cand = validate(raw, analyzer)
    check_supersedes(st, raw.get("supersedes"), ns)  # lessons loop: a usage error like any bad field
    current = check_scope(rf, cand)
    check_distinct_from(st, rf, cand, ns)
    guard(raw)  # the secret guard: before anything (a staged prior or a call's claim) can hold the text
    return cand, current, find_conflict(st, rf, cand, current)


def check_scope(rf: RunFiles, cand: Candidate) -> Optional[str]:
    """The snapshot's hash for the candidate's scope (None for repo-wide); refuses unknown or spoofed scopes."""
    if cand.repo_wide:
        return None
    ref = cand.scope_ref
    if ref not in rf.scopes:
        raise Refusal("UNKNOWN_SCOPE", scope_ref=ref, nearest=nearest_refs(str(ref), rf.scopes),
                      hint="propose only against scopes in this run's snapshot (`priors scopes --run " + rf.run + "`)")
    current = rf.scopes[ref]
    given = cand.raw.get("scope_hash")
    if given is not None and given != current:
        raise Refusal("SCOPE_MISMATCH", scope_ref=ref, expected=current, received=given,
                      hint="the keeper takes hashes from the run's snapshot, not from the candidate")
    return current


def check_distinct_from(st: State, rf: RunFiles, cand: Candidate, ns: str) -> None:
    """`distinct_from` must name findings the candidate could be confused with: priors of the run's
    namespace, in the ledger or staged by this run, or a person's decision of another namespace (which
    holds in every namespace: SETTLED_NEARBY). Any other id (none such, or another namespace's prior no
    person settled) would be kept on the prior as an unexplained claim for the human to audit: refused."""
    ids = cand.distinct_from
    if not ids:
        return
    staged = {r.get("id") for r in rf.staged if isinstance(r, dict)}
    unknown = sorted({i for i in ids if i not in st.priors and i not in staged})
    elsewhere = sorted({i for i in ids if i in st.priors and i not in staged and st.priors[i].ns != ns
                        and not settled_by_person(st.priors[i])})
    if unknown or elsewhere:
        detail: Dict[str, Any] = {}
        if unknown:
            detail["unknown"] = unknown
        if elsewhere:
            detail["other_namespace"] = elsewhere
        raise Refusal("DISTINCT_FROM_UNKNOWN", ns=ns, **detail,
                      hint="`distinct_from` names the finding or lesson a refusal named (its `of`, or those `settled` lists): a"
                           " prior of this namespace, or a person's decision of another; drop the ids that are not")
    # Naming a prior says "mine is another finding"; a claim in the prior's own words is not, on any scope.
    words = claim_key(cand.claim)
    for pid in sorted(set(ids)):
        p = st.priors.get(pid)
        if p is not None and same_words(p, words):
            refusal = _same_refusal(p, elsewhere=p.ns != ns)
            refusal.details["hint"] = (f"{pid} says the same in the same words; `distinct_from` sets aside a finding"
                                       " or lesson that only sounds alike, never the same claim")
            raise refusal
        for r in rf.staged:
            if isinstance(r, dict) and r.get("id") == pid and isinstance(r.get("claim"), str) and claim_key(r["claim"]) == words:
                raise Refusal("DUPLICATE", of=pid, status="staged",
                              hint=f"{pid}, staged in this run, says the same in the same words; `distinct_from`"
                                   " sets aside a finding or lesson that only sounds alike, never the same claim")


def settled_by_person(p: PriorState) -> bool:
    """Whether `distinct_from` may name `p` from another namespace: a person's decision, still there to differ from."""
    return p.binding and not p.redacted


def same_words(p: PriorState, words: str, legacy: bool = False) -> bool:
    """`p` says what a candidate whose claim folds to `words` (`claim_key`) says, in the same words:
    naming it in `distinct_from` cannot set the candidate aside from it. A redacted prior says
    nothing. `legacy`: `words` is the fold before issue 28 (`folded`: word breaks kept)."""
    if p.redacted or not isinstance(p.claim, str):
        return False
    return (folded(p.claim) if legacy else claim_key(p.claim)) == words


def nearest_refs(ref: str, scopes: Dict[str, str], n: int = 5) -> List[str]:
    """Existing refs most like `ref`: the same file's definitions first, else close spellings."""
    import difflib

    base = ref.split("#", 1)[0]
    same_file = [r for r in scopes if r == base or r.startswith(base + "#")]
    if same_file and ref != base:
        return difflib.get_close_matches(ref, sorted(same_file), n=n, cutoff=0.0)
    return difflib.get_close_matches(ref, sorted(scopes), n=n, cutoff=0.5)


def find_conflict(st: State, rf: RunFiles, cand: Candidate, current: Optional[str],
                  only: Any = None) -> Optional[Dict[str, Any]]:
    """Duplicate / re-raise / reversal / similar / floor checks. Raises the refusal; returns an escalation to record first.

    `only`: judge against these priors alone (commit re-judging a staged candidate against what a
    person decided while the run was open)."""
    decided: List[PriorState] = []
    ground: List[PriorState] = []
    like = known = None
    keep = True
    if only is None:
        index = pool_for(st, rf)
        pool = index.around(cand)
        elsewhere = index.settled_elsewhere(cand)
        ground = named_ground(index.named_ground(cand), cand)
        if is_lesson_line(cand.facets):  # (door 5: every lesson, whatever its scope; core/lesson_likeness.py)
            pool, elsewhere = index.lessons(pool, elsewhere)
            decided = index.decided(cand)
            like, known, keep = index.like, index.known, index.keep_likes
    else:
        decided = [st.priors[i] for i in sorted(only, key=lambda x: (prior_number(x), x)) if i in st.priors
                   and st.priors[i].binding and not st.priors[i].redacted and not is_lesson(st.priors[i])
                   and isinstance(st.priors[i].claim, str) and read_key(st.priors[i].claim) == read_key(cand.claim)]
        base = ground_of(cand)
        ground = named_ground([st.priors[i] for i in sorted(only, key=lambda x: (prior_number(x), x)) if i in st.priors
                              and base is not None and scopes_related(base, st.priors[i].scope_ref)], cand)
        pool = [p for p in with_run_dispositions(st, rf) if p.id in only]
        elsewhere = [as_run_sees(st.priors[i], {}, rf.rehashed) for i in sorted(only, key=lambda x: (prior_number(x), x))
                     if i in st.priors and st.priors[i].ns != rf.ns and not st.priors[i].redacted
                     and (st.priors[i].binding or (is_lesson(st.priors[i]) and person_settled(st.priors[i])))]
    return judge_pool(pool, cand, current, rf.scopes, elsewhere=elsewhere, more=lambda p: wordings(st, p.id),
                      home=lambda p: st.priors[folded_into(st, p.id)] if st.same_as else p,
                      revised_from=lineage(st.priors, cand.raw.get("supersedes")), decided=decided, ground=ground,
                      ns=rf.ns, like=like, known=known, keep=keep)


def judge_pool(pool: List[PriorState], cand: Candidate, current: Optional[str], scopes: Dict[str, str],
               figure: Any = None, elsewhere: Sequence[PriorState] = (), legacy: bool = False,
               more: Any = None, home: Any = None, across: bool = True, lessons: int = DOOR,
               revised_from: FrozenSet[str] = frozenset(), decided: Sequence[PriorState] = (),
               ground: Sequence[PriorState] = (), ns: Optional[str] = None, like: Any = None,
               known: Any = None, keep: bool = True) -> Optional[Dict[str, Any]]:
    """The door's duplicate / re-raise / reversal / similar / settled-nearby / floor rules for `cand`
    against `pool` (the priors of its namespace around its scope, in pool order) and `elsewhere` (the
    binding priors of other namespaces around it: a person's decision holds in every namespace),
    `current` its scope's hash and `scopes` the run's snapshot. Raises the refusal; returns an
    escalation to record first. `figure`: how two claims are found the same finding
    (`similarity.similar` unless given; `verify`'s replay, which does not have the run's snapshot,
    passes a stricter one). `more`: a prior → the other wordings a person folded into it
    (`fold.wordings`), compared by meaning as its own claim is; `home`: a prior → the one a person
    decided it is the same as (`fold.folded_into`), which a repeat of its words repeats. `legacy`: the rules as they were
    before issue 28 (byte-equal claims only, no SETTLED_NEARBY) — what `verify` holds a run sealed
    without `door: 2` to. `across`: whether ground a person settled in another namespace counts for
    SETTLED_NEARBY as their own namespace's does (`door: 4` on; a run sealed before was judged without)
    — for an agent's finding, not an analyzer's result. `lessons`: the door whose lesson rules hold — a
    lesson is compared with lessons by meaning from `door: 5` (core/lesson_likeness.py); `revised_from`,
    the `lineage` of the lesson a lesson candidate revises; `decided`, a person's decided findings whose
    claim is the candidate's, whatever their scope — from `door: 7` a lesson saying one is its re-raise
    (injected into every run, it would put the settled finding back before every agent: hostile pass 27ah);
    `ground`, a person's decisions on definitions the candidate's words name (`named_ground`), which from
    `door: 7` are settled ground for it wherever in their file, folder or `*` it stands (`ns`: the candidate's
    namespace, which a refusal names another's by). `like`: a claim → its `lesson_likeness.Likeness`
    (`verify`'s replay keeps one for every lesson); `known`: lessons' signatures the door kept from earlier
    calls (`lesson_likeness.KnownKeys`: `most_similar_lesson` skips a lesson whose signature meets none of
    the candidate's). `verify` passes none: it works every lesson out itself."""
    cdir = norm_direction(cand.direction)
    cid = cand.identity
    same_as = (lambda a, b: normalize(a) == b) if legacy else same_claim
    others = {p.id for p in elsewhere}
    if cid is not None:  # an analyzer's result is first the finding with its own identity: one rule's results with two
        # fingerprints on one definition are two findings, each a person may decide (newcomer pass 27ai)
        for p in (*pool, *elsewhere):
            if not p.redacted and identity_of(p.rec) is not None and _same_result(p, cand, current):
                raise _same_refusal(p, elsewhere=p.id in others, state=p.scope_hash == current)
    for p in pool:
        if p.redacted:
            continue
        if cid is not None and identity_of(p.rec) is not None:
            if _same_result(p, cand, current) or _decided_here(p, cand, current):
                raise _same_refusal(p)
            if lessons >= DECIDED_FINDING_DOOR and not legacy and _decided_rule_here(p, cand, current):
                raise _rule_refusal(p)
            continue  # two analyzer results: their identities alone say whether they are one finding
        if not _same_scope(p, cand, current):
            continue
        rec = p.rec if keep else p.record()  # (one candidate, `suggest`: a lesson's record read, not kept — ~10 MB at 100k)
        same = same_as(claim_of(rec), cand.claim) or (cdir is not None and norm_direction(rec.get("direction")) == cdir)
        if same:
            raise _same_refusal(p if home is None or legacy or p.status != "obsolete" else home(p))
        if opposes(cand, rec.get("direction")) and p.status in REVERSIBLE:
            return {"kind": "reversal", "conflicts_with": p.id, "claim": cand.claim, "direction": cand.direction}
    for p in elsewhere:  # the same claim on the same state
        if cid is not None and identity_of(p.rec) is not None:
            if _same_result(p, cand, current) or _decided_here(p, cand, current):
                raise _same_refusal(p, elsewhere=True)
            if lessons >= DECIDED_FINDING_DOOR and not legacy and _decided_rule_here(p, cand, current):
                raise _rule_refusal(p, elsewhere=True)
        elif _same_scope(p, cand, current) and same_as(p.claim, cand.claim):
            raise _same_refusal(p, elsewhere=True)
    # never by meaning between two analyzer results (an agent's finding still meets one by meaning)
    near = _most_similar([p for p in list(pool) + list(elsewhere) if cid is None or identity_of(p.rec) is None],
                         cand, scopes, similar if figure is None else figure, None if legacy else more)
    if near is not None:
        raise _same_refusal(near[0], near[1], elsewhere=near[0].id in others)
    if lessons >= DECIDED_FINDING_DOOR and not legacy and is_lesson_line(cand.facets):
        said = read_key(cand.claim)
        for p in decided:
            if p.binding and not p.redacted and said and read_key(p.claim) == said:
                raise Refusal("RERAISE", of=p.id, status=p.status, ns=p.ns,
                              hint=f"a person decided this as a finding ({p.status}{', in namespace ' + p.ns if p.ns else ''});"
                                   " a lesson that says it again puts it back before every run — do not suggest it")
    if lessons >= LESSON_DOOR and not legacy and is_lesson_line(cand.facets):  # (core/lesson_likeness.py)
        near = most_similar_lesson(list(pool) + list(elsewhere), cand, revised_from, lessons, like, known, keep)  # (any scope)
        if near is not None:  # (the lesson it revises, or one that one replaced, only where it denies it: door 8)
            raise lesson_refusal(*near, elsewhere=near[0].id in others,
                                 denies=near[0].id == cand.raw.get("supersedes") or near[0].id in revised_from)
    if not legacy:
        # (another namespace's ground, for an agent's finding: an analyzer's result cannot name `distinct_from`,
        # and a linter's rule hit beside a reviewer's decision elsewhere is not a rewording of it)
        settled_nearby(pool, cand, scopes, elsewhere if across and cid is None else (),
                       ground if lessons >= DECIDED_FINDING_DOOR and cid is None else (), ns)
    for p in pool:
        floor = _floor_of(p, cand, scopes)
        if floor is not None:
            raise Refusal("BELOW_FLOOR", of=p.id, depth=floor,
                          hint="this scope was reviewed at that depth; report only findings at or above it")
    return None


def _same_result(p: PriorState, cand: Candidate, current: Optional[str]) -> bool:
    """Two analyzer results are one finding when their identity (rule and fingerprint) is the same on
    the same scope — on the same state, or on any state once a person decided it: the fingerprint
    follows the flagged code, so a person's wontfix holds while it stays, wherever the line moves."""
    return (identity_of(p.rec) == cand.identity and p.scope_ref == cand.scope_ref
            and (p.binding or p.scope_hash == current))


def settled_nearby(pool: Sequence[PriorState], cand: Candidate, scopes: Dict[str, str],
                   elsewhere: Sequence[PriorState] = (), ground: Sequence[PriorState] = (), ns: Optional[str] = None) -> None:
    """SETTLED_NEARBY: a finding on ground a person settled — a binding finding of the namespace, or of
    another (`elsewhere`: a person's decision holds in every namespace), on the candidate's definition,
    its enclosing file or definition, or a definition inside it, whose own scope is unchanged in the
    run's snapshot (the state the person decided on; once that code changes the question may be raised
    again, as the contract has it) — must name each such prior in `distinct_from`. No wording escapes a
    person's decision silently: the candidate is refused, or staged with the agent's word that it
    differs, which is put to the person (`status --calls`)."""
    if cand.facets.get("activation") != "verify-phase" or cand.repo_wide or not isinstance(cand.scope_ref, str):
        return
    named = set(cand.distinct_from)
    analyzer = cand.identity is not None  # two analyzer results meet by identity alone (docs/sarif.md): another
    # rule's result beside a person's decision on an analyzer's finding is another finding
    others = {p.id for p in elsewhere}  # (another namespace's: the refusal names it)
    unnamed = [p for p in (list(pool) + list(elsewhere) if elsewhere else pool)
               if p.binding and not p.redacted and p.id not in named
               and not (analyzer and identity_of(p.rec) is not None)
               and p.facet("activation") == "verify-phase" and isinstance(p.scope_ref, str)
               and scopes.get(p.scope_ref) == p.scope_hash and settled_near(p.scope_ref, cand.scope_ref)]
    # a decision on a definition the finding's words name, beside it in its file or inside its folder or `*` (door 7)
    have = {p.id for p in unnamed}
    for p in ground:
        if (p.id not in have and p.id not in named and p.binding and not p.redacted and isinstance(p.scope_ref, str)
                and scopes.get(p.scope_ref) == p.scope_hash):
            have.add(p.id)
            unnamed.append(p)
            if ns is not None and p.ns != ns:
                others.add(p.id)
    if unnamed:
        ids = [p.id for p in unnamed]
        by_name = [p.id for p in unnamed if not settled_near(str(p.scope_ref), cand.scope_ref)]  # (`ground`'s)
        said = ("a person settled findings here" if not by_name else "your claim names code a person settled findings on"
                if len(by_name) == len(ids) else "a person settled findings here and on code your claim names")
        raise Refusal("SETTLED_NEARBY", of=ids[0], **({"named": by_name} if by_name else {}), settled=[
            dict({"id": p.id, "status": p.status, "scope_ref": p.scope_ref, "claim": p.claim},
                 **({"ns": p.ns} if p.id in others else {})) for p in unnamed],
            hint=said + " (`settled`, as `relevant`'s `settled_here` lists them" + (
                 "; `named`: the decisions on a definition your claim names as code" if by_name else "") + (
                 "; one with `ns` is another namespace's decision" if any(p.id in others for p in unnamed) else "")
                 + "); if yours repeats one, drop it — if it differs, "
                 "propose it again with \"distinct_from\": " + str(ids).replace("'", '"')
                 + " and the person will be asked whether it differs")


def door_of(seal: Any, added: bool = False) -> int:
    """The door a run's seal says judged its lines (`DOOR` today; 0 when it says none). A run sealed
    before issue 28 was judged by the rules then (`legacy`); one sealed `door: 2`, by issue 28's rules
    with the similarity measure before the concept lexicon: `verify` holds each run to its own door's
    rules, so that a ledger the keeper wrote replays clean across an upgrade. A run a change `added`
    (verify with git) is held to today's door whatever its seal says: this keeper writes `DOOR` on
    every seal, and an older door named there would let a hand-made run pick older rules (hostile pass 27h)."""
    door = seal.get("door") if isinstance(seal, dict) else None
    said = door if type(door) is int and door > 0 else 0
    return max(said, DOOR) if added else said


def _decided_here(p: PriorState, cand: Candidate, current: Optional[str]) -> bool:
    """A person's decision is stronger than a log's labels: on the very scope state it was decided on,
    the same claim is the decided finding whatever rule or fingerprint the result now carries (a
    renamed tool, a rule id spelled otherwise, a fingerprint added or columns dropped)."""
    return p.binding and _same_scope(p, cand, current) and same_claim(p.claim, cand.claim)


def _decided_rule_here(p: PriorState, cand: Candidate, current: Optional[str]) -> bool:
    """On the very scope state a person decided an analyzer's result on, another result of its rule there is
    that result, whatever fingerprint or message the log now gives it (door 7): the same code gives the
    analyzer's same results, so a new one there is a log's new label — or a forged one (hostile pass 27ah:
    a made-up `partialFingerprints` and a reworded message brought a wontfix F401 back as new)."""
    pid, cid = identity_of(p.rec), cand.identity
    return (p.binding and pid is not None and cid is not None and pid[0] == cid[0] and current is not None
            and _same_scope(p, cand, current))


def _rule_refusal(p: PriorState, elsewhere: bool = False) -> Refusal:
    where = f" in namespace {p.ns} (a person's decision holds in every namespace)" if elsewhere else ""
    return Refusal("RERAISE", of=p.id, status=p.status, **({"ns": p.ns} if elsewhere else {}),
                   hint=f"a human settled a result of this rule here, on this very state{where}; another fingerprint or"
                        " message for it is the log's label, not another finding — do not raise it again")


def _same_refusal(p: PriorState, figure: Optional[float] = None, elsewhere: bool = False, state: bool = True) -> Refusal:
    """`state`: False for an analyzer's result a person decided on another state of its scope, which the
    same rule and fingerprint still are (`_same_result`)."""
    extra: Dict[str, Any] = {} if figure is None else {"similar": True, "similarity": figure}
    where = "on the same state" if state else "as the same result (its rule and fingerprint follow the flagged code)"
    if elsewhere:  # another namespace's: `distinct_from` cannot name it (it names this namespace's priors only)
        return Refusal("RERAISE", of=p.id, status=p.status, ns=p.ns, **extra,
                       hint=f"a human settled this {where} in namespace {p.ns}; a person's decision holds"
                            " in every namespace — do not raise it again")
    if p.binding:
        return Refusal("RERAISE", of=p.id, status=p.status, **extra,
                       hint=f"a human settled this {where}; do not raise it again"
                       + (" (it says the same in other words; `distinct_from` cannot set a person's decision aside:"
                          " if yours is really another finding, tell the person)" if extra else ""))
    return Refusal("DUPLICATE", of=p.id, status=p.status, **extra,
                   hint="already recorded for this exact state" + (_DISTINCT_HINT.replace("<id>", p.id) if extra else ""))


_DISTINCT_HINT = (" (it says the same in other words; if yours is a different finding,"
                  " add \"distinct_from\": [\"<id>\"] to the candidate)")


# A stale finding "no longer fits as written": a rewording is its remedy. Obsolete ones are retired.
_REWORDABLE = ("stale", "obsolete", "obsolete-proposed")


def _most_similar(pool: List[PriorState], cand: Candidate, scopes: Dict[str, str], figure: Any,
                  more: Any = None) -> Optional[tuple]:
    """(prior, figure) for the finding that says the same as `cand` in other words, on a related
    scope that is unchanged in this run's snapshot — or None. Findings only (verify-phase)."""
    if cand.facets.get("activation") != "verify-phase" or cand.repo_wide:
        return None
    skip = set(cand.distinct_from)
    best: Optional[tuple] = None
    for p in pool:
        # `distinct_from` is the agent's word that it is another finding: enough to set aside another
        # agent's, never a person's decision (a similar claim on the state a person settled is theirs)
        if (p.redacted or (p.id in skip and not p.binding) or p.facet("activation") != "verify-phase"
                or p.status in _REWORDABLE):
            continue
        ref = p.scope_ref
        if ref is None or not scopes_related(ref, cand.scope_ref) or scopes.get(ref) != p.scope_hash:
            continue
        claim = p.claim
        if not isinstance(claim, str):
            continue
        inner_ref = _narrower(ref, cand.scope_ref)
        inner = _inner_defs(inner_ref, scopes)
        for said in (claim,) + (tuple(more(p)) if more is not None else ()):  # every wording a person folded in
            got = figure(said, cand.claim, inner_ref, inner)
            if got is not None and (best is None or got > best[1]):
                best = (p, got)
    return best


def _inner_defs(ref: str, scopes: Dict[str, str]) -> tuple:
    """The definitions inside a file or definition scope (their names are the scope's own words)."""
    if ref == "*" or ref.endswith("/"):
        return ()
    lead = ref + ("." if "#" in ref else "#")
    return tuple(r for r in scopes if r.startswith(lead))[:200]


def _narrower(a: str, b: Optional[str]) -> str:
    """Of two related refs, the inner one: its names are what both findings share."""
    if b is None:
        return a
    return b if len(b) >= len(a) else a


def _floor_of(p: PriorState, cand: Candidate, scopes: Dict[str, str]) -> Optional[str]:
    if p.redacted or p.status != "open" or p.facet("activation") != "propose-gate":
        return None
    ref = p.scope_ref
    if ref is None or scopes.get(ref) != p.scope_hash:
        return None
    target = cand.scope_ref
    if not (ref == "*" or (target is not None and target.startswith(ref))):
        return None
    depth = p.rec.get("depth", "major")
    sev = cand.severity
    if sev is None or depth not in SEVERITY_RANK or SEVERITY_RANK[sev] >= SEVERITY_RANK[depth]:
        return None
    return depth


def reversal_refusal(esc: Dict[str, Any]) -> Refusal:
    return Refusal("REVERSAL", of=esc["conflicts_with"],
                   hint="this reverses a settled prior; it was put to the human (`priors status --calls`)")


def escalation_known(rf: RunFiles, esc: Dict[str, Any]) -> bool:
    key = (esc["conflicts_with"], esc["claim"], esc.get("direction"))
    return any(isinstance(e, dict) and (e.get("conflicts_with"), e.get("claim"), e.get("direction")) == key
               for e in rf.escalations)


def prior_record(cand: Candidate, pid: str, ns: str, run: str, current: Optional[str]) -> Dict[str, Any]:
    rec: Dict[str, Any] = {"t": "prior", "id": pid, "ns": ns, "type": cand.type, "facets": dict(cand.facets),
                           "claim": cand.claim, "born": run}
    if not cand.repo_wide:
        rec["scope_ref"] = cand.scope_ref
        rec["scope_hash"] = current
    for key in ("direction", "rule", "fingerprint", "severity", "depth", "evidence", "review_every"):
        if key in cand.raw:
            rec[key] = cand.raw[key]
    if cand.raw.get("tags"):  # lessons loop (docs/lessons.md): tags for ranking, a lesson it supersedes

        rec["tags"] = check_tags(cand.raw["tags"])
    if isinstance(cand.raw.get("supersedes"), str):
        rec["supersedes"] = cand.raw["supersedes"]
    if cand.distinct_from:  # the agent's word that this is not the similar finding: kept for the human to audit
        rec["distinct_from"] = sorted(set(cand.distinct_from))
    return rec
