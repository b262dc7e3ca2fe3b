"""SARIF in: what an analyzer's result is (its identity: rule and fingerprint on its scope) and
what one ingest does with a run — which old finding each result reports again, which is new.

Pure: the results as core/sarif_in.py reads them, the file lines and the run's verify items come
in. The rules are docs/sarif.md's "Identity" and "Reported again, fixed, missing"; tested in
tests/test_sarif_unit.py and, through the real CLI, tests/test_sarif_identity.py.
"""

from __future__ import annotations

from priors.core.canonical import normalize, sha12
from priors.core.grammar import rule_key
from priors.core.plain import Plain
from priors.core.sarif_in import SarifFinding, tool_of
from priors.core.similarity import norm_direction

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


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
    """The text a region flags, as its fingerprint reads it, whitespace-collapsed: the part its
    columns name (1-based, end exclusive; counted in characters) when it gives columns — so an edit
    elsewhere on the line (a comment, another name) leaves it — else its whole lines. None when the
    region starts past the end of the file."""
    sl, sc, el, ec = region
    if sl < 1 or sl > len(lines):
        return None
    el = min(max(el, sl), len(lines))
    chunk = list(lines[sl - 1:el])
    if not sc and not ec:
        return normalize(" ".join(chunk))
    head = sc - 1 if sc else 0
    if len(chunk) == 1:
        part = chunk[0][head:ec - 1 if ec else None]
    else:
        part = " ".join([chunk[0][head:]] + chunk[1:-1] + [chunk[-1][:ec - 1 if ec else None]])
    return "columns\n" + normalize(part)


# ------------------------------------------------------------------ one ingest, planned


class IngestPlan(Plain):
    """What an ingest does with a run: the verdict for each verify item, and what each result became.

    `verdicts`: (prior id, verdict) in the run's verify order. `fate`: per candidate index, one of
    `known` (it reports a verify item again), `merged` (the same identity — rule and fingerprint — on
    the same scope as an earlier result: one finding), `settled` (it is a finding a person decided,
    whose flagged text changed: `settled_as` names it) or `propose`. `withheld`: the ids not reported
    again that were not judged `fixed` — because some result could not be placed, or (`untooled`)
    because the log ran no tool of theirs. `renewed`: (candidate index, prior id) for a result taken
    as a finding whose flagged text changed, the same claim of the same rule on its scope."""

    __slots__ = ("verdicts", "fate", "withheld", "untooled", "settled_as", "renewed", "reporter")

    def __init__(self, verdicts: List[Tuple[str, str]], fate: List[str], withheld: List[str],
                 untooled: Optional[List[str]] = None, settled_as: Optional[Dict[int, str]] = None,
                 renewed: Optional[List[Tuple[int, str]]] = None, reporter: Optional[Dict[str, int]] = None) -> None:
        self.verdicts, self.fate, self.withheld = verdicts, fate, withheld
        self.untooled = untooled or []
        self.settled_as = settled_as or {}
        self.renewed = renewed or []
        self.reporter = reporter or {}  # prior id -> the index of the first result that reported it again


