"""A run's staged verdicts (`dispositions.jsonl`) held compactly: `Verdicts`.

At 100k priors a run on a ledger of open findings stages 70k verdicts; parsed line by line into
dicts they were ~45 MB, read by `disposition`, `propose` and `commit` beside the fold. A line the
door writes — `{"action":"disposition","by":"agent","id":…,"run":…,["scope_hash":…,]"t":"event",
"to":…}` for this run, its strings plain — is fully told by its id, its verdict and its hash: that
is all that is kept of it (its id shared with the fold's, its verdict a byte, its hash six), ~20
bytes a line. Every other line (hand-edited, another shape, not JSON) is kept as parsed, and all
rules read both alike: an item is handed out as the very dict the line parses to. Nothing in the
staging is trusted for being compact — commit judges every verdict again, as before.
"""

from __future__ import annotations

import re

from priors.core.canonical import JSONError, dumps, loads
from priors.core.vocabulary import AGENT_VERDICTS

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

_ODD = 0x7F  # a line kept as parsed (in `odd`)
_HASHED = 0x80  # the line has a scope_hash (its 6 bytes in `hashes`)
_CODE = {v: i for i, v in enumerate(AGENT_VERDICTS)}
_PLAIN = "[ !#-\\[\\]-~]*"  # printable ASCII but `"` and `\`: written as it reads, no escape
_HEX = "0123456789abcdef"
PATTERN_MIN = 4096  # bytes of lines worth compiling the pattern for (fewer are parsed one by one: the same values)


def _plain(s: str) -> bool:
    """`s` is written as it reads in JSON: printable ASCII, no `"` nor `\\` (`_PLAIN`)."""
    return s.isascii() and s.isprintable() and '"' not in s and "\\" not in s


def _hex12(s: str) -> bool:
    return len(s) == 12 and not s.strip(_HEX)
# a line as the door writes it (key order, no space): id, run, hash, verdict


