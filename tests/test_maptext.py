"""`priors snapshot`'s printed line, joined from each file's piece (snapshot/maptext.py), is
`hashing.dumps_map` of the map — byte for byte, odd names included — or it is not used."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO

sys.path.insert(0, str(REPO))

from priors.snapshot import hashing, maptext, scan


def snapshot_text(*args, **kwargs) -> str:
    return scan.snapshot_line(*args, **kwargs)[0]


ODD = {
    "a.py": "def f():\n    return 1\n\nclass C:\n    def m(self):\n        pass\n",
    "a.py!x": "next to a.py in key order\n",
    "a.py x.py": "def g():\n    pass\n",
    "a.py#f": "a file whose name reads as a.py's definition\n",
    "b.py#x/c.py": "def h():\n    pass\n",
    'q"uote.py': "def q():\n    pass\n",
    "back\\slash.txt": "x\n",
    "ünï/çode.py": "def ü():\n    pass\n\ndef v():\n    pass\n",
    "*": "a file named like the root's ref\n",
    "z/dup.py": "def d():\n    pass\n\ndef d():\n    pass\n",
    "z/web.js": "function a() {\n  return 1;\n}\nclass B { m() { return 2; } }\n",
}


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_joined_text_is_the_dicts_text_whatever_the_names(tmp_path):
    for i, (rel, text) in enumerate(sorted(ODD.items())):
        tree = tmp_path / f"t{i}"
        write(tree, "plain/one.py", "def f():\n    return 1\n")
        write(tree, rel, text)
        for anchors in (True, False):
            want = hashing.dumps_map(scan.take_snapshot(tree, anchors=anchors, problems=[], use_cache=False))
            assert snapshot_text(tree, anchors=anchors, use_cache=False) == want, rel
    for rel, text in ODD.items():
        write(tmp_path / "all", rel, text)
    want = hashing.dumps_map(scan.take_snapshot(tmp_path / "all", problems=[], use_cache=False))
    assert snapshot_text(tmp_path / "all", use_cache=False) == want


def test_a_cached_files_anchors_give_the_same_text(tmp_path, monkeypatch):
    for rel, text in ODD.items():
        if "#" not in rel and rel != "*":
            write(tmp_path, rel, text)
    (tmp_path / ".priors").mkdir()
    first = snapshot_text(tmp_path, use_cache=False)
    monkeypatch.setattr(scan, "RACY_NS", -10 ** 12)  # files written just now are cached all the same
    assert snapshot_text(tmp_path) == first  # fills the cache
    assert (tmp_path / ".priors" / "cache" / "snapshot.json").exists()
    assert snapshot_text(tmp_path) == first  # from it
    part = snapshot_text(tmp_path, ["a.py"], cwd=str(tmp_path))
    assert part == hashing.dumps_map(scan.take_snapshot(tmp_path, ["a.py"], cwd=str(tmp_path)))
    assert "a.py#C.m" in part


def test_map_text_declines_what_it_cannot_show_equal():
    assert maptext.map_text({"a": "1"}, {}, {"*": "2"}) == '{"*":"2","a":"1"}'
    assert maptext.map_text({'a"': "1"}, {}, {}) is None  # would need an escape
    assert maptext.map_text({"é": "1"}, {}, {}) is None  # not ASCII: the dict's way decides
    assert maptext.map_text({"a": "1"}, {"a": None}, {}) is None  # a piece that declined
    assert maptext.map_text({"*": "1"}, {}, {"*": "2"}) is None  # one key twice
    piece = maptext.anchor_json("a", [("x", "1")])
    assert maptext.map_text({"a": "1", "a#y": "2"}, {"a": piece}, {}) == '{"a":"1","a#x":"1","a#y":"2"}'
    assert maptext.map_text({"a": "1", "a#w": "2"}, {"a": piece}, {}) is None  # would interleave
    assert maptext.anchor_json("a", [("x", "1"), ("x", "2")]) is None
    assert maptext.anchor_json("a", [("t\tab", "1")]) == ""  # left out, as `pack` leaves it out


NAME = st.text(alphabet='ab.#/ "!\\é', min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(NAME, st.sampled_from(["111", "222"]), max_size=6),
       st.dictionaries(st.sampled_from(["a", "a.b", "b#"]), st.dictionaries(NAME, st.just("333"), max_size=4),
                       max_size=3),
       st.dictionaries(st.sampled_from(["a/", "b/", "*"]), st.just("444"), max_size=3))
def test_map_text_is_dumps_map_or_none(files, defs, tree):
    files = dict(files)
    for ref in defs:
        files.setdefault(ref, "555")
    pieces = {ref: maptext.anchor_json(ref, d.items()) for ref, d in defs.items()}
    m = dict(files)
    for ref, d in defs.items():
        m.update({f"{ref}#{q}": h for q, h in d.items() if "\t" not in q and "\n" not in q})
    m.update(tree)
    text = maptext.map_text(files, pieces, tree)
    if text is not None:
        assert text == hashing.dumps_map(m)
        assert json.loads(text) == m


def test_the_command_line_prints_the_joined_line_as_it_is_and_escapes_the_other(tmp_path):
    # The joined line is printable ASCII and written unchecked; a map with a control character in a
    # name is encoded the dict's way and printed with the character shown escaped, as every answer is.
    import subprocess

    def printed(tree, *flags):
        return subprocess.run([sys.executable, "-m", "priors", "--root", str(tree), "snapshot", *flags],
                              capture_output=True, cwd=str(tree), env={"PYTHONPATH": str(REPO), "PATH": ""}).stdout

    for rel, text in ODD.items():
        write(tmp_path / "all", rel, text)
    line, plain = scan.snapshot_line(tmp_path / "all", use_cache=False)
    assert plain is False  # (names needing escapes, keys that interleave: the dict's way)
    for rel in ("a.py", "z/dup.py", "z/web.js"):
        write(tmp_path / "plain", rel, ODD[rel])
    line, plain = scan.snapshot_line(tmp_path / "plain", use_cache=False)
    assert plain is True and line.isascii() and line.isprintable()
    assert printed(tmp_path / "plain") == line.encode() + b"\n"
    assert printed(tmp_path / "plain", "-o", "map.json") == b""
    assert (tmp_path / "plain" / "map.json").read_bytes() == line.encode() + b"\n"
    write(tmp_path / "ctl", "bell\x07.py", "def f():\n    pass\n")
    line, plain = scan.snapshot_line(tmp_path / "ctl", use_cache=False)
    assert plain is False and "\x07" not in line and "\\u0007" in line  # JSON escapes it already
    assert printed(tmp_path / "ctl") == line.encode() + b"\n"
