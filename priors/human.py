"""What only a human may do: decide a prior, or redact its content (pure transforms)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from priors.canonical import dumps, sha12
from priors.errors import Refusal
from priors.fold import State


def decide_event(st: State, pid: str, verdict: str, reason: Optional[str], open_run: Optional[str]) -> Dict[str, Any]:
    p = st.priors.get(pid)
    if p is None:
        raise Refusal("UNKNOWN_PRIOR", id=pid)
    if p.redacted:
        raise Refusal("REDACTED", id=pid)
    if open_run is not None:
        raise Refusal("ACTIVE_RUN_EXISTS", run=open_run,
                      hint=f"decisions happen between runs: commit or abort {open_run} first")
    event: Dict[str, Any] = {"t": "event", "id": pid, "action": "decide", "to": verdict, "by": "human"}
    if reason is not None:
        event["reason"] = reason
    return event


def check_redactable(st: State, pid: str) -> None:
    p = st.priors.get(pid)
    if p is None:
        raise Refusal("UNKNOWN_PRIOR", id=pid)
    if p.redacted:
        raise Refusal("ALREADY_REDACTED", id=pid)


def _reason_hash(reason: Any) -> str:
    return sha12(reason if isinstance(reason, str) else dumps(reason))


def redact_lines(raw_lines: List[str], records: List[Dict[str, Any]], pid: str, reason: str) -> List[str]:
    """The ledger with `pid`'s content removed: tombstone, scrubbed reasons and calls, plus the redact event.

    `raw_lines` are the ledger's non-blank lines (no newline) matching `records` one to one;
    untouched lines are kept byte for byte.
    """
    out: List[str] = []
    content_hash = None
    for text, rec in zip(raw_lines, records):
        t = rec.get("t")
        if t == "prior" and rec.get("id") == pid and rec.get("redacted") is not True:
            content_hash = sha12(text)
            tomb = {"t": "prior", "id": pid, "ns": rec.get("ns"), "redacted": True, "content_hash": content_hash}
            if "born" in rec:
                tomb["born"] = rec["born"]
            out.append(dumps(tomb))
        elif t == "event" and rec.get("id") == pid and "reason" in rec:
            ev = {k: v for k, v in rec.items() if k != "reason"}
            ev["reason_redacted"] = True
            ev["reason_hash"] = _reason_hash(rec["reason"])
            out.append(dumps(ev))
        elif t == "call" and rec.get("conflicts_with") == pid and rec.get("redacted") is not True:
            keep = ("t", "call_id", "kind", "run", "ns", "conflicts_with")
            call = {k: rec[k] for k in keep if k in rec}
            call["redacted"] = True
            out.append(dumps(call))
        else:
            out.append(text)
    out.append(dumps({"t": "event", "id": pid, "action": "redact", "by": "human", "reason": reason}))
    return out


def tombstone_hash(raw_lines: List[str], records: List[Dict[str, Any]], pid: str) -> Optional[str]:
    for text, rec in zip(raw_lines, records):
        if rec.get("t") == "prior" and rec.get("id") == pid and rec.get("redacted") is not True:
            return sha12(text)
    return None


def scrub(value: Any, pid: str, content_hash: str) -> Any:
    """Replace every object whose id is `pid`, at any depth, by its redaction mark."""
    if isinstance(value, dict):
        if value.get("id") == pid:
            return {"id": pid, "redacted": True, "content_hash": content_hash}
        return {k: scrub(v, pid, content_hash) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, pid, content_hash) for v in value]
    return value
