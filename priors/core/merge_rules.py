"""The ledger merge: two append-only histories from one base, ids renumbered, nothing lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union

from priors.core.canonical import dumps, reason_hash, split_lines
from priors.core.human import redacted_attempt, tried_against
from priors.core.ledger_checks import REDACTED_CALL_KEYS, parse_line
from priors.core.ledger_growth import rewrite_problem
from priors.core.unseen import UNSEEN, marks, with_mark
from priors.core.vocabulary import CALL_RE, PRIOR_RE, RUN_RE, id_number

PRIOR_REF_KEYS = ("id", "conflicts_with", "supersedes", "same_as")  # same_as: `decide P duplicate --of Q`
RUN_REF_KEYS = ("run", "born")
PRIOR_LIST_KEYS = ("ids", "injected", "distinct_from")  # the lessons loop: what a run was shown, what a score credits
RUN_LIST_KEYS = ("runs",)  # the lessons loop: runs marked learned


@dataclass(frozen=True)
class Conflict:
    reason: str


def _records(lines: Sequence[bytes], side: str, offset: int) -> Union[List[Dict[str, Any]], Conflict]:
    out = []
    for i, raw in enumerate(lines):
        rec, why = parse_line(raw)
        if rec is None:
            return Conflict(f"{side} line {offset + i + 1} is damaged ({why})")
        out.append(rec)
    return out


def _s(value: Any) -> Optional[str]:
    """A record's reference when it is a string (anything else references nothing)."""
    return value if isinstance(value, str) else None


def _prefix(base: List[bytes], side: List[bytes], name: str) -> Optional[Conflict]:
    if len(side) < len(base):
        return Conflict(f"{name} is not an append-only extension of the base: it has {len(side)} lines, the base {len(base)}")
    for i, (a, b) in enumerate(zip(base, side), 1):
        why = rewrite_problem(a, b)
        if why is not None:
            return Conflict(f"{name} is not an append-only extension of the base: line {i} {why}")
    return None


def _max_ids(records: Sequence[Dict[str, Any]]) -> Tuple[int, int]:
    """(largest prior number, largest run number) seen in these records."""
    mp, mr = 0, 0
    for rec in records:
        if rec.get("t") == "prior":
            mp = max(mp, id_number(PRIOR_RE, rec.get("id"), -1))
        for key in RUN_REF_KEYS:
            mr = max(mr, id_number(RUN_RE, rec.get(key), -1))
        m = CALL_RE.match(rec.get("call_id") or "") if isinstance(rec.get("call_id"), str) else None
        if m:
            mr = max(mr, id_number(RUN_RE, m.group(1), -1))
    return mp, mr


def renumbering(
    base: Sequence[Dict[str, Any]],
    ours: Sequence[Dict[str, Any]],
    theirs_new: Sequence[Dict[str, Any]],
    reserved: Sequence[str] = (),
) -> Tuple[Dict[str, str], Dict[str, str]]:
    """(prior id map, run id map) moving their new ids after ours, gaps and order kept; empty when nothing collides.

    `reserved` are ids our work tree already holds outside the ledger (open runs, staged priors).
    """
    our_prior, our_run = _max_ids(list(base) + list(ours))
    for rid in reserved:
        our_prior = max(our_prior, id_number(PRIOR_RE, rid, -1))
        our_run = max(our_run, id_number(RUN_RE, rid, -1))
    base_runs: Set[str] = set()
    for rec in base:
        for key in RUN_REF_KEYS:
            if isinstance(rec.get(key), str):
                base_runs.add(rec[key])
    new_priors = [r["id"] for r in theirs_new if r.get("t") == "prior" and id_number(PRIOR_RE, r.get("id"), -1) >= 0]
    new_runs: List[str] = []
    for rec in theirs_new:
        for key in RUN_REF_KEYS:
            v = rec.get(key)
            if isinstance(v, str) and id_number(RUN_RE, v, -1) >= 0 and v not in base_runs and v not in new_runs:
                new_runs.append(v)
    pmap = _shift_after(new_priors, our_prior, PRIOR_RE, "P-{:04d}")
    rmap = _shift_after(new_runs, our_run, RUN_RE, "run-{:03d}")
    return pmap, rmap


