"""A small lexer for the brace languages: comments, strings, templates and raw strings never confuse structure.
"""

from __future__ import annotations

import re
from itertools import accumulate

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from typing import Callable, List, Optional, Tuple

    Span = Tuple[str, int, int]  # (qualified name, start offset, end offset) in characters
    Tok = Tuple[str, str, int, int]


class _Lazy:
    """A regex compiled on first use: importing this module (for VERSION) must stay cheap."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.rx: Optional["re.Pattern[str]"] = None

    def get(self) -> "re.Pattern[str]":
        if self.rx is None:
            self.rx = re.compile(self.pattern)
        return self.rx

    def __getattr__(self, name: str):
        return getattr(self.get(), name)


# ---------------------------------------------------------------- Python (ast)

_PY_LINE_END = _Lazy(r"\r\n|\r|\n")


def line_starts(text: str) -> List[int]:
    """Character offset of each line, splitting on \\r\\n, \\r and \\n as Python's tokenizer does."""
    if "\r" not in text:
        return [0, *accumulate(len(line) + 1 for line in text.split("\n")[:-1])]
    starts = [0]
    starts.extend(m.end() for m in _PY_LINE_END.finditer(text))
    return starts


class Utf8Offsets:
    """Turn ast's (line, UTF-8 byte column) into a character offset without re-encoding the file."""

    def __init__(self, text: str, line_starts: List[int]) -> None:
        self.text = text
        self.starts = line_starts
        self.ascii = text.isascii()

    def offset(self, line: int, col: int) -> int:
        start = self.starts[line - 1]
        if self.ascii:
            return start + col
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        raw = self.text[start:end].encode("utf-8", "surrogatepass")
        return start + len(raw[:col].decode("utf-8", "replace"))


# ---------------------------------------------------------------- brace languages: a lexer

# Token kinds: "id" identifiers/keywords, "p" punctuation (one char), "s" string/char/regex/template.


def lex(text: str, lang: str) -> List[Tok]:
    """Significant tokens with offsets; comments dropped, literals kept as opaque "s" tokens."""
    toks: List[Tok] = []
    n = len(text)
    i = 0
    ident = _IDENT.get()
    tpl_stack: List[int] = []  # brace depth at which each open template `${` resumes the template
    depth = 0
    while i < n:
        c = text[i]
        if c in " \t\r\n\f\v\ufeff\u00a0\u2028\u2029":
            i += 1
            continue
        if c == "/" and i + 1 < n:
            d = text[i + 1]
            if d == "/":
                j = text.find("\n", i)
                i = n if j < 0 else j
                continue
            if d == "*":
                i = _block_comment_end(text, i, nested=(lang == "rust"))
                continue
            if lang == "js" and _regex_allowed(toks):
                j = _regex_end(text, i)
                toks.append(("s", text[i:j], i, j))
                i = j
                continue
        m = ident.match(text, i)
        if m:
            j = m.end()
            word = m.group()
            if lang == "rust" and j < n and text[j] in "\"#" and word in ("r", "br", "cr"):
                k = _rust_raw_end(text, j)
                if k:
                    toks.append(("s", text[i:k], i, k))
                    i = k
                    continue
                raw = ident.match(text, j + 1) if word == "r" and text[j] == "#" else None
                if raw:  # a raw identifier, `r#type`: one token, which no keyword test mistakes for `type`
                    toks.append(("id", "r#" + raw.group(), i, raw.end()))
                    i = raw.end()
                    continue
            if lang == "rust" and j < n and text[j] == "'" and word in ("b",):
                k = _quote_end(text, j, "'")
                toks.append(("s", text[i:k], i, k))
                i = k
                continue
            toks.append(("id", word, i, j))
            i = j
            continue
        if c == '"':
            j = _quote_end(text, i, '"')
            toks.append(("s", text[i:j], i, j))
            i = j
            continue
        if c == "'":
            if lang == "rust":
                j = _rust_quote(text, i)
                if j < 0:  # a lifetime or label: 'a
                    toks.append(("p", c, i, i + 1))
                    i += 1
                    continue
            else:
                j = _quote_end(text, i, "'")
            toks.append(("s", text[i:j], i, j))
            i = j
            continue
        if c == "`":
            if lang == "go":
                j = text.find("`", i + 1)
                j = n if j < 0 else j + 1
                toks.append(("s", text[i:j], i, j))
                i = j
                continue
            if lang == "js":
                j, opened = _template_part(text, i + 1)
                toks.append(("s", text[i:j], i, j))
                if opened:
                    tpl_stack.append(depth)
                    depth += 1
                    toks.append(("p", "(", j - 1, j))  # `${` opens an expression group
                i = j
                continue
        if c.isdigit():
            m = _NUMBER.match(text, i)
            j = m.end() if m else i + 1
            toks.append(("s", text[i:j], i, j))
            i = j
            continue
        if lang == "js" and c == "}" and tpl_stack and tpl_stack[-1] == depth - 1:
            tpl_stack.pop()
            depth -= 1
            toks.append(("p", ")", i, i + 1))
            j, opened = _template_part(text, i + 1)
            toks.append(("s", text[i:j], i, j))
            if opened:
                tpl_stack.append(depth)
                depth += 1
                toks.append(("p", "(", j - 1, j))
            i = j
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        toks.append(("p", c, i, i + 1))
        i += 1
    return toks


