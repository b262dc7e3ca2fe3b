"""The pure SARIF rules (priors/core/sarif_in.py, sarif_out.py): the documented severity mapping,
paths from URIs, how an ingest dispositions old findings, and baselineState."""

from __future__ import annotations

import pytest

from priors.core.canonical import dumps, loads
from priors.core.errors import UsageError
from priors.core.fold import fold
from priors.core.sarif_identity import identities, plan_ingest, region_text
from priors.core.sarif_in import read_log, relative_path, severity_of
from priors.core.sarif_out import SarifFacts, SarifLog, baseline_state, fingerprint

# docs/sarif.md, "Severity": every row of the table, in order of precedence
SEVERITY_TABLE = [
    # (result level, result properties, rule, kind) -> severity
    ((None, {"security-severity": "9.8"}, None, None), "gate"),
    ((None, {"security-severity": 7.0}, None, None), "gate"),
    (("note", {"security-severity": "6.9"}, None, None), "major"),
    (("error", {"security-severity": "4.0"}, None, None), "major"),
    (("error", {"security-severity": "3.9"}, None, None), "minor"),
    ((None, None, {"id": "r", "properties": {"security-severity": "8.1"}}, None), "gate"),
    ((None, {"security-severity": "high"}, None, None), "minor"),  # not a number: next signal (level default)
    ((None, {"problem.severity": "error"}, None, None), "major"),
    (("error", {"problem.severity": "warning"}, None, None), "minor"),
    ((None, None, {"id": "r", "properties": {"problem.severity": "recommendation"}}, None), "minor"),
    (("error", None, None, None), "major"),
    (("warning", None, None, None), "minor"),
    (("note", None, None, None), "minor"),
    (("none", None, None, None), "minor"),
    ((None, None, {"id": "r", "defaultConfiguration": {"level": "error"}}, None), "major"),
    ((None, None, None, None), "minor"),  # SARIF's default level: warning
    ((None, None, None, "review"), "minor"),  # not `fail`: level none
]


@pytest.mark.parametrize("args,want", SEVERITY_TABLE)
def test_severity_mapping(args, want) -> None:
    assert severity_of(*args) == want


def test_relative_paths() -> None:
    roots = ["/repo", "/private/repo"]
    assert relative_path("file:///repo/src/a.py", roots) == "src/a.py"
    assert relative_path("file:///private/repo/src/a%20b.py", roots) == "src/a b.py"
    assert relative_path("file:///elsewhere/a.py", roots) == "file:///elsewhere/a.py"
    assert relative_path("./src/a.py", roots) == "src/a.py"
    assert relative_path("https://example.com/a.py", roots) == "https://example.com/a.py"
    assert relative_path("file:///C:/repo/a.py", ["C:/repo"]) == "a.py"
    assert relative_path("http://[::1/a.py", roots) == "http://[::1/a.py"


def log(*results, **run):
    return {"version": "2.1.0", "runs": [dict({"tool": {"driver": {"name": "Lint"}}, "results": list(results)}, **run)]}


def test_read_log_candidates() -> None:
    (f,) = read_log(log({"ruleId": "R1", "level": "error", "message": {"text": "  two\nlines "},
                         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py"},
                                                             "region": {"startLine": 3}}}]}), ["/r"])
    assert f.path == "runs[0].results[0]" and f.skipped is None
    assert f.candidate == {"type": "conclusion", "claim": "two lines", "severity": "major", "direction": "lint:R1",
                           "file": "a.py", "line": 3, "evidence": "a.py:3"}
    (c,) = read_log(log({"message": {"text": "x"}, "locations": [{"physicalLocation": {
        "artifactLocation": {"uri": "a.py"}, "region": {"startLine": 2},
        "contextRegion": {"startLine": 1, "snippet": {"text": "def f():\n    y = 1\n"}}}}]}), ["/r"])
    assert c.candidate["evidence"] == "a.py:2: def f(): y = 1"  # no region snippet: the context's
    (g,) = read_log(log({"message": {"text": "x"}}), ["/r"])
    assert g.candidate["scope_ref"] == "*" and "direction" not in g.candidate
    (h,) = read_log(log({"message": {"text": "x"}, "baselineState": "absent"}), ["/r"])
    assert h.candidate is None and "absent" in h.skipped
    (i,) = read_log(log({"message": {"text": "x"}, "suppressions": [{"kind": "external", "status": "rejected"}]}), ["/r"])
    assert i.candidate is not None  # a rejected suppression does not hide the result
    assert read_log({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": []}]}, ["/r"]) == []
    with pytest.raises(UsageError, match=r"runs\[0\]\.results: is missing"):  # SARIF: the tool did not run
        read_log({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}}]}, ["/r"])


