"""Ledger bytes into records: the clean parse, a block of lines at a time, and the strict one
that names a bad line.

The keeper writes each record as one line of canonical JSON, so the clean parse decodes a block
of lines as one string, object after object, and checks that each object is exactly its line.
Anything else — a blank line, CRLF, a missing final newline, bad UTF-8, NaN — is a deviation:
the strict parse then decides, line by line, and either accepts the line (blank lines) or names
it in a `DamagedLedger`. A property test holds both to the same records and byte offsets.
"""

from __future__ import annotations

import json
import re
from itertools import chain

from priors.core.canonical import JSONError, loads, reject_constant
from priors.core.errors import DamagedLedger

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

LEDGER_NAME = ".priors/ledger.jsonl"
BLOCK = 1 << 20  # the clean parse decodes the ledger a block of about this many bytes at a time

# A JSON string in a block of the ledger that holds no backslash and no control character: written
# without an escape, its text is its value (and its canonical form).
_S = '"([^"]*)"'
_ANY = '"[^"]*"'  # the same, for a value no rule reads
# The canonical lines of the common events and priors — each key once, in sorted order, no space, no
# escape — with every value captured: in such a block, a line these match is JSON and needs no parse
# (but for a prior's facets object, whose text is only bracketed here). What the values must be (ids,
# verdicts, a known facets set) is for the code that reads the match: verify's line checks
# (core/ledger_quick.py, as text) and a half of its replay (core/replay_split.py, as bytes).
EVENT_TEXT = ('{"action":' + _S + '(?:,"by":' + _S + ')?,"id":' + _S + '(?:,"reason":' + _S + ')?(?:,"run":' + _S
              + ')?(?:,"scope_hash":' + _ANY + ')?,"t":"event"(?:,"to":' + _S + ')?}')
PRIOR_TEXT = ('{"born":' + _S + ',"claim":' + _S + '(?:,"depth":' + _S + ')?(?:,"direction":' + _S + ')?(?:,"evidence":'
              + _ANY + ')?,"facets":({[^{}]*}),"id":' + _S + ',"ns":' + _S + '(?:,"review_every":[1-9][0-9]{0,14})?'
              '(?:,"scope_hash":' + _S + ')?(?:,"scope_ref":' + _S + ')?(?:,"severity":' + _S + ')?,"t":"prior","type":'
              + _S + '}')


# ------------------------------------------------------------------ a prior's line, read without decoding it
#
# Most ledger bytes are priors' lines, whose claim and evidence the fold never reads: a line in the shape the keeper
# writes (canonical JSON, sorted keys, plain values) is matched as text, no dict built; any other line is decoded
# (core/fold.py). A property test holds the two ways to the same folded state on any ledger.

_CH = r'[^"\\\x00-\x1f]'  # a character JSON writes as itself inside a string
_STR = '"' + _CH + r'*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})' + _CH + '*)*"'  # any JSON string
_PLAIN = '"(' + _CH + '*)"'  # a string written without an escape: its text is its value
_PAIR = '"' + _CH + '*":"' + _CH + '*"'
# In a block with no backslash and no control character but its newlines, any run of characters
# but the quote is a JSON string as it is written: the same shapes, matched faster.
_BARE = ('"[^"]*"', '"([^"]*)"', '"[^"]*":"[^"]*"')
SHAPE_CARE = bytes(c for c in range(0x20) if c != 0x0A) + b"\\"  # a byte that calls for the full shapes


def _prior_shape(string: str, plain: str, pair: str) -> str:
    """A prior's line in the shape the keeper writes, its keys in sorted order; the fold reads its
    born, facets, id, ns, redacted, review_every, scope_hash and scope_ref.

    Each optional key is `(?:…|)` rather than `(?:…)?`, and the quote before a key is matched by the
    separator before it: `re` runs an alternative with an empty branch without the bookkeeping of a
    repeat, and a branch whose first letter differs is skipped at once (a quarter less matching)."""
    return (r'\{"(?:born":' + plain + ',"|)(?:claim":' + string + ',"|)(?:content_hash":' + string + ',"|)'
            '(?:depth":' + string + ',"|)(?:direction":' + string + ',"|)(?:evidence":' + string + ',"|)'
            r'(?:facets":(\{(?:' + pair + '(?:,' + pair + r')*|)\}),"|)id":' + plain + ',"(?:ns":' + plain + ',"|)'
            '(?:redacted":(true),"|)(?:review_every":(0|[1-9][0-9]{0,17}),"|)(?:scope_hash":' + plain + ',"|)'
            '(?:scope_ref":' + plain + ',"|)(?:severity":' + string + ',"|)(?:supersedes":' + string + ',"|)'
            't":"prior"(?:,"type":' + string + r'|)\}')