_IDENT = _Lazy(r"[A-Za-z_$\u0080-\U0010ffff][\w$\u0080-\U0010ffff]*")  # (past the BMP too: `fn 𝔘()`)
_NUMBER = _Lazy(r"[0-9][0-9A-Za-z_.]*")
_RUST_CHAR = _Lazy(r"'([^'\\\n]{1,2})'")
_JS_REGEX_AFTER_WORDS = {
    "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw",
    "case", "do", "else", "yield", "await",
}


def _block_comment_end(text: str, i: int, nested: bool) -> int:
    if not nested:
        j = text.find("*/", i + 2)
        return len(text) if j < 0 else j + 2
    level, k, n = 0, i, len(text)
    while k < n:
        if text.startswith("/*", k):
            level += 1
            k += 2
        elif text.startswith("*/", k):
            level -= 1
            k += 2
            if level == 0:
                return k
        else:
            k += 1
    return n


def _quote_end(text: str, i: int, q: str) -> int:
    """End of a quoted literal starting at i (backslash escapes); an unclosed one ends at the line."""
    k, n = i + 1, len(text)
    while k < n:
        c = text[k]
        if c == "\\":
            k += 2
            continue
        if c == q:
            return k + 1
        if c == "\n" and q != '"':
            return k
        k += 1
    return n


def _rust_quote(text: str, i: int) -> int:
    """A Rust char literal's end, or -1 when the quote starts a lifetime/label."""
    if i + 1 < len(text) and text[i + 1] == "\\":
        return _quote_end(text, i, "'")
    if i + 2 < len(text) and text[i + 2] == "'":
        return i + 3
    m = _RUST_CHAR.match(text, i)  # astral or combined chars
    if m and not _IDENT.fullmatch(m.group(1)):
        return m.end()
    return -1


def _rust_raw_end(text: str, j: int) -> int:
    """End of r"…" / r#"…"# starting after the prefix at j, or 0 when it is not a raw string."""
    k = j
    while k < len(text) and text[k] == "#":
        k += 1
    if k >= len(text) or text[k] != '"':
        return 0
    close = '"' + "#" * (k - j)
    e = text.find(close, k + 1)
    return len(text) if e < 0 else e + len(close)


def _template_part(text: str, k: int) -> Tuple[int, bool]:
    """Scan a template literal chunk from k: (end, True) at `${`, (end, False) at the closing backtick."""
    n = len(text)
    while k < n:
        c = text[k]
        if c == "\\":
            k += 2
            continue
        if c == "`":
            return k + 1, False
        if c == "$" and k + 1 < n and text[k + 1] == "{":
            return k + 2, True
        k += 1
    return n, False


def _regex_allowed(toks: List[Tok]) -> bool:
    """JS: does a `/` here start a regex literal? Yes unless it follows an operand."""
    if not toks:
        return True
    kind, val, _s, _e = toks[-1]
    if kind == "s":
        return False
    if kind == "id":
        return val in _JS_REGEX_AFTER_WORDS
    return val not in ")]}"


def _regex_end(text: str, i: int) -> int:
    k, n, in_class = i + 1, len(text), False
    while k < n:
        c = text[k]
        if c == "\\":
            k += 2
            continue
        if c == "\n":
            return k
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
        elif c == "/":
            k += 1
            while k < n and (text[k].isalnum() or text[k] == "_"):
                k += 1
            return k
        k += 1
    return n


def match_brackets(toks: List[Tok]) -> List[int]:
    """For each opening bracket token the index of its closer (-1 if unbalanced); ValueError when mismatched."""
    match = [-1] * len(toks)
    stack: List[int] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for idx, (kind, val, _s, _e) in enumerate(toks):
        if kind != "p":
            continue
        if val in "([{":
            stack.append(idx)
        elif val in pairs:
            if not stack or toks[stack[-1]][1] != pairs[val]:
                raise ValueError("unbalanced brackets")
            match[stack.pop()] = idx
    if stack:
        raise ValueError("unbalanced brackets")
    return match


SOURCE: List[str] = [""]


def newline_between(toks: List[Tok], k: int) -> bool:
    """Go's semicolon insertion: does a line break separate token k from the one before it?"""
    return "\n" in SOURCE[0][toks[k - 1][3]:toks[k][2]]


def with_source(fn: Callable[[str], List[Span]]) -> Callable[[str], List[Span]]:
    """Go's newline-sensitive rules need the source next to the tokens; keep it for the call."""

    def run(text: str) -> List[Span]:
        SOURCE[0] = text
        try:
            return fn(text)
        finally:
            SOURCE[0] = ""

    return run
