"""Integrity under attack (issue 14): a person's decision always wins, no write ever lies,
nothing poisons the ledger. Each test is one reproduction from the issue."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Optional, Tuple

import pytest

import ledgerkit as k
from conftest import REPO, Keeper, run_priors
from priors.core.fold import fold, parse_lines
from priors.core.ledger_checks import check, check_ledger

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_MERGE_AUTOEDIT": "no",
}


class Clone(Keeper):
    def env(self) -> dict:
        env = dict(os.environ)
        env.update(GIT_ENV)
        env["HOME"] = str(self.root.parent)
        return env

    def git(self, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=str(self.root), capture_output=True, text=True, env=self.env())
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc.stdout

    def __call__(self, *args: str, stdin=None, env=None):
        return run_priors(self.root, *args, stdin=stdin, env={**GIT_ENV, "HOME": str(self.root.parent), **(env or {})})


def _one_finding(kp: Keeper, ns: str = "web") -> str:
    """A committed run with one open finding P-0001 on a.py; returns the scopes file."""
    kp.write("a.py", "a = 1\n")
    scopes = {"a.py": kp.hash("a.py")}
    run = kp.open_run(ns, scopes)["run"]
    assert kp.propose(run, ns, {"type": "conclusion", "claim": "a is magic", "scope_ref": "a.py"}).code == 0
    kp.ok("commit", "--run", run)
    return kp.scopes(scopes)


def status_of(kp: Keeper, pid: str) -> str:
    return fold(parse_lines(kp.ledger_bytes())).priors[pid].status


def _two_clones(tmp_path: Path, decided: Optional[str] = None) -> Tuple["Clone", "Clone"]:
    """Clone A with run-001's one finding (decided by a person when `decided`), committed; B cloned from it."""
    a = Clone(tmp_path / "a")
    a.root.mkdir()
    a.git("init", "-q", "-b", "main")
    a.ok("init")
    a.write(".gitignore", "cand.json\nscopes.json\n")
    _one_finding(a)
    if decided:
        a.ok("decide", "P-0001", decided)
    a.git("add", "-A")
    a.git("commit", "-qm", "run-001")
    b = Clone(tmp_path / "b")
    subprocess.run(["git", "clone", "-q", str(a.root), str(b.root)], check=True, env=b.env())
    return a, b


# ------------------------------------------------------------------ 1. human decisions always win


@pytest.mark.one_cache_mode
def test_decision_pulled_mid_run_wins_over_the_staged_verdict(tmp_path: Path):
    """Clone A stages still-open, clone B decides wontfix and pushes, A pulls (fast-forward) and commits."""
    a, b = _two_clones(tmp_path)

    run = a.open_run("web", {"a.py": a.hash("a.py")})["run"]
    a.ok("disposition", "P-0001", "still-open", "--run", run)

    b.ok("decide", "P-0001", "wontfix", "--because", "we like it")
    b.git("commit", "-qam", "decide")
    a.git("pull", "-q", "--ff-only", str(b.root), "main")

    out = a.ok("commit", "--run", run)
    assert "Everything settled still holds" not in out
    assert "1 verdict set aside" in out and "P-0001" in out
    assert status_of(a, "P-0001") == "wontfix"
    assert json.loads(a.ok("show", "P-0001", "--json"))["status"] == "wontfix"
    assert not any(r.get("action") == "disposition" for r in a.ledger())
    assert a("verify").code == 0
    a.assert_rendered()


def test_a_decision_pulled_before_any_verdict_leaves_the_run_committable(tmp_path: Path):
    """The pull comes first: the prior is binding now, so no verdict may be given — and none is owed."""
    a, b = _two_clones(tmp_path)
    run = a.open_run("web", {"a.py": a.hash("a.py")})["run"]
    b.ok("decide", "P-0001", "wontfix", "--because", "we like it")
    b.git("commit", "-qam", "decide")
    a.git("pull", "-q", "--ff-only", str(b.root), "main")
    assert a("disposition", "P-0001", "fixed", "--run", run).code == 1  # refused: a person decided it
    out = a.ok("commit", "--run", run)
    assert "1 without a verdict" in out and "P-0001" in out
    assert status_of(a, "P-0001") == "wontfix"
    assert a("verify").code == 0


@pytest.mark.one_cache_mode
def test_a_pulled_reopen_also_wins(tmp_path: Path):
    """Not only binding verdicts: any decision a person made after the run opened keeps its word."""
    a, b = _two_clones(tmp_path, "wontfix")
    a.ok("decide", "P-0001", "reopen", "--because", "it is back")
    a.git("commit", "-qam", "reopen")
    b.git("pull", "-q", "--ff-only", str(a.root), "main")
    # B: the prior is open again; open a run, judge it, then A decides once more and B pulls
    run = b.open_run("web", {"a.py": b.hash("a.py")})["run"]
    b.ok("disposition", "P-0001", "fixed", "--run", run)
    a.ok("decide", "P-0001", "reopen", "--because", "still back")
    a.git("commit", "-qam", "reopen again")
    b.git("pull", "-q", "--ff-only", str(a.root), "main")
    out = b.ok("commit", "--run", run)
    assert "1 verdict set aside" in out
    assert status_of(b, "P-0001") == "open"