class Verdicts:
    """The staged dispositions in file order, a list of their parsed lines to every reader (`len`,
    `[i]`, iteration, `append`), each line the door writes held as (id, verdict, hash); `ids`,
    `verdicts` and `effects` read them without making the dicts."""

    __slots__ = ("run", "ids", "codes", "hashes", "odd", "seen", "upto")

    def __init__(self, run: str) -> None:
        self.run = run if isinstance(run, str) and _plain(run) else None  # (None: nothing is held compactly)
        self.ids: List[Any] = []  # the line's id (None for a line kept as parsed)
        self.codes = bytearray()  # its verdict's place in AGENT_VERDICTS (| _HASHED), or _ODD
        self.hashes = bytearray()  # 6 bytes a line: the scope_hash's 12 hex digits (zeros without one)
        self.odd: Dict[int, Any] = {}  # line index -> the line as parsed (None: not JSON)
        self.seen: Optional[set] = None  # the ids of the first `upto` lines (`names`), made on first ask
        self.upto = 0

    @classmethod
    def of(cls, run: str, items: Iterable[Any]) -> Verdicts:
        out = cls(run)
        for x in items:
            out.append(x)
        return out

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: int) -> Any:
        c = self.codes[i]
        if c == _ODD:
            return self.odd[i if i >= 0 else i + len(self.codes)]
        ev = {"action": "disposition", "by": "agent", "id": self.ids[i], "run": self.run}
        if c & _HASHED:
            i = i if i >= 0 else i + len(self.codes)
            ev["scope_hash"] = self.hashes[6 * i:6 * i + 6].hex()
        ev["t"] = "event"
        ev["to"] = AGENT_VERDICTS[c & 0x7F]
        return ev

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self.codes)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Verdicts):
            other = list(other)
        return isinstance(other, list) and len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # (mutable)

    def __repr__(self) -> str:
        return f"Verdicts({list(self)!r})"

    def append(self, x: Any) -> None:
        """`x` as the next line (held compactly when it is a line the door writes for this run)."""
        got = _held(x, self.run)
        if got is None:
            self.odd[len(self.codes)] = x
            self.ids.append(None)
            self.codes.append(_ODD)
            self.hashes += b"\0" * 6
            return
        pid, code, raw = got
        self.ids.append(pid)
        self.codes.append(code)
        self.hashes += raw

    def take(self, keep: Iterable[int]) -> Verdicts:
        """The lines at the positions `keep`, in that order."""
        out = Verdicts(self.run or "")
        out.run = self.run
        for i in keep:
            c = self.codes[i]
            if c == _ODD:
                out.odd[len(out.codes)] = self.odd[i]
            out.ids.append(self.ids[i])
            out.codes.append(c)
            out.hashes += self.hashes[6 * i:6 * i + 6]
        return out

    def names(self, pid: Any) -> bool:
        """Whether a line that is an object names `pid` (`pid in ids_of()`), the ids gathered once and
        then only those of lines appended since: a batch of 8k verdicts asks after each one."""
        if self.seen is None:
            self.seen = set()
        if self.upto < len(self.codes):
            self.seen.update(self.ids_of(self.upto))
            self.upto = len(self.codes)
        return pid in self.seen

    def odd_lines(self) -> Dict[int, Any]:
        """Position -> line, of the lines not held compactly (each one the door does not write as it stands)."""
        return self.odd

    def ids_of(self, start: int = 0) -> Iterator[Any]:
        """`d.get("id")` of each line from `start` that is an object (`disposed_ids`), in order."""
        odd, ids = self.odd, self.ids
        for i in range(start, len(self.codes)):
            if i in odd:
                d = odd[i]
                if isinstance(d, dict):
                    yield d.get("id")
            else:
                yield ids[i]

    def verdicts(self) -> Iterator[Tuple[int, Any, Any]]:
        """(position, id, verdict) of every line that is an object: its `get("id")` and `get("to")`."""
        odd, ids, codes = self.odd, self.ids, self.codes
        for i in range(len(codes)):
            if i in odd:
                d = odd[i]
                if isinstance(d, dict):
                    yield i, d.get("id"), d.get("to")
            else:
                yield i, ids[i], AGENT_VERDICTS[codes[i] & 0x7F]

    def effect(self, i: int) -> Tuple[Any, Any, Any]:
        """(id, verdict, scope_hash) — each `get` of the line — of line `i`, which is an object."""
        if i in self.odd:
            d = self.odd[i]
            return d.get("id"), d.get("to"), d.get("scope_hash")
        c = self.codes[i]
        return self.ids[i], AGENT_VERDICTS[c & 0x7F], self.hashes[6 * i:6 * i + 6].hex() if c & _HASHED else None

    def text(self, batch: int = 4096) -> Iterator[str]:
        """The canonical lines (`dumps(line) + "\\n"` each), several joined a piece."""
        head = '{"action":"disposition","by":"agent","id":"'
        mid = '","run":"' + (self.run or "") + '",'
        odd, ids, codes, hashes = self.odd, self.ids, self.codes, self.hashes
        out: List[str] = []
        for i in range(len(codes)):
            if i in odd:
                out.append(dumps(odd[i]) + "\n")
            else:
                c = codes[i]
                sh = '"scope_hash":"' + hashes[6 * i:6 * i + 6].hex() + '",' if c & _HASHED else ""
                out.append(head + ids[i] + mid + sh + '"t":"event","to":"' + AGENT_VERDICTS[c & 0x7F] + '"}\n')
            if len(out) == batch:
                yield "".join(out)
                out = []
        if out:
            yield "".join(out)


class Records:
    """Lines to append, in order: lists of records, and a run's verdicts (`Verdicts`) — never made into
    70k dicts at once: each is made as it is read (iteration), and their text is written straight
    from what is held (`text`)."""

    __slots__ = ("parts",)

    def __init__(self, parts: List[Any]) -> None:
        self.parts = parts

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for part in self.parts:
            yield from part

    def __len__(self) -> int:
        return sum(len(part) for part in self.parts)

    def before_last(self, extra: List[Dict[str, Any]]) -> Records:
        """These lines with `extra` put just before the last one (a commit's seal; its last part is a list)."""
        last = self.parts[-1]
        return Records(self.parts[:-1] + [last[:-1], list(extra), last[-1:]])

    def text(self) -> Iterator[str]:
        """The canonical lines (`dumps(line) + "\\n"` each), several a piece."""
        for part in self.parts:
            if isinstance(part, Verdicts):
                yield from part.text()
            elif part:
                yield "".join(dumps(r) + "\n" for r in part)


