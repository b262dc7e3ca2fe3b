"""An analyzer result keeps its identity (docs/sarif.md, "Identity"): its rule and a fingerprint on its
scope, never a comparison of English sentences. Through the real CLI with real ruff (`--select ALL`
over a small tree, two F401 in one module), plus the log's edges: a BOM, a log named after
`--snapshot`, a huge message placeholder, a control character, an empty log in one namespace."""

from __future__ import annotations

import json
import subprocess
from typing import Any, Dict, List

from conftest import Keeper
from test_sarif import ruff_command, validate

SHOP = '''import os
import sys


class Cart:
    def __init__(self, items):
        self.items = items

    def total(self, discount):
        try:
            value = sum(self.items) - discount
        except Exception:
            pass
        return value


def load(path):
    try:
        os.remove(path)
    except OSError:
        pass
    print(path)
    return open(path).read()


def helper(a, b):
    assert a
    return eval(b)
'''
UTIL = "import os\nimport sys\n\n\ndef f():\n    return 1\n"


def ruff(k: Keeper, name: str, select: str) -> str:
    proc = subprocess.run(ruff_command() + ["check", "--no-cache", "--isolated", "--select", select,
                                            "--output-format", "sarif", "src"],
                          cwd=str(k.root), capture_output=True, text=True, encoding="utf-8")
    assert proc.returncode in (0, 1), proc.stderr
    k.write(name, proc.stdout)
    return name


def priors(k: Keeper) -> List[Dict[str, Any]]:
    return [r for r in k.ledger() if r.get("t") == "prior"]


def statuses(k: Keeper) -> Dict[str, str]:
    return {r["id"]: r["status"] for r in json.loads(k.ok("list", "--json"))["priors"]}


