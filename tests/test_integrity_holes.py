"""Integrity under attack (issue 14), the smaller holes and hand edits: a deleted ledger, symlinks,
a broken config, hostile input files, scope-ref collisions, verify against the committed ledger,
commit re-judging staged candidates — and control characters, and enum options that silently
matched nothing. Each test is one reproduction, through the real CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

import ledgerkit as k
from conftest import Keeper
from test_integrity import _one_finding  # the same committed run with one open finding

# Every character that must never reach a terminal or PRIORS.md raw.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\U000e0000-\U000e007f]")
HOSTILE = "evil \x1b]0;pwned\x07 \x1b[2J \u202egnp.exe\u202c \x00 \x9b31m \U000e0041 end"


def _hostile_ledger(keeper: Keeper) -> None:
    """A ledger another keeper (or a hand) wrote, holding control and bidi characters everywhere text goes."""
    lesson = k.prior("P-0002", "run-001", "lesson " + HOSTILE, type="behavioral", facets=dict(k.BEHAVIORAL))
    recs = [
        k.prior("P-0001", "run-001", HOSTILE, ref="a\x1b[31m.py", evidence="ev " + HOSTILE, severity="major"),
        lesson,
        k.commit("run-001"),
        k.disp("P-0002", "run-002", "challenged"),
        dict(k.call("run-002", 1, "P-0001"), claim="call " + HOSTILE),
        k.commit("run-002"),
        k.decide("P-0001", "wontfix", "because " + HOSTILE),
    ]
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(k.to_bytes(recs))


# ------------------------------------------------------------------ control characters


def test_control_characters_in_a_ledger_are_shown_escaped_everywhere(keeper, tmp_path):
    _hostile_ledger(keeper)
    keeper.ok("render")
    md = keeper.read(".priors/PRIORS.md")
    assert not RAW.search(md) and "\\u001b]0;pwned\\u0007" in md and "\\u202egnp.exe" in md
    for verb in (["show", "P-0001"], ["show", "P-0002"], ["list"], ["list", "--json"], ["status"],
                 ["status", "--calls"], ["history"], ["lessons"], ["show", "P-0001", "--json"], ["verify"]):
        r = keeper(*verb)
        assert r.code in (0, 1), (verb, r)
        assert not RAW.search(r.out) and not RAW.search(r.err), (verb, r)
    shown = keeper.ok("show", "P-0001")
    assert "\\u001b[2J" in shown and "\\u202egnp.exe" in shown and "\\udb40\\udc41" in shown
    # a JSON answer stays JSON meaning the very same text
    assert json.loads(keeper.ok("show", "P-0001", "--json"))["claim"] == HOSTILE
    keeper.ok("report", "-o", str(tmp_path / "r.html"))
    assert not RAW.search((tmp_path / "r.html").read_text(encoding="utf-8"))
    keeper.ok("history", "--svg", str(tmp_path / "h.svg"))
    assert not RAW.search((tmp_path / "h.svg").read_text(encoding="utf-8"))


def test_a_line_feed_in_a_finding_s_words_cannot_start_a_line_of_show_s_answer(keeper):
    """Hostile pass 27p: a finding's `direction` (and a reversal call's) keeps its line feeds — new
    text may hold them, as may an analyzer's rule id — and `show` printed them raw, so an agent's
    words began lines of a person's (or a CI log's) answer: a workflow command such as `::add-mask::`."""
    keeper.write("a.py", "a = 1\n")
    scopes = {"a.py": keeper.hash("a.py")}
    run = keeper.open_run("web", scopes)["run"]
    assert keeper.propose(run, "web", {"type": "conclusion", "claim": "a is magic", "scope_ref": "a.py",
                                       "direction": "hoist\n::add-mask::secret", "evidence": "e\n::error::ev"}).code == 0
    keeper.ok("commit", "--run", run)
    run = keeper.open_run("web", scopes)["run"]
    keeper.ok("disposition", "--run", run, "P-0001", "fixed")
    keeper.ok("commit", "--run", run)
    run = keeper.open_run("web", scopes)["run"]  # P-0001 is fixed: no verify item
    r = keeper.propose(run, "web", {"type": "conclusion", "claim": "a must stay magic", "scope_ref": "a.py",
                                    "opposes": ["hoist\n::add-mask::secret"], "direction": "keep\n::error::call"})
    assert r.code == 1 and '"REVERSAL"' in r.out, r
    keeper.ok("commit", "--run", run)
    shown = keeper.ok("show", "P-0001")
    assert not any(ln.startswith("::") for ln in shown.splitlines()), shown
    assert "direction hoist\\u000a::add-mask::secret" in shown and "(keep\\u000a::error::call)" in shown, shown
    assert json.loads(keeper.ok("show", "P-0001", "--json"))["direction"] == "hoist\n::add-mask::secret"


@pytest.mark.parametrize("bad", ["\x1b[2J", "\x07", "\x00", "\u202e", "\u2066", "\x9b", "\x7f", "\U000e0041"])
def test_new_text_holding_control_characters_is_refused(keeper, bad):
    keeper.write("a.py", "a = 1\n")
    run = keeper.open_run("web", {"a.py": keeper.hash("a.py")})["run"]
    for field in ("claim", "evidence"):
        cand = {"type": "conclusion", "claim": "a is magic", "scope_ref": "a.py"}
        cand[field] = f"x {bad} y"
        keeper.candidate(cand)
        err = keeper.usage("propose", "cand.json", "--run", run, "--ns", "web")
        assert "control or bidirectional-format character" in err and "nothing was written" in err
        assert not RAW.search(err)
    assert not (keeper.root / ".priors" / "runs" / run / "staged.jsonl").exists()
    keeper.ok("abort", "--run", run)
    if bad != "\x00":  # argv cannot hold NUL
        err = keeper.usage("add", "--ns", "web", f"lesson {bad} text")
        assert "control or bidirectional-format character" in err
    # tab, line feed and a Windows line end are text
    keeper.ok("add", "--ns", "web", "lesson\twith a tab\r\nand lines")


def test_a_reason_with_control_characters_is_refused(keeper):
    keeper.ok("add", "--ns", "web", "run the linter first")
    err = keeper.usage("decide", "P-0001", "obsolete", "--because", "gone \x1b[2J")
    assert "control or bidirectional-format character (U+001B)" in err
    keeper.usage("redact", "P-0001", "--because", "\u202eleak")
    bundle = json.loads(keeper.ok("export"))
    bundle["lessons"] = [{"type": "calibration", "claim": "x \x1b]0;t\x07"}]
    keeper.write("bundle.json", json.dumps(bundle))
    assert "control or bidirectional-format" in keeper.usage("import", "bundle.json", "--ns", "web")


@pytest.mark.one_cache_mode
def test_the_decide_walk_shows_control_characters_escaped(tmp_path):
    pytest.importorskip("pty")
    from test_desk import Pty

    keeper = Keeper(tmp_path)
    keeper.ok("init")
    _hostile_ledger(keeper)
    keeper.ok("render")
    t = Pty(keeper.root, "decide", "--open")
    seen = t.expect(" > ")
    t.send("q")
    code, rest = t.finish()
    assert code == 0
    assert "\\u001b]0;pwned" in seen + rest and "\\u202egnp.exe" in seen + rest
    assert not RAW.search((seen + rest).replace("\r", ""))  # the terminal's own CRLF aside


def test_visible_escapes_are_json_escapes():
    from priors.core.controls import visible

    for s in (HOSTILE, "plain", "tab\tand\nline", "ünïcode \u2028"):
        v = visible(s)
        assert not RAW.search(v.replace("\n", "").replace("\t", ""))
        assert json.loads('"' + v.replace("\\", "\\\\").replace('"', '\\"')
                          .replace("\\\\u", "\\u").replace("\n", "\\n").replace("\t", "\\t") + '"') == s


# ------------------------------------------------------------------ enum options


def test_an_unknown_type_or_status_is_a_usage_error_naming_the_values(keeper):
    keeper.ok("add", "--ns", "web", "run the linter first")
    err = keeper.usage("list", "--type", "bogus")
    assert "conclusion" in err and "calibration" in err and "bogus" in err
    err = keeper.usage("list", "--status", "bogus")
    assert "open" in err and "wontfix" in err
    err = keeper.usage("export", "--type", "conclusion")
    assert "calibration" in err and "behavioral" in err
    assert "P-0001" in keeper.ok("list", "--type", "calibration")
    assert json.loads(keeper.ok("export", "--type", "calibration"))["lessons"]
    assert keeper.ok("list", "--type", "coverage").strip() == "no priors match"


# ------------------------------------------------------------------ hostile input files


def _fifo(keeper: Keeper, name: str) -> str:
    os.mkfifo(str(keeper.root / name))
    return name


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="needs FIFOs and /dev/zero")
def test_fifos_and_devices_are_refused_at_once(keeper):
    """A FIFO blocked the verb until a writer came; /dev/zero was read until memory ran out."""
    keeper.write("a.py", "a = 1\n")
    fifo = _fifo(keeper, "pipe")
    keeper.scopes({"a.py": keeper.hash("a.py")})
    for args in (["hash", fifo], ["hash", "/dev/zero"], ["hash", "--raw", "/dev/zero"],
                 ["relevant", "--ns", "web", "--scopes", fifo], ["relevant", "--ns", "web", "--scopes", "/dev/zero"],
                 ["import", fifo, "--ns", "web"], ["snapshot", "--merge", "/dev/zero"]):
        r = subprocess.run([*_cli(), *args], cwd=str(keeper.root), capture_output=True, text=True, timeout=60,
                           env=_env())
        assert r.returncode == 2 and "not a regular file" in r.stderr, (args, r)
    assert not (keeper.root / ".priors" / "runs").exists() or not list((keeper.root / ".priors" / "runs").iterdir())
    run = keeper.open_run("web", {"a.py": keeper.hash("a.py")})["run"]
    r = subprocess.run([*_cli(), "propose", fifo, "--run", run, "--ns", "web"], cwd=str(keeper.root),
                       capture_output=True, text=True, timeout=60, env=_env())
    assert r.returncode == 2 and "not a regular file" in r.stderr
    for args in (["hash", "--stdin-raw"], ["relevant", "--ns", "web", "--scopes", "-"]):
        with open("/dev/zero", "rb") as zero:
            r = subprocess.run([*_cli(), *args], cwd=str(keeper.root), stdin=zero, capture_output=True, text=True,
                               timeout=60, env=_env())
        assert r.returncode == 2 and "a device" in r.stderr, (args, r)
    assert keeper.ok("hash", "--stdin-raw", stdin="").strip() == "e3b0c44298fc"  # a pipe still reads


def test_an_input_file_over_the_limit_is_refused(keeper):
    from priors.core.vocabulary import MAX_INPUT_BYTES

    keeper.write("a.py", "a = 1\n")
    run = keeper.open_run("web", {"a.py": keeper.hash("a.py")})["run"]
    big = keeper.root / "big.json"
    with open(big, "wb") as fh:  # sparse: no disk, but a reader that reads it whole takes its size in memory
        fh.truncate(MAX_INPUT_BYTES + 1)
    err = keeper.usage("propose", "big.json", "--run", run, "--ns", "web")
    assert str(MAX_INPUT_BYTES) in err and "big.json" in err
    assert not (keeper.root / ".priors" / "runs" / run / "staged.jsonl").exists()


def _cli():
    import sys

    return [sys.executable, "-m", "priors"]


def _env():
    from conftest import REPO

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_streamed_hashing_equals_whole_hashing():
    """Small chunks cut words, whitespace runs and UTF-8 sequences anywhere; the hash is the same."""
    import random

    from priors.core.canonical import sha12_bytes
    from priors.snapshot.hashing import content_hash, digest_stream, text_hash

    rng = random.Random(14)
    alphabet = [b"a", b"b", b" ", b"\t", b"\n", b"\r", b"\xc2\xa0", b"\xe3\x80\x80", b"\xef\xbb\xbf", b"\xc3\xa9",
                b"\xff", b"\xe2\x82", b"\xf0\x9f\x98\x80", b"\x00", b"  "]
    for _ in range(400):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        size = rng.randint(1, 7)
        chunks = [data[i:i + size] for i in range(0, len(data), size)]
        assert digest_stream(chunks, "text", 0)[0] == text_hash(data), data
        assert digest_stream(chunks, "raw", 0)[0] == sha12_bytes(data)
        if data:
            assert digest_stream(chunks, "content", 0)[0] == content_hash(data), data
        assert digest_stream(chunks, "text", 1 << 20) == (text_hash(data), data)


def test_a_huge_file_is_hashed_as_a_stream(keeper):
    """A file over the whole-read limit: the same hash as read whole, in a fraction of its size in memory."""
    pytest.importorskip("resource")  # peak memory of a child: POSIX
    import sys

    from priors.core.vocabulary import MAX_WHOLE_FILE_BYTES
    from priors.snapshot.hashing import text_hash

    line = ("word " * 400 + "\n").encode()
    n = (MAX_WHOLE_FILE_BYTES * 6) // len(line)
    with open(keeper.root / "big.py", "wb") as fh:
        for _ in range(n // 1000):
            fh.write(line * 1000)
    want = text_hash((keeper.root / "big.py").read_bytes())
    assert keeper.hash("big.py") == want
    probe = ("import resource, subprocess, sys, json; "
             "p = subprocess.run(sys.argv[1:], capture_output=True); "
             "print(json.dumps([p.returncode, p.stdout.decode(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")
    r = subprocess.run([sys.executable, "-c", probe, *_cli(), "snapshot", "big.py", "--no-cache"],
                       cwd=str(keeper.root), capture_output=True, text=True, env=_env(), timeout=300)
    code, out, peak_kb = json.loads(r.stdout)
    assert code == 0 and json.loads(out)["big.py"] == want
    size_mb = (keeper.root / "big.py").stat().st_size / 2**20
    assert peak_kb / 1024 < size_mb / 2, (peak_kb, size_mb)  # it used to hold the whole file, and more


# ------------------------------------------------------------------ a deleted ledger, symlinks, config, init


def test_a_deleted_ledger_is_named_not_silently_started_over(keeper):
    scopes = _one_finding(keeper)
    (keeper.root / ".priors" / "ledger.jsonl").unlink()
    for verb in (["status"], ["list"], ["show", "P-0001"], ["history"], ["render"], ["init"], ["decide", "P-0001", "wontfix"],
                 ["relevant", "--ns", "web", "--scopes", scopes], ["add", "--ns", "web", "a lesson"], ["lessons"]):
        r = keeper(*verb)
        assert r.code == 2 and "ledger.jsonl is missing" in r.err and "PRIORS.md lists 1 prior" in r.err, (verb, r)
        assert "git checkout -- .priors/ledger.jsonl" in r.err
    assert not (keeper.root / ".priors" / "ledger.jsonl").exists()
    assert not list((keeper.root / ".priors" / "runs").iterdir())
    r = keeper("verify", "--json")
    assert r.code == 1 and "LEDGER_MISSING" in [p["code"] for p in r.json["problems"]]
    # starting over on purpose: remove .priors/ and init
    import shutil

    shutil.rmtree(keeper.root / ".priors")
    keeper.ok("init")
    keeper.ok("status")


def test_a_deleted_ledger_with_an_open_run_is_named_too(keeper):
    scopes = _one_finding(keeper)
    keeper.ok("relevant", "--ns", "web", "--scopes", scopes)
    (keeper.root / ".priors" / "ledger.jsonl").unlink()
    (keeper.root / ".priors" / "PRIORS.md").unlink()
    err = keeper.usage("status")
    assert "runs/ holds run-002" in err


@pytest.mark.parametrize("what", ["dir", "ledger"])
def test_readers_refuse_a_symlinked_priors_or_ledger_like_writers(keeper, tmp_path, what):
    _one_finding(keeper)
    d = keeper.root / ".priors"
    elsewhere = tmp_path.parent / (tmp_path.name + "-elsewhere")
    elsewhere.mkdir()
    if what == "dir":
        d.rename(elsewhere / ".priors")
        d.symlink_to(elsewhere / ".priors")
    else:
        (d / "ledger.jsonl").rename(elsewhere / "ledger.jsonl")
        (d / "ledger.jsonl").symlink_to(elsewhere / "ledger.jsonl")
    for verb in (["verify"], ["show", "P-0001"], ["reflect"], ["list"], ["status"], ["history"], ["lessons"],
                 ["report", "-o", str(tmp_path / "r.html")], ["decide", "P-0001", "wontfix"]):
        r = keeper(*verb)
        assert r.code == 2 and "is a symlink" in r.err, (verb, r)
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("content", [b"{bad", b'{"max_inject": 0}', b'{"nope": 1}', b"\xff\xfe", b"[]"])
def test_a_broken_config_names_a_fix_that_works(keeper, content):
    scopes = _one_finding(keeper)
    cfg = keeper.root / ".priors" / "config.json"
    cfg.write_bytes(content)
    for verb in (["config"], ["config", "max_inject", "3"], ["config", "max_inject", "none"],
                 ["relevant", "--ns", "web", "--scopes", scopes]):
        err = keeper.usage(*verb)
        assert "config.json" in err and "delete it" in err and "`priors config KEY none`" not in err, (verb, err)
    assert len(list((keeper.root / ".priors" / "runs").iterdir())) == 0  # never silently the defaults
    cfg.unlink()  # the fix the message names
    keeper.ok("config", "max_inject", "3")
    keeper.ok("relevant", "--ns", "web", "--scopes", scopes)


@pytest.mark.parametrize("name,folder", [(".gitignore", True), ("ledger.jsonl", True), ("runs", False), ("PRIORS.md", True)])
def test_init_checks_the_layout_before_creating_anything(bare, name, folder):
    d = bare.root / ".priors"
    d.mkdir()
    if folder:
        (d / name).mkdir()
    else:
        (d / name).write_text("x")
    r = bare("init")
    assert r.code == 2 and r.out == "" and name in r.err and "nothing was created" in r.err
    assert sorted(p.name for p in d.iterdir()) == [name]
    (d / name).rmdir() if folder else (d / name).unlink()
    bare.ok("init")
    assert bare("verify").code == 0


# ------------------------------------------------------------------ file#name


def test_a_file_named_like_a_definition_gets_no_ref_of_its_own(bare):
    bare.write("a.py", "def f():\n    return 1\n")
    bare.write("a.py#f", "not the definition\n")
    bare.write("a.py#g", "nor this\n")
    bare.write("notes#1.md", "a hash in a name is fine alone\n")
    bare.write("a.py#z.py", "def q():\n    return 2\n")  # a Python file of its own, with a definition
    r = bare("snapshot")
    assert r.code == 0
    snap = json.loads(r.out)
    assert snap["a.py#f"] == bare.ok("hash", "a.py").strip() == snap["a.py"]  # the definition, not the file
    assert "a.py#g" not in snap and "notes#1.md" in snap
    # nor its definitions (hostile pass 32a's side note): `a.py#z.py#q` would read as a.py's `z.py#q`
    assert not [ref for ref in snap if ref.startswith("a.py#z.py")] and "a.py#z.py: left out" in r.err
    assert "a.py#f: left out" in r.err and "a.py#g: left out" in r.err
    bare.write("a.py#g", "changed\n")  # still counted in its folder's hash
    assert json.loads(bare.ok("snapshot"))["*"] != snap["*"]


def test_every_hash_in_a_name_is_read_as_a_definition_would_be_and_a_snapshot_of_paths_agrees(bare):
    """Hostile pass 32c: only the first `#` was looked at, so a file `x#y.py#f` beside a Python file `x#y.py`
    shared its ref with that file's definition `f` (editing the file left the map unchanged); and a snapshot
    of the path `d/a.py#z.py` gave the file the ref that the whole snapshot gives d/a.py's method `z.py`."""
    bare.write("x#y.py", "def f():\n    return 1\n")
    bare.write("x#y.py#f", "print(2)\n")
    bare.write("d/a.py", "class z:\n    def py(self):\n        return 3\n")
    bare.write("d/a.py#z.py", "print(4)\n")
    whole = bare("snapshot")
    snap = json.loads(whole.out)
    assert snap["x#y.py#f"] == snap["x#y.py"]  # the definition f (the whole file), not the file of that name
    assert "x#y.py#f: left out of the map — its name reads as a definition in x#y.py " in whole.err
    bare.write("x#y.py#f", "print(3)\n")
    assert json.loads(bare.ok("snapshot"))["x#y.py#f"] == snap["x#y.py#f"]  # (it never named that file)
    assert snap["d/a.py#z.py"] != bare.ok("hash", "d/a.py#z.py").strip()  # the method, in the whole map
    part = bare("snapshot", "d/a.py#z.py")
    assert part.code == 0 and json.loads(part.out) == {} and "d/a.py#z.py: left out of the map" in part.err