def _event_shape(string: str, plain: str) -> str:
    """An event's line; the fold reads its action, id, run, scope_hash and to."""
    return (r'\{"action":' + plain + ',"(?:by":' + string + ',"|)id":' + plain + ',"(?:reason":' + string + ',"|)'
            '(?:run":' + plain + ',"|)(?:scope_hash":' + plain + ',"|)t":"event"(?:,"to":' + plain + r'|)\}')


_SHAPES: Dict[bool, Tuple[Any, Any]] = {}


def line_shapes(bare: bool) -> Tuple[Any, Any]:
    """(prior line, event line) `fullmatch`es — the bare shapes for a block with no byte of
    `SHAPE_CARE` — compiled once per process, by a first call only (~2 ms no other call needs)."""
    got = _SHAPES.get(bare)
    if got is None:
        string, plain, pair = _BARE if bare else (_STR, _PLAIN, _PAIR)
        got = _SHAPES[bare] = (re.compile(_prior_shape(string, plain, pair)).fullmatch,
                                 re.compile(_event_shape(string, plain)).fullmatch)
    return got


def parse_lines(data: bytes, name: str = LEDGER_NAME) -> List[Dict[str, Any]]:
    """Each non-blank line must be one JSON object in UTF-8; anything else names its line.

    The clean parse without the byte offsets (`parse_spans`): the timeline readers (show,
    history, reflect) never use them."""
    out: List[Dict[str, Any]] = []
    scan = scanner()
    if each_block(blocks_of(data), lambda block, _start: _scan_records(block, scan, out.append)):
        return out
    return [rec for rec, _at, _n in parse_strict(data, name)]


def parse_spans(data: bytes, name: str = LEDGER_NAME, first_line: int = 1) -> List[Tuple[Dict[str, Any], int, int]]:
    """(record, byte offset, byte length) of each record line — the line without its newline.

    The clean parse first; on any deviation the strict line-by-line parse decides and names the
    line (counting from `first_line`, for a tail whose earlier lines were checked already)."""
    out: List[Tuple[Dict[str, Any], int, int]] = []
    if each_clean(data, lambda rec, at, n: out.append((rec, at, n))):
        return out
    return parse_strict(data, name, first_line)


def blocks_of(data: bytes) -> Iterator[Tuple[bytes, int]]:
    """The ledger a block of whole lines at a time (about BLOCK bytes), with each block's offset;
    ValueError for a ledger without its final newline, which only the strict parse accepts."""
    start, n = 0, len(data)
    while start < n:
        end = data.find(b"\n", min(start + BLOCK, n - 1))
        if end < 0:
            raise ValueError("no final newline")
        yield data[start:end + 1], start
        start = end + 1


def each_block(blocks: Iterable[Tuple[bytes, int]], each: Callable[[bytes, int], bool]) -> bool:
    """Hand `each(block, offset)` the ledger's blocks of whole lines (`blocks_of`, or read from a
    file); False as soon as one returns False, the decoding fails or the blocks do (ValueError:
    no final newline, a short read) — what was handed over is then to be discarded."""
    try:
        for block, start in blocks:
            if not each(block, start):
                return False
    except (ValueError, RecursionError, StopIteration):  # UnicodeDecodeError is a ValueError
        return False
    return True


def each_clean(data: bytes, sink: Callable[[Dict[str, Any], int, int], None]) -> bool:
    """Hand `sink(record, offset, length)` each line's object; False at the first deviation (a
    line that is not exactly one JSON object, a missing final newline, bad UTF-8, NaN, ...)."""
    scan = scanner()
    return each_block(blocks_of(data), lambda block, start: _scan_block(block, scan, sink, start))


def scanner() -> Any:
    """The json module's C scanner, called directly: `scan(text, i)` → (object, end), or
    StopIteration when no value starts at `i`. NaN and the infinities are refused, as
    `canonical.loads` refuses them."""

    return json.JSONDecoder(parse_constant=reject_constant).scan_once  # type: ignore[attr-defined]  # set in __init__, not in typeshed


