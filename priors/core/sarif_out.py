"""SARIF 2.1.0 out: the ledger's findings as a log code scanning and other viewers read.

Pure: the folded state, the ledger records and what the snapshot layer found in the files come in;
one SARIF object goes out, the same bytes for the same ledger and tree (sorted, no clock). The
mapping is documented in docs/sarif.md; tests/test_sarif.py validates it against the official schema.
"""

from __future__ import annotations

import hashlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Optional

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEDGER_URI = ".priors/ledger.jsonl"  # where a prior with no file to point at lives
SEVERITY_LEVEL = {"gate": "error", "major": "warning", "minor": "note"}
SUPPRESSED = ("wontfix", "accepted", "obsolete")  # a person's word: shown as suppressed, with the reason
# What the namespace's last committed run did to a prior, as SARIF's baselineState.
# `scope-missing`: the code it points at is gone from what the run looked at (deleted, or a renamed
# definition whose finding the analyzer now reports under the new name): its alert closes.
VERDICT_BASELINE = {"still-open": "unchanged", "reaffirmed": "updated", "stale": "updated", "fixed": "absent",
                    "scope-missing": "absent"}

# `files` below: path -> (number of lines, {qualname: (first line, last line)}) for the files that exist now.


def last_runs(records: List[Dict[str, Any]]) -> Dict[str, str]:
    """Each namespace's last committed run (the last `run` record naming it)."""
    out: Dict[str, str] = {}
    for r in records:
        if r.get("t") == "run" and r.get("action") == "commit" and isinstance(r.get("ns"), str) \
                and isinstance(r.get("run"), str):
            out[r["ns"]] = r["run"]
    return out


def run_verdicts(records: List[Dict[str, Any]], last: Dict[str, str]) -> Dict[str, str]:
    """prior id -> the agent verdict its namespace's last run gave it (`scope-missing` when that run
    recorded its scope missing)."""
    wanted = set(last.values())
    out: Dict[str, str] = {}
    for r in records:
        if r.get("t") != "event" or r.get("run") not in wanted or not isinstance(r.get("id"), str):
            continue
        if r.get("action") == "disposition" and isinstance(r.get("to"), str):
            out[r["id"]] = r["to"]
        elif r.get("action") == "scope-missing":
            out[r["id"]] = "scope-missing"
    return out


def reported_lines(records: List[Dict[str, Any]]) -> Dict[str, int]:
    """prior id -> the line an analyzer last reported it on (`line` on an ingest's verdict)."""
    out: Dict[str, int] = {}
    for r in records:
        line = r.get("line")
        if (r.get("t") == "event" and r.get("action") == "disposition" and isinstance(r.get("id"), str)
                and type(line) is int and 0 < line < 2 ** 31):
            out[r["id"]] = line
    return out


def reasons(records: List[Dict[str, Any]]) -> Dict[str, str]:
    """prior id -> the reason a person gave with their last decision on it (when they gave one)."""
    out: Dict[str, str] = {}
    for r in records:
        if r.get("t") == "event" and r.get("action") == "decide" and isinstance(r.get("id"), str):
            reason = r.get("reason")
            if isinstance(reason, str) and reason.strip():
                out[r["id"]] = reason
            else:
                out.pop(r["id"], None)
    return out


def baseline_state(p: Any, last: Optional[str], verdict: Optional[str]) -> Optional[str]:
    """new / unchanged / updated / absent against the namespace's last committed run — or None: a
    prior fixed before that run is in neither the baseline nor the current state, and is left out."""
    born = p.rec.get("born")
    if last is not None and born == last:
        return "new"
    if verdict in VERDICT_BASELINE:
        return VERDICT_BASELINE[verdict]
    if p.status == "fixed":
        return None
    return "unchanged"


def fingerprint(ns: str, pid: str) -> str:
    """A prior's identity for code scanning: stable across commits, line moves and rewordings."""
    return hashlib.sha256(f"priors\0{ns}\0{pid}".encode("utf-8")).hexdigest()[:16]


def rule_id(rec: Dict[str, Any]) -> str:
    """The result's rule: an analyzer's (`rule`, kept by `ingest-sarif`), else the direction, else the type."""
    r = rec.get("rule")
    if isinstance(r, str) and r.strip():
        return r
    d = rec.get("direction")
    return d if isinstance(d, str) and d.strip() else f"priors/{rec.get('type', 'finding')}"


