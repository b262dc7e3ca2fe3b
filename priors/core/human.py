"""Human verdicts and redaction as rules over the folded state and the ledger's bytes.
"""

from __future__ import annotations

import re

from priors.core.canonical import dumps, loads, reason_hash, sha12
from priors.core.errors import Refusal
from priors.core.fold import State, forget_lesson

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Tuple


def unknown_prior(st: State, pid: str) -> Refusal:
    """`pid` names no prior: the refusal says which ids there are (newcomer pass 27aw: a bare code)."""
    ids = list(st.priors)
    hint = (f"the ledger's priors are {ids[0]} … {ids[-1]}: `priors list` shows them" if len(ids) > 1 else
            f"the ledger's one prior is {ids[0]}" if ids else "the ledger holds no priors yet")
    return Refusal("UNKNOWN_PRIOR", id=pid, hint=hint)


def decide_event(st: State, pid: str, verdict: str, reason: Optional[str], open_run: Optional[str]) -> Dict[str, Any]:
    p = st.priors.get(pid)
    if p is None:
        raise unknown_prior(st, pid)
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
        raise unknown_prior(st, pid)
    if p.redacted:
        raise Refusal("ALREADY_REDACTED", id=pid)


def _redacted_line(text: str, rec: Dict[str, Any], pid: str) -> Optional[str]:
    """The line that replaces `text` (whose record is `rec`) when `pid` is redacted; None: kept as is."""
    t = rec.get("t")
    if t == "prior" and rec.get("id") == pid and rec.get("redacted") is not True:
        tomb = {"t": "prior", "id": pid, "ns": rec.get("ns"), "redacted": True, "content_hash": sha12(text)}
        if "born" in rec:
            tomb["born"] = rec["born"]
        return dumps(tomb)
    if t == "event" and rec.get("id") == pid and "reason" in rec:
        ev = {k: v for k, v in rec.items() if k != "reason"}
        ev["reason_redacted"] = True
        ev["reason_hash"] = reason_hash(rec["reason"])
        return dumps(ev)
    if t == "call" and rec.get("conflicts_with") == pid and rec.get("redacted") is not True:
        keep = ("t", "call_id", "kind", "run", "ns", "conflicts_with")
        call = {k: rec[k] for k in keep if k in rec}
        call["redacted"] = True
        return dumps(call)
    if t == "run" and tried_against(rec, pid):
        return dumps(dict(rec, attempts=[redacted_attempt(a) if _names(a, pid) else a for a in rec["attempts"]]))
    return None


def _names(attempt: Any, pid: str) -> bool:
    return isinstance(attempt, dict) and attempt.get("of") == pid and "claim" in attempt


def tried_against(rec: Dict[str, Any], pid: str) -> bool:
    """Whether a run record keeps the words of an attempt on `pid` (which its redaction removes)."""
    tried = rec.get("attempts")
    return isinstance(tried, list) and any(_names(a, pid) for a in tried)


def redacted_attempt(attempt: Dict[str, Any]) -> Dict[str, Any]:
    """An attempt on a redacted prior: its words go, a hash of them stays (as a decision's reason does)."""
    out = {k: v for k, v in attempt.items() if k != "claim"}
    out.update(claim_redacted=True, claim_hash=reason_hash(attempt["claim"]))
    return out


def redact_event(pid: str, reason: str) -> Dict[str, Any]:
    return {"t": "event", "id": pid, "action": "redact", "by": "human", "reason": reason}


def redact_lines(raw_lines: List[str], records: List[Dict[str, Any]], pid: str, reason: str) -> List[str]:
    """The ledger with `pid`'s content removed: tombstone, scrubbed reasons and calls, plus the redact event.

    `raw_lines` are the ledger's non-blank lines (no newline) matching `records` one to one;
    untouched lines are kept byte for byte. (The reference form of `redact_pieces`.)
    """
    out: List[str] = []
    for text, rec in zip(raw_lines, records):
        new = _redacted_line(text, rec, pid)
        out.append(text if new is None else new)
    out.append(dumps(redact_event(pid, reason)))
    return out


