"""Canonical JSON and the text hashes every keeper must agree on byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import math
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

# Exactly the ECMAScript WhiteSpace + LineTerminator set (Python's \s differs).
_ES_WS = "\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_WS_RUN = re.compile("[" + _ES_WS + "]+")
WS_RUN = _WS_RUN  # what `normalize` collapses (streamed hashing squeezes chunk by chunk alike)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def normalize(text: str) -> str:
    """Collapse every whitespace run to one space and trim, as `s.replace(/\\s+/g,' ').trim()`."""
    return _WS_RUN.sub(" ", text).strip(" ")


def stored_claim(claim: str) -> str:
    """`normalize(claim)`, quickly for a claim as the keeper stores it (printable, single inner spaces,
    no space at either end: every other ECMAScript whitespace is no printable character), which is
    its own normal form — `verify` asks it of every claim in the ledger."""
    if claim.isprintable() and "  " not in claim and claim[:1] != " " and claim[-1:] != " ":
        return claim
    return normalize(claim)


def sha12(text: str) -> str:
    """First 12 hex digits of SHA-256 over the UTF-8 bytes of `text`."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def sha12_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def decode_text(data: bytes) -> str:
    """Read bytes as UTF-8, invalid bytes replaced by U+FFFD; a leading BOM stays a character."""
    return data.decode("utf-8", "replace")


def _js_number(x: float) -> str:
    """Format a float the way ECMAScript Number::toString does."""
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    r = repr(x)  # shortest round-trip digits, as ECMAScript uses
    if "e" not in r:
        return r[:-2] if r.endswith(".0") else r
    mant, exp = r.lower().split("e")
    e = int(exp)
    sign = "-" if mant.startswith("-") else ""
    mant = mant.lstrip("-")
    digits = mant.replace(".", "")
    point = (mant.index(".") if "." in mant else len(mant)) + e
    digits = digits.rstrip("0") or "0"
    if 0 < point <= 21:
        if len(digits) <= point:
            return sign + digits + "0" * (point - len(digits))
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    n = point - 1
    return sign + body + "e" + ("+" if n >= 0 else "-") + str(abs(n))


def _utf16_key(key: str) -> bytes:
    """Sort keys by UTF-16 code units, as JavaScript's default sort does."""
    return key.encode("utf-16-be", "surrogatepass")


def _encode(value: Any, out: list) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_js_number(value))
    elif isinstance(value, dict):
        out.append("{")
        first = True
        for key in sorted(value, key=_utf16_key):
            if not first:
                out.append(",")
            first = False
            out.append(_string(key))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def _string(s: str) -> str:
    text = json.dumps(s, ensure_ascii=False)
    if _LONE_SURROGATE.search(text):
        text = _LONE_SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)
    return text


fast_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False).encode


def has_high_char(text: str) -> bool:
    """Any character at or above U+D800? A short text by `max` (a regex over that range costs ~1 ms to
    compile, once per process); a long one — a `relevant` answer of 15 MB — by that regex, which is
    ten times faster than `max` there (max makes a string of every character)."""
    if text.isascii():
        return False
    if len(text) < 4096:
        return max(text) >= "\ud800"
    global _HIGH
    if _HIGH is None:
        _HIGH = re.compile("[\ud800-\U0010ffff]")
    return _HIGH.search(text) is not None


_HIGH: Any = None


