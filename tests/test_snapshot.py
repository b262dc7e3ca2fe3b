"""`priors snapshot`: the scope map end to end, plus the pure hashing/combining parts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO

sys.path.insert(0, str(REPO))

from priors.core import errors
from priors.core.canonical import decode_text, dumps, normalize, sha12, sha12_bytes
from priors.snapshot import hashing, listing, scan

HAS_GIT = shutil.which("git") is not None
ES_WS = "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def run(args, cwd, input=None, env_extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "priors", *args], cwd=str(cwd), input=input,
                          capture_output=True, env=env)


def snap(cwd, *args) -> dict:
    p = run(["snapshot", *args], cwd)
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def write(root: Path, rel: str, data) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def git(root: Path, *args):
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=str(root), check=True,
                   capture_output=True)


def indented_ref(text: str) -> str:
    """The normalized text of a file whose indentation is syntax, spelled out on str (docs/snapshot.md,
    "Indentation"): lines split at CRLF, CR or LF; a line of nothing but ASCII whitespace is blank;
    each other line's depth is the rank of its leading ASCII whitespace's width (tabs to multiples of
    eight) among the distinct widths of those lines, written as that many U+0001 before the line
    collapsed; lines collapsing to nothing are dropped, the rest joined by U+0002."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    ascii_ws = " \t\n\x0b\x0c\r"
    real = [(len(line[:len(line) - len(line.lstrip(ascii_ws))].expandtabs(8)), line.lstrip(ascii_ws))
            for line in lines if line.lstrip(ascii_ws)]
    ranks = {w: i for i, w in enumerate(sorted({w for w, _ in real}))}
    return "\x02".join("\x01" * ranks[w] + normalize(body) for w, body in real if normalize(body))


def text_ref_hash(data: bytes, path: str = "") -> str:
    """What `priors hash FILE` prints (`path`: a Python, YAML or Makefile keeps its indentation)."""
    text = decode_text(data)
    return sha12(indented_ref(text) if path.endswith((".py", ".yml", ".yaml")) else normalize(text))


TREE = {
    "README.md": "# hi\n",
    "src/a.py": "def f():\n    return 1\n\n\nclass C:\n    def m(self):\n        return 2\n",
    "src/pkg/b.py": "X = 1\n",
    "src/pkg/c.txt": "some text\n",
    "docs/x.md": "x\n",
}


def make_tree(root: Path, files=TREE, order=None) -> None:
    for rel in order or sorted(files):
        write(root, rel, files[rel])


# ---------------------------------------------------------------- pure parts

@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(alphabet=ES_WS + "ab\u00e9\u0085\x1c\x00", max_size=6),
                          st.binary(max_size=6).map(lambda b: b.decode("latin-1"))), max_size=12),
       st.binary(max_size=8))
def test_fast_normalization_matches_the_reference(parts, junk):
    data = "".join(parts).encode("utf-8") + junk
    assert hashing.normalized_utf8(data) == normalize(decode_text(data)).encode("utf-8")
    assert hashing.text_hash(data) == text_ref_hash(data)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=12))
def test_fast_output_is_canonical_json(m):
    assert hashing.dumps_map(m) == dumps(m)


def test_binary_means_nul_in_first_8k():
    assert hashing.is_binary(b"abc\0def")
    assert not hashing.is_binary(b"a" * 8192 + b"\0")
    assert hashing.content_hash(b"a\r\n\0 b") == sha12_bytes(b"a\r\n\0 b")
    late = b"a  b\r\n" * 2000 + b"\0"
    assert hashing.content_hash(late) == text_ref_hash(late)


def test_directory_hash_definition():
    m = hashing.combine({"a/x": "111111111111", "a/b/y": "222222222222", "z": "333333333333"}, {},
                  lambda d: True, True)
    b = sha12(dumps([["y", "222222222222"]]))
    a = sha12(dumps([["b/", b], ["x", "111111111111"]]))
    assert m["a/b/"] == b and m["a/"] == a
    assert m["*"] == sha12(dumps([["a/", a], ["z", "333333333333"]]))