_BLANK_LINE = re.compile(rb"\n[ \t\r\x0b\x0c]*(?:\n|\Z)")  # starts with a literal: re skips ahead by newline
_BLANK_FIRST = re.compile(rb"[ \t\r\x0b\x0c]*(?:\n|\Z)")
_ESCAPE = re.compile(rb"\\[u/]")  # a character spelled another way; one regex scans twice as fast as two finds


def lines_naming(data: bytes, pid: str) -> List[Tuple[int, int]]:
    """(start, end) of every line of `data` that can name `pid` (see `redact_pieces`), in order. `data`
    may be any run of whole lines of the ledger: a caller that reads it a block at a time asks per block."""
    return _lines_holding(data, dumps(pid).encode("utf-8"))


def _lines_holding(data: bytes, needle: bytes) -> List[Tuple[int, int]]:
    """(start, end) of every line of `data` that holds `needle` or an escape, in order."""
    hits = []
    i = data.find(needle)
    while i >= 0:
        hits.append(i)
        i = data.find(needle, i + 1)
    hits += [m.start() for m in _ESCAPE.finditer(data)]
    spans = []
    end = -1
    for i in sorted(hits):
        if i <= end:
            continue  # on the line already taken
        end = data.find(b"\n", i)
        if end < 0:
            end = len(data)
        spans.append((data.rfind(b"\n", 0, i) + 1, end))
    return spans


def redact_pieces(data: bytes, pid: str, reason: str, blank_free: bool = False,
                  event: Optional[Dict[str, Any]] = None) -> Tuple[List[Any], Optional[str], List[Dict[str, Any]]]:
    """`redact_lines` over the ledger's bytes, parsing only the lines that can name `pid`.

    A line names `pid` only if it holds its canonical JSON text, or spells a character another way
    (a `\\u` or `\\/` escape): every other line is kept byte for byte without being parsed.
    Returns the new ledger in pieces — new bytes, or (start, end) spans of `data` kept as they are,
    so that a large ledger is written out without a second copy of it in memory (`joined` makes
    the bytes) — the tombstone's content hash (of the first live prior line), and, in ledger
    order, the new records of every line that names `pid` (for `fold_redaction`).
    `blank_free`: the caller knows no line is blank (the fold counted one record per line), which
    spares scanning for them. `event`: the redact event to append (signed, say); by default
    `redact_event(pid, reason)`.
    """
    needle = dumps(pid).encode("utf-8")
    last = len(data) - 1 if data.endswith(b"\n") else len(data)  # a final newline ends a line, opens none
    if blank_free or not (not last or _BLANK_FIRST.match(data, 0, last) or _BLANK_LINE.search(data, 0, last)):
        # the usual ledger: only the lines holding a hit are looked at
        hits = [(start, end, data[start:end]) for start, end in _lines_holding(data, needle)]
        return redact_spans(hits, len(data), data.endswith(b"\n"), pid, reason, event)
    # blank lines go, as in redact_lines: walk every line
    pieces: List[Any] = []
    named: List[Dict[str, Any]] = []
    content_hash: Optional[str] = None
    for raw in data.split(b"\n"):
        if raw.strip():
            new_raw, content_hash = _redact_one(raw, pid, named, content_hash)
            pieces.append(new_raw + b"\n")
    pieces.append((dumps(redact_event(pid, reason) if event is None else event) + "\n").encode("utf-8"))
    return pieces, content_hash, named


def redact_spans(hits: List[Tuple[int, int, bytes]], size: int, ends_with_newline: bool, pid: str, reason: str,
                 event: Optional[Dict[str, Any]] = None) -> Tuple[List[Any], Optional[str], List[Dict[str, Any]]]:
    """`redact_pieces` of a ledger of `size` bytes without blank lines, from only its lines that can
    name `pid` — `hits`, (start, end, the line's bytes) in order, as `lines_naming` finds them — so a
    caller may read the ledger a block at a time and never hold it whole."""
    pieces: List[Any] = []
    named: List[Dict[str, Any]] = []
    content_hash: Optional[str] = None
    at = 0
    for start, end, raw in hits:
        new_raw, content_hash = _redact_one(raw, pid, named, content_hash)
        if new_raw is not raw:
            pieces += [(at, start), new_raw]
            at = end
    pieces.append((at, size))
    if not ends_with_newline:
        pieces.append(b"\n")
    pieces.append((dumps(redact_event(pid, reason) if event is None else event) + "\n").encode("utf-8"))
    return pieces, content_hash, named


