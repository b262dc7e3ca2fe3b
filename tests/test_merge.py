"""The ledger merge: pure merges of hand-built ledgers, then real git repositories merged with the driver."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import ledgerkit as k
from conftest import REPO, Keeper, run_priors
from priors.core.canonical import loads
from priors.core.fold import fold, parse_lines
from priors.core.ledger_checks import check
from priors.core.merge_rules import Conflict, merge


def b(recs: List[Dict[str, Any]]) -> bytes:
    return k.to_bytes(recs)


def recs(data: bytes) -> List[Dict[str, Any]]:
    return [loads(x) for x in data.decode().splitlines()]


def ours_side() -> List[Dict[str, Any]]:
    return k.sample() + [
        k.disp("P-0003", "run-004", "still-open"),
        k.prior("P-0004", "run-004", claim="ours four"),
        k.commit("run-004"),
        k.decide("P-0004", "accepted", "ours likes it"),
    ]


def theirs_side() -> List[Dict[str, Any]]:
    return k.sample() + [
        k.disp("P-0003", "run-004", "fixed"),
        k.prior("P-0004", "run-004", claim="theirs four"),
        k.prior("P-0005", "run-004", claim="theirs five"),
        k.call("run-004", 1, "P-0001"),
        k.commit("run-004"),
        k.decide("P-0004", "wontfix", "theirs says no"),
        k.prior("P-0006", "run-005", claim="theirs six", ns="api"),
        k.commit("run-005", ns="api"),
    ]


def test_diverging_runs_are_renumbered_after_ours():
    base, ours, theirs = b(k.sample()), b(ours_side()), b(theirs_side())
    out = merge(base, ours, theirs)
    assert isinstance(out, bytes)
    assert check(out)[0] == []
    lines = recs(out)
    assert len(lines) == len(k.sample()) + 4 + 8
    assert lines[: len(k.sample()) + 4] == ours_side()
    tail = lines[len(k.sample()) + 4 :]
    assert tail[0] == k.disp("P-0003", "run-005", "fixed")
    assert [r["id"] for r in tail if r["t"] == "prior"] == ["P-0005", "P-0006", "P-0007"]
    assert tail[3]["call_id"] == "run-005-C-01" and tail[3]["run"] == "run-005" and tail[3]["conflicts_with"] == "P-0001"
    assert tail[5] == k.decide("P-0005", "wontfix", "theirs says no")
    assert tail[6]["born"] == "run-006" and tail[7]["run"] == "run-006"
    st = fold(parse_lines(out))
    assert st.priors["P-0004"].status == "accepted" and st.priors["P-0005"].status == "wontfix"
    assert st.priors["P-0005"].claim == "theirs four"


def test_lessons_records_are_renumbered_with_their_ids():
    theirs = theirs_side() + [
        {"t": "score", "run": "run-004", "outcome": "success", "by": "human", "injected": ["P-0004", "P-0001"]},
        {"t": "learned", "runs": ["run-004", "run-003"]},
        {"t": "injected", "run": "run-005", "ids": ["P-0006"]},
    ]
    out = merge(b(k.sample()), b(ours_side()), b(theirs))
    assert isinstance(out, bytes)
    score, learned, shown = recs(out)[-3:]
    assert score["run"] == "run-005" and score["injected"] == ["P-0005", "P-0001"]
    assert learned["runs"] == ["run-005", "run-003"]
    assert shown == {"t": "injected", "run": "run-006", "ids": ["P-0007"]}


def test_merge_is_deterministic_and_trivial_sides():
    base, ours, theirs = b(k.sample()), b(ours_side()), b(theirs_side())
    assert merge(base, ours, theirs) == merge(base, ours, theirs)
    assert merge(base, ours, base) == ours
    assert merge(base, base, theirs) == theirs


def test_no_renumbering_without_collision():
    base = b(k.sample())
    ours = b(k.sample() + [k.decide("P-0001", "keep")])
    theirs = b(theirs_side())
    out = merge(base, ours, theirs)
    assert isinstance(out, bytes)
    assert recs(out)[len(k.sample()) + 1 :] == theirs_side()[len(k.sample()) :]
    # for a merge commit their seals say what their runs saw of the person's `keep` on our side (core/unseen.py)
    got = recs(merge(base, ours, theirs, mark=True))[len(k.sample()) + 1 :]  # type: ignore[arg-type]
    assert [r.pop("unseen", None) for r in got] == [{"P-0001": "fixed"} if r["t"] == "run" else None for r in got]
    assert got == theirs_side()[len(k.sample()) :]


def test_redaction_on_ours_wins_over_their_new_lines():
    base = k.sample()
    ours = k.redact(list(base), "P-0002", "leaked a token")
    theirs = base + [
        k.decide("P-0002", "reopen", "the secret is hunter2"),
        k.disp("P-0002", "run-004", "fixed"),
        k.call("run-004", 1, "P-0002"),
        k.commit("run-004"),
    ]
    out = merge(b(base), b(ours), b(theirs))
    assert isinstance(out, bytes)
    assert b"hunter2" not in out and b"we like it" not in out
    assert check(out)[0] == []
    lines = recs(out)
    assert lines[: len(ours)] == ours
    assert lines[-1] == {"t": "event", "id": "P-0002", "action": "redact", "by": "human", "reason": "leaked a token",
                         "restated": True}
    assert lines[1]["redacted"] is True
    assert fold(parse_lines(out)).priors["P-0002"].status == "redacted"
    call = [r for r in lines if r["t"] == "call"][0]
    assert call == {"t": "call", "call_id": "run-004-C-01", "kind": "reversal", "run": "run-004", "ns": "web",
                    "conflicts_with": "P-0002", "redacted": True}


def test_redaction_on_theirs_wins_over_our_new_lines():
    base = k.sample()
    ours = base + [k.decide("P-0001", "keep", "secret words"), k.disp("P-0001", "run-004", "fixed"), k.commit("run-004")]
    theirs = k.redact(list(base), "P-0001", "oops")
    out = merge(b(base), b(ours), b(theirs))
    assert isinstance(out, bytes)
    assert b"secret words" not in out and b"claim of P-0001" not in out
    assert check(out)[0] == []
    assert fold(parse_lines(out)).priors["P-0001"].status == "redacted"


def test_both_sides_redact_the_same_prior():
    base = k.sample()
    out = merge(b(base), b(k.redact(list(base), "P-0002", "a")), b(k.redact(list(base), "P-0002", "b")))
    assert isinstance(out, bytes)
    assert check(out)[0] == []
    assert [r.get("reason") for r in recs(out) if r.get("action") == "redact"] == ["a", "b"]


def test_their_redaction_of_their_own_prior_is_renumbered():
    base = k.sample()
    theirs = k.redact(theirs_side(), "P-0005", "private")
    out = merge(b(base), b(ours_side()), b(theirs))
    assert isinstance(out, bytes)
    assert check(out)[0] == []
    assert fold(parse_lines(out)).priors["P-0006"].status == "redacted"


def test_our_decision_outranks_their_parallel_disposition():
    base = k.sample()
    ours = base + [k.decide("P-0003", "accepted", "ours: settled")]
    theirs = base + [k.disp("P-0003", "run-004", "fixed"), k.commit("run-004")]
    out = merge(b(base), b(ours), b(theirs))
    assert check(out)[0] == []
    assert recs(out)[: len(ours)] == ours
    assert recs(out)[-1] == dict(k.decide("P-0003", "accepted", "ours: settled"), restated=True)
    assert fold(parse_lines(out)).priors["P-0003"].status == "accepted"
    # their own later decision stays the last word
    theirs2 = theirs + [k.decide("P-0003", "obsolete")]
    out = merge(b(base), b(ours), b(theirs2))
    assert recs(out)[-1] == k.decide("P-0003", "obsolete")
    # our decision followed by our own run on the prior stays where it was
    ours2 = ours + [k.disp("P-0003", "run-004", "fixed"), k.commit("run-004")]
    out = merge(b(base), b(ours2), b(theirs))
    assert recs(out)[len(base)] == k.decide("P-0003", "accepted", "ours: settled")
    assert len(recs(out)) == len(ours2) + 2
    # (a keeper never writes ours2: an agent verdict after a binding decision, which verify names)
    assert [p.code for p in check(out)[0]] == ["AGENT_AFTER_BINDING"]


def test_not_append_only_is_a_conflict():
    base = k.sample()
    edited = [dict(r) for r in base]
    edited[4]["to"] = "still-open"
    res = merge(b(base), b(edited), b(theirs_side()))
    assert isinstance(res, Conflict) and "ours is not an append-only extension" in res.reason and "line 5" in res.reason
    res = merge(b(base), b(ours_side()), b(base[:-2]))
    assert isinstance(res, Conflict) and "theirs" in res.reason
    res = merge(b(base), b(ours_side()), b(theirs_side()) + b"<<<<<<< HEAD\n")
    assert isinstance(res, Conflict) and "damaged" in res.reason


def test_forged_tombstone_is_a_conflict():
    base = k.sample()
    red = k.redact(list(base), "P-0002")
    red[1]["content_hash"] = "000000000000"
    assert isinstance(merge(b(base), b(red), b(theirs_side())), Conflict)


# ------------------------------------------------------------------ real git repositories, real verbs


GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_MERGE_AUTOEDIT": "no",
}


class Repo(Keeper):
    """A git work tree with .priors/ and the merge driver registered by `priors init --git`."""

    def env(self) -> dict:
        env = dict(os.environ)
        env.update(GIT_ENV)
        env["HOME"] = str(self.root.parent)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        return env

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run(["git", *args], cwd=str(self.root), capture_output=True, text=True, env=self.env())
        if check:
            assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    def __call__(self, *args: str, stdin=None, env=None):
        return run_priors(self.root, *args, stdin=stdin, env={**GIT_ENV, "HOME": str(self.root.parent), **(env or {})})

    def save(self, msg: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-qm", msg)

    def run(self, ns: str, files: dict, verdicts: dict = None, new: list = ()) -> str:
        for name, text in files.items():
            self.write(name, text)
        scopes = {name: self.hash(name) for name in files}
        run = self.open_run(ns, scopes)["run"]
        for pid, verdict in (verdicts or {}).items():
            self.ok("disposition", pid, verdict, "--run", run)
        for cand in new:
            r = self.propose(run, ns, cand)
            assert r.code in (0, 1), r
        self.ok("commit", "--run", run)
        return run


def conclusion(claim: str, ref: str, **extra) -> dict:
    cand = {"type": "conclusion", "claim": claim, "scope_ref": ref}
    cand.update(extra)
    return cand


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path)


def make_repo(tmp_path: Path) -> Repo:
    """A work tree whose first run (run-001) found "a is magic" (P-0001, on a.py) and "b is magic" (P-0002)."""
    root = tmp_path / "repo"
    root.mkdir()
    r = Repo(root)
    r.git("init", "-q", "-b", "main")
    out = r.ok("init", "--git")
    assert out.splitlines()[1:] == ["priors: merge driver registered (git config and .gitattributes) — commit"
                                    " .gitattributes too (git config stays in this clone)"]  # one line, not five
    r.write(".gitignore", "cand.json\nscopes.json\n")
    r.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n"},
          new=[conclusion("a is magic", "a.py", direction="terser"), conclusion("b is magic", "b.py")])
    r.save("run-001")
    return r


def test_init_git_registers_driver_idempotently(repo):
    attrs = (repo.root / ".gitattributes").read_text()
    assert ".priors/ledger.jsonl merge=priors -text" in attrs.splitlines()
    assert ".priors/PRIORS.md merge=priors-render -text" in attrs.splitlines()
    assert "merge-driver %O %A %B %P" in repo.git("config", "merge.priors.driver").stdout
    assert "merge-driver --render" in repo.git("config", "merge.priors-render.driver").stdout
    assert "registered" not in repo.ok("init", "--git")
    assert (repo.root / ".gitattributes").read_text() == attrs


def test_init_git_outside_git_is_a_usage_error(tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    err = Repo(d).usage("init", "--git")
    assert "not inside a git work tree" in err
    assert not (d / ".priors").exists()


def test_diverging_branches_merge_with_renumbered_ids(repo):
    repo.git("checkout", "-qb", "feature")
    repo.run("web", {"a.py": "a = 2\n", "b.py": "b = 1\n", "c.py": "c = 1\n"}, {"P-0001": "fixed", "P-0002": "still-open"},
             [conclusion("c is theirs", "c.py")])
    repo.ok("decide", "P-0003", "wontfix", "--because", "theirs: by design")
    repo.run("api", {"d.py": "d\n"}, new=[conclusion("d is theirs", "d.py")])
    repo.save("feature: two runs")
    repo.git("checkout", "-q", "main")
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 3\n", "e.py": "e = 1\n"}, {"P-0001": "still-open", "P-0002": "stale"},
             [conclusion("e is ours", "e.py")])
    repo.ok("decide", "P-0002", "accepted", "--because", "ours: fine")
    repo.save("main: one run")
    ours_before = repo.ledger()
    m = repo.git("merge", "--no-edit", "feature", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    assert repo.git("status", "--porcelain").stdout == ""
    merged = repo.ledger()
    assert merged[: len(ours_before)] == ours_before
    assert merged[-1] == {"t": "event", "id": "P-0002", "action": "decide", "to": "accepted", "by": "human",
                          "reason": "ours: fine", "restated": True}
    tail = merged[len(ours_before):]
    assert [r["id"] for r in merged if r["t"] == "prior"] == ["P-0001", "P-0002", "P-0003", "P-0004", "P-0005"]
    assert [r["run"] for r in merged if r["t"] == "run"] == ["run-001", "run-002", "run-003", "run-004"]
    assert {"t": "event", "id": "P-0004", "action": "decide", "to": "wontfix", "by": "human",
            "reason": "theirs: by design"} in tail
    assert [r["claim"] for r in merged if r["t"] == "prior"][2:] == ["e is ours", "c is theirs", "d is theirs"]
    r = repo("verify")
    assert r.code == 0, r
    assert repo("verify", "--since", "HEAD~1").code == 0
    assert repo("verify", "--since", "feature").code == 1  # their ids were renumbered: not a prefix of theirs
    st = repo.ok("status")
    assert st == ("web: 1 open · 1 fixed · 2 decided by you · 0 lessons locked\n"
                  "api: 1 open · 0 fixed · 0 decided by you · 0 lessons locked\n")
    # the keeper carries on after the merge with fresh ids
    run = repo.run("web", {"a.py": "a = 2\n", "b.py": "b = 3\n", "c.py": "c = 1\n", "e.py": "e = 1\n", "f.py": "f\n"},
                   {"P-0003": "still-open"}, [conclusion("f is new", "f.py")])
    assert run == "run-005"
    assert repo.ledger()[-2]["id"] == "P-0006"
    assert repo("verify").code == 0


def test_redactions_on_both_sides_win(repo):
    repo.ok("decide", "P-0001", "wontfix", "--because", "shared secret sauce")
    repo.save("decided")
    repo.git("checkout", "-qb", "feature")
    repo.ok("decide", "P-0002", "reopen", "--because", "theirs mentions token-123")
    repo.ok("redact", "P-0001", "--because", "theirs: leaked")
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 9\n"}, {"P-0002": "stale"}, [conclusion("b is theirs", "b.py")])
    repo.save("feature: redact P-0001")
    repo.git("checkout", "-q", "main")
    repo.ok("decide", "P-0001", "keep", "--because", "ours repeats the secret sauce")
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n"}, {"P-0002": "still-open"},
             [conclusion("a should expand", "a.py", direction="expand"),
              conclusion("a has a second issue", "a.py", distinct_from=["P-0001"])])  # (P-0001 is settled: named)
    assert any(r["t"] == "call" for r in repo.ledger())  # the reversal of P-0001 became a call
    repo.ok("redact", "P-0002", "--because", "ours: private")
    repo.save("main: redact P-0002")
    m = repo.git("merge", "--no-edit", "feature", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    data = (repo.root / ".priors" / "ledger.jsonl").read_bytes()
    for secret in (b"secret sauce", b"token-123", b"a is magic", b"b is magic", b"a should expand"):
        assert secret not in data, secret
    assert repo("verify").code == 0, repo("verify")
    rows = {r["id"]: r["status"] for r in json.loads(repo.ok("list", "--json"))["priors"]}
    assert rows["P-0001"] == "redacted" and rows["P-0002"] == "redacted"
    assert rows["P-0003"] == "open" and rows["P-0004"] == "open"  # theirs P-0003 renumbered after ours
    md = (repo.root / ".priors" / "PRIORS.md").read_text(encoding="utf-8")
    assert "b is theirs" in md and "P-0004" in md


def test_not_append_only_leaves_a_conflict_and_says_why(repo):
    repo.git("checkout", "-qb", "feature")
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n"}, {"P-0001": "still-open", "P-0002": "still-open"})
    repo.save("feature")
    repo.git("checkout", "-q", "main")
    path = repo.root / ".priors" / "ledger.jsonl"
    path.write_bytes(path.read_bytes().replace(b"a is magic", b"a is rewritten"))
    repo.ok("render")
    repo.save("main: hand edit")
    m = repo.git("merge", "--no-edit", "feature", check=False)
    assert m.returncode != 0
    assert "not an append-only extension of the base" in m.stderr + m.stdout
    assert "CONFLICT" in m.stdout
    assert b"a is rewritten" in path.read_bytes()  # ours left in place
    assert "PRIORS.md" not in repo.git("diff", "--name-only", "--diff-filter=U").stdout


def test_cherry_pick_and_rebase_use_the_driver(repo):
    repo.git("checkout", "-qb", "feature")
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c\n"}, {"P-0001": "still-open", "P-0002": "still-open"},
             [conclusion("c is theirs", "c.py")])
    repo.save("feature")
    repo.git("checkout", "-q", "main")
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n", "d.py": "d\n"}, {"P-0001": "fixed", "P-0002": "still-open"},
             [conclusion("d is ours", "d.py")])
    repo.save("main")
    repo.git("checkout", "-q", "feature")
    r = repo.git("rebase", "main", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [p["claim"] for p in repo.ledger() if p["t"] == "prior"] == ["a is magic", "b is magic", "d is ours", "c is theirs"]
    assert repo("verify").code == 0, repo("verify")


def test_driver_cli_on_plain_files(tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    k2 = Keeper(d)
    (d / "O").write_bytes(b(k.sample()))
    (d / "A").write_bytes(b(ours_side()))
    (d / "B").write_bytes(b(theirs_side()))
    r = k2("merge-driver", "O", "A", "B", ".priors/ledger.jsonl")
    assert r.code == 0 and r.out == "" and r.err == ""
    # run by hand, not by `git merge`: no merge commit will say what their runs did not see, so no mark
    assert (d / "A").read_bytes() == merge(b(k.sample()), b(ours_side()), b(theirs_side()))
    (d / "A").write_bytes(b(ours_side()))
    r = k2("merge-driver", "O", "A", "B", ".priors/ledger.jsonl", env={"GIT_REFLOG_ACTION": "merge feature"})
    assert r.code == 0 and (d / "A").read_bytes() == merge(b(k.sample()), b(ours_side()), b(theirs_side()), mark=True)
    assert b'"unseen":' in (d / "A").read_bytes()
    (d / "A").write_bytes(b(k.sample()[:-1]))
    r = k2("merge-driver", "O", "A", "B")
    assert r.code == 1 and "not an append-only extension" in r.err
    assert json.loads(r.out)["refused"] == "MERGE_CONFLICT"
    assert (d / "A").read_bytes() == b(k.sample()[:-1])
    # the PRIORS.md driver without a stash keeps ours and never conflicts
    (d / "M").write_text("ours\n")
    assert k2("merge-driver", "--render", "O", "M", "B").code == 0
    assert (d / "M").read_text() == "ours\n"
    k2.usage("merge-driver", "O", "A")
    k2.usage("merge-driver", "O", "A", "missing")
    assert "usage: priors merge-driver" in k2.ok("merge-driver", "--help")


def test_help_of_the_new_verbs(tmp_path):
    k2 = Keeper(tmp_path)
    for verb in ("show", "list", "history", "verify", "merge-driver"):
        assert f"usage: priors {verb}" in k2.ok(verb, "--help")
    assert "--git" in k2.ok("init", "--help")


# ------------------------------------------------------------------ property: any two valid extensions merge soundly


def _grow(base: List[Dict[str, Any]], steps: List[tuple]) -> List[Dict[str, Any]]:
    """Extend a valid ledger the way keepers do: runs (dispositions, new priors, calls), decisions, redactions."""
    from priors.core.fold import prior_number

    recs = [dict(r) for r in base]
    for kind, n, pick in steps:
        st = fold(recs)
        live = [p for p in st.priors.values() if not p.redacted]
        max_run = st.max_run
        if kind == "run":
            run = f"run-{max_run + 1:03d}"
            chosen = [p.id for p in live if not p.binding][: pick % 3]
            block = [k.disp(pid, run, ("fixed", "still-open", "stale")[i % 3]) for i, pid in enumerate(chosen)]
            nxt = max([prior_number(p) for p in st.priors] + [0]) + 1
            block += [k.prior(f"P-{nxt + i:04d}", run, claim=f"{run} new {i}") for i in range(n % 3)]
            if live and pick % 2:
                block.append(k.call(run, 1, live[pick % len(live)].id))
            recs += block + [k.commit(run)]
        elif kind == "decide" and live:
            p = live[pick % len(live)]
            recs.append(k.decide(p.id, ("accepted", "wontfix", "reopen", "keep")[n % 4], f"why {n}"))
        elif kind == "redact" and live:
            recs = k.redact(recs, live[pick % len(live)].id, f"private {n}")
    return recs


def test_property_merges_of_valid_extensions_verify():
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings
    from hypothesis import strategies as st

    step = st.tuples(st.sampled_from(["run", "run", "decide", "redact"]), st.integers(0, 9), st.integers(0, 9))

    @settings(max_examples=150, deadline=None)
    @given(st.lists(step, max_size=3), st.lists(step, max_size=5), st.lists(step, max_size=5))
    def run(pre, left, right):
        base = _grow(k.sample(), pre)
        ours, theirs = _grow(base, left), _grow(base, right)
        out = merge(b(base), b(ours), b(theirs))
        assert isinstance(out, bytes), out
        assert check(out)[0] == [], (check(out)[0], out.decode())
        merged = recs(out)
        from priors.core.canonical import split_lines
        from priors.core.ledger_growth import rewrite_problem

        # our lines stay in place, changed only where their redaction wins
        for a, c in zip(split_lines(b(ours)), split_lines(out)):
            assert rewrite_problem(a, c) is None, (a, c)
        extra = [r for r in merged if r.get("restated")]
        assert len(merged) == len(ours) + (len(theirs) - len(base)) + len(extra)
        final = fold(parse_lines(out))
        for side in (ours, theirs):
            for p in fold(side).priors.values():
                if p.redacted and p.rec.get("born") in {r.get("born") for r in base}:
                    assert final.priors[p.id].status == "redacted"
        assert merge(b(base), b(ours), b(theirs)) == out

    run()


def test_ledger_in_a_subfolder_of_the_repo(tmp_path):
    top = Repo(tmp_path / "mono")
    top.root.mkdir()
    top.git("init", "-q", "-b", "main")
    sub = Repo(top.root / "svc")
    sub.root.mkdir()
    sub.ok("-C", ".", "init", "--git")  # a ledger of its own for one folder of a monorepo: -C says where
    assert (sub.root / ".gitattributes").exists()
    sub.write(".gitignore", "cand.json\nscopes.json\n")
    sub.run("web", {"a.py": "a\n"}, new=[conclusion("a one", "a.py")])
    top.save("base")
    top.git("checkout", "-qb", "feature")
    sub.run("web", {"a.py": "a\n", "b.py": "b\n"}, {"P-0001": "still-open"}, [conclusion("b theirs", "b.py")])
    top.save("feature")
    top.git("checkout", "-q", "main")
    sub.run("web", {"a.py": "a\n", "c.py": "c\n"}, {"P-0001": "still-open"}, [conclusion("c ours", "c.py")])
    top.save("main")
    m = top.git("merge", "--no-edit", "feature", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    assert [r["id"] for r in sub.ledger() if r["t"] == "prior"] == ["P-0001", "P-0002", "P-0003"]
    assert sub("verify").code == 0, sub("verify")
    assert sub("verify", "--since", "HEAD~1").code == 0  # REV:./.priors/… resolves from the subfolder
    assert sub("verify", "--since", "HEAD~2").code == 0


def test_reserved_ids_of_an_open_run_are_skipped():
    base = k.sample()
    theirs = theirs_side()
    out = merge(b(base), b(base), b(theirs), reserved=["run-004", "P-0004", "P-0005"])
    priors = [r["id"] for r in recs(out) if r["t"] == "prior"][3:]
    assert priors == ["P-0006", "P-0007", "P-0008"]  # the pure merge honours any reserved ids it is given
    assert [r["run"] for r in recs(out) if r["t"] == "run"][3:] == ["run-005", "run-006"]
    assert check(out)[0] == []


def test_merge_while_a_run_is_open_keeps_it_committable(repo):
    repo.git("checkout", "-qb", "feature")
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c\n"}, {"P-0001": "still-open", "P-0002": "still-open"},
             [conclusion("c is theirs", "c.py")])
    repo.save("feature")
    repo.git("checkout", "-q", "main")
    repo.ok("decide", "P-0001", "keep")
    repo.save("main: decided")
    files = {"a.py": "a = 1\n", "b.py": "b = 1\n", "d.py": "d\n"}
    for name, text in files.items():
        repo.write(name, text)
    repo.open_run("web", {name: repo.hash(name) for name in files})
    repo.ok("disposition", "P-0002", "still-open", "--run", "run-002")
    assert repo.propose("run-002", "web", conclusion("d is ours", "d.py")).out == "P-0003 staged (new)\n"
    m = repo.git("merge", "--no-edit", "feature", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    assert [r["run"] for r in repo.ledger() if r["t"] == "run"] == ["run-001", "run-003"]  # not our open run-002
    assert [r["id"] for r in repo.ledger() if r["t"] == "prior"] == ["P-0001", "P-0002", "P-0003"]
    # our staged P-0003 now collides: commit refuses (ids must increase), nothing is lost silently
    repo.refused("STAGED_ID_COLLISION", "commit", "--run", "run-002")
    repo.ok("abort", "--run", "run-002")
    assert repo("verify").code == 0, repo("verify")
    repo.run("web", files, {"P-0002": "still-open"}, [conclusion("d is ours", "d.py")])
    assert [r["run"] for r in repo.ledger() if r["t"] == "run"] == ["run-001", "run-003", "run-004"]
    assert repo("verify").code == 0, repo("verify")


def test_our_lines_are_kept_byte_for_byte():
    base = b(k.sample())
    odd = b'{"t":"event","id":"P-0001","action":"decide","to":"keep","by":"human"}\n'  # valid, not canonical
    out = merge(base, base + odd, b(theirs_side()))
    assert isinstance(out, bytes) and out.startswith(base + odd)


def test_both_branches_started_a_ledger(tmp_path):
    """add/add: neither side had .priors/ at the merge base; git hands the driver an empty base."""
    r = Repo(tmp_path / "aa")
    r.root.mkdir()
    r.git("init", "-q", "-b", "main")
    r.write(".gitignore", "cand.json\nscopes.json\n")
    r.write("README", "x\n")
    r.save("no ledger yet")
    r.git("checkout", "-qb", "feature")
    r.ok("init", "--git")
    r.run("web", {"a.py": "a\n"}, new=[conclusion("theirs a", "a.py")])
    r.save("feature starts a ledger")
    r.git("checkout", "-q", "main")
    assert not (r.root / ".priors" / "ledger.jsonl").exists()
    r.ok("init", "--git")
    r.run("web", {"b.py": "b\n"}, new=[conclusion("ours b", "b.py")])
    r.save("main starts a ledger")
    m = r.git("merge", "--no-edit", "feature", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    assert [p["claim"] for p in r.ledger() if p["t"] == "prior"] == ["ours b", "theirs a"]
    assert [p["id"] for p in r.ledger() if p["t"] == "prior"] == ["P-0001", "P-0002"]
    assert r("verify").code == 0, r("verify")


def test_lessons_loop_records_verify_and_merge(repo):
    """`add` (a sealed human run), budgeted runs (`injected`), `score` and `reflect` (`learned`) on both branches."""
    def lessons_round(r: Repo, label: str) -> None:
        r.ok("add", "--ns", "web", f"{label}: keep diffs small")
        r.ok("add", "--ns", "web", "--open", f"{label}: run the tests first")  # open: the budget may leave it out
        r.ok("config", "max_inject", "1")
        rel = r.open_run("web", {"a.py": r.hash("a.py"), "b.py": r.hash("b.py")})
        run = rel["run"]
        assert [i["claim"] for i in rel["inject"]] == [f"{label}: keep diffs small"]  # the accepted one, always
        r.ok("disposition", "P-0001", "still-open", "--run", run)
        r.ok("disposition", "P-0002", "still-open", "--run", run)
        r.ok("commit", "--run", run)
        r.ok("score", run, "success")
        r.ok("reflect")
        r.write(".priors/config.json", "{}")

    repo.git("checkout", "-qb", "feature")
    lessons_round(repo, "theirs")
    kinds = {x["t"] for x in repo.ledger()}
    assert {"injected", "score", "learned"} <= kinds, kinds
    r = repo("verify", "--json")
    assert r.code == 0 and "warnings" not in r.out, r
    repo.save("feature: lessons")
    repo.git("checkout", "-q", "main")
    lessons_round(repo, "ours")
    repo.save("main: lessons")
    m = repo.git("merge", "--no-edit", "feature", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    r = repo("verify", "--json")
    assert r.code == 0 and "warnings" not in r.out, r
    merged = repo.ledger()
    theirs_shown = [x for x in merged if x["t"] == "injected"][1]
    theirs_lessons = [x["id"] for x in merged if x["t"] == "prior" and x["claim"].startswith("theirs")]
    assert set(theirs_shown["ids"]) <= set(theirs_lessons)  # references renumbered with the lessons
    scores = [x for x in merged if x["t"] == "score"]
    assert scores[1]["run"] == theirs_shown["run"] and set(scores[1]["injected"]) <= set(theirs_lessons)
    learned = [x for x in merged if x["t"] == "learned"]
    assert learned[1]["runs"] == [scores[1]["run"]]
    assert "theirs: keep diffs small" in repo.ok("lessons")


# ------------------------------------------------------------------ signed decisions on renumbered priors


STILL = {"P-0001": "still-open", "P-0002": "still-open"}


def _alice(tmp_path: Path) -> Repo:
    """A fresh git repository, the keeper set up with its merge driver (`init --git`)."""
    alice = Repo(tmp_path / "alice")
    alice.root.mkdir()
    alice.git("init", "-q", "-b", "main")
    alice.ok("init", "--git")
    alice.write(".gitignore", "cand.json\nscopes.json\n")
    return alice


def _signed_pair(tmp_path: Path):
    """Alice's repository and Bob's clone, signing on (both keys listed), the driver registered in
    both; each then commits a run minting P-0003 and signs a decision on it. Returns (alice, bob, base)."""
    from test_signing import allowed_line, make_key

    keys = tmp_path / "keys"
    keys.mkdir()
    alice = _alice(tmp_path)
    alice.keys = {name: make_key(keys, name) for name in ("alice", "bob", "carol")}  # type: ignore[attr-defined]
    alice.write(".priors/allowed_signers", allowed_line("alice@example.com", alice.keys["alice"])
                + allowed_line("bob@example.com", alice.keys["bob"]))
    alice.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n"},
              new=[conclusion("a is magic", "a.py"), conclusion("b is magic", "b.py")])
    alice.save("base")
    base = alice.git("rev-parse", "HEAD").stdout.strip()
    subprocess.run(["git", "clone", "-q", str(alice.root), str(tmp_path / "bob")], check=True, capture_output=True)
    bob = Repo(tmp_path / "bob")
    bob.ok("init", "--git")
    bob.keys = alice.keys  # type: ignore[attr-defined]
    for r, name in ((alice, "alice"), (bob, "bob")):
        r.git("config", "user.email", f"{name}@example.com")
        r.git("config", "gpg.format", "ssh")
        r.git("config", "user.signingkey", str(alice.keys[name]))  # type: ignore[attr-defined]
        r.git("config", "commit.gpgsign", "false")
    bob.git("checkout", "-qb", "feature")
    bob.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c\n"}, STILL, [conclusion("c is bob's", "c.py")])
    bob.ok("decide", "P-0003", "accepted", "--because", "bob: agreed")
    bob.save("bob: P-0003 accepted")
    alice.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n", "d.py": "d\n"}, STILL, [conclusion("d is alice's", "d.py")])
    alice.ok("decide", "P-0003", "wontfix", "--because", "alice: by design")
    alice.save("alice: P-0003 wontfix")
    return alice, bob, base


def _decisions(r: Repo) -> Dict[str, tuple]:
    return {rec["reason"]: (rec["id"], rec["signer"]) for rec in r.ledger()
            if rec.get("action") == "decide" and "reason" in rec}


def _claims(r: Repo) -> Dict[str, str]:
    return {rec["claim"]: rec["id"] for rec in r.ledger() if rec["t"] == "prior"}


needs_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")


@needs_keygen
def test_a_renumbered_signed_decision_is_re_signed_by_the_merger(tmp_path):
    alice, bob, base = _signed_pair(tmp_path)
    alice.git("fetch", "-q", str(bob.root), "feature:bob")
    m = alice.git("merge", "--no-edit", "bob", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    assert _claims(alice)["c is bob's"] == "P-0004"
    # Bob's decision follows his prior to P-0004, vouched for by the merger
    assert _decisions(alice) == {"alice: by design": ("P-0003", "alice@example.com"),
                                 "bob: agreed": ("P-0004", "alice@example.com")}
    for since in (base, "HEAD~1"):
        r = alice("verify", "--since", since)
        assert r.code == 0, (since, r)
    assert alice("verify").code == 0
    # the other way round: Bob merges Alice's main into his branch, and signs Alice's renumbered decision
    bob.git("fetch", "-q", str(alice.root), "main:alice")
    bob.git("reset", "-q", "--hard", "feature")
    bob.git("merge", "--no-edit", "alice~1")
    assert _decisions(bob) == {"bob: agreed": ("P-0003", "bob@example.com"),
                               "alice: by design": ("P-0004", "bob@example.com")}
    assert bob("verify", "--since", base).code == 0, bob("verify", "--since", base)


@needs_keygen
def test_a_rebase_re_signs_the_replayed_decision(tmp_path):
    alice, bob, base = _signed_pair(tmp_path)
    bob.git("fetch", "-q", str(alice.root), "main:alice")
    r = bob.git("rebase", "alice", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _claims(bob) == {"a is magic": "P-0001", "b is magic": "P-0002", "d is alice's": "P-0003", "c is bob's": "P-0004"}
    assert _decisions(bob) == {"alice: by design": ("P-0003", "alice@example.com"),
                               "bob: agreed": ("P-0004", "bob@example.com")}
    for since in (base, "alice"):
        v = bob("verify", "--since", since)
        assert v.code == 0, (since, v)


@needs_keygen
@pytest.mark.parametrize("how", ["no key", "key not listed", "their signature does not hold", "list deleted"])
def test_a_merger_who_cannot_sign_gets_a_conflict_not_a_broken_line(tmp_path, how):
    alice, bob, base = _signed_pair(tmp_path)
    if how == "list deleted":  # an agent's doing, left uncommitted: HEAD still holds it (hostile pass 27y)
        (alice.root / ".priors" / "allowed_signers").unlink()
    elif how == "no key":
        alice.git("config", "--unset", "user.signingkey")
    elif how == "key not listed":
        alice.git("config", "user.signingkey", str(alice.keys["carol"]))  # type: ignore[attr-defined]
    else:  # Alice's list no longer holds Bob: the merge must not vouch for a line it cannot check
        from test_signing import allowed_line

        alice.write(".priors/allowed_signers", allowed_line("alice@example.com", alice.keys["alice"]))  # type: ignore[attr-defined]
        alice.save("bob leaves")
    ledger = (alice.root / ".priors" / "ledger.jsonl").read_bytes()
    md = (alice.root / ".priors" / "PRIORS.md").read_bytes()
    alice.git("fetch", "-q", str(bob.root), "feature:bob")
    m = alice.git("merge", "--no-edit", "bob", check=False)
    assert m.returncode != 0
    said = m.stdout + m.stderr
    assert "Traceback" not in said
    assert "CONFLICT" in m.stdout
    assert "decide P-0003 accepted" in said and "P-0004" in said and "bob@example.com" in said
    assert "git merge --abort" in said
    assert (alice.root / ".priors" / "ledger.jsonl").read_bytes() == ledger  # ours, untouched
    assert (alice.root / ".priors" / "PRIORS.md").read_bytes() == md
    assert ".priors/ledger.jsonl" in alice.git("diff", "--name-only", "--diff-filter=U").stdout
    alice.git("merge", "--abort")
    if how == "list deleted":
        assert "git checkout HEAD -- .priors/allowed_signers" in said
        alice.git("checkout", "HEAD", "--", ".priors/allowed_signers")
    assert alice.git("status", "--porcelain").stdout == ""
    if how == "their signature does not hold":
        assert "did not hold before the merge" in said
        return
    # set up signing again and the same merge goes through
    alice.git("config", "user.signingkey", str(alice.keys["alice"]))  # type: ignore[attr-defined]
    alice.git("merge", "--no-edit", "bob")
    assert alice("verify", "--since", base).code == 0


@needs_keygen
def test_the_merge_never_vouches_for_an_agents_edited_copy_of_a_signed_line(tmp_path):
    """The branch's agent copied a signed decision of the base (alice's on P-0001) and pointed it at
    its own new prior; the merge renumbers that prior and found the base's line by its signature —
    which verifies — so the merger re-signed the agent's line. Every line carrying the signature is
    checked: the edited copy does not hold, so the merge is a conflict, nothing written."""
    alice, bob, base = _signed_pair(tmp_path)
    bob.ok("decide", "P-0001", "wontfix", "--because", "alice's word, say")  # (bob's key; signed, verifies)
    signed = next(r for r in bob.ledger() if r.get("action") == "decide" and r.get("id") == "P-0001")
    forged = dict(signed, id="P-0003")  # bob's branch minted P-0003 too: the merge renumbers it
    with open(bob.root / ".priors" / "ledger.jsonl", "ab") as fh:
        fh.write((json.dumps(forged, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode())
    bob.save("an agent's copy")
    ledger = (alice.root / ".priors" / "ledger.jsonl").read_bytes()
    alice.git("fetch", "-q", str(bob.root), "feature:bob")
    m = alice.git("merge", "--no-edit", "bob", check=False)
    assert m.returncode != 0 and "Traceback" not in m.stdout + m.stderr, m.stdout + m.stderr
    assert (alice.root / ".priors" / "ledger.jsonl").read_bytes() == ledger


def test_a_duplicate_decision_follows_its_finding_when_a_merge_renumbers_it():
    """`decide P duplicate --of Q` records `same_as: Q`: when a merge moves the other side's new ids past
    ours, the decision names Q's new id, as its `id` does (core/merge_rules.py `rewrite_refs`)."""
    from priors.core.merge_rules import rewrite_refs

    line = {"t": "event", "id": "P-0008", "action": "decide", "to": "obsolete", "by": "human", "same_as": "P-0007"}
    got = rewrite_refs(line, {"P-0007": "P-0010", "P-0008": "P-0011"}, {})
    assert got["id"] == "P-0011" and got["same_as"] == "P-0010"


@needs_keygen
def test_a_rebase_never_vouches_for_a_line_signed_by_a_key_the_branch_itself_listed(tmp_path):
    """Hostile pass 27f: the branch's agent lists its own key (commit A), signs a "person's" decision on
    its own new prior with it (B), and takes the key out again (C). The person rebases the branch onto
    main (as the docs advise for a hosted merge button): at B's pick the work tree's list is A's, so the
    forged line's signature held and the driver re-signed it with the person's key — and `verify
    --since main` passed with no signer change to see. The old signature is held to the list of the
    revision the rebase replays onto (a merge's: HEAD) as well."""
    from test_signing import allowed_line

    alice, bob, base = _signed_pair(tmp_path)
    listed = (bob.root / ".priors" / "allowed_signers").read_text()
    bob.git("reset", "-q", "--soft", base)  # (one commit of the branch changes the ledger: a rebase replays it)
    bob.write(".priors/allowed_signers", listed + allowed_line("carol@example.com", bob.keys["carol"]))  # type: ignore[attr-defined]
    bob.git("commit", "-qm", "A: another signer", "--", ".priors/allowed_signers")
    bob.git("config", "user.email", "carol@example.com")
    bob.git("config", "user.signingkey", str(bob.keys["carol"]))  # type: ignore[attr-defined]
    bob.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c\n", "e.py": "e\n"}, STILL,
            [conclusion("e uses eval on purpose", "e.py")])
    bob.ok("decide", "P-0004", "accepted", "--because", "carol, say")
    bob.save("B: a decision signed by the key A listed")
    bob.write(".priors/allowed_signers", listed)
    bob.save("C: the signer out again")
    alice.git("fetch", "-q", str(bob.root), "feature:bob")
    alice.git("checkout", "-q", "bob")
    r = alice.git("rebase", "main", check=False)
    said = r.stdout + r.stderr
    assert r.returncode != 0 and "Traceback" not in said, said
    assert "carol@example.com" in said and "did not hold before the merge" in said
    alice.git("rebase", "--abort")