def test_pool_and_serial_agree(tmp_path, monkeypatch):
    make_tree(tmp_path)
    for i in range(20):
        write(tmp_path, f"many/f{i}.py", f"def g{i}():\n    return {i}\n")
    serial = scan.take_snapshot(tmp_path)
    monkeypatch.setattr(scan, "POOL_MIN_WEIGHT", 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # a 2-core machine, whatever this one has
    assert scan.take_snapshot(tmp_path, use_cache=False) == serial


_DYING_HELPER = """
import os, sys
from pathlib import Path
from priors.snapshot import scan
root, how = Path(sys.argv[1]), sys.argv[2]
parent = os.getpid()
jobs = [(p.name, str(p), True) for p in sorted(root.glob("*.py"))]
serial = sorted(scan.hash_chunk(jobs))
take, hash_job = scan._Counter.take, scan.hash_job
def dies_holding_the_lock(self):
    if os.getpid() != parent:
        os.lockf(self.fd, os.F_LOCK, 0)
        os._exit(3)
    return take(self)
def dies_after_taking_a_job(job):
    if os.getpid() != parent:
        os._exit(3)
    return hash_job(job)
if how == "lock":
    scan._Counter.take = dies_holding_the_lock
else:
    scan.hash_job = dies_after_taking_a_job
got = scan._run_forked(jobs, {j[0]: 100 for j in jobs}, 2, None)
print(len(got) == len(jobs) and sorted(got) == serial)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="helpers are forked on Linux only")
@pytest.mark.parametrize("how", ["lock", "job"])
def test_a_helper_that_dies_leaves_its_jobs_here_and_no_one_waiting(tmp_path, how):
    """Forked helpers take the next file from a counter they share, under a lock: one that dies
    holding the lock, or after taking a file, neither stops the snapshot nor loses that file."""
    for i in range(30):
        write(tmp_path, f"f{i:02d}.py", f"def g{i}():\n    return {i}\n" * (i + 1))
    out = subprocess.run([sys.executable, "-c", _DYING_HELPER, str(tmp_path), how], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)
    assert out.stdout.strip() == "True", out.stderr


_UNREADABLE = """
import os, sys, time
from pathlib import Path
from priors.snapshot import scan
root, parent = Path(sys.argv[1]), os.getpid()
hash_job = scan.hash_job
def unreadable_here_slow_there(job):
    if os.getpid() != parent:
        time.sleep(0.01)  # (a helper a little slower than the parent: which file each takes is chance)
    ref, h, anc, problem, piece = hash_job(job)
    return (ref, None, None, "cannot read " + ref + ": Permission denied", None) if ref.startswith("bad") else \\
        (ref, h, anc, problem, piece)
scan.hash_job = unreadable_here_slow_there
scan.POOL_MIN_WEIGHT = 0
def told(cores):
    os.cpu_count = lambda: cores
    got = []
    scan.take_snapshot(root, problems=got, use_cache=False)
    return got
serial = told(1)
print(serial == told(2) == told(2) == told(4) and len(serial) == 14)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="helpers are forked on Linux only")
def test_the_problems_of_a_snapshot_in_helpers_are_told_as_one_process_tells_them(tmp_path):
    """Helpers take the next file as they come free, so which file each hashed is chance: their results
    are put back in the files' order, and the problems (an unreadable file) told as one process tells them."""
    for i in range(40):
        write(tmp_path, f"{'bad' if i % 3 == 0 else 'ok'}{i:02d}.py", f"def g{i}():\n    return {i}\n" * (40 - i))
    out = subprocess.run([sys.executable, "-c", _UNREADABLE, str(tmp_path)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)
    assert out.stdout.strip() == "True", out.stderr


# ---------------------------------------------------------------- end to end

def test_snapshot_shape_and_file_hashes(tmp_path):
    make_tree(tmp_path)
    m = snap(tmp_path)
    for rel, text in TREE.items():
        assert m[rel] == text_ref_hash(text.encode(), rel)
    assert {"src/", "src/pkg/", "docs/", "*"} <= set(m)
    assert m["src/a.py#f"] and m["src/a.py#C"] and m["src/a.py#C.m"]
    assert all(len(v) == 12 for v in m.values())
    assert "src/pkg/b.py#X" not in m


def test_no_anchors(tmp_path):
    make_tree(tmp_path)
    m = snap(tmp_path, "--no-anchors")
    assert not [k for k in m if "#" in k]
    assert m["*"] == snap(tmp_path)["*"]


def test_deterministic_across_runs_and_creation_order(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    make_tree(one)
    make_tree(two, order=sorted(TREE, reverse=True))
    first = run(["snapshot"], one).stdout
    assert first == run(["snapshot"], one).stdout
    assert first == run(["snapshot"], two).stdout
    assert first.endswith(b"\n") and first.count(b"\n") == 1


def test_crlf_and_reindent_do_not_count(tmp_path):
    write(tmp_path, "a.py", "def f():\n    return 1\n")
    before = snap(tmp_path)
    write(tmp_path, "a.py", "def f():\r\n\treturn   1\r\n\r\n")
    assert snap(tmp_path) == before


def test_binary_file_hashes_raw_bytes(tmp_path):
    write(tmp_path, "img.bin", b"\x89PNG\r\n\x00\x01  x")
    assert snap(tmp_path)["img.bin"] == sha12_bytes(b"\x89PNG\r\n\x00\x01  x")


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_symlinks_are_not_followed(tmp_path):
    write(tmp_path, "real/a.txt", "hello\n")
    os.symlink("real/a.txt", str(tmp_path / "link.txt"))
    os.symlink("real", str(tmp_path / "dirlink"))
    m = snap(tmp_path)
    assert m["link.txt"] == hashing.link_hash("real/a.txt") != m["real/a.txt"]
    assert m["dirlink"] == hashing.link_hash("real")
    assert not [k for k in m if k.startswith("dirlink/")]
    os.unlink(str(tmp_path / "link.txt"))
    os.symlink("real/../real/a.txt", str(tmp_path / "link.txt"))
    assert snap(tmp_path)["link.txt"] != m["link.txt"]


def test_skips_dot_git_and_dot_priors_when_walking(tmp_path):
    make_tree(tmp_path)
    before = snap(tmp_path)
    write(tmp_path, ".priors/ledger.jsonl", "{}\n")
    write(tmp_path, "sub/.git/config", "x")
    write(tmp_path, "sub/.priors/ledger.jsonl", "x")
    assert snap(tmp_path) == before


@pytest.mark.skipif(not HAS_GIT, reason="git not installed")
def test_git_view_matches_a_plain_walk_of_the_same_files(tmp_path):
    plain, repo = tmp_path / "plain", tmp_path / "repo"
    make_tree(plain)
    make_tree(repo)
    git(repo, "init", "-q")
    git(repo, "add", "README.md", "src")
    git(repo, "commit", "-qm", "x")  # docs/ stays untracked-but-not-ignored: still included
    write(repo, ".gitignore", "build/\n*.log\n")
    write(plain, ".gitignore", "build/\n*.log\n")
    write(repo, "build/out.o", b"\0junk")
    write(repo, "debug.log", "noise")
    write(repo, ".priors/ledger.jsonl", "{}\n")
    assert snap(repo) == snap(plain)


@pytest.mark.skipif(not HAS_GIT, reason="git not installed")
def test_git_tracked_but_deleted_file_is_gone(tmp_path):
    make_tree(tmp_path)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "x")
    (tmp_path / "docs/x.md").unlink()
    m = snap(tmp_path)
    assert "docs/x.md" not in m and "docs/" not in m


@pytest.mark.parametrize("use_git", [False, True] if HAS_GIT else [False])
def test_added_removed_renamed(tmp_path, use_git):
    make_tree(tmp_path)
    if use_git:
        git(tmp_path, "init", "-q")
        git(tmp_path, "add", "-A")
        git(tmp_path, "commit", "-qm", "x")
    base = snap(tmp_path)
    write(tmp_path, "src/new.py", "def n():\n    pass\n")
    added = snap(tmp_path)
    assert set(added) - set(base) == {"src/new.py", "src/new.py#n"}
    assert _changed(base, added) == {"src/", "*"}
    (tmp_path / "src/new.py").unlink()
    assert snap(tmp_path) == base
    os.rename(str(tmp_path / "src/pkg/c.txt"), str(tmp_path / "src/pkg/d.txt"))
    renamed = snap(tmp_path)
    assert "src/pkg/c.txt" not in renamed and renamed["src/pkg/d.txt"] == base["src/pkg/c.txt"]
    assert _changed(base, renamed) == {"src/pkg/", "src/", "*"}


def _changed(a: dict, b: dict) -> set:
    return {k for k in set(a) & set(b) if a[k] != b[k]}


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 10 ** 6), min_size=2, max_size=5, unique=True), st.data())
def test_editing_one_function_changes_only_its_chain(tmp_path_factory, values, data):
    root = tmp_path_factory.mktemp("edit")
    funcs = [f"def f{i}():\n    return {v}\n" for i, v in enumerate(values)]
    write(root, "pkg/sub/mod.py", "\n\n".join(funcs))
    write(root, "pkg/other.py", "def g():\n    pass\n")
    before = scan.take_snapshot(root)
    k = data.draw(st.integers(0, len(values) - 1))
    funcs[k] = f"def f{k}():\n    return {values[k]} + 1\n"
    write(root, "pkg/sub/mod.py", "\n\n".join(funcs))
    after = scan.take_snapshot(root)
    assert _changed(before, after) == {f"pkg/sub/mod.py#f{k}", "pkg/sub/mod.py", "pkg/sub/", "pkg/", "*"}
    assert set(before) == set(after)


