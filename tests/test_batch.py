"""Batch calls: several dispositions or candidates in one call, each judged as if alone."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Keeper


def _setup(k: Keeper):
    for name in ("a.py", "b.py", "c.py"):
        k.write(name, f"# {name}\n")
    scopes = {n: k.hash(n) for n in ("a.py", "b.py", "c.py")}
    k.open_run("review", scopes)
    cands = [{"type": "conclusion", "claim": f"issue in {n}", "scope_ref": n, "severity": "major"}
             for n in ("a.py", "b.py", "c.py")]
    return scopes, cands


def _session(root: Path, batch: bool) -> bytes:
    root.mkdir()
    k = Keeper(root)
    k.ok("init")
    scopes, cands = _setup(k)
    if batch:
        k.write("all.json", json.dumps(cands))
        out = k.ok("propose", "all.json", "--run", "run-001", "--ns", "review")
        assert out == "P-0001 staged (new)\nP-0002 staged (new)\nP-0003 staged (new)\n"
    else:
        for c in cands:
            k.propose("run-001", "review", c)
    k.ok("commit", "--run", "run-001")
    k.open_run("review", scopes)
    pairs = [("P-0001", "still-open"), ("P-0002", "still-open"), ("P-0003", "still-open")]
    if batch:
        out = k.ok("disposition", "--run", "run-002", *[x for p in pairs for x in p])
        assert out == "P-0001 → still-open\nP-0002 → still-open\nP-0003 → still-open\n"
    else:
        for pid, verdict in pairs:
            k.ok("disposition", pid, verdict, "--run", "run-002")
    k.ok("commit", "--run", "run-002")
    return k.ledger_bytes()


def test_batch_and_single_calls_write_identical_ledgers(tmp_path):
    assert _session(tmp_path / "single", False) == _session(tmp_path / "batch", True)


def test_batch_refusals_name_their_items_and_the_rest_still_lands(keeper):
    scopes, cands = _setup(keeper)
    keeper.write("two.jsonl", json.dumps(cands[0]) + "\n" + json.dumps(cands[0]) + "\n")
    r = keeper("propose", "two.jsonl", "--run", "run-001", "--ns", "review")
    assert r.code == 1
    first, second = r.out.splitlines()
    assert first == "P-0001 staged (new)"
    body = json.loads(second)
    assert body["refused"] == "DUPLICATE" and body["of"] == "P-0001" and body["item"] == "two.jsonl#2"
    keeper.ok("commit", "--run", "run-001")
    keeper.open_run("review", scopes)
    r = keeper("disposition", "P-0001", "still-open", "P-0404", "fixed", "P-0001", "fixed", "--run", "run-002")
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[0] == "P-0001 → still-open"
    assert json.loads(lines[1]) == {"refused": "UNKNOWN_PRIOR", "id": "P-0404", "item": "P-0404"}
    assert json.loads(lines[2])["refused"] == "ALREADY_DISPOSITIONED"
    assert keeper.ok("commit", "--run", "run-002").startswith("Checked against 1 priors:")


def test_batch_with_a_grammar_error_stages_nothing(keeper):
    _, cands = _setup(keeper)
    keeper.write("mixed.json", json.dumps([cands[0], {"type": "conclusion"}]))
    err = keeper.usage("propose", "mixed.json", "--run", "run-001", "--ns", "review")
    assert "mixed.json#2" in err
    assert not (keeper.root / ".priors" / "runs" / "run-001" / "staged.jsonl").exists()
    keeper.usage("disposition", "P-0001", "fixed", "P-0002", "--run", "run-001")
    keeper.usage("disposition", "P-0001", "fixed", "P-0002", "wontfix", "--run", "run-001")


def test_several_files_and_stdin(keeper):
    _, cands = _setup(keeper)
    keeper.write("one.json", json.dumps(cands[0]))
    keeper.write("two.json", json.dumps(cands[1]))
    out = keeper.ok("propose", "one.json", "two.json", "-", "--run", "run-001", "--ns", "review",
                    stdin=json.dumps(cands[2]))
    assert out.splitlines() == ["P-0001 staged (new)", "P-0002 staged (new)", "P-0003 staged (new)"]


def test_disposition_pairs_from_a_file_or_stdin_answer_as_arguments_do(tmp_path):
    """`--from FILE|-`: pairs one `ID VERDICT` a line, after any given as arguments — the same answer, text
    and JSON, and the same ledger as the pairs given as arguments; a line that is not a pair is a usage error
    naming it, before anything is staged."""
    answers = []
    for way in ("argv", "file", "stdin"):
        root = tmp_path / way
        root.mkdir()
        k = Keeper(root)
        k.ok("init")
        scopes, cands = _setup(k)
        k.write("all.json", json.dumps(cands))
        k.ok("propose", "all.json", "--run", "run-001", "--ns", "review")
        k.ok("commit", "--run", "run-001")
        k.open_run("review", scopes)
        pairs = ["P-0001", "still-open", "P-0404", "fixed", "P-0002", "still-open", "P-0003", "still-open"]
        if way == "file":
            k.write("verdicts.txt", "\ufeffP-0404 fixed\r\n\n  P-0002\tstill-open\nP-0003 still-open")  # (a BOM: not the id's)
            r = k("disposition", *pairs[:2], "--run", "run-002", "--from", "verdicts.txt", "--json")
        elif way == "stdin":
            r = k("disposition", "--run", "run-002", "--from", "-", "--json",
                  stdin="\n".join(f"{a} {b}" for a, b in zip(pairs[::2], pairs[1::2])) + "\n")
        else:
            r = k("disposition", *pairs, "--run", "run-002", "--json")
        assert r.code == 1, r  # (P-0404 refused, the rest staged)
        answers.append(json.loads(r.out))
        k.ok("commit", "--run", "run-002")
        answers.append(k.ledger_bytes())
    assert answers[0] == answers[2] == answers[4] and answers[1] == answers[3] == answers[5]
    assert [x.get("id") for x in answers[0]["items"]] == ["P-0001", "P-0404", "P-0002", "P-0003"]


def test_disposition_from_a_bad_file_is_a_usage_error_staging_nothing(keeper):
    _setup(keeper)
    staged = keeper.root / ".priors" / "runs" / "run-001" / "dispositions.jsonl"
    for text, want in (("P-0001 fixed extra\n", "line 1: expected ID VERDICT"),
                       ("P-0001 fixed\nP-0002\n", "line 2: expected ID VERDICT"),
                       ("P-0001 fi\x1cxed\n", "line 1 holds a control"),
                       ("", "--from v.txt holds no ID VERDICT pair"),
                       (" \n\n", "--from v.txt holds no ID VERDICT pair"),
                       ("P-0001 fixed\n\nP-0002 nope\n", "--from v.txt: line 3: unknown verdict 'nope'"),
                       ("P-0001 wontfix\n", "--from v.txt: line 1: 'wontfix' is a human verdict")):
        keeper.write("v.txt", text)
        assert want in keeper.usage("disposition", "--run", "run-001", "--from", "v.txt")
    (keeper.root / "bad.txt").write_bytes(b"P-0001 \xff\n")
    assert "not UTF-8" in keeper.usage("disposition", "--run", "run-001", "--from", "bad.txt")
    assert "no such file" in keeper.usage("disposition", "--run", "run-001", "--from", "nope.txt")
    assert "give ID VERDICT pairs" in keeper.usage("disposition", "--run", "run-001")
    assert not staged.exists()
