"""SARIF 2.1.0 out: the ledger's findings as a log code scanning and other viewers read.

Pure: the folded state, the ledger records and what the snapshot layer found in the files come in;
one SARIF object goes out, the same bytes for the same ledger and tree (sorted, no clock). The
mapping is documented in docs/sarif.md; tests/test_sarif.py validates it against the official schema.
"""

from __future__ import annotations

import hashlib
from array import array

from priors.core.canonical import array_pieces, dumps
from priors.core.selection import each_record

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, Iterator, List, Optional

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


class SarifFacts:
    """What the log reads of the ledger's records rather than of the fold, noted as they pass (`see`, in
    ledger order) so that none is held — `export --sarif` at 100k priors held every record, ~800 MB:
    each namespace's last committed run (the last `run` record naming it); the verdicts every run gave
    (`disposition`, or `scope-missing` when a run recorded a scope missing), as ids and verdicts side by
    side, to be read for the last runs once the last runs are known; the line an analyzer last reported
    each prior on (`line` on an ingest's verdict); the reason of a person's last decision on each (when
    they gave one); and the line of the ledger that first defines each prior (the location of one with
    no file to point at). `priors`: the fold's priors, whose id strings are held rather than each line's."""

    __slots__ = ("priors", "last", "runs", "seen", "words", "reasons", "reported", "lines", "count")

    def __init__(self, priors: Dict[str, Any]) -> None:
        self.priors = priors
        self.last: Dict[str, str] = {}  # namespace -> its last committed run
        self.runs: Dict[str, Any] = {}  # run -> ([prior id], [verdict], array of each verdict's place)
        self.seen = 0  # verdicts noted
        self.words: Dict[str, str] = {}  # one string a verdict word, not one a line
        self.reasons: Dict[str, str] = {}
        self.reported: Dict[str, int] = {}
        self.lines: Dict[str, int] = {}
        self.count = 0  # records seen (a record's line, in a ledger with one record a line)

    def see(self, r: Dict[str, Any]) -> None:
        """Note what the log reads of the next record."""
        self.count += 1
        t = r.get("t")
        if t == "event":
            pid, action = r.get("id"), r.get("action")
            if type(pid) is not str:
                return
            if action == "disposition":
                line, to = r.get("line"), r.get("to")
                if type(line) is int and 0 < line < 2 ** 31:
                    self.reported[self._id(pid)] = line
                if isinstance(to, str):
                    self._verdict(r.get("run"), pid, to)
            elif action == "scope-missing":
                self._verdict(r.get("run"), pid, "scope-missing")
            elif action == "decide":
                reason = r.get("reason")
                if isinstance(reason, str) and reason.strip():
                    self.reasons[self._id(pid)] = reason
                else:
                    self.reasons.pop(pid, None)
        elif t == "run":
            if r.get("action") == "commit" and isinstance(r.get("ns"), str) and isinstance(r.get("run"), str):
                self.last[r["ns"]] = r["run"]
        elif t == "prior":
            pid = r.get("id")
            if type(pid) is str and pid not in self.lines:
                self.lines[self._id(pid)] = self.count

    def _id(self, pid: str) -> str:
        p = self.priors.get(pid)
        return pid if p is None else p.id

    def _verdict(self, run: Any, pid: str, to: str) -> None:
        if type(run) is not str:
            return  # (never a last run)
        held: Any = self.runs.get(run)
        if held is None:
            held = self.runs[run] = ([], [], array("q"))
        held[0].append(self._id(pid))
        held[1].append(self.words.setdefault(to, to))
        held[2].append(self.seen)
        self.seen += 1

    def verdicts(self) -> Dict[str, str]:
        """prior id -> the verdict its namespace's last run gave it (the last of them, in ledger order)."""
        noted = [self.runs[run] for run in sorted(set(self.last.values())) if run in self.runs]
        if len(noted) == 1:
            return dict(zip(noted[0][0], noted[0][1]))
        out: Dict[str, str] = {}
        for _at, pid, to in sorted((at, pid, to) for ids, tos, ats in noted for pid, to, at in zip(ids, tos, ats)):
            out[pid] = to
        return out


def baseline_state(p: Any, last: Optional[str], verdict: Optional[str], rec: Optional[Dict[str, Any]] = None
                   ) -> Optional[str]:
    """new / unchanged / updated / absent against the namespace's last committed run — or None: a
    prior fixed before that run is in neither the baseline nor the current state, and is left out.
    `rec`: the prior's record (`p.rec` when not given)."""
    born = (p.rec if rec is None else rec).get("born")
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


