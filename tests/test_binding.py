"""Issue 27: the remaining ways around a person's decision, each closed and driven through the real CLI.

- a claim equal or similar to a binding prior on the same scope state is refused in every namespace;
- scopes that hold a binding prior are hashed by the keeper from disk, whatever `--scopes` says;
- a killed merge driver leaves no temp file behind (its next run clears one a dead driver left).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from conftest import REPO, Keeper

CLAIM = "total() ignores the discount codes"


def _settled(k: Keeper, ns: str = "code-review") -> str:
    """a.py with a finding a person marked wontfix (P-0001) in `ns`; returns a.py's hash."""
    k.write("a.py", "def total(items):\n    return sum(items)\n")
    h = k.hash("a.py")
    run = k.open_run(ns, {"a.py": h})["run"]
    k.ok("propose", k.candidate({"type": "conclusion", "claim": CLAIM, "scope_ref": "a.py", "severity": "major"}),
         "--run", run, "--ns", ns)
    k.ok("commit", "--run", run)
    k.ok("decide", "P-0001", "wontfix", "--because", "discounts are applied upstream")
    return h


def test_a_persons_decision_holds_in_every_namespace(keeper: Keeper):
    h = _settled(keeper)
    run = keeper.open_run("code-review2", {"a.py": h})["run"]
    body = keeper.refused("RERAISE", "propose", keeper.candidate(
        {"type": "conclusion", "claim": CLAIM, "scope_ref": "a.py"}), "--run", run, "--ns", "code-review2")
    assert (body["of"], body["status"], body["ns"]) == ("P-0001", "wontfix", "code-review")
    assert "every namespace" in body["hint"]
    # reworded, on the same unchanged scope: the same finding
    body = keeper.refused("RERAISE", "propose", keeper.candidate(
        {"type": "conclusion", "claim": "total() silently ignores discount codes", "scope_ref": "a.py"}),
        "--run", run, "--ns", "code-review2")
    assert body["of"] == "P-0001" and body["similar"] is True and body["ns"] == "code-review"
    # another finding on that ground is the person's call (SETTLED_NEARBY, in every namespace): named in
    # `distinct_from`, it is staged; the same claim once the code changed is new
    other = {"type": "conclusion", "claim": "refund() rounds prices half-even", "scope_ref": "a.py"}
    body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(other), "--run", run, "--ns", "code-review2")
    assert [(s["id"], s["ns"]) for s in body["settled"]] == [("P-0001", "code-review")]
    keeper.ok("propose", keeper.candidate(dict(other, distinct_from=["P-0001"])), "--run", run, "--ns", "code-review2")
    keeper.ok("abort", "--run", run)
    keeper.write("a.py", "def total(items, discount):\n    return sum(items)\n")
    run = keeper.open_run("code-review2", {"a.py": keeper.hash("a.py")})["run"]
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": CLAIM, "scope_ref": "a.py"}),
              "--run", run, "--ns", "code-review2")


def test_a_binding_priors_scope_is_hashed_from_disk(keeper: Keeper):
    """An invented hash for the wontfix scope made it look changed, so the verbatim claim was staged again."""
    _settled(keeper)
    rel = keeper.open_run("code-review", {"a.py": "0123456789ab"})  # not a.py's hash
    assert rel["settled_here"][0]["id"] == "P-0001"
    run = rel["run"]
    body = keeper.refused("RERAISE", "propose", keeper.candidate(
        {"type": "conclusion", "claim": CLAIM, "scope_ref": "a.py"}), "--run", run, "--ns", "code-review")
    assert body["of"] == "P-0001"
    scopes = json.loads(keeper.read(f".priors/runs/{run}/relevant.json"))["scopes"]
    assert scopes["a.py"] == keeper.hash("a.py")  # the keeper's own hash, from the file
    keeper.ok("abort", "--run", run)
    # a scope the keeper cannot find on disk is not the code it reviews: missing, whatever the file says
    (keeper.root / "a.py").unlink()
    rel = keeper.open_run("code-review", {"a.py": "0123456789ab"})
    assert rel["settled_here"] == []
    body = keeper.refused("UNKNOWN_SCOPE", "propose", keeper.candidate(
        {"type": "conclusion", "claim": CLAIM, "scope_ref": "a.py"}), "--run", rel["run"], "--ns", "code-review")
    # scopes holding no binding prior are taken as given
    keeper.ok("abort", "--run", rel["run"])
    rel = keeper.open_run("code-review", {"b.py": "0123456789ab"})
    assert json.loads(keeper.read(f".priors/runs/{rel['run']}/relevant.json"))["scopes"] == {"b.py": "0123456789ab"}