def lines_of(block: bytes) -> Tuple[str, Any]:
    """The block as text, and — when some text is not ASCII, so characters and bytes differ — the
    block's own `find`: a line's byte offset and length then come from the next newline in the bytes
    (a cursor beside the text's; splitting the block into lines cost ~3x as much)."""
    text = block.decode("utf-8")
    return text, None if len(text) == len(block) else block.find


def _scan_block(block: bytes, scan: Any, sink: Any, base: int) -> bool:
    """Object after object, each followed at once by its newline. A clean line holds no newline
    inside, so the k-th object is the k-th line of the bytes."""
    text, bfind = lines_of(block)
    find = text.find
    i, n, b = 0, len(text), 0
    while i < n:
        j = find("\n", i)  # (the block ends with one)
        if text[i] != "{":
            return False
        obj, e = scan(text, i)
        if e != j or type(obj) is not dict:
            return False
        if bfind is None:
            sink(obj, base + i, j - i)
        else:
            e = bfind(b"\n", b)
            sink(obj, base + b, e - b)
            b = e + 1
        i = j + 1
    return True


def _scan_records(block: bytes, scan: Any, append: Any) -> bool:
    """`_scan_block` for a reader that keeps only the records (no offsets, no call per line)."""
    text = block.decode("utf-8")
    find = text.find
    i, n = 0, len(text)
    while i < n:
        j = find("\n", i)
        if text[i] != "{":
            return False
        obj, e = scan(text, i)
        if e != j or type(obj) is not dict:
            return False
        append(obj)
        i = j + 1
    return True


def parse_strict(data: bytes, name: str, first_line: int = 1) -> List[Tuple[Dict[str, Any], int, int]]:
    """Line by line: blank lines are skipped; the first line that is not one JSON object in UTF-8
    raises DamagedLedger naming it."""
    return list(strict_spans([data], name, first_line))


def strict_spans(pieces: Iterable[bytes], name: str, first_line: int = 1) -> Iterator[Tuple[Dict[str, Any], int, int]]:
    """`parse_strict` of the ledger handed over in pieces of whole lines (the last may lack its final
    newline: `whole_line_pieces`), one record at a time (`strict_lists`, flattened)."""
    return chain.from_iterable(strict_lists(pieces, name, first_line))


def strict_lists(pieces: Iterable[bytes], name: str, first_line: int = 1) -> Iterator[List[Tuple[Dict[str, Any], int, int]]]:
    """`parse_strict` a piece at a time — each piece's (record, offset, length) as one list — for a
    reader that keeps none of them: it never holds the ledger's records whole. DamagedLedger at the
    first bad line, after the pieces before it."""
    no, at = first_line - 1, 0
    for piece in pieces:
        lines = piece.split(b"\n")
        if piece.endswith(b"\n"):
            lines.pop()  # (no line after the last newline of a piece; after the whole ledger's, a blank one)
        out = []
        for raw in lines:
            no += 1
            here, at = at, at + len(raw) + 1
            if raw.strip():
                out.append((_strict_line(raw, name, no), here, len(raw)))
        yield out


def _strict_line(raw: bytes, name: str, no: int) -> Dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DamagedLedger(
            f"priors: {name} line {no}: not valid UTF-8 — the ledger is damaged; nothing was written") from None
    try:
        obj = loads(text)
    except JSONError as exc:
        hint = " (a merge-conflict marker?)" if text.startswith(("<<<<<<<", "=======", ">>>>>>>")) else ""
        raise DamagedLedger(
            f"priors: {name} line {no}: not one JSON object{hint}: {exc} — the ledger is damaged; nothing was written"
        ) from None
    if not isinstance(obj, dict):
        raise DamagedLedger(f"priors: {name} line {no}: a JSON {type(obj).__name__}, not an object"
                            " — the ledger is damaged; nothing was written")
    return obj


class Deviation(Exception):
    """The ledger strayed from the clean form (a blank line, CRLF, no final newline, damage) while
    `clean_spans` read it: the reader starts over on `strict_spans`, which decides."""


