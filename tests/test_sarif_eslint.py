"""A second real analyzer through `ingest-sarif`: ESLint 9 with the `@microsoft/eslint-formatter-sarif`
formatter, both from the npm registry (tests/eslint/package.json; `.ci/run` installs them when npm is
here, as it does the Pi extension's), over a small JavaScript tree: ingest, fix one result, wontfix
another and move it ten lines down, and the export checked against the SARIF 2.1.0 schema."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any, Dict, List

import pytest

from conftest import REPO, Keeper
from test_sarif import validate

MODULES = REPO / "tests" / "eslint" / "node_modules"
ESLINT = MODULES / "eslint" / "bin" / "eslint.js"
FORMATTER = MODULES / "@microsoft" / "eslint-formatter-sarif" / "sarif.js"
NODE = shutil.which("node")


def _why_not() -> str:
    if NODE is None or shutil.which("npm") is None:
        return "node and npm are not installed, so ESLint cannot be (it comes from the npm registry)"
    if not (ESLINT.is_file() and FORMATTER.is_file()):
        return ("ESLint is not installed: `cd tests/eslint && npm install --no-package-lock` (.ci/run does it "
                "when npm is here)")
    return ""


pytestmark = pytest.mark.skipif(bool(_why_not()), reason=_why_not() or "-")

CONFIG = '''export default [
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    rules: { "no-unused-vars": "error", "no-eval": "error", "eqeqeq": "warn", "no-var": "warn", "prefer-const": "warn" },
  },
];
'''

APP = '''import fs from "fs";
import path from "path";

export function load(name) {
  var x = eval(name);
  if (x == null) {
    return fs.readFileSync(name);
  }
  return x;
}

export function size(list) {
  let n = 0;
  for (const item of list) {
    if (item == undefined) continue;
    n += 1;
  }
  let unused = 3;
  return n;
}
'''
UTIL = '''export const twice = (v) => {
  let out = v * 2;
  return out;
};
'''


def eslint(k: Keeper, name: str) -> str:
    assert NODE is not None
    proc = subprocess.run([NODE, str(ESLINT), "--format", str(FORMATTER), "src"], cwd=str(k.root),
                          capture_output=True, text=True, encoding="utf-8")
    assert proc.returncode in (0, 1), proc.stderr  # 1: ESLint found errors
    doc = json.loads(proc.stdout)
    assert doc["runs"][0]["tool"]["driver"]["name"] == "ESLint"
    k.write(name, proc.stdout)
    return name


def by_rule(k: Keeper) -> Dict[tuple, str]:
    return {(p["scope_ref"], p["rule"], p["claim"]): p["id"] for p in k.ledger() if p.get("t") == "prior"}


def verdicts(k: Keeper, run: str) -> List[str]:
    return sorted(r["to"] for r in k.ledger() if r.get("action") == "disposition" and r.get("run") == run)


def test_eslint_ingest_fix_one_wontfix_one_move_it_and_export(keeper: Keeper) -> None:
    k = keeper
    k.write("eslint.config.mjs", CONFIG)
    k.write("src/app.js", APP)
    k.write("src/util.mjs", UTIL)
    log = eslint(k, "1.sarif")
    n = len(json.loads(k.read(log))["runs"][0]["results"])
    r = k("ingest-sarif", log, "--ns", "eslint", "--snapshot", "src", "--json")
    assert r.code == 0, r
    assert (r.json["counts"]["new"], r.json["counts"]["merged"], r.json["refused"]) == (n, 0, []), r.json
    ids = by_rule(k)
    assert len(ids) == n == 8
    eqeq_size = ids[("src/app.js#size", "eslint:eqeqeq", "Expected '===' and instead saw '=='.")]
    no_eval = ids[("src/app.js#load", "eslint:no-eval", "eval can be harmful.")]
    unused_path = ids[("src/app.js", "eslint:no-unused-vars", "'path' is defined but never used.")]
    # two results of one rule in one function are two findings (prefer-const / no-unused-vars on `unused`)
    assert ("src/app.js#size", "eslint:prefer-const", "'unused' is never reassigned. Use 'const' instead.") in ids
    assert ("src/app.js#load", "eslint:eqeqeq", "Expected '===' and instead saw '=='.") in ids

    # fix one result: exactly that one is fixed, the rest carried
    k.write("src/app.js", APP.replace("item == undefined", "item === undefined"))
    r = k("ingest-sarif", eslint(k, "2.sarif"), "--ns", "eslint", "--snapshot", "src", "--json")
    assert r.code == 0, r
    c = r.json["counts"]
    assert (c["fixed"], c["new"], c["known"], c["carried"] + c["reaffirmed"]) == (1, 0, n - 1, n - 1), c
    fixed = [x["id"] for x in k.ledger() if x.get("action") == "disposition" and x.get("run") == r.json["run"]
             and x.get("to") == "fixed"]
    assert fixed == [eqeq_size]

    # a person's wontfix on one (in a function) and on a file-level one; then the code moves ten lines down
    k.ok("decide", no_eval, "wontfix", "--because", "the loader evaluates trusted config only")
    k.ok("decide", unused_path, "wontfix", "--because", "kept for the next change")
    moved = APP.replace("item == undefined", "item === undefined").replace(
        "export function load(name) {\n", "export function load(name) {\n" + "  // the loader's contract\n" * 10)
    k.write("src/app.js", moved)
    assert moved.split("\n").index("  var x = eval(name);") == APP.split("\n").index("  var x = eval(name);") + 10
    r = k("ingest-sarif", eslint(k, "3.sarif"), "--ns", "eslint", "--snapshot", "src", "--json")
    assert r.code == 0, r
    c = r.json["counts"]
    assert (c["suppressed"], c["new"], c["fixed"]) == (2, 0, 0), c
    assert sorted((x["refused"], x["of"]) for x in r.json["refused"]) == sorted(
        [("RERAISE", no_eval), ("RERAISE", unused_path)])
    assert verdicts(k, r.json["run"]) == ["reaffirmed", "reaffirmed", "still-open", "still-open", "still-open"]
    k.ok("verify")

    # the export: valid against the official schema, each result under its ESLint rule
    doc = json.loads(k.ok("export", "--sarif", "--ns", "eslint"))
    validate(doc)
    results: List[Dict[str, Any]] = doc["runs"][0]["results"]
    rules = {res["properties"]["priors"]["id"]: res["ruleId"] for res in results}
    assert rules[no_eval] == "eslint:no-eval" and rules[unused_path] == "eslint:no-unused-vars"
    assert eqeq_size not in rules  # fixed before the last run: in neither baseline nor current
    suppressed = {res["properties"]["priors"]["id"] for res in results if "suppressions" in res}
    assert suppressed == {no_eval, unused_path}


def test_eslint_an_edit_on_the_flagged_line_fixes_only_what_it_fixes(keeper: Keeper) -> None:
    """`} catch (e) {}` → `} catch (e) { /* ignore */ }` fixes no-empty; the unused `e` (its columns
    name `e` alone) is the same finding, and a person's wontfix on it still holds."""
    k = keeper
    k.write("eslint.config.mjs", CONFIG.replace('"no-eval": "error",', '"no-eval": "error", "no-empty": "error",'))
    code = "export function read(f) {\n  try {\n    return f();\n  } catch (e) {}\n}\n"
    k.write("src/r.js", code)
    r = k("ingest-sarif", eslint(k, "1.sarif"), "--ns", "eslint", "--snapshot", "src", "--json")
    assert r.code == 0 and r.json["counts"]["new"] == 2, r
    unused = by_rule(k)[("src/r.js#read", "eslint:no-unused-vars", "'e' is defined but never used.")]
    k.ok("decide", unused, "wontfix", "--because", "the error is expected")
    k.write("src/r.js", code.replace("catch (e) {}", "catch (e) { /* ignore */ }"))
    r = k("ingest-sarif", eslint(k, "2.sarif"), "--ns", "eslint", "--snapshot", "src", "--json")
    assert r.code == 0, r
    c = r.json["counts"]
    assert (c["fixed"], c["new"], c["suppressed"]) == (1, 0, 1), c
    assert [x["of"] for x in r.json["refused"]] == [unused]
