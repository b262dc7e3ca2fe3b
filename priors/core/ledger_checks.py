"""Ledger soundness as pure checks: bytes in, problems out (what `priors verify` reports).

One pass reads the ledger a megabyte at a time and keeps no parsed record: each line is read
once, found canonical (or not), held to the rules, and — when `verify` asks — folded into the
rows `PRIORS.md` must hold. The common sound prior or event takes the quick way (`ledger_quick`:
matched as canonical text, or parsed and read by its keys' places, its canonical form proved by
its length); anything else takes the strict way (`ledger_rules`), which is the reference and says
every message. `check_ledger(..., strict=True)` runs every line the strict way: a property test
holds the two to the same answer.
"""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple, Union

from priors.core.canonical import (
    JSONError,
    c_encoder,
    dumps,
    fast_dumps,
    has_high_char,
    loads,
    plainly_writable,
    proves_canonical,
    reject_constant,
    too_large,
)
from priors.core.errors import UsageError
from priors.core.fold import fold, parse_lines
from priors.core.ledger_parse import whole_line_pieces
from priors.core.ledger_quick import EVENT_LINE, PRIOR_LINE, QuickChecker, Shape, facets_verdict
from priors.core.ledger_rules import REDACTED_CALL_KEYS, TOMBSTONE_KEYS  # noqa: F401 (re-exported)
from priors.core.problem import LEDGER_NAME, Problem  # noqa: F401 (re-exported)
from priors.core.views import REDACTED_ROW, markdown_lines, render_markdown, row_line, row_parts, row_plain, table_cell
from priors.core.vocabulary import BINDING, MAX_DEPTH, PERSON_STATUSES, REST_AFTER

# ------------------------------------------------------------------ splitting and parsing


