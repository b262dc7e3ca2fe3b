"""The Python scanner (`priors/snapshot/pyscan.py`) gives `ast`'s spans on every file that parses.

Anchors are hashes people's decisions are recorded against: a scanner that cut one definition a
character differently from `ast` would make those decisions look out of date. So it is held to
`ast` on real code (a sample of the standard library), on hand-made corners and on generated
programs; where it is unsure it must say so (None) and `ast` answers.
"""

from __future__ import annotations

import ast
import os
import sys
import sysconfig

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO

sys.path.insert(0, str(REPO))

from priors.snapshot import anchors, pyscan
from priors.snapshot.hashing import normalized_utf8, squeezable, squeeze, squeezed_offsets
from priors.snapshot.pyscan import python_spans_fast
from priors.snapshot.scan import file_result


def ast_spans(text: str):
    return sorted(anchors.python_spans_ast(text))


def agrees(text: str) -> bool:
    """The scanner's answer is `ast`'s (or it declined); only asked of text that parses."""
    fast = python_spans_fast(text)
    return fast is None or sorted(fast) == ast_spans(text)


CORNERS = [
    "",
    "x = 1",
    "def f(): pass",
    "def f(): pass;",
    "def f(): return 1; x = 2\ny = 3\n",
    "def f():\n    x = 1;  # trailing\n\n# comment at column 0\n    # indented comment\ny = 2\n",
    "def f():\n    x = {\n'a': 1,\n}\n    return x\nz = 0\n",
    "def f():\n    return \\\n1\nq = 1\n",
    "def f():\n    x = 1; \\\n\n",
    '@dec\n# between\n@other(1,\n  2)\n\ndef f():\n    """Doc\ndef fake():\nclass Fake:\n    """\n    return 1\n',
    "@ dec\ndef f(): pass\n",
    "class C:\n    '''doc'''\n    @property\n    def v(self):\n        return 1\n"
    "    @v.setter\n    def v(self, x):\n        pass\n    class D:\n        async def m(self): await x\n",
    "if x:\n    def f():\n        pass\nelse:\n    def f():\n        pass\n"
    "try:\n    class A: pass\nexcept E:\n    class A: pass\nfinally:\n    def g(): ...\n",
    "match p:\n    case 1:\n        def m(): pass\n    case _:\n        class K: pass\n",
    "def f(a,\nb=(1,\n2)):\n    return (a\n+ b)\n",
    "def f():\n    s = 'a # not a comment'\n    t = \"it's\"  # 'quote\" in a comment\n    return s\n",
    "def f():\n    return f'{x!r:>{w}} {y[\"k\"]}' + rb'\\d' + '''a''' + \"\"\"b\\\"\"\"\"\"\"\n",
    "def f():\n    return 1\n\n\n   \n",
    "def f():\r\n    return 1\r\nclass C:\r\n    def m(self):\r\n        pass\r\n",
    "\ufeffdef f():\n    pass\n",
    "def f():\n    x = [i\n  for i in y\n    if i]\n    @decorated\n    def inner(): pass\n    return x",
    "class C(\n    Base,\n    metaclass=M):\n    x = 1\n",
    "def f():\n    '''\n    text at a lower indent\n'''\n    return 2\nw = 1\n",
    "def f(): x = '''\nmore'''\nv = 1\n",
    "def a():\n  def b():\n      def c(): pass\n  return b\ndef d(): pass\n",
    "def café(): pass\n",
    "def f():\n\tpass\n",
    "@(\ndec)\ndef f(): pass\n",
    "def f():\n    return f'{{literal}} {a:{w}}' f\"{b['k']}}}\"\n",
]


@pytest.mark.parametrize("text", CORNERS)
def test_corners_agree_with_ast(text):
    ast.parse(text.lstrip("\ufeff"))  # every corner is valid Python
    assert agrees(text)


def test_a_field_holding_the_strings_own_quote_goes_to_ast():
    # Python 3.12 reads `f"{d["k"]}"` as one string, 3.11 as three tokens: only ast knows which.
    assert python_spans_fast('def f():\n    return f"{d["k"]}"\n') is None