# ------------------------------------------------------------------ hand edits: verify against the last commit


@pytest.mark.one_cache_mode
def test_verify_names_a_hand_edit_of_a_committed_line(tmp_path):
    from test_integrity import Clone

    a = Clone(tmp_path / "a")
    a.root.mkdir()
    a.git("init", "-q", "-b", "main")
    a.ok("init")
    _one_finding(a)
    a.git("add", "-A")
    a.git("commit", "-qm", "run-001")
    assert a.ok("verify").strip().endswith("grew only since the last commit (HEAD)")
    ledger = a.root / ".priors" / "ledger.jsonl"
    edited = ledger.read_bytes().replace(b"a is magic", b"a is fine!")
    ledger.write_bytes(edited)  # valid canonical JSON: every other verb takes it
    a.ok("status")
    r = a("verify", "--json")
    assert r.code == 1
    codes = {(p["code"], p["line"]) for p in r.json["problems"]}
    assert ("NOT_APPEND_ONLY", 1) in codes, codes
    assert "HEAD" in a("verify").out
    assert a("verify", "--no-git").code == 1  # PRIORS.md no longer matches: the render check alone
    a.usage("verify", "--no-git", "--since", "HEAD")
    a.git("checkout", "--", ".priors/ledger.jsonl")
    a.ok("decide", "P-0001", "wontfix")  # lines added since HEAD: growth, not an edit
    a.ok("redact", "P-0001", "--because", "leak")  # the sanctioned rewrite
    assert a.ok("verify").startswith("ledger sound")


