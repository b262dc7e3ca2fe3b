"""The candidate grammar: what an agent may propose, checked before anything is staged.
"""

from __future__ import annotations

import unicodedata

from priors.core.canonical import dumps, normalize, value_problem
from priors.core.controls import control_problem
from priors.core.errors import UsageError
from priors.core.letters import as_read
from priors.core.plain import Plain
from priors.core.spelling import nearest as closest
from priors.core.vocabulary import (  # noqa: F401 (AGENT_VERDICTS, HUMAN_VERDICTS, SEVERITY_RANK: re-exported)
    AGENT_VERDICTS,
    ANALYZER_FIELDS,
    CANDIDATE_FIELDS,
    FACET_ORDER,
    FACETS,
    HUMAN_VERDICTS,
    KEEPER_FIELDS,
    MAX_CANDIDATE_BYTES,
    MAX_DEPTH,
    MAX_TAGS,
    PRESETS,
    PRIOR_RE,
    RUN_RE,
    SEVERITIES,
    SEVERITY_RANK,
    TAG_RE,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, List, Optional, Tuple

OPPOSED = {
    "terser": "expand", "expand": "terser",
    "proof-earlier": "proof-later", "proof-later": "proof-earlier",
    "cta-singular": "cta-multiple", "cta-multiple": "cta-singular",
    "hoist-resource": "inline-resource", "inline-resource": "hoist-resource",
}

# Fields a candidate may carry that are copied onto the prior record when present.
OPTIONAL_FIELDS = ("direction", "severity", "depth", "evidence", "review_every")


class Candidate(Plain):
    """A validated candidate: what propose needs to check it and to write the prior (claim normalized)."""

    __slots__ = ("raw", "type", "facets", "claim")

    def __init__(self, raw: Dict[str, Any], type: str, facets: Dict[str, str], claim: str) -> None:
        self.raw, self.type, self.facets, self.claim = raw, type, facets, claim

    @property
    def repo_wide(self) -> bool:
        return self.facets["scope"] == "repo-wide"

    @property
    def scope_ref(self) -> Optional[str]:
        ref = self.raw.get("scope_ref")
        return ref if isinstance(ref, str) else None

    @property
    def direction(self) -> Optional[str]:
        d = self.raw.get("direction")
        return d if isinstance(d, str) else None

    @property
    def severity(self) -> Optional[str]:
        s = self.raw.get("severity")
        return s if isinstance(s, str) else None

    @property
    def identity(self) -> Optional[Tuple[str, str]]:
        """(rule, fingerprint) of an analyzer's result (`ingest-sarif`), else None: see `identity_of`."""
        return identity_of(self.raw)

    @property
    def distinct_from(self) -> List[str]:
        d = self.raw.get("distinct_from")
        return [x for x in d if isinstance(x, str)] if isinstance(d, list) else []

    @property
    def opposes(self) -> List[str]:
        o = self.raw.get("opposes")
        return [x for x in o if isinstance(x, str)] if isinstance(o, list) else []


def check_coherence(facets: Dict[str, str]) -> None:
    """Facet combinations that would make a prior meaningless are usage errors."""
    if facets.get("authority") == "binding":
        raise UsageError("priors: authority is never self-assigned — only `priors decide` makes a prior binding")
    rules = [
        ("obligation", "inject-as-instruction", "activation", "run-start"),
        ("obligation", "disposition-required", "activation", "verify-phase"),
        ("obligation", "veto-only", "activation", "propose-gate"),
    ]
    for facet, value, need_facet, need_value in rules:
        if facets.get(facet) == value and facets.get(need_facet) != need_value:
            raise UsageError(f"priors: incoherent facets — {facet} {value} needs {need_facet} {need_value}")
    if facets.get("scope") == "repo-wide" and facets.get("lifecycle") == "stale-on-scope-change":
        raise UsageError("priors: incoherent facets — a repo-wide scope cannot be stale-on-scope-change")


def resolve_facets(raw: Dict[str, Any]) -> tuple:
    """(type name, the five facets): the type's preset, then the candidate's own facets over it."""
    typ = raw.get("type")
    facets_in = raw.get("facets")
    if typ is None and facets_in is None:
        raise UsageError("priors: a candidate needs a `type` (conclusion, behavioral, coverage, calibration) or `facets`")
    if typ is not None and not isinstance(typ, str):
        raise UsageError("priors: `type` must be a string")
    if facets_in is not None and not isinstance(facets_in, dict):
        raise UsageError("priors: `facets` must be an object")
    facets: Dict[str, str] = dict(PRESETS.get(typ, {})) if typ else {}
    for key, value in (facets_in or {}).items():
        if key not in FACETS:
            raise UsageError(f"priors: unknown facet {key!r} — facets are {', '.join(FACET_ORDER)}")
        if value not in FACETS[key]:
            raise UsageError(f"priors: facet {key} cannot be {value!r} — one of {', '.join(FACETS[key])}")
        facets[key] = value
    if facets.get("authority") == "binding":
        raise UsageError("priors: authority is never self-assigned — only `priors decide` makes a prior binding")
    missing = [f for f in FACET_ORDER if f not in facets]
    if missing:
        if typ and typ not in PRESETS:
            raise UsageError(f"priors: unknown type {typ!r} — use one of {', '.join(PRESETS)} or give all five facets")
        raise UsageError(f"priors: facets missing: {', '.join(missing)} (give a preset `type` or all five facets)")
    check_coherence(facets)
    return (typ if typ else "custom"), facets


def _check_level(raw: Dict[str, Any], key: str) -> None:
    val = raw.get(key)
    if val is not None and val not in SEVERITIES:
        raise UsageError(f"priors: unknown {key} {val!r} — only minor, major, gate")


def identity_of(rec: Any) -> Optional[Tuple[str, str]]:
    """An analyzer result's identity — its rule and the fingerprint of what it flags — from a
    candidate or a prior record; None for anything else (an agent's finding). Two priors that both
    have one are the same finding exactly when it is equal (on the same scope): never by meaning.
    The rule compares as `rule_key` reads it (`ruff:f401 ` is `ruff:F401`), so relabelling a rule
    makes no new finding."""
    if not isinstance(rec, dict):
        return None
    rule, fp = rec.get("rule"), rec.get("fingerprint")
    return (rule_key(rule), fp) if isinstance(rule, str) and isinstance(fp, str) else None


def rule_key(rule: str) -> str:
    """An analyzer's rule id as identities compare it: NFKC (fullwidth digits, a no-break space),
    case folded, no space at either end, look-alike letters as the Latin ones they show and no invisible
    character (`letters.as_read`: `rуff` with a Cyrillic у, or with a zero-width space, is `ruff` —
    hostile pass 27aj) — the ways one rule's id is written differently."""
    return as_read(unicodedata.normalize("NFKC", rule).strip()).strip()


def unknown_fields(raw: Any) -> List[tuple]:
    """(field, the nearest known field or None) for each field of a candidate the keeper neither
    knows nor sets. The command line names them on stderr and drops them (the reference keeper
    ignores them, and its suite sends one, `scope_changed`); a tool call's schema refuses them."""
    if not isinstance(raw, dict):
        return []
    return [(key, closest(key, CANDIDATE_FIELDS)) for key in raw
            if key not in CANDIDATE_FIELDS and key not in KEEPER_FIELDS and key not in ANALYZER_FIELDS]


def check_fields(raw: Dict[str, Any], analyzer: bool = False) -> None:
    """A field the keeper sets is a usage error; so is one it does not know, once it reaches the door
    (the command line drops those first, saying so: `unknown_fields`). An analyzer's identity
    (`rule`, `fingerprint`) only from `ingest-sarif` (`analyzer`)."""
    for key in raw:
        if key in ANALYZER_FIELDS:
            if not analyzer:
                raise UsageError(f"priors: `{key}` is set by the keeper from an analyzer's SARIF log"
                                 " (`priors ingest-sarif`), never by a candidate")
            if not isinstance(raw[key], str) or not raw[key]:
                raise UsageError(f"priors: `{key}` must be a non-empty string")
            continue
        if key in KEEPER_FIELDS:
            raise UsageError(f"priors: `{key}` is set by the keeper, never by a candidate"
                             + (" — only `priors decide` makes a prior binding" if key in ("authority", "status") else ""))
        if key not in CANDIDATE_FIELDS:
            near = nearest(key, CANDIDATE_FIELDS)
            raise UsageError(f"priors: unknown candidate field {key!r}" + (f" — did you mean {near!r}?" if near else "")
                             + f" (fields: {', '.join(CANDIDATE_FIELDS)})")


def nearest(word: str, known: Any) -> Optional[str]:
    import difflib

    got = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return got[0] if got else None


def _check_location(raw: Dict[str, Any]) -> None:
    at, file, line = raw.get("at"), raw.get("file"), raw.get("line")
    if at is not None and (file is not None or line is not None):
        raise UsageError("priors: give `at` or `file` and `line`, not both")
    if (at is not None or file is not None) and raw.get("scope_ref") is not None:
        raise UsageError("priors: give `scope_ref` or a location (`at`, or `file` and `line`), not both")
    if at is not None:
        if not isinstance(at, str) or location_of(at) is None:
            raise UsageError(f"priors: `at` must be PATH:LINE like \"src/a.py:120\", not {at!r}")
    elif file is not None or line is not None:
        if not isinstance(file, str) or not file:
            raise UsageError("priors: `line` needs `file` (a path from the run's snapshot)")
        if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 1):
            raise UsageError("priors: `line` must be a whole number, at least 1")