def parse_line(raw: bytes) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """(object, None) or (None, why it is not one JSON object in UTF-8)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    if text.startswith(("<<<<<<<", "=======", ">>>>>>>", "|||||||")):
        return None, "a merge-conflict marker"
    try:
        obj = loads(text)
    except JSONError as exc:
        return None, f"not JSON ({exc})"
    except RecursionError:
        return None, "not JSON (nested too deeply)"
    if not isinstance(obj, dict):
        return None, f"a JSON {_json_kind(obj)}, not an object"
    return obj, None


def _json_kind(obj: Any) -> str:
    if isinstance(obj, list):
        return "array"
    if isinstance(obj, str):
        return "string"
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "boolean"
    return "number"


def check(data: bytes) -> Tuple[List[Problem], List[Problem]]:
    """(problems, warnings) for ledger bytes. Pure; never raises on bad input."""
    checked = check_ledger(data)
    return checked.problems, checked.warnings


@dataclass
class Checked:
    """What one pass over the ledger found: problems, warnings, the runs it saw committed, and
    (when asked for) what `PRIORS.md` must hold."""

    problems: List[Problem]
    warnings: List[Problem]
    damaged: bool  # some non-blank line is not one JSON object (the fold would refuse the ledger)
    lines: int
    committed: Set[str]  # every run a commit record names (sound or not)
    table: Optional["_Table"] = None  # PRIORS.md's rows, kept by the quick pass
    expected: Optional[bytes] = None  # PRIORS.md in full, from the strict pass
    named: FrozenSet[str] = frozenset()  # the priors a line other than their own block's names (`names_priors`)

    def committed_runs(self) -> Set[str]:
        return self.committed

    def renders_as(self, have: bytes) -> Optional[bool]:
        """Whether `have` is what `priors render` writes for this ledger; None when that cannot be
        worked out (a damaged line: the fold refuses the ledger) or was not asked for."""
        if self.damaged:
            return None
        if self.table is not None:
            return self.table.matches(have)
        return None if self.expected is None else have == self.expected


def check_ledger(data: Union[bytes, Iterable[bytes]], render: bool = False, strict: bool = False) -> Checked:
    """`check`, parsing each line once and keeping no parsed record. `data`: the ledger's bytes, or
    its bytes in pieces as they are read (then the ledger is never held whole). `render`: also work
    out what `PRIORS.md` must hold (`Checked.renders_as`).

    `strict`: every line the plain way — a parse per line, the canonical text encoded in full, every
    record by its strict rule, `PRIORS.md` from a fold of every record (so `data` must be bytes).
    The reference the quick way is held to (a property test); same answer, several times slower."""
    run = _Pass(render and not strict)
    collecting = gc.isenabled()
    gc.disable()  # hundreds of thousands of short-lived acyclic objects: collections would only cost time
    try:
        for lines, high, escapes, bare in _blocks(data, run):
            if strict:
                for line in lines:
                    run.strict(line if type(line) is bytes else line.encode("utf-8"))
            else:
                run.block(lines, high, escapes, bare)
    finally:
        if collecting:
            gc.enable()
    ck = run.ck
    if run.unterminated:
        ck.add(run.no, "NO_FINAL_NEWLINE", "the ledger does not end with a newline")
    ck.finish()
    ck.problems.sort(key=lambda p: p.line)
    checked = Checked(ck.problems, ck.warnings, run.damaged, run.no, run.committed, run.table,
                      named=frozenset(run.named))
    if render and strict and not run.damaged:
        checked.expected = render_expected(data)  # type: ignore[arg-type]  # strict: `data` is bytes (see above)
    return checked


def _blocks(data: Union[bytes, Iterable[bytes]], run: "_Pass") -> Iterator[Tuple[List[Any], bool, bool, bool]]:
    """The ledger's lines as `split_lines` cuts them, a block at a time: text where the block is
    UTF-8 (nearly always), bytes where it is not; with whether the block may hold a character at or
    above U+D800, whether it holds a backslash (an escape) at all, and whether it is bare text (UTF-8
    with no backslash and no control character but the newlines: its strings are written as they
    read). Notes on `run` whether the last line lacks its newline."""
    for chunk in whole_line_pieces(data):
        try:
            lines: List[Any] = chunk.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            lines = chunk.split(b"\n")
        run.unterminated = not chunk.endswith(b"\n")
        if not run.unterminated:
            lines.pop()
        escapes = b"\\" in chunk
        odd = chunk.translate(None, _USUAL)  # its control characters and the lead bytes of high ones
        newlines = len(lines) - run.unterminated
        if len(odd) == newlines:  # (the common case: only the newlines)
            high, bare = False, not escapes and type(lines[0]) is str
        else:
            high = len(odd.translate(None, _CONTROLS)) > 0
            bare = not escapes and type(lines[0]) is str and len(odd.translate(None, _HIGH_LEADS)) == newlines
        yield lines, high, escapes, bare


# What a block is mostly made of: deleted from it, they leave its control characters (its newlines, in
# a bare block) and the lead bytes of UTF-8 characters at or above U+D000 — a block without those
# holds no character at or above U+D800 (whose JavaScript key order and escaping differ), so none of
# its lines needs the search for one.
_USUAL = bytes(range(0x20, 0xED))
_CONTROLS = bytes(range(0x20))
_HIGH_LEADS = bytes(range(0xED, 0x100))


class _Pass:
    """One walk over the ledger's lines, in order: `block` takes the quick way where it can, `strict`
    the plain way (the reference for every step of `block`)."""

    def __init__(self, render: bool) -> None:

        odd: List[str] = []  # a float, or a whole number too large to stay exact, in the current line
        self.odd = odd

        def note_float(text: str) -> float:
            odd.append(text)
            return float(text)

        def note_int(text: str) -> int:
            number = int(text)
            if too_large(number):
                odd.append(text)
            return number

        decoder = json.JSONDecoder(parse_constant=reject_constant, parse_float=note_float, parse_int=note_int)
        self.decode, self.scan = decoder.decode, decoder.scan_once  # type: ignore[attr-defined]  # as in ledger_parse.scanner
        self.encode = c_encoder()
        self.ck = QuickChecker()
        self.table: Optional[_Table] = _Table() if render else None
        self.rows = None if self.table is None else self.table.rows
        self.committed: Set[str] = set()
        self.named: Set[str] = set()  # see `names_priors`
        self.shapes: Dict[Tuple[str, ...], Shape] = {}
        self.scopes: Dict[str, str] = {}  # canonical text of a facets set found sound -> its scope
        self.damaged = False
        self.unterminated = False  # the last line has no newline
        self.no = 0

    def block(self, lines: List[Any], high: bool, escapes: bool, bare: bool) -> None:
        """Lines in order, each the quick way when it is one JSON object alone on its line (else the
        strict way). One function, for speed: this runs for every line."""
        scan, odd, shapes = self.scan, self.odd, self.shapes
        no = self.no
        for line in lines:
            if bare:  # the common lines, read as text: no parse at all
                if line.startswith('{"action":"'):
                    m = EVENT_LINE(line)
                    if m is not None and self.event_text(no + 1, m.groups()):
                        no += 1
                        continue
                elif line.startswith('{"born":"'):
                    m = PRIOR_LINE(line)
                    if m is not None and self.prior_text(no + 1, m.groups()):
                        no += 1
                        continue
            rec = None
            if type(line) is str and line.startswith("{") and line.endswith("}"):
                if odd:
                    odd.clear()
                try:
                    rec, end = scan(line, 0)
                except (StopIteration, ValueError, RecursionError):
                    end = -1
                if end != len(line) or type(rec) is not dict:
                    rec = None
            if rec is None:  # not one object alone on its line: the strict parse names what it is
                self.no = no
                self.strict(line if type(line) is bytes else line.encode("utf-8"))
                no = self.no
                continue
            no += 1
            names_priors(rec, self.named)
            keys = tuple(rec)
            shape = shapes.get(keys)
            if shape is None:
                shape = self.shape(keys)
            kind = shape.kind
            if odd or kind is None or not (self.event_line(no, rec, line, shape, high, escapes) if kind == "event"
                                           else self.prior_line(no, rec, line, shape, high, escapes)):
                self.parsed(no, rec, line, high, escapes)
        self.no = no

    # A prior or event line of strings (a prior's facets an object of them, its review_every a number)
    # is checked from its values by their places in its shape: the canonical text proved by its length,
    # the rules' fast way, PRIORS.md's row. False, having done nothing: not such a line.

    def event_text(self, no: int, fields: Tuple[Any, ...]) -> bool:
        """An event line `EVENT_LINE` matched: canonical, its values its groups."""
        action, by, pid, reason, run, to = fields
        if not self.ck.sound_event(no, pid, action, by, to, run, reason):
            return False
        if names_its_prior(action, to):
            self.named.add(pid)
        if self.rows is not None:
            row = self.rows.get(pid)
            if row is not None:
                if action == "disposition" and row[3] not in BINDING:  # `_Table.event`, its common case inline
                    row[3] = "open" if to == "still-open" or to == "reaffirmed" or to is None else to
                    row[4] = 0
                else:
                    _Table.event(row, action, to)
        return True

    def prior_text(self, no: int, fields: Tuple[Any, ...]) -> bool:
        """A prior line `PRIOR_LINE` matched: canonical, its values its groups, its facets one of the
        sets already found sound (else the line is parsed)."""
        scope = self.scopes.get(fields[4])
        if scope is None:
            return False
        pid, parts = fields[5], None
        if self.rows is not None:
            ref = fields[8]
            parts = row_plain(pid, fields[6], fields[10], scope if ref is None else ref, fields[1])
            if parts is None:
                return False  # a cell to escape: the parsed way has the record `row_parts` reads
        if not self.ck.text_prior(no, fields, scope, parts is not None):
            return False
        if parts is not None:
            self.table.put(pid, parts, "open")  # type: ignore[union-attr]  # `parts` only with a table
        return True

    def event_line(self, no: int, rec: Dict[str, Any], line: str, shape: Shape, high: bool, escapes: bool) -> bool:
        vals = tuple(rec.values())
        try:
            strings = len("".join(vals))
        except TypeError:
            return False  # a value that is not a string
        ck = self.ck
        if not self.proved(line, shape.size, strings, high, escapes) and not self.encoded(rec, line, high) \
                and not _canonical(rec, line, self.odd, line.encode("utf-8")):
            ck.add(no, "NOT_CANONICAL", _NOT_CANONICAL)
        plain = not (escapes and "\\u" in line)  # strings, no float: only an escape could be bad
        if not (plain and ck.quick_event(no, shape, vals)):
            ck.record(no, rec, plain)
        if vals[shape.t] != "event":
            self.keep(rec)  # shaped like an event, but says it is something else
        elif self.rows is not None:
            row = self.rows.get(vals[shape.id])
            if row is not None:
                to = vals[shape.to] if shape.to >= 0 else None
                if vals[shape.action] == "disposition" and row[3] not in BINDING:  # `_Table.event`, its common case inline
                    row[3] = "open" if to == "still-open" or to == "reaffirmed" or to is None else to
                    row[4] = 0
                else:
                    _Table.event(row, vals[shape.action], to, rec.get("from"))  # (a `moved` event's old ref)
        return True

    def prior_line(self, no: int, rec: Dict[str, Any], line: str, shape: Shape, high: bool, escapes: bool) -> bool:
        vals = list(rec.values())
        verdict = facets_verdict(vals[shape.facets])
        if verdict is None:
            return False
        if verdict[2] not in self.scopes and len(self.scopes) < _SHAPES_MAX:
            self.scopes[verdict[2]] = verdict[0]  # a line with these facets is read as text from now on
        scope, extra = verdict[0], verdict[1] - 2  # the facets' text, where a string would have had two quotes
        vals[shape.facets] = ""
        if shape.review_every >= 0:
            every = vals[shape.review_every]
            if type(every) is not int or every < 1 or too_large(every):
                return False
            vals[shape.review_every] = ""
            extra += len(str(every)) - 2
        try:
            strings = len("".join(vals))
        except TypeError:
            return False  # a value that is not a string
        ck = self.ck
        if not self.proved(line, shape.size, strings + extra, high, escapes) and not self.encoded(rec, line, high) \
                and not _canonical(rec, line, self.odd, line.encode("utf-8")):
            ck.add(no, "NOT_CANONICAL", _NOT_CANONICAL)
        plain = not (escapes and "\\u" in line)  # strings, nested at most twice, no float: only an escape could be bad
        pid, parts = vals[shape.id], None
        if plain and self.rows is not None:
            parts = row_plain(pid, vals[shape.ns], vals[shape.type], vals[shape.scope_ref] if shape.scope_ref >= 0 else scope,
                              vals[shape.claim])
        if plain and ck.quick_prior(no, shape, vals, scope, parts is not None):
            if self.table is not None:  # (there are rows exactly when there is a table)
                self.table.put(pid, parts or row_parts(pid, rec), "open")
            return True
        ck.record(no, rec, plain)
        self.keep(rec)
        return True

    @staticmethod
    def proved(line: str, size: int, strings: int, high: bool, escapes: bool) -> bool:
        """`line` is canonical, proved by its length: its shape's `size` (negative: keys out of order)
        and the length of its strings make the length of the canonical text of what it parsed to. With
        no escape and no character at or above U+D800, no text of those values is shorter than the
        canonical one, and only the canonical one has exactly its length (`canonical.proves_canonical`)."""
        return size >= 0 and size + strings == len(line) and not (escapes and "\\" in line) \
            and (not high or not has_high_char(line))

    def encoded(self, rec: Dict[str, Any], line: str, high: bool) -> bool:
        """`line` is the C encoder's text of `rec` (its canonical text, when `rec` holds no float and
        `line` no character at or above U+D800): the encoder built once, not once per line."""
        if self.odd or self.encode is None or (high and has_high_char(line)):
            return False
        try:
            return "".join(self.encode(rec, 0)) == line
        except (TypeError, ValueError):
            return False

    def parsed(self, no: int, rec: Dict[str, Any], line: str, high: bool, escapes: bool) -> None:
        """Any other line that parsed alone: canonical as `strict` decides it (proved by lengths for an
        object of strings, else encoded), then the strict rules."""
        ck = self.ck
        if self.odd or (escapes and "\\" in line) or (high and has_high_char(line)) or not proves_canonical(rec, line):
            if not self.encoded(rec, line, high) and not _canonical(rec, line, self.odd, line.encode("utf-8")):
                ck.add(no, "NOT_CANONICAL", _NOT_CANONICAL)
        plain = not self.odd and not (escapes and "\\u" in line) and line.count("{") + line.count("[") <= MAX_DEPTH
        ck.record(no, rec, plain)
        self.keep(rec)

    def shape(self, keys: Tuple[str, ...]) -> Shape:
        shape = Shape(keys)
        if len(self.shapes) < _SHAPES_MAX:
            self.shapes[keys] = shape
        return shape

    def strict(self, raw: bytes) -> None:
        """One line the plain way."""
        self.no = no = self.no + 1
        ck = self.ck
        if raw.endswith(b"\r"):
            ck.add(no, "NOT_CANONICAL", "line ends with CR (\\r\\n); the ledger uses \\n only")
            raw = raw[:-1]
        if not raw.strip():
            ck.add(no, "BLANK_LINE", "blank line")
            return
        self.odd.clear()
        rec, why, text = _parse_once(raw, self.decode)
        if rec is None:
            self.damaged = True
            self.table = self.rows = None  # the fold refuses a damaged ledger: nothing to render
            ck.add(no, "DAMAGED_LINE", f"not one JSON object in UTF-8: {why}")
            return
        if not _canonical(rec, text, self.odd, raw):
            ck.add(no, "NOT_CANONICAL", _NOT_CANONICAL)
        names_priors(rec, self.named)
        ck.record(no, rec, not self.odd and plainly_writable(text, MAX_DEPTH))
        self.keep(rec)

    def keep(self, rec: Dict[str, Any]) -> None:
        """What later checks need of a line the rules took the strict way: the runs committed, and
        PRIORS.md's rows (as the fold moves them)."""
        t = rec.get("t")
        run, pid = rec.get("run"), rec.get("id")
        if t == "run" and rec.get("action") == "commit" and isinstance(run, str):
            self.committed.add(run)
        elif self.table is not None and isinstance(pid, str):
            if t == "prior":
                self.table.put(pid, row_parts(pid, rec), "redacted" if rec.get("redacted") is True else "open")
            elif t == "event":
                row = self.table.rows.get(pid)
                if row is not None:
                    self.table.event(row, rec.get("action"), rec.get("to"), rec.get("from"))


