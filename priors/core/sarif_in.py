"""SARIF 2.1.0 in: the shape an analyzer's log must have, and each result as a keeper candidate.

Pure: the log arrives parsed, the target root as a string. Every problem names its JSON path
(`runs[0].results[3].locations[0]`) so a person can find it in a file of thousands of results; the
whole log is checked before the keeper opens a run, so a bad file never leaves a run half-made.
The severity mapping is documented in docs/sarif.md and tested in tests/test_sarif_unit.py.
"""

from __future__ import annotations

import re

from priors.core.canonical import dumps, normalize, sha12
from priors.core.controls import control_problem
from priors.core.errors import UsageError
from priors.core.plain import Plain
from priors.core.similarity import norm_direction

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

LEVELS = ("none", "note", "warning", "error")
KINDS = ("notApplicable", "pass", "fail", "review", "open", "informational")
BASELINE_STATES = ("new", "unchanged", "updated", "absent")
SUPPRESSION_KINDS = ("inSource", "external")
# A result of these kinds says "no problem here": it is read, never proposed (and it does not count as
# the analyzer reporting the issue again).
NOT_FINDINGS = ("pass", "notApplicable")

# Our severities from SARIF's signals, first match wins (docs/sarif.md, "Severity"):
LEVEL_SEVERITY = {"error": "major", "warning": "minor", "note": "minor", "none": "minor"}
PROBLEM_SEVERITY = {"error": "major", "warning": "minor", "recommendation": "minor"}
SECURITY_GATE = 7.0  # GitHub's "high" and "critical" (security-severity 7.0 and above)
SECURITY_MAJOR = 4.0  # GitHub's "medium"
MAX_SNIPPET = 400  # characters of an analyzer's snippet kept as evidence
PRIORS_TOOL = "priors"  # a log priors wrote itself: its rule ids are already directions


MAX_PLACEHOLDER = 9  # digits of a `{N}` message placeholder: no log has a billion arguments


class SarifFinding(Plain):
    """One result: where it is in the log, the candidate it becomes, or why it is skipped — and what
    its identity is made of (docs/sarif.md, "Identity"): `rule` (the direction, else the tool's word),
    `given` (the analyzer's own fingerprint, or a priors log's recorded identity) and `region`
    ((startLine, startColumn, endLine, endColumn), 0 where the log gives none) for the rest."""

    __slots__ = ("path", "candidate", "skipped", "rule", "given", "region")

    def __init__(self, path: str, candidate: Optional[Dict[str, Any]], skipped: Optional[str] = None,
                 rule: str = "", given: Optional[str] = None, region: Optional[Tuple[int, int, int, int]] = None) -> None:
        self.path, self.candidate, self.skipped = path, candidate, skipped
        self.rule, self.given, self.region = rule, given, region


class _Bad(Exception):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(path, problem)
        self.path, self.problem = path, problem


def read_log(doc: Any, roots: Sequence[str]) -> List[SarifFinding]:
    """Every result of a parsed SARIF log, in order, as findings — or a UsageError naming the JSON path.

    `roots`: the target root as absolute POSIX paths (as given and resolved); `file:` URIs under one
    of them become paths relative to the target, the form the snapshot's refs take."""
    try:
        return _read_log(doc, roots)
    except _Bad as bad:
        raise UsageError(f"{bad.path}: {bad.problem}") from None


def _read_log(doc: Any, roots: Sequence[str]) -> List[SarifFinding]:
    _obj(doc, "(the log)")
    if doc.get("version") != "2.1.0":
        raise _Bad("version", f"must be \"2.1.0\", not {_show(doc.get('version'))}")
    runs = doc.get("runs")
    if not isinstance(runs, list):
        raise _Bad("runs", "must be an array of runs")
    if not runs:
        raise _Bad("runs", "is empty: the analyzer reported no run, so its silence proves nothing fixed")
    out: List[SarifFinding] = []
    for i, run in enumerate(runs):
        out.extend(_read_run(run, f"runs[{i}]", roots))
    return out