def _shift_after(ids: List[str], ours: int, regex: "re.Pattern[str]", fmt: str) -> Dict[str, str]:
    """Renumber `ids` so the lowest lands just after our highest number (no map when they already do)."""
    if not ids:
        return {}
    shift = max(0, ours - min(id_number(regex, i, -1) for i in ids) + 1)
    return {i: fmt.format(id_number(regex, i, -1) + shift) for i in ids} if shift else {}


def rewrite_refs(rec: Dict[str, Any], pmap: Dict[str, str], rmap: Dict[str, str]) -> Dict[str, Any]:
    out = dict(rec)
    for key in PRIOR_REF_KEYS:
        v = out.get(key)
        if isinstance(v, str) and v in pmap:
            out[key] = pmap[v]
    for key in RUN_REF_KEYS:
        v = out.get(key)
        if isinstance(v, str) and v in rmap:
            out[key] = rmap[v]
    for keys, table in ((PRIOR_LIST_KEYS, pmap), (RUN_LIST_KEYS, rmap)):
        for key in keys:
            v = out.get(key)
            if isinstance(v, list):
                out[key] = [table.get(x, x) if isinstance(x, str) else x for x in v]
    tried = out.get("attempts")
    if isinstance(tried, list):  # a seal's attempts name the priors they hit
        out["attempts"] = [dict(a, of=pmap[a["of"]]) if isinstance(a, dict) and isinstance(a.get("of"), str)
                           and a["of"] in pmap else a for a in tried]
    for key in ("shapes", UNSEEN):  # a seal's shapes (core/moves.py) and mark (core/unseen.py): by prior id
        held = out.get(key)
        if isinstance(held, dict) and any(k in pmap for k in held):
            out[key] = {pmap.get(k, k): v for k, v in held.items()}
    cid = out.get("call_id")
    if isinstance(cid, str):
        m = CALL_RE.match(cid)
        if m and m.group(1) in rmap:
            out["call_id"] = f"{rmap[m.group(1)]}-C-{m.group(2)}"
    return out


def redact_refs(rec: Dict[str, Any], redacted: Set[str]) -> Dict[str, Any]:
    """Apply the other side's redaction to a record: reasons hashed, calls cut to their stub."""
    t = rec.get("t")
    if t == "event" and _s(rec.get("id")) in redacted and rec.get("action") != "redact" and "reason" in rec:
        out = {k: v for k, v in rec.items() if k != "reason"}
        out.update(reason_redacted=True, reason_hash=reason_hash(rec["reason"]))
        return out
    if t == "call" and _s(rec.get("conflicts_with")) in redacted and rec.get("redacted") is not True:
        out = {k: rec[k] for k in REDACTED_CALL_KEYS if k in rec}
        out["redacted"] = True
        return out
    if t == "run" and isinstance(rec.get("attempts"), list):
        for pid in sorted(redacted):
            if tried_against(rec, pid):
                rec = dict(rec, attempts=[redacted_attempt(a) if isinstance(a, dict) and a.get("of") == pid
                                          and "claim" in a else a for a in rec["attempts"]])
    return rec


def _tombs(records: Sequence[Dict[str, Any]]) -> Set[str]:
    return {r["id"] for r in records if r.get("t") == "prior" and r.get("redacted") is True and isinstance(r.get("id"), str)}