def test_a_snapshot_leaving_out_a_persons_scope_still_meets_the_decision(keeper: Keeper):
    """A snapshot holding only the definition `a.py#total` (its real hash, or any) left the wontfix
    scope `a.py` out of the run, so nothing compared the verbatim claim on `a.py#total` with it:
    staged, committed, and `verify` clean. A person's scope related to one the run holds is hashed in."""
    h = _settled(keeper)
    for scopes in ({"a.py#total": h}, {"a.py#total": "0123456789ab"}, {"*": "0123456789ab"}):
        rel = keeper.open_run("code-review", scopes)
        assert [s["id"] for s in rel["settled_here"]] == ["P-0001"]
        ref = next(iter(scopes))
        body = keeper.refused("RERAISE", "propose", keeper.candidate(
            {"type": "conclusion", "claim": CLAIM, "scope_ref": ref}), "--run", rel["run"], "--ns", "code-review")
        assert body["of"] == "P-0001"
        keeper.ok("abort", "--run", rel["run"])
    # the other way round: a person's decision on a definition, a snapshot of its file alone
    keeper.write("b.py", "def pay(x):\n    return x\n")
    run = json.loads(keeper.ok("relevant", "--ns", "code-review", "--snapshot", "b.py"))["run"]
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": "pay() never checks the amount",
                                           "scope_ref": "b.py#pay"}), "--run", run, "--ns", "code-review")
    keeper.ok("commit", "--run", run)
    keeper.ok("decide", "P-0002", "wontfix", "--because", "checked by the caller")
    rel = keeper.open_run("code-review", {"b.py": "0123456789ab"})
    keeper.refused("RERAISE", "propose", keeper.candidate(
        {"type": "conclusion", "claim": "pay() never checks the amount", "scope_ref": "b.py"}),
        "--run", rel["run"], "--ns", "code-review")


def test_another_spelling_of_a_path_is_no_scope_ref(keeper: Keeper):
    """`./a.py`, `/a.py`, `a.py/`, `a.py//`, `a.py#` name the wontfix file under another ref, which the
    door never related to `a.py`: the verbatim claim on each was staged, committed and verified clean."""
    _settled(keeper)
    for ref in ("./a.py", "/a.py", "a.py/", "a.py//", "a.py/.", "a.py#", "a.py#total.", "x/../a.py"):
        err = keeper.usage("relevant", "--ns", "code-review", "--scopes", keeper.candidate({ref: "0123456789ab"}))
        assert repr(ref) in err and "not a scope ref" in err
    assert not any((keeper.root / ".priors" / "runs").iterdir())
    keeper.ok("abort", "--run", keeper.open_run("code-review", {"ruff": "0123456789ab", "src/": "0123456789ab"})["run"])
    keeper.ok("abort", "--run", keeper.open_run("code-review", {"a.py#total": "0123456789ab"})["run"])


def test_a_snapshot_edited_in_staging_never_stands_for_a_persons_scope(keeper: Keeper):
    """`relevant.json` is staging anyone can write after `relevant` hashed the wontfix scope from disk:
    an invented hash for `a.py` there, or `a.py` taken out beside `a.py#total`, let the verbatim claim be
    staged and committed. Commit judges a person's scope in the state the file on disk still has."""
    h = _settled(keeper)

    def edit(run: str, change) -> None:
        path = keeper.root / ".priors" / "runs" / run / "relevant.json"
        rel = json.loads(path.read_text(encoding="utf-8"))
        change(rel["scopes"])
        path.write_text(json.dumps(rel, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")

    run = keeper.open_run("code-review", {"a.py": h})["run"]
    edit(run, lambda s: s.update({"a.py": "0123456789ab"}))
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": CLAIM, "scope_ref": "a.py"}),
              "--run", run, "--ns", "code-review")  # the door believes its staging here; commit does not
    body = keeper.refused("MALFORMED_STAGING", "commit", "--run", run)
    assert body["file"].endswith("staged.jsonl") and body["because"]["refused"] == "SCOPE_MISMATCH"
    keeper.ok("abort", "--run", run)
    run = keeper.open_run("code-review", {"a.py#total": h})["run"]
    edit(run, lambda s: s.pop("a.py"))
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": CLAIM, "scope_ref": "a.py#total"}),
              "--run", run, "--ns", "code-review")
    body = keeper.refused("MALFORMED_STAGING", "commit", "--run", run)
    assert body["because"]["refused"] == "RERAISE" and body["because"]["of"] == "P-0001"
    keeper.ok("withdraw", "--run", run, "P-0002")
    edit(run, lambda s: s.update({"./a.py": h}))
    body = keeper.refused("MALFORMED_STAGING", "commit", "--run", run)
    assert body["file"].endswith("relevant.json") and "./a.py" in body["because"]["rule"]
    assert len(keeper.ledger()) == 3


