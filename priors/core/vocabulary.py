"""The keeper's vocabulary, declared once: ids, record types, facets, verdicts, statuses, severities.

Every other module imports these names from here. Two copies of a word list drift (the call-id
pattern once accepted `-C-1` in the merge and required `-C-01` in verify); one copy cannot.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Tuple

# ------------------------------------------------------------------ ids

# ASCII digits only and nothing after them (`\d` takes other scripts' digits, `$` a trailing newline).
RUN_RE = re.compile(r"^run-([0-9]{3,9})\Z")  # run-001: three to nine digits (a longer one names no file)
LAST_RUN = 999_999_999  # the largest number a run id holds
# An id a caller picks (`relevant --run`) leaves the keeper room to number a million runs after it:
# past this one, the next run would need a tenth digit that no verb accepts.
LAST_CHOSEN_RUN = LAST_RUN - 1_000_000
PRIOR_RE = re.compile(r"^P-([0-9]{4,18})\Z")  # P-0001: four to eighteen digits (a longer one is no number a verb can count on)
CALL_RE = re.compile(r"^(run-[0-9]{3,9})-C-([0-9]{2,})\Z")  # run-001-C-01: the run that raised it, two or more digits
HASH12_RE = re.compile(r"^[0-9a-f]{12}\Z")  # a sha12: scope hashes, content hashes, reason hashes


def id_number(regex: "re.Pattern[str]", value: Any, missing: int = 0) -> int:
    """The number inside a run or prior id (`run-007` → 7), or `missing` when it is not one."""
    if isinstance(value, str):
        m = regex.match(value)
        if m:
            return int(m.group(1))
    return missing


def is_run_id(value: Any) -> bool:
    return isinstance(value, str) and RUN_RE.match(value) is not None


def is_prior_id(value: Any) -> bool:
    return isinstance(value, str) and PRIOR_RE.match(value) is not None


def prior_number(pid: Any) -> int:
    """P-0042 → 42; 0 for anything that is not a prior id (sorts first)."""
    return id_number(PRIOR_RE, pid)


# ------------------------------------------------------------------ record types and event actions

RECORD_TYPES = ("prior", "event", "call", "run", "injected", "score", "learned")
BLOCK_TYPES = ("prior", "event", "call", "run")  # what a sealed block of a run holds
ACTIONS = ("disposition", "decide", "scope-missing", "redact", "moved")  # moved: core/moves.py

# ------------------------------------------------------------------ facets and the type presets

FACETS: Dict[str, Tuple[str, ...]] = {
    "scope": ("content-hash", "tool-version", "env-fingerprint", "repo-wide"),
    "activation": ("run-start", "verify-phase", "propose-gate"),
    "obligation": ("disposition-required", "inject-as-instruction", "veto-only"),
    "authority": ("advisory", "binding"),
    "lifecycle": ("stale-on-scope-change", "challenged-on-failure", "only-by-supersession"),
}
FACET_ORDER = ("scope", "activation", "obligation", "authority", "lifecycle")
_FACETS_SOUND: Dict[Tuple[Any, ...], bool] = {}  # a set's items -> whether it is sound: a ledger has a handful


def facets_known(facets: Dict[str, Any]) -> bool:
    """Whether each of the five facets holds one of its values (another key is the field checks' to
    name). `verify` asks it of every prior it replays: each distinct set is worked out once."""
    try:
        items = tuple(facets.items())
        return _FACETS_SOUND[items]
    except KeyError:
        sound = all(facets.get(f) in FACETS[f] for f in FACETS)
        if len(_FACETS_SOUND) < 4096:  # (a hand-made ledger of endless odd sets: no more than this kept)
            _FACETS_SOUND[items] = sound
        return sound
    except TypeError:  # a value that is a list or an object: not one of a facet's values
        return all(facets.get(f) in FACETS[f] for f in FACETS)

PRESETS: Dict[str, Dict[str, str]] = {
    "conclusion": dict(scope="content-hash", activation="verify-phase", obligation="disposition-required",
                       authority="advisory", lifecycle="stale-on-scope-change"),
    "behavioral": dict(scope="tool-version", activation="run-start", obligation="inject-as-instruction",
                       authority="advisory", lifecycle="challenged-on-failure"),
    "coverage": dict(scope="content-hash", activation="propose-gate", obligation="veto-only",
                     authority="advisory", lifecycle="stale-on-scope-change"),
    "calibration": dict(scope="repo-wide", activation="run-start", obligation="inject-as-instruction",
                        authority="advisory", lifecycle="only-by-supersession"),
}
LESSON_TYPES = ("calibration", "behavioral")
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,23}\Z")  # a lesson's tag: lowercase words joined by hyphens
MAX_TAGS = 8

# ------------------------------------------------------------------ verdicts

AGENT_VERDICTS = ("fixed", "still-open", "stale", "reaffirmed", "challenged", "obsolete-proposed")
HUMAN_VERDICTS = ("accepted", "wontfix", "obsolete", "reopen", "keep")
OUTCOMES = ("success", "partial", "failure")  # how a scored run turned out

# ------------------------------------------------------------------ statuses

STATUSES = ("open", "fixed", "stale", "challenged", "obsolete-proposed", "accepted", "wontfix", "obsolete", "redacted")
BINDING = ("accepted", "wontfix")  # a human decided: no agent verdict changes these
PERSON_STATUSES = BINDING + ("obsolete",)  # statuses only a person gives (an agent proposes `obsolete-proposed`)
INJECTABLE = ("open", "accepted", "wontfix")  # a lesson in one of these is shown to runs
REST_AFTER = 5  # runs in a row with the scope missing before a prior rests
# what `priors list --status` accepts: every status, plus the two views a person asks for
LIST_STATUSES = STATUSES + ("resting", "binding")

# ------------------------------------------------------------------ namespaces and candidates

NS_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}\Z")  # a namespace is a name: code-review, docs.v2
# a harness's own session id (`lessons --inject --session KEY`): an opaque name, never content
SESSION_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")
SESSION_VIA = "session"  # `via` of the run that seals a scored harness session
# a seal's `door`: its rules (`protocol.door_of`) — 2: issue 28's, 3: with the concept lexicon, 4: a person's
# settled ground holds in every namespace (SETTLED_NEARBY across namespaces; `distinct_from` may name their decision)
# 5: a lesson meets lessons by meaning too, as findings do (core/lesson_likeness.py); 6: a lesson meets a person's
# lesson whatever it denies (a misspelt `Nevr` is no denial of `Never`), and a retired lesson is not revised; 7: a
# lesson is held to a person's decided finding with its claim, whatever the finding's scope, an analyzer's result
# to a person's decision on its rule's result on the same scope state, and a finding to the decisions on the
# definitions its words name (SETTLED_NEARBY in their file, folder or `*`); 8: a revision of a lesson a person
# accepted or set as wontfix may not deny it
DOOR = 8
LEXICON_DOOR = 3  # the first door judging by today's similarity measure
ACROSS_DOOR = 4  # the first door holding a finding to another namespace's settled ground
LESSON_DOOR = 5  # the first door comparing a lesson with lessons by meaning
SETTLED_LESSON_DOOR = 6  # the first holding a lesson to a person's lesson whatever it denies, and no revision of a retired one
DECIDED_FINDING_DOOR = 7  # the first holding a lesson to a person's decided finding that says the same, and an analyzer's
# result to a person's decision on a result of its rule on the same scope state, whatever its fingerprint (hostile pass 27ah)
REVISION_DOOR = 8  # the first holding a revision (`supersedes`) to the binding lessons it revises: it may not deny them
SUGGEST_VIA = "suggest"  # `via` of the run that seals a lesson an agent suggested outside a run (not scorable)

# Every field a candidate may carry; anything else is a usage error naming the nearest of these.
CANDIDATE_FIELDS = ("type", "facets", "claim", "scope_ref", "scope_hash", "at", "file", "line", "severity",
                    "direction", "opposes", "evidence", "depth", "review_every", "tags", "supersedes", "distinct_from")
# Fields of a prior record that only the keeper sets: in a candidate they are usage errors.
KEEPER_FIELDS = ("authority", "status", "by", "t", "id", "born", "redacted", "ns", "content_hash")
# An analyzer result's identity (docs/sarif.md, "Identity"): set by `ingest-sarif` from the log, never
# by an agent's candidate — two priors holding both are compared by them alone, never by meaning.
ANALYZER_FIELDS = ("rule", "fingerprint")

# The refusals a run's seal keeps as what its agent tried (`attempts` on the run record): each names the
# prior the candidate hit (`of`), so a person sees how often a settled prior is raised again.
ATTEMPT_CODES = ("RERAISE", "DUPLICATE", "REVERSAL", "BELOW_FLOOR")

# ------------------------------------------------------------------ limits at the door

# What the keeper accepts into the ledger, and what `verify` holds every ledger line to: the reader
# and the writer agree on these. Depth counts the record itself as 1 (a candidate and the prior it
# becomes nest alike: `{"evidence": [[1]]}` is 3 deep).
MAX_DEPTH = 32
MAX_CANDIDATE_BYTES = 65536  # a candidate's canonical JSON, in UTF-8
MAX_TEXT_BYTES = 65536  # one text argument (`--because`, `add` TEXT, ...)
# One JSON-RPC message read by `priors mcp` (a line on its standard input): a bigger one is refused
# unparsed and skipped to its end. Room for a propose call with dozens of full-size candidates.
MAX_MCP_MESSAGE_BYTES = 4 * 1024 * 1024
# Input files: what the keeper reads of them, so a huge or endless one is an error, not a hang.
MAX_INPUT_BYTES = 128 << 20  # a candidate, scopes, bundle or --merge file, or the same on standard input
MAX_STREAM_BYTES = 4 << 30  # what `hash --stdin-raw` hashes from a pipe before it calls it endless
MAX_WHOLE_FILE_BYTES = 16 << 20  # a file up to this is read whole (and anchored); a larger one is hashed as a stream


# ------------------------------------------------------------------ severities

SEVERITIES = ("minor", "major", "gate")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


def display_status(p: Any) -> str:
    """The status a person reads: `resting` for a resting prior, else its folded status."""
    return "resting" if p.resting else p.status