def test_read_log_names_the_path() -> None:
    with pytest.raises(UsageError, match=r"runs\[0\]\.results\[1\]\.rule\.toolComponent\.index"):
        read_log(log({"message": {"text": "a"}}, {"message": {"text": "b"}, "rule": {"toolComponent": {"index": 2}}}), [])
    with pytest.raises(UsageError, match=r"runs\[0\]\.results\[0\]\.locations\[0\]\.physicalLocation\.artifactLocation\.index"):
        read_log(log({"message": {"text": "a"}, "locations": [{"physicalLocation": {"artifactLocation": {"index": 4}}}]}), [])


def test_messages_from_rule_strings_with_arguments() -> None:
    rule = {"id": "R", "messageStrings": {"m": {"text": "{0} is {1} {{literal}} {5}"}}}
    (f,) = read_log(log({"ruleIndex": 0, "message": {"id": "m", "arguments": ["x", "bad"]}},
                        tool={"driver": {"name": "T", "rules": [rule]}}), [])
    assert f.candidate["claim"] == "x is bad {literal} {5}"


def test_extension_rules_and_priors_own_directions() -> None:
    tool = {"driver": {"name": "priors"}, "extensions": [{"name": "pack", "rules": [{"id": "ext-rule"}]}]}
    (f,) = read_log(log({"message": {"text": "m"}, "rule": {"index": 0, "toolComponent": {"index": 0}}}, tool=tool), [])
    assert f.candidate["direction"] == "ext-rule"  # a log priors wrote: its rule ids are already directions


def item(pid, ref, state, direction=None, claim="c"):
    return {"id": pid, "scope_ref": ref, "scopeState": state, "direction": direction, "claim": claim}


def test_plan_ingest() -> None:
    verify = [item("P-1", "a#f", "unchanged", "t:R1"), item("P-2", "a#g", "changed", "t:R1"),
              item("P-3", "a#h", "unchanged", "t:R1"), item("P-4", "gone", "missing", "t:R1"),
              item("P-5", "a", "unchanged", None, "said once")]
    cands = [{"scope_ref": "a#f", "direction": "T:r1", "claim": "reworded"},  # the rule compares folded
             {"scope_ref": "a#g", "direction": "t:R1", "claim": "x"},
             None,
             {"scope_ref": "a#new", "direction": "t:R1", "claim": "y"},
             {"scope_ref": "a#new", "direction": "t:R1", "claim": "z"},
             {"scope_ref": "a", "direction": "t:R9", "claim": "said  once"}]
    plan = plan_ingest(verify, cands)
    assert plan.verdicts == [("P-1", "still-open"), ("P-2", "reaffirmed"), ("P-3", "fixed"), ("P-5", "still-open")]
    assert plan.fate == ["known", "known", "", "propose", "merged", "known"]
    assert plan.withheld == []
    # a result the snapshot could not place: nothing is judged fixed, the unreported carried as they stand
    verify.append(item("P-6", "a#k", "changed", "t:R1"))
    held = plan_ingest(verify, cands, withhold_fixed=True)
    assert held.verdicts == [("P-1", "still-open"), ("P-2", "reaffirmed"), ("P-3", "still-open"),
                             ("P-5", "still-open"), ("P-6", "stale")]
    assert held.withheld == ["P-3", "P-6"]


