"""Hostile pass 27e, three ways around a person's decision through renames: a person's binding decision
follows its renamed or moved code (core/moves.py) in every namespace at the door, `verify` follows it for a
change's hand-written lines, and a decision on a whole file follows the file's exact rename."""

from __future__ import annotations

import json
import subprocess

import pytest

A = ("def total(items):\n    s = 0\n    for i in items:\n        s += i.price\n    return s\n\n\n"
     "def tax(x):\n    return x * 0.2\n")
C = "def helper(v):\n    return v + 1\n"
CLAIM = "total() ignores discounts"
FILE_CLAIM = "the module has no tests"


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=str(root), check=True, capture_output=True, text=True).stdout.strip()


def _commit(root, message):
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", message)
    return _git(root, "rev-parse", "HEAD")


def conclusion(claim, ref, severity="major"):
    return {"type": "conclusion", "claim": claim, "scope_ref": ref, "severity": severity}


def _decided(k):
    """A git work tree where P-0001 "total() ignores discounts" on src/a.py#total (namespace web) is a
    person's wontfix, and P-0002 "the module has no tests" on the file src/c.py (web) too; committed."""
    root = k.root
    _git(root, "init", "-q")
    for key, v in (("user.name", "A"), ("user.email", "a@example.com"), ("commit.gpgsign", "false")):
        _git(root, "config", key, v)
    k.write("src/a.py", A)
    k.write("src/c.py", C)
    run = json.loads(k.ok("relevant", "--ns", "web", "--snapshot"))["run"]
    k.ok("propose", k.candidate(conclusion(CLAIM, "src/a.py#total")), "--run", run, "--ns", "web")
    k.ok("propose", k.candidate(conclusion(FILE_CLAIM, "src/c.py", "minor")), "--run", run, "--ns", "web")
    k.ok("commit", "--run", run)
    k.ok("decide", "P-0001", "wontfix", "--because", "discounts are applied upstream")
    k.ok("decide", "P-0002", "wontfix", "--because", "covered by integration tests")
    return _commit(root, "decided")


def _open(k, ns):
    return json.loads(k.ok("relevant", "--ns", ns, "--snapshot"))["run"]


@pytest.mark.parametrize("ns", ["web", "sec"])
def test_a_person_s_decision_follows_a_renamed_file_at_the_door_in_every_namespace(keeper, ns):
    """The file holding a person's wontfix is renamed (`git mv`, body unchanged): the verbatim claim on
    the moved definition is refused RERAISE in the decision's own namespace — and in any other (moves
    were followed only for the run's own namespace's items, so `sec` took it, and verify passed it)."""
    root = keeper.root
    _decided(keeper)
    _git(root, "mv", "src/a.py", "src/b.py")
    base = _commit(root, "rename")
    run = _open(keeper, ns)
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(CLAIM, "src/b.py#total")),
                          "--run", run, "--ns", ns)
    assert body["of"] == "P-0001"
    # case and punctuation folded, and in other words, the same
    keeper.refused("RERAISE", "propose", keeper.candidate(conclusion("Total() ignores discounts!", "src/b.py#total")),
                   "--run", run, "--ns", ns)
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "the total function ignores discounts", "src/b.py#total")), "--run", run, "--ns", ns)
    assert body.get("similar") is True, body
    # another finding on the settled definition must name it, in every namespace
    keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(
        "the price sum is not rounded to cents", "src/b.py#total")), "--run", run, "--ns", ns)
    # a finding elsewhere is taken; the run commits and verifies clean
    keeper.ok("propose", keeper.candidate(conclusion("tax() uses a float rate", "src/b.py#tax")), "--run", run,
              "--ns", ns)
    keeper.ok("commit", "--run", run)
    _commit(root, "run")
    keeper.ok("verify", "--since", base)


@pytest.mark.parametrize("ns, key", [("web", "moves"), ("sec", "followed")])
def test_commit_works_out_again_where_a_person_s_decision_went(keeper, ns, key):
    """`relevant.json` says where a person's decision went with its renamed code (`moves` in its own
    namespace, `followed` in another); an agent can edit that file. With the entry deleted the door
    let the verbatim re-raise on the renamed definition through; commit works the entries out again
    from the snapshot and the disk, refuses the staged line and writes nothing."""
    root = keeper.root
    _decided(keeper)
    _git(root, "mv", "src/a.py", "src/b.py")
    _commit(root, "rename")
    run = _open(keeper, ns)
    where = root / f".priors/runs/{run}/relevant.json"
    rel = json.loads(where.read_text())
    assert [m["id"] for m in rel[key]] == ["P-0001"]
    del rel[key]
    where.write_text(json.dumps(rel))
    keeper.ok("propose", keeper.candidate(conclusion(CLAIM, "src/b.py#total")), "--run", run, "--ns", ns)
    before = keeper.ledger_bytes()
    body = keeper.refused("MALFORMED_STAGING", "commit", "--run", run)
    assert body["because"]["refused"] == "RERAISE" and body["because"]["of"] == "P-0001", body
    assert body["file"] == f".priors/runs/{run}/staged.jsonl" and body["line"] == 1
    assert keeper.ledger_bytes() == before
    keeper.ok("abort", "--run", run)


def test_a_commit_that_mended_the_moves_is_finished_by_its_retry(keeper):
    """With `moves` cut out of relevant.json, commit still writes the person's decision's `moved` event
    (worked out again); killed after the ledger landed, its retry judges the staging the same way and
    finishes — it is not taken for another clone's run of that id."""
    import shutil

    root = keeper.root
    _decided(keeper)
    _git(root, "mv", "src/a.py", "src/b.py")
    _commit(root, "rename")
    run = _open(keeper, "web")
    where = root / f".priors/runs/{run}/relevant.json"
    rel = json.loads(where.read_text())
    del rel["moves"]
    where.write_text(json.dumps(rel))
    keeper.ok("propose", keeper.candidate(conclusion("tax() uses a float rate", "src/b.py#tax")), "--run", run,
              "--ns", "web")
    keep = root / "kept"
    shutil.copytree(root / f".priors/runs/{run}", keep)
    summary = keeper.ok("commit", "--run", run)
    moved = [r for r in keeper.ledger() if r.get("action") == "moved"]
    assert [(r["id"], r["to"]) for r in moved] == [("P-0001", "src/b.py#total")]
    ledger = keeper.ledger_bytes()
    shutil.copytree(keep, root / f".priors/runs/{run}")  # as if killed after the ledger landed
    assert keeper.ok("commit", "--run", run) == summary and keeper.ledger_bytes() == ledger


def test_a_renamed_and_edited_definition_is_not_followed_where_its_body_changed(keeper):
    """Control: once the moved definition's body is edited, the scope state is not the one decided on —
    the contract lets the question be raised again there (the move is followed, as changed)."""
    root = keeper.root
    _decided(keeper)
    _git(root, "mv", "src/a.py", "src/b.py")
    keeper.write("src/b.py", A.replace("s += i.price", "s += i.price * i.qty"))
    _commit(root, "rename and edit")
    run = _open(keeper, "sec")
    keeper.ok("propose", keeper.candidate(conclusion(CLAIM, "src/b.py#total")), "--run", run, "--ns", "sec")


def _hand_written(k, ns, ref, claim, pid="P-0003", run="run-003"):
    """A finding typed into the ledger on `ref` with the code's real hash, sealed as the keeper seals a
    run, with no `moved` event."""
    from priors.core.canonical import dumps
    snap = json.loads(k.ok("snapshot"))
    scopes = snap.get("scopes", snap)
    prior = {"born": run, "claim": claim, "id": pid, "ns": ns, "scope_hash": scopes[ref], "scope_ref": ref,
             "severity": "major", "t": "prior", "type": "conclusion",
             "facets": {"activation": "verify-phase", "authority": "advisory", "lifecycle": "stale-on-scope-change",
                        "obligation": "disposition-required", "scope": "content-hash"}}
    seal = {"action": "commit", "door": 3, "ns": ns, "run": run, "t": "run",
            "summary": ["Checked against 0 priors:", "New this run: 1"]}
    ledger = k.root / ".priors/ledger.jsonl"
    n = len(k.ledger())
    ledger.write_bytes(k.ledger_bytes() + (dumps(prior) + "\n" + dumps(seal) + "\n").encode())
    k.ok("render")
    return n + 1


def _problems(r):
    return [(p["line"], p["code"], p["message"]) for p in json.loads(r.out)["problems"]]