def test_paths_restrict_and_never_emit_partial_aggregates(tmp_path):
    make_tree(tmp_path)
    full = snap(tmp_path)
    part = snap(tmp_path, "src/pkg", "README.md")
    assert set(part) == {"src/pkg/", "src/pkg/b.py", "src/pkg/c.txt", "README.md"}
    assert all(part[k] == full[k] for k in part)
    assert snap(tmp_path / "src", "pkg", "-C", str(tmp_path))["src/pkg/"] == full["src/pkg/"]
    assert snap(tmp_path, ".") == full
    assert snap(tmp_path, str(tmp_path / "src" / "a.py")) == {k: v for k, v in full.items()
                                                             if k.startswith("src/a.py")}


ODD_TREE = dict(TREE, **{"a*b/[x].py": "Y = 2\n", "sp ace/f.txt": "f\n", "src/pkg/deep/d.py": "Z = 3\n",
                          "src-sibling/e.py": "E = 1\n", "build/out.o": "junk", "debug.log": "noise",
                          ".gitignore": "build/\n*.log\n", "sub/.git/config": "x", ".priors/ledger.jsonl": "{}\n"})
PREFIX_SETS = [["src"], ["src/pkg"], ["src/a.py"], ["src", "src/pkg/b.py"], ["a*b"], ["a*b/[x].py"], ["sp ace"],
               ["build"], ["debug.log"], ["docs", "README.md"], ["dirlink"], ["dirlink/a.txt"], [".priors"],
               ["sub"], ["sub/.git"], ["nothere"], ["src/pkg/deep", "src/pkg"], ["src-sibling"]]