def test_ruff_select_all_every_result_is_its_own_finding_and_a_reingest_carries_all(keeper: Keeper) -> None:
    """The issue's case: S110 beside SIM105, D101 and D103 beside D100, ANN001 beside ANN201 — each its
    own finding, none lost to a merge or a DUPLICATE by meaning; the same log again carries 100 %."""
    k = keeper
    k.write("src/shop.py", SHOP)
    k.write("src/util.py", UTIL)
    log = ruff(k, "all.sarif", "ALL")
    results = json.loads(k.read(log))["runs"][0]["results"]
    r = k("ingest-sarif", log, "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0, r
    c = r.json["counts"]
    assert c["results"] == len(results) > 25
    assert (c["new"], c["merged"], c["refused"], c["not_findings"]) == (len(results), 0, 0, 0), c
    assert r.json["refused"] == []
    born = priors(k)
    rules = sorted(p["rule"] for p in born)
    assert rules == sorted("ruff:" + x["ruleId"] for x in results)  # one prior per result, by rule
    for rule in ("S110", "SIM105", "D100", "D101", "D103", "ANN001", "ANN201", "F401"):
        assert "ruff:" + rule in rules, rule
    assert len({(p["scope_ref"], p["rule"], p["fingerprint"]) for p in born}) == len(born)  # no two share an identity
    # the same log again: every finding carried, nothing new, nothing fixed
    r = k("ingest-sarif", log, "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0, r
    c = r.json["counts"]
    assert (c["known"], c["carried"], c["new"], c["fixed"], c["refused"]) == (len(results), len(results), 0, 0, 0), c
    assert "Everything settled still holds. Nothing new." in r.json["summary"]
    k.ok("verify")
    # the rule id shows wherever the finding is shown
    one = next(p for p in born if p["rule"] == "ruff:S110")
    assert "rule: ruff:S110 · fingerprint text:" in k.ok("show", one["id"])
    row = next(x for x in json.loads(k.ok("list", "--json"))["priors"] if x["id"] == one["id"])
    assert row["rule"] == "ruff:S110"
    assert "[ruff:S110] " in k.ok("list", "--ns", "ruff")
    k.ok("report", "-o", "report.html")
    assert '<code class="rule">ruff:S110</code> ' in k.read("report.html")
    doc = json.loads(k.ok("export", "--sarif", "--ns", "ruff"))
    validate(doc)
    res = next(x for x in doc["runs"][0]["results"] if x["properties"]["priors"]["id"] == one["id"])
    assert res["ruleId"] == "ruff:S110" and res["properties"]["priors"]["fingerprint"] == one["fingerprint"]


def test_two_unused_imports_are_two_findings_and_removing_one_fixes_exactly_it(keeper: Keeper) -> None:
    k = keeper
    k.write("src/m.py", UTIL)
    r = k("ingest-sarif", ruff(k, "1.sarif", "F401"), "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["counts"]["new"] == 2 and r.json["counts"]["merged"] == 0, r
    ids = {p["claim"]: p["id"] for p in priors(k)}
    assert sorted(ids) == ["`os` imported but unused", "`sys` imported but unused"]
    k.write("src/m.py", UTIL.replace("import os\n", ""))
    r = k("ingest-sarif", ruff(k, "2.sarif", "F401"), "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0, r
    c = r.json["counts"]
    assert (c["fixed"], c["reaffirmed"], c["new"]) == (1, 1, 0), c
    assert statuses(k) == {ids["`os` imported but unused"]: "fixed", ids["`sys` imported but unused"]: "open"}


def test_a_line_shift_and_reindent_keep_the_identity_and_a_wontfix_on_a_file_result_holds(keeper: Keeper) -> None:
    """The fingerprint reads the flagged text, not its line: ten lines added above and the import
    re-indented under an `if` keep it, so the finding is carried and a person's wontfix still holds."""
    k = keeper
    k.write("src/m.py", UTIL)
    k.ok("ingest-sarif", ruff(k, "1.sarif", "F401"), "--ns", "ruff", "--snapshot", "src")
    ids = {p["claim"]: p["id"] for p in priors(k)}
    k.ok("decide", ids["`sys` imported but unused"], "wontfix", "--because", "kept for the REPL")
    k.write("src/m.py", "# a comment\n" * 10 + "import os\nif True:\n    import sys\n\n\ndef f():\n    return 1\n")
    r = k("ingest-sarif", ruff(k, "2.sarif", "F401"), "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0, r
    c = r.json["counts"]
    assert (c["known"], c["reaffirmed"], c["fixed"], c["new"], c["suppressed"]) == (1, 1, 0, 0, 1), c
    assert [(x["refused"], x["of"]) for x in r.json["refused"]] == [("RERAISE", ids["`sys` imported but unused"])]
    # (the file changed: the hint says why the decision still holds, not that the state is the same — newcomer pass 27ai)
    assert "same state" not in r.json["refused"][0]["hint"] and "fingerprint" in r.json["refused"][0]["hint"], r.json


def test_one_rules_two_results_on_one_definition_are_each_their_own_decision(keeper: Keeper) -> None:
    """Two results of one rule on one function (ruff's FBT001 for two boolean arguments: the same message)
    are two findings; a person's wontfix on each holds after the lines shift, and each result comes back
    refused as the decision on its own fingerprint, not both as the first one's (newcomer pass 27ai)."""
    k = keeper
    code = "def parse(line, strip: bool, lower: bool):\n    return line\n"
    k.write("src/m.py", code)
    k.ok("ingest-sarif", ruff(k, "1.sarif", "FBT001"), "--ns", "ruff", "--snapshot", "src")
    found = priors(k)
    assert len(found) == 2 and len({p["fingerprint"] for p in found}) == 2 and len({p["claim"] for p in found}) == 1
    first, second = sorted(p["id"] for p in found)
    for pid in (first, second):
        k.ok("decide", pid, "wontfix", "--because", "a public signature")
    k.write("src/m.py", "# a comment\n" * 3 + code)
    r = k("ingest-sarif", ruff(k, "2.sarif", "FBT001"), "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0, r
    assert (r.json["counts"]["suppressed"], r.json["counts"]["refused"], r.json["counts"]["new"]) == (2, 0, 0), r.json["counts"]
    assert sorted(x["of"] for x in r.json["refused"]) == [first, second], r.json["refused"]
    text = k.ok("ingest-sarif", "2.sarif", "--ns", "ruff", "--snapshot", "src")
    assert f"({first}, {second})" in text, text  # (both named where the summary says what a person settled)


def test_an_agents_finding_still_meets_an_analyzers_by_meaning_and_cannot_claim_an_identity(keeper: Keeper) -> None:
    """Only two analyzer results bypass the comparison by meaning: an agent's reworded claim on the state
    a person settled for an analyzer's finding is still a re-raise; and `rule`/`fingerprint` are the
    keeper's to set from a log, never an agent's."""
    k = keeper
    k.write("src/m.py", UTIL)
    k.ok("ingest-sarif", ruff(k, "1.sarif", "F401"), "--ns", "ruff", "--snapshot", "src")
    pid = next(p["id"] for p in priors(k) if "`os`" in p["claim"])
    k.ok("decide", pid, "wontfix", "--because", "plugins import it for side effects")
    run = k.open_run("review", {"src/m.py": k.hash("src/m.py")})["run"]
    r = k.propose(run, "review", {"type": "conclusion", "claim": "the `os` import is unused", "scope_ref": "src/m.py"})
    assert r.code == 1 and r.json["refused"] == "RERAISE" and r.json["of"] == pid and r.json["similar"] is True, r
    err = k.usage("propose", k.candidate({"type": "conclusion", "claim": "x is wrong", "scope_ref": "src/m.py",
                                          "rule": "ruff:F401", "fingerprint": "text:0:0"}), "--run", run, "--ns", "review")
    assert "`rule` is set by the keeper from an analyzer's SARIF log" in err, err


def test_an_empty_log_touches_no_other_namespace_and_nothing_outside_its_snapshot(keeper: Keeper) -> None:
    k = keeper
    k.write("src/m.py", UTIL)
    k.write("lib/n.py", UTIL)
    k.ok("ingest-sarif", ruff(k, "1.sarif", "F401"), "--ns", "ruff", "--snapshot", "src")
    lib = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": [
        {"ruleId": "L1", "message": {"text": "lib issue"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "lib/n.py"}, "region": {"startLine": 1}}}]}]}]}
    k.write("lib.sarif", json.dumps(lib))
    k.ok("ingest-sarif", "lib.sarif", "--ns", "lint", "--snapshot", "lib")
    before = statuses(k)
    assert set(before.values()) == {"open"} and len(before) == 3
    k.write("empty.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": []}]}))
    r = k("ingest-sarif", "empty.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["counts"]["fixed"] == 0, r
    assert statuses(k) == before  # ruff's findings in src/ and lint's own in lib/ (outside this snapshot) stay open
    run = r.json["run"]
    touched = {x["id"] for x in k.ledger() if x.get("t") == "event" and x.get("run") == run}
    assert touched <= {p["id"] for p in priors(k) if p["ns"] == "lint"}
    # an empty file, or one holding only a BOM, is no log: a usage error, nothing written
    for name, data in (("zero.sarif", b""), ("bom.sarif", b"\xef\xbb\xbf")):
        (k.root / name).write_bytes(data)
        ledger = k.ledger_bytes()
        assert "not valid JSON" in k.usage("ingest-sarif", name, "--ns", "lint", "--snapshot", "lib")
        assert k.ledger_bytes() == ledger


def test_the_left_overs_bom_snapshot_placeholder_control_character(keeper: Keeper) -> None:
    k = keeper
    k.write("src/a.py", "x = 1\ny = 2\n")
    k.write("other/b.py", "z = 3\n")

    def result(text: str, line: int = 1) -> Dict[str, Any]:
        return {"ruleId": "R", "message": {"text": text},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/a.py"}, "region": {"startLine": line}}}]}

    def log(*results: Dict[str, Any], rules: Any = None) -> Dict[str, Any]:
        driver: Dict[str, Any] = {"name": "lint"}
        if rules is not None:
            driver["rules"] = rules
        return {"version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": list(results)}]}

    # a BOM at the start (GitHub's uploader writes one), and a second log named after --snapshot
    (k.root / "bom.sarif").write_bytes(b"\xef\xbb\xbf" + json.dumps(log(result("first"))).encode("utf-8"))
    k.write("second.sarif", json.dumps(log(result("second", 2))))
    r = k("ingest-sarif", "bom.sarif", "--ns", "lint", "--snapshot", "src", "second.sarif", "--json")
    assert r.code == 0 and r.json["counts"]["results"] == 2 and r.json["counts"]["new"] == 2, r
    assert {p["scope_ref"] for p in priors(k)} == {"src/a.py"}
    # a placeholder of 4,400 digits: a usage error that names it, not an unexpected error
    strings = {"m": {"text": "{" + "9" * 4400 + "}"}}
    huge = log({"ruleId": "R", "message": {"id": "m"}}, rules=[{"id": "R", "messageStrings": strings}])
    k.write("huge.sarif", json.dumps(huge))
    err = k.usage("ingest-sarif", "huge.sarif", "--ns", "lint", "--snapshot", "src")
    assert "runs[0].results[0].message.id: message placeholder {999999999999…} has 4400 digits" in err, err
    # a result holding a control character is left out and named; the others are ingested
    k.write("ctl.sarif", json.dumps(log(result("first"), result("second", 2), result("red \u001b[31m alert", 2))))
    r = k("ingest-sarif", "ctl.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["counts"]["known"] == 2 and r.json["counts"]["not_findings"] == 1, r
    (left,) = r.json["not_findings"]
    assert left["file"] == "ctl.sarif" and left["result"] == "runs[0].results[2]"
    assert left["reason"].startswith("holds a control or bidirectional-format character (U+001B)")
    plain = k("ingest-sarif", "ctl.sarif", "--ns", "lint", "--snapshot", "src")
    assert "1 left out, not recorded:\n    ctl.sarif runs[0].results[2]: holds a control" in plain.out, plain


def test_an_identity_written_into_an_agents_staging_is_refused_at_commit(keeper: Keeper) -> None:
    """Staging is the agent's to write: a staged prior carrying `rule`/`fingerprint` (which would set it
    apart from an analyzer's findings by identity instead of meaning) is not the line `propose` writes."""
    k = keeper
    k.write("src/m.py", UTIL)
    run = k.open_run("review", {"src/m.py": k.hash("src/m.py")})["run"]
    assert k.propose(run, "review", {"type": "conclusion", "claim": "f is dead code", "scope_ref": "src/m.py"}).code == 0
    staged = k.root / ".priors" / "runs" / run / "staged.jsonl"
    rec = json.loads(staged.read_text(encoding="utf-8"))
    staged.write_text(json.dumps(dict(rec, rule="ruff:F401", fingerprint="text:0:0")) + "\n", encoding="utf-8")
    r = k("commit", "--run", run)
    assert r.code == 1 and r.json["refused"] == "MALFORMED_STAGING", r
    assert r.json["because"]["differs"] == ["fingerprint", "rule"]


def test_a_result_like_a_hand_written_finding_is_refused_with_a_hint_an_ingest_can_follow(keeper: Keeper) -> None:
    """An analyzer's result still meets an agent's finding by meaning (docs/sarif.md, "Identity"); the
    refusal's hint then asks a person, not for `distinct_from`, which an ingest cannot give."""
    k = keeper
    k.write("src/m.py", UTIL)
    run = k.open_run("lint", {"src/m.py": k.hash("src/m.py")})["run"]
    assert k.propose(run, "lint", {"type": "conclusion", "claim": "the `os` module is imported but unused here",
                                   "scope_ref": "src/m.py"}).code == 0
    k.ok("commit", "--run", run)
    r = k("ingest-sarif", ruff(k, "1.sarif", "F401"), "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0, r
    (dup,) = r.json["refused"]
    assert dup["refused"] == "DUPLICATE" and dup["similar"] is True and "distinct_from" not in dup["hint"], dup
    assert "a person decides" in dup["hint"]


def _log(tool: str, *results: Dict[str, Any]) -> str:
    return json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": tool}}, "results": list(results)}]})


def _at(uri: str, line: int, text: str, rule: str = "R", **extra: Any) -> Dict[str, Any]:
    return dict({"ruleId": rule, "message": {"text": text},
                 "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": line}}}]},
                **extra)


