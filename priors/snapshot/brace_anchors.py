"""Definitions in Go, Rust and JavaScript/TypeScript, found over the lexer's tokens.
"""

from __future__ import annotations

from priors.snapshot.lexer import (
    SOURCE,
    lex,
    match_brackets,
    newline_between,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from typing import List, Optional, Tuple

    from priors.snapshot.lexer import Span, Tok


# ---------------------------------------------------------------- Go

def go_spans(text: str) -> List[Span]:
    """Top-level `func` (methods as `Type.Method`) and `type Name …` declarations, grouped or not."""
    toks = lex(text, "go")
    match = match_brackets(toks)
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
        if newline_between(toks, k):
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
        if k > j + 1 and newline_between(toks, k) and not _go_continues(toks, k):
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
    toks = lex(text, "rust")
    match = match_brackets(toks)
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
    name = _unraw(toks[j][1])
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


def _unraw(name: str) -> str:
    """A raw identifier's name: `r#type` is the identifier `type` (and a `#` would end a scope ref's file)."""
    return name[2:] if name.startswith("r#") else name


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
            last = _unraw(val)
        k += 1
    return last, None


# ---------------------------------------------------------------- JavaScript / TypeScript

_JS_MODIFIERS = {"export", "default", "declare", "abstract", "async", "static", "public", "private",
                 "protected", "readonly", "override", "accessor", "get", "set"}
_JS_CONTAINERS = {"class", "interface", "namespace", "module", "enum"}


def js_spans(text: str) -> List[Span]:
    """Functions, classes (with methods as `Class.method`), TS interfaces/enums/namespaces, and
    `const f = (…) => …` / `const f = function …` bindings. Decorators are part of the span."""
    toks = lex(text, "js")
    match = match_brackets(toks)
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
    if "\n" not in SOURCE[0][prev[3]:cur[2]]:
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
