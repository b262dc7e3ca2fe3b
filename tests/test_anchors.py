"""Definition anchors: names, spans, and the one-function-edit property for every language."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO

sys.path.insert(0, str(REPO))

from priors.core.canonical import normalize, sha12
from priors.snapshot import anchors
from priors.snapshot.scan import take_snapshot
from test_snapshot import indented_ref


def names(path: str, text: str) -> list:
    return [n for n, _h in anchors.anchors_for(path, text)]


def spans(path: str, text: str) -> dict:
    lang = anchors.language_of(path)
    return {n: text[s:e] for n, s, e in anchors.disambiguate(anchors.EXTRACTORS[lang](text))}


def h(src: str) -> str:
    return sha12(normalize(src))


# ---------------------------------------------------------------- Python

PY = '''import functools

@functools.lru_cache(maxsize=None)
def cached(x):
    return x * 2

class Outer(Base, metaclass=Meta):
    """doc with def fake(): and class Fake: inside"""

    @property
    def value(self):
        return self._v

    @value.setter
    def value(self, v):
        self._v = v

    class Inner:
        async def run(self):
            def helper():
                return "}"
            return helper()

if True:
    def conditional():
        pass
else:
    def conditional():
        return 1

try:
    def in_try(): return 1; x = 2
except ImportError:
    pass
'''


def test_python_names_in_source_order():
    assert names("m.py", PY) == [
        "cached", "Outer", "Outer.value", "Outer.value~2", "Outer.Inner", "Outer.Inner.run",
        "Outer.Inner.run.helper", "conditional", "conditional~2", "in_try",
    ]


def test_python_spans_include_decorators_and_stop_at_the_definition():
    sp = spans("m.py", PY)
    assert sp["cached"] == "@functools.lru_cache(maxsize=None)\ndef cached(x):\n    return x * 2"
    assert sp["Outer.value"].lstrip().startswith("@property")
    assert sp["in_try"].strip() == "def in_try(): return 1; x = 2"
    assert sp["conditional~2"].strip() == "def conditional():\n        return 1"


def test_python_decorator_change_changes_only_that_anchor():
    edited = PY.replace("maxsize=None", "maxsize=128")
    before, after = dict(anchors.anchors_for("m.py", PY)), dict(anchors.anchors_for("m.py", edited))
    assert {k for k in before if before[k] != after[k]} == {"cached"}


def test_python_non_ascii_columns_and_crlf():
    src = 'def f():\r\n    return "héllo — ☃"; y = "€"\r\ndef g():\r\n    pass\r\n'
    sp = spans("m.py", src)
    assert sp["f"] == 'def f():\r\n    return "héllo — ☃"; y = "€"'
    assert sp["g"] == "def g():\r\n    pass"


def test_python_bom_and_broken_files():
    assert names("m.py", "\ufeffdef f():\n    pass\n") == ["f"]
    assert names("m.py", "def broken(:\n") == []
    assert names("m.py", "print 'py2'\n") == []
    assert names("m.pyi", "def stub(x: int) -> str: ...\n") == ["stub"]


# ---------------------------------------------------------------- JavaScript / TypeScript

JS = r'''
import x from "y";
// function fake() {}
/* class Fake { m() {} } */
export default function main(a, b = "}") {
  const s = `template ${a + `inner ${b}`} }`;
  const r = /[}]\/{/g;
  function inner() { return 1 }
  return a / b / 2;
}
@Component({selector: "x"})
export class Foo<T> extends Bar implements Baz {
  private x: number = 1;
  static y = { a: 1 };
  constructor(private readonly z: string) { super(); }
  @Input() get name(): string { return "n" }
  set name(v) { }
  async *gen(): AsyncGenerator<number> { yield 1 }
  #priv() { return '}' }
  method(a: {k: number}): {r: string} { return {r: ""} }
}
export const arrow = async (a: number): Promise<void> => { await a; };
const short = x => x * 2;
let fe = function named() { return 3 };
interface I { m(): void; p: string }
enum E { A, B }
namespace NS { export function f() {} }
function main() {}
'''


def test_js_ts_names():
    assert names("a.ts", JS) == [
        "main", "main.inner", "Foo", "Foo.constructor", "Foo.name", "Foo.name~2", "Foo.gen", "Foo.#priv",
        "Foo.method", "arrow", "short", "fe", "I", "I.m", "E", "NS", "NS.f", "main~2",
    ]


def test_js_spans():
    sp = spans("a.ts", JS)
    assert sp["Foo"].startswith("@Component") and sp["Foo"].endswith("{r: \"\"} }\n}")
    assert sp["Foo.name"] == '@Input() get name(): string { return "n" }'
    assert sp["main"].endswith("return a / b / 2;\n}")
    assert sp["short"] == "const short = x => x * 2;"
    assert sp["arrow"] == "export const arrow = async (a: number): Promise<void> => { await a; }"


def test_js_unbalanced_gives_no_anchors():
    assert names("a.js", "function f() { {\n") == []


# ---------------------------------------------------------------- Go

GO = r'''
package main
import "fmt"
// func Fake() {}
type T struct { a int; b string `json:"}"` }
type (
    A int
    B interface { M() }
)
type G[K comparable, V any] struct{}
func (t *T) Method(x int) (int, error) { s := "}"; r := '}'; c := `}`; return 0, nil }
func (g G[K, V]) Get() V { var v V; return v }
func main() {
    fmt.Println("hi")
}
func f() struct{ x int } { return struct{ x int }{1} }
func asm(x int)
'''


def test_go_names_and_spans():
    assert names("a.go", GO) == ["T", "A", "B", "G", "T.Method", "G.Get", "main", "f", "asm"]
    sp = spans("a.go", GO)
    assert sp["main"] == 'func main() {\n    fmt.Println("hi")\n}'
    assert sp["f"] == "func f() struct{ x int } { return struct{ x int }{1} }"
    assert sp["asm"] == "func asm(x int)"
    assert sp["T"] == 'type T struct { a int; b string `json:"}"` }'


# ---------------------------------------------------------------- Rust

RS = r'''
//! crate doc
use std::fmt;
/* nested /* comment */ fn fake() {} */
#[derive(Debug)]
pub struct S<'a> { x: &'a str }
pub(crate) enum E { A, B }
struct Unit;
impl<'a> fmt::Display for S<'a> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, "}}{}", '}') }
}
impl<T: Clone> Wrapper<T> where T: Copy {
    pub async fn get(&self) -> T { let s = r#"}"#; self.0 }
    const fn c() {}
}
trait Tr { fn req(&self); fn prov(&self) { } }
mod m { pub fn inner() { fn nested() {} } }
macro_rules! mk { ($n:ident) => { fn $n() {} } }
#[test]
fn test_it() { let c = b'{'; let l: &'static str = "x"; }
extern "C" fn ext() {}
'''


def test_rust_names_and_spans():
    assert names("a.rs", RS) == [
        "S", "E", "Unit", "S.fmt", "Wrapper.get", "Wrapper.c", "Tr", "Tr.req", "Tr.prov", "m", "m.inner",
        "m.inner.nested", "test_it", "ext",
    ]
    sp = spans("a.rs", RS)
    assert sp["S"] == "#[derive(Debug)]\npub struct S<'a> { x: &'a str }"
    assert sp["test_it"].startswith("#[test]\nfn test_it()") and sp["test_it"].endswith('"x"; }')
    assert sp["ext"] == 'extern "C" fn ext() {}'


def test_rust_raw_identifiers_are_named_as_the_identifiers_they_are():
    """`fn r#type` defines `type` (hostile pass 32a's side note: it was named `r`, every raw identifier the
    same); a raw identifier that spells a keyword (`r#struct`, `r#fn`) starts no item."""
    rs = "impl r#Box { fn r#type(&self) {} fn r#match() { let r#struct = 1; r#fn(r#struct); } }\nfn r#async() {}\n"
    assert names("a.rs", rs) == ["Box.type", "Box.match", "async"]
    assert spans("a.rs", rs)["async"] == "fn r#async() {}"
    assert names("a.rs", 'fn f() { let s = r#"fn g() {}"#; }') == ["f"]  # (a raw string stays a string)
    # a name past the Basic Multilingual Plane is a name too (hostile pass 32c: `fn 𝔘()` had no anchor)
    assert names("a.rs", "fn 𝔘() {}\nfn r#𝔘x() {}\n") == ["𝔘", "𝔘x"]
    assert names("a.js", "function 𝔘𝔙() { return 1 }\n") == ["𝔘𝔙"] and names("a.go", "func 𝔘() {}\n") == ["𝔘"]


def test_unsupported_extension_has_no_anchors():
    assert names("a.c", "int main() { return 0; }") == []
    assert anchors.language_of("dir.py/file") is None


# ---------------------------------------------------------------- the one-function-edit property

TRICKY = {
    "python": ['"}"', "'{'", '"""def fake(): pass"""', "x  +  1", "(x,\n        {1: '}'})", "f'{x}}}'"],
    "js": ['"}"', "'{'", "`${x}}`", "/[{]/.test(x)", "x /* } */ + 1", "x // }\n    + 1", "{a: '}'}.a"],
    "go": ['len("}")', "int('{')", "len(`}`)", "x /* } */ + 1", "x // }\n\t+ 1"],
    "rust": ['"}".len() as i32', "'{' as i32", 'r#"}"#.len() as i32', "x /* /* } */ */ + 1",
             "{ let y: &'static str = \"}\"; x }"],
}
TEMPLATE = {
    "python": ("m.py", "def f{i}(x):\n    return {body}\n"),
    "js": ("m.ts", "function f{i}(x) {{\n    return {body};\n}}\n"),
    "go": ("m.go", "func f{i}(x int) int {{\n\treturn {body}\n}}\n"),
    "rust": ("m.rs", "fn f{i}(x: i32) -> i32 {{\n    {body}\n}}\n"),
}
EDIT = {"python": " + 1", "js": " + 1", "go": " + 1", "rust": " + 1"}


def _source(lang: str, bodies: list) -> str:
    _path, tpl = TEMPLATE[lang]
    return "\n".join(tpl.format(i=i, body=b) for i, b in enumerate(bodies))


@pytest.mark.parametrize("lang", sorted(TEMPLATE))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_one_function_edit_changes_only_its_anchor_file_dirs_and_root(tmp_path_factory, lang, data):
    bodies = data.draw(st.lists(st.sampled_from(TRICKY[lang]), min_size=2, max_size=5))
    k = data.draw(st.integers(0, len(bodies) - 1))
    fname, _tpl = TEMPLATE[lang]
    root = tmp_path_factory.mktemp(lang)
    target = root / "src" / "deep" / fname
    target.parent.mkdir(parents=True)
    (root / "src" / "other.txt").write_text("unrelated\n")
    target.write_text(_source(lang, bodies))
    before = take_snapshot(root)
    assert [f"src/deep/{fname}#f{i}" for i in range(len(bodies))] == sorted(
        (r for r in before if "#" in r), key=lambda r: int(r.rsplit("#f", 1)[1]))
    edited = list(bodies)
    edited[k] = "(" + edited[k] + ")" + EDIT[lang] if lang != "rust" else edited[k] + EDIT[lang]
    target.write_text(_source(lang, edited))
    after = take_snapshot(root)
    assert set(after) == set(before)
    changed = {r for r in before if before[r] != after[r]}
    assert changed == {f"src/deep/{fname}#f{k}", f"src/deep/{fname}", "src/deep/", "src/", "*"}
    # and the anchor is exactly the definition's normalized source
    spans_after = spans(fname, target.read_text())
    assert after[f"src/deep/{fname}#f{k}"] == (h(spans_after[f"f{k}"]) if lang != "python"
                                               else sha12(indented_ref(spans_after[f"f{k}"])))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["f", "g", "C"]), min_size=1, max_size=8))
def test_repeated_names_get_tildes_in_source_order(seq):
    src = "".join(f"def {n}():\n    return {i}\n" if n != "C" else f"class C:\n    def m(self):\n        return {i}\n"
                  for i, n in enumerate(seq))
    got = names("m.py", src)
    seen: dict = {}
    expected = []
    for n in seq:
        seen[n] = seen.get(n, 0) + 1
        tag = n if seen[n] == 1 else f"{n}~{seen[n]}"
        expected.append(tag)
        if n == "C":
            expected.append(f"{tag}.m")
    assert got == expected


FUZZ_ALPHABET = "{}()[]<>;:,.=!#@*/\\'\"`$ \n\tabcfnr_0123456789" + "é€"
WORDS = ["fn ", "func ", "function ", "class ", "def ", "impl ", "struct ", "type ", "const ", "=> ", "r#\"",
         "/*", "*/", "//", "${", "`", "'a", "@", "async ", "pub ", "mod ", "interface ", "\n    "]


@pytest.mark.parametrize("path", ["f.py", "f.ts", "f.go", "f.rs"])
@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.one_of(st.sampled_from(WORDS), st.text(FUZZ_ALPHABET, max_size=4)), max_size=40))
def test_extractors_never_crash_and_stay_in_bounds(path, parts):
    text = "".join(parts)
    got = anchors.anchors_for(path, text)
    assert len({n for n, _h in got}) == len(got)
    lang = anchors.language_of(path)
    try:
        raw = anchors.EXTRACTORS[lang](text)
    except Exception:
        return
    assert all(0 <= s <= e <= len(text) for _n, s, e in raw)


NO_SEMI = """const { a } = require('a')
const run = require('run')
const f = (x) => x
  + 1
const g = x => {
  return x
}
class K extends B {
  static description = 'x'
  static params = [
    'a',
  ]
  abstract sig(): void
  static async completion (opts) {
    return opts
  }
  get v () { return 1 }
}
module.exports = K
;(function () {
  function wrapped () {}
})()
function last () {}
"""


def test_js_without_semicolons_and_wrapped_code():
    sp = spans("a.js", NO_SEMI)
    assert list(sp) == ["f", "g", "K", "K.sig", "K.completion", "K.v", "wrapped", "last"]
    assert sp["f"] == "const f = (x) => x\n  + 1"
    assert sp["K.sig"] == "abstract sig(): void"
    assert sp["K.completion"] == "static async completion (opts) {\n    return opts\n  }"