def _read_run(run: Any, at: str, roots: Sequence[str]) -> List[SarifFinding]:
    _obj(run, at)
    tool = _obj(run.get("tool"), at + ".tool")
    driver = _obj(tool.get("driver"), at + ".tool.driver")
    name = driver.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Bad(at + ".tool.driver.name", "must be the tool's name (a non-empty string)")
    components = [_rules(driver, at + ".tool.driver")]
    exts = _arr(tool.get("extensions"), at + ".tool.extensions")
    for j, ext in enumerate(exts):
        components.append(_rules(_obj(ext, f"{at}.tool.extensions[{j}]"), f"{at}.tool.extensions[{j}]"))
    artifacts = _arr(run.get("artifacts"), at + ".artifacts")
    for j, art in enumerate(artifacts):
        _obj(art, f"{at}.artifacts[{j}]")
        if art.get("location") is not None:
            _artifact_location(art["location"], f"{at}.artifacts[{j}].location")
    bases = run.get("originalUriBaseIds")
    if bases is not None:
        _obj(bases, at + ".originalUriBaseIds")
        for key, val in bases.items():
            _artifact_location(val, f"{at}.originalUriBaseIds.{key}")
    for j, inv in enumerate(_arr(run.get("invocations"), at + ".invocations")):
        _obj(inv, f"{at}.invocations[{j}]")
        if inv.get("executionSuccessful") is False:
            raise _Bad(f"{at}.invocations[{j}].executionSuccessful",
                       "is false: the analyzer says its run failed, so its silence proves nothing fixed")
    ctx = _RunCtx(name.strip(), components, artifacts, bases or {}, roots)
    results = run.get("results")
    if results is None:  # SARIF: an absent `results` means the tool did not run or failed
        raise _Bad(at + ".results", "is missing: the analyzer did not produce results, so its silence proves nothing fixed")
    if not isinstance(results, list):
        raise _Bad(at + ".results", "must be an array of results")
    return [_read_result(r, f"{at}.results[{k}]", ctx) for k, r in enumerate(results)]


class _RunCtx(Plain):
    __slots__ = ("tool", "components", "artifacts", "bases", "roots")

    def __init__(self, tool: str, components: List[List[Dict[str, Any]]], artifacts: List[Any],
                 bases: Dict[str, Any], roots: Sequence[str]) -> None:
        self.tool, self.components, self.artifacts, self.bases, self.roots = tool, components, artifacts, bases, roots


def _rules(component: Dict[str, Any], at: str) -> List[Dict[str, Any]]:
    rules = _arr(component.get("rules"), at + ".rules")
    for j, rule in enumerate(rules):
        _obj(rule, f"{at}.rules[{j}]")
        if not isinstance(rule.get("id"), str):
            raise _Bad(f"{at}.rules[{j}].id", "a rule needs an `id` string")
        props = rule.get("properties")
        if props is not None:
            _obj(props, f"{at}.rules[{j}].properties")
        dc = rule.get("defaultConfiguration")
        if dc is not None:
            _obj(dc, f"{at}.rules[{j}].defaultConfiguration")
            _enum(dc.get("level"), LEVELS, f"{at}.rules[{j}].defaultConfiguration.level")
    return rules


def _read_result(res: Any, at: str, ctx: _RunCtx) -> SarifFinding:
    _obj(res, at)
    rule, rule_id = _rule_of(res, at, ctx)
    level = _enum(res.get("level"), LEVELS, at + ".level")
    kind = _enum(res.get("kind"), KINDS, at + ".kind")
    base = _enum(res.get("baselineState"), BASELINE_STATES, at + ".baselineState")
    props = res.get("properties")
    if props is not None:
        _obj(props, at + ".properties")
    claim = _message(res.get("message"), at + ".message", rule)
    where = _where(res, at, ctx)
    given = _given_fingerprint(res, at, ctx)
    sups = _arr(res.get("suppressions"), at + ".suppressions")
    for j, sup in enumerate(sups):
        _obj(sup, f"{at}.suppressions[{j}]")
        if sup.get("kind") not in SUPPRESSION_KINDS:
            raise _Bad(f"{at}.suppressions[{j}].kind", f"must be one of {', '.join(SUPPRESSION_KINDS)}")
        _enum(sup.get("status"), ("accepted", "underReview", "rejected"), f"{at}.suppressions[{j}].status")
    if kind in NOT_FINDINGS:
        return SarifFinding(at, None, f"kind {kind}: not a problem")
    if base == "absent":
        return SarifFinding(at, None, "baselineState absent: the tool says it is gone")
    if any(s.get("status") in (None, "accepted") for s in sups):
        return SarifFinding(at, None, "suppressed by the analyzer's own configuration")
    cand: Dict[str, Any] = {"type": "conclusion", "claim": claim,
                            "severity": severity_of(level, props, rule, kind)}
    if rule_id is not None:
        cand["direction"] = rule_id if ctx.tool.lower() == PRIORS_TOOL else f"{_tool_word(ctx.tool)}:{rule_id}"
    file, line, snippet, region = where
    if isinstance(given, tuple):  # a log priors wrote: the identity the prior had keeps it
        ident_rule, given = given
    else:
        ident_rule = cand.get("direction") or _tool_word(ctx.tool)
    if file is None:
        cand["scope_ref"] = "*"
    else:
        cand["file"] = file
        if line is not None:
            cand["line"] = line
    evidence = f"{file}:{line}" if file is not None and line is not None else (file or ctx.tool)
    if snippet:
        evidence += ": " + snippet
    cand["evidence"] = evidence
    why = control_problem(cand)
    if why is not None:  # one bad result is left out, named; the rest of the log still counts
        return SarifFinding(at, None, f"holds {why}: not recorded")
    return SarifFinding(at, cand, rule=ident_rule, given=given, region=region)