def _held(x: Any, run: Optional[str]) -> Optional[Tuple[str, int, bytes]]:
    """(id, code, hash bytes) when `x` is exactly a line the door writes for `run`, plain; else None."""
    if type(x) is not dict or run is None or len(x) not in (6, 7):
        return None
    pid, to, sh = x.get("id"), x.get("to"), x.get("scope_hash")
    if (x.get("action") != "disposition" or x.get("by") != "agent" or x.get("t") != "event" or x.get("run") != run
            or type(pid) is not str or not _plain(pid) or type(to) is not str or to not in _CODE):
        return None
    if len(x) == 6:
        return pid, _CODE[to], b"\0" * 6
    if type(sh) is not str or not _hex12(sh):
        return None
    return pid, _CODE[to] | _HASHED, bytes.fromhex(sh)


def read_verdicts(blocks: Optional[Iterable[bytes]], run: str, known: Optional[Dict[str, Any]] = None
                  ) -> Tuple[Verdicts, Optional[List[int]]]:
    """A `dispositions.jsonl`, read from its bytes a block at a time, with its lines as
    `staging.read_numbered` reads them (blank lines skipped, a line that is no JSON kept as None), and
    the number of the line each stands on — None when every line is numbered by its place (no blank
    line). `known`: the fold's priors; an id found there is held as the fold's own string, so 70k ids
    are not held twice."""
    out = Verdicts(run)
    if blocks is None:
        return out, None
    lines = _Lines(out, known)
    tail = b""
    for block in blocks:
        data = tail + block
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        if cut:
            lines.read(data[:cut] if tail else data)
    lines.read(tail)
    return out, lines.numbers


class _Lines:
    """`read_verdicts`' reader of whole lines: those the door writes found by one pattern over a block
    (as Latin-1, one character a byte: only ASCII matches), any other parsed on its own."""

    __slots__ = ("out", "known", "numbers", "no", "find")

    def __init__(self, out: Verdicts, known: Optional[Dict[str, Any]]) -> None:
        self.out, self.known = out, known
        self.numbers: Optional[List[int]] = None
        self.no = 0  # lines read so far, blank ones too
        self.find: Any = None  # (the pattern, compiled for the first block worth it: a few lines are parsed one by one)

    def read(self, data: bytes) -> None:
        """Whole lines (each ended by a newline, but for the file's last)."""
        if not data:
            return
        out, known = self.out, self.known
        ids, codes, hashes = out.ids, out.codes, out.hashes
        to_code, unhex, zeros = _CODE, bytes.fromhex, b"\0" * 6
        pos = 0
        if self.find is None and out.run is not None and len(data) >= PATTERN_MIN:
            self.find = re.compile(
                '^{"action":"disposition","by":"agent","id":"(' + _PLAIN + ')","run":"' + re.escape(out.run)
                + '",(?:"scope_hash":"([0-9a-f]{12})",|)"t":"event","to":"(' + "|".join(AGENT_VERDICTS) + ')"}$',
                re.M).finditer
        for m in self.find(data.decode("latin-1")) if self.find is not None else ():
            if m.start() != pos:
                self.others(data[pos:m.start() - 1])
            pid, sh, to = m.group(1, 2, 3)
            if known is not None:
                p = known.get(pid)
                if p is not None:
                    pid = p.id
            ids.append(pid)
            if sh is None:
                codes.append(to_code[to])
                hashes += zeros
            else:
                codes.append(to_code[to] | _HASHED)
                hashes += unhex(sh)
            self.no += 1
            if self.numbers is not None:
                self.numbers.append(self.no)
            pos = m.end() + 1
        if pos < len(data):
            self.others(data[pos:len(data) - 1] if data.endswith(b"\n") else data[pos:])

    def others(self, data: bytes) -> None:
        """Lines no pattern took, one by one: blank ones skipped, each other parsed on its own."""
        out = self.out
        for raw in data.split(b"\n"):
            self.no += 1
            if not raw.strip():
                if self.numbers is None:
                    self.numbers = list(range(1, len(out) + 1))
                continue
            try:
                value = loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, JSONError):
                value = None
            got = _held(value, out.run)
            if got is None:
                out.odd[len(out.codes)] = value
                out.ids.append(None)
                out.codes.append(_ODD)
                out.hashes += b"\0" * 6
            else:  # (a line the door writes, in another spelling: held as the dict it parses to)
                p = self.known.get(got[0]) if self.known is not None else None
                out.ids.append(got[0] if p is None else p.id)
                out.codes.append(got[1])
                out.hashes += got[2]
            if self.numbers is not None:
                self.numbers.append(self.no)