@pytest.mark.parametrize("use_git", [False, True])
def test_listing_only_named_paths_equals_the_whole_listing_filtered(tmp_path, use_git):
    """`priors snapshot PATH` lists only under PATH — exactly what the whole listing has there."""
    if use_git and not HAS_GIT:
        pytest.skip("git not installed")
    make_tree(tmp_path, ODD_TREE)
    write(tmp_path, "real/a.txt", "r\n")
    os.symlink("real", str(tmp_path / "dirlink"))
    if use_git:
        git(tmp_path, "init", "-q")
        git(tmp_path, "add", "src", "README.md")
    whole = listing.list_tree(tmp_path)
    for prefixes in PREFIX_SETS:
        sel = listing.Selection(prefixes)
        got = listing.list_tree(tmp_path, prefixes)
        assert got.refs == [r for r in whole.refs if sel.wants(r)], prefixes
        assert got.problems == []


def test_path_errors_are_usage_errors(tmp_path):
    make_tree(tmp_path / "root")
    p = run(["snapshot", "nope"], tmp_path / "root")
    assert p.returncode == 2 and b"no such file" in p.stderr
    p = run(["snapshot", str(tmp_path)], tmp_path / "root")
    assert p.returncode == 2 and b"outside the target root" in p.stderr
    assert b"Traceback" not in p.stderr