def _given_fingerprint(res: Dict[str, Any], at: str, ctx: _RunCtx) -> Any:
    """The analyzer's own identity for a result: `fingerprints`, else `partialFingerprints` (SARIF
    §3.27.16–17; objects of strings), as one hash — or, in a log priors wrote, the `rule` and
    `fingerprint` its `properties.priors` keeps, as a pair; None when the log gives neither."""
    if ctx.tool.lower() == PRIORS_TOOL:
        props = res.get("properties")
        mine = props.get("priors") if isinstance(props, dict) else None
        if isinstance(mine, dict) and isinstance(mine.get("rule"), str) and isinstance(mine.get("fingerprint"), str):
            return (mine["rule"], mine["fingerprint"])
    found = None
    for key in ("fingerprints", "partialFingerprints"):
        fps = res.get(key)
        if fps is None:
            continue
        _obj(fps, f"{at}.{key}")
        for name, val in fps.items():
            if not isinstance(val, str):
                raise _Bad(f"{at}.{key}.{name}", "must be a string")
        if fps and found is None:
            found = "tool:" + sha12(dumps(fps))
    return found


def _tool_word(name: str) -> str:
    """`Semgrep OSS` → `semgrep-oss`: the tool's name as the first part of a direction."""
    return "-".join(name.lower().split())


def _rule_of(res: Dict[str, Any], at: str, ctx: _RunCtx) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """The result's rule (reportingDescriptor) and rule id: `ruleId`, `rule.id`, or through an index."""
    rule_id = res.get("ruleId")
    if rule_id is not None and not isinstance(rule_id, str):
        raise _Bad(at + ".ruleId", "must be a string")
    index = res.get("ruleIndex")
    where = at + ".ruleIndex"
    comp = 0
    ref = res.get("rule")
    if ref is not None:
        _obj(ref, at + ".rule")
        if ref.get("id") is not None and not isinstance(ref.get("id"), str):
            raise _Bad(at + ".rule.id", "must be a string")
        rule_id = rule_id if rule_id is not None else ref.get("id")
        if ref.get("index") is not None:
            index = ref.get("index")
            where = at + ".rule.index"
        tc = ref.get("toolComponent")
        if tc is not None:
            _obj(tc, at + ".rule.toolComponent")
            ci = tc.get("index")
            if ci is not None:
                if not _whole(ci) or not 0 <= ci < len(ctx.components) - 1:
                    raise _Bad(at + ".rule.toolComponent.index", "names no entry of tool.extensions")
                comp = ci + 1
    rule = None
    if index is not None and index != -1:
        rules = ctx.components[comp]
        if not _whole(index) or not 0 <= index < len(rules):
            raise _Bad(where, f"names no rule (the tool lists {len(rules)})")
        rule = rules[index]
        if rule_id is None:
            rule_id = rule["id"]
    elif rule_id is not None:
        rule = next((r for r in ctx.components[comp] if r.get("id") == rule_id), None)
    return rule, rule_id


