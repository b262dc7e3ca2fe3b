"""A prior's answer fields read as text from its ledger line's bytes, without parsing the line.

`relevant` on a long verify list prints tens of thousands of items, each the claim, scope ref and
severity of a prior: parsing 70k records into dicts and encoding them again cost more than the
rest of the call. A line in the shape keepers write (one JSON object, each key at most once) is
matched as bytes instead, and a value written without an escape is its own canonical JSON (the
JSON text of a string with no backslash is the string between quotes; a string needing an escape
— a quote, a backslash, a control character — holds a backslash in any valid JSON). So the
item is assembled from those texts (`verify_row`), byte for byte the UTF-8 of what
`canonical.dumps` makes of the item's dict; any other line (an escape, a value that is not a string, a key this shape does
not know) gives None and the caller parses the record as before. A property test holds the two
ways to the same answer on any ledger.
"""

from __future__ import annotations

import re
from itertools import chain
from operator import itemgetter

from priors.core.canonical import dumps, loads
from priors.core.errors import CHANGED_IN_PLACE, DamagedLedger

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, List, Optional, Tuple

    Texts = Tuple[Optional[bytes], Optional[bytes], bytes, Optional[bytes], Optional[bytes], Optional[bytes]]

_CH = r'[^"\\\x00-\x1f]'  # a character JSON writes as itself inside a string
_STR = '"' + _CH + r'*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})' + _CH + '*)*"'  # any JSON string
# In lines with no backslash and no control character (`bare`), any run of characters but the quote
# is a JSON string as it is written: the same shape, matched in half the time.
_BARE = '"[^"]*"'
# The same, possessive (Python 3.11's `*+`): no string's characters can be given back to a quote that
# follows them — none is one —, so it matches the very lines and groups `_BARE` does, without the
# engine keeping a way back into every string (~40 % less time a line).
_BARE_POSSESSIVE = '"[^"]*+"'
CARE = bytes(range(0x20)) + b"\\"  # a byte in a line that calls for the full shape
_PLAIN = re.compile('[^"\\\\\x00-\x1f\ud800-\udfff]*')  # a string whose JSON text is itself in quotes


def _shape(string: str, more: str = "*") -> str:
    """A prior's line: an object with these keys, each at most once, in sorted order, with a string
    for every value but `facets` (an object of strings), `review_every` (a whole number) and `t`
    ("prior"). Captured, as written: claim, depth, id, scope_ref, severity, supersedes. Each optional key is
    `(?:…|)` and the quote before a key is matched by the separator before it (fold.py's way). `more`:
    the repeat of the facets' pairs after the first (`*+`, possessive, where `string` is too)."""
    got = "(" + string + ")"
    pair = string + ":" + string
    return (r'\{"(?:born":' + string + ',"|)(?:claim":' + got + ',"|)(?:content_hash":' + string + ',"|)'
            '(?:depth":' + got + ',"|)(?:direction":' + string + ',"|)(?:evidence":' + string + ',"|)'
            r'(?:facets":\{(?:' + pair + '(?:,' + pair + ")" + more + r'|)\},"|)(?:fingerprint":' + string + ',"|)'
            'id":' + got + ',"(?:ns":' + string + ',"|)(?:review_every":(?:0|[1-9][0-9]{0,17}),"|)'
            '(?:rule":' + string + ',"|)(?:scope_hash":' + string + ',"|)(?:scope_ref":' + got + ',"|)'
            '(?:severity":' + got + ',"|)(?:supersedes":' + got + ',"|)'
            't":"prior"(?:,"type":' + string + r'|)\}')


_COMPILED: Dict[bool, Any] = {}


def _pattern(bare: bool) -> Callable[..., Any]:
    """The line's `fullmatch` (over its bytes), compiled by a first call only (a verb that reads no
    line pays nothing)."""
    got = _COMPILED.get(bare)
    if got is None:
        if bare:
            try:
                got = re.compile(_shape(_BARE_POSSESSIVE, "*+").encode("ascii")).fullmatch
            except re.error:  # before Python 3.11: no possessive repeat
                got = re.compile(_shape(_BARE).encode("ascii")).fullmatch
        else:
            got = re.compile(_shape(_STR).encode("ascii")).fullmatch
        _COMPILED[bare] = got
    return got


def _canonical(token: Optional[bytes]) -> Optional[bytes]:
    """A captured JSON string as its canonical text: itself, unless it holds an escape (then it is
    parsed and written again — `\\/` and `\\u0041` read the same as `/` and `A`)."""
    if token is None or b"\\" not in token:
        return token
    return dumps(loads(token.decode("utf-8"))).encode("utf-8")


