"""The ledger only grew since an older version of it (`check_since`: what `priors verify` names against a git
revision), but for the rewrites a redaction makes (`rewrite_problem`) — compared line by line, of two ledgers
whole, or of two read a block at a time (`Lines`), as `verify` reads a change that rewrote lines at 100k priors:
the two whole and their lines were ~300 MB of its process.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, List, Optional, Set, Tuple, Union

from priors.core.canonical import reason_hash, sha12, split_lines
from priors.core.human import redacted_attempt
from priors.core.ledger_checks import parse_line
from priors.core.ledger_parse import whole_line_pieces
from priors.core.ledger_rules import REDACTED_CALL_KEYS
from priors.core.problem import Problem

Source = Union[bytes, Callable[[], Iterable[bytes]]]  # a ledger's bytes, or what gives its bytes in pieces afresh


class Lines:
    """A ledger's lines as `split_lines` cuts them, read on as far as they are asked for (`has`, `[k]`): of its
    bytes, or of what gives its bytes in pieces — then only the lines from the one last let go (`let_go`) to
    the farthest asked for are held, a few thousand at most, never the ledger."""

    __slots__ = ("held", "first", "more", "source")

    def __init__(self, source: Source) -> None:
        self.source = source
        self.first = 0  # the number of the line `held` starts with
        if isinstance(source, (bytes, bytearray)):
            self.held: List[bytes] = split_lines(source)
            self.more: Optional[Iterator[List[bytes]]] = None
        else:
            self.held, self.more = [], _piece_lines(source())

    def has(self, k: int) -> bool:
        """Whether line `k` (from 0) is there: read on to it."""
        while k - self.first >= len(self.held):
            got = next(self.more, None) if self.more is not None else None
            if got is None:
                self.more = None
                return False
            self.held.extend(got)
        return True

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):  # (`[a:b]`: those of the lines there)
            self.has(k.stop - 1)
            return self.held[k.start - self.first:k.stop - self.first]
        self.has(k)
        return self.held[k - self.first]

    def let_go(self, k: int) -> None:
        """Lines before `k` are asked for no more (forgotten a few thousand at a time, when read in pieces)."""
        if not isinstance(self.source, (bytes, bytearray)) and k - self.first > 4096:
            del self.held[:k - self.first]
            self.first = k

    def total(self) -> int:
        """How many lines there are (read to the end)."""
        while self.has(self.first + len(self.held)):
            pass
        return self.first + len(self.held)

    def again(self) -> Iterable[bytes]:
        """Every line, from the first, afresh."""
        if isinstance(self.source, (bytes, bytearray)):
            return split_lines(self.source)
        return (line for lines in _piece_lines(self.source()) for line in lines)


def _piece_lines(pieces: Iterable[bytes]) -> Iterator[List[bytes]]:
    """The lines of a ledger in pieces (`split_lines`'), a piece's at a time."""
    for piece in whole_line_pieces(pieces):
        lines = piece.split(b"\n")
        if piece.endswith(b"\n"):
            lines.pop()
        yield lines


def rewrite_problem(old: bytes, new: bytes) -> Optional[str]:
    """None when `new` is `old` or the sanctioned redaction rewrite of it; else why not."""
    if old == new:
        return None

    o, _ = parse_line(old)
    n, _ = parse_line(new)
    if o is None or n is None:
        return "changed (and is not a redaction rewrite)"
    if n.get("t") == "prior" and n.get("redacted") is True:
        if o.get("t") != "prior" or o.get("redacted") is True:
            return "changed (and is not a redaction rewrite)"
        if any(n.get(k) != o.get(k) for k in ("id", "ns", "born")):
            return f"became a tombstone for {n.get('id')} that does not match the old prior's id, ns and born"
        if n.get("content_hash") != sha12(old.decode("utf-8", "replace")):
            return f"became a tombstone for {n.get('id')} whose content_hash does not match the old line"
        return None
    if n.get("t") == "event" and n.get("reason_redacted") is True:
        if "reason" not in o:
            return "lost a reason it never had"
        want = {k: v for k, v in o.items() if k != "reason"}
        want.update(reason_redacted=True, reason_hash=reason_hash(o["reason"]))
        if n != want:
            if n.get("reason_hash") != want["reason_hash"]:
                return f"redacted a reason of {o.get('id')} but reason_hash does not match the old reason"
            return f"changed more than the redacted reason of {o.get('id')}"
        return None
    if n.get("t") == "run" and o.get("t") == "run" and isinstance(o.get("attempts"), list):
        # a redaction takes the words of attempts on the redacted prior, keeping a hash of each
        gone = {a["of"] for a, b in zip(o["attempts"], n.get("attempts") or []) if isinstance(a, dict)
                and isinstance(b, dict) and "claim" in a and b.get("claim_redacted") is True and isinstance(a.get("of"), str)}
        want = o
        for pid in sorted(gone):
            want = {k: v for k, v in want.items()}
            want["attempts"] = [redacted_attempt(a) if isinstance(a, dict) and a.get("of") == pid and "claim" in a else a
                                for a in want["attempts"]]
        if gone and n == want:
            return None
        return f"run record {o.get('run')} changed more than a redaction of what its agent tried allows"
    if n.get("t") == "call" and n.get("redacted") is True:
        want = {k: o[k] for k in REDACTED_CALL_KEYS if k in o}
        want.update(redacted=True)
        if o.get("t") != "call" or n != want:
            return f"call {o.get('call_id')} changed more than its redaction allows"
        return None
    return "changed (and is not a redaction rewrite)"


def redacted_ids(lines: Iterable[bytes]) -> Set[str]:
    out: Set[str] = set()
    for raw in lines:
        rec, _ = parse_line(raw)
        if rec and rec.get("t") == "prior" and rec.get("redacted") is True and isinstance(rec.get("id"), str):
            out.add(rec["id"])
    return out


def _subjects(raw: bytes) -> List[Any]:
    """The priors whose redaction a rewritten line answers for: a call's, a line's own, or a seal's redacted attempts'."""
    rec, _ = parse_line(raw)
    if not rec:
        return [None]
    if rec.get("t") == "run" and isinstance(rec.get("attempts"), list):
        return sorted({a.get("of") for a in rec["attempts"] if isinstance(a, dict) and a.get("claim_redacted") is True},
                      key=str) or [None]
    return [rec.get("conflicts_with") if rec.get("t") == "call" else rec.get("id")]


def check_since(old: Source, new: Source, rev: str = "the old revision") -> List[Problem]:
    """The ledger only grew since `old`: a line-by-line prefix, except sanctioned redaction rewrites. A run of
    lines removed or put in between is named once, where it is, and the lines after it are compared with their
    old selves (newcomer pass 27aw: one line deleted by hand read as 30 changed lines and a shrunk ledger).
    `old`, `new`: each ledger's bytes, or what gives its bytes in pieces afresh (`Lines`: `verify` compares a
    change that rewrote lines so, neither ledger held whole)."""
    o, n = Lines(old), Lines(new)
    problems: List[Problem] = []
    tombs: Optional[Set[str]] = None  # read only when some line changed: a ledger that only grew needs no parse
    i = j = 0  # the next line of `o`, of `n`
    tries = 200  # (runs looked for at so many lines that differ: then line by line — hostile pass 27ax's floods)
    while True:
        oh, nh, ob, nb = o.held, n.held, o.first, n.first
        a, b = i - ob, j - nb
        while a < len(oh) and b < len(nh) and oh[a] == nh[b]:  # (the same lines, where both are read already)
            a, b = a + 1, b + 1
        i, j = a + ob, b + nb
        if not (o.has(i) and n.has(j)):
            break
        if o[i] == n[j]:
            o.let_go(i)
            n.let_go(j)
            continue
        moved = _moved_at(o, n, i, j) if tries > 0 else None
        tries -= 1
        if moved is not None:
            gone, put = moved
            what = (f"{gone} line{'s' if gone != 1 else ''} removed here (line {i + 1} at {rev} was {_gist(o[i])})"
                    if gone else f"{put} line{'s' if put != 1 else ''} put in here, after line {i} of {rev} (lines"
                    " are added at the end only)")
            problems.append(Problem(j + 1, "NOT_APPEND_ONLY", f"{what} since {rev}: `git checkout {rev} --"
                                    f" .priors/ledger.jsonl` puts the ledger back as it was (the lines added since go with it)"))
            i, j = i + gone, j + put
            continue
        why = rewrite_problem(o[i], n[j])
        if why is None:
            if tombs is None:
                tombs = redacted_ids(n.again())
            stray = [x for x in _subjects(n[j]) if x not in tombs]
            if stray:
                why = f"was rewritten for a redaction of {stray[0]}, which is not a tombstone"
        if why is not None:
            problems.append(Problem(j + 1, "NOT_APPEND_ONLY", f"{why} since {rev}"))
        i, j = i + 1, j + 1
    if o.has(i):
        had, has = o.total(), n.total()
        problems.append(Problem(has + 1 if has else 1, "LEDGER_SHRANK", f"the ledger has {has} lines but had"
                                f" {had} at {rev}: lines were removed" + (f" (from line {i + 1} at {rev})" if i else "")))
    return problems


def _moved_at(o: Lines, n: Lines, i: int, j: int, most: int = 1000, near: int = 8) -> Optional[Tuple[int, int]]:
    """(removed, put in) when, where `o[i]` and `n[j]` differ, up to `most` lines were taken out of `o` or put in:
    most of the `near` lines after are the same lines again (lines merely edited share none, shifted)."""
    for k in range(1, most + 1):
        for gone, put in ((k, 0), (0, k)):
            pairs = list(zip(o[i + gone:i + gone + near], n[j + put:j + put + near]))
            if pairs and sum(a == b for a, b in pairs) * 2 > len(pairs):
                return gone, put
    return None


def _gist(raw: bytes) -> str:  # a line in a few words: its record's type, id, action and verdict
    rec, _ = parse_line(raw)
    words = [str(rec.get(k)) for k in ("t", "id", "action", "to") if isinstance(rec.get(k), str)] if rec else ["not JSON"]
    return " ".join(words) or "a record"