def test_hand_edited_staging_cannot_overturn_a_binding_decision(keeper):
    """Add a wontfix prior to relevant.json's verify list and a `fixed` to dispositions.jsonl by hand."""
    scopes = _one_finding(keeper)
    keeper.ok("decide", "P-0001", "wontfix")
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    rdir = keeper.root / ".priors" / "runs" / run
    rel = json.loads((rdir / "relevant.json").read_text())
    assert rel["verify"] == []
    rel["verify"] = [{"id": "P-0001", "claim": "a is magic", "scope_ref": "a.py", "scopeState": "unchanged"}]
    (rdir / "relevant.json").write_text(json.dumps(rel))
    (rdir / "dispositions.jsonl").write_text(json.dumps(k.disp("P-0001", run, "fixed")) + "\n")
    before = keeper.ledger_bytes()
    # decided before the run opened, P-0001 was no verify item: the door refuses the verdict, so does
    # commit (it used to set it aside, saying the person decided "after this run opened")
    body = keeper.refused("MALFORMED_DISPOSITIONS", "commit", "--run", run)
    assert body["ids"] == ["P-0001"] and body["line"] == 1 and body["because"]["refused"] == "BINDING_IMMUTABLE"
    assert keeper.ledger_bytes() == before and status_of(keeper, "P-0001") == "wontfix"
    keeper.ok("abort", "--run", run)
    assert keeper("verify").code == 0


def test_hand_edited_staging_naming_an_unknown_prior_is_refused(keeper):
    scopes = _one_finding(keeper)
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    rdir = keeper.root / ".priors" / "runs" / run
    rel = json.loads((rdir / "relevant.json").read_text())
    rel["verify"].append({"id": "P-0042", "claim": "x", "scope_ref": "a.py", "scopeState": "unchanged"})
    (rdir / "relevant.json").write_text(json.dumps(rel))
    (rdir / "dispositions.jsonl").write_text(
        json.dumps(k.disp("P-0001", run, "still-open")) + "\n" + json.dumps(k.disp("P-0042", run, "fixed")) + "\n")
    body = keeper.refused("PRIOR_OUTSIDE_RUN", "commit", "--run", run)
    assert body["ids"] == ["P-0042"]


def test_the_fold_never_lets_an_agent_verdict_move_a_binding_status():
    recs = k.sample() + [k.disp("P-0002", "run-004", "fixed"), k.commit("run-004")]
    st = fold(recs)
    assert st.priors["P-0002"].status == "wontfix"
    # the person's later word still moves it
    st = fold(recs + [k.decide("P-0002", "reopen", "back"), k.disp("P-0002", "run-005", "fixed"), k.commit("run-005")])
    assert st.priors["P-0002"].status == "fixed"


def test_verify_reports_an_agent_verdict_after_a_binding_decision():
    recs = k.sample() + [k.disp("P-0002", "run-004", "fixed"), k.commit("run-004")]
    problems, _ = check(k.to_bytes(recs))
    assert [(p.code, p.line) for p in problems] == [("AGENT_AFTER_BINDING", len(k.sample()) + 1)]
    # a later decision restating the person's word (what the merge driver writes) answers it
    restated = recs + [dict(k.decide("P-0002", "wontfix", "we like it"), restated=True)]
    assert check(k.to_bytes(restated))[0] == []
    # after a reopen the agent may judge again
    reopened = k.sample() + [k.decide("P-0002", "reopen", "back"), k.disp("P-0002", "run-004", "fixed"), k.commit("run-004")]
    assert check(k.to_bytes(reopened))[0] == []


# ------------------------------------------------------------------ 2. no write ever lies