def test_a_tampered_snapshot_cache_never_stands_for_a_persons_scope(keeper: Keeper):
    """`.priors/cache/` is anyone's to write: a hash planted there for the wontfix scope made it look
    changed, so the exact claim was staged again. A scope holding a person's decision is read whole."""
    h = _settled(keeper)
    time.sleep(2.2)  # a file changed within 2 s of a snapshot is never cached (racy-git): age it
    first = json.loads(keeper.ok("relevant", "--ns", "code-review", "--snapshot", "a.py"))  # fills the stat cache
    keeper.ok("abort", "--run", first["run"])
    cache = keeper.root / ".priors" / "cache" / "snapshot.json"
    assert h in cache.read_text(encoding="utf-8")
    cache.write_text(cache.read_text(encoding="utf-8").replace(h, "999999999999"), encoding="utf-8")
    rel = json.loads(keeper.ok("relevant", "--ns", "code-review", "--snapshot", "a.py"))
    assert json.loads(keeper.read(f".priors/runs/{rel['run']}/relevant.json"))["scopes"]["a.py"] == h
    keeper.refused("RERAISE", "propose", keeper.candidate(
        {"type": "conclusion", "claim": CLAIM, "scope_ref": "a.py"}), "--run", rel["run"], "--ns", "code-review")


# ------------------------------------------------------------------ a killed merge driver

FAULTRUN = str(REPO / "tests" / "faultrun.py")


def _driver(d, fault: str, log=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONIOENCODING="utf-8", PRIORS_FAULT=fault)
    if log is not None:
        env["PRIORS_FAULT_LOG"] = str(log)
    return subprocess.run([sys.executable, FAULTRUN, "merge-driver", "b.jsonl", "o.jsonl", "t.jsonl"], cwd=str(d),
                          capture_output=True, text=True, encoding="utf-8", env=env, timeout=120)


def test_a_killed_merge_driver_leaves_no_temp_file(tmp_path):
    """Killed at each of its disk mutations, the driver leaves OURS old or new; the next driver
    (git retries the merge) deletes the `.o.jsonl.<pid>.tmp` the dead one left, and merges."""
    import ledgerkit as k
    from priors.core.merge_rules import merge

    base = k.to_bytes(k.sample())
    ours = k.to_bytes(k.sample() + [k.prior("P-0004", "run-004", claim="ours four"), k.commit("run-004")])
    theirs = k.to_bytes(k.sample() + [k.prior("P-0004", "run-004", claim="theirs four"), k.commit("run-004")])
    merged = merge(base, ours, theirs)

    def fresh(name: str):
        d = tmp_path / name
        d.mkdir()
        for f, data in (("b.jsonl", base), ("o.jsonl", ours), ("t.jsonl", theirs)):
            (d / f).write_bytes(data)
        return d

    log = tmp_path / "calls.log"
    assert _driver(fresh("reference"), "0:none", log).returncode == 0
    calls = [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert any(".o.jsonl." in c for c in calls), calls  # it writes through a temp file beside OURS
    left = 0
    for kind in ("kill", "killafter"):
        for n in range(1, len(calls) + 1):
            d = fresh(f"{kind}-{n}")
            r = _driver(d, f"{n}:{kind}")
            assert r.returncode == -9, (calls[n - 1], r.stderr)
            assert (d / "o.jsonl").read_bytes() in (ours, merged), calls[n - 1]
            left += any(name.endswith(".tmp") for name in os.listdir(str(d)))
            if (d / "o.jsonl").read_bytes() == merged:
                continue  # landed: git would not run the driver again
            r = _driver(d, "0:none")  # git runs the driver again
            assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
            assert (d / "o.jsonl").read_bytes() == merged
            assert sorted(os.listdir(str(d))) == ["b.jsonl", "o.jsonl", "t.jsonl"], calls[n - 1]
    assert left, "no kill left a temp file behind: the test no longer exercises the sweep"
    # a live writer's temp, and files that are not a driver's temps, are never touched
    d = fresh("live")
    keep = [f".o.jsonl.{os.getpid()}.tmp", ".o.jsonl.notapid.tmp", "notes.tmp", ".other.jsonl.999999999.tmp"]
    for name in keep:
        (d / name).write_bytes(b"x")
    (d / "..merge_file_abc123.999999999.tmp").write_bytes(b"x")  # git's merge file's temp, its writer dead
    assert _driver(d, "0:none").returncode == 0
    assert sorted(os.listdir(str(d))) == sorted(["b.jsonl", "o.jsonl", "t.jsonl", *keep])


def test_distinct_from_never_sets_a_persons_decision_aside(keeper: Keeper):
    """The RERAISE hint once suggested `distinct_from`, and naming the wontfix prior let its rewording
    through: the agent's word sets aside another agent's finding, never a person's decision."""
    h = _settled(keeper)
    run = keeper.open_run("code-review", {"a.py": h})["run"]
    reworded = {"type": "conclusion", "claim": "total() silently ignores discount codes", "scope_ref": "a.py"}
    body = keeper.refused("RERAISE", "propose", keeper.candidate(reworded), "--run", run, "--ns", "code-review")
    assert body["similar"] is True and "distinct_from" in body["hint"] and "cannot" in body["hint"]
    body = keeper.refused("RERAISE", "propose", keeper.candidate(dict(reworded, distinct_from=["P-0001"])),
                          "--run", run, "--ns", "code-review")
    assert body["of"] == "P-0001"