def location_of(at: str) -> Optional[tuple]:
    """`src/a.py:120` → ("src/a.py", 120); None when it is not PATH:LINE (a line number of more than
    nine digits is none: no file has that many lines, and Python will not read a 4,301-digit one)."""
    path, sep, num = at.rpartition(":")
    if not sep or not path or not num.isdigit() or len(num) > 9 or int(num) < 1:
        return None
    return path, int(num)


def validate(raw: Any, analyzer: bool = False) -> Candidate:
    """Grammar and shape of one candidate (usage errors only); `analyzer`: a result of `ingest-sarif`,
    which may carry its identity (`rule`, `fingerprint`)."""
    if not isinstance(raw, dict):
        raise UsageError("priors: a candidate must be a JSON object")
    check_at_door(raw, "candidate")
    check_fields(raw, analyzer)
    if analyzer and (raw.get("rule") is None) != (raw.get("fingerprint") is None):
        raise UsageError("priors: an analyzer's result needs both `rule` and `fingerprint`, or neither")
    typ, facets = resolve_facets(raw)
    claim = raw.get("claim")

    if not isinstance(claim, str) or not normalize(claim):
        raise UsageError("priors: a candidate needs a non-empty `claim` string")
    if facets.get("activation") == "run-start":
        check_lesson_claim(normalize(claim), "priors: a lesson's `claim`")
    _check_level(raw, "severity")
    _check_level(raw, "depth")
    every = raw.get("review_every")
    if every is not None and (not isinstance(every, int) or isinstance(every, bool) or every < 1):
        raise UsageError("priors: `review_every` must be a whole number of runs, at least 1")
    for key in ("direction", "scope_ref", "scope_hash"):
        if raw.get(key) is not None and not isinstance(raw.get(key), str):
            raise UsageError(f"priors: `{key}` must be a string")
    opp = raw.get("opposes")
    if opp is not None and (not isinstance(opp, list) or not all(isinstance(x, str) for x in opp)):
        raise UsageError("priors: `opposes` must be a list of direction strings")
    if raw.get("tags") is not None:
        check_tags(raw["tags"])  # lessons loop: short lowercase words
    sup = raw.get("supersedes")
    if sup is not None and (not isinstance(sup, str) or not PRIOR_RE.match(sup)):
        raise UsageError("priors: `supersedes` must be a prior id like P-0003")
    dist = raw.get("distinct_from")
    if dist is not None and (not isinstance(dist, list) or not dist
                             or not all(isinstance(x, str) and PRIOR_RE.match(x) for x in dist)):
        raise UsageError("priors: `distinct_from` must be a list of prior ids like [\"P-0007\"]")
    _check_location(raw)
    located = raw.get("at") is not None or raw.get("file") is not None
    if facets["scope"] != "repo-wide" and not located and not isinstance(raw.get("scope_ref"), str):
        raise UsageError(f"priors: a {facets['scope']} candidate needs a `scope_ref` from the run's snapshot")
    return Candidate(raw, typ, facets, normalize(claim))