def _sh(kp: Keeper, script: str) -> subprocess.CompletedProcess:
    """Run `priors` under a shell (for `>&-` and `>/dev/full`)."""
    import sys

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PRIORS"] = f"{sys.executable} -m priors"
    proc = subprocess.run(["sh", "-c", script], cwd=str(kp.root), capture_output=True, text=True, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _decides(kp: Keeper) -> int:
    return sum(1 for r in kp.ledger() if r.get("action") == "decide")


def test_a_lone_surrogate_in_a_candidate_is_refused_before_anything_is_staged(keeper):
    scopes = _one_finding(keeper)
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    keeper.ok("disposition", "P-0001", "still-open", "--run", run)
    keeper.write("bad.json", '{"type":"conclusion","claim":"x \\ud800","scope_ref":"a.py"}')
    err = keeper.usage("propose", "bad.json", "--run", run, "--ns", "web")
    assert "not valid Unicode" in err and "nothing was written" in err
    assert not (keeper.root / ".priors" / "runs" / run / "staged.jsonl").exists()
    keeper.ok("commit", "--run", run)
    for verb in (["render"], ["verify"], ["status"]):
        assert keeper(*verb).code == 0


@pytest.mark.parametrize("args", [
    ["add", "--ns", "web", "bad \udcff text"],
    ["add", "--ns", "web\udcff", "good text"],
    ["decide", "P-0001", "wontfix", "--because", "bad \udcff"],
    ["redact", "P-0001", "--because", "bad \udcff"],
    ["relevant", "--ns", "web\udcff"],
])
def test_non_utf8_arguments_are_refused_before_anything_is_written(keeper, args):
    """Python hands argv bytes that are not UTF-8 over as lone surrogates; none may reach the ledger."""
    _one_finding(keeper)
    before = sorted(p.name for p in (keeper.root / ".priors" / "runs").iterdir())
    for _ in range(3):  # a retry writes nothing either (it used to append each time)
        err = keeper.usage(*args)
        assert ("not valid text" in err and "nothing was written" in err) or "bad namespace" in err
    assert sorted(p.name for p in (keeper.root / ".priors" / "runs").iterdir()) == before
    for verb in (["render"], ["verify"]):
        assert keeper(*verb).code == 0


def test_a_namespace_ending_in_a_line_feed_is_refused(keeper):
    """`NS_RE` ended in `$`, which also matches before a final line feed: `suggest --ns $'ops\\n'` and the
    lessons tool's `ns` wrote a prior in a namespace `verify` names BAD_FIELD (hostile pass 27r)."""
    from test_mcp import INITIALIZED, _call, _init, serve

    keeper.ok("init")
    for args in (["suggest", "--ns", "ops\n", "Log all errors to stderr"], ["relevant", "--ns", "ops\n"]):
        assert "bad namespace" in keeper.usage(*args)
    replies, _err, code = serve(keeper.root, [_init(), INITIALIZED, _call(1, "priors_lessons", {
        "action": "propose", "ns": "ops\n", "text": "Log all errors to stderr"})])
    assert code == 0 and "bad namespace" in replies[1]["error"]["message"], replies
    assert keeper.ledger_bytes() == b""
    keeper.ok("verify", "--no-git")


def test_a_ledger_holding_a_lone_surrogate_still_renders_and_verify_names_it(keeper):
    rec = k.prior("P-0001", "run-001", claim="x \ud800")
    data = k.to_bytes([rec, k.commit("run-001")])  # canonical JSON escapes the lone surrogate: \ud800
    assert b"\\ud800" in data
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(data)
    keeper.ok("render")
    assert "x \ufffd" in keeper.read(".priors/PRIORS.md")
    r = keeper("verify", "--json")
    assert r.code == 1 and [p["code"] for p in r.json["problems"]] == ["BAD_VALUE"]


@pytest.mark.parametrize("how", ["dir", "symlink"])
def test_writes_land_even_when_priors_md_is_in_the_way(keeper, tmp_path, how):
    scopes = _one_finding(keeper)
    md = keeper.root / ".priors" / "PRIORS.md"
    md.unlink()
    if how == "dir":
        md.mkdir()
    else:
        md.symlink_to(tmp_path / "elsewhere.md")
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    keeper.ok("disposition", "P-0001", "fixed", "--run", run)
    steps = [("commit", "--run", run), ("decide", "P-0001", "wontfix"), ("redact", "P-0001", "--because", "leak")]
    for step in steps:
        before = keeper.ledger_bytes()
        r = keeper(*step)
        assert r.code == 0, r
        assert r.out.strip() and "warning" in r.err and "PRIORS.md" in r.err and "the change stands" in r.err
        assert keeper.ledger_bytes() != before
    assert not (tmp_path / "elsewhere.md").exists()
    assert status_of(keeper, "P-0001") == "redacted"
    if how == "dir":
        md.rmdir()
    else:
        md.unlink()
    keeper.ok("render")
    keeper.assert_rendered()
    assert keeper("verify").code == 0


def test_decide_with_stdout_closed_lands_once_and_says_so(keeper):
    _one_finding(keeper)
    p = _sh(keeper, "$PRIORS decide P-0001 wontfix >&-")
    assert p.returncode == 0, p
    assert "could not be printed" in p.stderr and "do not repeat" in p.stderr
    assert _decides(keeper) == 1 and status_of(keeper, "P-0001") == "wontfix"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_full_is_a_warning_after_a_write_and_an_honest_error_before(keeper):
    scopes = _one_finding(keeper)
    p = _sh(keeper, "$PRIORS decide P-0001 accepted >/dev/full")
    assert p.returncode == 0 and "could not be printed" in p.stderr, p
    assert _decides(keeper) == 1
    p = _sh(keeper, f"$PRIORS relevant --ns web --scopes {scopes} >/dev/full")
    assert p.returncode == 0 and "could not be printed" in p.stderr, p
    assert len(list((keeper.root / ".priors" / "runs").iterdir())) == 1
    p = _sh(keeper, "$PRIORS status >/dev/full")  # a read: nothing changed, and it says so
    assert p.returncode == 2 and "nothing was changed" in p.stderr, p


def test_help_and_version_that_cannot_print_are_the_same_honest_error(keeper):
    """`--version`, `--help`, `help VERB` and `VERB --help` change nothing: unprintable, they exit 2 like
    `status` (once exit 3 "No space left on device", or a traceback for `VERB --help`)."""
    for args in ("--version", "--help", "help relevant", "status --help"):
        for redirect in (">/dev/full", ">&-"):
            p = _sh(keeper, f"$PRIORS {args} {redirect}")
            assert p.returncode == 2 and "nothing was changed" in p.stderr and "Traceback" not in p.stderr, (args, p)


def test_closed_standard_input_is_a_usage_error(keeper):
    """`-` with standard input closed (`<&-`) once ended in "unexpected error (AttributeError …)"."""
    keeper.ok("init")
    for args in ("hash --stdin-raw", "relevant --ns web --scopes -", "snapshot --merge -"):
        p = _sh(keeper, f"$PRIORS {args} <&-")
        assert p.returncode == 2 and "standard input is closed" in p.stderr, (args, p)
    assert not list((keeper.root / ".priors" / "runs").iterdir())


def test_relevant_with_stdout_closed_opens_the_run_and_says_so(keeper):
    scopes = _one_finding(keeper)
    p = _sh(keeper, f"$PRIORS relevant --ns web --scopes {scopes} >&-")
    assert p.returncode == 0 and "could not be printed" in p.stderr, p
    assert keeper.refused("ACTIVE_RUN_EXISTS", "relevant", "--ns", "web", "--scopes", scopes)["run"] == "run-002"


def test_redact_racing_a_cache_writer_still_answers(keeper, monkeypatch, capsys):
    """`rmtree(cache)` failing ("Directory not empty": a reader wrote into it) after the ledger was redacted."""
    import errno
    import shutil

    from priors.cli.main import main

    _one_finding(keeper)
    keeper.ok("status")  # writes the cache
    real = shutil.rmtree

    def racing(path, *a, **kw):
        if "cache" in str(path):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(shutil, "rmtree", racing)
    code = main(["-C", str(keeper.root), "redact", "P-0001", "--because", "leak"])
    out, err = capsys.readouterr()
    assert code == 0 and "P-0001 redacted" in out
    assert "cache" in err and "Directory not empty" in err and "the change stands" in err
    assert status_of(keeper, "P-0001") == "redacted"
    monkeypatch.setattr(shutil, "rmtree", real)
    keeper.ok("status")
    assert b"a is magic" not in keeper.ledger_bytes()
    assert "a is magic" not in keeper.read(".priors/PRIORS.md")


def test_remove_tree_moves_the_folder_aside_before_deleting_it(tmp_path, monkeypatch):
    """A reader that writes into cache/ while it is being removed writes into a fresh folder, not ours."""
    import shutil

    from priors.store.files import remove_tree

    d = tmp_path / ".priors" / "cache"
    d.mkdir(parents=True)
    (d / "fold.bin").write_bytes(b"x")
    real = shutil.rmtree

    def racing(path, *a, **kw):
        d.mkdir(exist_ok=True)
        (d / "late.bin").write_bytes(b"y")  # the racing reader
        return real(path, *a, **kw)

    monkeypatch.setattr(shutil, "rmtree", racing)
    remove_tree(d, aside=True)
    assert sorted(p.name for p in (tmp_path / ".priors").iterdir()) == ["cache"]
    assert [p.name for p in d.iterdir()] == ["late.bin"]


def test_the_catch_all_tells_the_truth(keeper, monkeypatch, capsys):
    from priors.cli import main as cli
    from priors.store import lock

    _one_finding(keeper)

    def boom(*a, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr(lock.Lock, "__enter__", boom)  # before anything is written
    assert cli.main(["-C", str(keeper.root), "decide", "P-0001", "wontfix"]) == 3
    err = capsys.readouterr().err
    assert "boom" in err and "nothing was changed" in err
    monkeypatch.undo()
    monkeypatch.setattr(lock.Lock, "__exit__", boom)  # after the ledger landed
    assert cli.main(["-C", str(keeper.root), "decide", "P-0001", "wontfix"]) == 0
    err = capsys.readouterr().err
    assert "boom" in err and "the change stands" in err and "nothing was changed" not in err
    assert _decides(keeper) == 1


# ------------------------------------------------------------------ 3. limits at the door


def _nested(depth: int):
    """A value `depth` deep counting the candidate object as 1 (`evidence` adds the rest)."""
    v: object = 1
    for _ in range(depth - 1):
        v = [v]
    return v


def _open(keeper: Keeper) -> str:
    scopes = _one_finding(keeper)
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    keeper.ok("disposition", "P-0001", "still-open", "--run", run)
    return run


def test_nesting_is_limited_at_the_door_and_the_limit_reads_back(keeper):
    from priors.core.vocabulary import MAX_DEPTH

    run = _open(keeper)
    cand = {"type": "conclusion", "claim": "deep", "scope_ref": "a.py", "evidence": _nested(MAX_DEPTH)}
    deep = dict(cand, evidence=[cand["evidence"]])
    very_deep = '{"type":"conclusion","claim":"d","scope_ref":"a.py","evidence":%s1%s}' % ("[" * 985, "]" * 985)
    for bad in (json.dumps(deep), very_deep):
        keeper.write("cand.json", bad)
        err = keeper.usage("propose", "cand.json", "--run", run, "--ns", "web")
        assert "nested more than" in err or "nested too deeply" in err
    assert keeper.propose(run, "web", cand).code == 0  # exactly at the limit
    keeper.ok("commit", "--run", run)
    for verb in (["status"], ["render"], ["show", "P-0002"], ["list"]):
        keeper.ok(*verb)
    assert keeper("verify").code == 0


def test_a_candidate_too_large_is_refused(keeper):
    run = _open(keeper)
    keeper.candidate({"type": "conclusion", "claim": "big " + "x" * 70000, "scope_ref": "a.py"})
    err = keeper.usage("propose", "cand.json", "--run", run, "--ns", "web")
    assert "65536" in err


@pytest.mark.parametrize("evidence", ["1e400", "-1e400", "123456789012345678901234567890"])
def test_non_finite_and_inexact_numbers_are_refused(keeper, evidence):
    run = _open(keeper)
    keeper.write("cand.json", '{"type":"conclusion","claim":"n","scope_ref":"a.py","evidence":%s}' % evidence)
    err = keeper.usage("propose", "cand.json", "--run", run, "--ns", "web")
    assert "not finite" in err or "too large" in err


def test_an_import_breaking_the_limits_is_refused(keeper):
    bundle = json.loads(keeper.ok("export"))
    for lesson in ({"type": "calibration", "claim": "x \ud800"}, {"type": "calibration", "claim": "y" * 70000}):
        bundle["lessons"] = [lesson]
        keeper.write("bundle.json", json.dumps(bundle))
        err = keeper.usage("import", "bundle.json", "--ns", "web")
        assert "not valid Unicode" in err or "a lesson holds at most 2000" in err


def test_verify_names_a_line_nested_too_deep():
    recs = k.sample()
    recs[0] = dict(recs[0], evidence=_nested(40))
    problems, _ = check(k.to_bytes(recs))
    assert [p.code for p in problems] == ["BAD_VALUE"] and problems[0].line == 1


# ------------------------------------------------------------------ 4. redaction leaks


def _reversal_staged(kp: Keeper) -> str:
    """P-0001 accepted by a person, then a reversal of it ("secret sauce expands") proposed in an
    open run, which stages it as an escalation; returns that run."""
    kp.write("a.py", "a = 1\n")
    scopes = {"a.py": kp.hash("a.py")}
    run = kp.open_run("web", scopes)["run"]
    kp.propose(run, "web", {"type": "conclusion", "claim": "a is terse", "scope_ref": "a.py", "direction": "terser"})
    kp.ok("commit", "--run", run)
    kp.ok("decide", "P-0001", "accepted")
    run = kp.open_run("web", scopes)["run"]
    r = kp.propose(run, "web", {"type": "conclusion", "claim": "secret sauce expands", "scope_ref": "a.py",
                                "direction": "expand"})
    assert json.loads(r.out)["refused"] == "REVERSAL"
    return run


def _committed_call(kp: Keeper) -> None:
    """`_reversal_staged`, sealed: a call whose claim is "secret sauce expands" (a call's claim is
    the one content a fold cache's snapshot holds)."""
    assert "need your call" in kp.ok("commit", "--run", _reversal_staged(kp))


@pytest.mark.parametrize("held", [False, True], ids=["read-whole", "held-open"])
def test_a_stale_reader_writing_the_cache_after_a_redact_leaves_no_claim(keeper, held):
    """A reader folded the ledger before `redact` and writes the fold cache after it — having read
    it whole, or (as a first call that streams it does) still holding the old ledger file open."""
    import hashlib
    import os

    from priors.store import fold_cache

    _committed_call(keeper)
    d = keeper.root / ".priors"
    data = keeper.ledger_bytes()
    fd = os.open(str(d / "ledger.jsonl"), os.O_RDONLY) if held else None
    try:
        st, lines = fold_cache.fresh_fold(data)
        opened = None if fd is None else os.fstat(fd)
        fold_cache._write_snapshot(d, len(data), hashlib.sha256(data).digest(), lines, st, opened=opened)
        assert b"secret sauce" in (d / "cache" / "fold.bin").read_bytes()  # what the stale reader would write
        keeper.ok("redact", "P-0001", "--because", "leak")
        fold_cache._write_snapshot(d, len(data), hashlib.sha256(data).digest(), lines, st, opened=opened)  # the stale reader
    finally:
        if fd is not None:
            os.close(fd)
    for path in d.rglob("*"):
        if path.is_file():
            assert b"secret sauce" not in path.read_bytes(), path
    keeper.ok("status")
    assert keeper("verify").code == 0


def test_a_snapshot_written_while_holding_the_ledger_it_describes_is_kept(keeper):
    """A snapshot of the ledger a first call holds, unchanged since it was opened, stays and is used."""
    import hashlib
    import os

    from priors.store import fold_cache

    _committed_call(keeper)
    d = keeper.root / ".priors"
    data = keeper.ledger_bytes()
    fd = os.open(str(d / "ledger.jsonl"), os.O_RDONLY)
    try:
        st, lines = fold_cache.fresh_fold(data)
        fold_cache._write_snapshot(d, len(data), hashlib.sha256(data).digest(), lines, st, opened=os.fstat(fd))
    finally:
        os.close(fd)
    snap = (d / "cache" / "fold.bin").read_bytes()
    assert b"secret sauce" in snap
    assert keeper.ok("status") and (d / "cache" / "fold.bin").read_bytes() == snap  # used as it is, not rebuilt


def test_a_snapshot_of_a_ledger_edited_in_place_meanwhile_is_not_kept(keeper):
    """Another program writes into the ledger file itself (same inode) while a first call folds it,
    removing a call's claim: the snapshot the call then writes would still hold that claim, so it
    is taken back (the file's times moved; the prefix no longer hashes the same)."""
    import hashlib
    import os

    from priors.store import fold_cache

    _committed_call(keeper)
    d = keeper.root / ".priors"
    ledger = d / "ledger.jsonl"
    data = keeper.ledger_bytes()
    fd = os.open(str(ledger), os.O_RDONLY)
    try:
        opened = os.fstat(fd)
        st, lines = fold_cache.fresh_fold(data)
        with open(str(ledger), "r+b") as fh:  # in place: same inode, same size
            fh.write(data.replace(b"secret sauce", b"xxxxxx xxxxx"))
        os.utime(str(ledger), ns=(opened.st_atime_ns, opened.st_mtime_ns + 10**9))  # a later tick, whatever the clock
        assert os.stat(str(ledger)).st_ino == opened.st_ino
        fold_cache._write_snapshot(d, len(data), hashlib.sha256(data).digest(), lines, st, opened=opened)
    finally:
        os.close(fd)
    for path in d.rglob("*"):
        if path.is_file():
            assert b"secret sauce" not in path.read_bytes(), path


def test_a_snapshot_folded_across_an_in_place_write_is_not_kept(keeper):
    """Another program writes into the ledger file itself while a first call reads it, and the hash
    sees the new bytes where the fold saw the old ones: the snapshot would pass a later digest check
    with a state the ledger no longer holds, so it is not kept at all."""
    import hashlib
    import os

    from priors.store import fold_cache

    _committed_call(keeper)
    d = keeper.root / ".priors"
    ledger = d / "ledger.jsonl"
    data = keeper.ledger_bytes()
    edited = data.replace(b'"to":"accepted"', b'"to":"obsolete"')
    assert len(edited) == len(data) and edited != data
    fd = os.open(str(ledger), os.O_RDONLY)
    try:
        opened = os.fstat(fd)
        st, lines = fold_cache.fresh_fold(data)  # the fold read the old bytes ...
        with open(str(ledger), "r+b") as fh:
            fh.write(edited)
        os.utime(str(ledger), ns=(opened.st_atime_ns, opened.st_mtime_ns + 10**9))
        fold_cache._write_snapshot(d, len(edited), hashlib.sha256(edited).digest(), lines, st,  # ... the hash the new
                                   opened=opened)
    finally:
        os.close(fd)
    assert not (d / "cache" / "fold.bin").exists()
    seen = keeper.ok("status")
    assert seen == keeper("status", env={"PRIORS_NO_CACHE": "1"}).out and "1 retired" in seen  # the ledger as it is now


def test_redact_scrubs_an_open_runs_reversal_escalation(keeper):
    run = _reversal_staged(keeper)
    esc = keeper.root / ".priors" / "runs" / run / "escalations.jsonl"
    assert b"secret sauce" in esc.read_bytes()
    keeper.ok("redact", "P-0001", "--because", "leak")
    assert b"secret sauce" not in esc.read_bytes()
    out = keeper.ok("commit", "--run", run)
    assert "need your call" in out
    for path in (keeper.root / ".priors").rglob("*"):
        if path.is_file():
            assert b"secret sauce" not in path.read_bytes(), path
    calls = [r for r in keeper.ledger() if r["t"] == "call"]
    assert calls and calls[0]["redacted"] is True and "claim" not in calls[0]
    assert keeper("verify").code == 0


# ------------------------------------------------------------------ 5. locks


@pytest.mark.parametrize("content", [b"99999999999999999999999", b"4294967296", b"-5", b""])
def test_implausible_or_empty_locks_are_stale_at_once(keeper, content):
    _one_finding(keeper)
    (keeper.root / ".priors" / "keeper.lock").write_bytes(content)
    keeper.ok("decide", "P-0001", "wontfix")
    assert not (keeper.root / ".priors" / "keeper.lock").exists()


def test_the_lock_is_published_with_its_pid_inside(keeper, monkeypatch):
    """Created by linking a finished temp file into place: a reader never sees it empty."""
    from priors.store.lock import Lock
    from priors.store.paths import Paths

    paths = Paths(keeper.root)
    seen = []
    real_link = os.link

    def watch(src, dst, *a, **kw):
        seen.append(Path(src).read_bytes())
        return real_link(src, dst, *a, **kw)

    monkeypatch.setattr(os, "link", watch)
    with Lock(paths):
        assert paths.lock.read_bytes() == str(os.getpid()).encode()
    assert seen == [str(os.getpid()).encode()]
    assert not paths.lock.exists()
    assert [p.name for p in paths.dir.iterdir() if p.name.endswith(".tmp")] == []


def test_temp_files_of_dead_writers_are_swept_under_the_lock(keeper):
    """A keeper killed between writing a temp file and renaming it: the next writer sweeps it."""
    _one_finding(keeper)
    dead = _dead_pid()
    d = keeper.root / ".priors"
    (d / "cache").mkdir(exist_ok=True)
    planted = [d / f".PRIORS.md.{dead}.tmp", d / "cache" / f".fold.{dead}.tmp", d / f".ledger.jsonl.{dead}.tmp"]
    for p in planted:
        p.write_bytes(b"half")
    live = d / f".PRIORS.md.{os.getpid()}.tmp"  # a live writer's temp is not ours to delete
    live.write_bytes(b"busy")
    keeper.ok("decide", "P-0001", "wontfix")
    assert [p for p in planted if p.exists()] == []
    assert live.exists()


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


# ------------------------------------------------------------------ 6. run ids


@pytest.mark.parametrize("run", ["run-001\n", "run-\u0660\u0660\u0662", "run-" + "1" * 251, "run-0000000001", "run-01"])
def test_run_ids_are_ascii_and_bounded(keeper, run):
    scopes = keeper.scopes({"a.py": "aaaaaaaaaaaa"})
    err = keeper.usage("relevant", "--ns", "web", "--scopes", scopes, "--run", run)
    assert "run id" in err
    for verb in (["commit", "--run", run], ["abort", "--run", run], ["disposition", "P-0001", "fixed", "--run", run]):
        keeper.usage(*verb)
    assert json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"] == "run-001"


def test_a_ledger_with_an_odd_run_id_is_named_by_verify():
    recs = [k.prior("P-0001", "run-\u0660\u0660\u0661"), k.commit("run-\u0660\u0660\u0661")]
    problems, _ = check(k.to_bytes(recs))
    assert problems and all(p.code == "BAD_FIELD" or p.code == "BAD_ID" for p in problems), problems
    st = fold(recs)
    assert st.max_run == 0  # never counted as run 1


# ------------------------------------------------------------------ 7. ledger compatibility


def test_challenged_on_an_injected_lesson_records_no_scope_hash(keeper):
    """The reference keeper records the run's scope hash only for verify items."""
    keeper.write("tool.txt", "v1")
    scopes = {"tool.txt": keeper.hash("tool.txt")}
    run = keeper.open_run("web", scopes)["run"]
    assert keeper.propose(run, "web", {"type": "behavioral", "claim": "run the linter first", "scope_ref": "tool.txt"}).code == 0
    keeper.ok("commit", "--run", run)
    run = keeper.open_run("web", scopes)["run"]
    keeper.ok("disposition", "P-0001", "challenged", "--run", run)
    keeper.ok("commit", "--run", run)
    ev = [r for r in keeper.ledger() if r.get("action") == "disposition"]
    assert ev == [{"t": "event", "id": "P-0001", "action": "disposition", "to": "challenged", "run": run, "by": "agent"}]


def test_a_chosen_run_id_never_locks_the_next_run_out(keeper):
    """`relevant --run run-999999999` used to seal a run after which every `relevant` opened
    run-1000000000, an id every other verb refuses: agents were locked out for good. A chosen id
    now leaves a million ids of room, and a ledger already at the last id says so, writing nothing."""
    scopes = keeper.scopes({"a.py": "aaaaaaaaaaaa"})
    err = keeper.usage("relevant", "--ns", "web", "--scopes", scopes, "--run", "run-999999999")
    assert "leaves no room for the runs after it" in err and "run-998999999" in err
    last = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes, "--run", "run-998999999"))["run"]
    keeper.ok("commit", "--run", last)
    nxt = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", scopes))["run"]
    assert nxt == "run-999000000"
    keeper.ok("commit", "--run", nxt)
    path = keeper.root / ".priors" / "ledger.jsonl"
    path.write_bytes(path.read_bytes() + b'{"action":"commit","ns":"web","run":"run-999999999","summary":[],"t":"run"}\n')
    before = keeper.ledger_bytes()
    for verb in (["relevant", "--ns", "web", "--scopes", scopes], ["add", "--ns", "web", "a lesson"]):
        assert "the last run id there is" in keeper.usage(*verb)
    assert keeper.ledger_bytes() == before