def test_plan_ingest_by_identity() -> None:
    """Priors with an identity are reported again by it alone; one recorded before identities (no
    fingerprint) still by its rule or claim."""
    verify = [dict(item("P-1", "m", "changed", "t:F401", "`os` unused"), rule="t:F401", fingerprint="text:a:0"),
              dict(item("P-2", "m", "changed", "t:F401", "`sys` unused"), rule="t:F401", fingerprint="text:b:0"),
              item("P-3", "n", "unchanged", "t:F401", "old one")]
    cands = [{"scope_ref": "m", "direction": "t:F401", "claim": "`sys` unused", "rule": "t:F401", "fingerprint": "text:b:0"},
             {"scope_ref": "m", "direction": "t:F401", "claim": "`re` unused", "rule": "t:F401", "fingerprint": "text:c:0"},
             {"scope_ref": "m", "direction": "t:F401", "claim": "`re` again", "rule": "t:F401", "fingerprint": "text:c:0"},
             {"scope_ref": "n", "direction": "t:F401", "claim": "reworded", "rule": "t:F401", "fingerprint": "text:d:0"}]
    plan = plan_ingest(verify, cands)
    assert plan.verdicts == [("P-1", "fixed"), ("P-2", "reaffirmed"), ("P-3", "still-open")]
    assert plan.fate == ["known", "propose", "merged", "known"]


def test_a_file_uri_on_another_host_is_not_ours() -> None:
    assert relative_path("file:///repo/src/a.py", ["/repo"]) == "src/a.py"
    assert relative_path("file://localhost/repo/src/a.py", ["/repo"]) == "src/a.py"
    assert relative_path("file://server/repo/src/a.py", ["/repo"]) == "file://server/repo/src/a.py"


