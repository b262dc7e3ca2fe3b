"""Staging new findings in an open run (`propose`): each candidate judged exactly as the contract
orders — grammar, location, then the door's rules (`core/protocol.py:judge_candidate`: supersedes,
scope, distinct_from, secrets, duplicates, re-raises, reversals and floors; commit judges every
staged prior through them again). `propose_one` is the one way a candidate is staged:
`ingest-sarif` uses it too. A module of its own: only proposing loads the location resolver.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.canonical import normalize
from priors.core.commit_plan import ATTEMPTS_KEPT
from priors.core.errors import DamagedLedger, Refusal, UsageError
from priors.core.fold import next_prior_id, prior_number
from priors.core.grammar import check_run_id, validate
from priors.core.protocol import (
    check_run_for_propose,
    escalation_known,
    judge_candidate,
    prior_record,
    reversal_refusal,
)
from priors.core.secret_patterns import guard
from priors.core.vocabulary import ATTEMPT_CODES
from priors.ops.ground import resolve_location
from priors.ops.run import refused_item
from priors.store import lesson_keys
from priors.store.ledger import load_ledger, read_spans
from priors.store.lock import Lock
from priors.store.paths import Paths, require_init
from priors.store.staging import read_run, save_staging

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Tuple

    from priors.core.fold import State
    from priors.core.run_files import RunFiles


def propose_one(st: State, rf: RunFiles, raw: Any, ns: str, next_id: List[int], paths: Optional[Paths] = None,
                analyzer: bool = False) -> Dict[str, Any]:
    """Judge one candidate exactly as the contract orders; returns the staged record (`next_id`: the
    highest prior number taken so far, moved on when this one is staged). `analyzer`: a result of
    `ingest-sarif`, the one caller whose candidates may carry an analyzer's identity."""
    check_run_for_propose(st, rf, ns)
    if paths is not None and isinstance(raw, dict) and (raw.get("at") is not None or raw.get("file") is not None):
        validate(raw, analyzer)  # the grammar first: only a sound candidate's location is resolved
        raw = resolve_location(paths, rf, raw)  # the prior records the resolved scope_ref
    cand, current, esc = judge_candidate(st, rf, raw, ns, analyzer)
    if esc is not None:
        if not escalation_known(rf, esc):
            rf.escalations.append({k: v for k, v in esc.items() if v is not None})
        raise reversal_refusal(esc)
    pid = next_prior_id(next_id[0])
    next_id[0] += 1
    rec = prior_record(cand, pid, ns, rf.run, current)
    rf.staged.append(rec)
    return rec


def with_reasons(paths: Paths, r: Refusal) -> None:
    """A SETTLED_NEARBY refusal lists each prior a person settled with their reason (the last
    decision's `--because`, unless redacted): the ledger is read for it only when one is refused."""
    settled = r.details.get("settled") if r.code == "SETTLED_NEARBY" else None
    if not settled:
        return
    want = {s.get("id") for s in settled}

    def note(spans: Any, _src: Any) -> Dict[str, Any]:  # (a block at a time, none held: called again on a strict parse)
        reasons: Dict[str, Any] = {}
        for rec, _at, _n in spans:
            pid = rec.get("id")  # (an id that is a list or an object is no prior's)
            if rec.get("t") == "event" and rec.get("action") == "decide" and type(pid) is str and pid in want:
                reasons[rec["id"]] = rec.get("reason")
        return reasons

    reasons = read_spans(paths, note, packs=True)
    for s in settled:
        why = reasons.get(s.get("id"))
        if isinstance(why, str):
            s["reason"] = why
def note_attempt(st: State, rf: RunFiles, body: Dict[str, Any], raw: Any) -> None:
    """Keep what the door refused, when it names a prior of the ledger (a re-raise, a duplicate, a
    reversal, a finding below a floor): commit puts it on the run's seal, so a person sees how often
    agents try to raise a settled prior again. Once per run for the same refusal of the same words."""
    of = body.get("of")
    if body.get("refused") not in ATTEMPT_CODES or not isinstance(of, str) or of not in st.priors:
        return
    said = raw.get("claim") if isinstance(raw, dict) else None
    claim = normalize(said) if isinstance(said, str) else ""
    if not claim:
        return
    try:
        guard({"claim": claim})  # never keep words that look like a credential (a refusal may come before the guard)
    except Refusal:
        return
    tried = {"claim": claim, "code": body["refused"], "of": of}
    if tried not in rf.attempts and sum(1 for a in rf.attempts if isinstance(a, dict) and a.get("of") == of) < ATTEMPTS_KEPT:
        rf.attempts.append(tried)


def highest_staged(st: State, rf: RunFiles) -> int:
    """The highest prior number the ledger or this run's staging holds, or `withdraw` took back from it:
    the next proposal takes the one after (an id withdrawn is never handed to another finding of the run)."""
    return max([st.max_prior] + [prior_number(r.get("id")) for r in rf.staged if isinstance(r, dict)]
               + [prior_number(x) for x in rf.freed])


def propose(paths: Paths, run: str, ns: str, items: List[Tuple[str, Any]]) -> Answer:
    """Judge each (label, candidate) in order, each as if proposed alone. JSON: `{"run", "items":
    [{"item", "id"[, "scope_ref"]} | refusal + "item"]}`; one candidate refused alone is the refusal."""
    check_run_id(run, "propose")
    if not items:
        raise UsageError("priors propose: give at least one candidate")
    batch = len(items) > 1
    if batch:
        for label, raw in items:
            try:
                validate(raw)
            except UsageError as exc:
                raise UsageError(f"{exc} (in {label}; nothing was staged)") from None
    require_init(paths)
    with Lock(paths):
        st = load_ledger(paths, want_data=False).state
        rf = read_run(paths, run, snapshot="compact", known=st.priors)
        rf.known_keys = lesson_keys.load(paths.dir)  # (lessons' signatures from earlier calls: read when a lesson is judged)
        before = (len(rf.staged), len(rf.escalations), len(rf.attempts))
        next_id = [highest_staged(st, rf)]
        results: List[Tuple[bool, str]] = []
        out: List[Dict[str, Any]] = []
        try:
            for label, raw in items:
                try:
                    rec = propose_one(st, rf, raw, ns, next_id, paths)
                except DamagedLedger:
                    raise
                except UsageError as exc:  # name the candidate's file, as a batch does: the person knows what to fix
                    raise UsageError(f"{exc} (in {label})") from None
                except Refusal as r:
                    with_reasons(paths, r)
                    # an agent's proposal the door refused because of a prior: kept for the person (an analyzer's
                    # re-report through ingest-sarif is no agent pressing, and is counted there as suppressed)
                    note_attempt(st, rf, r.payload(), raw)
                    if not batch:
                        save_staging(paths, rf, before)
                        raise
                    refused_item(r, label, results, out)
                    continue
                results.append((True, f"{rec['id']} staged (new)"))
                staged = {"id": rec["id"], "item": label}
                if isinstance(rec.get("scope_ref"), str):
                    staged["scope_ref"] = rec["scope_ref"]  # where an `at` location resolved to
                out.append(staged)
        finally:
            lesson_keys.save(paths.dir, rf.known_keys)
        save_staging(paths, rf, before)
    code = 0 if all(ok for ok, _ in results) else 1
    return Answer(code, {"items": out, "run": run}, "\n".join(text for _, text in results))