def test_ids_and_numbers_of_any_length_are_named_never_an_unexpected_error(keeper):
    """A prior id of 4,301+ digits made every verb, verify included, fail with "unexpected error
    (ValueError: Exceeds the limit …)": Python will not read such a number. A prior id has at most
    eighteen digits; a longer one is named by verify and counted by no verb; a line number too long
    to be one is a usage error."""
    huge = "P-" + "1" * 5000
    rec = {"born": "run-001", "claim": "x", "facets": {"activation": "verify-phase", "authority": "advisory",
           "lifecycle": "stale-on-scope-change", "obligation": "disposition-required", "scope": "content-hash"},
           "id": huge, "ns": "web", "t": "prior", "type": "conclusion"}
    path = keeper.root / ".priors" / "ledger.jsonl"
    path.write_bytes(path.read_bytes() + (json.dumps(rec, separators=(",", ":"), sort_keys=True) + "\n"
                                          + '{"action":"commit","ns":"web","run":"run-001","summary":[],"t":"run"}\n')
                     .encode("utf-8"))
    for verb in (["status"], ["list"], ["history"], ["status", "--calls", "--json"], ["lessons"]):
        r = keeper(*verb)
        assert r.code == 0 and "unexpected error" not in r.err, (verb, r)
    r = keeper("verify", "--no-git")
    assert r.code == 1 and "unexpected error" not in r.err and f"prior {huge[:40]}" in r.out, r
    keeper.write("a.py", "x = 1\n")
    run = keeper.open_run("web", {"a.py": keeper.hash("a.py")})["run"]
    err = keeper.usage("propose", keeper.candidate({"type": "conclusion", "claim": "c", "at": "a.py:" + "9" * 5000}),
                       "--run", run, "--ns", "web")
    assert "`at` must be PATH:LINE" in err
    keeper.write("big.json", '{"type": "conclusion", "claim": "c", "file": "a.py", "line": ' + "9" * 5000 + "}")
    err = keeper.usage("propose", "big.json", "--run", run, "--ns", "web")
    assert "not valid JSON" in err and "Traceback" not in err


def test_a_retry_repairs_what_a_killed_commit_or_redact_left(keeper):
    """A kill after the ledger landed leaves PRIORS.md stale (commit) or still showing the redacted
    claim (redact); the retry answers as before — the sealed summary, ALREADY_REDACTED — and repairs
    PRIORS.md (and the scrub) on its way. Here the kill's leftovers are put back by hand."""
    import shutil

    keeper.write("a.py", "x = 1\n")
    run = keeper.open_run("web", {"a.py": keeper.hash("a.py")})["run"]
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": "secret claim", "scope_ref": "a.py"}),
              "--run", run, "--ns", "web")
    rendered = keeper.root / ".priors" / "PRIORS.md"
    before, staging = rendered.read_bytes(), keeper.root / ".priors" / "runs" / run
    shutil.copytree(staging, keeper.root / "staging-copy")
    summary = keeper.ok("commit", "--run", run)
    rendered.write_bytes(before)  # killed after the ledger landed: PRIORS.md not rendered, staging still there
    shutil.copytree(keeper.root / "staging-copy", staging)
    assert keeper("verify", "--no-git").code == 1
    assert keeper.ok("commit", "--run", run) == summary
    assert keeper.ok("verify", "--no-git").startswith("ledger sound") and b"secret claim" in rendered.read_bytes()
    shown = rendered.read_bytes()
    keeper.ok("redact", "P-0001", "--because", "private")
    rendered.write_bytes(shown)  # killed after the ledger was rewritten: the claim still on show
    keeper.refused("ALREADY_REDACTED", "redact", "P-0001", "--because", "private")
    assert b"secret claim" not in rendered.read_bytes()
    assert keeper.ok("verify", "--no-git").startswith("ledger sound")