def _message(msg: Any, at: str, rule: Optional[Dict[str, Any]]) -> str:
    _obj(msg, at)
    text = msg.get("text")
    if text is not None and not isinstance(text, str):
        raise _Bad(at + ".text", "must be a string")
    if text is None and isinstance(msg.get("id"), str) and rule is not None:
        strings = rule.get("messageStrings")
        entry = strings.get(msg["id"]) if isinstance(strings, dict) else None
        if isinstance(entry, dict) and isinstance(entry.get("text"), str):
            text = _fill(entry["text"], msg.get("arguments"), at + ".id")
    if text is None or not normalize(text):
        raise _Bad(at, "needs a non-empty `text` (or an `id` naming one of its rule's messageStrings)")
    return normalize(text)


def _fill(template: str, args: Any, at: str) -> str:
    """SARIF's `{0}` placeholders filled from `arguments` (`{{`/`}}` are literal braces)."""
    vals = args if isinstance(args, list) else []

    def one(m: Any) -> str:
        tok = m.group(0)
        if tok in ("{{", "}}"):
            return tok[0]
        digits = tok[1:-1]
        if len(digits) > MAX_PLACEHOLDER:
            raise _Bad(at, f"message placeholder {{{digits[:12]}…}} has {len(digits)} digits: no argument has that index")
        n = int(digits)
        return str(vals[n]) if n < len(vals) else tok

    return re.sub(r"\{\{|\}\}|\{[0-9]+\}", one, template)


def _where(res: Dict[str, Any], at: str, ctx: _RunCtx
           ) -> Tuple[Optional[str], Optional[int], str, Optional[Tuple[int, int, int, int]]]:
    """(file relative to the target or the URI as given, start line, snippet, region) of the first
    location; the region is (startLine, startColumn, endLine, endColumn), 0 for what is not given."""
    locs = _arr(res.get("locations"), at + ".locations")
    for j, loc in enumerate(locs):
        _obj(loc, f"{at}.locations[{j}]")
    for key in ("relatedLocations",):
        for j, loc in enumerate(_arr(res.get(key), f"{at}.{key}")):
            _obj(loc, f"{at}.{key}[{j}]")
    if not locs:
        return None, None, "", None
    lat = at + ".locations[0]"
    phys = locs[0].get("physicalLocation")
    if phys is None:
        return None, None, "", None
    _obj(phys, lat + ".physicalLocation")
    art = phys.get("artifactLocation")
    if art is None:
        return None, None, "", None
    uri, base = _artifact_location(art, lat + ".physicalLocation.artifactLocation")
    if uri is None:
        idx = art.get("index")
        if idx is None:
            return None, None, "", None
        if not 0 <= idx < len(ctx.artifacts) or not isinstance(ctx.artifacts[idx].get("location"), dict):
            raise _Bad(lat + ".physicalLocation.artifactLocation.index", "names no entry of run.artifacts with a location")
        uri, base = _artifact_location(ctx.artifacts[idx]["location"], lat + ".physicalLocation.artifactLocation")
        if uri is None:
            raise _Bad(lat + ".physicalLocation.artifactLocation.index", "its artifact has no `uri`")
    file = relative_path(_based(uri, base, ctx.bases), ctx.roots)
    line, snippet = None, ""
    region: Optional[Tuple[int, int, int, int]] = None
    for key in ("region", "contextRegion"):
        reg = phys.get(key)
        if reg is None:
            continue
        _obj(reg, f"{lat}.physicalLocation.{key}")
        start = reg.get("startLine")
        if start is not None and (not _whole(start) or start < 1):
            raise _Bad(f"{lat}.physicalLocation.{key}.startLine", "must be a whole number, at least 1")
        snip = reg.get("snippet")
        if snip is not None:
            _obj(snip, f"{lat}.physicalLocation.{key}.snippet")
            if isinstance(snip.get("text"), str) and not snippet:
                snippet = normalize(snip["text"])[:MAX_SNIPPET]
        if key == "region" and start is not None:
            line = start
            nums = [start]
            for part in ("startColumn", "endLine", "endColumn"):
                v = reg.get(part)
                if v is not None and (not _whole(v) or v < 1):
                    raise _Bad(f"{lat}.physicalLocation.region.{part}", "must be a whole number, at least 1")
                nums.append(v if v is not None and v <= 10 ** 9 else 0)
            region = (nums[0], nums[1], nums[2], nums[3])
    return file, line, snippet, region