@pytest.mark.parametrize("ns", ["web", "sec"])
@pytest.mark.parametrize("how", ["mv", "rename-def"])
def test_verify_follows_a_person_s_decision_to_its_renamed_code_for_a_hand_written_reraise(keeper, tmp_path, ns, how):
    """After the rename, the verbatim claim typed into the ledger on the moved definition (its real
    hash, no `moved` event) passed verify at HEAD, with --since and in a fresh clone: a change's finding
    on a definition whose shape on disk is a person's decided definition's, gone from its own ref, is
    judged on that decision's scope state."""
    root = keeper.root
    _decided(keeper)
    if how == "mv":
        _git(root, "mv", "src/a.py", "src/b.py")
        ref = "src/b.py#total"
    else:  # renamed and moved to another file, body unchanged
        keeper.write("src/b.py", A.replace("def total", "def sum_prices"))
        _git(root, "rm", "-q", "src/a.py")
        ref = "src/b.py#sum_prices"
    base = _commit(root, "rename")
    no = _hand_written(keeper, ns, ref, CLAIM)
    r = keeper("verify", "--json")
    got = _problems(r)
    assert r.code == 1 and [(x[0], x[1]) for x in got] == [(no, "RERAISE")], r
    assert "P-0001" in got[0][2] and "the code of P-0001 moved there from src/a.py#total" in got[0][2], got
    _commit(root, "run")
    r = keeper("verify", "--since", base)
    assert r.code == 1 and "RERAISE" in r.out, r
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    from tests.conftest import run_priors
    r = run_priors(clone, "verify", "--since", base)
    assert r.code == 1 and "RERAISE" in r.out, r
    assert keeper("verify", "--no-git").code == 0  # (without the code, nothing is followed)


def test_verify_does_not_follow_a_decision_whose_code_is_still_there(keeper):
    """Control: a copy of the decided function under another name, the original still in place — the
    decision stays on its own definition (the door moves a finding only when its code is gone)."""
    root = keeper.root
    _decided(keeper)
    keeper.write("src/b.py", A.replace("def total", "def sum_prices"))
    base = _commit(root, "copy")
    _hand_written(keeper, "web", "src/b.py#sum_prices", CLAIM)
    _commit(root, "run")
    r = keeper("verify", "--since", base)
    assert r.code == 0, r


@pytest.mark.parametrize("ns", ["web", "sec"])
def test_a_decision_on_a_whole_file_follows_its_exact_rename(keeper, ns):
    """A person's wontfix on the file src/c.py; `git mv src/c.py src/d.py` (content unchanged): the
    verbatim claim on src/d.py was staged, committed and verified. Now refused RERAISE at the door, in
    every namespace, and named by verify when typed into the ledger."""
    root = keeper.root
    _decided(keeper)
    _git(root, "mv", "src/c.py", "src/d.py")
    base = _commit(root, "rename")
    run = _open(keeper, ns)
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(FILE_CLAIM, "src/d.py", "minor")),
                          "--run", run, "--ns", ns)
    assert body["of"] == "P-0002"
    keeper.ok("abort", "--run", run)
    no = _hand_written(keeper, ns, "src/d.py", FILE_CLAIM)
    r = keeper("verify", "--json")
    got = _problems(r)
    assert r.code == 1 and [(x[0], x[1]) for x in got] == [(no, "RERAISE")], r
    assert "the code of P-0002 moved there from src/c.py" in got[0][2], got
    _commit(root, "run")
    r = keeper("verify", "--since", base)
    assert r.code == 1 and "RERAISE" in r.out, r


def test_a_file_renamed_and_edited_is_not_followed(keeper):
    """The documented limit: like git's exact rename detection, only a file whose content is the
    decided state is followed — a rename plus an edit is a new question."""
    root = keeper.root
    _decided(keeper)
    _git(root, "mv", "src/c.py", "src/d.py")
    keeper.write("src/d.py", C + "\n\ndef more():\n    return 2\n")
    base = _commit(root, "rename and edit")
    run = _open(keeper, "web")
    keeper.ok("propose", keeper.candidate(conclusion(FILE_CLAIM, "src/d.py", "minor")), "--run", run, "--ns", "web")
    keeper.ok("commit", "--run", run)
    _commit(root, "run")
    keeper.ok("verify", "--since", base)


def test_a_file_decision_follows_each_exact_copy_at_the_door(keeper):
    """docs/protocol.md: the decision stands on each file of the snapshot with the decided content."""
    root = keeper.root
    _decided(keeper)
    _git(root, "mv", "src/c.py", "src/d.py")
    keeper.write("src/e.py", C)
    _commit(root, "rename and copy")
    run = _open(keeper, "sec")
    for ref in ("src/d.py", "src/e.py"):
        body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(FILE_CLAIM, ref, "minor")),
                              "--run", run, "--ns", "sec")
        assert body["of"] == "P-0002"
    rel = json.loads((root / ".priors/runs" / run / "relevant.json").read_text())
    assert [(m["id"], m["from"], m["to"]) for m in rel["followed"]] == [
        ("P-0002", "src/c.py", "src/d.py"), ("P-0002", "src/c.py", "src/e.py")]