def c_encoder() -> Any:
    """The C encoder under `fast_dumps`, built once. `fast_dumps` builds a new one on every call, which costs a
    reader of many lines (verify) nearly as much as the encoding itself. `encoder(value, 0)` gives
    `fast_dumps(value)` in pieces for any parsed JSON value; None where Python has no C accelerator."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    # the arguments JSONEncoder.iterencode passes, as `fast_dumps` is configured (no circular check: parsed data has no cycle)
    try:
        return make(None, None, json.encoder.encode_basestring, None, ":", ",", True, False, False)
    except TypeError:
        return None


def proves_canonical(value: Dict[str, Any], text: str) -> bool:
    """True when `text` is `dumps(value)`, shown by lengths and key order alone, without encoding.

    Only for a `value` the strict JSON parser made from all of `text`, where `text` holds no
    backslash and no character at or above U+D800. Proved for an object of strings whose `facets`
    may be an object of strings (nearly every ledger line); anything else is False, which proves
    nothing: the caller encodes. Why it holds: with no backslash every string is written as it
    reads (no escape), so no token of any text that parses to `value` is shorter than its canonical
    form — a space, a repeated key, another form of a number only add. A text exactly as long as
    the canonical one, with every object's keys in sorted order, is the canonical text. About a
    third of the cost of encoding the line (a property test holds it to `dumps`)."""
    inner = value.get("facets")
    if type(inner) is not dict:
        return flat_size(value) == len(text)
    inner_size = flat_size(inner)
    if inner_size < 0:
        return False
    value["facets"] = ""  # counted as an empty string, its place in the object kept; put back below
    try:
        size = flat_size(value)
    finally:
        value["facets"] = inner
    return size >= 0 and size - 2 + inner_size == len(text)


def flat_size(obj: Dict[str, Any]) -> int:
    """The length of `{"k":"v",...}` — the canonical text of a non-empty object of strings none of
    which needs an escape, keys in sorted order; -1 for any other object (`join` refuses a value
    that is not a string)."""
    n = len(obj)
    if not n:
        return -1
    try:
        size = 1 + 6 * n + len("".join(obj)) + len("".join(obj.values()))
    except TypeError:
        return -1
    keys = list(obj)
    return size if keys == sorted(keys) else -1


def dumps(value: Any) -> str:
    """Canonical JSON: sorted keys at every depth, no spaces, UTF-8, JS number format."""
    if type(value) is dict and len(value) >= FLAT_MIN:
        text = flat_strings(value)
        if text is not None:
            return text
    if not _has_float_or_odd_key(value):
        # The C encoder agrees byte for byte when there is no float (JS formats numbers its own way)
        # and no character at or above U+D800 (lone surrogates are escaped, and only there can
        # code-point order and JavaScript's UTF-16 key order differ).
        try:
            text = fast_dumps(value)
        except (TypeError, ValueError):
            text = None
        if text is not None and not has_high_char(text):
            return text
    out: list = []
    _encode(value, out)
    return "".join(out)


def array_pieces(items: Iterable[Any], size: int = 256) -> Iterator[Tuple[str, int]]:
    """The canonical text of a JSON array's `items`, without its brackets, a run of `size` items at a time
    (each run after the first led by its comma), with how many items each holds: one encoder call a run,
    not one an item (16k lessons encoded one by one were ~20 % of `export`), and no text of them all."""
    run: List[Any] = []
    first = True
    for item in items:
        run.append(item)
        if len(run) == size:
            yield ("" if first else ",") + dumps(run)[1:-1], size
            run, first = [], False
    if run:
        yield ("" if first else ",") + dumps(run)[1:-1], len(run)


def dumps_object_utf8(encoded: Dict[str, Any], end: bytes = b"") -> bytes:
    """The canonical text, in UTF-8, of an object whose values are already canonical texts in UTF-8 —
    or lists of them, each such value a JSON array of those items — followed by `end`: the joined
    `object_pieces_utf8`."""
    return b"".join(object_pieces_utf8(encoded, end))


def object_pieces_utf8(encoded: Dict[str, Any], end: bytes = b"") -> List[bytes]:
    """`dumps_object_utf8`'s text as the pieces it is made of, in order, never joined: the values'
    own bytes objects among them, not copies.

    Lets a verb that prints an object and also stores it with more keys encode the bulk once and
    never join it: `relevant`'s verify list, 70k items (a list item may be several items already
    joined by commas), is written out piece by piece to `relevant.json` and to stdout."""
    pieces: List[bytes] = []
    ascii_keys = all(type(k) is str and k.isascii() for k in encoded)  # (their order is UTF-16's: no codec looked up)
    for k in sorted(encoded) if ascii_keys else sorted(encoded, key=_utf16_key):
        value = encoded[k]
        pieces += (b",", dumps(k).encode("utf-8", "surrogatepass"), b":")
        if type(value) is not list:
            pieces.append(value)
        elif not value:
            pieces.append(b"[]")
        else:
            items = [b","] * (2 * len(value) - 1)
            items[::2] = value  # the items, a comma between each two
            pieces.append(b"[")
            pieces += items
            pieces.append(b"]")
    if not pieces:
        return [b"{}" + end]
    pieces[0] = b"{"
    pieces.append(b"}" + end)
    return pieces


FLAT_MIN = 256  # an object this large may be a snapshot's scopes, written by `flat_strings`


def flat_strings(value: Dict[Any, Any]) -> Optional[str]:
    """The canonical text of an object whose keys and values are all strings that need no escape — a
    snapshot's scopes, 70k refs and their hashes —, joined from its sorted pairs: no walk looking
    for floats, no pairs sorted and encoded one by one (half the time of the encoder). None for any
    other object, which `dumps` encodes its way. Code-point order is JavaScript's key order when no
    character is at or above U+D800; a string written as itself holds no quote, backslash or
    control character, so every quote in the text is one of its four per pair."""
    try:
        keys = sorted(value)
        text = '{"' + '","'.join(map('":"'.join, zip(keys, map(value.__getitem__, keys)))) + '"}'
    except TypeError:  # a key or a value that is not a string
        return None
    if not keys or text.count('"') != 4 * len(keys) or "\\" in text or not text.isprintable() or has_high_char(text):
        return None
    return text


def _has_float_or_odd_key(value: Any) -> bool:
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        v = pop()
        t = type(v)
        if t is dict:
            for k in v:
                if type(k) is not str:
                    return True
            push(v.values())
        elif t is list or t is tuple:
            push(v)
        elif t is float:
            return True
        elif t is not str and t is not int and t is not bool and v is not None:
            return True
    return False


_EXACT = 2 ** 53 - 1  # the largest whole number a JavaScript keeper reads exactly


def bad_text(s: str) -> bool:
    """True when `s` holds a lone surrogate: not a Unicode scalar value, so not encodable as UTF-8.

    (Python decodes argv bytes that are not UTF-8, and JSON `\\ud800` escapes, into exactly these.)"""
    return _LONE_SURROGATE.search(s) is not None


def value_problem(value: Any, max_depth: int) -> Any:
    """Why `value` cannot be written into the ledger, or None: nested deeper than `max_depth`
    (the value itself is depth 1), a string or key that is not valid Unicode text, a number that
    is not finite (`1e400` parses as infinity), or a type JSON does not have."""
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        v, depth = pop()
        t = type(v)
        if t is str:
            if _LONE_SURROGATE.search(v):
                return "text that is not valid Unicode (a lone surrogate, or bytes that were not UTF-8)"
        elif t is dict or t is list:
            if depth > max_depth:
                return f"values nested more than {max_depth} deep"
            if t is dict:
                for key, item in v.items():
                    if type(key) is not str or _LONE_SURROGATE.search(key):
                        return "a key that is not valid Unicode text"
                    push((item, depth + 1))
            else:
                for item in v:
                    push((item, depth + 1))
        elif t is float:
            if math.isnan(v) or math.isinf(v):
                return "a number that is not finite (too large for JSON, like 1e400)"
        elif t is int:
            if not -_EXACT <= v <= _EXACT:
                return "a whole number too large to stay exact in every keeper (over 2**53)"
        elif not (v is None or t is bool or t is int):
            return f"a {t.__name__}, which JSON does not have"
    return None


def plainly_writable(text: str, max_depth: int) -> bool:
    """True when the JSON `text` provably holds no lone surrogate and no nesting deeper than
    `max_depth` — so a reader of many lines (verify), whose parser already noted every float and
    every whole number over 2**53, can skip `value_problem`'s walk over the value.

    Conservative: a lone surrogate needs a `\\u` escape in valid UTF-8 text, and nesting cannot be
    deeper than the count of `{` and `[` (those inside strings included). Any doubt returns False
    and the walk decides."""
    return "\\u" not in text and text.count("{") + text.count("[") <= max_depth


def too_large(number: int) -> bool:
    """A whole number no JavaScript keeper reads exactly (the limit `value_problem` holds)."""
    return not -_EXACT <= number <= _EXACT


def line(value: Any) -> str:
    """One canonical JSON line, newline-terminated."""
    return dumps(value) + "\n"


class JSONError(ValueError):
    """Input that is not acceptable JSON (syntax, NaN/Infinity, or too deep)."""


def reject_constant(name: str) -> Any:
    raise JSONError(f"{name} is not valid JSON")


def loads(text: str) -> Any:
    """Strict JSON parse: no NaN/Infinity; deep nesting becomes JSONError, not RecursionError."""
    try:
        return json.loads(text, parse_constant=reject_constant)
    except RecursionError:
        raise JSONError("nested too deeply") from None
    except JSONError:
        raise
    except ValueError as exc:
        raise JSONError(str(exc)) from None


def reason_hash(reason: Any) -> str:
    """sha12 of a reason as the keeper hashes it when redacting (a non-string reason by its canonical JSON)."""
    return sha12(reason if isinstance(reason, str) else dumps(reason))


def split_lines(data: bytes) -> List[bytes]:
    """The ledger's lines without their `\\n`; a final newline does not make an empty last line."""
    if not data:
        return []
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts
