"""SARIF in and out, end to end through the real CLI: a real analyzer (ruff) over a small project
run three times, a hand-written log in the style of CodeQL and Semgrep, broken logs, and the export
validated against the official SARIF 2.1.0 schema (tests/data/sarif-schema-2.1.0.json)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import REPO, Keeper

DATA = REPO / "tests" / "data"
SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def validate(doc: Any) -> None:
    jsonschema = pytest.importorskip("jsonschema")  # in the `test` extra: CI always has it
    jsonschema.Draft4Validator(SCHEMA).validate(doc)


def ruff_command() -> List[str]:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    exe = shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed (it is in the `test` extra: pip install -e '.[test]')")
    return [exe]


def ruff_sarif(k: Keeper, name: str) -> str:
    proc = subprocess.run(ruff_command() + ["check", "--no-cache", "--isolated", "--select", "F",
                                            "--output-format", "sarif", "src"],
                          cwd=str(k.root), capture_output=True, text=True, encoding="utf-8")
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(proc.stdout)["runs"][0]["tool"]["driver"]["name"] == "ruff"
    k.write(name, proc.stdout)
    return name


def priors_by_scope(k: Keeper) -> Dict[str, Dict[str, Any]]:
    return {r["scope_ref"]: r for r in k.ledger() if r.get("t") == "prior"}


def verdicts(k: Keeper, run: str) -> Dict[str, str]:
    return {r["id"]: r["to"] for r in k.ledger() if r.get("action") == "disposition" and r.get("run") == run}


A1 = '''import sys


def total(x):
    unused_y = 1
    return x


def g():
    unused_w = 3
    return 0


class Cart:
    def m(self):
        unused_z = 2
        return sys.path
'''

# g's issue fixed, total changed without fixing its issue, Cart.m untouched
A2 = '''import sys


def total(x):
    unused_y = 1
    x = x + 1
    return x


def g():
    return 0


class Cart:
    def m(self):
        unused_z = 2
        return sys.path
'''

B = "import json\n"
C = "def h():\n    unused_q = 5\n"


@pytest.mark.one_cache_mode
def test_ruff_three_runs_fixed_carried_updated_new_then_suppressed(keeper: Keeper) -> None:
    k = keeper
    k.write("src/a.py", A1)
    k.write("src/b.py", B)
    r = k("ingest-sarif", ruff_sarif(k, "r1.sarif"), "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0, r
    first = r.json
    assert first["run"] == "run-001" and first["counts"]["new"] == 4 and first["refused"] == []
    born = priors_by_scope(k)
    assert sorted(born) == ["src/a.py#Cart.m", "src/a.py#g", "src/a.py#total", "src/b.py"]
    assert born["src/b.py"]["claim"] == "`json` imported but unused"
    assert born["src/b.py"]["direction"] == "ruff:F401" and born["src/b.py"]["severity"] == "major"
    assert born["src/a.py#total"]["evidence"] == "src/a.py:5"

    # fix one, change a function without fixing its issue, add a new one
    k.write("src/a.py", A2)
    k.write("src/c.py", C)
    r = k("ingest-sarif", ruff_sarif(k, "r2.sarif"), "--ns", "ruff", "--snapshot", "src")
    assert r.code == 0, r
    ids = {ref: rec["id"] for ref, rec in priors_by_scope(k).items()}
    assert verdicts(k, "run-002") == {ids["src/a.py#g"]: "fixed", ids["src/a.py#total"]: "reaffirmed",
                                      ids["src/a.py#Cart.m"]: "still-open", ids["src/b.py"]: "still-open"}
    assert "src/c.py#h" in ids and priors_by_scope(k)["src/c.py#h"]["born"] == "run-002"
    assert "  ✓ 1 fixed — nice work" in r.out and "New this run: 1" in r.out
    assert "From the analyzer: 4 results — 3 already known, 1 new" in r.out

    # the export after run-002: new / unchanged / updated / absent, each result where it belongs
    doc = json.loads(k.ok("export", "--sarif"))
    validate(doc)
    (run,) = doc["runs"]
    states = {res["properties"]["priors"]["id"]: res["baselineState"] for res in run["results"]}
    assert states == {ids["src/a.py#g"]: "absent", ids["src/a.py#total"]: "updated",
                      ids["src/a.py#Cart.m"]: "unchanged", ids["src/b.py"]: "unchanged", ids["src/c.py#h"]: "new"}
    fixed = next(res for res in run["results"] if res["baselineState"] == "absent")
    assert fixed["kind"] == "pass" and fixed["level"] == "none"
    total = next(res for res in run["results"] if res["properties"]["priors"]["id"] == ids["src/a.py#total"])
    assert total["locations"][0]["physicalLocation"]["region"] == {"startLine": 4, "endLine": 7}
    assert total["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/a.py"
    assert total["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "total"}]
    current = json.loads(k.ok("export", "--sarif", "--current"))
    assert "absent" not in {res["baselineState"] for res in current["runs"][0]["results"]}

    # a person's wontfix sticks: the third ingest reports it suppressed and does not re-add it
    k.ok("decide", ids["src/a.py#Cart.m"], "wontfix", "--because", "kept for the debugger")
    before = len([x for x in k.ledger() if x.get("t") == "prior"])
    r = k("ingest-sarif", ruff_sarif(k, "r3.sarif"), "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0, r
    third = r.json
    assert third["counts"]["suppressed"] == 1 and third["counts"]["new"] == 0
    assert [(x["refused"], x["of"], x["status"]) for x in third["refused"]] == [("RERAISE", ids["src/a.py#Cart.m"], "wontfix")]
    assert third["refused"][0]["file"] == "r3.sarif" and third["refused"][0]["result"].startswith("runs[0].results[")
    assert len([x for x in k.ledger() if x.get("t") == "prior"]) == before
    plain = k("ingest-sarif", ruff_sarif(k, "r4.sarif"), "--ns", "ruff", "--snapshot", "src")
    assert f"1 suppressed — a person settled it ({ids['src/a.py#Cart.m']}); not re-added" in plain.out
    # an analyzer reporting it again is no agent pressing: no attempts on the seals, no call for the person
    assert not [x for x in k.ledger() if x.get("t") == "run" and "attempts" in x]
    assert ids["src/a.py#Cart.m"] not in k.ok("status", "--calls")

    # the export: schema-valid, per result baselineState and suppressions, deterministic bytes
    out = k.ok("export", "--sarif")
    assert k.ok("export", "--sarif") == out
    doc = json.loads(out)
    validate(doc)
    (run,) = doc["runs"]
    assert run["tool"]["driver"]["name"] == "priors"
    assert [x["id"] for x in run["tool"]["driver"]["rules"]] == ["ruff:F401", "ruff:F841"]
    by_id = {res["properties"]["priors"]["id"]: res for res in run["results"]}
    assert ids["src/a.py#g"] not in by_id  # fixed before the last run: in neither baseline nor current
    for pid, res in by_id.items():
        assert res["baselineState"] == "unchanged"
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        if pid == ids["src/a.py#Cart.m"]:
            assert res["suppressions"] == [{"justification": "kept for the debugger", "kind": "external",
                                            "status": "accepted"}]
        else:
            assert "suppressions" not in res
    fp = by_id[ids["src/b.py"]]["partialFingerprints"]
    assert fp == {"primaryLocationLineHash": fp["primaryLocationLineHash"], "priorsPrior/v1": "ruff/" + ids["src/b.py"]}
    k.ok("export", "--sarif", "-o", "scan.sarif")
    assert k.read("scan.sarif") == out
    k.assert_rendered()


APP = '''import os


def handler(request):
    unused = request.args
    return 1


def main():
    app.run(debug=True)
'''
DB = '''import sqlite3

def query(ident):
    cur.execute("SELECT * FROM t WHERE id=" + ident)
'''


def test_codeql_and_semgrep_style_log(keeper: Keeper) -> None:
    k = keeper
    k.write("src/app.py", APP)
    k.write("src/db.py", DB.replace("import sqlite3\n\n", "import sqlite3\n"))
    shutil.copy(str(DATA / "sarif" / "codeql_semgrep_style.sarif"), str(k.root / "mixed.sarif"))
    r = k("ingest-sarif", "mixed.sarif", "--ns", "scan", "--json")
    assert r.code == 0, r
    rep = r.json
    assert rep["counts"]["results"] == 6 and rep["counts"]["not_findings"] == 2 and rep["counts"]["new"] == 4
    got = {(p["scope_ref"], p["direction"]): p for p in k.ledger() if p.get("t") == "prior"}
    assert sorted(got) == [
        ("*", "semgrep-oss:python.flask.security.audit.debug-enabled"),
        ("src/app.py#handler", "codeql:py/unused-local-variable"),
        ("src/app.py#main", "semgrep-oss:python.flask.security.audit.debug-enabled"),
        ("src/db.py#query", "codeql:py/sql-injection"),
    ]
    sql = got[("src/db.py#query", "codeql:py/sql-injection")]
    assert sql["claim"] == "This query depends on a user-provided value."
    assert sql["severity"] == "gate"
    assert sql["evidence"] == 'src/db.py:3: cur.execute("SELECT * FROM t WHERE id=" + ident)'
    assert got[("src/app.py#handler", "codeql:py/unused-local-variable")]["severity"] == "minor"
    assert got[("src/app.py#main", "semgrep-oss:python.flask.security.audit.debug-enabled")]["severity"] == "minor"
    # the same log again: everything is known, nothing new, quiescence
    r = k("ingest-sarif", "mixed.sarif", "--ns", "scan")
    assert r.code == 0 and "Everything settled still holds. Nothing new." in r.out, r
    doc = json.loads(k.ok("export", "--sarif", "--ns", "scan"))
    validate(doc)
    star = next(res for res in doc["runs"][0]["results"] if res["properties"]["priors"]["scope_ref"] == "*")
    loc = star["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == ".priors/ledger.jsonl"
    line = k.ledger_bytes().decode("utf-8").split("\n")[loc["region"]["startLine"] - 1]
    assert json.loads(line)["id"] == star["properties"]["priors"]["id"]
    # a ledger with a blank line and a CRLF ending (read by the strict parse): the line is still the prior's own
    lines = k.ledger_bytes().split(b"\n")
    lines[0] += b"\r"
    (k.root / ".priors" / "ledger.jsonl").write_bytes(b"\n".join(lines[:1] + [b"  "] + lines[1:]))
    text = k.ok("export", "--sarif", "--ns", "scan")
    again = json.loads(text)
    star = next(res for res in again["runs"][0]["results"] if res["properties"]["priors"]["scope_ref"] == "*")
    at = star["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert at == loc["region"]["startLine"] + 1
    line = k.ledger_bytes().decode("utf-8").split("\n")[at - 1]
    assert json.loads(line)["id"] == star["properties"]["priors"]["id"]
    # written to a file: the same text, and the count of its results
    r = k("export", "--sarif", "--ns", "scan", "-o", "scan.sarif")
    n = sum(len(run["results"]) for run in again["runs"])
    assert r.code == 0 and f"exported {n} findings to scan.sarif" in r.out, r
    assert (k.root / "scan.sarif").read_text(encoding="utf-8") == text.rstrip("\n") + "\n"


def test_priors_own_export_reads_back_with_the_same_directions(keeper: Keeper) -> None:
    k = keeper
    k.write("src/a.py", A1)
    k.ok("ingest-sarif", ruff_sarif(k, "r1.sarif"), "--ns", "ruff", "--snapshot", "src")
    k.ok("export", "--sarif", "-o", "back.sarif")
    r = k("ingest-sarif", "back.sarif", "--ns", "ruff", "--snapshot", "src", "--json")
    assert r.code == 0, r
    assert r.json["counts"]["known"] == 3 and r.json["counts"]["new"] == 0


def test_a_result_outside_the_snapshot_is_refused_not_fatal(keeper: Keeper) -> None:
    k = keeper
    k.write("src/a.py", "x = 1\n")
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": [
        {"ruleId": "R1", "message": {"text": "elsewhere"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file:///nowhere/else.py"},
                                             "region": {"startLine": 1}}}]},
        {"ruleId": "R2", "message": {"text": "here"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/a.py"}, "region": {"startLine": 1}}}]},
        {"ruleId": "R2", "message": {"text": "here, said twice"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/a.py"}, "region": {"startLine": 1}}}]},
    ]}]}
    k.write("l.sarif", json.dumps(log))
    r = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0, r
    assert [(x["refused"], x["result"]) for x in r.json["refused"]] == [("UNKNOWN_SCOPE", "runs[0].results[0]")]
    assert r.json["counts"]["new"] == 1 and r.json["counts"]["merged"] == 1
    assert not list((k.root / ".priors" / "runs").iterdir())


BROKEN = [
    ("[1, 2]", "(the log): must be a JSON object"),
    ('{"version": "2.0.0", "runs": []}', "version: must be \"2.1.0\""),
    ('{"version": "2.1.0"}', "runs: must be an array"),
    ('{"version": "2.1.0", "runs": [{"tool": {}}]}', "runs[0].tool.driver: must be a JSON object"),
    ('{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [{"ruleId": "x"}]}]}',
     "runs[0].results[0].message: must be a JSON object"),
    ('{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [{"message": {"text": "a"}},'
     ' {"message": {"text": "b"}, "locations": [7]}]}]}', "runs[0].results[1].locations[0]: must be a JSON object"),
    ('{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t", "rules": [{"id": "a"}]}},'
     ' "results": [{"message": {"text": "b"}, "ruleIndex": 3}]}]}', "runs[0].results[0].ruleIndex: names no rule"),
    ('{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [{"message": {"text": "b"},'
     ' "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 0}}}]}]}]}',
     "runs[0].results[0].locations[0].physicalLocation.region.startLine"),
    ('{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [{"message": {"text": "b"},'
     ' "level": "fatal"}]}]}', "runs[0].results[0].level: must be one of none, note, warning, error"),
    ('{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [{"message": {"id": "m"}}]}]}',
     "runs[0].results[0].message: needs a non-empty `text`"),
    ('{"version": "2.1.0", "runs": [', "not valid JSON"),
]


@pytest.mark.parametrize("text,want", BROKEN)
def test_broken_sarif_is_a_usage_error_naming_the_path(keeper: Keeper, text: str, want: str) -> None:
    keeper.write("src/a.py", "x = 1\n")
    keeper.write("good.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}},
                                                                           "results": []}]}))
    keeper.write("bad.sarif", text)
    err = keeper.usage("ingest-sarif", "good.sarif", "bad.sarif", "--ns", "lint")
    assert want in err and "bad.sarif" in err, err
    assert not (keeper.root / ".priors" / "runs").exists() or not list((keeper.root / ".priors" / "runs").iterdir())


def test_usage_errors_and_refusals(keeper: Keeper) -> None:
    k = keeper
    k.write("e.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": []}]}))
    assert "--ns NS is required" in k.usage("ingest-sarif", "e.sarif")
    assert "no such file" in k.usage("ingest-sarif", "missing.sarif", "--ns", "x")
    assert "not both" in k.usage("ingest-sarif", "e.sarif", "--ns", "x", "--scopes", "s.json", "--snapshot")
    assert "--type selects lessons" in k.usage("export", "--sarif", "--type", "calibration")
    assert "--current goes with --sarif" in k.usage("export", "--current")
    big = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}},
                                         "results": [{"message": {"text": "x" * 70000}}]}]}
    k.write("big.sarif", json.dumps(big))
    assert "runs[0].results[0]" in k.usage("ingest-sarif", "big.sarif", "--ns", "x")
    run = k.open_run("x", {"*": "0" * 12})["run"]
    body = k.refused("ACTIVE_RUN_EXISTS", "ingest-sarif", "e.sarif", "--ns", "x")
    assert body["run"] == run
    assert (k.root / ".priors" / "runs" / run).is_dir()  # the open run is not touched


def test_an_empty_ledger_exports_an_empty_log(keeper: Keeper) -> None:
    doc = json.loads(keeper.ok("export", "--sarif"))
    validate(doc)
    assert doc["runs"] == [] and doc["version"] == "2.1.0"


def test_odd_records_an_agent_wrote_export_as_well(keeper: Keeper, tmp_path: Path) -> None:
    """A ledger line the keeper would not write but whose JSON is sound — an event whose run is a list, a
    severity that is a list, a prior's line spaced its own way — exports: the log is made, each prior
    where its line is (it stopped with `unexpected error` on the first two, and placed the third at line 1)."""
    k = keeper
    k.write("src/a.py", A1)
    k.ok("ingest-sarif", ruff_sarif(k, "r1.sarif"), "--ns", "ruff", "--snapshot", "src")
    ledger = k.root / ".priors" / "ledger.jsonl"
    lines = ledger.read_bytes().decode("utf-8").split("\n")
    first = next(i for i, x in enumerate(lines) if '"t":"prior"' in x)
    rec = json.loads(lines[first])
    rec.update(scope_ref="*", severity=["gate"])
    lines[first] = json.dumps(rec)  # (spaced: `"t": "prior"`)
    lines.insert(-1, json.dumps({"t": "event", "id": rec["id"], "action": "disposition", "to": "still-open",
                                 "run": ["run-001"], "by": "agent"}, separators=(",", ":")))
    ledger.write_bytes("\n".join(lines).encode("utf-8"))
    doc = json.loads(k.ok("export", "--sarif"))
    validate(doc)
    (odd,) = [r for r in doc["runs"][0]["results"] if r["properties"]["priors"]["id"] == rec["id"]]
    assert odd["level"] == "warning" and odd["properties"]["priors"]["severity"] == ["gate"]
    assert odd["locations"][0]["physicalLocation"]["region"] == {"startLine": first + 1}


def test_an_export_stopped_midway_writes_no_file(keeper: Keeper, monkeypatch: pytest.MonkeyPatch) -> None:
    """The log is written as it is made: a ledger found changed in place while the results are read back
    stops it — a file named with -o is not written (the one there stays as it was, no temp file is left);
    printed, the text ends where it stopped and the reason is raised (the command line: exit 2)."""
    from priors.core import sarif_out
    from priors.core.errors import DamagedLedger
    from priors.ops.export import export
    from priors.store.paths import Paths

    k = keeper
    k.write("src/a.py", A1)
    k.ok("ingest-sarif", ruff_sarif(k, "r1.sarif"), "--ns", "ruff", "--snapshot", "src")
    k.ok("export", "--sarif", "-o", "out.sarif")
    before = (k.root / "out.sarif").read_bytes()
    read_back = sarif_out.each_record
    calls = []

    def failing(ps):  # (the second read: the results, after the log's head is written)
        calls.append(1)
        if len(calls) == 2:
            raise DamagedLedger("priors: .priors/ledger.jsonl changed in place while this command read it")
        return read_back(ps)

    monkeypatch.setattr(sarif_out, "each_record", failing)
    with pytest.raises(DamagedLedger, match="changed in place"):
        export(Paths(k.root), None, None, True, False, str(k.root / "out.sarif"))
    assert (k.root / "out.sarif").read_bytes() == before
    assert sorted(p.name for p in k.root.iterdir() if p.name.startswith(".out.sarif")) == []
    calls.clear()
    pieces = export(Paths(k.root), None, None, True, False, None).chunks
    assert pieces is not None
    got = [next(pieces)]
    with pytest.raises(DamagedLedger, match="changed in place"):
        got.extend(pieces)
    assert got and before.decode("utf-8").startswith("".join(got))


def test_redacted_priors_never_leave(keeper: Keeper) -> None:
    k = keeper
    k.write("src/a.py", A1)
    k.ok("ingest-sarif", ruff_sarif(k, "r1.sarif"), "--ns", "ruff", "--snapshot", "src")
    victim = priors_by_scope(k)["src/a.py#g"]
    k.ok("decide", victim["id"], "wontfix", "--because", "secret reason about unused_w")
    k.ok("redact", victim["id"], "--because", "it named a customer")
    out = k.ok("export", "--sarif")
    validate(json.loads(out))
    assert victim["id"] not in out and "unused_w" not in out and "secret reason" not in out


def test_a_failed_commit_leaves_nothing_staged(keeper: Keeper, tmp_path: Path) -> None:
    """An ingest whose ledger write fails aborts its run: no staging left, the ledger as it was."""
    k = keeper
    k.write("src/a.py", A1)
    name = ruff_sarif(k, "r1.sarif")
    dry = tmp_path / "dry"
    shutil.copytree(str(k.root), str(dry))
    # Both trees' files older than the snapshot's racy window (2 s), so that the dry run and the real
    # one make the same writes (a racy file is not cached) and the fault lands on the same call.
    time.sleep(2.1)
    argv = [sys.executable, str(REPO / "tests" / "faultrun.py"), "ingest-sarif", name, "--ns", "ruff", "--snapshot", "src"]
    env = dict(os.environ, PYTHONPATH=str(REPO), PRIORS_FAULT_LOG=str(tmp_path / "calls.log"), PRIORS_FAULT="0:none")
    r = subprocess.run(argv, cwd=str(dry), env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    calls = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    at = next(c.split()[0] for c in calls if c.split()[1] == "replace" and "/.ledger.jsonl." in c)
    before = k.ledger_bytes()
    env["PRIORS_FAULT"] = f"{at}:EIO"
    r = subprocess.run(argv, cwd=str(k.root), env=env, capture_output=True, text=True)
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
    assert k.ledger_bytes() == before
    assert not list((k.root / ".priors" / "runs").iterdir())


@pytest.mark.parametrize("verb", ["ingest-sarif", "relevant"])
def test_a_run_that_fails_before_its_ledger_write_leaves_no_folder_behind(
        keeper: Keeper, tmp_path_factory, verb: str) -> None:
    """An I/O error on any write of a run being opened or staged (its folder, relevant.json, the
    staging, the ledger's temp file) takes the run back: no `runs/run-001` is left to skip a number,
    and the message never names it among what the call changed."""
    k = keeper
    k.write("src/a.py", A1)
    name = ruff_sarif(k, "r1.sarif")
    args = [name, "--ns", "ruff", "--snapshot", "src"] if verb == "ingest-sarif" else ["--ns", "ruff", "--snapshot", "src"]
    argv = [sys.executable, str(REPO / "tests" / "faultrun.py"), verb, *args]
    work = tmp_path_factory.mktemp("copies")
    pristine = work / "pristine"  # never run: every copy below is a copy of it, so all make the same writes
    shutil.copytree(str(k.root), str(pristine))
    time.sleep(2.1)  # past the snapshot's racy window: the files' age no longer changes what is cached
    dry = work / "dry"
    shutil.copytree(str(pristine), str(dry))
    env = dict(os.environ, PYTHONPATH=str(REPO), PRIORS_FAULT_LOG=str(work / "calls.log"), PRIORS_FAULT="0:none")
    assert subprocess.run(argv, cwd=str(dry), env=env, capture_output=True, text=True).returncode == 0
    env.pop("PRIORS_FAULT_LOG")
    calls = (work / "calls.log").read_text(encoding="utf-8").splitlines()
    sealed = "/.ledger.jsonl." if verb == "ingest-sarif" else "/.relevant.json."  # (relevant writes no ledger)
    last = next(int(c.split()[0]) for c in calls if c.split()[1] == "replace" and sealed in c)
    first = next(int(c.split()[0]) for c in calls if c.split()[1] == "mkdir" and c.endswith("/runs/run-001"))
    for n in range(first, last + 1):  # every write from the run's folder to the ledger's (relevant.json's) replace
        root = work / f"t{n}"
        shutil.copytree(str(pristine), str(root))
        env["PRIORS_FAULT"] = f"{n}:EIO"
        log = work / f"calls-{n}.log"  # (this run's own calls: under load a run may make its writes in
        env["PRIORS_FAULT_LOG"] = str(log)  # another order than the dry one — the CI flake)
        r = subprocess.run(argv, cwd=str(root), env=env, capture_output=True, text=True)
        own = log.read_text(encoding="utf-8").splitlines()
        failed = own[n - 1]
        if r.returncode == 0:  # a directory's fsync after a rename, or a cache: the keeper goes on without it —
            # or, when this run made its writes in another order than the dry one, a write after its own seal
            # (PRIORS.md, after the ledger landed: a warning, never the answer)
            landed = any(c.split()[1] == "replace" and sealed in c for c in own[:n - 1])
            assert failed.split()[1] == "fsync" or "/.priors/cache/" in failed or landed, (n, failed)
            continue
        assert r.returncode == 3 and "Traceback" not in r.stderr, (n, r.stderr)
        assert not list((root / ".priors" / "runs").iterdir()), (n, failed)
        changed = r.stderr.split("this call changed:", 1)[1] if "this call changed:" in r.stderr else ""
        assert "/runs/" not in changed, (n, r.stderr)  # (a cache the call refreshed is still named)


def one_result(file: str, line: int) -> str:
    return json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": [
        {"ruleId": "L1", "level": "warning", "message": {"text": "loop variable is unused"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": file}, "region": {"startLine": line}}}]}]}]})


def test_a_moved_line_is_carried_and_a_rename_is_a_new_finding(keeper: Keeper) -> None:
    """docs/sarif.md: a line moving inside its definition changes nothing; a renamed definition takes its
    prior along (issue 28), so a person's wontfix holds on the new name and the result there is no new
    finding; a definition whose body is nowhere leaves its prior missing, and a result elsewhere is new."""
    k = keeper
    k.write("src/a.py", "def old():\n    for i in x:\n        pass\n")
    k.write("l.sarif", one_result("src/a.py", 2))
    k.ok("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src")
    (first,) = [r for r in k.ledger() if r.get("t") == "prior"]
    assert first["scope_ref"] == "src/a.py#old" and first["severity"] == "minor"
    k.write("src/a.py", "\n\ndef old():\n    for i in x:\n        pass\n")  # blank lines above: the line moves
    k.write("l.sarif", one_result("src/a.py", 4))
    r = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.json["counts"] == dict(r.json["counts"], carried=1, new=0, fixed=0)
    k.ok("decide", first["id"], "wontfix", "--because", "intended")
    k.write("src/a.py", "def new():\n    for i in x:\n        pass\n")
    k.write("l.sarif", one_result("src/a.py", 2))
    r = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.json["counts"]["new"] == 0 and r.json["counts"]["suppressed"] == 1, r.json
    assert [(m["from"], m["to"]) for m in k.ledger() if m.get("action") == "moved"] == [("src/a.py#old", "src/a.py#new")]
    k.write("src/a.py", "def other():\n    return 2\n")  # the body is gone: a result here is new
    k.write("l.sarif", one_result("src/a.py", 2))
    r = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.json["counts"]["new"] == 1
    (new,) = [x for x in k.ledger() if x.get("t") == "prior" and x["id"] in r.json["new"]]
    assert new["scope_ref"] == "src/a.py#other"


def test_the_first_ingest_sets_up_the_ledger(bare: Keeper) -> None:
    bare.write("src/a.py", "def old():\n    for i in x:\n        pass\n")
    bare.write("l.sarif", one_result("src/a.py", 2))
    r = bare("ingest-sarif", "l.sarif", "--ns", "lint")  # no --snapshot: the whole target
    assert r.code == 0 and "set up" in r.err and "New this run: 1" in r.out, r
    assert [p["scope_ref"] for p in bare.ledger() if p.get("t") == "prior"] == ["src/a.py#old"]
    assert bare("ingest-sarif", "--help").out.startswith("usage: priors ingest-sarif")


def two_results(root: str = "") -> str:
    res = [{"ruleId": rule, "message": {"text": text},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": root + "src/a.py"}, "region": {"startLine": 1}}}]}
           for rule, text in (("L1", "first issue"), ("L2", "second issue"))]
    return json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": res}]})


@pytest.mark.parametrize("log,where", [
    ({"version": "2.1.0", "runs": []}, "runs: is empty"),
    ({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}}]}, "runs[0].results: is missing"),
    ({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": [],
                                    "invocations": [{"executionSuccessful": True}, {"executionSuccessful": False}]}]},
     "runs[0].invocations[1].executionSuccessful: is false"),
])
def test_a_failed_or_empty_analyzer_log_marks_nothing_fixed(keeper: Keeper, log: Dict[str, Any], where: str) -> None:
    """docs/sarif.md: a log that says the analyzer failed (or ran nothing) is refused before a run opens."""
    k = keeper
    k.write("src/a.py", "x = 1\n")
    k.write("l.sarif", two_results())
    k.ok("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src")
    before = k.ledger_bytes()
    k.write("bad.sarif", json.dumps(log))
    err = k.usage("ingest-sarif", "bad.sarif", "--ns", "lint", "--snapshot", "src")
    assert "bad.sarif: " + where in err and "nothing was changed" in err, err
    assert k.ledger_bytes() == before and not list((k.root / ".priors" / "runs").iterdir())


def test_a_mis_rooted_log_marks_nothing_fixed_and_a_fixed_finding_reported_again_is_named(keeper: Keeper) -> None:
    """docs/sarif.md: a result the snapshot cannot place withholds every `fixed`; a result that reports a
    prior recorded fixed on the same code is listed, not silently dropped."""
    k = keeper
    k.write("src/a.py", "x = 1\n")
    k.write("l.sarif", two_results())
    k.ok("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src")
    ids = sorted(p["id"] for p in k.ledger() if p.get("t") == "prior")
    k.write("l.sarif", two_results("file:///home/runner/work/repo/"))
    r = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0, r
    rep = r.json
    assert rep["counts"]["fixed"] == 0 and rep["counts"]["carried"] == 2 and rep["counts"]["fixed_withheld"] == 2
    assert rep["fixed_withheld"]["ids"] == ids and rep["fixed_withheld"]["unplaced"] == 2
    assert "could not be placed" in rep["fixed_withheld"]["reason"]
    assert set(verdicts(k, rep["run"]).values()) == {"still-open"}
    plain = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src")
    assert f"2 not marked fixed ({', '.join(ids)})" in plain.out, plain
    # an honest empty log fixes them; the same results again on the same code are named, not dropped
    k.write("l.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": []}]}))
    assert k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json").json["counts"]["fixed"] == 2
    k.write("l.sarif", two_results())
    r = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["reported_again_but_fixed"] == ids, r
    plain = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src")
    assert f"2 reported again but recorded fixed ({', '.join(ids)})" in plain.out, plain
    k.ok("decide", ids[0], "reopen", "--because", "the analyzer still finds it")
    r = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src", "--json")
    assert r.json["counts"]["carried"] == 1 and r.json["reported_again_but_fixed"] == ids[1:], r


def test_every_exported_uri_is_a_relative_reference(keeper: Keeper) -> None:
    """docs/sarif.md: a file whose name looks like a scheme (`javascript:alert(1)`) or holds spaces and `?`
    is exported percent-encoded, never as an absolute URI, and reads back to the same file."""
    from urllib.parse import unquote, urlsplit

    k = keeper
    names = ["javascript:alert(1)", "src/a b?c:d.py", "x:y/z.py"]
    for name in names:
        k.write(name, "x = 1\n")
    res = [{"ruleId": "L1", "message": {"text": "issue"}, "locations": [{"physicalLocation": {
        "artifactLocation": {"uri": name.replace("%", "%25").replace(":", "%3A").replace("?", "%3F").replace(" ", "%20")}}}]}
        for name in names]  # no line: the keeper reads no lines of a file whose path looks like a URI
    k.write("l.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": res}]}))
    r = k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", *names, "--json")
    assert r.code == 0 and r.json["counts"]["new"] == 3, r
    doc = json.loads(k.ok("export", "--sarif"))
    validate(doc)
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"] for res in doc["runs"][0]["results"]
            for loc in res["locations"]]
    assert sorted(uris) == ["javascript%3Aalert(1)", "src/a%20b%3Fc:d.py", "x%3Ay/z.py"]
    assert all(urlsplit(u).scheme == "" and urlsplit(u).path == u for u in uris)
    assert sorted(unquote(u) for u in uris) == sorted(names)


def test_export_of_a_namespace_the_ledger_never_held_is_a_usage_error(keeper: Keeper) -> None:
    """docs/sarif.md: `--ns` must name a namespace of the ledger; a near miss is named."""
    k = keeper
    assert "holds none yet" in k.usage("export", "--sarif", "--ns", "ruff")
    k.write("src/a.py", "x = 1\n")
    k.write("l.sarif", two_results())
    k.ok("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src")
    err = k.usage("export", "--sarif", "--ns", "lnit")
    assert "--ns lnit: the ledger holds no namespace of that name — did you mean lint?" in err, err
    assert "(it holds lint)" in k.usage("export", "--sarif", "--ns", "semgrep", "-o", "x.sarif")
    assert not (k.root / "x.sarif").exists()
    # a namespace whose last run left no findings is known: its log is empty, not an error
    k.write("e.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": []}]}))
    k.ok("ingest-sarif", "e.sarif", "--ns", "quiet", "--snapshot", "src")
    assert json.loads(k.ok("export", "--sarif", "--ns", "quiet"))["runs"] == []


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGKILL"), reason="SIGTERM cannot be caught on Windows")
def test_sigterm_mid_ingest_leaves_no_run_and_no_lock(keeper: Keeper, tmp_path: Path) -> None:
    """docs/sarif.md: SIGTERM (a cancelled CI job) during an ingest takes Ctrl-C's path — the run is
    removed, the lock released, the ledger as it was — so the next ingest just runs."""
    k = keeper
    k.write("src/a.py", "x = 1\n")
    k.write("l.sarif", two_results())
    k.ok("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src")
    dry = tmp_path / "dry"
    shutil.copytree(str(k.root), str(dry))
    argv = [sys.executable, str(REPO / "tests" / "faultrun.py"), "ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src"]
    env = dict(os.environ, PYTHONPATH=str(REPO), PRIORS_FAULT_LOG=str(tmp_path / "calls.log"), PRIORS_FAULT="0:none")
    assert subprocess.run(argv, cwd=str(dry), env=env, capture_output=True, text=True).returncode == 0
    calls = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    at = next(c.split()[0] for c in calls if "dispositions.jsonl" in c)  # inside the open run, before the commit
    before = k.ledger_bytes()
    env["PRIORS_FAULT"] = f"{at}:term"
    r = subprocess.run(argv, cwd=str(k.root), env=env, capture_output=True, text=True)
    assert r.returncode == 130 and "interrupted" in r.stderr and "Traceback" not in r.stderr, r
    assert k.ledger_bytes() == before
    assert not list((k.root / ".priors" / "runs").iterdir()) and not (k.root / ".priors" / "keeper.lock").exists()
    assert k("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src").code == 0


def test_an_ingest_names_the_findings_it_could_not_judge(keeper: Keeper) -> None:
    """A finding of the namespace outside the run's snapshot gets no verdict line in the summary: the
    analyzer's part says which ones were not judged and why, and --json lists them as `missing`."""
    k = keeper
    k.write("src/a.py", "def old():\n    for i in x:\n        pass\n")
    k.write("src/b.py", "def other():\n    for i in x:\n        pass\n")
    k.write("a.sarif", one_result("src/a.py", 2))
    k.ok("ingest-sarif", "a.sarif", "--ns", "lint", "--snapshot", "src")
    (first,) = [r["id"] for r in k.ledger() if r.get("t") == "prior"]
    k.write("b.sarif", one_result("src/b.py", 2))
    r = k("ingest-sarif", "b.sarif", "--ns", "lint", "--snapshot", "src/b.py")
    assert r.code == 0 and f"1 not judged ({first})" in r.out and "rests" in r.out, r
    r = k("ingest-sarif", "b.sarif", "--ns", "lint", "--snapshot", "src/b.py", "--json")
    assert r.json["missing"] == [first] and r.json["counts"]["missing"] == 1
    r = k("ingest-sarif", "b.sarif", "--ns", "lint", "--snapshot", "src", "--json")  # a.py is covered again
    assert "missing" not in r.json and r.json["counts"]["missing"] == 0


def test_a_person_s_decision_holds_in_another_namespace_when_the_flagged_text_changed(keeper: Keeper) -> None:
    """A result whose flagged text changed (a new fingerprint) with the same rule and claim on the scope
    of a finding a person decided is that decision's finding — in any namespace, as a person's decision
    holds in every one (hostile pass 27j: ingested under another namespace it was recorded as new)."""
    k = keeper
    k.write("src/a.py", "def old():\n    for i in x:\n        pass\n")
    k.write("l.sarif", one_result("src/a.py", 2))
    k.ok("ingest-sarif", "l.sarif", "--ns", "lint", "--snapshot", "src")
    (first,) = [r for r in k.ledger() if r.get("t") == "prior"]
    k.ok("decide", first["id"], "wontfix", "--because", "intended")
    k.write("src/a.py", "def old():\n    for i in x:  # the flagged text changes\n        pass\n")
    for ns in ("lint", "other"):
        r = k("ingest-sarif", "l.sarif", "--ns", ns, "--snapshot", "src", "--json")
        assert r.json["counts"]["new"] == 0 and r.json["counts"]["suppressed"] == 1, (ns, r.json)
        (refusal,) = r.json["refused"]
        assert refusal["of"] == first["id"] and refusal["changed"] is True
        assert refusal.get("ns") == (None if ns == "lint" else "lint")
    assert [r["id"] for r in k.ledger() if r.get("t") == "prior"] == [first["id"]]