def test_merge(tmp_path):
    make_tree(tmp_path)
    write(tmp_path, "../extra.json", json.dumps({"env:py": "abcabcabcabc"}))
    m = snap(tmp_path, "--merge", str(tmp_path.parent / "extra.json"))
    assert m["env:py"] == "abcabcabcabc"
    p = run(["snapshot", "--merge", "-"], tmp_path, input=b'{"k":"v"}')
    assert json.loads(p.stdout)["k"] == "v"
    for bad in [b"{", b"[]", b'{"a":1}', b'{"":"x"}', b"\xff", b'{"README.md":"000000000000"}']:
        p = run(["snapshot", "--merge", "-"], tmp_path, input=bad)
        assert p.returncode == 2 and b"Traceback" not in p.stderr, (bad, p.stderr)
    p = run(["snapshot", "--merge", "missing.json"], tmp_path)
    assert p.returncode == 2


def test_tool(tmp_path):
    make_tree(tmp_path)
    cmd = f'"{sys.executable}" -c "print(42)"'
    m = snap(tmp_path, "--tool", f"py={cmd}")
    assert m["py"] == sha12_bytes(subprocess.run(cmd, shell=True, capture_output=True).stdout)
    for bad in ["noequals", "=cmd", "x="]:
        p = run(["snapshot", "--tool", bad], tmp_path)
        assert p.returncode == 2 and b"NAME=COMMAND" in p.stderr
    p = run(["snapshot", "--tool", f'bad="{sys.executable}" -c "import sys; sys.exit(3)"'], tmp_path)
    assert p.returncode == 2 and b"failed" in p.stderr


def test_output_file(tmp_path):
    make_tree(tmp_path / "r")
    outside = run(["snapshot", "-o", str(tmp_path / "out.json")], tmp_path / "r")
    assert outside.returncode == 2 and b"outside the repository" in outside.stderr  # never outside the target
    printed = run(["snapshot"], tmp_path / "r").stdout  # the tree before out.json is in it
    p = run(["snapshot", "-o", "out.json"], tmp_path / "r")
    assert p.returncode == 0 and p.stdout == b""
    assert (tmp_path / "r" / "out.json").read_bytes() == printed


def test_unknown_flag_is_usage_error(tmp_path):
    p = run(["snapshot", "--frobnicate"], tmp_path)
    assert p.returncode == 2 and b"Traceback" not in p.stderr


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="needs a byte-transparent file system")
def test_undecodable_names_are_reported_not_fatal(tmp_path):
    make_tree(tmp_path)
    with open(os.path.join(os.fsencode(str(tmp_path)), b"bad\xffname"), "wb") as fh:
        fh.write(b"x")
    p = run(["snapshot"], tmp_path)
    assert p.returncode == 0 and b"undecodable" in p.stderr
    assert json.loads(p.stdout)["README.md"]
    p = run(["snapshot", "src"], tmp_path)  # only what was named is listed: the odd name is elsewhere
    assert p.returncode == 0 and p.stderr == b"" and "src/a.py" in json.loads(p.stdout)
    p = run(["snapshot", os.fsdecode(b"bad\xffname")], tmp_path)  # named itself: reported, not listed
    assert p.returncode == 0 and b"undecodable" in p.stderr and json.loads(p.stdout) == {}


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file_is_reported_not_fatal(tmp_path):
    make_tree(tmp_path)
    secret = write(tmp_path, "secret.txt", "x")
    secret.chmod(0)
    p = run(["snapshot"], tmp_path)
    assert p.returncode == 0 and b"secret.txt" in p.stderr


# ---------------------------------------------------------------- the cache

def _age(root: Path) -> None:
    """Let the racy-git window (2 s on mtime and ctime) pass so the cache may keep these files."""
    import time

    time.sleep(scan.RACY_NS / 1e9 + 0.2)