def test_verify_judges_a_finding_on_either_of_two_definitions_of_the_decided_shape(keeper):
    """docs/ci.md: the decided definition gone, the checkout holding two of its shape — a change's
    finding on either is judged on the decision."""
    root = keeper.root
    _decided(keeper)
    keeper.write("src/b.py", A.replace("def total", "def sum_prices") + "\n\n" + A.split("\n\n\n")[0].replace(
        "def total", "def sum_all") + "\n")
    _git(root, "rm", "-q", "src/a.py")
    base = _commit(root, "rename twice")
    no = _hand_written(keeper, "sec", "src/b.py#sum_all", CLAIM)
    _commit(root, "run")
    r = keeper("verify", "--since", base, "--json")
    assert [(x[0], x[1]) for x in _problems(r)] == [(no, "RERAISE")], r


def test_a_file_is_followed_only_to_content_on_disk_as_decided(keeper):
    """docs/protocol.md: the decided content hash in the snapshot and on disk — a snapshot that states
    it for a file whose content on disk is another (`--scopes`) does not carry the decision there."""
    root = keeper.root
    _decided(keeper)
    decided = next(r for r in keeper.ledger() if r.get("id") == "P-0002")["scope_hash"]
    _git(root, "rm", "-q", "src/c.py")
    keeper.write("src/d.py", "def other():\n    return 0\n")
    _commit(root, "gone")
    run = keeper.open_run("sec", {"src/d.py": decided})["run"]
    keeper.ok("propose", keeper.candidate(conclusion(FILE_CLAIM, "src/d.py", "minor")), "--run", run, "--ns", "sec")


@pytest.mark.parametrize("ns", ["web", "sec"])
@pytest.mark.parametrize("how", ["mv", "rename-def"])
@pytest.mark.parametrize("around", ["file", "folder", "*"])
def test_verify_follows_a_person_s_decision_into_the_file_or_folder_around_its_renamed_code(keeper, ns, how, around):
    """Hostile pass 27h: after the rename, the verbatim claim typed into the ledger on the file (or the
    folder, or `*`) that now holds the decided definition passed `verify --since` — only the finding's
    own ref was looked up by shape — though the door refuses it (RERAISE: `relevant` follows the
    decision there, and a file, folder or `*` contains the definition)."""
    root = keeper.root
    _decided(keeper)
    if how == "mv":
        _git(root, "mv", "src/a.py", "src/b.py")
        file = "src/b.py"
    else:  # renamed in place, body unchanged
        keeper.write("src/a.py", A.replace("def total", "def sum_prices"))
        file = "src/a.py"
    ref = {"file": file, "folder": "src/", "*": "*"}[around]
    base = _commit(root, "rename")
    run = _open(keeper, ns)
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(CLAIM, ref)), "--run", run, "--ns", ns)
    assert body["of"] == "P-0001"
    keeper.ok("abort", "--run", run)
    no = _hand_written(keeper, ns, ref, CLAIM)
    _commit(root, "run")
    r = keeper("verify", "--since", base, "--json")
    got = _problems(r)
    assert r.code == 1 and [(x[0], x[1]) for x in got] == [(no, "RERAISE")], r
    assert "the code of P-0001 moved there from src/a.py#total" in got[0][2], got


def test_verify_follows_a_whole_file_decision_into_the_folder_around_its_exact_rename(keeper):
    """The same for a decision on a whole file: the verbatim claim on the folder holding the renamed file."""
    root = keeper.root
    _decided(keeper)
    _git(root, "mv", "src/c.py", "src/d.py")
    base = _commit(root, "rename")
    run = _open(keeper, "sec")
    keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(FILE_CLAIM, "src/", "minor")), "--run", run,
                   "--ns", "sec")
    keeper.ok("abort", "--run", run)
    no = _hand_written(keeper, "sec", "src/", FILE_CLAIM)
    _commit(root, "run")
    r = keeper("verify", "--since", base, "--json")
    got = _problems(r)
    assert r.code == 1 and [(x[0], x[1]) for x in got] == [(no, "RERAISE")], r
    assert "the code of P-0002 moved there from src/c.py" in got[0][2], got
