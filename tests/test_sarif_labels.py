"""An analyzer's finding is not lost to how its log labels it (docs/sarif.md, "Identity"): an edit
elsewhere on the flagged line, a relabelled rule or tool, a fingerprint added, columns dropped, a
duplicate result, a forged `priors` log — with real ruff. And an ingest says only what is so: a
narrow snapshot leaves the rest unjudged, another tool's log marks nothing fixed, the export points
at the line the analyzer reports now and closes a finding whose code is gone."""

from __future__ import annotations

import json
import subprocess
from typing import Any, Callable, Dict

from conftest import Keeper
from test_sarif import ruff_command
from test_sarif_identity import UTIL, priors, ruff, statuses

TWO = '''def a(f):
    try:
        f()
    except Exception as e:
        pass


def b(f):
    try:
        f()
    except Exception:
        pass
'''


def ingest(k: Keeper, log: str, ns: str = "ruff", *paths: str) -> Dict[str, Any]:
    r = k("ingest-sarif", log, "--ns", ns, "--snapshot", *(paths or ("src",)), "--json")
    assert r.code == 0, r
    return r.json


def ids_by(k: Keeper) -> Dict[tuple, str]:
    return {(p["scope_ref"], p["rule"]): p["id"] for p in priors(k)}


def test_an_edit_elsewhere_on_the_flagged_line_keeps_the_finding_and_a_persons_decision(keeper: Keeper) -> None:
    """BLE001 names `Exception`: a trailing comment or `as e` dropped leaves it. S110 names the whole
    handler, which changes — the same rule saying the same on the same scope is still that finding:
    carried when open, suppressed when a person decided it. Nothing reads as fixed, nothing as new."""
    k = keeper
    k.write("src/m.py", TWO)
    assert ingest(k, ruff(k, "1.sarif", "S110,BLE001"))["counts"]["new"] == 4
    ids = ids_by(k)
    k.ok("decide", ids[("src/m.py#a", "ruff:BLE001")], "wontfix", "--because", "the caller logs it")
    k.ok("decide", ids[("src/m.py#b", "ruff:S110")], "wontfix", "--because", "best effort")
    k.write("src/m.py", TWO.replace("except Exception as e:", "except Exception:  # the caller logs it")
            .replace("    except Exception:\n        pass\n", "    except Exception as err:\n        pass\n"))
    got = ingest(k, ruff(k, "2.sarif", "S110,BLE001"))
    c = got["counts"]
    assert (c["fixed"], c["new"], c["known"], c["suppressed"], c["renewed"]) == (0, 0, 2, 2, 1), c
    assert sorted(x["of"] for x in got["refused"]) == sorted([ids[("src/m.py#a", "ruff:BLE001")],
                                                              ids[("src/m.py#b", "ruff:S110")]])
    assert got["renewed"] == [ids[("src/m.py#a", "ruff:S110")]]
    assert set(statuses(k).values()) == {"open", "wontfix"} and len(statuses(k)) == 4
    plain = k("ingest-sarif", ruff(k, "3.sarif", "S110,BLE001"), "--ns", "ruff", "--snapshot", "src")
    assert "the flagged text changed, the rule says the same there — taken as the finding a person decided" in plain.out


def _mutated(k: Keeper, name: str, src: str, change: Callable[[Dict[str, Any]], None]) -> str:
    doc = json.loads(k.read(src))
    change(doc)
    k.write(name, json.dumps(doc, ensure_ascii=False))
    return name


def _each_result(fn: Callable[[Dict[str, Any]], None]) -> Callable[[Dict[str, Any]], None]:
    def change(doc: Dict[str, Any]) -> None:
        for res in doc["runs"][0]["results"]:
            fn(res)
    return change