def test_init_git_in_a_fresh_clone_says_what_it_did_not_nothing_to_do(repo, tmp_path):
    """Newcomer pass 27w: in a clone (the ledger there, git config not) `init --git` said "nothing to do"
    and then that it registered the merge driver."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True, capture_output=True)
    out = Repo(clone).ok("init", "--git").splitlines()
    assert out == [f"priors: already set up at {clone / '.priors'}", "priors: merge driver registered (git config)"], out
    assert Repo(clone).ok("init", "--git").splitlines() == [f"priors: already set up at {clone / '.priors'} — nothing to do"]


@needs_keygen
def test_a_branch_that_turns_signing_on_is_not_merged_into_a_side_without_the_list(tmp_path):
    """Hostile pass 27ad: main had no allowed_signers; a branch committed the list and a person's signed
    decision on its new prior. Merged, the driver renumbered that decision without signing it again (main's
    side wanted no signing), and the line failed `verify` for good. Now: a conflict, saying to merge the
    list first; merged that way, the decision is signed again by the merger."""
    from test_signing import allowed_line, make_key

    keys = tmp_path / "keys"
    keys.mkdir()
    alice = _alice(tmp_path)
    alice.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n"},
              new=[conclusion("a is magic", "a.py"), conclusion("b is magic", "b.py")])
    alice.save("base")
    subprocess.run(["git", "clone", "-q", str(alice.root), str(tmp_path / "bob")], check=True, capture_output=True)
    bob = Repo(tmp_path / "bob")
    bob.ok("init", "--git")
    key = {name: make_key(keys, name) for name in ("alice", "bob")}
    for r, name in ((alice, "alice"), (bob, "bob")):
        r.git("config", "user.email", f"{name}@example.com")
        r.git("config", "gpg.format", "ssh")
        r.git("config", "user.signingkey", str(key[name]))
        r.git("config", "commit.gpgsign", "false")
    bob.git("checkout", "-qb", "feature")
    bob.write(".priors/allowed_signers",
              allowed_line("alice@example.com", key["alice"]) + allowed_line("bob@example.com", key["bob"]))
    bob.save("signing on")
    bob.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c\n"}, STILL, [conclusion("c is bob's", "c.py")])
    bob.ok("decide", "P-0003", "accepted", "--because", "bob: agreed")
    bob.save("bob: P-0003 accepted")
    alice.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n", "d.py": "d\n"}, STILL, [conclusion("d is alice's", "d.py")])
    alice.save("alice: P-0003")
    ledger = (alice.root / ".priors" / "ledger.jsonl").read_bytes()
    alice.git("fetch", "-q", str(bob.root), "feature:bob")
    m = alice.git("merge", "--no-edit", "bob", check=False)
    said = m.stdout + m.stderr
    assert m.returncode != 0 and "CONFLICT" in m.stdout and "Traceback" not in said, said
    assert "merge the change that adds the list first" in said, said
    assert (alice.root / ".priors" / "ledger.jsonl").read_bytes() == ledger  # ours, untouched
    alice.git("merge", "--abort")
    alice.git("merge", "--no-edit", "bob~1")  # the list, in a change of its own
    m = alice.git("merge", "--no-edit", "bob", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    assert alice("verify").code == 0 and alice("verify", "--since", "HEAD~1").code == 0


def test_the_driver_never_runs_the_repository_s_own_priors_package(tmp_path):
    """Hostile pass 27ax: with no `priors` on PATH, `init --git` registered `python -m priors merge-driver`, which git
    runs in the repository's top folder — so the repository's own `priors/` ran in the keeper's place, and a merge
    dropped the other branch's lines without a word. The driver runs isolated, the keeper's package named."""
    root = tmp_path / "repo"
    root.mkdir()
    r = Repo(root)
    r.git("init", "-q", "-b", "main")
    bare = {"PATH": os.pathsep.join(("/usr/bin", "/bin"))}  # (no `priors` on it)
    assert r("init", "--git", env=bare).code == 0
    assert " -I -c " in r.git("config", "merge.priors.driver").stdout
    r.write("a.py", "x = 1\n")
    r.save("init")
    r.git("checkout", "-qb", "side")
    assert r("add", "--ns", "cr", "Always check quantities on the side branch", env=bare).code == 0
    r.save("side")
    r.git("checkout", "-q", "main")
    assert r("add", "--ns", "cr", "Never swallow payment errors on the main branch", env=bare).code == 0
    (root / "priors").mkdir()
    (root / "priors" / "__init__.py").write_text("import sys\nsys.stderr.write('HIJACK\\n')\n")
    (root / "priors" / "__main__.py").write_text("")
    r.save("main")
    env = dict(r.env(), PATH=bare["PATH"])
    merged = subprocess.run(["git", "merge", "--no-edit", "side"], cwd=str(root), capture_output=True, text=True, env=env)
    assert merged.returncode == 0 and "HIJACK" not in merged.stdout + merged.stderr, merged
    claims = [x["claim"] for x in r.ledger() if x.get("t") == "prior"]
    assert sorted(claims) == ["Always check quantities on the side branch", "Never swallow payment errors on the main branch"]
