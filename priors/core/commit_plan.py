"""Sealing a run: what `commit` appends, checked against the ledger as it is at commit, and the summary.

Split from `protocol.py` (selection, dispositions, proposals), whose rules it applies again at commit.
"""

from __future__ import annotations

from priors.core.errors import Refusal, UsageError
from priors.core.fold import REST_AFTER, State, apply
from priors.core.grammar import AGENT_VERDICTS, FACET_ORDER, FACETS, validate
from priors.core.plain import Plain
from priors.core.protocol import QUIESCENT, escalation_known, find_conflict, missing_dispositions
from priors.core.run_files import RunFiles
from priors.core.vocabulary import CANDIDATE_FIELDS

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional


# ------------------------------------------------------------------ commit


class CommitPlan(Plain):
    """What a commit appends; `set_aside`: staged verdicts dropped because a person decided those priors."""

    __slots__ = ("lines", "summary", "set_aside")

    def __init__(self, lines: List[Dict[str, Any]], summary: List[str], set_aside: Optional[List[str]] = None) -> None:
        self.lines, self.summary = lines, summary
        self.set_aside = [] if set_aside is None else set_aside


HUMAN_FINAL = ("accepted", "wontfix", "obsolete", "redacted")  # statuses only a person gives: no agent verdict lands on them


def decided_since(records: List[Dict[str, Any]]) -> List[str]:
    """The priors a person decided (or redacted) in `records` — the ledger lines written since a run opened."""
    return [r["id"] for r in records
            if r.get("t") == "event" and r.get("action") in ("decide", "redact") and isinstance(r.get("id"), str)]


def human_word_wins(st: State, rf: RunFiles, decided: Any = ()) -> List[str]:
    """Staged verdicts the ledger, as it is now, no longer admits, by prior id; they are set aside.

    A person's word is absolute: a prior decided since the run opened (`decided`: read from the
    ledger lines appended since; they arrive with a git pull, which no lock can stop), or one whose
    status only a person gives, keeps that decision. Never silent: commit names them in its summary."""
    out = []
    for ev in rf.dispositions:
        pid = ev["id"]
        p = st.priors.get(pid)
        if p is not None and (pid in decided or p.status in HUMAN_FINAL) and pid not in out:
            out.append(pid)
    return out


def _valid_disposition(ev: Any, run: str) -> bool:
    return (isinstance(ev, dict) and ev.get("t") == "event" and ev.get("action") == "disposition"
            and isinstance(ev.get("id"), str) and ev.get("to") in AGENT_VERDICTS and ev.get("run") == run
            and ev.get("by") == "agent")


def _valid_staged(rec: Any, rf: RunFiles) -> bool:
    if not isinstance(rec, dict) or rec.get("t") != "prior" or rec.get("born") != rf.run or rec.get("ns") != rf.ns:
        return False
    facets = rec.get("facets")
    if not isinstance(facets, dict) or any(facets.get(f) not in FACETS[f] for f in FACET_ORDER):
        return False
    if facets.get("authority") == "binding":
        return False
    return isinstance(rec.get("claim"), str) and isinstance(rec.get("type"), str)


def _label(rec: Any, index: int) -> str:
    if isinstance(rec, dict) and isinstance(rec.get("id"), str):
        return rec["id"]
    return f"line {index + 1}"


def _redaction_mark(rec: Any) -> bool:
    return isinstance(rec, dict) and rec.get("redacted") is True and set(rec) == {"id", "redacted", "content_hash"}


def plan_commit(st: State, rf: RunFiles, decided: Any = ()) -> CommitPlan:
    """Everything the commit appends, in the contract's order — or the refusal.

    Every staged verdict is checked against the ledger as it is now (`decided`: the priors a person
    decided since the run opened): unknown priors and priors of another namespace are refused (hand
    edits), and verdicts on priors a person has settled are set aside (`human_word_wins`)."""
    # A prior redacted mid-run leaves marks in staging; its verdict has nothing left to say.
    rf.dispositions = [d for d in rf.dispositions if not _redaction_mark(d)]
    dups = _repeated_ids(rf.dispositions)
    if dups:
        raise Refusal("DUPLICATE_DISPOSITIONS", ids=dups)
    bad = [_label(ev, i) for i, ev in enumerate(rf.dispositions) if not _valid_disposition(ev, rf.run)]
    if bad:
        raise Refusal("MALFORMED_DISPOSITIONS", ids=bad)
    verify = rf.verify_items()
    inject = set(rf.inject_ids())
    outside = [ev["id"] for ev in rf.dispositions
               if ev["id"] not in verify and not (ev["to"] == "challenged" and ev["id"] in inject)]
    if outside:
        raise Refusal("PRIOR_OUTSIDE_RUN", ids=outside, run=rf.run)
    stranger = [ev["id"] for ev in rf.dispositions
                if ev["id"] not in st.priors or st.priors[ev["id"]].ns != rf.ns]
    if stranger:  # the ledger as it is now has no such prior in this namespace: a hand-edited staging
        raise Refusal("PRIOR_OUTSIDE_RUN", ids=stranger, run=rf.run, ns=rf.ns)
    missing = missing_dispositions(rf)
    waived = [pid for pid in missing if pid in decided]  # a person decided it mid-run: no verdict is owed
    missing = [pid for pid in missing if pid not in decided]
    if missing:
        raise Refusal("INCOMPLETE_DISPOSITIONS", missing=missing,
                      hint="disposition every verify item whose scope is present, or `priors abort`")
    _check_staging(st, rf)
    done = set(rf.disposed_ids())
    set_aside = human_word_wins(st, rf, decided)
    if set_aside:
        rf.dispositions = [ev for ev in rf.dispositions if ev["id"] not in set_aside]
    dropped = rejudge_staged(st, rf, decided)
    lines: List[Dict[str, Any]] = list(rf.dispositions)
    for pid, item in verify.items():
        if item.get("scopeState") == "missing" and pid not in done:
            lines.append({"t": "event", "id": pid, "action": "scope-missing", "run": rf.run})
    lines.extend(rf.staged)
    escalations = [e for e in rf.escalations if isinstance(e, dict)]
    for i, esc in enumerate(escalations, 1):
        call = {"t": "call", "call_id": f"{rf.run}-C-{i:02d}", "kind": esc.get("kind", "reversal"), "run": rf.run,
                "ns": rf.ns, "conflicts_with": esc.get("conflicts_with")}
        if esc.get("redacted") is True:  # redacted while staged: the form a redacted call has in the ledger
            call["redacted"] = True
        else:
            call["claim"] = esc.get("claim")
            if esc.get("direction") is not None:
                call["direction"] = esc["direction"]
        lines.append(call)
    for rec in lines:
        apply(st, rec)
    summary = summarize(rf, st, len(escalations), set_aside, dropped, waived)
    lines.append({"t": "run", "action": "commit", "run": rf.run, "ns": rf.ns, "summary": summary})
    return CommitPlan(lines, summary, set_aside)


