"""A JSON object read a block of bytes at a time, its large lists handed to sinks an item at a time.

A run's `relevant.json` holds, at 100k priors on a ledger of open findings, 70k verify items, 70k
scopes and 16k lessons: ~80 MB of objects once parsed whole, beside the fold. The run verbs need a
few fields of each item (core/run_files.py keeps those), so the lists are read an item at a time
and each item is dropped once its sink took what it needs; the text is decoded a block at a time.

Exact or nothing: every value is parsed by the strict parser itself (`json`'s scanner, configured as
`canonical.loads` configures it), and what this reader does not take — a parse error, bytes that are
not UTF-8, a BOM, any text that is no JSON object, a value nested deeper than `DEPTH` — makes it
answer None: the caller then parses the text whole, as before, which refuses it or reads it. (The
depth bound keeps the two parses alike where the strict one runs out of stack: a value nested
`DEPTH` deep parses anywhere.)
"""

from __future__ import annotations

import codecs
import json
import json.scanner
import re

from priors.core.canonical import reject_constant

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, Iterator, Optional

DEPTH = 32  # deeper values are left to the whole parse (see the module's docstring)
SPAN = 1 << 15  # characters of a list parsed at a time (`_Text.span`): ~100 items, small enough to stay in the caches
_MARGIN = 64  # a value ending this close to the end of the decoded text may go on in the next block (a number)
_WS = " \t\n\r"  # the whitespace the strict parser skips between tokens (json.decoder's)
_ws: Any = None  # its run's `match`, compiled when first met
# the scanner `json.loads(text, parse_constant=reject_constant)` parses with (typeshed types its argument oddly)
_SCAN = json.scanner.make_scanner(json.JSONDecoder(parse_constant=reject_constant))  # type: ignore[arg-type]


class _Cut(Exception):
    """The text is not one this reader takes: the caller parses it whole."""