_SHAPES_MAX = 1024  # distinct key sets remembered; a ledger holds a few dozen


_NOT_CANONICAL = "not canonical JSON (keys sorted, no spaces, UTF-8 not \\u escapes)"


def names_its_prior(action: Any, to: Any) -> bool:
    """Whether an event of `action` (to status `to`) names its prior for every half of a split replay
    (`names_priors`): a person's decision or redaction, or an agent's verdict giving a person's status."""
    return action == "decide" or action == "redact" or (action == "disposition" and to in PERSON_STATUSES)


def names_priors(rec: Dict[str, Any], into: Set[str]) -> None:
    """Add to `into` the priors `rec` names as a line other than their own block's can: a person's
    decision or redaction its own — and an agent's verdict giving a person's status (forged: the door
    refuses it, and the fold still holds it, hostile pass 27au) —, `same_as`, `supersedes` and every id
    of `distinct_from`: the priors each half of verify's split replay must fold whatever their namespace
    (core/replay_split.py)."""
    if rec.get("t") == "event" and names_its_prior(rec.get("action"), rec.get("to")) and type(rec.get("id")) is str:
        into.add(rec["id"])
    for key in ("same_as", "supersedes"):
        value = rec.get(key)
        if type(value) is str:
            into.add(value)
    others = rec.get("distinct_from")
    if type(others) is list:
        into.update(x for x in others if type(x) is str)