def test_cache_is_used_and_never_wrong(tmp_path):
    make_tree(tmp_path)
    (tmp_path / ".priors").mkdir()
    cold = snap(tmp_path, "--no-cache")
    assert not (tmp_path / ".priors/cache").exists()
    # a file changed within the racy window is not cached yet — its mtime set ahead, so that a slow start
    # under load cannot age it past the window before the snapshot begins (a flake at load 13)
    a = tmp_path / "src/a.py"
    was = os.stat(a)
    os.utime(a, ns=(was.st_atime_ns, was.st_mtime_ns + 3600 * 10**9))
    assert snap(tmp_path) == cold
    cache = tmp_path / ".priors/cache/snapshot.json"
    assert not cache.exists() or "src/a.py" not in json.loads(cache.read_text())["entries"]
    os.utime(a, ns=(was.st_atime_ns, was.st_mtime_ns))
    _age(tmp_path)
    assert snap(tmp_path) == cold
    entries = json.loads(cache.read_text())["entries"]
    assert "src/a.py" in entries
    # an edit that keeps size and mtime still shows (ctime/inode are part of the key)
    st_ = os.stat(tmp_path / "src/a.py")
    write(tmp_path, "src/a.py", TREE["src/a.py"].replace("return 1", "return 7"))
    os.utime(tmp_path / "src/a.py", ns=(st_.st_atime_ns, st_.st_mtime_ns))
    edited = snap(tmp_path)
    assert edited["src/a.py"] != cold["src/a.py"] and edited["src/a.py#f"] != cold["src/a.py#f"]
    # a poisoned entry for the current identity is believed — but a corrupt file is ignored
    for junk in [b"not json", b'{"format":"1/1","entries":[]}', b'{"format":"x"}', b"\xff\xfe",
                 json.dumps({"format": scan._cache_tag(), "entries": {"src/a.py": [1, "x"]}}).encode()]:
        cache.write_bytes(junk)
        p = run(["snapshot"], tmp_path)
        assert p.returncode == 0 and json.loads(p.stdout) == edited


def test_no_anchor_cache_then_anchor_run(tmp_path):
    make_tree(tmp_path)
    (tmp_path / ".priors").mkdir()
    _age(tmp_path)
    plain = snap(tmp_path, "--no-anchors")
    assert snap(tmp_path) == snap(tmp_path, "--no-cache")
    assert snap(tmp_path, "--no-anchors") == plain


def test_take_snapshot_api(tmp_path):
    make_tree(tmp_path)
    problems: list = []
    m = scan.take_snapshot(tmp_path, paths=[str(tmp_path / "src")], anchors=False, merge={"x": "y"}, problems=problems)
    assert "src/" in m and "*" not in m and m["x"] == "y" and problems == []
    assert scan.take_snapshot(tmp_path) == snap(tmp_path)
    assert scan.take_snapshot(tmp_path, paths=["pkg"], cwd=str(tmp_path / "src"))["src/pkg/"] == snap(tmp_path)["src/pkg/"]
    with pytest.raises(errors.UsageError):
        scan.take_snapshot(tmp_path, paths=["nope"], cwd=str(tmp_path))


# ---------------------------------------------------------------- relevant --snapshot ≡ relevant --scopes

def _keeper_pair(tmp_path):
    trees = [tmp_path / "a", tmp_path / "b"]
    for t in trees:
        make_tree(t)
        write(t, "src/cart.py", "def total(cart):\n    return sum(cart)\n\n\ndef tax():\n    return 0.2\n")
        assert run(["init"], t).returncode == 0
    return trees


def _open_both(tmp_path, a, b, paths=(), via_stdin=False):
    """Open a run in `a` with --snapshot and in `b` with the equivalent scopes (file or stdin)."""
    ra = run(["relevant", "--ns", "review", "--snapshot", *paths], a)
    snap_b = run(["snapshot", *paths], b)
    assert snap_b.returncode == 0
    if via_stdin:
        rb = run(["relevant", "--ns", "review", "--scopes", "-"], b, input=snap_b.stdout)
    else:
        scopes = tmp_path / "scopes-b.json"
        scopes.write_bytes(snap_b.stdout)
        rb = run(["relevant", "--ns", "review", "--scopes", str(scopes)], b)
    assert ra.returncode == rb.returncode == 0, (ra.stderr, rb.stderr)
    assert ra.stdout == rb.stdout
    run_id = json.loads(ra.stdout)["run"]
    rel = [(t / ".priors" / "runs" / run_id / "relevant.json").read_bytes() for t in (a, b)]
    assert rel[0] == rel[1]
    return json.loads(ra.stdout)