# f-strings whose fields Python 3.11 and 3.12 read alike: the scanner answers them itself (each once sent
# the whole file to `ast`: 4% of the standard library's first snapshot went to three files).
SAME_IN_EVERY_PYTHON = [
    'def f(key):\n    if "}" in key:\n        return 1\n',  # `if` before a plain string: no f prefix
    'def f(key):\n    if key:\n        pass\n    elif"{"in key:\n        return 1\n',
    "def f(c):\n    return f\"{c or ','.join(t.split('}')[-1] for t in c)}\"\n",  # the other quote, a brace in it
    "def f():\n    return f'{x:\"}' + f'{3:{\"}\"}>10}' + f'{x!r:^{w}.{p}}' + f\"{ {1: 2} }\" + f'{{{x}}}' + F'{a[1:2]}'\n",
    'def f():\n    return rf"{x:>10}}}" + fR"\\d{n}" + Rf"""{d["k"]}"""\n',
]
# Tokens 3.12 may end elsewhere (its fields may hold the string's own quote), or unusual ones: `ast` reads them.
GO_TO_AST = [
    'def f():\n    return f"{d["k"]}"\n',
    "def f():\n    return f\"{x:'{'}\"'}}\"\n",  # 3.12: a spec `'` and a field holding the string '}"'
    'def f():\n    return f"{a:{{}}}"\n',
    "def f():\n    return f'{a[\"k\"}'\n",
    "def f():\n    return f'{g(\"\\\\n\")}'\n",
    "def f():\n    return f'''{a # a comment\n}'''\n",  # `#` in an expression (3.12)
    'def f():\n    return f"{a" + "}"\n',  # a field left open
    'def f():\n    return t"{d["k"]}" + Tr"{e["k"]}"\n',  # 3.14's template strings read alike
    'def a():\n    return f"{1 +\n2}"\ndef b(): pass\n',  # 3.12: a field over a line break (hostile pass 32a)
    "def a():\n    return f\"{'''\n'''}\"\ndef b(): pass\n",
]


@pytest.mark.parametrize("text", SAME_IN_EVERY_PYTHON)
def test_fstrings_read_alike_in_every_python_are_answered_here(text):
    got = python_spans_fast(text)
    assert got is not None and sorted(got) == ast_spans(text)


@pytest.mark.parametrize("text", GO_TO_AST)
def test_fstrings_python_may_read_otherwise_go_to_ast(text):
    assert python_spans_fast(text) is None


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive quantifiers came with Python 3.11")
def test_both_head_patterns_find_the_same_heads():
    # 3.11's possessive ` *+` and the lookahead older Pythons use must agree line for line.
    import re

    new, old = re.compile(pyscan.HEAD), re.compile(pyscan.HEAD_BEFORE_3_11)
    texts = ["\n" + t for t in CORNERS + SAME_IN_EVERY_PYTHON]
    for path in stdlib_sample()[:60]:
        with open(path, "rb") as fh:
            texts.append("\n" + fh.read().decode("utf-8", "replace"))
    found = 0
    for text in texts:
        got = [(m.span(), m.span(1)) for m in new.finditer(text)]
        assert got == [(m.span(), m.span(1)) for m in old.finditer(text)]
        found += len(got)
    assert found > 100


def test_a_long_blank_stretch_before_a_definitions_end_is_crossed():
    # A definition's end is looked for in short stretches, one before the other: a comment block of
    # ~200,000 characters (over a thousand stretches) must neither hit the recursion limit nor lose the def.
    text = "def f():\n    return 1 \\\n" + "\n".join(["    # " + "c" * 60] * 3000) + "\ng = 2\n"
    ast.parse(text)
    assert python_spans_fast(text) == [("f", 0, text.index(" \\\n"))]
    assert agrees(text)


def test_the_scanner_answers_the_common_shapes_itself():
    answered = [t for t in CORNERS if python_spans_fast(t) is not None]
    assert len(answered) == len(CORNERS) - 3  # only tabs, a name NFKC could change and `@(` newline go to ast


def stdlib_sample():
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        out.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    return out[::9]