def test_a_result_left_out_for_a_control_character_marks_nothing_fixed(keeper: Keeper) -> None:
    """The result that reports an old finding again, left out because its message holds a control
    character, is not the analyzer's silence: the old finding is carried, not marked fixed."""
    k = keeper
    k.write("src/a.py", "x = 1\ny = 2\n")
    k.write("1.sarif", _log("lint", _at("src/a.py", 1, "first"), _at("src/a.py", 2, "second")))
    assert k("ingest-sarif", "1.sarif", "--ns", "lint", "--snapshot", "src", "--json").json["counts"]["new"] == 2
    k.write("2.sarif", _log("lint", _at("src/a.py", 1, "first \u001b[31m"), _at("src/a.py", 2, "second")))
    r = k("ingest-sarif", "2.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["counts"]["fixed"] == 0 and r.json["counts"]["fixed_withheld"] == 1, r
    assert r.json["fixed_withheld"]["left_out"] == 1 and r.json["fixed_withheld"]["unplaced"] == 0
    assert set(statuses(k).values()) == {"open"}


def test_a_fingerprint_a_tool_gives_one_rule_at_two_places_identifies_neither(keeper: Keeper) -> None:
    """Semgrep OSS writes `{"matchBasedId/v1": "requires login"}` on every result: two results of one
    rule on one scope are still two findings (their text identifies them), and removing one fixes one."""
    k = keeper
    k.write("src/m.py", "def h(z):\n    print(z)\n    eval(z)\n    print(z + 1)\n")
    login = {"fingerprints": {"matchBasedId/v1": "requires login"}}
    both = [_at("src/m.py", 2, "print call", "p", **login), _at("src/m.py", 3, "eval", "e", **login),
            _at("src/m.py", 4, "print call", "p", **login)]
    k.write("1.sarif", _log("Semgrep OSS", *both))
    r = k("ingest-sarif", "1.sarif", "--ns", "sg", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["counts"]["new"] == 3 and r.json["counts"]["merged"] == 0, r
    assert len({(p["rule"], p["fingerprint"]) for p in priors(k)}) == 3
    k.write("2.sarif", _log("Semgrep OSS", *both[:2]))
    r = k("ingest-sarif", "2.sarif", "--ns", "sg", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["counts"]["fixed"] == 1 and r.json["counts"]["carried"] == 2, r


def test_verify_names_a_hand_written_identity_that_is_not_one(keeper: Keeper) -> None:
    """`rule` and `fingerprint` on a ledger line are both non-empty strings, or neither is there."""
    k = keeper
    k.write("src/m.py", UTIL)
    k.ok("ingest-sarif", ruff(k, "1.sarif", "F401"), "--ns", "ruff", "--snapshot", "src")
    path = k.root / ".priors" / "ledger.jsonl"
    good = path.read_bytes()
    first = json.loads(good.split(b"\n")[0])
    for change, word in (({"fingerprint": None}, "both"), ({"fingerprint": 7}, "`fingerprint` must be"),
                         ({"rule": ""}, "`rule` must be")):
        rec = dict(first, id="P-0009", born="run-009", claim="another claim altogether")
        rec.update(change)
        rec = {key: v for key, v in rec.items() if v is not None}
        commit = {"action": "commit", "ns": "ruff", "run": "run-009", "summary": ["x"], "t": "run"}
        lines = [json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for x in (rec, commit)]
        path.write_bytes(good + ("\n".join(lines) + "\n").encode("utf-8"))
        k.ok("render")
        r = k("verify", "--no-git", "--json")
        assert r.code == 1 and any(word in p["message"] for p in r.json["problems"]), (change, r)
    path.write_bytes(good)


def test_a_log_s_new_label_for_a_decided_result_on_the_same_code_does_not_bring_it_back(keeper: Keeper) -> None:
    """Hostile pass 27ah: a person's wontfix on ruff's F401, then a log giving the same rule on the same
    line of the same code a made-up `partialFingerprints` and a reworded message — a new finding, verify
    passing. From door 7, on the very state a person decided an analyzer's result on, another result of
    its rule there is that result (the same code gives the same results): suppressed, and verify names
    such a line typed into a run sealed door 7. Once the code changes, a result of the rule is judged by
    its identity again (a new unused import is a new finding)."""
    from priors.core.canonical import dumps
    from priors.core.vocabulary import DECIDED_FINDING_DOOR, DOOR

    k = keeper
    k.write("src/m.py", UTIL)
    k.write("1.sarif", _log("ruff", _at("src/m.py", 1, "`os` imported but unused", "F401")))
    k.ok("ingest-sarif", "1.sarif", "--ns", "lint", "--snapshot", "src")
    (decided,) = priors(k)
    k.ok("decide", decided["id"], "wontfix", "--because", "kept for plugins")
    forged = _at("src/m.py", 1, "Unused import: os", "F401", partialFingerprints={"primaryLocationLineHash": "deadbeef"})
    k.write("2.sarif", _log("ruff\u200b", forged))  # (and the tool named with an invisible character: hostile pass 27aj)
    r = k("ingest-sarif", "2.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0 and (r.json["counts"]["new"], r.json["counts"]["suppressed"]) == (0, 1), r
    assert r.json["refused"][0]["of"] == decided["id"] and "this rule" in r.json["refused"][0]["hint"], r
    assert [p["id"] for p in priors(k)] == [decided["id"]]
    # typed into the ledger: named in a run sealed door 7, not in one an older keeper sealed
    base = k.ledger_bytes()
    line = dict(decided, id="P-0002", born="run-009", claim="Unused import: os", fingerprint="tool:5a55db9deebb")
    for door, named in ((DECIDED_FINDING_DOOR, True), (DECIDED_FINDING_DOOR - 1, False)):
        old = base.replace(b'"door":%d' % DOOR, b'"door":%d' % door)
        seal = {"t": "run", "action": "commit", "run": "run-009", "ns": "lint", "door": door,
                "summary": ["New this run: 1"]}
        (k.root / ".priors/ledger.jsonl").write_bytes(old + (dumps(line) + "\n" + dumps(seal) + "\n").encode())
        k.ok("render")
        r = k("verify", "--no-git", "--json")
        got = [(p["code"], p["line"]) for p in json.loads(r.out)["problems"]]
        assert got == ([("RERAISE", old.count(b"\n") + 1)] if named else []), (door, r)
    (k.root / ".priors/ledger.jsonl").write_bytes(base)
    k.ok("render")
    # the code changed (a new unused import): a result of the rule is judged by its identity again
    k.write("src/m.py", "import json\n" + UTIL)
    k.write("3.sarif", _log("ruff", _at("src/m.py", 1, "`json` imported but unused", "F401"),
                            _at("src/m.py", 2, "`os` imported but unused", "F401")))
    r = k("ingest-sarif", "3.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["counts"]["new"] == 1 and r.json["counts"]["suppressed"] == 1, r