def clean_spans(blocks: Iterable[Tuple[bytes, int]]) -> Iterator[Tuple[Dict[str, Any], int, int]]:
    """`each_clean` one record at a time — (record, byte offset, byte length) — for a reader that keeps
    none (`clean_lists`, flattened)."""
    return chain.from_iterable(clean_lists(blocks))


def clean_lists(blocks: Iterable[Tuple[bytes, int]]) -> Iterator[List[Tuple[Dict[str, Any], int, int]]]:
    """`each_clean` a block at a time: each block's (record, byte offset, byte length) as one list —
    the ledger handed over a block of whole lines at a time (`blocks_of`, or read from a file), a
    block's records held at most (flattened by `itertools.chain`: no call a record). Deviation at the
    first departure from the clean form: what was handed over is then to be discarded."""
    scan = scanner()
    for block, base in blocks_read(blocks):
        try:
            out = _span_block(block, base, scan)
        except (ValueError, RecursionError, StopIteration):  # (as `each_block`: UnicodeDecodeError is a ValueError)
            out = None
        if out is None:
            raise Deviation()
        yield out


def blocks_read(blocks: Iterable[Tuple[bytes, int]]) -> Iterator[Tuple[bytes, int]]:
    """`blocks` as they are read; a reading that fails (ValueError: no final newline, a short read)
    is a Deviation."""
    it = iter(blocks)
    while True:
        try:
            got = next(it, None)
        except ValueError:
            raise Deviation() from None
        if got is None:
            return
        yield got


def _span_block(block: bytes, base: int, scan: Any) -> Optional[List[Tuple[Dict[str, Any], int, int]]]:
    """`_scan_block` into a list of spans (None at a deviation)."""
    text, bfind = lines_of(block)
    find = text.find
    out: List[Tuple[Dict[str, Any], int, int]] = []
    add = out.append
    i, n, b = 0, len(text), 0
    while i < n:
        j = find("\n", i)  # (the block ends with one)
        if text[i] != "{":
            return None
        obj, e = scan(text, i)
        if e != j or type(obj) is not dict:
            return None
        if bfind is None:
            add((obj, base + i, j - i))
        else:
            e = bfind(b"\n", b)
            add((obj, base + b, e - b))
            b = e + 1
        i = j + 1
    return out


_BLOCK = 1 << 20  # read the ledger a megabyte at a time: no list of every line is ever held


def whole_line_pieces(data: Union[bytes, Iterable[bytes]]) -> Iterator[bytes]:
    """The ledger in pieces of whole lines, each about a megabyte and ending with a newline (the last
    one may not: a ledger without a final newline)."""
    if isinstance(data, (bytes, bytearray)):
        start, end = 0, len(data)
        while start < end:
            cut = data.find(b"\n", start + _BLOCK) if start + _BLOCK < end else -1
            yield bytes(data[start:] if cut < 0 else data[start:cut + 1])
            start = end if cut < 0 else cut + 1
        return
    rest = b""
    for chunk in data:
        chunk = rest + chunk
        cut = chunk.rfind(b"\n")
        if cut < 0:
            rest = chunk
            continue
        rest = chunk[cut + 1:]
        yield chunk[:cut + 1]
    if rest:
        yield rest


def records(data: Union[bytes, Iterable[bytes]], no: int = 0, scan: Any = None) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """(line number, object) of every line that is one JSON object; blank and damaged lines only count.
    `no`: the lines before `data`'s first; `scan`: a `scanner` to use (one is made when not given)."""
    scan = scan or scanner()
    for chunk in whole_line_pieces(data):
        try:
            lines: List[Any] = chunk.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            lines = [raw.decode("utf-8", "replace") for raw in chunk.split(b"\n")]
        if chunk.endswith(b"\n"):
            lines.pop()
        for line in lines:
            no += 1
            if line.endswith("\r"):
                line = line[:-1]
            if not line.startswith("{"):
                continue
            try:
                rec, end = scan(line, 0)
            except (StopIteration, ValueError, RecursionError):
                continue
            if end == len(line) and type(rec) is dict:
                yield no, rec


def ns_shown_whole(ns: str) -> bool:
    """A namespace that prints as one word: no space, control or format character (every whitespace
    character but the space is unprintable). No keeper's door takes another; `verify` names one
    (`ledger_rules`), and the quick reading leaves it to that rule."""
    return ns.isprintable() and " " not in ns