def check_at_door(raw: Any, what: str) -> None:
    """The limits every value meets before the keeper writes it (reader and writer agree on them,
    and `verify` holds every ledger line to them): valid Unicode text, finite and exact numbers,
    nesting at most MAX_DEPTH, canonical JSON at most MAX_CANDIDATE_BYTES. Usage errors."""

    why = value_problem(raw, MAX_DEPTH)
    if why is None:
        why = control_problem(raw)  # new text only: a ledger holding one is shown escaped (core/controls.py)
    if why is not None:
        raise UsageError(f"priors: {what} holds {why} — nothing was written")
    size = len(dumps(raw).encode("utf-8"))
    if size > MAX_CANDIDATE_BYTES:
        raise UsageError(f"priors: {what}: {size} bytes of JSON, more than the {MAX_CANDIDATE_BYTES} a {what} may hold"
                         " — nothing was written")


def opposes(cand: Candidate, prior_direction: Any) -> bool:
    if not isinstance(prior_direction, str):
        return False
    if cand.direction is not None and OPPOSED.get(cand.direction) == prior_direction:
        return True
    return prior_direction in cand.opposes


# ------------------------------------------------------------------ tags and claims


MAX_LESSON_CLAIM = 2000  # characters of a lesson's text: every coding session's prompt carries it