def test_a_persons_wontfix_holds_however_the_log_labels_the_result(keeper: Keeper) -> None:
    k = keeper
    k.write("src/m.py", UTIL)
    log = ruff(k, "1.sarif", "F401")
    ingest(k, log)
    ids = {p["claim"]: p["id"] for p in priors(k)}
    os_id, sys_id = ids["`os` imported but unused"], ids["`sys` imported but unused"]
    k.ok("decide", os_id, "wontfix", "--because", "plugins import it for side effects")

    def region(res: Dict[str, Any]) -> Dict[str, Any]:
        return res["locations"][0]["physicalLocation"]["region"]  # type: ignore[no-any-return]

    def forge(doc: Dict[str, Any]) -> None:
        doc["runs"][0]["tool"]["driver"] = {"name": "PRIORS"}
        for res in doc["runs"][0]["results"]:
            res["properties"] = {"priors": {"rule": "ruff:F401", "fingerprint": "forged"}}

    def duplicate(doc: Dict[str, Any]) -> None:
        doc["runs"][0]["results"].insert(0, json.loads(json.dumps(doc["runs"][0]["results"][0])))

    def rename(doc: Dict[str, Any]) -> None:
        doc["runs"][0]["tool"]["driver"]["name"] = "Ruff Linter"

    variants = {
        "lower": _each_result(lambda r: r.update(ruleId=r["ruleId"].lower())),
        "space": _each_result(lambda r: r.update(ruleId=r["ruleId"] + " ")),
        "nbsp": _each_result(lambda r: r.update(ruleId=r["ruleId"] + "\u00a0")),
        "fullwidth": _each_result(lambda r: r.update(ruleId="Ｆ４０１")),
        "fingerprints": _each_result(lambda r: r.update(partialFingerprints={"primaryLocationLineHash": "abc:1"})),
        "no-columns": _each_result(lambda r: region(r).update(startColumn=None, endColumn=None)),
        "duplicate": duplicate,
        "forged": forge,
        "renamed-tool": rename,
    }
    for name, change in variants.items():
        got = ingest(k, _mutated(k, name + ".sarif", log, lambda d, c=change: (c(d), _drop_none(d))))
        c = got["counts"]
        assert (c["suppressed"], c["new"], c["fixed"]) == (1, 0, 0), (name, got)
        assert [x["of"] for x in got["refused"] if x["refused"] == "RERAISE"] == [os_id], (name, got)
        assert statuses(k) == {os_id: "wontfix", sys_id: "open"}, name
    # an invisible character in a rule id: left out and named, and its silence marks nothing fixed
    got = ingest(k, _mutated(k, "zwsp.sarif", log, _each_result(lambda r: r.update(ruleId="F4\u200b01"))))
    assert (got["counts"]["not_findings"], got["counts"]["fixed"], got["counts"]["fixed_withheld"]) == (2, 0, 1), got
    assert "an invisible format character in its rule id (U+200B)" in got["not_findings"][0]["reason"]
    # the renamed tool into another namespace: the person's decision holds there too
    got = ingest(k, _mutated(k, "other.sarif", log, rename), "lint")
    assert [(x["refused"], x["of"], x["ns"]) for x in got["refused"]] == [("RERAISE", os_id, "ruff")], got
    k.ok("verify")
    # a ledger line with the decided claim, scope and state under a forged fingerprint is a re-raise
    path = k.root / ".priors" / "ledger.jsonl"
    first = next(json.loads(x) for x in path.read_bytes().split(b"\n") if b'"' + os_id.encode() + b'"' in x)
    rec = dict(first, id="P-0099", born="run-099", fingerprint="forged")
    commit = {"action": "commit", "ns": "ruff", "run": "run-099", "summary": ["x"], "t": "run"}
    text = "".join(json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" for x in (rec, commit))
    path.write_bytes(path.read_bytes() + text.encode("utf-8"))
    k.ok("render")
    r = k("verify", "--no-git", "--json")
    assert r.code == 1 and any(p["code"] == "RERAISE" and os_id in p["message"] for p in r.json["problems"]), r


def _drop_none(doc: Any) -> None:
    for run in doc["runs"]:
        for res in run["results"]:
            for loc in res.get("locations", ()):
                reg = loc["physicalLocation"].get("region", {})
                for key in [key for key, v in reg.items() if v is None]:
                    del reg[key]


def test_another_tools_log_marks_nothing_fixed(keeper: Keeper) -> None:
    k = keeper
    k.write("src/m.py", UTIL)
    ingest(k, ruff(k, "1.sarif", "F401"))
    k.write("sg.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "semgrep"}}, "results": []}]}))
    got = ingest(k, "sg.sarif")
    assert (got["counts"]["fixed"], got["counts"]["fixed_withheld"]) == (0, 2), got
    assert sorted(got["fixed_withheld"]["other_tool"]) == sorted(p["id"] for p in priors(k))
    assert set(statuses(k).values()) == {"open"}
    plain = k("ingest-sarif", "sg.sarif", "--ns", "ruff", "--snapshot", "src")
    assert "2 findings of a tool this log did not run" in plain.out and "the log ran: semgrep" in plain.out, plain


def ruff_on(k: Keeper, name: str, select: str, *paths: str) -> str:
    proc = subprocess.run(ruff_command() + ["check", "--no-cache", "--isolated", "--select", select, "--output-format",
                                            "sarif", *paths], cwd=str(k.root), capture_output=True, text=True,
                          encoding="utf-8")
    assert proc.returncode in (0, 1), proc.stderr
    k.write(name, proc.stdout)
    return name


def test_a_narrow_snapshot_leaves_the_findings_outside_it_unjudged(keeper: Keeper) -> None:
    """docs/sarif.md asks for `--snapshot` of the analyzer's paths: the namespace's findings elsewhere
    were not looked at, so they are not missing, never rest, and stay in `status` and `list`."""
    k = keeper
    k.write("src/m.py", UTIL)
    k.write("lib/n.py", UTIL)
    assert ingest(k, ruff_on(k, "both.sarif", "F401", "src", "lib"), "ruff", "src", "lib")["counts"]["new"] == 4
    lib = sorted(p["id"] for p in priors(k) if p["scope_ref"].startswith("lib/"))
    for n in range(6):
        got = ingest(k, ruff_on(k, f"src{n}.sarif", "F401", "src"))
        assert got["counts"]["missing"] == 0 and "missing" not in got and got["counts"]["carried"] == 2, got
    assert not [x for x in k.ledger() if x.get("action") == "scope-missing"]
    rows = json.loads(k.ok("list", "--status", "open", "--json"))["priors"]
    assert set(lib) <= {x["id"] for x in rows}
    assert "resting" not in k.ok("status")
    # a file gone from a folder the snapshot covers is missing, as always
    (k.root / "lib" / "n.py").unlink()
    k.write("lib/o.py", "x = 1\n")
    got = ingest(k, ruff_on(k, "lib.sarif", "F401", "lib"), "ruff", "lib")
    assert got["missing"] == lib, got


TAX = "def tax(x):\n    unused_var = x * 2\n    return x\n"


def test_the_export_points_at_the_current_line_and_closes_a_finding_whose_code_is_gone(keeper: Keeper) -> None:
    """A file-level finding exports at the line the last ingest reported it on, not its birth line;
    a function whose code is gone (another in its place) closes as `absent`
    and `--current` leaves it out; the ingest says where its code went."""
    k = keeper
    k.write("src/m.py", UTIL)
    k.write("src/tax.py", TAX)
    ingest(k, ruff(k, "1.sarif", "F401,F841"))
    old = ids_by(k)[("src/tax.py#tax", "ruff:F841")]
    k.write("src/m.py", "# a comment\n" * 10 + UTIL)
    # another function in its place (not the same body under a new name, which the finding would follow:
    # docs/protocol.md "Code that moves"), so the old one's code is gone
    k.write("src/tax.py", "def levy(y):\n    leftover = y - 3\n    return 7\n")
    got = ingest(k, ruff(k, "2.sarif", "F401,F841"))
    assert got["missing"] == [old] and got["counts"]["new"] == 1, got
    doc = json.loads(k.ok("export", "--sarif", "--ns", "ruff", "--current"))
    where = {r["properties"]["priors"]["id"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
             for r in doc["runs"][0]["results"]}
    assert old not in where
    m = {p["claim"]: p["id"] for p in priors(k) if p["scope_ref"] == "src/m.py"}
    assert where[m["`os` imported but unused"]] == 11 and where[m["`sys` imported but unused"]] == 12, where
    full = json.loads(k.ok("export", "--sarif", "--ns", "ruff"))
    assert [r["baselineState"] for r in full["runs"][0]["results"] if r["properties"]["priors"]["id"] == old] == ["absent"]
    plain = k("ingest-sarif", ruff(k, "3.sarif", "F401,F841"), "--ns", "ruff", "--snapshot", "src")
    assert f"1 not judged ({old}) — the code it points at is gone" in plain.out, plain
    assert "or a file an open finding stands on" in plain.out, plain  # (a renamed file too: newcomer pass 27ak)


def test_a_finding_reported_again_but_fixed_is_said_once_and_timeline_names_the_analyzer(keeper: Keeper) -> None:
    k = keeper
    k.write("src/m.py", UTIL)
    log = ruff(k, "1.sarif", "F401")
    ingest(k, log)
    k.write("empty.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "ruff"}}, "results": []}]}))
    assert ingest(k, "empty.sarif")["counts"]["fixed"] == 2
    plain = k("ingest-sarif", log, "--ns", "ruff", "--snapshot", "src")
    assert plain.code == 0 and "2 reported again but recorded fixed" in plain.out, plain
    assert "refused by the keeper's rules" not in plain.out and "Nothing new." not in plain.out, plain
    pid = priors(k)[0]["id"]
    shown = k.ok("show", pid)
    assert "analyzer: fixed" in shown and "agent: fixed" not in shown, shown


def test_a_result_past_the_end_of_its_file_is_placed_nowhere(keeper: Keeper) -> None:
    k = keeper
    k.write("src/a.py", "x = 1\n")
    k.write("eof.sarif", json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint"}}, "results": [
        {"ruleId": "R", "message": {"text": "far away"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/a.py"}, "region": {"startLine": 99}}}]}]}]}))
    got = ingest(k, "eof.sarif", "lint")
    assert [x["refused"] for x in got["refused"]] == ["UNKNOWN_SCOPE"] and got["counts"]["new"] == 0, got


def test_another_rules_result_beside_a_persons_decision_is_a_new_finding(keeper: Keeper) -> None:
    """Results of different rules are never one finding (docs/sarif.md): a person's wontfix on one
    analyzer result in a function does not turn another rule's result there into SETTLED_NEARBY,
    which an ingest could not answer (it cannot name `distinct_from`)."""
    k = keeper
    k.write("src/a.py", "def f(x):\n    unused_var = x * 2\n    return x\n")
    first = ingest(k, ruff_on(k, "1.sarif", "F841", "src"), "ruff", "src")
    assert first["counts"]["new"] == 1, first
    (pid,) = [p["id"] for p in priors(k)]
    k.ok("decide", pid, "wontfix", "--because", "kept for the debugger")
    k.write("src/a.py", "def f(x):\n    unused_var = x * 2\n    return x   # " + "y" * 100 + "\n")
    got = ingest(k, ruff_on(k, "2.sarif", "F841,E501", "src"), "ruff", "src")
    assert got["counts"]["new"] == 1 and got["counts"].get("refused", 0) == 0, got
    assert {p["rule"] for p in priors(k)} == {"ruff:F841", "ruff:E501"}
    k.ok("verify")


def test_a_result_a_person_made_obsolete_is_suppressed_not_refused(keeper: Keeper) -> None:
    """A person's `obsolete` settles a finding too: the same result reported again is counted and said
    as suppressed, like a wontfix, not listed as a refusal in raw JSON."""
    k = keeper
    k.write("src/a.py", "def f(x):\n    unused_var = x * 2\n    return x\n")
    ingest(k, ruff_on(k, "1.sarif", "F841", "src"), "ruff", "src")
    (pid,) = [p["id"] for p in priors(k)]
    k.ok("decide", pid, "obsolete", "--because", "the function goes away next week")
    got = ingest(k, ruff_on(k, "2.sarif", "F841", "src"), "ruff", "src")
    assert got["counts"]["suppressed"] == 1 and got["counts"]["refused"] == 0, got
    out = k.ok("ingest-sarif", ruff_on(k, "3.sarif", "F841", "src"), "--ns", "ruff", "--snapshot", "src")
    assert f"1 suppressed — a person settled it ({pid})" in out and "refused by the keeper's rules" not in out, out
