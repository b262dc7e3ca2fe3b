"""How `verify` splits its replay between two processes (ops/verify.py `start_replay`): by namespace,
each half judging its own and skipping the blocks it has no use for.

Both halves must name exactly what one whole replay names (core/ledger_replay.py). A half folds
every line a rule of its namespaces can read: its own namespaces' blocks, every person's decision,
and the priors other lines name — a decision, a redaction, `same_as`, `supersedes`, `distinct_from`
(`survey`, found in the ledger's bytes before the replay starts). Of another namespace's block, only
the lines about those priors are folded; where every line is a prior or verdict written as the keeper
writes them, the block is read as text and only those lines are parsed (`half_records`), else every
line is parsed. A line that names a prior skipped so (a hand-made ledger can write one the search did
not find) stops that half, which replays again folding every line.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple, Union

from priors.core.ledger_parse import EVENT_TEXT, PRIOR_TEXT, records, scanner, whole_line_pieces
from priors.core.plain import Plain
from priors.core.vocabulary import LESSON_DOOR, PERSON_STATUSES


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



_SEAL_DOOR = re.compile(rb'\{"action":"commit","door":([0-9]{1,3})[,}]')


def judged_by_meaning(lines: Iterable[bytes]) -> bool:
    """Whether a run sealed as this keeper seals one, naming a door that compares lessons by meaning
    (`LESSON_DOOR` or later), is among `lines` (a sample of the ledger's): its replay then costs several
    times what the line checks do, not three (`ops/verify.py`, `HEAD_START_BY_MEANING`)."""
    for line in lines:
        got = _SEAL_DOOR.search(line)
        if got is not None and int(got.group(1)) >= LESSON_DOOR:
            return True
    return False


# A person's decision or redaction names its prior first among the fields that can hold an id; `same_as`
# and `supersedes` name one, `distinct_from` a list. Found as the keeper writes them (canonical JSON);
# one written otherwise is met during the replay, which then folds every line (`Overlooked`).
_MARKERS = (b'{"action":"decide"', b'{"action":"redact"', b'"same_as":"', b'"supersedes":"', b'"distinct_from":[')
# an event ending with a status only a person gives (`to` is an event's last key): a decision, or an agent's
# verdict forged to give one — the door refuses it, and the fold holds it all the same (hostile pass 27au)
_PERSON_TO = tuple(b'"to":"%s"}' % s.encode("ascii") for s in PERSON_STATUSES)
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
    `supersedes`'s value, every id in `distinct_from`'s list; and the id of every event giving a status
    only a person gives (`_PERSON_TO`)."""
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
    for marker in _PERSON_TO:
        at = piece.find(marker)
        while at >= 0:
            m = _FIRST_ID.search(piece, piece.rfind(b"\n", 0, at) + 1, at)
            if m is not None:
                ids.add(m.group(1))
            at = piece.find(marker, at + len(marker))
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
    pending: List[Tuple[int, Dict[str, Any]]]  # the open block's lines
    facet_texts: Dict[bytes, bool]  # a prior's facets as written -> whether they are one JSON object (`skim`)
    others: Dict[bytes, str]  # a namespace this half does not judge, as written -> its name (`skim`)
    other_names: Set[str]  # the names in `others`
    fold: Callable[[Dict[str, Any]], None]  # a line into the state (`Replay.fold`)
    stored: Callable[[Dict[str, Any]], Dict[str, Any]]  # a prior's line as the replay keeps it (`Replay.stored`)

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
            p = self.st.priors.get(pid) if type(pid) is str else None  # (a hand-made id may be a list: unhashable)
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

    def skim(self, shown: List[Tuple[bool, Any]]) -> bool:
        """Take a block's tail read as text (`half_records`: each line a match of a keeper-written prior,
        `True`, or verdict of the seal's run) as the replay takes another namespace's block: when none
        of its lines is of a namespace this half judges (`judges_any`, asked before any is folded) and
        each is one JSON object, note each prior as skipped and fold the lines `kept` folds (parsed
        then, in turn), and True; else nothing, False, and the caller parses every line."""
        priors, foreign, others, facets = self.st.priors, self.foreign, self.others, self.facet_texts
        names = self.other_names
        noted: List[Tuple[str, Optional[str], Any]] = []
        try:
            for prior, m in shown:
                if prior:
                    text, pid, ns = m.group(5, 6, 7)
                    if ns not in others and not self.unjudged(ns):
                        return False
                    if not (facets.get(text) or self.one_object(text)):
                        return False
                    noted.append((pid.decode("utf-8"), others[ns], m))
                else:
                    pid = m.group(3).decode("utf-8")
                    p = priors.get(pid)
                    ns = foreign.get(pid) if p is None else p.ns
                    if not (type(ns) is str and ns in names) and self.judges(ns):  # (a hand-made `ns` may be a list)
                        return False
                    noted.append((pid, None, m))
        except UnicodeDecodeError:  # (a value `records` reads with replacement characters)
            return False
        needed, scan = self.needed or (), _scan()
        for pid, ns, m in noted:
            if pid in priors or pid in needed:  # (`kept`)
                rec = scan(m.string.decode("utf-8", "replace"), 0)[0]
                if foreign:
                    self.check_refs(rec)
                self.fold(self.stored(rec) if ns is not None else rec)
            elif ns is not None:
                foreign[pid] = ns
        return True

    def unjudged(self, ns: bytes) -> bool:
        """Whether a namespace as written (bare) is one this half does not judge; noted (`others`) if so."""
        if ns in self.others:
            return True
        try:
            name = ns.decode("utf-8")
        except UnicodeDecodeError:
            return False
        if self.judges(name):
            return False
        self.others[ns] = self.words.setdefault(name, name)
        self.other_names.add(name)
        return True

    def one_object(self, text: bytes) -> bool:
        """Whether a prior's facets as written (bare: no escape, no control character) are one JSON object."""
        sound = self.facet_texts.get(text)
        if sound is None:
            try:
                value, end = _scan()(text.decode("utf-8"), 0)
                sound = type(value) is dict and end == len(text)
            except (StopIteration, ValueError, RecursionError):
                sound = False
            self.facet_texts[text] = sound
        return sound

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


# ------------------------------------------------------------------ another half's block, read as text

# Another namespace's block, in a half that skips what it can, only notes its priors' ids (`kept`): a
# block whose every line is a keeper-written prior or verdict of the seal's run is read as text, its
# lines matched, not parsed (`half_records`). Parsing each line and walking it through the replay was
# most of a half's fixed share; a match takes about a third of a parse's time, and the block is
# judged whole, not line by line (docs/reliability.md, "another half's blocks read as text").
_PRIOR_BYTES = re.compile(PRIOR_TEXT.encode("ascii")).fullmatch
_EVENT_BYTES = re.compile(EVENT_TEXT.encode("ascii")).fullmatch
_SEAL_AT = b'\n{"action":"commit",'  # (a seal written otherwise is a line no match reads: its block is parsed)
_NS_AT = b'"ns":"'  # (in a seal's line: a first guess at whether the block is another half's, `_tail` asks the seal)
_BARE = bytes(range(32, 256)).replace(b"\\", b"")  # deleted, leave the line feeds and any escape or control character
_CONTROLS = tuple(bytes([c]) for c in range(32) if c != 10)
_SKIMMED_ACTIONS = (b"disposition", b"scope-missing")  # (a `moved` event relocates what it names: always parsed)
_SCANNER: List[Any] = []


def _scan() -> Any:
    if not _SCANNER:
        _SCANNER.append(scanner())
    return _SCANNER[0]


def half_records(pieces: Union[bytes, Iterable[bytes]], half: "SplitHalf") -> Iterator[Tuple[int, Dict[str, Any]]]:
    """`records(pieces)` for a half of a split replay that skips what it can (`needed` set), less the
    lines of another half's blocks it would only note: those are read as text (`skim`). The same
    replay either way (a property test): a block is cut at the line before a seal written as the
    keeper writes an agent's, of a namespace this half does not judge; a block that is not all such
    lines or not of the seal's run is parsed as before."""
    scan, no = _scan(), 0  # (`no`: the lines before `at`)
    for piece in whole_line_pieces(pieces):
        at = start = 0  # (`start`: where to look for the next seal)
        while True:
            cut = piece.find(_SEAL_AT, start - 1) if start else piece.find(_SEAL_AT)
            if cut < 0:
                yield from records(piece[at:], no, scan)
                no += piece.count(b"\n", at) + (at < len(piece) and not piece.endswith(b"\n"))
                break
            end = piece.find(b"\n", cut + 1)
            end = len(piece) if end < 0 else end + 1
            ns = piece.find(_NS_AT, cut + 20, end) + 6  # (after `door`, which the keeper writes first)
            quote = piece.find(b'"', ns, end) if ns > 5 else -1
            if quote < 0 or not half.unjudged(piece[ns:quote]):
                start = end  # (this half's block, or a seal naming no namespace as written: parsed with what comes next)
                continue
            begin = piece.rfind(_SEAL_AT, at, cut)  # the line after the seal before, or `at`
            begin = at if begin < 0 else piece.index(b"\n", begin + 1) + 1
            lines = piece.count(b"\n", at, begin)
            yield from records(piece[at:begin], no, scan)
            no += lines
            block = piece[begin:cut + 1]
            lines = block.count(b"\n")
            seal = next(records(piece[cut + 1:end], no + lines, scan), None)
            tail, shown = _tail(block, seal[1] if seal else None, half)
            yield from records(block[:len(block) - len(tail)], no, scan)  # (folded before the tail is asked about)
            if tail and not (shown and not half.pending and half.skim(shown)):
                yield from records(tail, no + lines - tail.count(b"\n"), scan)
            if seal is not None:
                yield seal
            no += lines + 1
            at = start = end


def _tail(block: bytes, seal: Optional[Dict[str, Any]], half: "SplitHalf") -> Tuple[bytes, List[Tuple[bool, Any]]]:
    """The tail of a block (whole lines, before its seal's) that may be read as text (`skim`), with
    its lines' matches: the lines after the last one no match reads, and after any escape or
    control character; none where the seal is not an agent's run record of another half's namespace."""
    run = seal.get("run") if seal is not None and seal.get("t") == "run" and seal.get("action") == "commit" else None
    if not block or type(run) is not str or seal.get("by") == "human" or half.judges(seal.get("ns")):  # type: ignore[union-attr]
        return b"", []
    lines = block.split(b"\n")
    lines.pop()  # (the block ends with a line feed)
    first = at = 0  # the first line that may be read as text, and its offset
    if len(block.translate(None, _BARE)) != len(lines):
        at = max([block.rfind(b"\\")] + [block.rfind(c) for c in _CONTROLS if c in block])
        at = block.index(b"\n", at) + 1
        first = block.count(b"\n", 0, at)
    shown: List[Tuple[bool, Any]] = []
    runs = run.encode("utf-8", "surrogatepass")
    born = b'{"born":"' + runs + b'",'
    for i in range(first, len(lines)):
        line = lines[i]
        m = _PRIOR_BYTES(line) if line.startswith(born) else None
        if m is None:
            m = _EVENT_BYTES(line) if line.startswith(b'{"action":"') else None
            if m is None or m.group(5) != runs or m.group(1) not in _SKIMMED_ACTIONS:
                at += sum(len(x) + 1 for x in lines[first:i + 1])
                first = i + 1
                shown.clear()
                continue
            shown.append((False, m))
        else:
            shown.append((True, m))
    return block[at:], shown