def _both(a, b, *args):
    ra, rb = run(list(args), a), run(list(args), b)
    assert (ra.returncode, ra.stdout) == (rb.returncode, rb.stdout), (ra, rb)
    return ra


def test_relevant_snapshot_behaves_exactly_like_the_equivalent_scopes(tmp_path):
    a, b = _keeper_pair(tmp_path)
    first = _open_both(tmp_path, a, b)
    cand = tmp_path / "cand.json"
    cand.write_text(json.dumps({"type": "conclusion", "claim": "total ignores discounts",
                                "scope_ref": "src/cart.py#total", "severity": "major"}))
    cov = tmp_path / "cov.json"
    cov.write_text(json.dumps({"type": "coverage", "claim": "src is reviewed", "scope_ref": "src/", "depth": "major"}))
    assert _both(a, b, "propose", str(cand), "--run", first["run"], "--ns", "review").returncode == 0
    assert _both(a, b, "propose", str(cov), "--run", first["run"], "--ns", "review").returncode == 0
    _both(a, b, "commit", "--run", first["run"])
    # an unrelated edit: the anchor is unchanged, src/ changed
    for t in (a, b):
        write(t, "src/cart.py", "def total(cart):\n    return sum(cart)\n\n\ndef tax():\n    return 0.25\n")
    second = _open_both(tmp_path, a, b, via_stdin=True)
    assert [(v["id"], v["scopeState"]) for v in second["verify"]] == [("P-0001", "unchanged")]
    assert [(f["id"], f["scopeState"]) for f in second["floors"]] == [("P-0002", "changed")]
    _both(a, b, "disposition", "P-0001", "still-open", "--run", second["run"])
    _both(a, b, "commit", "--run", second["run"])
    # now edit the function itself: the anchored finding is touched
    for t in (a, b):
        write(t, "src/cart.py", "def total(cart):\n    return sum(cart) - discount(cart)\n\n\ndef tax():\n    return 0.25\n")
    third = _open_both(tmp_path, a, b, paths=("src",))
    assert [(v["id"], v["scopeState"]) for v in third["verify"]] == [("P-0001", "changed")]
    _both(a, b, "disposition", "P-0001", "fixed", "--run", third["run"])
    _both(a, b, "commit", "--run", third["run"])
    assert (a / ".priors/ledger.jsonl").read_bytes() == (b / ".priors/ledger.jsonl").read_bytes()