def _decisions_to_keep_last(ours_new: Sequence[Dict[str, Any]], theirs_new: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Our decide events that are our last word on a prior which their lines end on an agent disposition."""
    agent_last: Set[str] = set()
    for r in theirs_new:
        if r.get("t") != "event" or not isinstance(r.get("id"), str):
            continue
        if r.get("action") == "disposition":
            agent_last.add(r["id"])
        elif r.get("action") in ("decide", "redact"):
            agent_last.discard(r["id"])
    last: Dict[str, int] = {}
    for i, r in enumerate(ours_new):
        if r.get("t") == "event" and isinstance(r.get("id"), str):
            last[r["id"]] = i
    return [r for i, r in enumerate(ours_new)
            if r.get("t") == "event" and r.get("action") == "decide" and r.get("id") in agent_last and last.get(r["id"]) == i]


def merge(base: bytes, ours: bytes, theirs: bytes, reserved: Sequence[str] = (), mark: bool = False) -> Union[bytes, Conflict]:
    """base + our new lines + their new lines (renumbered after ours); a redaction on either side wins.

    `reserved`: ids our side holds outside the ledger (the driver passes its open runs); their ids
    are moved past those too. Our lines are kept byte for byte unless their redaction rewrites them.
    `mark`: their seals say what their runs did not see (core/unseen.py) — for a merge commit, which
    keeps both sides; a rebase or cherry-pick replays their runs as if they came after ours, and so
    they are judged.
    """
    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    for lines, name in ((o, "ours"), (t, "theirs")):
        bad = _prefix(b, lines, name)
        if bad is not None:
            return bad
    head: List[bytes] = []
    for i, (bl, ol, tl) in enumerate(zip(b, o, t), 1):
        if ol != bl and tl != bl and ol != tl:
            return Conflict(f"both sides rewrote line {i} differently")
        head.append(ol if ol != bl else tl)
    parsed = []
    for lines, name, off in ((b, "base", 0), (head, "merged base", 0),
                             (o[len(b):], "ours", len(b)), (t[len(b):], "theirs", len(b))):
        recs = _records(lines, name, off)
        if isinstance(recs, Conflict):
            return recs
        parsed.append(recs)
    base_recs, head_recs, ours_new, theirs_new = parsed
    pmap, rmap = renumbering(base_recs, ours_new, theirs_new, reserved)
    # their runs saw none of our people's decisions: each of their seals says what it saw (core/unseen.py)
    seen = marks(base_recs, ours_new, theirs_new) if mark else [None] * len(theirs_new)
    theirs_new = [with_mark(rewrite_refs(r, pmap, rmap), m) for r, m in zip(theirs_new, seen)]
    was = _tombs(base_recs)
    # every line of o and t was parsed above (as a line of b or head, or in its new tail): no Conflict here
    ours_red = _tombs(_records(o, "ours", 0)) - was  # type: ignore[arg-type]
    theirs_red = _tombs(_records(t, "theirs", 0)) - was  # type: ignore[arg-type]
    ours_out = [raw if redact_refs(r, theirs_red) == r else dumps(redact_refs(r, theirs_red)).encode("utf-8")
                for r, raw in zip(ours_new, o[len(b):])]  # our untouched lines byte for byte
    ours_new = [redact_refs(r, theirs_red) for r in ours_new]
    theirs_new = [redact_refs(r, ours_red) for r in theirs_new]
    # The human's word stays on top without touching our lines (so the merge still extends ours, and
    # `verify --since` holds): our redact of a prior their lines still mention, and our last decision on a
    # prior their lines end on an agent disposition of, are restated after their lines.
    touched = {_s(r.get("id")) for r in theirs_new if r.get("t") == "event" and r.get("action") != "redact"}
    touched |= {_s(r.get("conflicts_with")) for r in theirs_new if r.get("t") == "call"}
    late = [r for r in ours_new if r.get("t") == "event" and r.get("action") == "redact"
            and _s(r.get("id")) in ours_red and _s(r.get("id")) in touched]
    restated = [dict(r, restated=True) for r in _decisions_to_keep_last(ours_new, theirs_new) + late]
    out = list(head)
    out += ours_out
    out += [dumps(r).encode("utf-8") for r in theirs_new + restated]
    return b"".join(line + b"\n" for line in out)


def merged_marks(base: bytes, ours: bytes, theirs: bytes) -> List[Tuple[Any, Any]]:
    """For each of their new lines, (the mark `merge` writes on it, the mark it already carries on their
    side) — `verify` holds each mark a change adds to the merge it came from (core/unseen.py); nothing
    when a side does not read."""
    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    if len(o) < len(b) or len(t) < len(b):
        return []
    got: List[List[Dict[str, Any]]] = []
    for lines in (b, o[len(b):], t[len(b):]):
        recs = _records(lines, "side", 0)
        if isinstance(recs, Conflict):
            return []
        got.append(recs)
    base_recs, ours_new, theirs_new = got
    pmap, rmap = renumbering(base_recs, ours_new, theirs_new)
    return [(with_mark(rewrite_refs(rec, pmap, rmap), m).get(UNSEEN), rec.get(UNSEEN))
            for rec, m in zip(theirs_new, marks(base_recs, ours_new, theirs_new))]