def plan_ingest(verify: Sequence[Dict[str, Any]], cands: Sequence[Optional[Dict[str, Any]]],
                withhold_fixed: bool = False, tools: Optional[Sequence[str]] = None,
                decided: Sequence[Dict[str, Any]] = ()) -> IngestPlan:
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

    A finding whose flagged text changed (a comment added on the line, `as e` dropped) loses its
    fingerprint but not its rule, claim or scope: a result no prior has, of the same rule with the
    same claim on the scope of a prior not reported, is that prior reported again (`renewed`) — or,
    for one of `decided` (the findings a person decided, in any namespace, each with `id`, `scope_ref`,
    `rule`, `fingerprint`, `claim`, whose identity no result has), it is that decision's finding
    (`settled`), not a new one. Paired in source order.

    `withhold_fixed`: some result could not be placed in the run's snapshot, so the analyzer looked
    at a tree other than ours and its silence proves nothing. No prior is judged `fixed`: one not
    reported is carried as it stands — `still-open` on unchanged code, `stale` (queued for
    re-judgment) on changed code, the only verdicts the protocol allows there that claim nothing.
    `tools`: the tools the log ran (`log_tools`); a finding of a tool not among them (another
    analyzer's, or one renamed) is carried the same way, never marked fixed by this log."""
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
        return (ref, "i", rule_key(rule), fp) if isinstance(rule, str) and isinstance(fp, str) else None

    def same_words(ref: Any, rec: Dict[str, Any], bare: bool = False) -> Optional[tuple]:
        """(scope, rule, claim); `bare`: the rule without its tool (`F401`), for a renamed tool."""
        rule, claim = rec.get("rule"), rec.get("claim")
        if not isinstance(rule, str) or not isinstance(claim, str):
            return None
        return (ref, rule_key(rule.split(":", 1)[-1] if bare else rule), normalize(claim), bare)

    ran = None if tools is None else set(tools)

    def untooled(item: Dict[str, Any]) -> bool:
        label = item.get("rule") if isinstance(item.get("rule"), str) else item.get("direction")
        return ran is not None and isinstance(label, str) and ":" in label and tool_of(label) not in ran

    present: Dict[tuple, List[str]] = {}
    for item in verify:
        if item.get("scopeState") == "missing":
            continue
        mine = identity(item.get("scope_ref"), item)
        for k in [mine] if mine is not None else keys(item.get("scope_ref"), item.get("direction"), item.get("claim")):
            present.setdefault(k, []).append(item["id"])
    reported: Dict[str, int] = {}
    fate: List[str] = []
    seen = set()
    for n, cand in enumerate(cands):
        if cand is None:
            fate.append("")
            continue
        mine = identity(cand.get("scope_ref"), cand)
        ks = keys(cand.get("scope_ref"), cand.get("direction"), cand.get("claim"))
        hit = [pid for k in ([mine] if mine is not None else []) + ks for pid in present.get(k, ())]
        if hit:
            for pid in hit:
                reported.setdefault(pid, n)
            fate.append("known")
        elif mine is not None and mine in seen or mine is None and any(k in seen for k in ks):
            fate.append("merged")
        else:
            fate.append("propose")
        seen.update([mine] if mine is not None else ks)
    # A finding whose flagged text changed: the same rule and claim on its scope, paired in order.
    fresh: Dict[tuple, List[int]] = {}
    for i, cand in enumerate(cands):
        if cand is not None and fate[i] == "propose" and identity(cand.get("scope_ref"), cand) is not None:
            for bare in (False, True):
                w = same_words(cand.get("scope_ref"), cand, bare)
                if w is not None:
                    fresh.setdefault(w, []).append(i)
    taken: set = set()

    def pair(w: Optional[tuple]) -> Optional[int]:
        while w is not None and fresh.get(w):
            i = fresh[w].pop(0)
            if i not in taken:
                taken.add(i)
                return i
        return None

    renewed: List[Tuple[int, str]] = []
    settled_as: Dict[int, str] = {}
    for item in verify:
        if item.get("scopeState") == "missing" or item["id"] in reported or identity(item.get("scope_ref"), item) is None:
            continue
        got = pair(same_words(item.get("scope_ref"), item))
        if got is None and untooled(item):  # the tool was renamed (`Ruff Linter`): the same rule id and claim
            got = pair(same_words(item.get("scope_ref"), item, bare=True))
        if got is not None:
            fate[got] = "known"
            reported[item["id"]] = got
            renewed.append((got, item["id"]))
    given = {identity(c.get("scope_ref"), c) for c in cands if c is not None}
    for rec in decided:
        mine = identity(rec.get("scope_ref"), rec)
        got = pair(same_words(rec.get("scope_ref"), rec)) if mine is not None and mine not in given else None
        if got is not None:
            fate[got] = "settled"
            settled_as[got] = str(rec.get("id"))
    verdicts: List[Tuple[str, str]] = []
    withheld: List[str] = []
    others: List[str] = []
    for item in verify:
        state = item.get("scopeState")
        if state == "missing":
            continue
        if state == "moved":  # its definition was renamed or moved (core/moves.py): judged where it went
            state = "changed" if item.get("changed") is True else "unchanged"
        if item["id"] in reported:
            verdicts.append((item["id"], "still-open" if state == "unchanged" else "reaffirmed"))
            continue
        other = untooled(item)
        if withhold_fixed or other:
            verdicts.append((item["id"], "still-open" if state == "unchanged" else "stale"))
            withheld.append(item["id"])
            if other:
                others.append(item["id"])
        else:
            verdicts.append((item["id"], "fixed"))
    return IngestPlan(verdicts, fate, withheld, others, settled_as, renewed, reported)