# ------------------------------------------------------------------ commit re-judges staged findings


CLAIM = "the total ignores the discount when the cart is empty"
REWORDED = "when the cart is empty the total ignores the discount"


@pytest.mark.one_cache_mode
def test_a_staged_finding_that_became_a_reraise_mid_run_is_not_recorded(tmp_path):
    """A proposes retiring P-0001 and stages a rewording; B's person decides P-0001 wontfix; A pulls and commits."""
    from test_integrity import Clone

    a = Clone(tmp_path / "a")
    a.root.mkdir()
    a.git("init", "-q", "-b", "main")
    a.ok("init")
    a.write(".gitignore", "cand.json\nscopes.json\n")
    a.write("cart.py", "def total(cart):\n    return sum(cart)\n")
    scopes = {"cart.py": a.hash("cart.py")}
    run = a.open_run("web", scopes)["run"]
    assert a.propose(run, "web", {"type": "conclusion", "claim": CLAIM, "scope_ref": "cart.py"}).code == 0
    a.ok("commit", "--run", run)
    a.git("add", "-A")
    a.git("commit", "-qm", "run-001")
    b = Clone(tmp_path / "b")
    subprocess.run(["git", "clone", "-q", str(a.root), str(b.root)], check=True, env=b.env())

    run = a.open_run("web", scopes)["run"]
    a.ok("disposition", "P-0001", "obsolete-proposed", "--run", run)
    r = a.propose(run, "web", {"type": "conclusion", "claim": REWORDED, "scope_ref": "cart.py"})
    assert r.code == 0 and "P-0002 staged" in r.out  # P-0001 was on its way out: a rewording was allowed

    b.ok("decide", "P-0001", "wontfix", "--because", "empty carts never reach checkout")
    b.git("commit", "-qam", "decide")
    a.git("pull", "-q", "--ff-only", str(b.root), "main")

    out = a.ok("commit", "--run", run)
    assert "1 new finding not recorded" in out and "P-0002 (RERAISE of P-0001)" in out, out
    assert "New this run: 0" in out and "Everything settled still holds" not in out
    assert [r["id"] for r in a.ledger() if r["t"] == "prior"] == ["P-0001"]
    assert json.loads(a.ok("show", "P-0001", "--json"))["status"] == "wontfix"
    assert a("verify").code == 0


