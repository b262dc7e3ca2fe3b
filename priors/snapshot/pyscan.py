"""Python definitions without `ast`: a scanner that reads strings, comments, brackets and indentation.

`ast.parse` builds an object for every node of a module, and that was four fifths of a first
snapshot's time (the standard library: 4.9 s of CPU for 1,790 files). Anchors need much less:
where each `def`/`class` starts (its first decorator's line) and where its last statement ends.
This scanner finds both with a few regular-expression passes over the text, and gives exactly
the spans `ast` gives on every file that parses (tested against `ast` on the standard library
and on generated files). Where it is not sure it would — tabs or form feeds in indentation, a
lone carriage return, an f-string whose braces do not pair (Python 3.12's nested quotes), a
decorator or header split over lines in an odd place, a non-ASCII name — it answers None and
the caller asks `ast`. A file whose brackets or strings do not close gets no anchors.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from typing import Dict, List, Optional, Tuple

    from priors.snapshot.lexer import Span


# A line that starts a definition or a decorator; group 1 its indentation (see `_Patterns.head`).
HEAD = r"\n( *+)(?:def\b|class\b|@|async\b)"
HEAD_BEFORE_3_11 = r"\n(?=( *))\1(?:def\b|class\b|@|async\b)"


class _Patterns:
    """Compiled on first use: importing the snapshot package (for its version) must stay cheap."""

    def __init__(self) -> None:
        # Comments and string literals, leftmost first: a quote in a comment, a `#` in a string never count.
        # One group: `split` answers the text between them and each of them, in turn (`_masked`).
        self.token = re.compile(
            r"(#[^\n]*"
            r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
            r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
            r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
            r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
            # Never matches: with a first character more, `re` looks each character of the text up in
            # a bitmap instead of testing it against a range and a literal (the search is most of the split).
            r"|\x00(?!))",
            re.S,
        )
        # Patterns led by a literal "\n" are searched for at C speed; `^` with re.M is tried at every offset.
        self.odd_indent = re.compile(r"\n *[\t\f]")
        self.odd_first = re.compile(r" *[\t\f]")
        self.lone_cr = re.compile(r"\r(?!\n)")
        # The indentation is taken whole, never giving a space back to try the words again: each line
        # costs one step, not one per column. Python 3.11 says so (` *+`, a third faster on the
        # standard library); before it, `(?=( *))\1` does the same.
        self.head = re.compile(HEAD if sys.version_info >= (3, 11) else HEAD_BEFORE_3_11)
        self.async_def = re.compile(r"async[ \t]+def\b")
        self.name = re.compile(r" *(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
        self.odd_decorator = re.compile(r" *@[ \t]*(?:\(|\\|\r?$)", re.M)
        self.dedent: Dict[int, "re.Pattern[str]"] = {}

    def dedent_to(self, indent: int) -> "re.Pattern[str]":
        """A line that starts a statement indented `indent` columns or fewer (or a line inside brackets)."""
        rx = self.dedent.get(indent)
        if rx is None:
            rx = self.dedent[indent] = re.compile(r"\n(?! {%d})(?= *[^ \r\n])" % (indent + 1))  # (no backtracking)
        return rx


_PATTERNS: List[_Patterns] = []


def _patterns() -> _Patterns:
    if not _PATTERNS:
        _PATTERNS.append(_Patterns())
    return _PATTERNS[0]


def _masked(token: "re.Pattern[str]", source: str) -> Optional[str]:
    """The text with every comment made spaces and every string as many `x`s, line breaks included:
    the lines inside a string vanish (offsets stay), and nothing inside either counts as a bracket or
    a quote. None when an f-string might end elsewhere than Python 3.11 reads it (`_fstring_ends_here`).

    Split, then masked by one list comprehension: `token.sub` with a function made a match object and
    a call for each of a file's comments and strings (~350,000 in the standard library)."""
    parts = token.split(source)  # text, token, text, token, …, text
    tokens = parts[1::2]
    # (three characters before the quote: a prefix, and what would make it part of a longer name)
    for i in [i for i, s in enumerate(tokens) if "{" in s or "}" in s]:
        s = tokens[i]
        if s[0] != "#" and _F_PREFIX_END.search(parts[2 * i][-3:]) and not _fstring_ends_here(s):
            return None
    parts[1::2] = [("x" if s[0] != "#" else " ") * len(s) for s in tokens]
    return "".join(parts)


# A string prefix that makes an f-string (or a 3.14 t-string, read alike): the whole of the name
# before the quote. `if"}"` and `elif "}"` are a keyword and a plain string.
_F_PREFIX_END = re.compile(r"(?i)(?<!\w)(?:[ft]r?|r[ft])\Z")


def _fstring_ends_here(s: str) -> bool:
    """Does the f-string token `s` (quotes included) end where Python 3.12 ends it too? It may not
    when its closing quote falls inside a replacement field: 3.12 lets a field hold the string's own
    quote (`f"{d["k"]}"` is one string there, three tokens here). Fields are followed as Python reads
    them: `{{`/`}}` outside one are literal braces; in a field's expression brackets nest and a string
    in the other quote is skipped whole; a top-level `:` starts the format spec, literal text with
    fields of its own. Anything unusual (a backslash or `#` in an expression, a quote left open, a
    bracket closed by the wrong one, `{{` in a spec) answers False: `ast` reads the file."""
    stack: List[str] = []  # "f" a field's expression, "s" its format spec, else an open bracket
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        top = stack[-1] if stack else ""
        if top == "" or top == "s":  # literal text: the string's own, or a format spec
            if c == "{" or c == "}":
                doubled = s[i + 1:i + 2] == c
                if top == "" and doubled:
                    i += 2
                    continue
                if c == "}":
                    if top == "":
                        return False
                    stack.pop()  # the spec ends its field
                elif doubled:
                    return False  # `{{` in a spec
                else:
                    stack.append("f")
            i += 1
            continue
        if c == "'" or c == '"':
            quote = c * 3 if s[i:i + 3] == c * 3 else c
            close = s.find(quote, i + len(quote))
            if close < 0 or "\\" in s[i:close]:
                return False
            i = close + len(quote)
            continue
        if c in "([{":
            stack.append(c)
        elif c in ")]}":
            if top != _OPENS[c] and not (c == "}" and top == "f"):
                return False
            stack.pop()
        elif c == ":" and top == "f":
            stack[-1] = "s"
        elif c == "\\" or c == "#":
            return False
        i += 1
    return not stack