def check_lesson_claim(claim: str, what: str) -> None:
    """A lesson goes into the system prompt of every later session, so its text is kept short: at
    most MAX_LESSON_CLAIM characters (normalized), a usage error otherwise, nothing written. A
    finding's claim is not held to it: findings are shown to keeper runs, one by one."""
    if len(claim) > MAX_LESSON_CLAIM:
        raise UsageError(f"{what} is {len(claim)} characters — a lesson holds at most {MAX_LESSON_CLAIM} (it goes"
                         " into every session's prompt): say it shorter — nothing was written")
    if not any(c.isalnum() and c not in _BLANK_LETTERS for c in claim):  # (hostile pass 27u: injected as nothing)
        raise UsageError(f"{what} has no letter or digit a reader would see — nothing was written")


_BLANK_LETTERS = "\u115f\u1160\u3164\uffa0"  # Hangul fillers: letters to Unicode, blank on every screen


def check_tags(value: Any, where: str = "tags") -> List[str]:
    """Short lowercase words, deduplicated and sorted (so equal sets are equal bytes)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise UsageError(f"priors: `{where}` must be a list of short lowercase words")
    tags = sorted({t.strip().lstrip("#") for t in value})
    for t in tags:
        if not TAG_RE.match(t):
            raise UsageError(f"priors: tag {t!r} — tags are short lowercase words (a-z, 0-9, -; at most 24 characters)")
    if len(tags) > MAX_TAGS:
        raise UsageError(f"priors: at most {MAX_TAGS} tags per lesson")
    return tags


def check_run_id(run: Optional[str], verb: str) -> str:
    """A run id a verb was given, or the usage error that names the verb and the id's shape."""
    if run is None:
        raise UsageError(f"priors {verb}: --run RUN is required")
    if not RUN_RE.match(run):
        raise UsageError(f"priors {verb}: bad run id {run!r} — run ids must match `run-` and three to nine ASCII digits"
                         " (e.g. run-001)")
    return run


def check_agent_verdict(verdict: str) -> None:
    """An agent's verdict, never a person's: those belong to `priors decide`."""
    if verdict in HUMAN_VERDICTS:
        raise UsageError(f"priors disposition: {verdict!r} is a human verdict — only `priors decide` records it")
    if verdict not in AGENT_VERDICTS:
        raise UsageError(f"priors disposition: unknown verdict {verdict!r} — one of {', '.join(AGENT_VERDICTS)}")


def ref_alias(ref: str) -> Optional[str]:
    """Why `ref` is another spelling of a path scope (`./a.py`, `/a.py`, `a.py/`, `src//a.py`,
    `a.py#`) rather than a scope ref — None when it is none. A snapshot's refs are POSIX paths
    relative to the root, each part a name (docs/snapshot.md); a second spelling of a file would be
    a scope the door never relates to the first, so a finding on it would pass a person's decision on
    the file unseen. A ref without `/` or `#` (a tool's, `ruff`) is taken as given."""
    if ref == "*" or ("/" not in ref and "#" not in ref):
        return None
    path, hashmark, inner = ref.partition("#")
    if path.startswith("/"):
        return "an absolute path (refs are relative to the root)"
    if not hashmark and path.endswith("/") and len(path) > 1:
        path = path[:-1]  # a folder, `src/`
    wrapped = "/" + path + "/"  # (string tests, not a split: a snapshot holds thousands of refs)
    if "//" in wrapped or "/./" in wrapped or "/../" in wrapped:
        return "a path with an empty, `.` or `..` part"
    if hashmark and (not inner or inner[0] == "." or inner[-1] == "." or ".." in inner):
        return "a definition ref without a name after `#` (or an empty one between dots)"
    return None


def aliased_refs(refs: Iterable[str]) -> List[str]:
    """The refs of `refs` that `ref_alias` finds wrong, in sorted order. A snapshot holds 70k refs:
    those without `#` are looked at together first — joined, one line each, they show none of what
    `ref_alias` looks for (a `/` or `.` at a ref's start, `//`, `/.`) — and only when they do is each
    of them looked at alone."""
    whole: List[str] = list(refs)
    each: List[str] = []
    text = "\n" + "\n".join(whole)
    if "#" in text or text.count("\n") != len(whole):  # a definition's ref, or a ref holding a line break
        alone, whole = whole, []
        for ref in alone:
            (each if "#" in ref or "\n" in ref else whole).append(ref)
        text = "\n" + "\n".join(whole)
    if "\n/" in text or "\n." in text or "//" in text or "/." in text:
        each += whole
    return sorted(ref for ref in each if ref_alias(ref) is not None)