def test_verify_names_a_namespace_no_door_takes():
    """Hostile pass 27q: `verify` asked only that `ns` be a non-empty string, so a change could add a
    prior and seal in namespace "x\\nledger sound: 3 lines\\ncode-review" (forging lines of `status`,
    `list` and `history`) or "code-review\\u200b" (a second "code-review" no `--ns` can name). A name
    with a space, control or format character is BAD_FIELD, quick and strict alike; another keeper's
    capitals stand."""
    for ns in ("x\nledger sound: 3 lines\ncode-review", "code-review\u200b", "code review", "web\u202e"):
        recs = [k.prior("P-0001", "run-001", ns=ns), k.commit("run-001", ns=ns)]
        for strict in (False, True):
            problems = check_ledger(k.to_bytes(recs), strict=strict).problems
            assert [(p.line, p.code) for p in problems] == [(1, "BAD_FIELD")], (ns, strict, problems)
            assert "holds a space, control or format character" in problems[0].message
    recs = [k.prior("P-0001", "run-001", ns="Code-Review"), k.commit("run-001", ns="Code-Review")]
    assert check(k.to_bytes(recs)) == ([], [])


def test_a_namespace_with_a_line_feed_cannot_start_a_line_of_status_list_or_history(keeper):
    """Hostile pass 27q: a hand-made namespace "x\\nledger sound: 3 lines\\ncode-review" printed a line
    `ledger sound: 3 lines` in `status`, `list` and `history`. It is shown with the line feed escaped."""
    keeper.ok("init")
    ns = "x\nledger sound: 3 lines\ncode-review"
    recs = [k.prior("P-0001", "run-001", ns=ns), k.commit("run-001", ns=ns)]
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(k.to_bytes(recs))
    keeper.ok("render")
    for verb in ("status", "list", "history"):
        out = keeper.ok(verb)
        assert not any(line.startswith("ledger sound") for line in out.splitlines()), (verb, out)
        assert "x\\u000aledger sound: 3 lines\\u000acode-review" in out, (verb, out)
    assert "BAD_FIELD" in keeper("verify", "--no-git", "--json").out
