"""How `verify` splits its replay between two processes (ops/verify.py `start_replay`): by namespace,
each half judging its own and skipping the blocks it has no use for.

Both halves must name exactly what one whole replay names (core/ledger_replay.py). A half folds
every line a rule of its namespaces can read: its own namespaces' blocks, every person's decision,
and the priors other lines name — a decision, a redaction, `same_as`, `supersedes`, `distinct_from`
(`referenced_ids`, found in the ledger's bytes before the replay starts). Another namespace's block
naming none of those is parsed but not folded. A line that names a prior skipped so (a hand-made
ledger can write one the search did not find) stops that half, which replays again folding every line.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, Union

from priors.core.ledger_parse import whole_line_pieces
from priors.core.plain import Plain


class Share(Plain):
    """The namespaces one of two replays judges: those in `names` (`inside`) or every other one.

    The two halves of a split replay each fold the whole ledger (a rule reads every namespace's
    state: a person's decisions hold in all of them) but judge, and index for judging, only their
    own namespaces' lines, so each line is judged by exactly one half and together they name what
    one whole replay names (`in_order` makes the order the same too)."""

    __slots__ = ("names", "inside")

    def __init__(self, names: Iterable[str], inside: bool) -> None:
        self.names, self.inside = frozenset(names), inside

    def judges(self, ns: Any) -> bool:
        return (ns in self.names) == self.inside if isinstance(ns, str) else not self.inside


_NS = re.compile(rb'"ns":"([^"\\]*)"')


def namespace_weights(pieces: Union[bytes, Iterable[bytes]]) -> Dict[str, int]:
    """How many lines of the ledger (its bytes, or its bytes in whole-line pieces) name each namespace, written plainly:
    the work each namespace's lines are to a replay (a namespace written with escapes is not counted)."""
    return survey(pieces, find=False)[0]


def split_namespaces(weights: Dict[str, int], head_start: float) -> Set[str]:
    """The namespaces one half of a split replay judges when it has other work worth `head_start` of
    the whole replay's (verify's line checks), the other half judging the rest: the heaviest first,
    each to the half with less to do, so the two end about together. Empty when one half is best
    doing it all (one namespace)."""
    total = sum(weights.values()) or 1
    mine: Set[str] = set()
    load, other = head_start * total, 0.0
    for name, weight in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0])):
        if load < other:
            mine.add(name)
            load += weight
        else:
            other += weight
    return mine



# A person's decision or redaction names its prior first among the fields that can hold an id; `same_as`
# and `supersedes` name one, `distinct_from` a list. Found as the keeper writes them (canonical JSON);
# one written otherwise is met during the replay, which then folds every line (`Overlooked`).
_MARKERS = (b'{"action":"decide"', b'{"action":"redact"', b'"same_as":"', b'"supersedes":"', b'"distinct_from":[')
_FIRST_ID = re.compile(rb'"id":"(P-[0-9]+)"')
_PRIOR_ID = re.compile(rb"P-[0-9]+")


def survey(pieces: Union[bytes, Iterable[bytes]], weigh: bool = True,
           find: bool = True) -> Tuple[Dict[str, int], FrozenSet[str]]:
    """(`namespace_weights`, the ids of the priors a line other than their own block's names: what
    every half must fold whatever its namespaces), in one read of the ledger's bytes (whole, or in
    whole-line pieces). The ids are found as the keeper writes them; more is harmless (a block
    folded that could have been skipped), fewer is caught during the replay (`Overlooked`). `weigh`,
    `find`: whether to count the weights, to find the ids (verify's child finds its own ids; this
    process takes them from its line checks, `Checked.named`)."""
    if isinstance(pieces, (bytes, bytearray)):  # the ledger whole (verify in a git work tree reads it so)
        pieces = [bytes(pieces)]
    else:  # as read (`verify --no-git`: a megabyte at a time, cut anywhere): a line cut in two is found whole
        pieces = whole_line_pieces(pieces)
    weights: Dict[str, int] = {}
    ids: Set[str] = set()
    for piece in pieces:
        for raw, n in Counter(_NS.findall(piece) if weigh else ()).items():
            name = raw.decode("utf-8", "replace")
            weights[name] = weights.get(name, 0) + n
        if find:
            ids.update(_referenced(piece))
    return weights, frozenset(ids)


