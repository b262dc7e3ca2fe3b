"""Definition anchors: `qualified.name -> sha12(normalized source of that definition)`.
"""

from __future__ import annotations

import bisect
import hashlib

from priors.snapshot.brace_anchors import go_spans, js_spans, rust_spans
from priors.snapshot.hashing import IndentedLines, indent_counts, indented_utf8, normalized_utf8, squeezed_offsets
from priors.snapshot.lexer import Utf8Offsets, line_starts, with_source
from priors.snapshot.pyscan import python_spans_fast

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from typing import Callable, Dict, List, Optional, Tuple

    from priors.snapshot.lexer import Span


# Bump whenever any extractor's output could change: the snapshot cache keys on it.
# 2: Python read by the scanner (pyscan), a file that does not parse keeps its anchors;
# 3: a Python definition keeps its lines' relative indentation (issue 28)
VERSION = "3"

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


def anchors_for(path: str, text: str, squeezed: Optional[bytes] = None,
                lines: Optional[IndentedLines] = None) -> List[Tuple[str, str]]:
    """`[(qualname, sha12)]` in source order for one file's text; [] when unsupported or unparseable.

    `squeezed`, when given, is `hashing.squeeze` of the text's UTF-8 (the file's own hash computed it
    already): the definitions are then cut from it instead of normalized one by one. `lines`, for a
    file whose indentation counts, is its `IndentedLines` (likewise computed for the file's hash)."""
    lang = language_of(path)
    if lang is None:
        return []
    try:
        spans = EXTRACTORS[lang](text)
    except Exception:  # a file we cannot make sense of gets no anchors — never a failed snapshot
        return []
    indented = indent_counts(path)
    return hash_spans(text, disambiguate(spans), indented, None if indented else squeezed,
                      lines if indented else None)


def hash_spans(text: str, spans: List[Span], indented: bool = False, squeezed: Optional[bytes] = None,
               lines: Optional[IndentedLines] = None) -> List[Tuple[str, str]]:
    """Hash each definition's normalized source: only its own text counts, never its position.

    Same result as `sha12(normalize(segment))`, through the byte-level fast path; `indented`: the
    language's indentation is syntax, kept relative to the definition's first line (`indented_utf8`),
    joined from the file's measured `lines` when given.
    """
    if squeezed is not None and not indented:  # (a whitespace-blind text: never where indentation counts)
        data = text.encode("utf-8")
        at = squeezed_offsets(data, [p for _n, s, e in spans for p in (s, e)], None if len(data) == len(text) else text)
        return [(name, hashlib.sha256(squeezed[at[s]:at[e]].strip(b" ")).hexdigest()[:12]) for name, s, e in spans]
    norm = indented_utf8 if indented else normalized_utf8
    if lines is not None and indented:
        if text.isascii():
            cut = lines.span_hashes([(s, e) for _n, s, e in spans])
        else:
            at = _byte_offsets(text, spans)
            cut = lines.span_hashes([(at[s], at[e]) for _n, s, e in spans])
    else:
        cut = [None] * len(spans)
    return [(name, h if h is not None else hashlib.sha256(norm(text[start:end].encode("utf-8", "surrogatepass")))
             .hexdigest()[:12]) for (name, start, end), h in zip(spans, cut)]


def _byte_offsets(text: str, spans: List[Span]) -> Dict[int, int]:
    """Where each span's character offsets fall in the text's UTF-8, counted on from one to the next."""
    at: Dict[int, int] = {}
    char = byte = 0
    for point in sorted({p for _n, s, e in spans for p in (s, e)}):
        byte += len(text[char:point].encode("utf-8", "surrogatepass"))
        char = point
        at[point] = byte
    return at


def disambiguate(spans: List[Span]) -> List[Span]:
    """Sort by position and give a repeated qualified name `~2`, `~3`… in source order.

    A definition nested in a renamed one inherits the renamed prefix
    (`C~2.m`), so every name in a file is unique and stable under edits
    elsewhere.
    """
    ordered = sorted(spans, key=lambda s: (s[1], -s[2]))
    if len({s[0] for s in ordered}) == len(ordered):
        return ordered  # no name repeats (most files): nothing to rename
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


def python_spans(text: str) -> List[Span]:
    """Functions, classes and methods, decorators included; nested ones as `outer.inner`.

    The scanner (`pyscan`) answers for almost every file, at a fifth of `ast`'s cost; `ast` answers
    where the scanner is not sure it would give the same spans."""
    fast = python_spans_fast(text)
    return fast if fast is not None else python_spans_ast(text)


def python_spans_ast(text: str) -> List[Span]:
    """`python_spans` through `ast`: the reference the scanner is held to.

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
    starts = line_starts(source)
    utf8 = Utf8Offsets(source, starts)
    spans: List[Span] = []
    stack: List[Tuple[list, str]] = [(tree.body, "")]
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    while stack:
        body, prefix = stack.pop()
        for node in body:
            if isinstance(node, defs):
                qual = prefix + node.name
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                start = starts[first - 1]
                assert node.end_lineno is not None and node.end_col_offset is not None  # ast.parse sets both
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


EXTRACTORS: Dict[str, Callable[[str], List[Span]]] = {
    "python": python_spans,
    "js": with_source(js_spans),
    "go": with_source(go_spans),
    "rust": rust_spans,
}


def line_spans(path: str, text: str) -> List[Tuple[str, int, int]]:
    """`[(qualname, first line, last line)]` in source order, names as in the scope map (1-based lines).

    Kept beside a run (`runs/<run>/spans.json`), never in the scope map: a location like
    `src/a.py:120` resolves to the innermost definition spanning that line.
    """
    lang = language_of(path)
    if lang is None:
        return []
    try:
        spans = disambiguate(EXTRACTORS[lang](text))
    except Exception:  # as anchors_for: a file we cannot parse has no definitions
        return []

    starts = line_starts(text)
    out = []
    for name, start, end in spans:
        first = bisect.bisect_right(starts, start)
        last = bisect.bisect_right(starts, max(start, end - 1))
        out.append((name, first, last))
    return out