def test_a_staged_finding_that_became_a_reversal_mid_run_becomes_a_call(keeper):
    keeper.write("a.py", "a = 1\n")
    scopes = {"a.py": keeper.hash("a.py")}
    run = keeper.open_run("web", scopes)["run"]
    keeper.propose(run, "web", {"type": "conclusion", "claim": "keep the error messages terse",
                                "scope_ref": "a.py", "direction": "terser"})
    keeper.ok("commit", "--run", run)
    run = keeper.open_run("web", scopes)["run"]
    keeper.ok("disposition", "P-0001", "still-open", "--run", run)
    r = keeper.propose(run, "web", {"type": "conclusion", "claim": "spell the error messages out in full",
                                    "scope_ref": "a.py", "direction": "expand"})
    assert r.code == 0 and "P-0002 staged" in r.out  # P-0001 was open: no reversal yet
    # a person's decision arrives in the ledger while the run is open (what a git pull brings)
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes() + k.to_bytes([k.decide("P-0001", "accepted", "terse is house style")]))
    out = keeper.ok("commit", "--run", run)
    assert "P-0002 (REVERSAL of P-0001: put to you as a call)" in out and "need your call" in out, out
    assert [r["id"] for r in keeper.ledger() if r["t"] == "prior"] == ["P-0001"]
    calls = [r for r in keeper.ledger() if r["t"] == "call"]
    assert len(calls) == 1 and calls[0]["conflicts_with"] == "P-0001" and calls[0]["direction"] == "expand"
    assert keeper("verify").code == 0