def _artifact_location(art: Any, at: str) -> Tuple[Optional[str], Optional[str]]:
    _obj(art, at)
    uri, base, idx = art.get("uri"), art.get("uriBaseId"), art.get("index")
    if uri is not None and not isinstance(uri, str):
        raise _Bad(at + ".uri", "must be a string")
    if base is not None and not isinstance(base, str):
        raise _Bad(at + ".uriBaseId", "must be a string")
    if idx is not None and (not _whole(idx) or idx < -1):
        raise _Bad(at + ".index", "must be a whole number")
    return uri, base


def _based(uri: str, base: Optional[str], bases: Dict[str, Any], depth: int = 0) -> str:
    """The URI with its `uriBaseId` resolved through `originalUriBaseIds` (an unknown base: the target root)."""
    if base is None or depth > 8 or _has_scheme(uri):
        return uri
    entry = bases.get(base)
    if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
        return uri
    prefix = _based(entry["uri"], entry.get("uriBaseId"), bases, depth + 1)
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    return prefix + uri


def _has_scheme(uri: str) -> bool:
    head, sep, _ = uri.partition(":")
    return bool(sep) and len(head) > 1 and head[0].isalpha() and all(c.isalnum() or c in "+-." for c in head)


def relative_path(uri: str, roots: Sequence[str]) -> str:
    """A result's URI as a path relative to the target root, the way snapshot refs are written.

    `file:///repo/src/a.py` under root `/repo` → `src/a.py`; `src/a%20b.py` → `src/a b.py`; `./a.py` →
    `a.py`. A URI outside the root comes back as it is: no snapshot has it, so the keeper refuses it
    (UNKNOWN_SCOPE) like any pointer to code the run cannot see."""
    from urllib.parse import unquote, urlsplit

    if _has_scheme(uri):
        try:
            parts = urlsplit(uri)
        except ValueError:  # `http://[::1` and the like: no file of ours
            return uri
        if parts.scheme.lower() != "file":
            return uri
        path = unquote(parts.path)
        if len(path) > 2 and path[0] == "/" and path[2] == ":":  # file:///C:/repo/a.py
            path = path[1:]
        for root in roots:
            r = root.rstrip("/")
            if path.startswith(r + "/"):
                return path[len(r) + 1:]
        return uri
    path = unquote(uri.split("#", 1)[0].split("?", 1)[0])
    while path.startswith("./"):
        path = path[2:]
    return path


def severity_of(level: Optional[str], props: Optional[Dict[str, Any]], rule: Optional[Dict[str, Any]],
                kind: Optional[str] = None) -> str:
    """minor / major / gate from a result, first match wins (docs/sarif.md, "Severity"):

    1. `security-severity` (GitHub's CVSS-style score, a number or a numeric string) on the result's
       properties, else its rule's: 7.0 and above → gate, 4.0 and above → major, below → minor;
    2. `problem.severity` (CodeQL) on the result, else its rule: error → major, warning and
       recommendation → minor;
    3. `level` on the result, else the rule's `defaultConfiguration.level`, else SARIF's default
       (`warning`, or `none` when the result's kind is not `fail`): error → major, others → minor.
    """
    found = rule.get("properties") if isinstance(rule, dict) else None
    rprops: Dict[str, Any] = found if isinstance(found, dict) else {}
    for bag in (props or {}, rprops):
        score = _number(bag.get("security-severity"))
        if score is not None:
            return "gate" if score >= SECURITY_GATE else ("major" if score >= SECURITY_MAJOR else "minor")
    for bag in (props or {}, rprops):
        ps = bag.get("problem.severity")
        if isinstance(ps, str) and ps.lower() in PROBLEM_SEVERITY:
            return PROBLEM_SEVERITY[ps.lower()]
    if level is None and isinstance(rule, dict):
        dc = rule.get("defaultConfiguration")
        level = dc.get("level") if isinstance(dc, dict) and dc.get("level") in LEVELS else None
    if level is None:
        level = "warning" if kind in (None, "fail") else "none"
    return LEVEL_SEVERITY[level]


def _number(v: Any) -> Optional[float]:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            return None
        return f if f == f and abs(f) != float("inf") else None
    return None


# ------------------------------------------------------------------ shape helpers