def _referenced(piece: bytes) -> Set[str]:
    """The prior ids each marker's line names: a decision's or redaction's own, `same_as`'s and
    `supersedes`'s value, every id in `distinct_from`'s list."""
    ids: Set[bytes] = set()
    for marker in _MARKERS:
        at = piece.find(marker)
        while at >= 0:
            end = piece.find(b"\n", at)
            end = len(piece) if end < 0 else end
            line = piece[at:end]
            if marker[:1] == b"{":
                m = _FIRST_ID.search(line)
                if m is not None:
                    ids.add(m.group(1))
            elif marker[-1:] == b"[":
                ids.update(_PRIOR_ID.findall(line, len(marker), max(line.find(b"]"), len(marker))))
            else:
                m = _PRIOR_ID.match(line, len(marker))
                if m is not None:
                    ids.add(m.group(0))
            at = piece.find(marker, end)
    return {i.decode("ascii") for i in ids}


# ------------------------------------------------------------------ a replay as one half of a split one


class Overlooked(Exception):
    """A line names a prior whose block this half of a split replay did not fold: its answer could
    differ from the whole replay's, so the half starts again and folds every line."""


_UNASKED = object()  # (equal to no namespace)


class SplitHalf:
    """What a replay (core/ledger_replay.py `Replay`) does as one half of a split one: which lines it
    judges, which of another half's lines it folds, and when it must start again (`Overlooked`)."""

    share: Optional[Share]
    needed: Optional[FrozenSet[str]]  # the priors other lines name: never skipped (None: nothing is skipped)
    foreign: Dict[str, Any]  # prior -> its namespace, for a prior whose block was skipped
    words: Dict[str, str]  # each value of a few fields seen, once
    st: Any  # the fold (core/fold.py `State`)

    def judges(self, ns: Any) -> bool:
        """Whether this replay judges the lines of namespace `ns` (all, unless it is half of a split one)."""
        return self.share is None or self.share.judges(ns)

    def judges_any(self, lines: List[Tuple[int, Dict[str, Any]]]) -> bool:
        """Whether this replay judges any of a block's lines (`ns_of` each; a block is nearly always of one
        namespace, so each namespace is asked about once)."""
        asked: Any = _UNASKED
        for _no, rec in lines:
            ns = self.ns_of(rec)
            if ns != asked:
                if self.judges(ns):
                    return True
                asked = ns
        return False

    def ns_of(self, rec: Dict[str, Any]) -> Any:
        """The namespace a block's line is judged in: its own, or a verdict's prior's."""
        if rec.get("t") == "event":
            pid: Any = rec.get("id")
            p = self.st.priors.get(pid)  # (any id: a miss is None)
            if p is None:
                return self.foreign.get(pid) if type(pid) is str else None
            return p.ns
        return rec.get("ns")

    def kept(self, rec: Dict[str, Any]) -> bool:
        """Whether a line of another namespace's block is folded in a half that skips what it can: a
        prior another line names (`needed`) or one already folded, its events, and any line pointing
        at another prior. Any other prior is noted as skipped (`foreign`); its events and the block's
        calls are not read (nothing this half judges reads them)."""
        pid = rec.get("id")
        if "same_as" in rec or "supersedes" in rec or "distinct_from" in rec:
            return True
        if type(pid) is not str:
            return rec.get("t") == "prior"  # (an odd line: folded as the whole replay folds it)
        if pid in self.st.priors or pid in (self.needed or ()):
            return True
        if rec.get("t") == "prior":
            ns = rec.get("ns")
            self.foreign[pid] = self.words.setdefault(ns, ns) if type(ns) is str else ns  # (one string a namespace)
        return False

    def check_refs(self, rec: Dict[str, Any]) -> None:
        """`Overlooked` when `rec` names a prior whose block was skipped (`skippable`)."""
        foreign = self.foreign
        for key in ("id", "same_as", "supersedes"):
            value = rec.get(key)
            if type(value) is str and value in foreign:
                raise Overlooked(value)
        others = rec.get("distinct_from")
        if type(others) is list and any(type(x) is str and x in foreign for x in others):
            raise Overlooked(others)