@pytest.mark.skipif(not HAS_GIT, reason="git not installed")
def test_root_in_a_subdirectory_of_a_git_work_tree(tmp_path, tmp_path_factory):
    make_tree(tmp_path / "proj")
    write(tmp_path, "outside.txt", "not ours\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "x")
    (tmp_path / "proj" / ".priors").mkdir()
    plain = tmp_path_factory.mktemp("plain")  # outside the work tree: inside it, a folder without .priors/ defers to the top
    make_tree(plain)
    m = snap(tmp_path / "proj" / "src")  # found by the upward search: refs relative to proj/
    assert m == snap(plain)
    assert "outside.txt" not in m and "README.md" in m


# Text the one-pass Python hashing (`hashing.IndentedLines`) must agree with `indented_utf8` on, and
# text it must hand back to the long way: CRLF, a lone CR, tabs (leading and inner), form feeds,
# the marks' own bytes, non-ASCII (and non-ASCII whitespace), bad UTF-8, a binary file.
VARIED = {
    "p/plain.py": "import os\n\n\n@dec\ndef f(a,\n      b):\n    '''doc\n  at two\n'''\n    return (a +\n b)  # c\n\n"
                  "class C:\n    x = 1\n\n    def m(self):\n        if x:\n            pass\n        return 2\n",
    "p/crlf.py": "def f():\r\n    return 1\r\n\r\nclass K:\r\n    def g(self):  \r\n        pass\r\n",
    "p/lone_cr.py": "def f():\r    return 1\r",
    "p/tabs.py": "def f():\n\treturn 1\n\ndef g():\n    x = 'a\tb'\n    return x\n",
    "p/marks.py": "def f():\n    return '\x01 \x02'\n",
    "p/ff.py": "def f():\n\x0c    return 1\n",
    "p/uni.py": "def f():\n    return 'é'  # ünï\n\nclass Ç:\n    def m(self):\n        return '→'\n",
    "p/nbsp.py": "def f():\n    return\u00a01\n",
    "p/bad.py": b"def f():\n    return '\xff'\n",
    "p/bin.py": b"\x00\x01def f():\n    pass\n",
    "p/web.js": "function a() {\n  return 1;\n}\nclass B { m() { return 2; } }\n",
    "p/notes.txt": "just text\n",
}


def test_forked_pooled_spawned_and_serial_snapshots_are_byte_identical(tmp_path, monkeypatch):
    # The first snapshot of a large tree hashes on both cores (forked helpers on Linux, a process
    # pool elsewhere, spawned on macOS and Windows); a small one, or a machine where no helper can
    # start, hashes in one process. Each way must print the same bytes.
    make_tree(tmp_path)
    make_tree(tmp_path, VARIED)
    for i in range(12):
        write(tmp_path, f"many/f{i}.py", f"class K{i}:\n    def g(self):\n        return {i}\n")
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    serial = hashing.dumps_map(scan.take_snapshot(tmp_path, use_cache=False))
    assert "p/uni.py#Ç.m" in serial and "p/crlf.py#K.g" in serial and "p/tabs.py#g" in serial
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(scan, "POOL_MIN_WEIGHT", 0)
    assert hashing.dumps_map(scan.take_snapshot(tmp_path, use_cache=False)) == serial  # forked on Linux
    jobs = [(rel, str(tmp_path / rel), True) for rel in sorted(VARIED)]
    sizes = {rel: (tmp_path / rel).stat().st_size for rel in VARIED}
    one = sorted(scan.hash_chunk(jobs))
    assert sorted(scan._run_pool(jobs, sizes, 2, None)) == one
    import multiprocessing
    assert sorted(scan._run_pool(jobs, sizes, 2, None, multiprocessing.get_context("spawn"))) == one


LINES = st.lists(st.tuples(st.sampled_from(["", " ", "  ", "    ", "        ", "\x0b", "   \x0c"]),
                           st.sampled_from(["", "def f():", "x  =  1", "return (a,", "é  ü", "pass  ", "#c",
                                            "a\tb", "  ", "\u00a0x"]),
                           st.sampled_from(["\n", "\r\n"])), max_size=14)


@settings(max_examples=300, deadline=None)
@given(LINES, st.data())
def test_one_pass_indented_hashes_are_the_long_ways(lines, data):
    # A Python file's hash and each definition's are joined from its lines measured once; they must
    # be `indented_utf8` of the file and of the definition's own text, whatever the text holds.
    text = "".join(indent + body + end for indent, body, end in lines) + "z"
    raw = text.encode("utf-8")
    if not hashing.IndentedLines.fits(raw):
        assert "\u00a0" in text or "\t" in text.replace("a\tb", "")
        return
    one = hashing.IndentedLines(raw)
    assert one.whole() == hashing.indented_utf8(raw)
    starts = [0] + [i + 1 for i, c in enumerate(raw) if c == 10]
    spans = []
    for _ in range(3):
        start = data.draw(st.sampled_from(starts))
        end = data.draw(st.integers(start + 1, len(raw)))
        while end < len(raw) and raw[end] & 0xC0 == 0x80:
            end += 1  # a span ends between characters (it comes from character offsets)
        spans.append((start, end))
    for (start, end), got in zip(spans, one.span_hashes(spans)):
        last_line = raw[raw.rfind(b"\n", 0, end - 1) + 1:end]
        if last_line.strip():  # a definition's span: it ends on its last token
            assert got == sha12_bytes(hashing.indented_utf8(raw[start:end]))
        else:
            assert got is None  # anything else is left to the long way
    inside = [i for i in range(len(raw)) if i not in starts]
    assert one.span_hashes([(i, len(raw)) for i in inside]) == [None] * len(inside)  # not a line's start