def test_hash_text_hashes_any_character(keeper):
    """`hash --text` stores and shows nothing: a control character is hashed, not refused."""
    from priors.core.canonical import normalize, sha12

    assert keeper.ok("hash", "--text", "x\x1by\u202e").strip() == sha12(normalize("x\x1by\u202e"))


# ------------------------------------------------------------------ where -o may write


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_an_output_never_replaces_the_keepers_files_a_device_or_a_pipe(keeper, tmp_path):
    """report, export and snapshot write `-o` atomically (rename over the target): into .priors/ or
    over a symlink, FIFO or device that would destroy it, so each is a usage error and nothing moves."""
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(k.to_bytes(k.sample()))
    keeper.ok("render")
    before = {p.name: p.read_bytes() for p in (keeper.root / ".priors").iterdir() if p.is_file()}
    fifo = tmp_path / "pipe"
    os.mkfifo(str(fifo))
    link = tmp_path / "link.html"
    link.symlink_to(keeper.root / ".priors" / "ledger.jsonl")
    cases = [
        ["report", "-o", ".priors/ledger.jsonl"],
        ["report", "-o", str(keeper.root / ".priors" / "PRIORS.md")],
        ["report", "-o", "src/../.priors/new.html"],
        ["report", "-o", str(link)],
        ["export", "--sarif", "-o", ".priors/ledger.jsonl"],
        ["export", "-o", ".priors/PRIORS.md"],
        ["export", "--sarif", "-o", str(fifo)],
        ["report", "-o", "/dev/null"],
        ["snapshot", "-o", ".priors/scopes.json"],
    ]
    (keeper.root / "src").mkdir(exist_ok=True)
    for argv in cases:
        r = keeper(*argv)
        assert r.code == 2 and r.out == "", (argv, r)
        assert argv[-1] in r.err or "-o" in r.err, (argv, r)
    after = {p.name: p.read_bytes() for p in (keeper.root / ".priors").iterdir() if p.is_file()}
    assert after == before
    assert fifo.exists() and not fifo.is_file() and link.is_symlink()
    assert keeper.ok("report", "-o", str(tmp_path / "page.html")).startswith("wrote")  # a plain new file is fine


def test_an_output_stays_inside_the_repository(keeper, tmp_path):
    """No path a person names reaches outside the repository: `-o ../x`, an absolute path elsewhere, a
    name of blanks or with a newline are usage errors, and `-o -` prints for a redirect instead."""
    keeper.ok("init")
    outside = keeper.root.parent / "outside-page.html"
    for verb in (["report", "-o"], ["export", "-o"], ["snapshot", "-o"], ["history", "--svg"]):
        for name in (str(outside), "../outside-page.html", " ", "a\nb"):
            err = keeper.usage(*verb, name)
            assert "outside the repository" in err or "blanks or with control characters" in err, (verb, name, err)
    assert not outside.exists() and not (keeper.root / " ").exists()
    assert keeper.ok("report", "-o", "-").startswith("<!DOCTYPE html>")