def _canonical(rec: Dict[str, Any], text: str, odd: List[str], raw: bytes) -> bool:
    if not odd and not has_high_char(text):  # then the canonical text is the C encoder's
        try:
            if fast_dumps(rec) == text:
                return True
        except (TypeError, ValueError):
            pass
    try:
        canon = dumps(rec).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):
        canon = b""
    return canon == raw


def _parse_once(raw: bytes, decode: Any) -> Tuple[Optional[Dict[str, Any]], Optional[str], str]:
    """`parse_line` with the given decoder (which notes odd_numbers), also returning the decoded text."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not valid UTF-8", ""
    if text.startswith(("<<<<<<<", "=======", ">>>>>>>", "|||||||")):
        return None, "a merge-conflict marker", text
    try:
        obj = decode(text)
    except RecursionError:
        return None, "not JSON (nested too deeply)", text
    except JSONError as exc:
        return None, f"not JSON ({exc})", text
    except ValueError as exc:
        return None, f"not JSON ({JSONError(str(exc))})", text
    if not isinstance(obj, dict):
        return None, f"a JSON {_json_kind(obj)}, not an object", text
    return obj, None, text


class _Table:
    """`PRIORS.md`'s rows kept current line by line, as `views.render_markdown(fold(records))` writes
    them, without keeping the records: per prior (in the order the fold keeps), its row without the
    status (`views.row_parts`, as UTF-8: half the memory of text holding a dash), and the status and
    scope-missing streak the fold's events give it."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        # id -> [row up to its status, row after it with its newline, length of `| id | area | `, status, streak]
        self.rows: Dict[str, List[Any]] = {}

    def put(self, pid: str, parts: Tuple[str, str, str], status: str) -> None:
        pre, kind, tail = parts
        self.rows[pid] = [(pre + kind).encode("utf-8"), (tail + "\n").encode("utf-8"),
                          len(pre) if pre.isascii() else len(pre.encode("utf-8")), status, 0]

    @staticmethod
    def event(row: List[Any], action: Any, to: Any, was: Any = None) -> None:
        """What an event of the prior does to its row: `fold._apply_event`, for the fields the table shows
        (a `moved` event: its `where`, from `was` to `to`)."""
        if action == "scope-missing":
            row[4] += 1
        elif action == "disposition":
            if row[3] in BINDING:
                return  # a person's binding decision is absolute: no agent verdict moves it
            row[4] = 0
            row[3] = "open" if to in ("still-open", "reaffirmed") else to if isinstance(to, str) else "open"
        elif action == "decide":
            row[4] = 0
            row[3] = "open" if to == "reopen" else "accepted" if to == "keep" else to if isinstance(to, str) else "open"
        elif action == "redact":
            row[3] = "redacted"
        elif action == "moved" and isinstance(to, str) and isinstance(was, str) and row[3] != "redacted":
            head = f" | {table_cell(was)} | ".encode("utf-8")
            if row[1].startswith(head):
                row[1] = f" | {table_cell(to)} | ".encode("utf-8") + row[1][len(head):]

    def matches(self, have: bytes) -> bool:
        """`have` is exactly what these rows render to (compared a thousand rows at a time, as they
        are made: the whole text is never held)."""
        head = "".join(line + "\n" for line in markdown_lines(bool(self.rows), ())).encode("utf-8")
        if not have.startswith(head):
            return False
        at, batch = len(head), []
        redacted = (REDACTED_ROW + "\n").encode("utf-8")
        middles: Dict[str, bytes] = {}  # status -> ` | status` as its cell shows it (a handful of statuses)
        for start, end, cut, status, streak in self.rows.values():
            if status == "redacted":
                batch.append(start[:cut] + redacted)
            else:
                if streak >= REST_AFTER and status not in BINDING:
                    status = "resting"
                middle = middles.get(status)
                if middle is None:
                    middle = middles[status] = row_line(("", "", ""), status).encode("utf-8")
                batch.append(start + middle + end)
            if len(batch) == 1000:
                chunk = b"".join(batch)
                if not have.startswith(chunk, at):
                    return False
                at += len(chunk)
                batch.clear()
        chunk = b"".join(batch)
        return have.startswith(chunk, at) and at + len(chunk) == len(have)


def render_expected(data: bytes, records: Optional[List[Dict[str, Any]]] = None) -> Optional[bytes]:
    """What `priors render` would write for this ledger; None when it cannot be computed (damage).
    `records`: the ledger already parsed (by `check_ledger`, when no line is damaged)."""
    try:
        if records is None:
            records = parse_lines(data)
        return render_markdown(fold(records)).encode("utf-8")
    except (UsageError, ValueError, TypeError):
        return None