class SarifLog:
    """The SARIF log: one run per namespace that holds findings, each finding a result — as canonical JSON
    text made a piece at a time (`pieces`: the results of a few hundred findings each), never held
    whole; `results` counts those written so far.

    `files`: what the snapshot layer read from the tree now (see above); `ledger_lines`: prior id
    -> its line in the ledger, the location of a prior whose scope is not a file (`*`, a folder,
    repo-wide). `current_only`: leave out what the last run fixed (`absent`), for viewers that show
    every result they receive. Each finding's record is read back a batch at a time and let go
    (`selection.each_record`), twice: once for its rule (the run's rules are indexed before its
    results), once for its result."""

    def __init__(self, st: Any, facts: SarifFacts, ns_filter: Optional[str], files: Dict[str, Any],
                 ledger_lines: Dict[str, int], version: str, current_only: bool = False) -> None:
        self.st, self.facts, self.ns_filter, self.files = st, facts, ns_filter, files
        self.ledger_lines, self.version, self.current_only = ledger_lines, version, current_only
        self.results = 0

    def pieces(self) -> Iterator[str]:
        """The log's text (without a final line feed): the same text as the canonical JSON of the whole
        object, key order and all."""
        facts, ns_filter = self.facts, self.ns_filter
        by_ns: Dict[str, List[Any]] = {}
        for p in self.st.priors.values():
            ns = p.ns
            if not isinstance(ns, str) or (ns_filter is not None and ns != ns_filter):
                continue
            if p.facet("activation") != "verify-phase":
                continue  # lessons and review floors are not findings; `priors export` moves lessons
            by_ns.setdefault(ns, [])
            if not p.redacted and p.status != "redacted":
                by_ns[ns].append(p)
        verdicts = facts.verdicts()
        yield '{"$schema":' + dumps(SCHEMA_URI) + ',"runs":['
        for i, ns in enumerate(sorted(by_ns)):
            yield from self._run(ns, sorted(by_ns[ns], key=lambda q: (len(q.id), q.id)), verdicts, i > 0)
        yield '],"version":"2.1.0"}'

    def _run(self, ns: str, found: List[Any], verdicts: Dict[str, str], comma: bool) -> Iterator[str]:
        last = self.facts.last.get(ns)
        shown: List[Any] = []  # (prior, its baseline state, its rule) of each result, in order
        rules: Dict[str, int] = {}
        for p, rec in each_record(found):
            state = baseline_state(p, last, verdicts.get(p.id), rec)
            if state is None or (self.current_only and state == "absent"):
                continue
            rid = rule_id(rec)
            shown.append((p, state, rules.setdefault(rid, len(rules))))
        order = sorted(rules)
        index = {r: i for i, r in enumerate(order)}
        renumber = [index[r] for r in rules]  # (rules numbered as first met -> their place in `order`)
        yield ("," if comma else "") + '{"automationDetails":' + dumps({"id": f"priors/{ns}/"})
        if last is not None:
            yield ',"properties":' + dumps({"baselineRun": last})
        yield ',"results":['
        why, now, files, lines = self.facts.reasons, self.facts.reported, self.files, self.ledger_lines

        def results() -> Iterator[Dict[str, Any]]:
            for (p, rec), (_p, state, k) in zip(each_record(p for p, _s, _k in shown), shown):
                res = _result(p, rec, ns, rule_id(rec), state, why.get(p.id), files, lines, now.get(p.id))
                res["ruleIndex"] = renumber[k]
                yield res

        for text, n in array_pieces(results()):
            self.results += n
            yield text
        yield '],"tool":' + dumps({"driver": {"name": "priors", "version": self.version,
                                             "rules": [{"id": r, "shortDescription": {"text": r}} for r in order]}}) + "}"


def _result(p: Any, rec: Dict[str, Any], ns: str, rid: str, state: str, reason: Optional[str], files: Dict[str, Any],
            ledger_lines: Dict[str, int], line: Optional[int] = None) -> Dict[str, Any]:
    sev = rec.get("severity")
    fixed = p.status == "fixed"
    res: Dict[str, Any] = {
        "ruleId": rid,
        "kind": "pass" if fixed else "fail",
        "level": "none" if fixed else SEVERITY_LEVEL.get(sev, "warning") if isinstance(sev, str) else "warning",
        "message": {"text": _claim(rec) or rid},
        "baselineState": state,
        "locations": [_location(p.id, rec, files, ledger_lines, line)],
        "partialFingerprints": {"primaryLocationLineHash": fingerprint(ns, p.id) + ":1",
                                "priorsPrior/v1": f"{ns}/{p.id}"},
        "properties": _props(p, rec, ns),
    }
    if p.status in SUPPRESSED:
        sup: Dict[str, Any] = {"kind": "external", "status": "accepted"}
        if reason is not None:
            sup["justification"] = reason
        res["suppressions"] = [sup]
    return res


def _claim(rec: Dict[str, Any]) -> str:
    c = rec.get("claim")
    return c if isinstance(c, str) else ""


def _props(p: Any, rec: Dict[str, Any], ns: str) -> Dict[str, Any]:
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
