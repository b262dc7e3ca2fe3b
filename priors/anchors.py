"""Definition anchors: `qualified.name -> sha12(normalized source of that definition)`.

An anchor lets a prior point at one function instead of a whole file, so an
edit elsewhere in the file does not make it stale. Every extractor here is a
pure function `text -> [(qualname, start, end)]` over character offsets; the
hashing is shared. Python goes through `ast` (exact by construction); the
brace languages (JavaScript/TypeScript, Go, Rust) go through a small lexer
that understands comments, strings, template literals, raw strings and
character literals, so a brace or a keyword inside them never confuses the
structure. When an extractor cannot make sense of a file it reports no
anchors for it rather than wrong ones.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Dict, List, Optional, Tuple

from priors.canonical import normalize, sha12

# Bump whenever any extractor's output could change: the snapshot cache keys on it.
VERSION = "1"

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


Span = Tuple[str, int, int]  # (qualified name, start offset, end offset) in characters

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".jsx": "js",
    ".ts": "js",
    ".tsx": "js",
    ".mts": "js",
    ".cts": "js",
    ".go": "go",
    ".rs": "rust",
}


def language_of(path: str) -> Optional[str]:
    """The extractor for a path, chosen by extension (case-insensitive); None when unsupported."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return LANGUAGES.get(path[dot:].lower())


def anchors_for(path: str, text: str) -> List[Tuple[str, str]]:
    """`[(qualname, sha12)]` in source order for one file's text; [] when unsupported or unparseable."""
    lang = language_of(path)
    if lang is None:
        return []
    try:
        spans = EXTRACTORS[lang](text)
    except Exception:  # a file we cannot make sense of gets no anchors — never a failed snapshot
        return []
    return hash_spans(text, disambiguate(spans))


def hash_spans(text: str, spans: List[Span]) -> List[Tuple[str, str]]:
    """Hash each definition's normalized source: only its own text counts, never its position.

    Same result as `sha12(normalize(segment))`, through the byte-level fast path.
    """
    from priors.snapshot import normalized_utf8

    out = []
    for name, start, end in spans:
        seg = text[start:end].encode("utf-8", "surrogatepass")
        out.append((name, hashlib.sha256(normalized_utf8(seg)).hexdigest()[:12]))
    return out


def disambiguate(spans: List[Span]) -> List[Span]:
    """Sort by position and give a repeated qualified name `~2`, `~3`… in source order.

    A definition nested in a renamed one inherits the renamed prefix
    (`C~2.m`), so every name in a file is unique and stable under edits
    elsewhere.
    """
    ordered = sorted(spans, key=lambda s: (s[1], -s[2]))
    seen: Dict[str, int] = {}
    renamed: List[Tuple[int, int, str, str]] = []  # open ancestors: (start, end, raw, final)
    out: List[Span] = []
    for name, start, end in ordered:
        while renamed and renamed[-1][1] <= start:
            renamed.pop()
        final = name
        for _s, _e, raw, fin in reversed(renamed):
            if name.startswith(raw + "."):
                final = fin + name[len(raw):]
                break
        count = seen.get(final, 0) + 1
        seen[final] = count
        if count > 1:
            final = f"{final}~{count}"
        out.append((final, start, end))
        renamed.append((start, end, name, final))
    return out


# ---------------------------------------------------------------- Python (ast)

_PY_LINE_END = _Lazy(r"\r\n|\r|\n")