def sarif_log(st: Any, records: List[Dict[str, Any]], ns_filter: Optional[str], files: Dict[str, Any],
              ledger_lines: Dict[str, int], version: str, current_only: bool = False) -> Dict[str, Any]:
    """The SARIF log: one run per namespace that holds findings, each finding a result.

    `files`: what the snapshot layer read from the tree now (see above); `ledger_lines`: prior id
    -> its line in the ledger, the location of a prior whose scope is not a file (`*`, a folder,
    repo-wide). `current_only`: leave out what the last run fixed (`absent`), for viewers that show
    every result they receive."""
    last = last_runs(records)
    verdicts = run_verdicts(records, last)
    why = reasons(records)
    now = reported_lines(records)
    by_ns: Dict[str, List[Any]] = {}
    for p in st.priors.values():
        ns = p.ns
        if not isinstance(ns, str) or (ns_filter is not None and ns != ns_filter):
            continue
        if p.facet("activation") != "verify-phase":
            continue  # lessons and review floors are not findings; `priors export` moves lessons
        by_ns.setdefault(ns, [])
        if not p.redacted and p.status != "redacted":
            by_ns[ns].append(p)
    runs = []
    for ns in sorted(by_ns):
        results: List[Dict[str, Any]] = []
        rules: Dict[str, int] = {}
        for p in sorted(by_ns[ns], key=lambda q: (len(q.id), q.id)):
            state = baseline_state(p, last.get(ns), verdicts.get(p.id))
            if state is None or (current_only and state == "absent"):
                continue
            rid = rule_id(p.rec)
            rules.setdefault(rid, 0)
            results.append(_result(p, ns, rid, state, why.get(p.id), files, ledger_lines, now.get(p.id)))
        order = sorted(rules)
        index = {r: i for i, r in enumerate(order)}
        for res in results:
            res["ruleIndex"] = index[res["ruleId"]]
        run: Dict[str, Any] = {
            "automationDetails": {"id": f"priors/{ns}/"},
            "results": results,
            "tool": {"driver": {"name": "priors", "version": version,
                                "rules": [{"id": r, "shortDescription": {"text": r}} for r in order]}},
        }
        if ns in last:
            run["properties"] = {"baselineRun": last[ns]}
        runs.append(run)
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": runs}


def _result(p: Any, ns: str, rid: str, state: str, reason: Optional[str], files: Dict[str, Any],
            ledger_lines: Dict[str, int], line: Optional[int] = None) -> Dict[str, Any]:
    rec = p.rec
    sev = rec.get("severity")
    fixed = p.status == "fixed"
    res: Dict[str, Any] = {
        "ruleId": rid,
        "kind": "pass" if fixed else "fail",
        "level": "none" if fixed else SEVERITY_LEVEL.get(sev, "warning"),
        "message": {"text": p.claim or rid},
        "baselineState": state,
        "locations": [_location(p.id, rec, files, ledger_lines, line)],
        "partialFingerprints": {"primaryLocationLineHash": fingerprint(ns, p.id) + ":1",
                                "priorsPrior/v1": f"{ns}/{p.id}"},
        "properties": _props(p, ns),
    }
    if p.status in SUPPRESSED:
        sup: Dict[str, Any] = {"kind": "external", "status": "accepted"}
        if reason is not None:
            sup["justification"] = reason
        res["suppressions"] = [sup]
    return res


def _props(p: Any, ns: str) -> Dict[str, Any]:
    rec = p.rec
    out: Dict[str, Any] = {"id": p.id, "ns": ns, "status": p.status, "born": rec.get("born"), "type": rec.get("type")}
    for key in ("scope_ref", "severity", "evidence", "direction", "rule", "fingerprint"):
        if rec.get(key) is not None:
            out[key] = rec[key]
    return {"priors": {k: v for k, v in out.items() if v is not None}}


def _location(pid: str, rec: Dict[str, Any], files: Dict[str, Any], ledger_lines: Dict[str, int],
              line: Optional[int] = None) -> Dict[str, Any]:
    """Where code scanning shows the prior: its definition's span; in its file, the line an analyzer
    last reported it on (`line`), else the line its evidence names (at most the file's last line),
    else the first — or, with no file to point at, its own line in the ledger."""
    ref = rec.get("scope_ref")
    if not isinstance(ref, str) or ref == "*" or ref.endswith("/") or ref.startswith("#"):
        return {"physicalLocation": {"artifactLocation": {"uri": LEDGER_URI, "uriBaseId": "%SRCROOT%"},
                                     "region": {"startLine": ledger_lines.get(pid, 1)}}}
    file, _, name = ref.partition("#")
    known = files.get(file)
    region: Dict[str, int] = {"startLine": 1}
    if known is not None:
        lines, spans = known
        if name and name in spans:
            first, last = spans[name]
            region = {"startLine": first, "endLine": last}
        else:
            at = line if line is not None else _evidence_line(rec.get("evidence"), file)
            if at is not None:
                region = {"startLine": max(1, min(at, lines))}
    loc: Dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": _uri(file), "uriBaseId": "%SRCROOT%"},
                                                "region": region}}
    if name:
        loc["logicalLocations"] = [{"fullyQualifiedName": name}]
    return loc


def _evidence_line(evidence: Any, file: str) -> Optional[int]:
    """`src/a.py:41` or `src/a.py:41: …` at the start of the evidence, for this file → 41."""
    if not isinstance(evidence, str) or not evidence.startswith(file + ":"):
        return None
    digits = ""
    for ch in evidence[len(file) + 1:]:
        if not ch.isdigit() or not ch.isascii():
            break
        digits += ch
    return int(digits) if digits and 0 < int(digits) < 2 ** 31 else None


def _uri(path: str) -> str:
    """A relative path as a relative URI reference (RFC 3986): spaces, `%`, `?`, `#` and the like
    percent-encoded, slashes kept — and a `:` in the first segment encoded too, or a file named
    `javascript:alert(1)` would read as a URI with a scheme, not a path in the repository."""
    from urllib.parse import quote

    first, slash, rest = path.partition("/")
    return quote(first, safe="-._~!$&'()*+,;=@") + slash + quote(rest, safe="/-._~!$&'()*+,;=:@")