def line_texts(lines: List[bytes], ids: List[str]) -> List[Optional[Texts]]:
    """For each ledger line (bytes, no newline) of the prior whose id is `ids[i]`: the canonical JSON
    texts, UTF-8, of its claim, depth, id, scope_ref, severity and supersedes (None where the key is absent), or
    None when the line is not in the shape (the caller parses it) — or is not that prior's line.

    The line is matched as bytes, never decoded: a keeper folded it from valid UTF-8 and the fold
    cache proved its bytes unchanged, and the one who prints what is taken from it decodes that
    (`opening`), which names a ledger changed in place meanwhile."""
    out: List[Optional[Texts]] = []
    add = out.append
    bare = _pattern(True)
    try:
        whole = b"".join(lines)
    except TypeError:  # a line that is not bytes: each is looked at below
        whole = None
    if whole is not None and len(whole.translate(None, CARE)) == len(whole):  # the batch holds no line with
        # an escape or a control: each in the short shape — matched in one C loop, and every line the
        # prior's own when the ids' texts joined by commas read as `ids` so joined (no captured id
        # holds a quote, so the two agree only where each pair does) —, else with one check a line
        got = list(map(bare, lines))
        if None not in got and len(got) == len(ids):
            every = [m.groups() for m in got]
            if b",".join([t[2] for t in every]) == ('"' + '","'.join(ids) + '"').encode("utf-8", "surrogatepass"):
                return every
        for raw, want in zip(lines, ids):
            m = bare(raw)
            texts = None if m is None else m.groups()
            add(texts if texts is not None and texts[2][1:-1] == want.encode("utf-8", "surrogatepass") else None)
        return out
    full = None
    for raw, want in zip(lines, ids):
        if type(raw) is not bytes:
            add(None)
            continue
        plain = len(raw.translate(None, CARE)) == len(raw)
        if plain:
            m = bare(raw)
        else:
            full = full or _pattern(False)
            m = full(raw)
        if m is None:
            add(None)
            continue
        texts = m.groups()
        pid = texts[2]
        if pid[1:-1] != want.encode("utf-8", "surrogatepass") or b"\\" in pid:
            add(None)  # another prior's line (the ledger changed under us): the caller's parse names it
        elif plain:  # no backslash in the line: every value is written as it reads
            add(texts)
        else:
            claim, depth, _, ref, sev, sup = texts
            try:
                add((_canonical(claim), _canonical(depth), pid, _canonical(ref), _canonical(sev), _canonical(sup)))
            except ValueError:  # not UTF-8, or an escape JSON does not read: the caller's parse names it
                add(None)
    return out


def value_of(text: Optional[bytes]) -> Any:
    """The value a canonical JSON text (UTF-8) stands for (None: absent). Bytes that are not UTF-8 were
    written into the ledger after a keeper folded it: DamagedLedger says so."""
    if text is None:
        return None
    try:
        if text[:1] == b'"' and b"\\" not in text:
            return text[1:-1].decode("utf-8")
        return loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise DamagedLedger(CHANGED_IN_PLACE) from None


def printable_utf8(text: bytes) -> bool:
    """Whether `text` — canonical JSON in UTF-8, strings taken from ledger lines (`line_texts`) or
    encoded — prints as it is: it holds no character `controls.visible` escapes. DamagedLedger when
    it is not UTF-8: the bytes a keeper folded were, so the ledger was rewritten in place since.

    In ASCII (a C check of 20 MB in microseconds) it is UTF-8 and holds no control character — a
    line with one in a string is not read as text here, and an encoder escapes it — so only DEL is
    looked for; otherwise, a megabyte at a time, its printable ASCII is taken for spaces and its
    controls and DEL for NUL — one pass — and the runs left, the other bytes and those NULs, are
    decoded and looked at as text (`str.isprintable`: every character `visible` escapes is a control,
    format or separator one, NUL among them). An ASCII byte is never part of a longer UTF-8 sequence,
    so the runs decode as the whole text does, and fail where it fails: a text of a few em dashes in
    a megabyte is ~40 KB to decode, not a megabyte (2.5× faster on `relevant`'s answer)."""
    if text.isascii():
        return b"\x7f" not in text
    ok, at, size = True, 0, len(text)
    try:
        while at < size:  # a megabyte at a time, cut before a character's first byte
            end = at + (1 << 20)
            while end < size and 0x80 <= text[end] < 0xC0:
                end += 1
            runs = (text[at:end] if at or end < size else text).translate(_PRINTABLE_AS_SPACE).split()
            ok = b" ".join(runs).decode("utf-8").isprintable() and ok
            at = end
        return ok
    except UnicodeDecodeError:
        raise DamagedLedger(CHANGED_IN_PLACE) from None