def python_spans(text: str) -> List[Span]:
    """Functions, classes and methods via `ast`, decorators included; nested ones as `outer.inner`.

    Only statement lists are walked (a definition is always a statement),
    which skips the expression trees that make up most of a module.
    """
    import ast
    import warnings

    source = text[1:] if text.startswith("\ufeff") else text
    shift = len(text) - len(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a user's `1if x else 2` is their business: no SyntaxWarning on our stderr
        tree = ast.parse(source)
    line_starts = _line_starts(source)
    utf8 = _Utf8Offsets(source, line_starts)
    spans: List[Span] = []
    stack: List[Tuple[list, str]] = [(tree.body, "")]
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    while stack:
        body, prefix = stack.pop()
        for node in body:
            if isinstance(node, defs):
                qual = prefix + node.name
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                start = line_starts[first - 1]
                end = utf8.offset(node.end_lineno, node.end_col_offset)
                spans.append((qual, start + shift, end + shift))
                stack.append((node.body, qual + "."))
                continue
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(node, field, None)
                if isinstance(sub, list):
                    stack.append((sub, prefix))
            for holder in getattr(node, "handlers", None) or []:
                stack.append((holder.body, prefix))
            for case in getattr(node, "cases", None) or []:
                stack.append((case.body, prefix))
    return spans


def _line_starts(text: str) -> List[int]:
    """Character offset of each line, splitting on \\r\\n, \\r and \\n as Python's tokenizer does."""
    if "\r" not in text:
        from itertools import accumulate

        return [0, *accumulate(len(line) + 1 for line in text.split("\n")[:-1])]
    starts = [0]
    starts.extend(m.end() for m in _PY_LINE_END.finditer(text))
    return starts


class _Utf8Offsets:
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
Tok = Tuple[str, str, int, int]


def _lex(text: str, lang: str) -> List[Tok]:
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


_IDENT = _Lazy(r"[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*")
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


def _match_brackets(toks: List[Tok]) -> List[int]:
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


# ---------------------------------------------------------------- Go

def go_spans(text: str) -> List[Span]:
    """Top-level `func` (methods as `Type.Method`) and `type Name …` declarations, grouped or not."""
    toks = _lex(text, "go")
    match = _match_brackets(toks)
    spans: List[Span] = []
    i, n = 0, len(toks)
    while i < n:
        kind, val, start, _ = toks[i]
        if kind == "p" and val in "([{":
            i = match[i] + 1
            continue
        if kind == "id" and val == "func":
            i = _go_func(toks, match, i, spans)
            continue
        if kind == "id" and val == "type":
            i = _go_type(toks, match, i, spans)
            continue
        i += 1
    return spans


def _go_func(toks: List[Tok], match: List[int], i: int, spans: List[Span]) -> int:
    j = i + 1
    recv = ""
    if j < len(toks) and toks[j][1] == "(":
        # receiver `(r *T[K, V])`: the type name is the last identifier before any `[`
        names = []
        for t in toks[j + 1:match[j]]:
            if t[1] == "[":
                break
            if t[0] == "id":
                names.append(t[1])
        recv = names[-1] if names else ""
        j = match[j] + 1
    if j >= len(toks) or toks[j][0] != "id":
        return i + 1
    name = toks[j][1]
    k = j + 1
    end = None
    while k < len(toks):
        kind, val, _s, e = toks[k]
        if kind == "p" and val in "([":
            k = match[k] + 1
            continue
        if kind == "p" and val == "{":
            if _go_brace_is_type(toks, k):
                k = match[k] + 1
                continue
            end = toks[match[k]][3]
            k = match[k] + 1
            break
        if kind == "p" and (val == ";" or val == "}"):
            break
        if _newline_between(toks, k):
            break
        k += 1
    if end is None:
        end = toks[k - 1][3]
    spans.append(((recv + "." if recv else "") + name, toks[i][2], end))
    return k


_GO_TYPE_BRACE = {"struct", "interface"}


def _go_brace_is_type(toks: List[Tok], k: int) -> bool:
    """In a result list `func f() struct{…} {`, a brace after struct/interface is a type, not the body."""
    return k > 0 and toks[k - 1][0] == "id" and toks[k - 1][1] in _GO_TYPE_BRACE


_SRC: List[str] = [""]


def _newline_between(toks: List[Tok], k: int) -> bool:
    """Go's semicolon insertion: does a line break separate token k from the one before it?"""
    return "\n" in _SRC[0][toks[k - 1][3]:toks[k][2]]


def _go_type(toks: List[Tok], match: List[int], i: int, spans: List[Span]) -> int:
    j = i + 1
    if j < len(toks) and toks[j][1] == "(":
        close = match[j]
        k = j + 1
        while k < close:
            if toks[k][0] == "id":
                k = _go_type_spec(toks, match, k, close, spans)
            else:
                k += 1
        return close + 1
    if j < len(toks) and toks[j][0] == "id":
        return _go_type_spec(toks, match, j, len(toks), spans, start=toks[i][2])
    return i + 1


def _go_type_spec(toks, match, j, limit, spans, start=None) -> int:
    name = toks[j][1]
    k = j + 1
    while k < limit:
        kind, val, _s, _e = toks[k]
        if kind == "p" and val in "([{":
            k = match[k] + 1
            if val == "{":
                break
            continue
        if kind == "p" and val == ";":
            break
        if k > j + 1 and _newline_between(toks, k) and not _go_continues(toks, k):
            break
        k += 1
    spans.append((name, toks[j][2] if start is None else start, toks[k - 1][3]))
    return k


def _go_continues(toks: List[Tok], k: int) -> bool:
    prev = toks[k - 1]
    return prev[0] == "p" and prev[1] in ".,=*[(|&"


# ---------------------------------------------------------------- Rust

_RUST_ITEMS = {"fn", "struct", "enum", "trait", "union", "impl", "mod"}
_RUST_QUALIFIERS = {"pub", "async", "const", "unsafe", "extern", "default", "crate", "in", "self", "super"}


def rust_spans(text: str) -> List[Span]:
    """`fn`, `struct`, `enum`, `union`, `trait`, `mod` items; methods as `Type.method` inside `impl`/`trait`.

    An item's span starts at its first outer attribute (`#[…]`) or qualifier
    (`pub`, `async`, `unsafe`, `extern "C"`…) — the Rust analogue of decorators.
    """
    toks = _lex(text, "rust")
    match = _match_brackets(toks)
    spans: List[Span] = []
    _rust_block(toks, match, 0, len(toks), "", spans)
    return spans


def _rust_block(toks, match, i, limit, prefix, spans) -> None:
    item_start = None
    while i < limit:
        kind, val, start, _e = toks[i]
        if kind == "p" and val == "#" and i + 1 < limit and toks[i + 1][1] in ("[", "!"):
            j = i + 1 if toks[i + 1][1] == "[" else i + 2
            if j < limit and toks[j][1] == "[":
                if toks[i + 1][1] == "[" and item_start is None:
                    item_start = start
                i = match[j] + 1
                continue
        if kind == "id" and val in _RUST_QUALIFIERS:
            if item_start is None:
                item_start = start
            i += 1
            if i < limit and toks[i][1] == "(":  # pub(crate)
                i = match[i] + 1
            continue
        if kind == "s" and item_start is not None and toks[i - 1][1] == "extern":
            i += 1
            continue
        if kind == "id" and val in _RUST_ITEMS:
            i = _rust_item(toks, match, i, limit, prefix, spans, start if item_start is None else item_start)
            item_start = None
            continue
        item_start = None
        if kind == "p" and val in "([{":
            inner_end = match[i]
            if val == "{" and not _rust_macro_body(toks, i):
                _rust_block(toks, match, i + 1, inner_end, prefix, spans)
            i = inner_end + 1
            continue
        i += 1


def _rust_macro_body(toks, i) -> bool:
    """`name! { … }` and `macro_rules! name { … }` bodies are token soup, not items."""
    return (i >= 1 and toks[i - 1][1] == "!") or (i >= 2 and toks[i - 1][0] == "id" and toks[i - 2][1] == "!")


def _rust_item(toks, match, i, limit, prefix, spans, start) -> int:
    word = toks[i][1]
    j = i + 1
    if word == "impl":
        name, body = _rust_impl_target(toks, match, j, limit)
        if body is None:
            return j
        _rust_block(toks, match, body + 1, match[body], prefix + name + ".", spans)
        return match[body] + 1
    if j >= limit or toks[j][0] != "id":
        return j
    name = toks[j][1]
    k = j + 1
    while k < limit:
        kind, val, _s, _e = toks[k]
        if kind == "p" and val == "{":
            close = match[k]
            spans.append((prefix + name, start, toks[close][3]))
            if word in ("fn", "mod", "trait"):
                _rust_block(toks, match, k + 1, close, prefix + name + ".", spans)
            return close + 1
        if kind == "p" and val in "([":
            k = match[k] + 1
            continue
        if kind == "p" and val == ";":
            spans.append((prefix + name, start, toks[k][3]))
            return k + 1
        if kind == "p" and val == "}":
            return k
        k += 1
    return k


def _rust_impl_target(toks, match, j, limit) -> Tuple[str, Optional[int]]:
    """`impl<T> Trait for Type<T> where … {` → ("Type", index of `{`)."""
    angle = 0
    last = ""
    k = j
    while k < limit:
        kind, val, _s, _e = toks[k]
        if kind == "p" and val == "<":
            angle += 1
        elif kind == "p" and val == ">" and toks[k - 1][1] != "-":
            angle -= 1
        elif kind == "p" and val in "([":
            k = match[k]
        elif kind == "p" and val == "{" and angle <= 0:
            return last, k
        elif kind == "p" and val == ";":
            return last, None
        elif kind == "id" and val == "where" and angle <= 0:
            angle = -(10 ** 6)  # from here on only look for the body brace
        elif kind == "id" and angle == 0 and val not in ("for", "dyn", "unsafe", "mut", "const"):
            last = val
        k += 1
    return last, None


# ---------------------------------------------------------------- JavaScript / TypeScript

_JS_MODIFIERS = {"export", "default", "declare", "abstract", "async", "static", "public", "private",
                 "protected", "readonly", "override", "accessor", "get", "set"}
_JS_CONTAINERS = {"class", "interface", "namespace", "module", "enum"}


def js_spans(text: str) -> List[Span]:
    """Functions, classes (with methods as `Class.method`), TS interfaces/enums/namespaces, and
    `const f = (…) => …` / `const f = function …` bindings. Decorators are part of the span."""
    toks = _lex(text, "js")
    match = _match_brackets(toks)
    spans: List[Span] = []
    _js_block(toks, match, 0, len(toks), "", spans, in_class=False)
    return spans


def _js_block(toks, match, i, limit, prefix, spans, in_class, stmt_start=True) -> None:
    lead: Optional[int] = None  # offset where decorators/modifiers of the next definition began
    while i < limit:
        kind, val, start, _e = toks[i]
        if not stmt_start and lead is None and kind == "id" and _js_asi(toks, i):
            stmt_start = True
        if kind == "p" and val == "@" and i + 1 < limit and toks[i + 1][0] == "id":
            if lead is None:
                lead = start
            i += 2
            while i + 1 < limit and toks[i][1] == "." and toks[i + 1][0] == "id":
                i += 2
            if i < limit and toks[i][1] == "(":
                i = match[i] + 1
            continue
        if kind == "id" and stmt_start and val in _JS_MODIFIERS and i + 1 < limit and _js_modifier_applies(toks, i):
            if lead is None:
                lead = start
            i += 1
            continue
        if kind == "id" and stmt_start and val == "function":
            i = _js_function(toks, match, i, limit, prefix, spans, lead if lead is not None else start)
            lead, stmt_start = None, True
            continue
        if (kind == "id" and (stmt_start or val == "class") and val in _JS_CONTAINERS and i + 1 < limit
                and toks[i + 1][0] == "id" and toks[i + 1][1] not in ("extends", "implements")):
            i = _js_container(toks, match, i, limit, prefix, spans, lead if lead is not None else start)
            lead, stmt_start = None, True
            continue
        if kind == "id" and stmt_start and not in_class and val in ("const", "let", "var"):
            i = _js_binding(toks, match, i, limit, prefix, spans, lead if lead is not None else start)
            lead, stmt_start = None, True
            continue
        if in_class and stmt_start and (kind == "id" or (kind == "p" and val in "#*[") or kind == "s"):
            i = _js_member(toks, match, i, limit, prefix, spans, lead if lead is not None else start)
            lead, stmt_start = None, True
            continue
        if kind == "id" and val == "function" and i + 1 < limit and toks[i + 1][0] == "id":
            # a named function expression — `run(function step() {…})`, `exports.f = function f() {…}`
            i = _js_function(toks, match, i, limit, prefix, spans, start)
            lead, stmt_start = None, False
            continue
        lead = None
        if kind == "p" and val in "([{":
            close = match[i]
            # descend everywhere: IIFE/UMD wrappers and callbacks hold most definitions of older code
            _js_block(toks, match, i + 1, close, prefix, spans, in_class=False, stmt_start=val == "{")
            i = close + 1
            stmt_start = val == "{"
            continue
        stmt_start = kind == "p" and val in ";}"
        i += 1


_JS_CONTINUES = set("=([{,:?.+-*/%&|^!~<>")


def _js_asi(toks, k) -> bool:
    """Automatic semicolon insertion, approximately: a line break between two tokens ends a statement
    unless either side is an operator or opener that carries the expression over the line."""
    if k <= 0:
        return False
    prev, cur = toks[k - 1], toks[k]
    if "\n" not in _SRC[0][prev[3]:cur[2]]:
        return False
    if prev[0] == "p" and prev[1] in _JS_CONTINUES:
        return False
    return not (cur[0] == "p" and cur[1] in _JS_CONTINUES and cur[1] not in "([{!~")


def _js_modifier_applies(toks, i) -> bool:
    """`get`/`static`/`async`… are modifiers only when another name or keyword follows, not `get(`."""
    nxt = toks[i + 1]
    return nxt[0] == "id" or (nxt[0] == "p" and nxt[1] in "#*[") or nxt[0] == "s"


def _js_function(toks, match, i, limit, prefix, spans, start) -> int:
    j = i + 1
    if j < limit and toks[j][1] == "*":
        j += 1
    if j >= limit or toks[j][0] != "id":
        return i + 1
    name = toks[j][1]
    return _js_body(toks, match, j + 1, limit, prefix + name, spans, start, descend=True)


def _js_body(toks, match, k, limit, qual, spans, start, descend, stop_at_semicolon=True) -> int:
    """Skip parameters/types up to the body `{…}`, record the span, and look for nested definitions."""
    angle = 0
    first = k
    while k < limit:
        kind, val, _s, _e = toks[k]
        if k > first and not angle and _js_asi(toks, k) and not (kind == "p" and val == "{"):
            spans.append((qual, start, toks[k - 1][3]))  # a signature with no body (overload, abstract)
            return k
        if kind == "p" and val in "([":
            k = match[k] + 1
            continue
        if kind == "p" and val == "<":
            angle += 1
        elif kind == "p" and val == ">" and angle:
            angle -= 1
        elif kind == "p" and val == "{" and not angle and not _js_type_brace(toks, k):
            close = match[k]
            spans.append((qual, start, toks[close][3]))
            if descend:
                _js_block(toks, match, k + 1, close, qual + ".", spans, in_class=False)
            return close + 1
        elif kind == "p" and val == "{":
            k = match[k] + 1
            continue
        elif kind == "p" and (val == ";" or val == "}") and stop_at_semicolon:
            spans.append((qual, start, toks[k][3] if val == ";" else toks[k - 1][3]))  # overload/abstract
            return k + 1 if val == ";" else k
        k += 1
    return k


def _js_type_brace(toks, k) -> bool:
    """`f(): { a: number } {` — a brace right after `:` (or `|`, `&`, `<`, `,`) is a type literal."""
    prev = toks[k - 1]
    return prev[0] == "p" and prev[1] in ":|&<,"


def _js_container(toks, match, i, limit, prefix, spans, start) -> int:
    word = toks[i][1]
    name = toks[i + 1][1]
    k = i + 2
    while k < limit:
        kind, val, _s, _e = toks[k]
        if kind == "p" and val in "([":
            k = match[k] + 1
            continue
        if kind == "p" and val == "{":
            close = match[k]
            spans.append((prefix + name, start, toks[close][3]))
            _js_block(toks, match, k + 1, close, prefix + name + ".", spans,
                      in_class=word in ("class", "interface"))
            return close + 1
        if kind == "p" and val in ";}":
            return k
        k += 1
    return k


def _js_binding(toks, match, i, limit, prefix, spans, start) -> int:
    """`const f = (…) => {…}` / `= async x => …` / `= function …`: the binding is a function anchor."""
    j = i + 1
    if j >= limit or toks[j][0] != "id":
        return j
    name = toks[j][1]
    k = j + 1
    if k < limit and toks[k][1] == ":":  # a type annotation: skip to `=`
        while k < limit and toks[k][1] not in ("=", ";"):
            k = match[k] + 1 if toks[k][1] in "([{" else k + 1
    if k >= limit or toks[k][1] != "=":
        return k
    k += 1
    if k < limit and toks[k][1] == "async":
        k += 1
    if k < limit and toks[k][1] == "function":
        k += 1
        if k < limit and toks[k][1] == "*":
            k += 1
        if k < limit and toks[k][0] == "id":
            k += 1
        return _js_body(toks, match, k, limit, prefix + name, spans, start, descend=True)
    # arrow: `(params) =>` or `x =>`, optionally with a return type
    if k < limit and toks[k][1] == "<":
        while k < limit and toks[k][1] != "(":
            k += 1
    if k < limit and toks[k][1] == "(":
        k = match[k] + 1
        if k < limit and toks[k][1] == ":":  # a return type, up to `=>`
            ret = k
            while k < limit and toks[k][1] not in ("=", ";", "{", "}") and not (k > ret + 1 and _js_asi(toks, k)):
                k = match[k] + 1 if toks[k][1] in "([" else k + 1
    elif k < limit and toks[k][0] == "id":
        k += 1
    else:
        return k
    if not (k + 1 < limit and toks[k][1] == "=" and toks[k + 1][1] == ">"):
        return k
    k += 2
    if k < limit and toks[k][1] == "{":
        close = match[k]
        spans.append((prefix + name, start, toks[close][3]))
        _js_block(toks, match, k + 1, close, prefix + name + ".", spans, in_class=False)
        return close + 1
    # expression body: up to `;`, a statement-ending line break, or the end of the enclosing block
    body = k
    while k < limit and toks[k][1] not in (";", "}") and not (k > body and _js_asi(toks, k)):
        k = match[k] + 1 if toks[k][1] in "([{" else k + 1
    end = toks[k][3] if k < limit and toks[k][1] == ";" else toks[k - 1][3]
    spans.append((prefix + name, start, end))
    return k


def _js_member(toks, match, i, limit, prefix, spans, start) -> int:
    """A class/interface member: a method (name then `(` or `<`) is an anchor; fields are skipped."""
    k = i
    if toks[k][1] == "*":
        k += 1
    if k < limit and toks[k][1] == "#":
        k += 1
    if k >= limit:
        return k
    name_tok = toks[k]
    if name_tok[1] == "[":  # computed name: anchored as `[key]` when the key is one name or string
        inner = toks[k + 1:match[k]]
        name = "[" + inner[0][1] + "]" if len(inner) == 1 and inner[0][0] in ("id", "s") else None
        k = match[k] + 1
    else:
        name = name_tok[1] if name_tok[0] == "id" else None
        if name_tok[0] == "s" and name_tok[1][:1] in "\"'":
            name = name_tok[1][1:-1]
        k += 1
    if k < limit and toks[k][1] == "?":
        k += 1
    if name is not None and k < limit and toks[k][1] in ("(", "<"):
        if toks[i][1] == "#" or (i + 1 < limit and toks[i][1] == "*" and toks[i + 1][1] == "#"):
            name = "#" + name
        return _js_body(toks, match, k, limit, prefix + name, spans, start, descend=True)
    # a field or index signature: skip to the end of the member
    while k < limit and toks[k][1] not in (";", "}") and not (k > i + 1 and _js_asi(toks, k)):
        k = match[k] + 1 if toks[k][1] in "([{" else k + 1
    return k + 1 if k < limit and toks[k][1] == ";" else k


def _with_source(fn: Callable[[str], List[Span]]) -> Callable[[str], List[Span]]:
    """Go's newline-sensitive rules need the source next to the tokens; keep it for the call."""

    def run(text: str) -> List[Span]:
        _SRC[0] = text
        try:
            return fn(text)
        finally:
            _SRC[0] = ""

    return run


EXTRACTORS: Dict[str, Callable[[str], List[Span]]] = {
    "python": python_spans,
    "js": _with_source(js_spans),
    "go": _with_source(go_spans),
    "rust": rust_spans,
}
