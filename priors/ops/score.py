"""`priors score`: a person's verdict on how a committed run — or a coding session given lessons
without a run — turned out. Every lesson injected into it is credited in the same write.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.canonical import normalize, sha12
from priors.core.errors import Refusal, UsageError
from priors.core.lessons import Ledger
from priors.core.secret_patterns import guard
from priors.core.vocabulary import OUTCOMES, is_run_id
from priors.ops.lessons import lesson_ledger, refuse_if_open
from priors.ops.session import (
    check_session_key,
    is_pending,
    keyed_session,
    last_session,
    remember_sealed,
    scorable_runs,
    seal_session,
    session_targets,
)
from priors.store.files import aftercare
from priors.store.ledger import append_and_apply, open_runs
from priors.store.lock import Lock
from priors.store.paths import Paths, require_init
from priors.store.traces import mark_scored

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional


def score(paths: Paths, run: str, outcome: str, reason: Optional[str], again: bool, replace: bool,
          session: Optional[str] = None) -> Answer:
    """Score `run` (or `last`: the latest agent run, or a coding session newer than it; with
    `session`: that harness session) as `outcome`."""
    if outcome not in OUTCOMES:
        raise UsageError(f"priors score: outcome must be one of {', '.join(OUTCOMES)}")
    if again and replace:
        raise UsageError("priors score: give --again or --replace, not both")
    if session is not None and run != "last":
        raise UsageError("priors score: --session scores that session — give no run id with it")
    if run != "last" and not is_run_id(run):
        raise UsageError(f"priors score: bad run id {run!r} — run ids must match `run-` and three to nine ASCII digits"
                         " (e.g. run-001), or say `last`")
    if reason is not None:
        reason = normalize(str(reason))
        if not reason:
            raise UsageError("priors score: --because needs some text")
        guard({"reason": reason})
    if session is not None:
        check_session_key(session)
    require_init(paths)
    with Lock(paths):
        loaded, ledger = lesson_ledger(paths)
        runs = [run]
        if session is not None:
            rec = keyed_session(paths, session)
            if is_pending(rec):
                assert rec is not None
                return _score_session(paths, loaded, ledger, rec, outcome, reason, replace)
            sealed = session_targets(rec, ledger, sha12(session))
            if not sealed:
                raise Refusal("UNKNOWN_RUN", run="last", session=session,
                              hint=f"session {session} was given no lessons yet: there is nothing to credit")
            runs = sealed
        elif run == "last":
            active = open_runs(paths, ledger.state)
            if active:  # `last` would be an older run than the one at work: never score it silently
                older = scorable_runs(ledger)
                named = f" or name an older run: priors score {max(older, key=lambda r: r.index).run} {outcome}" \
                    if older else ""
                raise Refusal("RUN_OPEN", run=active[0],
                              hint=f"{active[0]} is still open, so `last` is ambiguous: commit it "
                                   f"(priors commit --run {active[0]}) and score it{named}")
            latest = last_session(paths, ledger)
            if is_pending(latest):
                assert latest is not None
                return _score_session(paths, loaded, ledger, latest, outcome, reason, replace)
            sealed = session_targets(latest, ledger, _tag(latest))
            if sealed:
                runs = sealed  # the session scored last: --again and --replace reach all its runs
                assert latest is not None
                key = latest.get("key")
                session = key if isinstance(key, str) else None  # the answer names the session it credits
            else:
                agent = scorable_runs(ledger)
                if not agent:
                    raise Refusal("UNKNOWN_RUN", run="last", hint="no committed run or coding session to score yet")
                runs = [max(agent, key=lambda r: r.index).run]
        recs = [_score_record(paths, ledger, r, outcome, reason, again, replace) for r in runs]
        append_and_apply(paths, loaded, recs)
    return Answer(0, {"scored": [{"injected": r["injected"], "run": r["run"]} for r in recs]},
                  "\n".join(_scored_line(rec, session) for rec in recs))


def _score_record(paths: Paths, ledger: Ledger, run: str, outcome: str, reason: Optional[str], again: bool,
                  replace: bool) -> Dict[str, Any]:
    """The score record for a committed agent run, or the refusal that stops it."""
    info = ledger.runs.get(run)
    if info is None:
        if paths.run_dir(run).is_dir():
            raise Refusal("RUN_OPEN", run=run, hint="score a run after `priors commit`")
        raise Refusal("UNKNOWN_RUN", run=run)
    if not info.scorable:
        raise Refusal("NOT_SCORABLE", run=run, hint="this run holds lessons a person added or imported, or one an"
                      " agent suggested; score agent runs")
    prior = ledger.scores.get(run, [])
    if replace and not prior:
        raise Refusal("NOT_SCORED", run=run, hint="nothing to replace — score it without --replace")
    if prior and not (again or replace):
        raise Refusal("ALREADY_SCORED", run=run, outcome=prior[-1].outcome,
                      hint="--again adds another score, --replace corrects the latest")
    ids = ledger.shown_for(run) or []
    rec: Dict[str, Any] = {"t": "score", "run": run, "outcome": outcome, "by": "human", "injected": ids}
    if reason is not None:
        rec["reason"] = reason
    if replace:
        rec["replaces"] = True
    return rec


def _scored_line(rec: Dict[str, Any], key: Optional[str] = None, session: bool = False) -> str:
    """`run-004 → failure (coding session pi-abc: credits 1 lesson: P-0001)`: which run, which session."""
    ids = rec["injected"]
    what = f"credits {len(ids)} lesson{'s' if len(ids) != 1 else ''}" + (f": {_few(ids)}" if ids else "")
    who = f"coding session {key}: " if key is not None else "a coding session: " if session else ""
    return f"{rec['run']} → {rec['outcome']} ({who}{what})"


def _score_session(paths: Paths, loaded: Any, ledger: Ledger, session: Dict[str, Any], outcome: str,
                   reason: Optional[str], replace: bool) -> Answer:
    """`score last` after a coding session newer than any run (or `--session KEY`): seal what it was given as runs (one per
    namespace), score them in the same write, and note the runs in the session record."""
    if replace:
        raise Refusal("NOT_SCORED", run="last", hint="the latest session is not scored yet — score it without --replace")
    refuse_if_open(paths, ledger.state, "scoring a coding session")
    lines = seal_session(paths, ledger, session, _tag(session))
    if not lines:
        raise Refusal("UNKNOWN_RUN", run="last", hint="the lessons the latest session was given are gone from the ledger")
    scores: List[Dict[str, Any]] = []
    for rec in lines:
        if rec["t"] == "injected":
            one: Dict[str, Any] = {"t": "score", "run": rec["run"], "outcome": outcome, "by": "human",
                                   "injected": list(rec["ids"])}
            if reason is not None:
                one["reason"] = reason
            scores.append(one)
    append_and_apply(paths, loaded, lines + scores)
    runs = [s["run"] for s in scores]
    aftercare("noting the scored session in .priors/cache/", remember_sealed, paths, session, runs)
    aftercare("noting the scored session's traces in .priors/traces/", mark_scored, paths, session.get("key"), runs)
    key = session.get("key")
    return Answer(0, {"scored": [{"injected": s["injected"], "run": s["run"]} for s in scores]},
                  "\n".join(_scored_line(s, key if isinstance(key, str) else None, session=True) for s in scores))


def _tag(session: Optional[Dict[str, Any]]) -> Optional[str]:
    """What the seals of a session's runs carry as `session`: the sha12 of its key (none without one)."""
    key = session.get("key") if session is not None else None
    return sha12(key) if isinstance(key, str) else None


def _few(ids: List[str], shown: int = 5) -> str:
    """A handful of ids and how many more: a run shown 650 lessons is not a 650-id line."""
    if len(ids) <= shown:
        return ", ".join(ids)
    return f"{', '.join(ids[:shown])} and {len(ids) - shown} more (`priors lessons` lists them)"