# printable ASCII as a space, ASCII's controls and DEL as NUL (`split` keeps it: no space), any other byte as itself
_PRINTABLE_AS_SPACE = bytes(32 if 0x20 <= i < 0x7F else 0 if i < 0x80 else i for i in range(256))


def plain_strings(values: List[str]) -> bool:
    """Whether each of `values` (strings) is written in JSON as itself between quotes — no character
    that needs an escape — checked for them all at once."""
    text = "".join(values)
    # printable: no control character, no surrogate (a C loop, thrice the search's speed); else the search says
    return ('"' not in text and "\\" not in text and text.isprintable()) or _PLAIN.fullmatch(text) is not None


def string_text(value: Any) -> str:
    """The canonical JSON text of one value: a plain string quoted, anything else encoded."""
    if type(value) is str and _PLAIN.fullmatch(value) is not None:
        return '"' + value + '"'
    return dumps(value)


def _row_shape(keys: Tuple[Any, ...]) -> Optional[Tuple[str, Any]]:
    """(the template, the getter of the values in its order) of an object with these keys, when each is
    an ASCII string that needs no escape (so their sorted order is JavaScript's); None otherwise."""
    if not keys or not all(type(k) is str and k.isascii() and _PLAIN.fullmatch(k) for k in keys):
        return None
    order = sorted(keys)
    return ("{" + ",".join('"' + k.replace("%", "%%") + '":"%s"' for k in order) + "}",
            itemgetter(*order) if len(order) > 1 else lambda r, k=order[0]: (r[k],))


def plain_rows(rows: Any) -> Optional[List[str]]:
    """The canonical JSON texts of `rows` — `relevant`'s lessons, floors and nudges, thousands of small
    objects — when each is an object whose keys and values are strings that need no escape: each
    written by a template of its keys (`_row_shape`), without the encoder sorting every object's
    keys again. None for anything else (the caller encodes)."""
    if type(rows) is not list or not all(type(row) is dict for row in rows):
        return None
    first = tuple(rows[0]) if rows else ()
    if rows and all(tuple(row) == first for row in rows):  # one shape for them all, the common case: in C loops
        shape = _row_shape(first)
        if shape is None:
            return None
        columns = list(map(shape[1], rows))
        templates = [shape[0]] * len(rows)
    else:
        shapes: Dict[Tuple[str, ...], Optional[Tuple[str, Any]]] = {}
        columns, templates = [], []
        for row in rows:
            keys = tuple(row)
            got = shapes[keys] = shapes[keys] if keys in shapes else _row_shape(keys)
            if got is None:
                return None
            columns.append(got[1](row))
            templates.append(got[0])
    try:
        if not plain_strings(list(chain.from_iterable(columns))):
            return None
    except TypeError:  # a value that is not a string
        return None
    return list(map(str.__mod__, templates, columns))


# A verify item with every key but the rare ones, from the texts of its claim, id, scope_ref and
# severity and its plain hash and scope state (strings that need no escape, quoted here).
COMMON_ROW = b'{"claim":%s,"current_hash":"%s","id":%s,"scopeState":"%s","scope_ref":%s,"severity":%s}'


def verify_row(claim: Optional[bytes], current: Optional[bytes], pid: bytes, state: bytes, ref: Optional[bytes],
               severity: Optional[bytes], resurrected: bool = False, moved_from: Optional[bytes] = None,
               changed: bool = False) -> bytes:
    """A verify item's canonical JSON text (UTF-8) from its values' texts (None: absent; a null claim
    is kept). The keys in canonical order: changed, claim, current_hash, id, moved_from, resurrected,
    scopeState, scope_ref, severity. `state` is one of the scope states (plain ASCII words)."""
    parts = [b'{"changed":true,"claim":' if changed else b'{"claim":', b"null" if claim is None else claim]
    if current is not None:
        parts += [b',"current_hash":', current]
    parts += [b',"id":', pid]
    if moved_from is not None:
        parts += [b',"moved_from":', moved_from]
    if resurrected:
        parts.append(b',"resurrected":true')
    parts += [b',"scopeState":"', state, b'"']
    if ref is not None:
        parts += [b',"scope_ref":', ref]
    if severity is not None:
        parts += [b',"severity":', severity]
    parts.append(b"}")
    return b"".join(parts)