def _redact_one(raw: bytes, pid: str, named: List[Dict[str, Any]], content_hash: Optional[str]) -> Tuple[bytes, Optional[str]]:
    """One line that may name `pid`: its redacted bytes (`raw` itself when nothing changes), its record
    appended to `named` when it names the prior, and the tombstone's content hash once known."""
    text = raw.decode("utf-8")
    rec = loads(text)
    new = _redacted_line(text, rec, pid)
    new_raw = raw
    if new is not None:
        if rec.get("t") == "prior" and content_hash is None:
            content_hash = sha12(text)
        new_raw, rec = new.encode("utf-8"), loads(new)
    if rec.get("id") == pid or rec.get("conflicts_with") == pid or (new is not None and rec.get("t") == "run"):
        named.append(rec)  # (a run seal whose attempts on the prior lose their words)
    return new_raw, content_hash


def joined(data: bytes, pieces: List[Any]) -> bytes:
    """The bytes `redact_pieces` describes."""
    return b"".join(data[p[0]:p[1]] if isinstance(p, tuple) else p for p in pieces)


def fold_redaction(st: State, pid: str, named: List[Dict[str, Any]]) -> bool:
    """Make `st` — the fold of the ledger before redaction — the fold of the redacted ledger, less its
    final redact event. `named`: every record of the redacted ledger that names `pid`, in order.

    Redaction keeps every line in place and every field the fold reads except in `pid`'s prior
    lines (now tombstones) and calls against it (now redacted, hence resolved). So only `pid`'s
    state moves: the tombstone starts it with no scope hash and no human decision; later events
    replay as before. Returns False when `named` does not fit `st` (then fold afresh).
    """
    p = st.priors.get(pid)
    last = max((i for i, r in enumerate(named) if r.get("t") == "prior" and r.get("id") == pid), default=-1)
    if p is None or last < 0:
        return False
    later = [r for r in named[last + 1:] if r.get("t") == "event" and r.get("id") == pid]
    q = p.copy()
    q.rec = named[last]
    if not any(r.get("action") == "decide" for r in later):
        q.human_idx = -1
    if not any(r.get("action") == "disposition" and isinstance(r.get("scope_hash"), str) for r in later):
        q.scope_hash = None
    calls = [r for r in named if r.get("t") == "call" and r.get("conflicts_with") == pid]
    mine = [c for c in st.calls if c.rec.get("conflicts_with") == pid]
    if len(calls) != len(mine):
        return False
    st.priors[pid] = q
    forget_lesson(st, pid)
    for rec in named:  # a seal that kept words raising it: the fold's copy of that seal loses them too
        run = rec.get("run")
        if rec.get("t") == "run" and isinstance(run, str) and run in st.commits:
            old = st.commits[run]
            if isinstance(old, dict) and old.get("attempts") is not None and tried_against(old, pid):
                st.commits[run] = dict(old, attempts=rec.get("attempts"))
    for c, rec in zip(mine, calls):
        if c.rec.get("redacted") is not True:
            c.rec, c.resolved = rec, True
    return True


def scrub(value: Any, pid: str, content_hash: str) -> Any:
    """Replace every object whose id is `pid`, at any depth, by its redaction mark."""
    if isinstance(value, dict):
        if value.get("id") == pid:
            return {"id": pid, "redacted": True, "content_hash": content_hash}
        if _names(value, pid) and value.get("code") is not None:  # a staged attempt on it: its words go
            return redacted_attempt(value)
        if value.get("conflicts_with") == pid and value.get("redacted") is not True:
            # a staged reversal against it: its claim goes, as the ledger's calls lose theirs
            return {k: value[k] for k in ("kind", "conflicts_with") if k in value} | {"redacted": True}
        return {k: scrub(v, pid, content_hash) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, pid, content_hash) for v in value]
    return value
