"""Sealing a run: what `commit` appends, checked against the ledger as it is at commit, and the summary.

Split from `protocol.py` (selection, dispositions, proposals), whose rules it applies again at commit.
"""

from __future__ import annotations

from priors.core.canonical import normalize
from priors.core.errors import Refusal, UsageError
from priors.core.fold import REST_AFTER, State, apply, next_prior_id
from priors.core.grammar import AGENT_VERDICTS, check_at_door
from priors.core.lessons import words
from priors.core.moves import MOVED, move_events, seal_shapes
from priors.core.plain import Plain
from priors.core.propose_pool import with_run_dispositions
from priors.core.protocol import (
    QUIESCENT,
    REVERSIBLE,
    escalation_known,
    judge_candidate,
    judge_disposition,
    missing_dispositions,
    prior_record,
    reversal_refusal,
)
from priors.core.run_files import RunFiles, staging_file
from priors.core.secret_patterns import guard
from priors.core.verdicts import Records, Verdicts
from priors.core.vocabulary import ATTEMPT_CODES, CANDIDATE_FIELDS, DOOR, NS_RE, PRIOR_RE, prior_number

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, List, Optional, Tuple


# ------------------------------------------------------------------ commit


class CommitPlan(Plain):
    """What a commit appends; `set_aside`: staged verdicts dropped because a person decided those priors."""

    __slots__ = ("lines", "summary", "set_aside")

    def __init__(self, lines: Records, summary: List[str], set_aside: Optional[List[str]] = None) -> None:
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
    ledger lines appended since; they arrive with a git pull, which no lock can stop) keeps that
    decision. Never silent: commit names them in its summary. A verdict on a prior a person had
    decided before the run opened is no verify item of the run: the door refuses it (BINDING_IMMUTABLE),
    and so does commit (`judge_verdicts`), naming the staged line."""
    out = []
    for pid in rf.dispositions.ids_of():
        p = st.priors.get(pid)
        if p is not None and pid in decided and pid not in out:
            out.append(pid)
    return out


def _valid_disposition(ev: Any, run: str) -> bool:
    return (isinstance(ev, dict) and ev.get("t") == "event" and ev.get("action") == "disposition"
            and isinstance(ev.get("id"), str) and ev.get("to") in AGENT_VERDICTS and ev.get("run") == run
            and ev.get("by") == "agent")


def _label(rec: Any, line: int) -> str:
    if isinstance(rec, dict) and isinstance(rec.get("id"), str):
        return rec["id"]
    return f"line {line}"


def _redaction_mark(rec: Any) -> bool:
    return isinstance(rec, dict) and rec.get("redacted") is True and set(rec) == {"id", "redacted", "content_hash"}


_REDO = "`priors abort --run <run>` drops the run's staging (the ledger is untouched); then redo the run"
_WITHDRAW = ("`priors withdraw --run <run> <id>` takes the line back (or `priors abort --run <run>` drops the run);"
             " then propose it again if it still holds")


def staging_refusal(refusal: Refusal, rf: RunFiles, kind: str, index: int, hint: str = _REDO) -> Refusal:
    """`refusal`, naming the staging file and the line (from 1) commit would not take."""
    refusal.details.update(run=rf.run, file=staging_file(rf.run, kind), line=rf.line_of(kind, index),
                           hint=hint.replace("<run>", rf.run))
    return refusal


def _differs(want: Dict[str, Any], got: Dict[str, Any]) -> Dict[str, Any]:
    return {"differs": sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))}


def plan_commit(st: State, rf: RunFiles, decided: Any = (), judged: bool = False) -> CommitPlan:
    """Everything the commit appends, in the contract's order — or the refusal.

    Staging is the agent's to write, so nothing in it is trusted: every staged verdict, prior and
    call is judged again, from scratch, by the door's own rules (`judge_disposition`,
    `judge_candidate`) against the ledger as it is now; a line the door would not have accepted is
    refused with its file and line. What a person decided since the run opened (`decided`) wins:
    verdicts on those priors are set aside (`human_word_wins`), and a staged finding that now
    repeats one is dropped, or becomes a call when it reverses one — each named in the summary.
    `judged`: the caller opened the run, staged every line through the door and seals it under one
    hold of the lock, from memory (`ingest-sarif`): nothing to judge twice, nothing decided since."""
    _check_ns(rf)
    # A prior redacted mid-run leaves marks in staging; its verdict has nothing left to say.
    odd = rf.dispositions.odd_lines()  # (the lines not held as the door writes them: only these can be marks or malformed)
    marks = {i for i, d in odd.items() if _redaction_mark(d)}
    where: Any = range(len(rf.dispositions))
    if marks:
        where = [i for i in where if i not in marks]
        rf.dispositions = rf.dispositions.take(where)
        odd = rf.dispositions.odd_lines()
    dups = _repeated_ids(rf.dispositions.ids_of())
    if dups:
        raise staging_refusal(Refusal("DUPLICATE_DISPOSITIONS", ids=dups), rf, "dispositions",
                              where[_second(rf.dispositions.verdicts(), dups[0])])
    bad = sorted(i for i, ev in odd.items() if not _valid_disposition(ev, rf.run))
    if bad:
        ids = [_label(rf.dispositions[i], rf.line_of("dispositions", where[i])) for i in bad]
        raise staging_refusal(Refusal("MALFORMED_DISPOSITIONS", ids=ids), rf, "dispositions", where[bad[0]])
    verify = rf.verify_states()
    outside = [(i, pid) for i, pid, to in rf.dispositions.verdicts()
               if pid not in verify and not (to == "challenged" and rf.is_injected(pid))]
    if outside:
        raise staging_refusal(Refusal("PRIOR_OUTSIDE_RUN", ids=[pid for _, pid in outside]), rf,
                              "dispositions", where[outside[0][0]])
    stranger = [(i, pid) for i, pid in enumerate(rf.dispositions.ids_of())
                if pid not in st.priors or st.priors[pid].ns != rf.ns]
    if stranger:  # the ledger as it is now has no such prior in this namespace: a hand-edited staging
        raise staging_refusal(Refusal("PRIOR_OUTSIDE_RUN", ids=[pid for _, pid in stranger], ns=rf.ns),
                              rf, "dispositions", where[stranger[0][0]])
    _check_verify_items(st, rf)
    missing = missing_dispositions(rf)
    waived = [pid for pid in missing if pid in decided]  # a person decided it mid-run: no verdict is owed
    missing = [pid for pid in missing if pid not in decided]
    if missing:
        raise Refusal("INCOMPLETE_DISPOSITIONS", missing=missing,
                      hint="disposition every verify item whose scope is present, or `priors abort`")
    _check_ids(st, rf)
    done = rf.dispositions  # (`done.names(pid)`: whether a verdict was staged on it, set aside or not)
    set_aside = human_word_wins(st, rf, decided)
    if set_aside:
        keep = [j for j, pid in enumerate(rf.dispositions.ids_of()) if pid not in set_aside]
        rf.dispositions = rf.dispositions.take(keep)
        where = [where[j] for j in keep]
    attempts = judge_attempts(st, rf)  # against the ledger before this run's lines
    dropped: List[str] = []
    if not judged:
        judge_verdicts(st, rf, where)
        judge_calls(st, rf, decided)
        dropped = judge_staged(st, rf, decided)
    head = move_events(st, rf)  # code that moved, before verdicts
    lines: List[Dict[str, Any]] = []  # after them
    for pid, item in verify.items():
        if item[0] == "missing" and not done.names(pid):
            lines.append({"t": "event", "id": pid, "action": "scope-missing", "run": rf.run})
    lines.extend(rf.staged)
    escalations = rf.escalations
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
    for part in (head, rf.dispositions, lines):  # (a verdict's dict is made, applied and let go)
        for rec in part:
            apply(st, rec)
    summary = summarize(rf, st, len(escalations), set_aside, dropped, waived)
    seal: Dict[str, Any] = {"t": "run", "action": "commit", "run": rf.run, "ns": rf.ns, "summary": summary, "door": DOOR}
    if attempts:
        seal["attempts"] = attempts
    shapes = seal_shapes(st, rf)
    if shapes:
        seal["shapes"] = shapes
    lines.append(seal)
    return CommitPlan(Records([head, rf.dispositions, lines]), summary, set_aside)


ATTEMPTS_KEPT = 3  # attempts a seal keeps per prior: the pressure counts runs, the words need only a few
LEXICAL_CODES = ("RERAISE", "DUPLICATE")  # refusals for saying the same thing: their words share some with the prior's


def judge_attempts(st: State, rf: RunFiles) -> List[Dict[str, Any]]:
    """What the run's agent tried and the door refused, as the seal keeps it: each line `{"code",
    "of", "claim"}` (or, after a redaction of `of`, `{"code", "of", "claim_hash", "claim_redacted"}`),
    naming a prior of the ledger. The file is the agent's to write, so each line is held to the shape
    the door writes, the limits, and the secret guard; a line that fails refuses the commit. Only
    what the door refused is kept, once, at most ATTEMPTS_KEPT per prior; a re-raise or duplicate whose
    words share none with the prior's claim is dropped (the door could not have refused it as the same:
    an invented line). The words are never judged otherwise (they were refused)."""
    out: List[Dict[str, Any]] = []
    kept: Dict[str, int] = {}
    for i, a in enumerate(rf.attempts):
        why = attempt_problem(st, a)
        if why is not None:
            raise staging_refusal(Refusal("MALFORMED_STAGING", because={"rule": why}), rf, "attempts", i)
        p = st.priors[a["of"]]
        if p.redacted and "claim" in a:
            continue  # its prior was redacted since: the words that raised it go with it
        if not p.redacted and a.get("claim_redacted") is True:  # only a redaction of its prior writes that form
            why = f"an attempt on {a['of']} is in its redacted form, but {a['of']} is not redacted"
            raise staging_refusal(Refusal("MALFORMED_STAGING", because={"rule": why}), rf, "attempts", i)
        if a in out or kept.get(a["of"], 0) >= ATTEMPTS_KEPT:
            continue
        if a["code"] in LEXICAL_CODES and "claim" in a and isinstance(p.claim, str) and not words(a["claim"]) & words(p.claim):
            continue
        kept[a["of"]] = kept.get(a["of"], 0) + 1
        out.append(dict(a))
    return out


def attempt_problem(st: Any, a: Any) -> Optional[str]:
    """Why `a` is not an attempt as the door records it (None: it is). Shared with `verify`'s rules."""
    if not isinstance(a, dict):
        return "not an object"
    if a.get("code") not in ATTEMPT_CODES:
        return f"code must be one of {', '.join(ATTEMPT_CODES)}"
    of = a.get("of")
    if not isinstance(of, str) or not PRIOR_RE.match(of) or (st is not None and of not in st.priors):
        return "`of` must name a prior of the ledger"
    if a.get("claim_redacted") is True:
        h = a.get("claim_hash")
        ok = set(a) == {"code", "of", "claim_hash", "claim_redacted"} and isinstance(h, str) and len(h) == 12
        return None if ok else "a redacted attempt keeps only code, of, claim_hash and claim_redacted"
    claim = a.get("claim")
    if set(a) != {"claim", "code", "of"} or not isinstance(claim, str) or not claim or normalize(claim) != claim:
        return "an attempt is {code, of, claim}, its claim normalized"
    try:
        check_at_door(a, "attempt")
        guard(a)
    except (UsageError, Refusal) as exc:
        return str(exc) if isinstance(exc, UsageError) else "its claim looks like a credential"
    return None


def _second(lines: Iterable[Tuple[int, Any, Any]], pid: str) -> int:
    """Where `pid` is named the second time among `lines` (`Verdicts.verdicts`)."""
    seen = 0
    for i, got, _ in lines:
        if got == pid:
            seen += 1
            if seen == 2:
                return i
    return 0


def _check_ns(rf: RunFiles) -> None:
    """The namespace the run's stored `relevant.json` gives every line commit writes."""
    if not isinstance(rf.ns, str) or not NS_RE.match(rf.ns):
        raise Refusal("MALFORMED_STAGING", run=rf.run, file=f".priors/runs/{rf.run}/relevant.json", line=1,
                      because={"rule": "`ns` is not a namespace"}, hint=_REDO.replace("<run>", rf.run))


def _check_verify_items(st: State, rf: RunFiles) -> None:
    """The verify items commit turns into `scope-missing` events are priors of the run's namespace."""
    where = f".priors/runs/{rf.run}/relevant.json"
    strangers = [pid for pid in rf.verify_states() if pid not in st.priors or st.priors[pid].ns != rf.ns]
    if strangers:
        raise Refusal("MALFORMED_STAGING", run=rf.run, file=where, line=1, ids=strangers,
                      because={"rule": "a verify item is no prior of the run's namespace"},
                      hint=_REDO.replace("<run>", rf.run))


def _check_ids(st: State, rf: RunFiles) -> None:
    """Staged prior ids are new: one the ledger holds, or at or below its highest (a pull brought
    those priors), is a collision; one staged twice too. Named: every such id, and the first line."""
    collide: List[str] = []
    first = -1
    seen = set()
    for i, rec in enumerate(rf.staged):
        pid = rec.get("id") if isinstance(rec, dict) else None
        if not isinstance(pid, str):
            continue
        if pid in seen or pid in st.priors or (PRIOR_RE.match(pid) and prior_number(pid) <= st.max_prior):
            first = i if first < 0 else first
            if pid not in collide:
                collide.append(pid)
        seen.add(pid)
    if collide:
        raise staging_refusal(Refusal("STAGED_ID_COLLISION", ids=collide), rf, "staged", first,
                              hint=f"the ledger took these ids since the run opened: `priors carry --run {rf.run}`"
                                   " moves the staging to a new run with new ids (or `priors abort --run <run>`)")


def judge_verdicts(st: State, rf: RunFiles, where: List[int]) -> None:
    """Each staged verdict judged again by `judge_disposition`, in order, as if given now: the event
    it makes must be the staged line itself."""
    fresh = rf.view()
    for j, ev in enumerate(rf.dispositions):
        try:
            event = judge_disposition(st, fresh, ev["id"], ev["to"])
        except Refusal as refusal:
            raise staging_refusal(Refusal("MALFORMED_DISPOSITIONS", ids=[ev["id"]], because=refusal.payload()), rf,
                                  "dispositions", where[j]) from None
        if event != ev:
            raise staging_refusal(Refusal("MALFORMED_DISPOSITIONS", ids=[ev["id"]], because=_differs(event, ev)), rf,
                                  "dispositions", where[j])
        fresh.dispositions.append(event)


_CALL_KEYS = {"kind", "conflicts_with", "claim", "direction"}
_REDACTED_CALL = {"kind", "conflicts_with", "redacted"}


def judge_calls(st: State, rf: RunFiles, decided: Any) -> None:
    """Each staged call (a reversal `propose` filed for the person) must be one the door files: a
    known live prior of the run's namespace that is fixed or decided (with this run's verdicts) —
    or decided since the run opened —, a claim that passes the candidate's limits and secret guard."""
    if not rf.escalations:
        return
    status = {p.id: p.status for p in with_run_dispositions(st, rf)}
    seen = set()
    for i, esc in enumerate(rf.escalations):
        if not isinstance(esc, dict) or esc.get("kind") != "reversal":
            raise _bad_call(rf, i, {"rule": "not a reversal call"})
        pid = esc.get("conflicts_with")
        p = st.priors.get(pid) if isinstance(pid, str) else None
        if p is None or p.ns != rf.ns:
            raise _bad_call(rf, i, {"rule": "`conflicts_with` names no prior of the run's namespace"})
        if esc.get("redacted") is True:  # scrubbed by a redaction of that prior while the run was open
            if set(esc) != _REDACTED_CALL or not p.redacted:
                raise _bad_call(rf, i, {"rule": "a redacted call names a prior that is not redacted"})
            continue
        if not set(esc) <= _CALL_KEYS or p.redacted:
            raise _bad_call(rf, i, {"rule": "not the call a reversal files"})
        try:
            check_at_door(esc, "call")
        except UsageError as exc:
            raise _bad_call(rf, i, {"usage": str(exc)}) from None
        claim, direction = esc.get("claim"), esc.get("direction")
        if not isinstance(claim, str) or not claim or normalize(claim) != claim or (
                direction is not None and not isinstance(direction, str)):
            raise _bad_call(rf, i, {"rule": "a call's claim is a normalized string, its direction a string"})
        try:
            guard(esc)
        except Refusal as refusal:
            raise _bad_call(rf, i, refusal.payload()) from None
        if status.get(pid) not in REVERSIBLE and pid not in decided:
            raise _bad_call(rf, i, {"rule": f"{pid} is {status.get(pid)}: only a fixed or decided prior is reversed"})
        key = (pid, claim, direction)
        if key in seen:
            raise _bad_call(rf, i, {"rule": "the same call twice"})
        seen.add(key)


def judge_staged(st: State, rf: RunFiles, decided: Any) -> List[str]:
    """Each staged prior judged again, in order, by the door's rules (`judge_candidate`) against the
    ledger as it is now, this run's verdicts and the priors staged before it: the record `propose`
    would stage must be the staged line itself. A line the door refuses is the commit's refusal —
    except a finding that meets a prior a person decided since the run opened (a git pull brings
    those decisions): one that now repeats it (RERAISE, DUPLICATE) or sits below its floor is
    dropped, one that now reverses it becomes a call for the person, as `propose` would have made
    it. Returns a summary phrase per dropped finding; never silent. The ids of those kept stay."""
    staged, rf.staged = rf.staged, []
    view = rf.view(rf.dispositions, rf.staged)  # what the door saw: the staged so far
    view.known_keys = rf.known_keys
    out: List[str] = []
    top = 0
    for i, rec in enumerate(staged):
        pid = rec.get("id") if isinstance(rec, dict) else None
        label = _label(rec, rf.line_of("staged", i))
        if not isinstance(rec, dict) or rec.get("t") != "prior":
            raise _bad_staged(rf, i, label, {"rule": "not a prior record"})
        if not isinstance(pid, str) or not PRIOR_RE.match(pid) or prior_number(pid) <= top:
            raise _bad_staged(rf, i, label, {"rule": "a staged prior's id is P- and digits, above every id staged before it"})
        top = prior_number(pid)
        raw = {k: rec[k] for k in CANDIDATE_FIELDS if k in rec}
        try:
            cand, current, esc = judge_candidate(st, view, raw, rf.ns)
        except UsageError as exc:
            raise _bad_staged(rf, i, label, {"usage": str(exc)}) from None
        except Refusal as refusal:
            body = refusal.payload()
            if body["refused"] in ("RERAISE", "DUPLICATE", "BELOW_FLOOR", "SETTLED_NEARBY") and (
                    body.get("of") in decided or any(s.get("id") in decided for s in body.get("settled", ()))):
                out.append(f"{pid} ({body['refused']} of {body['of']})")
                continue
            raise _bad_staged(rf, i, label, body) from None
        if esc is not None:
            if esc["conflicts_with"] not in decided:
                raise _bad_staged(rf, i, label, reversal_refusal(esc).payload())
            if not escalation_known(rf, esc):
                rf.escalations.append({k: v for k, v in esc.items() if v is not None})
            out.append(f"{pid} (REVERSAL of {esc['conflicts_with']}: put to you as a call)")
            continue
        want = prior_record(cand, pid, rf.ns, rf.run, current)
        if want != rec:
            raise _bad_staged(rf, i, label, _differs(want, rec))
        rf.staged.append(rec)
    return out


def _bad_call(rf: RunFiles, i: int, because: Dict[str, Any]) -> Refusal:
    return staging_refusal(Refusal("MALFORMED_STAGING", because=because), rf, "escalations", i)


def _bad_staged(rf: RunFiles, i: int, label: str, because: Dict[str, Any]) -> Refusal:
    # `withdraw` takes back a line by its prior id; a line without one (or with no id `withdraw`
    # can name) can only go with the run's staging
    hint = _WITHDRAW.replace("<id>", label) if PRIOR_RE.match(label) else _REDO
    return staging_refusal(Refusal("MALFORMED_STAGING", ids=[label], because=because), rf, "staged", i, hint=hint)


def _repeated_ids(ids: Iterable[Any]) -> List[str]:
    """The string ids that occur twice among `ids`, in order of discovery."""
    seen = set()
    out: List[str] = []
    for pid in ids:
        if isinstance(pid, str):
            if pid not in seen:
                seen.add(pid)
            elif pid not in out:
                out.append(pid)
    return out


def summarize(rf: RunFiles, after: State, escalations: int, set_aside: Any = (), dropped: Any = (),
              waived: Any = ()) -> List[str]:
    """The plain-language commit summary (contract §9, plus the quiescence line of §10).

    `set_aside`: priors whose staged verdict was dropped because a person decided them meanwhile."""
    verdicts = [to for _, _, to in rf.dispositions.verdicts()]
    checked = len(rf.verify_states())
    fixed = verdicts.count("fixed")
    carried = verdicts.count("still-open") + verdicts.count("reaffirmed")
    touched = verdicts.count("stale")
    calls = verdicts.count("challenged") + verdicts.count("obsolete-proposed") + escalations + rf.count("nudges")
    calls += sum(1 for r in rf.staged if isinstance(r, dict) and isinstance(r.get("distinct_from"), list) and any(
        isinstance(q, str) and q in after.priors and after.priors[q].binding for q in r["distinct_from"]))  # "it differs"
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
    moved = [f"{pid} to {m['to']}" for pid, m in rf.moves.items()]
    if moved:
        lines.append(f"  ↪ {len(moved)} moved with their code — {_some(moved)}")
    gone = [pid for pid, item in rf.verify_states().items() if item[0] == "missing" and not rf.is_disposed(pid)]
    if gone:
        lines.append(f"  ∅ {len(gone)} missing — their code is not in this snapshot: {_some(gone)}")
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


def _some(items: List[str], most: int = 5) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


# ------------------------------------------------------------------ a run id sealed elsewhere


def _in_block(rec: Dict[str, Any], run: str) -> bool:
    t = rec.get("t")
    if t == "prior":
        return rec.get("born") == run
    if t == "event":
        return rec.get("action") in ("disposition", "scope-missing", MOVED) and rec.get("run") == run
    return t in ("call", "injected") and rec.get("run") == run


def block_of(records: List[Dict[str, Any]], run: str) -> Optional[Tuple[int, int]]:
    """Where `run`'s sealed block lies among `records`: (its first line, one past its run record)."""
    end = next((i for i in range(len(records) - 1, -1, -1) if records[i].get("t") == "run"
                and records[i].get("action") == "commit" and records[i].get("run") == run), None)
    if end is None:
        return None
    start = end
    while start > 0 and _in_block(records[start - 1], run):
        start -= 1
    return start, end + 1


def carried(rf: RunFiles, new_run: str, max_prior: int) -> Tuple[List[Any], Dict[str, str]]:
    """A run's staging moved to `new_run`: (its dispositions, staged priors and calls — in STAGING_FILES
    order, None for a file left unwritten: it holds nothing —, the staged prior ids renumbered after
    `max_prior`, old → new). Its `relevant.json` is the store's to rewrite (`staging.moved_relevant`).
    Nothing is judged here: the commit of the new run judges every line against the ledger as it is then."""
    ids: Dict[str, str] = {}
    for rec in rf.staged:
        if isinstance(rec, dict) and isinstance(rec.get("id"), str) and rec["id"] not in ids:
            ids[rec["id"]] = next_prior_id(max_prior + len(ids))
    staged = []
    for rec in rf.staged:
        if isinstance(rec, dict) and rec.get("born") == rf.run:
            rec = dict(rec, born=new_run)
            if isinstance(rec.get("id"), str):
                rec["id"] = ids[rec["id"]]
            dist = rec.get("distinct_from")
            if isinstance(dist, list):
                named = [ids.get(x, x) if isinstance(x, str) else x for x in dist]
                try:
                    rec["distinct_from"] = sorted(set(named), key=str)
                except TypeError:  # (a list or an object among them, a hand wrote: kept, for the commit to refuse)
                    rec["distinct_from"] = sorted(named, key=str)
        staged.append(rec)
    disp = Verdicts(new_run)  # (held as the door's lines are, not as 70k dicts)
    for ev in rf.dispositions:
        disp.append(dict(ev, run=new_run) if isinstance(ev, dict) and ev.get("run") == rf.run else ev)
    return [disp if len(disp) else None, staged or None, list(rf.escalations) or None], ids