def test_identities_follow_the_text_not_the_line() -> None:
    def found(rule, region, cand=None, given=None):
        (f,) = read_log(log({"ruleId": rule, "message": {"text": "m"}, "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "a.py"}, "region": region}}]}), [])
        f.given = given
        return f

    one = ["import os, sys", "x = eval(s)", "x = eval(s)"]
    moved = ["", "", "    import os, sys", "x = eval(s)", "", "x = eval(s)"]
    fs = [found("F401", {"startLine": 1, "startColumn": 8, "endColumn": 10}),
          found("F401", {"startLine": 1, "startColumn": 12, "endColumn": 15}),
          found("S307", {"startLine": 2, "startColumn": 5, "endColumn": 12}),
          found("S307", {"startLine": 3, "startColumn": 5, "endColumn": 12}),
          found("S307", {"startLine": 3, "startColumn": 5, "endColumn": 12}),  # the same place twice: one finding
          found("F401", {"startLine": 1}, given="tool:abc")]
    got = identities(fs, ["a.py"] * 6, lambda f: one)
    assert [g[0] for g in got] == ["lint:F401"] * 2 + ["lint:S307"] * 3 + ["lint:F401"]
    fps = [g[1] for g in got]
    assert fps[0] != fps[1]  # `os` and `sys` on one line: two results, two identities
    assert fps[2].endswith(":0") and fps[3].endswith(":1") and fps[3] == fps[4] and fps[2][:-2] == fps[3][:-2]
    assert fps[5] == "tool:abc"  # the analyzer's own fingerprint when it gives one
    shifted = [found("F401", {"startLine": 3, "startColumn": 12, "endColumn": 14}),
               found("S307", {"startLine": 6, "startColumn": 5, "endColumn": 12}),
               found("S307", {"startLine": 4, "startColumn": 5, "endColumn": 12})]
    again = identities(shifted, ["a.py"] * 3, lambda f: moved)
    assert [g[1] for g in again] == [fps[0], fps[3], fps[2]]  # lines moved, re-indented: the same identities
    assert identities(fs[:1], [None], lambda f: one) == [None]  # not placed: no identity
    assert region_text(one, (9, 0, 0, 0)) is None
    assert region_text(["ab", "cd", "ef"], (1, 2, 3, 2)) == "columns\nb cd e"  # the columns name it: only that
    assert region_text(["ab", "cd", "ef"], (1, 0, 2, 0)) == "ab cd"  # no columns: the whole lines
    # an edit elsewhere on the flagged line (a comment, `as e` dropped) leaves the columns' text as it was
    assert region_text(["except Exception as e:"], (1, 8, 1, 17)) == region_text(["except Exception:  # ok"], (1, 8, 1, 17))


def test_a_result_with_a_control_character_is_left_out_and_a_huge_placeholder_named() -> None:
    (f, g) = read_log(log({"message": {"text": "ok"}}, {"message": {"text": "bad \u001b[2J"}}), [])
    assert f.candidate is not None and g.candidate is None and g.skipped.startswith("holds a control")
    rule = {"id": "R", "messageStrings": {"m": {"text": "{" + "1" * 4301 + "}"}}}
    with pytest.raises(UsageError, match=r"runs\[0\]\.results\[0\]\.message\.id: message placeholder .* 4301 digits"):
        read_log(log({"ruleIndex": 0, "message": {"id": "m"}}, tool={"driver": {"name": "T", "rules": [rule]}}), [])


def sarif_log(st, records, ns, files, lines, version, current=False):
    """The log as an object: the records noted in order, the text made of its pieces parsed back."""
    facts = SarifFacts(st.priors)
    for r in records:
        facts.see(r)
    text = "".join(SarifLog(st, facts, ns, files, lines, version, current).pieces())
    doc = loads(text)
    assert dumps(doc) == text  # the pieces make the canonical text of the whole
    return doc


class P:
    def __init__(self, status, born):
        self.status, self.rec = status, {"born": born}


def test_baseline_state() -> None:
    assert baseline_state(P("open", "run-003"), "run-003", None) == "new"
    assert baseline_state(P("open", "run-001"), "run-003", "still-open") == "unchanged"
    assert baseline_state(P("open", "run-001"), "run-003", "reaffirmed") == "updated"
    assert baseline_state(P("fixed", "run-001"), "run-003", "fixed") == "absent"
    assert baseline_state(P("fixed", "run-001"), "run-003", None) is None  # fixed before: in neither
    assert baseline_state(P("wontfix", "run-001"), "run-003", None) == "unchanged"
    assert fingerprint("ns", "P-0001") == fingerprint("ns", "P-0001") != fingerprint("ns2", "P-0001")


def test_sarif_log_is_deterministic_and_leaves_lessons_out() -> None:
    facets = {"scope": "content-hash", "activation": "verify-phase", "obligation": "disposition-required",
              "authority": "advisory", "lifecycle": "stale-on-scope-change"}
    lesson = {"scope": "repo-wide", "activation": "run-start", "obligation": "inject-as-instruction",
              "authority": "advisory", "lifecycle": "only-by-supersession"}
    records = [
        {"t": "prior", "id": "P-0002", "ns": "b", "type": "conclusion", "facets": facets, "claim": "two",
         "born": "run-001", "scope_ref": "x.py#f", "scope_hash": "0" * 12, "evidence": "x.py:9"},
        {"t": "prior", "id": "P-0001", "ns": "a", "type": "conclusion", "facets": facets, "claim": "one",
         "born": "run-001", "scope_ref": "x.py", "scope_hash": "0" * 12, "evidence": "x.py:2: y = 1",
         "severity": "gate"},
        {"t": "prior", "id": "P-0003", "ns": "a", "type": "calibration", "facets": lesson, "claim": "a lesson",
         "born": "run-001"},
        {"t": "run", "action": "commit", "run": "run-001", "ns": "a", "summary": []},
    ]
    st = fold(records)
    files = {"x.py": (5, {"f": (3, 4)})}
    doc = sarif_log(st, records, None, files, {}, "9.9")
    assert [r["automationDetails"]["id"] for r in doc["runs"]] == ["priors/a/", "priors/b/"]
    (one,) = doc["runs"][0]["results"]
    assert one["level"] == "error" and one["baselineState"] == "new"
    assert one["locations"][0]["physicalLocation"]["region"] == {"startLine": 2}  # the evidence's line
    (two,) = doc["runs"][1]["results"]
    assert two["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "endLine": 4}
    assert two["ruleId"] == "priors/conclusion" and two["level"] == "warning" and two["baselineState"] == "unchanged"
    assert sarif_log(st, records, "b", files, {}, "9.9")["runs"] == doc["runs"][1:]


def test_suppressions_carry_the_persons_reason() -> None:
    facets = {"scope": "content-hash", "activation": "verify-phase", "obligation": "disposition-required",
              "authority": "advisory", "lifecycle": "stale-on-scope-change"}
    records = [{"t": "prior", "id": f"P-000{i}", "ns": "a", "type": "conclusion", "facets": facets, "claim": f"c{i}",
                "born": "run-001", "scope_ref": "*", "scope_hash": "0" * 12} for i in range(1, 6)]
    records.append({"t": "run", "action": "commit", "run": "run-001", "ns": "a", "summary": []})
    records += [{"t": "event", "id": "P-0001", "action": "decide", "to": "wontfix", "by": "human", "reason": "generated"},
                {"t": "event", "id": "P-0002", "action": "decide", "to": "accepted", "by": "human"},
                {"t": "event", "id": "P-0003", "action": "decide", "to": "obsolete", "by": "human", "reason": "gone"},
                {"t": "event", "id": "P-0004", "action": "decide", "to": "wontfix", "by": "human", "reason": "first"},
                {"t": "event", "id": "P-0004", "action": "decide", "to": "reopen", "by": "human", "reason": "again"},
                {"t": "run", "action": "commit", "run": "run-002", "ns": "a", "summary": []},
                {"t": "event", "id": "P-0005", "action": "disposition", "to": "stale", "run": "run-002", "by": "agent"}]
    doc = sarif_log(fold(records), records, None, {}, {"P-0001": 1}, "0")
    sup = {r["properties"]["priors"]["id"]: r.get("suppressions") for r in doc["runs"][0]["results"]}
    assert sup == {
        "P-0001": [{"kind": "external", "status": "accepted", "justification": "generated"}],
        "P-0002": [{"kind": "external", "status": "accepted"}],
        "P-0003": [{"kind": "external", "status": "accepted", "justification": "gone"}],
        "P-0004": None,  # reopened: open again, nothing suppressed
        "P-0005": None,
    }
    states = {r["properties"]["priors"]["id"]: r["baselineState"] for r in doc["runs"][0]["results"]}
    assert states["P-0005"] == "updated" and states["P-0001"] == "unchanged"
    loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc == {"artifactLocation": {"uri": ".priors/ledger.jsonl", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 1}}


def test_any_json_is_a_log_or_a_usage_error() -> None:
    """Hostile logs: whatever the JSON, read_log returns findings or raises UsageError — never a crash."""
    hypothesis = pytest.importorskip("hypothesis")
    s = hypothesis.strategies
    scalar = s.one_of(s.none(), s.booleans(), s.integers(-3, 3), s.text(max_size=5),
                      s.sampled_from(["2.1.0", "error", "pass", "absent", "inSource", "file:///r/a.py", "a.py"]))
    keys = s.sampled_from(["version", "runs", "tool", "driver", "name", "results", "message", "text", "id",
                           "arguments", "locations", "physicalLocation", "artifactLocation", "uri", "uriBaseId",
                           "index", "region", "startLine", "snippet", "ruleId", "ruleIndex", "rule", "rules",
                           "toolComponent", "extensions", "artifacts", "location", "originalUriBaseIds", "level",
                           "kind", "baselineState", "suppressions", "status", "properties", "security-severity",
                           "messageStrings", "defaultConfiguration", "relatedLocations", "contextRegion"])
    value = s.recursive(scalar, lambda inner: s.one_of(s.lists(inner, max_size=3),
                                                       s.dictionaries(keys, inner, max_size=5)), max_leaves=30)

    @hypothesis.settings(max_examples=120, deadline=None, database=None)
    @hypothesis.given(doc=s.one_of(value, s.fixed_dictionaries({"version": s.just("2.1.0"), "runs": s.lists(value, max_size=3)})))
    def check(doc) -> None:
        try:
            found = read_log(doc, ["/r"])
        except UsageError:
            return
        for f in found:
            assert (f.candidate is None) != (f.skipped is None)

    check()