_OPENS = {")": "(", "]": "[", "}": "{"}


def _depth(brackets: bytes, a: int, b: int) -> int:
    """How many brackets `[a:b]` leaves open (counted in place: no copy of the slice). `brackets` is
    the masked text with every opening bracket made `(` and every closing one `)` (`_BRACKETS`)."""
    return brackets.count(b"(", a, b) - brackets.count(b")", a, b)


_BRACKETS = bytes.maketrans(b"[{]}", b"(())")


def _continued(masked: str, line_start: int) -> bool:
    """Does the line before `line_start` end with a backslash (joining this line to it)?"""
    i = line_start - 1  # the "\n"
    if i > 0 and masked[i - 1] == "\r":
        i -= 1
    return i > 0 and masked[i - 1] == "\\"


def _end_before(masked: str, floor: int, pos: int) -> int:
    """Where the last token before `pos` (and after `floor`) ends; comments are blank already.
    Looked for in a short stretch first (what lies between two statements almost always is), then in
    one twice as long before it, and so on: a window of 512 copied for each definition cost more."""
    width = 64
    while True:
        lo = max(floor, pos - width)
        head = masked[lo:pos].rstrip()
        while head.endswith("\\"):
            head = head[:-1].rstrip()
        if head or lo <= floor:
            return lo + len(head)
        pos, width = lo, width * 2


def python_spans_fast(text: str) -> Optional[List[Span]]:
    """`anchors.python_spans`' answer for `text`, or None when only `ast` can give it for sure.

    Raises ValueError for a file whose brackets do not close (no anchors). A quote left unmatched
    is `ast`'s to judge: a string that does not close, or Python 3.12's single-quoted f-string whose
    field runs over a line break (`f"{1 +` then `2}"` on the next line), one string there."""
    rx = _patterns()
    source = text[1:] if text.startswith("\ufeff") else text
    shift = len(text) - len(source)
    odd = ("\t" in source or "\f" in source) and (rx.odd_first.match(source) or rx.odd_indent.search(source))
    if odd or ("\r" in source and rx.lone_cr.search(source)):  # (a regex tries every line: asked only when needed)
        return None
    masked = _masked(rx.token, source)
    if masked is None:
        return None
    if "'" in masked or '"' in masked:
        return None
    brackets = masked.encode("ascii", "replace").translate(_BRACKETS)  # one byte a character, as the offsets

    heads: List[Tuple[int, int, bool]] = []  # (line start, indent, decorator?) of heads at depth 0
    depth, at = 0, 0
    count = brackets.count  # (`_depth` and `_continued` written out: this loop runs for every head)
    for m in rx.head.finditer("\n" + masked):  # offsets one past the text's: m.start() is the line's start
        start = m.start()
        depth += count(b"(", at, start) - count(b")", at, start)
        at = start
        if depth == 0 and not (start > 0 and _continued(masked, start)):
            word_at = m.end(1) - 1
            word = masked[word_at]
            if word != "a" or rx.async_def.match(masked, word_at):
                heads.append((start, word_at - start, word == "@"))
    if depth + _depth(brackets, at, len(masked)) != 0:
        raise ValueError("a bracket does not close")

    starts = [h[0] for h in heads]  # where the depth is known to be 0
    spans: List[Span] = []
    open_defs: List[Tuple[int, str]] = []  # enclosing definitions: (end, qualified name)
    first_decorator = -1
    name_at, find, dedent_to = rx.name.match, masked.find, rx.dedent_to
    for start, indent, decorator in heads:
        if decorator:
            if rx.odd_decorator.match(masked, start):
                return None
            if first_decorator < 0:
                first_decorator = start
            continue
        nm = name_at(source, start)
        if nm is None or not nm.group(1).isascii():
            return None
        line_end = find("\n", start)
        end = _block_end(masked, brackets, dedent_to(indent), start, len(masked) if line_end < 0 else line_end,
                         starts)
        while open_defs and open_defs[-1][0] <= start:
            open_defs.pop()
        qual = open_defs[-1][1] + "." + nm.group(1) if open_defs else nm.group(1)
        spans.append((qual, (first_decorator if first_decorator >= 0 else start) + shift, end + shift))
        first_decorator = -1
        open_defs.append((end, qual))
    return spans


def _block_end(masked: str, brackets: bytes, dedent: "re.Pattern[str]", start: int, line_end: int,
               zero: List[int]) -> int:
    """Where the definition heading the line at `start` ends: before the next statement line indented
    no deeper than it (`dedent`; a line inside brackets, or joined by a backslash, is no statement)."""
    pos = line_end
    while True:
        m = dedent.search(masked, pos)
        if m is None:
            return _end_before(masked, start, len(masked))
        cand = m.start() + 1
        if not _continued(masked, cand):
            base = zero[bisect_right(zero, cand) - 1]  # the nearest line known to be outside brackets
            if _depth(brackets, base, cand) == 0:
                return _end_before(masked, start, cand)
        pos = m.end()