def _obj(v: Any, at: str) -> Dict[str, Any]:
    if not isinstance(v, dict):
        raise _Bad(at, f"must be a JSON object, not {_show(v)}")
    return v


def _arr(v: Any, at: str) -> List[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise _Bad(at, f"must be an array, not {_show(v)}")
    return v


def _enum(v: Any, allowed: Tuple[str, ...], at: str) -> Optional[str]:
    if v is not None and v not in allowed:
        raise _Bad(at, f"must be one of {', '.join(allowed)}, not {_show(v)}")
    return v


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _show(v: Any) -> str:
    if v is None:
        return "missing"
    try:
        text = dumps(v)
    except (TypeError, ValueError):
        text = type(v).__name__
    return text if len(text) <= 40 else text[:37] + "..."


# ------------------------------------------------------------------ identity


def identities(found: Sequence[SarifFinding], refs: Sequence[Optional[str]],
               lines_of: Callable[[str], Optional[List[str]]]) -> List[Optional[Tuple[str, str]]]:
    """(rule, fingerprint) for each result placed on scope `refs[i]` (None: not a finding, or not placed).

    The fingerprint is the analyzer's own when it gives one (`given`); otherwise `text:` and a hash of
    the flagged source region's text — its whole lines and the columns it names, whitespace collapsed,
    so it survives line shifts and re-indentation — then `:N`, the occurrence index of that text among
    the results of the same rule on the same scope, in source order (two results at the same place
    share it: one finding). No file text to read (no location, a line past the end): the result's
    snippet, else its message, stands in. `lines_of(file)`: the file's lines, None when unreadable."""
    bases: List[Optional[Tuple[str, str, bool]]] = []
    for f, ref in zip(found, refs):
        cand = f.candidate
        if cand is None or ref is None:
            bases.append(None)
        elif f.given is not None:
            bases.append((f.rule, f.given, False))
        else:
            text = None
            file = cand.get("file")
            if isinstance(file, str) and f.region is not None:
                lines = lines_of(file)
                if lines is not None:
                    text = region_text(lines, f.region)
            if text is None:
                ev = str(cand.get("evidence", ""))
                text = "snippet\n" + ev.split(": ", 1)[1] if ": " in ev else "claim\n" + str(cand.get("claim"))
            bases.append((f.rule, sha12(text), True))
    # The occurrence among results of the same rule and base on the same scope, in source order: for
    # a tool's own fingerprint too, which one tool gives many results (Semgrep OSS writes
    # `{"matchBasedId/v1": "requires login"}` on every one) — the first keeps `tool:HASH`, the next
    # are `tool:HASH:1`, … so two results at two places are never one finding.
    spots: Dict[tuple, List[Tuple[int, int, int, int]]] = {}
    for f, ref, base in zip(found, refs, bases):
        if base is not None:
            spots.setdefault((ref, base[0], base[1]), []).append(f.region or (0, 0, 0, 0))
    order = {key: sorted(set(v)) for key, v in spots.items()}
    out: List[Optional[Tuple[str, str]]] = []
    for f, ref, base in zip(found, refs, bases):
        if base is None:
            out.append(None)
            continue
        nth = order[(ref, base[0], base[1])].index(f.region or (0, 0, 0, 0))
        if not base[2]:
            out.append((base[0], base[1] if nth == 0 else f"{base[1]}:{nth}"))
        else:
            out.append((base[0], f"text:{base[1]}:{nth}"))
    return out


def region_text(lines: Sequence[str], region: Tuple[int, int, int, int]) -> Optional[str]:
    """The text a region flags, as its fingerprint reads it: the region's whole lines, then the part
    its columns name (1-based, end exclusive; counted in characters), each whitespace-collapsed.
    None when the region starts past the end of the file."""
    sl, sc, el, ec = region
    if sl < 1 or sl > len(lines):
        return None
    el = min(max(el, sl), len(lines))
    chunk = list(lines[sl - 1:el])
    whole = normalize(" ".join(chunk))
    if not sc and not ec:
        return whole
    head = sc - 1 if sc else 0
    if len(chunk) == 1:
        part = chunk[0][head:ec - 1 if ec else None]
    else:
        part = " ".join([chunk[0][head:]] + chunk[1:-1] + [chunk[-1][:ec - 1 if ec else None]])
    return whole + "\n" + normalize(part)


# ------------------------------------------------------------------ one ingest, planned


class IngestPlan(Plain):
    """What an ingest does with a run: the verdict for each verify item, and what each result became.

    `verdicts`: (prior id, verdict) in the run's verify order. `fate`: per candidate index, one of
    `known` (it reports a verify item again), `merged` (the same identity — rule and fingerprint — on
    the same scope as an earlier result: one finding) or `propose`. `withheld`: the ids not reported
    again that were not judged `fixed` because some result could not be placed."""

    __slots__ = ("verdicts", "fate", "withheld")

    def __init__(self, verdicts: List[Tuple[str, str]], fate: List[str], withheld: List[str]) -> None:
        self.verdicts, self.fate, self.withheld = verdicts, fate, withheld


def plan_ingest(verify: Sequence[Dict[str, Any]], cands: Sequence[Optional[Dict[str, Any]]],
                withhold_fixed: bool = False) -> IngestPlan:
    """Disposition every verify item by whether the analyzer reported it again, and sort the rest.

    `verify`: the run's verify items, each with `id`, `scope_ref`, `scopeState`, and the prior's
    `direction`, `claim`, `rule` and `fingerprint`. `cands`: the results as resolved candidates
    (`scope_ref`, `rule` and `fingerprint` set; None for a result that is not a finding or was
    refused). A result reports a prior again when it is on the prior's scope with the same identity
    (rule and fingerprint). A prior recorded before identities (no fingerprint: an older ingest, or
    an agent's finding) is reported again as the keeper's duplicate check reads it: the same
    direction, or the same claim. Reported again → `still-open` on unchanged code,
    `reaffirmed` on changed code; not reported on a present scope → `fixed`; a missing scope gets
    no verdict (the commit records it as missing, as always).

    `withhold_fixed`: some result could not be placed in the run's snapshot, so the analyzer looked
    at a tree other than ours and its silence proves nothing. No prior is judged `fixed`: one not
    reported is carried as it stands — `still-open` on unchanged code, `stale` (queued for
    re-judgment) on changed code, the only verdicts the protocol allows there that claim nothing."""
    def keys(ref: Any, direction: Any, claim: Any) -> List[tuple]:
        out = []
        d = norm_direction(direction)
        if d is not None:
            out.append((ref, "d", d))
        if isinstance(claim, str):
            out.append((ref, "c", normalize(claim)))
        return out

    def identity(ref: Any, rec: Dict[str, Any]) -> Optional[tuple]:
        rule, fp = rec.get("rule"), rec.get("fingerprint")
        return (ref, "i", rule, fp) if isinstance(rule, str) and isinstance(fp, str) else None

    present: Dict[tuple, List[str]] = {}
    for item in verify:
        if item.get("scopeState") == "missing":
            continue
        mine = identity(item.get("scope_ref"), item)
        for k in [mine] if mine is not None else keys(item.get("scope_ref"), item.get("direction"), item.get("claim")):
            present.setdefault(k, []).append(item["id"])
    reported = set()
    fate: List[str] = []
    seen = set()
    for cand in cands:
        if cand is None:
            fate.append("")
            continue
        mine = identity(cand.get("scope_ref"), cand)
        ks = keys(cand.get("scope_ref"), cand.get("direction"), cand.get("claim"))
        hit = [pid for k in ([mine] if mine is not None else []) + ks for pid in present.get(k, ())]
        if hit:
            reported.update(hit)
            fate.append("known")
        elif mine is not None and mine in seen or mine is None and any(k in seen for k in ks):
            fate.append("merged")
        else:
            fate.append("propose")
        seen.update([mine] if mine is not None else ks)
    verdicts: List[Tuple[str, str]] = []
    withheld: List[str] = []
    for item in verify:
        state = item.get("scopeState")
        if state == "missing":
            continue
        if state == "moved":  # its definition was renamed or moved (core/moves.py): judged where it went
            state = "changed" if item.get("changed") is True else "unchanged"
        if item["id"] in reported:
            verdicts.append((item["id"], "still-open" if state == "unchanged" else "reaffirmed"))
        elif withhold_fixed:
            verdicts.append((item["id"], "still-open" if state == "unchanged" else "stale"))
            withheld.append(item["id"])
        else:
            verdicts.append((item["id"], "fixed"))
    return IngestPlan(verdicts, fate, withheld)
