"""What a parallel branch's run did not see (core/unseen.py): the merge driver marks it on the run's
seal, the replay judges the run against what it saw, and `verify` holds every mark a change adds to
the merge that wrote it."""

from __future__ import annotations

import json

import pytest

import ledgerkit as k
from priors.core.desk import ask_text
from priors.core.merge_rules import merge, merged_marks
from priors.core.unseen import as_seen, mark_problem, marks
from test_merge import Repo, conclusion, make_repo


@pytest.fixture
def repo(tmp_path) -> Repo:
    return make_repo(tmp_path)


def _codes(r: Repo, *args: str) -> list:
    v = r("verify", "--json", *args)
    return [p["code"] for p in json.loads(v.out)["problems"]]


def _ledger(r: Repo) -> list:
    return [json.loads(x) for x in (r.root / ".priors" / "ledger.jsonl").read_text().splitlines()]


def _branch_run_and_decision(r: Repo, ns: str, claim: str, ref: str = "a.py") -> None:
    """On `agent`: a run (in `ns`) carries P-0001 and P-0002 and finds `claim` on `ref`; meanwhile on
    main a person makes P-0001 wontfix. Then main merges `agent`."""
    r.git("checkout", "-qb", "agent")
    verdicts = {"P-0001": "still-open", "P-0002": "still-open"} if ns == "web" else {}
    r.run(ns, {"a.py": "a = 1\n", "b.py": "b = 1\n"}, verdicts, [conclusion(claim, ref)])
    assert any(x.get("claim") == claim for x in _ledger(r)), "the branch's door took the finding"
    r.save("agent: a review run")
    r.git("checkout", "-q", "main")
    r.ok("decide", "P-0001", "wontfix", "--because", "magic on purpose")
    r.save("main: a person's decision")


@pytest.mark.parametrize("ns, claim", [("web", "the module a.py has no docstring"),  # beside it: SETTLED_NEARBY
                                       ("sec", "a is magic")])  # its very words, another namespace: RERAISE
def test_a_merged_branch_s_run_is_judged_against_what_it_saw(repo, ns, claim):
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    _branch_run_and_decision(repo, ns, claim)
    m = repo.git("merge", "--no-edit", "agent", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    seal = [x for x in _ledger(repo) if x.get("t") == "run"][-1]
    assert seal["unseen"] == {"P-0001": "open"}  # what the branch's run saw of the person's decision
    for args in (["--no-git"], [], ["--since", base], ["--since", "HEAD~1"]):
        v = repo("verify", *args)
        assert v.code == 0, (args, v.out)
    assert repo.ok("show", "P-0001").count("wontfix") >= 1  # the person's decision stands
    # whether the branch's finding is the same as the decision it never saw is the person's call, as at the door
    calls = repo.ok("status", "--calls")
    yours = "your wontfix P-0001" + ("" if ns == "web" else " (in web)")  # another namespace's says which
    assert f"? P-0003 — from a parallel branch whose run never saw {yours}, it stands beside it" in calls
    if ns == "web":
        assert "priors decide P-0003 duplicate --of P-0001" in calls
    else:  # `duplicate --of` names a prior of P-0003's own namespace: "the same" across namespaces is `obsolete`
        assert "duplicate --of" not in calls
        assert 'priors decide P-0003 obsolete --because "the same finding as P-0001 (web)"' in calls
    assert "priors decide P-0003 keep" in calls
    assert 'priors decide P-0003 reopen --because "a different finding from P-0001"' in calls
    repo.ok("decide", "P-0003", "reopen", "--because", "a different finding from P-0001")  # left open, answered
    assert "P-0003" not in repo.ok("status", "--calls")
    assert '"status":"open"' in repo.ok("show", "P-0003", "--json").replace(" ", "")
    assert repo("verify").code == 0
    # the reviewer sees the merged run and what it did not see
    v = repo("verify", "--since", base)
    n = [i for i, x in enumerate(_ledger(repo), 1) if x.get("t") == "run"][-1]
    assert "1 run from a parallel branch in this change did not see a person's decision" in v.out
    assert f"  line {n}: run-002 — P-0001 (it saw it open)" in v.out
    g = repo("verify", "--since", base, env={"GITHUB_ACTIONS": "true"})  # the pull request's reviewer sees it too
    assert (f"::notice file=.priors/ledger.jsonl,line={n},title=priors PARALLEL_RUN::run-002 came from a parallel"
            " branch and did not see a person's decision: P-0001 (it saw it open)") in g.out
    assert json.loads(repo("verify", "--since", base, "--json").out)["unseen_runs"] == [
        {"line": n, "run": "run-002", "unseen": {"P-0001": "open"}}]


@pytest.mark.parametrize("ns", ["web", "sec"])
def test_every_command_a_parallel_branch_s_call_offers_answers_it(repo, tmp_path, ns):
    """Each command `status --calls` prints for the call runs as printed and answers it — in another
    namespace too, where `duplicate --of` (one namespace's) was offered and refused (newcomer pass 27g)."""
    import shlex
    import shutil
    _branch_run_and_decision(repo, ns, "the module a.py has no docstring")
    assert repo.git("merge", "--no-edit", "agent", check=False).returncode == 0
    asks = json.loads(repo.ok("status", "--calls", "--json"))["calls"]
    ask = next(a for a in asks if a["id"] == "P-0003")
    assert ask["kind"] == "differs" and len(ask["commands"]) == 3
    for n, cmd in enumerate(ask["commands"]):
        copy = tmp_path / f"copy{n}"
        shutil.copytree(repo.root, copy, symlinks=True)
        r = Repo(copy)
        argv = shlex.split(cmd)
        assert argv[0] == "priors"
        out = r(*argv[1:])
        assert out.code == 0, (cmd, out.out, out.err)
        assert "P-0003" not in r.ok("status", "--calls"), cmd
        assert r("verify").code == 0, cmd


def test_an_agent_s_verdict_on_a_parallel_branch_s_finding_does_not_answer_the_person_s_call(repo):
    """A later run's `fixed` on the branch's finding, the code unchanged, leaves the person's call
    waiting (hostile pass 27f): only the person answers it."""
    _branch_run_and_decision(repo, "web", "the module a.py has no docstring")
    assert repo.git("merge", "--no-edit", "agent", check=False).returncode == 0
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n"}, {"P-0002": "still-open", "P-0003": "fixed"})
    assert '"status":"fixed"' in repo.ok("show", "P-0003", "--json").replace(" ", "")
    calls = repo.ok("status", "--calls")
    assert "? P-0003 — from a parallel branch whose run never saw your wontfix P-0001, it stands beside it" in calls
    repo.ok("decide", "P-0003", "keep")
    assert "P-0003" not in repo.ok("status", "--calls")
    assert repo("verify").code == 0


def test_a_shallow_clone_cannot_trace_a_mark_and_says_so(repo, tmp_path):
    """CI's usual shallow checkout holds no merge to trace a mark to: named UNSEEN_UNTRACED, with the fetch
    that fixes it — not a forgery; with the history fetched, clean."""
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    _branch_run_and_decision(repo, "web", "the module a.py has no docstring")
    repo.git("merge", "--no-edit", "agent")
    ci = tmp_path / "ci"
    repo.git("clone", "-q", "--depth", "1", f"file://{repo.root}", str(ci))
    shallow = Repo(ci)
    shallow.git("fetch", "-q", "--depth", "1", "origin", base)
    assert _codes(shallow, "--since", base) == ["UNSEEN_UNTRACED"]
    assert "git fetch --unshallow" in shallow("verify", "--since", base).out
    shallow.git("fetch", "-q", "--unshallow", "origin")
    assert shallow("verify", "--since", base).code == 0


def test_a_rebased_run_is_judged_as_if_it_came_after_the_decision(repo):
    """A rebase replays the branch's run after the person's decision (no merge commit keeps the fact that
    it never saw it): the driver writes no mark, and the finding beside the decision is named."""
    _branch_run_and_decision(repo, "web", "the module a.py has no docstring")
    repo.git("checkout", "-q", "agent")
    assert repo.git("rebase", "main", check=False).returncode == 0
    assert not any("unseen" in x for x in _ledger(repo))
    v = repo("verify", "--since", "main")
    assert v.code == 1 and "SETTLED_NEARBY" in v.out
    assert "or a rebase or cherry-pick replayed its run after a decision it never saw" in v.out  # (the likely why)


def _forge(repo: Repo) -> bytes:
    """The honest merge's ledger, as bytes someone could type."""
    _branch_run_and_decision(repo, "sec", "a is magic")
    repo.git("checkout", "-qb", "scratch")
    repo.git("merge", "--no-edit", "agent")
    data = (repo.root / ".priors" / "ledger.jsonl").read_bytes()
    md = (repo.root / ".priors" / "PRIORS.md").read_bytes()
    repo.git("checkout", "-q", "main")
    repo.git("branch", "-qD", "scratch")
    (repo.root / ".priors" / "ledger.jsonl").write_bytes(data)
    (repo.root / ".priors" / "PRIORS.md").write_bytes(md)
    return data


def test_a_mark_no_merge_wrote_is_named(repo):
    """The merged ledger's bytes written on main by hand — its marked seal in no merge: not yet committed
    (plain verify, against HEAD) and committed (`--since`); `--no-git` believes it, as it believes hashes."""
    _forge(repo)
    v = repo("verify")
    assert v.code == 1 and "no merge since HEAD wrote that" in v.out
    assert _codes(repo) == ["RERAISE", "UNSEEN_UNFOUNDED"]  # (the mark set aside, the re-raise is judged)
    assert repo("verify", "--no-git").code == 0
    repo.save("a re-raise, typed in")
    assert _codes(repo, "--since", "HEAD~1") == ["RERAISE", "UNSEEN_UNFOUNDED"]


def test_a_mark_edited_after_the_merge_is_named(repo):
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    _branch_run_and_decision(repo, "web", "the module a.py has no docstring")
    repo.git("merge", "--no-edit", "agent")
    path = repo.root / ".priors" / "ledger.jsonl"
    text = path.read_text()
    assert '"unseen":{"P-0001":"open"}' in text
    path.write_text(text.replace('"unseen":{"P-0001":"open"}', '"unseen":{"P-0001":"fixed"}'))
    repo.save("edited")
    assert _codes(repo, "--since", base) == ["SETTLED_NEARBY", "UNSEEN_UNFOUNDED"]  # (the mark set aside)


def test_marks_carried_through_two_merges_hold(repo):
    """A run on `a` beside P-0001 and P-0002; `b` decides P-0002 and merges `a` (a mark); main decides
    P-0001 and merges `b` (the mark carried, one more entry): every verify passes, back to the base."""
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.git("checkout", "-qb", "a")
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n"}, {"P-0001": "still-open", "P-0002": "still-open"},
             [conclusion("the module a.py has no docstring", "a.py"), conclusion("the module b.py has no docstring", "b.py")])
    repo.save("a: run")
    repo.git("checkout", "-q", "-b", "b", base)
    repo.ok("decide", "P-0002", "wontfix", "--because", "b on purpose")
    repo.save("b: decision")
    repo.git("merge", "--no-edit", "a")
    repo.git("checkout", "-q", "main")
    repo.ok("decide", "P-0001", "wontfix", "--because", "a on purpose")
    repo.save("main: decision")
    m = repo.git("merge", "--no-edit", "b", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    seal = [x for x in _ledger(repo) if x.get("t") == "run"][-1]
    assert seal["unseen"] == {"P-0001": "open", "P-0002": "open"}
    for args in (["--no-git"], [], ["--since", base], ["--since", "HEAD~1"]):
        v = repo("verify", *args)
        assert v.code == 0, (args, v.out)


# -- the rules, pure


def test_marks_say_what_each_seal_saw():
    base = k.sample()  # P-0001 fixed, P-0002 wontfix
    ours = [k.decide("P-0001", "wontfix", "no"), k.decide("P-0002", "accepted")]
    theirs = [k.commit("run-009"), k.decide("P-0002", "accepted"), k.commit("run-010")]
    got = marks(base, ours, theirs)
    assert got[0] == {"P-0001": "fixed", "P-0002": "wontfix"} and got[1] is None
    assert got[2] == {"P-0001": "fixed"}  # (their own person's decision on P-0002 it saw)
    assert marks(base, [k.disp("P-0003", "run-008", "fixed")], theirs) == [None] * 3  # no person on our side
    born = [k.prior("P-0009", "run-004"), k.commit("run-004"), k.decide("P-0009", "wontfix")]  # our side's own
    assert marks(base, born, theirs)[0] == {"P-0009": None}


def test_merged_mark_matches_the_merge():
    base = k.sample()
    ours, theirs = base + [k.decide("P-0001", "wontfix")], base + [k.commit("run-009")]
    out = merge(k.to_bytes(base), k.to_bytes(ours), k.to_bytes(theirs), mark=True)
    assert isinstance(out, bytes) and json.loads(out.splitlines()[-1])["unseen"] == {"P-0001": "fixed"}
    assert merge(k.to_bytes(base), k.to_bytes(ours), k.to_bytes(theirs)).count(b"unseen") == 0  # type: ignore[union-attr]
    assert merged_marks(k.to_bytes(base), k.to_bytes(ours), k.to_bytes(theirs)) == [({"P-0001": "fixed"}, None)]
    assert merged_marks(k.to_bytes(base), k.to_bytes(base[:-1]), k.to_bytes(theirs)) == []  # (not an extension)


@pytest.mark.parametrize("mark, why", [({}, "maps prior ids"), ([], "maps prior ids"), ({"x": "open"}, "not a prior id"),
                                       ({"P-0001": "closed"}, "no prior has"), ({"P-0001": None}, None)])
def test_mark_shapes(mark, why):
    got = mark_problem(mark)
    assert (got is None) if why is None else (why in got)


def test_as_seen_is_a_copy():
    from priors.core.fold import fold

    st = fold(k.sample() + [k.decide("P-0001", "wontfix")])
    p = st.priors["P-0001"]
    q = as_seen(p, {"P-0001": "open"})
    assert q is not None and q.status == "open" and p.status == "wontfix"
    assert as_seen(p, {"P-0001": None}) is None and as_seen(p, {"P-0002": "open"}) is p


def test_a_carried_mark_is_renumbered_with_their_ids():
    from priors.core.merge_rules import rewrite_refs

    seal = dict(k.commit("run-004"), unseen={"P-0007": None, "P-0001": "open"})
    got = rewrite_refs(seal, {"P-0007": "P-0010"}, {"run-004": "run-006"})
    assert got["unseen"] == {"P-0010": None, "P-0001": "open"} and got["run"] == "run-006"


def test_a_marked_run_s_repeat_of_a_prior_its_ledger_held_is_named(repo):
    """A branch made from before the person's decision, its run typed by hand: P-0001's very finding
    again, same namespace, no verdict on P-0001. Its mark (what the merge driver writes) says the run's
    ledger held P-0001 open: its door compared the finding with it (DUPLICATE), so the replay does too —
    not the lenience for a finding that came in on another branch."""
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.ok("decide", "P-0001", "wontfix", "--because", "magic on purpose")
    repo.save("main: decision")
    main = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.git("checkout", "-q", "-b", "old", base)
    first = _ledger(repo)
    again = dict(first[0], id="P-0003", born="run-002")
    seal = dict(first[2], run="run-002", summary=["Checked against 0 priors:", "New this run: 1"])
    with open(repo.root / ".priors" / "ledger.jsonl", "a") as f:
        for rec in (again, seal):
            f.write(json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n")
    repo.ok("render")
    repo.save("old: P-0001 typed again")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "--no-edit", "old")
    assert [x for x in _ledger(repo) if x.get("t") == "run"][-1]["unseen"] == {"P-0001": "open"}
    assert _codes(repo, "--since", main) == ["DUPLICATE"]


def test_a_mark_held_by_a_commit_the_base_reaches_but_its_ledger_lacks_is_named(repo):
    """PR 1: commit X types a re-raise of P-0001 under a mark, commit Y undoes it — the tip changes nothing,
    and main merges it (X now reachable from main). PR 2: X's ledger again, on top of X (`-s ours` of main).
    The mark's trace ends at X, which the base reaches; but the base's ledger never held the line."""
    repo.ok("decide", "P-0001", "wontfix", "--because", "magic on purpose")
    repo.save("main: decision")
    path, md = repo.root / ".priors" / "ledger.jsonl", repo.root / ".priors" / "PRIORS.md"
    repo.git("checkout", "-qb", "pr1")
    before, before_md = path.read_bytes(), md.read_bytes()
    first = _ledger(repo)
    again = dict(first[0], id="P-0003", born="run-002")
    seal = dict(first[2], run="run-002", unseen={"P-0001": None})
    with open(path, "a") as f:
        for rec in (again, seal):
            f.write(json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n")
    repo.ok("render")
    repo.save("X: typed")
    x = repo.git("rev-parse", "HEAD").stdout.strip()
    path.write_bytes(before)
    md.write_bytes(before_md)
    repo.save("Y: undone")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "--no-ff", "--no-edit", "pr1")
    main = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.git("checkout", "-q", "-b", "pr2", x)
    repo.git("merge", "-s", "ours", "--no-edit", "main")
    assert _codes(repo, "--since", main) == ["RERAISE", "UNSEEN_UNFOUNDED"]


_WIDE = {"type": "conclusion", "claim": "the project has no tests at all",
         "facets": {"scope": "repo-wide", "lifecycle": "challenged-on-failure"}}


def test_a_branch_s_repo_wide_repeat_of_a_decision_it_never_saw_waits_for_the_person(repo):
    """A repo-wide finding stands on no scope: a parallel branch's run that repeats, in its very words, a
    repo-wide finding a person made wontfix meanwhile (born on their side, so `null` in the mark) merges
    clean, and waits for the person's call — as it would have been refused (RERAISE) at the door."""
    files = {"a.py": "a = 1\n", "b.py": "b = 1\n"}
    carried = {"P-0001": "still-open", "P-0002": "still-open"}
    repo.git("checkout", "-qb", "agent")
    repo.run("web", files, carried, [_WIDE])
    repo.save("agent: a repo-wide finding")
    repo.git("checkout", "-q", "main")
    repo.run("web", files, carried, [_WIDE])
    repo.ok("decide", "P-0003", "wontfix", "--because", "by design")
    repo.save("main: the same finding, a person's wontfix")
    base = repo.git("rev-parse", "HEAD~1").stdout.strip()
    repo.git("merge", "--no-edit", "agent")
    assert [x for x in _ledger(repo) if x.get("t") == "run"][-1]["unseen"] == {"P-0003": None}
    assert repo("verify", "--since", base).code == 0
    calls = repo.ok("status", "--calls")
    assert "P-0004 — from a parallel branch whose run never saw your wontfix P-0003, it stands beside it" in calls


@pytest.mark.parametrize("facets", [{"scope": "repo-wide", "lifecycle": "challenged-on-failure"},  # on no scope
                                    {"activation": "run-start", "obligation": "inject-as-instruction"}])  # a lesson
def test_a_typed_repeat_of_a_person_s_decision_that_is_no_finding_on_a_scope_in_another_namespace(repo, facets):
    """The door holds another namespace's candidate to every binding prior (`settled_elsewhere`): a
    repo-wide one, a lesson on a scope. Its very words typed into the ledger in another namespace are a
    re-raise for `verify` too."""
    cand = {"type": "conclusion", "claim": "the project has no tests at all", "scope_ref": "a.py", "facets": facets}
    if facets.get("scope") == "repo-wide":
        del cand["scope_ref"]
    files = {"a.py": "a = 1\n", "b.py": "b = 1\n"}
    repo.run("web", files, {"P-0001": "still-open", "P-0002": "still-open"}, [cand])
    repo.ok("decide", "P-0003", "wontfix", "--because", "by design")
    repo.save("a person's decision")
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    run = repo.open_run("sec", {"a.py": repo.hash("a.py")})["run"]
    assert json.loads(repo.propose(run, "sec", cand).out)["refused"] == "RERAISE"  # the door
    repo.ok("abort", "--run", run)
    p3 = next(x for x in _ledger(repo) if x.get("id") == "P-0003" and x["t"] == "prior")
    typed = [dict(p3, id="P-0004", ns="sec", born="run-009"),
             {"action": "commit", "door": 3, "ns": "sec", "run": "run-009", "summary": ["New this run: 1"], "t": "run"}]
    with open(repo.root / ".priors" / "ledger.jsonl", "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(x, sort_keys=True, separators=(",", ":")) + "\n" for x in typed)
    repo.ok("render")
    repo.save("typed")
    assert _codes(repo, "--since", base) == ["RERAISE"]
    assert _codes(repo, "--no-git") == ["RERAISE"]


def test_a_null_mark_is_named_not_a_crash(repo):
    """`"unseen": null` on a seal (no merge writes it): its trace would take it for the absent line every
    commit before the run's holds, found it, and the reviewer's list would fail on it — it is unfounded."""
    repo.ok("decide", "P-0001", "wontfix", "--because", "magic on purpose")
    repo.save("a person's decision")
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.run("web", {"a.py": "a = 1\n", "b.py": "b = 1\n"}, {"P-0002": "still-open"}, [conclusion("c one", "b.py")])
    path = repo.root / ".priors" / "ledger.jsonl"
    recs = _ledger(repo)
    recs[-1]["unseen"] = None
    path.write_text("".join(json.dumps(x, sort_keys=True, separators=(",", ":")) + "\n" for x in recs))
    repo.ok("render")
    assert "UNSEEN_UNFOUNDED" in _codes(repo)
    repo.save("a null mark")
    for args in (["--since", base], ["--since", base, "--json"]):
        v = repo("verify", *args)
        assert v.code == 1 and "unexpected error" not in v.err, v
    assert "UNSEEN_UNFOUNDED" in _codes(repo, "--since", base)


def test_tracing_a_mark_holds_no_commit_s_whole_ledger(repo, monkeypatch):
    """Hostile pass 27d: the trace of a mark back to its merge walks every commit since it; it kept each
    commit's whole ledger (bytes and split lines) until it ended — commits x ledger size, quadratic in a
    branch that grows the ledger commit by commit. Only line counts and the marked lines are kept."""
    import sys

    import priors.ops.verify as V
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    _branch_run_and_decision(repo, "sec", "a is magic")
    repo.git("merge", "--no-edit", "agent")
    for i in range(6):
        repo.ok("add", "--ns", "dev", f"Lesson number {i} " + "x" * 1500)
        repo.save(f"c{i}")
    fetched: list = []
    most = [0]
    real = V.ledger_at

    def counted(root, commit):
        alive = sum(1 for b in fetched if sys.getrefcount(b) > 3)  # (the list, `b`, getrefcount's own)
        most[0] = max(most[0], alive)
        got = real(root, commit)
        fetched.append(got)
        return got
    monkeypatch.setattr(V, "ledger_at", counted)
    data = (repo.root / ".priors" / "ledger.jsonl").read_bytes()
    old = repo.git("show", f"{base}:.priors/ledger.jsonl").stdout.encode()
    problems, held = V.merge_marks(repo.root, data, old, base)
    assert problems == [] and len(held) == 1
    assert len(fetched) >= 6  # every commit since the merge was read
    assert most[0] <= 3, f"{most[0]} whole ledgers held at once while tracing one mark"


def test_a_branch_only_behind_its_base_is_compared_with_where_it_left(repo):
    """docs/ci.md, "When verify fails": a branch that only lacks the base's newer lines fails against the
    base's tip (LEDGER_SHRANK here; NOT_APPEND_ONLY where the branch added lines too), and passes against
    where it left (`git merge-base`)."""
    repo.git("checkout", "-qb", "feature")
    repo.git("checkout", "-q", "main")
    repo.run("sec", {"a.py": "a = 1\n"}, {}, [conclusion("a is magic", "a.py")])
    repo.save("main: a run")
    repo.git("checkout", "-q", "feature")
    assert set(_codes(repo, "--since", "main")) & {"NOT_APPEND_ONLY", "LEDGER_SHRANK"}
    left = repo.git("merge-base", "HEAD", "main").stdout.strip()
    v = repo("verify", "--since", left)
    assert v.code == 0, v.out


def test_a_parallel_branch_s_finding_on_a_decision_s_moved_code_merges_clean_and_waits_for_the_person(repo):
    """Hostile pass 27k: a branch (from before the person's wontfix) renames a.py to c.py and its run finds
    P-0001's very words on c.py in another namespace. Merged, the replay judged the moved decision as a
    RERAISE of a prior "a person made open" (an honest merge failing `verify --since`), and no call waited
    for the person (the finding is not beside a.py): it is their call, as on the same scope."""
    base0 = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.git("checkout", "-qb", "agent")
    repo.git("mv", "a.py", "c.py")
    repo.save("agent: rename")
    repo.run("sec", {"c.py": "a = 1\n"}, {}, [conclusion("a is magic", "c.py")])
    repo.save("agent: a review run")
    repo.git("checkout", "-q", "main")
    repo.ok("decide", "P-0001", "wontfix", "--because", "magic on purpose")
    repo.save("main: a person's decision")
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    m = repo.git("merge", "--no-edit", "agent", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    assert base0
    for args in ([], ["--since", base]):
        v = repo("verify", *args)
        assert v.code == 0, (args, v.out)
    calls = repo.ok("status", "--calls")
    assert "? P-0003 — from a parallel branch whose run never saw your wontfix P-0001 (in web)" in calls, calls



@pytest.mark.parametrize("verdict, said", [("obsolete", "retired"), ("wontfix", "marked wontfix")])
def test_a_parallel_branch_s_rewording_of_a_lesson_decided_meanwhile_waits_for_the_person(repo, verdict, said):
    """A branch is cut while lesson P-0003 is an agent's open lesson. On it, agents revise P-0003 (P-0004),
    reword it in another namespace (P-0005: an agent's lesson elsewhere is not compared) and write an
    unrelated lesson (P-0006); meanwhile on main a person retires or settles P-0003. The merge is honest
    and `verify` passes — but none of the three is given to runs or sessions until the person answers,
    and `status --calls`, the walk and `show` say which decision each reads like (hostile pass 27u)."""
    old = "always run the full test suite before committing"
    repo.ok("suggest", "--ns", "web", old)  # P-0003, an agent's open lesson
    repo.save("an agent's lesson")
    base = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.git("checkout", "-qb", "agent")
    repo.ok("suggest", "--ns", "web", "--revises", "P-0003", "run the whole test suite before every commit")  # P-0004
    repo.ok("suggest", "--ns", "sec", "before committing always run the full test suite")  # P-0005
    repo.ok("suggest", "--ns", "web", "pin every dependency to an exact version")  # P-0006: about something else
    repo.save("agent: three lessons")
    repo.git("checkout", "-q", "main")
    repo.ok("decide", "P-0003", verdict, "--because", "the person's word")
    repo.save("main: a person's decision on the lesson")
    m = repo.git("merge", "--no-edit", "agent", check=False)
    assert m.returncode == 0, m.stdout + m.stderr
    assert repo("verify").code == 0 and repo("verify", "--since", base).code == 0  # an honest merge
    held = ["P-0004", "P-0005", "P-0006"]
    given = json.loads(repo.ok("lessons", "--inject", "--json"))
    assert [i["id"] for i in given["inject"]] == (["P-0003"] if verdict == "wontfix" else [])
    assert given["awaiting_review"] == held
    for ns, waiting in (("web", ["P-0004", "P-0006"]), ("sec", ["P-0005"])):
        run = repo.open_run(ns, {"a.py": repo.hash("a.py")})
        assert [i["id"] for i in run["inject"]] == (["P-0003"] if verdict == "wontfix" and ns == "web" else [])
        assert run["awaiting_review"] == waiting
        repo.ok("abort", "--run", run["run"])
    calls = {x.split()[1]: x for x in repo.ok("status", "--calls").splitlines() if x.startswith("  ? ")}
    why = "held back from runs and sessions until you decide: its run, on a parallel branch, never saw your decision on P-0003"
    assert all(why in calls[pid] and "a lesson an agent proposed — accept it or retire it?" in calls[pid] for pid in held)
    assert f"it reads like P-0003 (in web), which you {said}: {old!r}" in calls["P-0005"]
    assert "reads like" not in calls["P-0006"] and "reads like" not in calls["P-0004"]  # (a revision says the same)
    assert "(it revises P-0003" in calls["P-0004"] and "given to runs in its place" not in calls["P-0004"]
    asks = {a["id"]: a for a in json.loads(repo.ok("status", "--calls", "--json"))["calls"]}
    assert [q["id"] for q in asks["P-0005"]["reads_like_unseen"]] == ["P-0003"]
    assert all(asks[pid]["held_unseen"] == ["P-0003"] for pid in held)
    walk = ask_text(asks["P-0005"], 2, 3)  # the decide walk's screen for it
    assert f"  like:     from a parallel branch whose run never saw your decision, it reads like your {verdict} P-0003" \
           f" (in web): {old}" in walk.splitlines()
    assert f"  held:     {why}" in walk.splitlines()
    assert json.loads(repo.ok("show", "P-0005", "--json"))["waits_for_call"] == [
        {"id": "P-0003", "status": verdict, "ns": "web"}]
    for pid in held:  # `show` says it is held back, whatever it reads like (newcomer pass 27z)
        assert json.loads(repo.ok("show", pid, "--json"))["held_back"] == ["P-0003"]
        assert f"  {why}" in repo.ok("show", pid).splitlines(), pid
    shown = repo.ok("show", "P-0004")
    if verdict == "obsolete":  # a revision of a lesson already retired: accepting it retires nothing
        assert "  supersedes: P-0003 (a person retired it: accepting this lesson retires nothing)" in shown, shown
    v = repo.ok("verify", "--since", base)
    assert "(their findings and lessons beside one wait for your call: `priors status --calls`)" in v, v
    repo.ok("decide", "P-0005", "obsolete", "--because", "the same lesson as P-0003")  # the person's answers
    repo.ok("decide", "P-0006", "accepted")
    repo.ok("decide", "P-0004", "obsolete")
    assert not any(pid in repo.ok("status", "--calls") for pid in held)
    given = json.loads(repo.ok("lessons", "--inject", "--json"))
    assert [i["id"] for i in given["inject"]] == (["P-0003", "P-0006"] if verdict == "wontfix" else ["P-0006"])
    assert repo("verify").code == 0