def rejudge_staged(st: State, rf: RunFiles, decided: Any) -> List[str]:
    """Staged findings judged again against the priors a person decided since the run opened (a
    git pull brings those decisions mid-run): one that now repeats a settled prior (RERAISE,
    DUPLICATE) or sits below a floor is dropped; one that now reverses it becomes a call for the
    person, as `propose` would have made it. Returns a summary phrase per dropped finding; never silent."""
    only = {pid for pid in decided if pid in st.priors}
    if not only or not rf.staged:
        return []
    kept: List[Any] = []
    out: List[str] = []
    for rec in rf.staged:
        raw = {k: v for k, v in rec.items() if k in CANDIDATE_FIELDS and k != "scope_hash"}
        try:
            cand = validate(raw)
            esc = find_conflict(st, rf, cand, rec.get("scope_hash"), only)
        except UsageError:
            esc = None  # what the keeper staged itself always validates; _valid_staged judged the rest
        except Refusal as refusal:
            body = refusal.payload()
            out.append(f"{rec['id']} ({body['refused']} of {body.get('of')})")
            continue
        if esc is not None:
            if not escalation_known(rf, esc):
                rf.escalations.append({k: v for k, v in esc.items() if v is not None})
            out.append(f"{rec['id']} (REVERSAL of {esc['conflicts_with']}: put to you as a call)")
            continue
        kept.append(rec)
    rf.staged = kept
    return out


def _repeated_ids(items: List[Any], taken: Any = ()) -> List[str]:
    """Ids that occur twice among `items` or are already in `taken`, in order of discovery."""
    seen: Dict[str, int] = {}
    out: List[str] = []
    for rec in items:
        pid = rec.get("id") if isinstance(rec, dict) else None
        if isinstance(pid, str):
            seen[pid] = seen.get(pid, 0) + 1
            if (pid in taken or seen[pid] == 2) and pid not in out:
                out.append(pid)
    return out


def _check_staging(st: State, rf: RunFiles) -> None:
    collide = _repeated_ids(rf.staged, taken=st.priors)
    if collide:
        raise Refusal("STAGED_ID_COLLISION", ids=collide)
    bad = [_label(rec, i) for i, rec in enumerate(rf.staged) if not _valid_staged(rec, rf)]
    if bad:
        raise Refusal("MALFORMED_STAGING", ids=bad)


def summarize(rf: RunFiles, after: State, escalations: int, set_aside: Any = (), dropped: Any = (),
              waived: Any = ()) -> List[str]:
    """The plain-language commit summary (contract §9, plus the quiescence line of §10).

    `set_aside`: priors whose staged verdict was dropped because a person decided them meanwhile."""
    verdicts = [ev.get("to") for ev in rf.dispositions]
    checked = len(rf.verify_items())
    fixed = verdicts.count("fixed")
    carried = verdicts.count("still-open") + verdicts.count("reaffirmed")
    touched = verdicts.count("stale")
    calls = verdicts.count("challenged") + verdicts.count("obsolete-proposed") + escalations + len(rf.items("nudges"))
    ns = rf.ns
    resting = sum(1 for p in after.priors.values() if p.miss >= REST_AFTER and p.ns == ns and p.resting)
    new = len(rf.staged)
    lines = [f"Checked against {checked} priors:"]
    if fixed:
        lines.append(f"  ✓ {fixed} fixed — nice work")
    if carried:
        lines.append(f"  → {carried} carried (same identities, current scope state)")
    if touched:
        lines.append(f"  ~ {touched} touched by changes — queued for re-judgment")
    if calls:
        lines.append(f"  ? {calls} need your call — `priors status --calls` to review")
    if resting:
        lines.append(f"  … {resting} resting — the code they point at is gone; they wake if it returns")
    if set_aside:
        ids = ", ".join(set_aside)
        lines.append(f"  ! {len(set_aside)} verdict{'s' if len(set_aside) != 1 else ''} set aside — a person decided "
                     f"{ids} after this run opened; that decision stands")
    if waived:
        lines.append(f"  ! {len(waived)} without a verdict — a person decided {', '.join(waived)} after this run "
                     f"opened; that decision stands")
    if dropped:
        lines.append(f"  ! {len(dropped)} new finding{'s' if len(dropped) != 1 else ''} not recorded — each meets a prior "
                     f"a person decided after this run opened: {', '.join(dropped)}")
    lines.append(f"New this run: {new}")
    if checked and carried == checked and not (fixed or touched or calls or new or set_aside or dropped):
        lines.append(QUIESCENT)
    return lines