def test_the_scanner_matches_ast_on_a_sample_of_the_standard_library():
    sample = stdlib_sample()
    if len(sample) < 50:
        pytest.skip("no standard library sources here")
    answered = definitions = 0
    for path in sample:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
        try:
            want = ast_spans(text)
        except (SyntaxError, ValueError):
            continue
        got = python_spans_fast(text)
        if got is None:
            continue
        assert sorted(got) == want, path
        answered += 1
        definitions += len(want)
    assert answered >= 0.9 * len(sample) and definitions > 2000


INDENTS = ["", "    ", "        "]
LINES = [
    "def f(a, b=1):", "async def g():", "class C(B):", "class D:", "@dec", "@dec.attr(1, x=[2])",
    "if x:", "else:", "for i in y:", "while z:", "try:", "except E as e:", "finally:", "with m as n:",
    "pass", "return 1;", "x = (1,", "  2)", "y = '''", "def fake(): '''", "s = 'a # b'  # c", "# comment",
    "", "z = [", "]", "t = 1 + \\", "    2", "u = f'{a} {{b}}'", "return v  # done",
    "def one(): return 1", "class E: pass",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(INDENTS), st.sampled_from(LINES)), max_size=14),
       st.sampled_from(["\n", "\r\n"]))
def test_generated_programs_that_parse_agree_with_ast(lines, newline):
    text = newline.join(i + line for i, line in lines) + newline
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        try:
            python_spans_fast(text)  # what does not parse may be refused (ValueError), nothing else
        except ValueError:
            pass
        return
    assert agrees(text)


def test_a_file_that_does_not_parse_keeps_the_definitions_it_can_read():
    # A syntax error elsewhere (or one Python version's new syntax on an older one) no longer
    # takes every anchor of the file away; their spans are read from indentation alone.
    text = "def f():\n    return 1\n\nx = = 2\n\nclass C:\n    def m(self):\n        pass\n"
    got = dict(anchors.anchors_for("m.py", text))
    assert sorted(got) == ["C", "C.m", "f"]
    assert got["f"] == dict(anchors.anchors_for("m.py", "def f():\n    return 1\n"))["f"]
    # Strings or brackets that do not close leave the structure unknown: no anchors.
    assert anchors.anchors_for("m.py", "def f(:\n    pass\n") == []
    assert anchors.anchors_for("m.py", "def f():\n    return 'open\n") == []
    assert anchors.anchors_for("m.py", "def f():\n    return (1\n") == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", " ", "  ", "\t", "\n", "\r\n", "x\u00a0", "()", "def"]), max_size=30),
       st.data())
def test_definitions_cut_from_the_squeezed_file_are_their_own_normalized_text(parts, data):
    raw = "".join(parts) + "z"
    encoded = raw.encode("utf-8")
    if not squeezable(encoded):
        assert "\u00a0" in raw
        return
    start = data.draw(st.integers(0, len(raw) - 1))
    end = data.draw(st.integers(start + 1, len(raw)))
    while end < len(raw) and raw[end - 1].isspace():
        end += 1  # a definition ends on a token, never inside whitespace
    at = squeezed_offsets(encoded, [start, end], None if raw.isascii() else raw)
    assert squeeze(encoded)[at[start]:at[end]].strip(b" ") == normalized_utf8(raw[start:end].encode("utf-8"))


def test_one_pass_file_hash_equals_the_plain_hash():
    text = "def f():\n    return 'é'\n\n\nclass C:\n\tx = 1\n"
    for data in (text.encode(), text.replace("é", "e").encode(), text.encode("latin-1")):
        h, packed = file_result("m.py", data, True)
        assert h == file_result("m.py", data, False)[0]
        assert packed is not None


def test_squeezable_knows_each_non_ascii_whitespace_character():
    from priors.snapshot.hashing import NONASCII_WS_CHARS

    assert len(NONASCII_WS_CHARS) == 19
    for c in NONASCII_WS_CHARS:
        assert normalized_utf8(f"a{c}b".encode()) == b"a b"  # whitespace to the normalizer: one run
        assert not squeezable(f"é{c}".encode()) and not squeezable(f"\u4e00{c}x".encode())
    for other in ("é", "\u200b", "\u4e00", "\U0001f600", "\x85"):  # not whitespace to ECMAScript
        assert squeezable(f"a{other}b".encode())