class _Text:
    """The decoded text from position `i` on, read on as the parse needs (never much more than a block
    ahead, except for one value longer than that, which is held whole while it is parsed)."""

    __slots__ = ("blocks", "decode", "s", "i", "eof", "base")

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self.blocks = blocks
        self.decode = codecs.getincrementaldecoder("utf-8")("strict").decode
        self.s, self.i, self.eof = "", 0, False
        self.base = 0  # where `s` starts in the whole text

    def more(self) -> None:
        """Read on: at least as much text as is held (so a long value is parsed again only a few times)."""
        if self.eof:
            raise _Cut
        need, got, n = max(len(self.s) - self.i, 1), [], 0
        while n < need:
            block = next(self.blocks, None)
            if block is None:
                got.append(self.decode(b"", True))
                self.eof = True
                break
            got.append(self.decode(block))
            n += len(block)
        self.s = self.s[self.i:] + "".join(got)
        self.base += self.i
        self.i = 0

    def skip(self) -> str:
        """The next character that is no whitespace (read on as needed); "" at the end of the text."""
        global _ws
        while True:
            s, i = self.s, self.i
            if i < len(s) and s[i] in _WS:  # (none in the text the keeper writes: the pattern is made when met)
                if _ws is None:
                    _ws = re.compile("[ \t\n\r]*").match
                i = _ws(s, i).end()
            self.i = i
            if i < len(s):
                return s[i]
            if self.eof:
                return ""
            self.more()

    def value(self) -> Any:
        """The JSON value at the next token, as the strict parser reads it; nested at most DEPTH deep."""
        while True:
            self.skip()
            s, i = self.s, self.i
            try:
                obj, end = _SCAN(s, i)
            except (StopIteration, ValueError):  # cut short by the end of what is read, or no JSON here
                self.more()
                continue
            except RecursionError:
                raise _Cut from None
            if end > len(s) - _MARGIN and not self.eof:
                self.more()  # a number may go on in the next block
                continue
            self.i = end
            t = type(obj)
            if (t is dict or t is list) and (s.find("[", i + 1, end) >= 0 or s.find("{", i + 1, end) >= 0) \
                    and not shallow(obj, DEPTH):
                raise _Cut
            return obj

    def items(self, sink: Any) -> Any:
        """The JSON array at `i`, its items handed to `sink.add_all` in order as they are parsed (most
        of them a span at a time, `span`); returns `sink`."""
        self.i += 1
        if self.skip() == "]":
            self.i += 1
            return sink
        add, value, skip = sink.add_all, self.value, self.skip
        slow = -1  # before this position items are parsed one at a time (a span that failed ends there)
        while True:
            if self.base + self.i > slow and skip() == "{":  # (read on first: a comma may end what is read; hostile 32d)
                got = self.span()
                if type(got) is tuple:
                    add(got[0])
                    if got[1]:
                        self.i += 1
                        return sink
                    continue
                slow = self.base + got
            add((value(),))
            c = skip()
            self.i += 1
            if c == "]":
                return sink
            if c != ",":
                raise _Cut

    def span(self, cut_at: str = "},{", open_: str = "[", close: str = "]") -> Any:
        """The items from `i` up to a `cut_at` (`},{` in a list of objects, `","` in an object of strings)
        at least SPAN on, or up to the list's end if it comes first — parsed as one array (object),
        `open_` and `close` around them, by one call of the strict parser — and `i` moved past them:
        (the items, whether the list ended). A position instead when the text up to there is no run
        of whole items (a `},{` inside a string, say), or there is no `cut_at` within reach: the items
        up to there are parsed one at a time. What the parser reads whole as one array (object) is a
        run of items exactly as it reads them in the list — it parses left to right —, and what ends
        it, the comma after them or the list's own closing bracket. (A list whose first item is at `i`,
        ending within 4 SPAN of the text read, is parsed in place, whole.)"""
        s, a = self.s, self.i
        if s[a - 1] == open_ and len(s) - a < 4 * SPAN:
            try:
                got, end = _SCAN(s, a - 1)
            except (StopIteration, ValueError, RecursionError):
                got = None  # (it goes on past what is read, or it is no JSON: a run at a time)
            if got is not None:
                if (s.count("{", a, end) != (len(got) if open_ == "[" else 0) or s.find("[", a, end) >= 0) \
                        and not shallow(got, DEPTH):
                    raise _Cut
                self.i = end - 1  # (at its closing bracket)
                return got, True
        while True:
            s, a = self.s, self.i
            cut = s.find(cut_at, a + SPAN, a + 4 * SPAN)
            if cut >= 0 or self.eof:
                break
            if len(s) - a >= 4 * SPAN:
                return a + 4 * SPAN
            self.more()
        text = open_ + (s[a:cut + 1] if cut >= 0 else s[a:]) + close
        try:
            got, end = _SCAN(text, 0)
        except (StopIteration, ValueError, RecursionError):
            return cut if cut >= 0 else len(s)
        if end == len(text) and cut < 0:
            return len(s)  # (the list never ends: refused one at a time)
        n = len(got) if open_ == "[" else 1  # (the objects a list of flat objects holds; the object itself)
        if (text.count("{", 0, end) != n or text.find("[", 1, end) >= 0) and not shallow(got, DEPTH):
            raise _Cut
        if end == len(text):
            self.i = cut + 2
            return got, False
        self.i = a + end - 2  # (at the list's own closing bracket)
        return got, True

    def pairs(self, sink: Any) -> Any:
        """The JSON object at `i`, its pairs handed to `sink.add_pairs` in order as they are parsed — as
        the dicts the parser makes of runs of them (`span`; one key twice: as the parser keeps it, so a
        sink that updates a dict with each gets the parser's dict); returns `sink`."""
        self.i += 1
        if self.skip() == "}":
            self.i += 1
            return sink
        add, value, skip = sink.add_pairs, self.value, self.skip
        slow = -1
        while True:
            if skip() != '"':
                raise _Cut
            if self.base + self.i > slow:
                got = self.span('","', "{", "}")
                if type(got) is tuple:
                    add(got[0])
                    if got[1]:
                        self.i += 1
                        return sink
                    continue
                slow = self.base + got
            key = value()
            if skip() != ":":
                raise _Cut
            self.i += 1
            add({key: value()})
            c = skip()
            self.i += 1
            if c == "}":
                return sink
            if c != ",":
                raise _Cut


def read_object(blocks: Iterator[bytes], lists: Dict[str, Callable[[], Any]]) -> Optional[Dict[str, Any]]:
    """The JSON object the UTF-8 `blocks` hold, as the strict parser reads it — except that a key of
    `lists` whose value is an array holds the sink `lists[key]()` made, its items handed to the sink's
    `add_all` in order, a sequence at a time (a key given twice: the last one's, as the parser keeps).
    None when the text is not one this reader takes (the module's docstring): the caller parses it whole."""
    t = _Text(blocks)
    out: Dict[str, Any] = {}
    try:
        if t.skip() != "{":
            return None
        t.i += 1
        if t.skip() == "}":
            t.i += 1
        else:
            while True:
                if t.skip() != '"':
                    return None
                key = t.value()
                if t.skip() != ":":
                    return None
                t.i += 1
                make = lists.get(key)
                sink = make() if make is not None else None
                c = t.skip()
                if c == "[" and hasattr(sink, "add_all"):
                    out[key] = t.items(sink)
                elif c == "{" and hasattr(sink, "add_pairs"):
                    out[key] = t.pairs(sink)
                else:
                    out[key] = t.value()
                c = t.skip()
                t.i += 1
                if c == "}":
                    break
                if c != ",":
                    return None
        return out if t.skip() == "" else None
    except (_Cut, UnicodeDecodeError):
        return None


def shallow(value: Any, depth: int) -> bool:
    """Whether `value` (a parsed JSON value) nests no more than `depth` objects and arrays deep."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > depth:
            return False
        for x in (v.values() if type(v) is dict else v):
            t = type(x)
            if t is dict or t is list:
                stack.append((x, d + 1))
    return True
