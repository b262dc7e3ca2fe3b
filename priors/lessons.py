"""The lessons loop, pure: what a run was shown, how outcomes score lessons, budgeted ranking,
reflection packets and export bundles (docs/lessons.md).

Nothing here touches the disk. Every function takes parsed ledger records
(and the folded state) and returns data or text; the verbs in
`priors.lessons_cmd` do the reading and writing. Only integers are stored;
scores are compared as exact fractions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from priors.errors import UsageError
from priors.fold import PRIOR_RE, RUN_RE, PriorState, State, apply, prior_number

OUTCOMES = ("success", "partial", "failure")
LESSON_TYPES = ("calibration", "behavioral")
INJECTABLE = ("open", "accepted", "wontfix")
BINDING = ("accepted", "wontfix")
NEUTRAL = Fraction(1, 2)
LOW_SCORE = Fraction(1, 3)
LOW_SCORE_MIN_USES = 3
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,23}$")
MAX_TAGS = 8
BLOCK_TYPES = ("prior", "event", "call", "run")

# ------------------------------------------------------------------ config

CONFIG_KEYS = {
    "max_inject": "int",
    "max_chars": "int",
    "require_review": "bool",
}
_TRUE = ("on", "true", "yes", "1")
_FALSE = ("off", "false", "no", "0")
_UNSET = ("none", "unset", "default")


def check_config(obj: Any, where: str = ".priors/config.json") -> Dict[str, Any]:
    """A validated config object; anything unexpected is a usage error naming the file."""
    if not isinstance(obj, dict):
        raise UsageError(f"priors: {where}: must be a JSON object")
    for key, value in obj.items():
        kind = CONFIG_KEYS.get(key)
        if kind is None:
            raise UsageError(f"priors: {where}: unknown key {key!r} — keys are {', '.join(CONFIG_KEYS)}")
        if kind == "int" and not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise UsageError(f"priors: {where}: {key} must be a whole number ≥ 1")
        if kind == "bool" and not isinstance(value, bool):
            raise UsageError(f"priors: {where}: {key} must be true or false")
    return dict(obj)


def set_config(cfg: Dict[str, Any], key: str, text: str) -> Dict[str, Any]:
    """`priors config KEY VALUE`: the new config (a value of `none` removes the key)."""
    kind = CONFIG_KEYS.get(key)
    if kind is None:
        raise UsageError(f"priors config: unknown key {key!r} — keys are {', '.join(CONFIG_KEYS)}")
    out = dict(cfg)
    low = text.strip().lower()
    if low in _UNSET:
        out.pop(key, None)
        return out
    if kind == "bool":
        if low not in _TRUE + _FALSE:
            raise UsageError(f"priors config: {key} takes on|off (true|false)")
        out[key] = low in _TRUE
        return out
    out[key] = parse_count(text, f"priors config: {key}")
    return out


def parse_count(text: Any, what: str) -> int:
    try:
        n = int(str(text).strip(), 10)
    except ValueError:
        raise UsageError(f"{what} must be a whole number ≥ 1, not {text!r}") from None
    if n < 1:
        raise UsageError(f"{what} must be a whole number ≥ 1, not {text!r}")
    return n


# ------------------------------------------------------------------ tags and claims


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


def check_supersedes(st: State, value: Any, ns: str) -> Optional[str]:
    """`supersedes: P-…` must name a live prior of the same namespace (usage error otherwise)."""
    if value is None:
        return None
    if not isinstance(value, str) or not PRIOR_RE.match(value):
        raise UsageError("priors: `supersedes` must be a prior id like P-0003")
    p = st.priors.get(value)
    if p is None or p.redacted:
        raise UsageError(f"priors: `supersedes` names {value}, which is not a prior in the ledger")
    if p.ns != ns:
        raise UsageError(f"priors: `supersedes` names {value} from namespace {p.ns!r}, not {ns!r}")
    return value


def is_lesson(p: PriorState) -> bool:
    return p.facet("activation") == "run-start" and not p.redacted


def tags_of(p: PriorState) -> List[str]:
    t = p.rec.get("tags")
    return [x for x in t if isinstance(x, str)] if isinstance(t, list) else []


# ------------------------------------------------------------------ runs and what they were shown


@dataclass
class RunInfo:
    run: str
    ns: Any
    index: int  # ledger index of the commit record
    rec: Dict[str, Any]

    @property
    def by_human(self) -> bool:
        """Sealed by `add`/`import`: lessons a person wrote, not an agent run."""
        return self.rec.get("by") == "human"


def committed_runs(records: Sequence[Dict[str, Any]]) -> Dict[str, RunInfo]:
    out: Dict[str, RunInfo] = {}
    for i, rec in enumerate(records):
        if rec.get("t") == "run" and rec.get("action") == "commit":
            run = rec.get("run")
            if isinstance(run, str) and run not in out:
                out[run] = RunInfo(run, rec.get("ns"), i, rec)
    return out


def contract_inject(st: State, ns: Any) -> List[str]:
    """The contract's inject ids for a namespace: run-start priors still open or binding, in ledger order."""
    return [p.id for p in st.in_ns(ns) if p.facet("activation") == "run-start" and p.status in INJECTABLE]


def _mentions(rec: Dict[str, Any]) -> List[str]:
    if rec.get("t") not in BLOCK_TYPES:
        return []
    return [v for v in (rec.get("run"), rec.get("born")) if isinstance(v, str)]


def run_starts(records: Sequence[Dict[str, Any]]) -> Dict[str, int]:
    """Ledger index of the first line each committed run wrote (its block is contiguous)."""
    runs = committed_runs(records)
    out: Dict[str, int] = {}
    for i, rec in enumerate(records):
        for r in _mentions(rec):
            if r in runs and r not in out:
                out[r] = i
    return out


def injections(records: Sequence[Dict[str, Any]]) -> Dict[str, List[str]]:
    """The lesson ids each committed agent run was shown.

    A run's inject list depends only on the ledger before its first line, so it
    is recomputed by folding up to there. A run whose list was cut by a budget
    or held back for review left an `injected` record (just before its seal); that wins.
    """
    runs = committed_runs(records)
    starts = run_starts(records)
    by_index = {i: r for r, i in starts.items() if not runs[r].by_human}
    out: Dict[str, List[str]] = {}
    st = State()
    lessons: Dict[Any, List[str]] = {}  # per namespace, run-start prior ids in ledger order (cheap re-selection)
    for i, rec in enumerate(records):
        run = by_index.get(i)
        if run is not None:
            ns = runs[run].ns
            pri = st.priors
            out[run] = [pid for pid in lessons.get(ns, []) if pri[pid].status in INJECTABLE]
        known = rec.get("id") in st.priors
        apply(st, rec)
        if rec.get("t") == "prior" and not known and isinstance(rec.get("id"), str):
            p = st.priors[rec["id"]]
            if p.facet("activation") == "run-start":
                lessons.setdefault(p.ns, []).append(p.id)
    for rec in records:
        if rec.get("t") == "injected" and rec.get("run") in out and isinstance(rec.get("ids"), list):
            out[rec["run"]] = [x for x in rec["ids"] if isinstance(x, str)]
    return out


def injected_record(relevant: Dict[str, Any], run: str) -> Optional[Dict[str, Any]]:
    """At commit: the `injected` record to append when the run was shown fewer lessons than the contract's set."""
    omitted = relevant.get("inject_omitted")
    held = relevant.get("awaiting_review")
    if not (isinstance(omitted, list) and omitted) and not (isinstance(held, list) and held):
        return None
    inject = relevant.get("inject")
    ids = [x.get("id") for x in inject if isinstance(x, dict) and isinstance(x.get("id"), str)] \
        if isinstance(inject, list) else []
    return {"t": "injected", "run": run, "ids": ids}


# ------------------------------------------------------------------ outcome scores


@dataclass
class Stats:
    uses: int = 0
    wins: int = 0
    partials: int = 0
    losses: int = 0

    @property
    def scored(self) -> int:
        return self.wins + self.partials + self.losses

    @property
    def score(self) -> Fraction:
        """(wins + ½·partials) / scored uses, exactly; ½ with none."""
        if not self.scored:
            return NEUTRAL
        return Fraction(2 * self.wins + self.partials, 2 * self.scored)

    def credit(self, outcome: Any) -> None:
        if outcome == "success":
            self.wins += 1
        elif outcome == "partial":
            self.partials += 1
        elif outcome == "failure":
            self.losses += 1

    def as_dict(self) -> Dict[str, int]:
        return {"uses": self.uses, "wins": self.wins, "partials": self.partials, "losses": self.losses}


def fmt_score(x: Fraction) -> str:
    """Two decimals, rounded half up, from the exact fraction."""
    hundredths = (x.numerator * 200 + x.denominator) // (2 * x.denominator)
    return f"{hundredths // 100}.{hundredths % 100:02d}"


@dataclass
class Score:
    index: int
    rec: Dict[str, Any]

    @property
    def run(self) -> str:
        return self.rec["run"]

    @property
    def outcome(self) -> Any:
        return self.rec.get("outcome")

    @property
    def injected(self) -> Optional[List[str]]:
        ids = self.rec.get("injected")
        return [x for x in ids if isinstance(x, str)] if isinstance(ids, list) else None


def effective_scores(records: Sequence[Dict[str, Any]]) -> Dict[str, List[Score]]:
    """Per run, the scores that count: each plain score adds one, a `replaces` score replaces the latest."""
    out: Dict[str, List[Score]] = {}
    for i, rec in enumerate(records):
        if rec.get("t") != "score" or not isinstance(rec.get("run"), str) or rec.get("outcome") not in OUTCOMES:
            continue
        lst = out.setdefault(rec["run"], [])
        if rec.get("replaces") is True and lst:
            lst[-1] = Score(i, rec)
        else:
            lst.append(Score(i, rec))
    return out


@dataclass
class Ledger:
    """Everything the lessons loop derives from one read of the ledger."""

    records: List[Dict[str, Any]]
    state: State
    runs: Dict[str, RunInfo] = field(default_factory=dict)
    shown: Dict[str, List[str]] = field(default_factory=dict)
    scores: Dict[str, List[Score]] = field(default_factory=dict)

    @classmethod
    def of(cls, records: List[Dict[str, Any]], state: Optional[State] = None) -> "Ledger":
        from priors.fold import fold

        st = state if state is not None else fold(records)
        return cls(records, st, committed_runs(records), injections(records), effective_scores(records))

    def credited(self, score: Score) -> List[str]:
        ids = score.injected
        return ids if ids is not None else self.shown.get(score.run, [])

    def stats(self, since: Optional[Dict[str, int]] = None) -> Dict[str, Stats]:
        """Per prior: uses (agent runs it was shown to) and outcome credits.

        With `since` ({id: ledger index}), only scores written after that index count —
        the evidence a human has not yet seen when deciding.
        """
        out: Dict[str, Stats] = {}
        if since is None:
            for ids in self.shown.values():
                for pid in ids:
                    out.setdefault(pid, Stats()).uses += 1
        for lst in self.scores.values():
            for s in lst:
                outcome = s.outcome
                for pid in self.credited(s):
                    if since is not None and s.index <= since.get(pid, -1):
                        continue
                    st = out.get(pid)
                    if st is None:
                        st = out[pid] = Stats()
                    st.credit(outcome)
        return out

    def last_human_index(self) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for i, rec in enumerate(self.records):
            if rec.get("t") == "event" and rec.get("action") == "decide" and isinstance(rec.get("id"), str):
                out[rec["id"]] = i
        return out

    def low_scores(self) -> Dict[str, Stats]:
        """Lessons whose outcomes since the last human decision put them to the human: keep or retire."""
        recent = self.stats(self.last_human_index())
        out: Dict[str, Stats] = {}
        for pid, s in recent.items():
            p = self.state.priors.get(pid)
            if p is None or not is_lesson(p) or p.status not in INJECTABLE:
                continue
            if s.scored >= LOW_SCORE_MIN_USES and s.score < LOW_SCORE:
                out[pid] = s
        return out

    def learned_after(self) -> Dict[str, int]:
        """Per run: the ledger index of the last `learned` record naming it."""
        out: Dict[str, int] = {}
        for i, rec in enumerate(self.records):
            if rec.get("t") == "learned" and isinstance(rec.get("runs"), list):
                for r in rec["runs"]:
                    if isinstance(r, str):
                        out[r] = i
        return out

    def scored_runs(self, ns: Optional[str] = None, include_learned: bool = False) -> List[str]:
        """Scored runs, oldest score first; learned ones left out unless asked (a later score revives a run)."""
        learned = self.learned_after()
        rows: List[Tuple[int, str]] = []
        for run, lst in self.scores.items():
            if not lst or run not in self.runs:
                continue
            if ns is not None and self.runs[run].ns != ns:
                continue
            last = max(s.index for s in lst)
            if not include_learned and learned.get(run, -1) > last:
                continue
            rows.append((last, run))
        return [r for _, r in sorted(rows)]


def score_lines_for(ledger: Ledger, ns: str) -> List[str]:
    """`status` lines for scored lessons of a namespace (none when nothing was scored)."""
    stats = ledger.stats()
    out = []
    for p in ledger.state.in_ns(ns):
        s = stats.get(p.id)
        if s is None or not s.scored or not is_lesson(p) or p.status == "obsolete":
            continue
        out.append(f"  · {p.id} score {fmt_score(s.score)} — {describe(s)}")
    return out


def describe(s: Stats) -> str:
    def n(k: int, word: str, plural: str) -> str:
        return f"{k} {word if k == 1 else plural}"

    return (f"{n(s.uses, 'use', 'uses')}: {n(s.wins, 'win', 'wins')} · {n(s.partials, 'partial', 'partials')}"
            f" · {n(s.losses, 'loss', 'losses')}")


def low_score_ask(pid: str, s: Stats) -> str:
    return (f"scored {fmt_score(s.score)} over {s.scored} runs — keep or retire? "
            f"reply: decide {pid} keep — or decide {pid} obsolete")


def call_lines_for(ledger: Ledger, ns: str, require_review: bool) -> List[str]:
    """Extra `status --calls` questions: low-scoring lessons, and (with require_review) lessons awaiting review."""
    low = ledger.low_scores()
    out = []
    for p in ledger.state.in_ns(ns):
        if p.id in low:
            s = low[p.id]
            out.append(f"  ? {p.id} — {p.claim} scored {fmt_score(s.score)} over {s.scored} runs "
                       f"(decide {p.id} keep | obsolete)")
        elif require_review and is_lesson(p) and p.status == "open":
            out.append(f"  ? {p.id} — {p.claim} (a proposed lesson, not injected until you accept it: "
                       f"decide {p.id} accepted | obsolete)")
    return out


# ------------------------------------------------------------------ ranking and budgets

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an and are as at be by do does for from has have if in into is it its no not of on or so than that the "
    "then this to was were when with you your".split()
)


def words(text: str) -> set:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS}


def overlap(query: set, claim: str, tags: Iterable[str]) -> int:
    """Query words found in the claim, plus query words that are tags (a tag match counts again)."""
    return len(query & words(claim)) + len(query & set(tags))


@dataclass
class Budget:
    max_inject: Optional[int] = None
    max_chars: Optional[int] = None
    query: Optional[str] = None
    require_review: bool = False

    @property
    def active(self) -> bool:
        return (self.max_inject is not None or self.max_chars is not None or self.query is not None
                or self.require_review)


def rank_key(p: PriorState, query: set, score: Fraction) -> tuple:
    return (0 if p.binding else 1, -overlap(query, p.claim, tags_of(p)), -score, prior_number(p.id), p.id)


def shape(out: Dict[str, Any], ledger: Ledger, budget: Budget) -> Dict[str, Any]:
    """Apply ranking, budgets and review holds to `relevant`'s contract output.

    Without a budget the inject list is left exactly as the contract made it;
    low-score nudges are added whenever the ledger has earned them.
    """
    res = dict(out)
    inject = [x for x in out.get("inject", []) if isinstance(x, dict)]
    stats = ledger.stats()
    low = ledger.low_scores()
    nudges = list(out.get("nudges", []))
    nudged = {n.get("id") for n in nudges if isinstance(n, dict)}
    for item in sorted(inject, key=lambda x: (prior_number(x.get("id")), str(x.get("id")))):
        pid = item.get("id")
        if pid in low and pid not in nudged:
            nudges.append({"id": pid, "claim": item.get("claim"), "ask": low_score_ask(pid, low[pid])})
    res["nudges"] = nudges
    if not budget.active:
        return res
    held: List[str] = []
    pool: List[Tuple[tuple, Dict[str, Any]]] = []
    query = words(budget.query or "")
    for item in inject:
        p = ledger.state.priors.get(item.get("id"))  # type: ignore[arg-type]
        if p is None:
            continue
        if budget.require_review and p.status == "open":
            held.append(p.id)
            continue
        s = stats.get(p.id, Stats()).score
        pool.append((rank_key(p, query, s), item))
    pool.sort(key=lambda kv: kv[0])
    taken: List[Dict[str, Any]] = []
    omitted: List[str] = []
    chars = 0
    for _, item in pool:
        size = len(str(item.get("claim") or ""))
        if budget.max_inject is not None and len(taken) >= budget.max_inject:
            omitted.append(item["id"])
        elif budget.max_chars is not None and chars + size > budget.max_chars:
            omitted.append(item["id"])
        else:
            taken.append(item)
            chars += size
    res["inject"] = taken
    res["inject_omitted"] = omitted
    if budget.require_review:
        res["awaiting_review"] = sorted(held, key=lambda i: (prior_number(i), i))
    return res


# ------------------------------------------------------------------ reflection packets


def _run_findings(ledger: Ledger, run: str) -> Tuple[List[PriorState], List[Tuple[str, str]]]:
    born = [p for p in ledger.state.priors.values() if p.rec.get("born") == run]
    disp = [(str(r.get("id")), str(r.get("to"))) for r in ledger.records
            if r.get("t") == "event" and r.get("action") == "disposition" and r.get("run") == run]
    return born, disp


def _claim(p: Optional[PriorState]) -> str:
    if p is None:
        return "(unknown)"
    if p.redacted:
        return "(redacted)"
    return p.claim


def _quote(text: str) -> str:
    return " ".join(text.split())


def reflection_packet(ledger: Ledger, runs: List[str], ns: Optional[str]) -> str:
    st = ledger.state
    stats = ledger.stats()
    starts = run_starts(ledger.records)
    born_at = {rec.get("id"): i for i, rec in enumerate(ledger.records) if rec.get("t") == "prior"}
    lines = [
        f"# Reflection packet — {ns if ns else 'all namespaces'}",
        "",
        f"Written by `priors reflect` from {len(runs)} scored run{'s' if len(runs) != 1 else ''}"
        f" ({', '.join(runs)}). A working note: the ledger stays the truth, and this file is"
        " gitignored and removed when a prior it names is redacted.",
        "",
        "## For the agent: how to use this packet",
        "",
        "1. Read each run below: what it found, how the human scored it, and which lessons were",
        "   injected into it **at that time**.",
        "2. Do not fault a run for a lesson it could not have seen. Only the ids under",
        "   \"Lessons injected\" were shown to it; lessons born later are listed separately.",
        "3. Look for what repeats: a habit that would have turned a failure or partial into a success,",
        "   or an injected lesson that keeps coinciding with failures.",
        "4. In your next run (after `priors relevant`), propose at most three short, general lessons —",
        "   one candidate file each, `priors propose FILE --run RUN --ns NS`:",
        "",
        "   ```json",
        "   {\"type\": \"calibration\", \"claim\": \"Run the narrowest relevant test before the full suite.\",",
        "    \"tags\": [\"testing\"], \"evidence\": \"run-004 failed after a 20-minute full run; run-006 passed\"}",
        "   ```",
        "",
        "   To correct an existing lesson instead of adding a near-duplicate, add",
        "   `\"supersedes\": \"P-0003\"`: when a human accepts yours, the old one is retired in the same write.",
        "   A lesson that misled you in the current run: `priors disposition <id> challenged --run RUN`.",
        "5. Never put credentials, tokens or private data in a lesson — the keeper refuses them.",
        "6. Nothing you propose is binding until a human runs `priors decide <id> accepted`.",
        "",
        "## Lessons now",
        "",
    ]
    current = [p for p in st.priors.values() if is_lesson(p) and p.status in INJECTABLE
               and (ns is None or p.ns == ns)]
    if not current:
        lines.append("None yet.")
    else:
        lines.append("| id | area | status | score | uses | lesson |")
        lines.append("|---|---|---|---|---|---|")
        for p in current:
            s = stats.get(p.id, Stats())
            lines.append(f"| {p.id} | {p.ns} | {p.status} | {fmt_score(s.score)} | {s.uses} "
                         f"({s.wins}✓ {s.partials}~ {s.losses}✗) | {_quote(p.claim).replace('|', '/')} |")
    lines += ["", "## Runs", ""]
    for run in runs:
        info = ledger.runs.get(run)
        scores = ledger.scores.get(run, [])
        lines.append(f"### {run} — {' then '.join(str(s.outcome) for s in scores)}")
        lines.append("")
        lines.append(f"- namespace: {info.ns if info else '?'}")
        for s in scores:
            note = s.rec.get("reason")
            lines.append(f"- scored **{s.outcome}**" + (f": {_quote(note)}" if isinstance(note, str) else ""))
        summary = info.rec.get("summary") if info else None
        if isinstance(summary, list) and summary:
            lines.append("- commit summary:")
            lines += [f"      {s}" for s in summary]
        born, disp = _run_findings(ledger, run)
        if disp:
            lines.append("- verdicts this run: " + ", ".join(f"{pid} → {to}" for pid, to in disp))
        if born:
            lines.append("- new this run:")
            for p in born:
                lines.append(f"  - {p.id} ({p.rec.get('type', '?')}, now {p.status}) — {_quote(_claim(p))}")
        shown = ledger.credited(scores[-1]) if scores else ledger.shown.get(run, [])
        if shown:
            lines.append("- lessons injected at that time:")
            for pid in shown:
                lines.append(f"  - {pid} — {_quote(_claim(st.priors.get(pid)))}")
        else:
            lines.append("- lessons injected at that time: none")
        start = starts.get(run, info.index if info else 0)
        later = [p.id for p in st.priors.values() if is_lesson(p) and (info is None or p.ns == info.ns)
                 and born_at.get(p.id, -1) > start]
        if later:
            lines.append(f"- lessons born after this run (it could not have used them): {', '.join(later)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# ------------------------------------------------------------------ export / import bundles

BUNDLE_FORMAT = "priors-lessons"
BUNDLE_VERSION = 1
CARRIED = ("type", "facets", "claim", "tags", "direction", "severity", "review_every", "scope_ref", "scope_hash")


def export_bundle(ledger: Ledger, ns: Optional[str], typ: Optional[str]) -> Dict[str, Any]:
    """Live lessons with provenance and outcome counts. Redacted, retired and run-level data never leave."""
    stats = ledger.stats()
    lessons = []
    for p in ledger.state.priors.values():
        if not is_lesson(p) or p.status not in INJECTABLE:
            continue
        if ns is not None and p.ns != ns:
            continue
        if typ is not None and p.rec.get("type") != typ:
            continue
        item = {k: p.rec[k] for k in CARRIED if k in p.rec}
        item["origin"] = {"id": p.id, "ns": p.ns, "born": p.rec.get("born"), "status": p.status}
        item["score"] = stats.get(p.id, Stats()).as_dict()
        lessons.append(item)
    return {"format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "lessons": lessons}


@dataclass
class Incoming:
    index: int
    rec: Dict[str, Any]  # the prior record minus id/ns/born


def read_bundle(obj: Any) -> List[Incoming]:
    """Validate a bundle's shape and grammar (usage errors) and return the lessons it carries."""
    from priors.canonical import normalize
    from priors.grammar import resolve_facets

    if not isinstance(obj, dict) or obj.get("format") != BUNDLE_FORMAT:
        raise UsageError(f"priors import: not a lessons bundle (expected \"format\": \"{BUNDLE_FORMAT}\")")
    if obj.get("version") != BUNDLE_VERSION:
        raise UsageError(f"priors import: bundle version {obj.get('version')!r} is not supported (only {BUNDLE_VERSION})")
    items = obj.get("lessons")
    if not isinstance(items, list):
        raise UsageError("priors import: the bundle needs a `lessons` list")
    out: List[Incoming] = []
    for i, item in enumerate(items):
        where = f"lessons[{i}]"
        if not isinstance(item, dict):
            raise UsageError(f"priors import: {where} must be an object")
        try:
            typ, facets = resolve_facets({k: item[k] for k in ("type", "facets") if k in item})
        except UsageError as exc:
            raise UsageError(f"{exc} (in {where})") from None
        if facets["activation"] != "run-start":
            raise UsageError(f"priors import: {where} is not a lesson (its activation is {facets['activation']})")
        claim = item.get("claim")
        if not isinstance(claim, str) or not normalize(claim):
            raise UsageError(f"priors import: {where} needs a non-empty `claim`")
        rec: Dict[str, Any] = {"t": "prior", "type": typ, "facets": facets, "claim": normalize(claim)}
        tags = check_tags(item.get("tags"), f"{where}.tags")
        if tags:
            rec["tags"] = tags
        for key in ("direction", "severity", "scope_ref", "scope_hash"):
            v = item.get(key)
            if v is not None and not isinstance(v, str):
                raise UsageError(f"priors import: {where}.{key} must be a string")
            if v is not None:
                rec[key] = v
        if rec.get("severity") not in (None, "minor", "major", "gate"):
            raise UsageError(f"priors import: {where}.severity must be minor, major or gate")
        every = item.get("review_every")
        if every is not None:
            if not isinstance(every, int) or isinstance(every, bool) or every < 1:
                raise UsageError(f"priors import: {where}.review_every must be a whole number ≥ 1")
            rec["review_every"] = every
        if facets["scope"] == "repo-wide":
            rec.pop("scope_ref", None)
            rec.pop("scope_hash", None)
        elif "scope_ref" not in rec:
            raise UsageError(f"priors import: {where} has a {facets['scope']} scope but no `scope_ref`")
        out.append(Incoming(i, rec))
    return out


def present_claims(st: State, ns: str) -> Dict[str, PriorState]:
    """Normalized claim -> prior, for every prior of the namespace whose content is still there."""
    from priors.canonical import normalize

    out: Dict[str, PriorState] = {}
    for p in st.in_ns(ns):
        if not p.redacted:
            out.setdefault(normalize(p.claim), p)
    return out


def sealed_block(records: List[Dict[str, Any]], run: str, ns: str, accept: bool, via: str,
                 retire: Sequence[Tuple[str, str]] = ()) -> List[Dict[str, Any]]:
    """Lines for lessons written by a person: the priors sealed as a run, then — between runs, where
    human decisions belong — their acceptance and any retirement."""
    lines = list(records)
    ids = [r["id"] for r in records]
    verb = "Added" if via == "add" else "Imported"
    summary = [f"{verb} by you: {len(ids)} lesson{'s' if len(ids) != 1 else ''} ({', '.join(ids)})"
               + (" — accepted" if accept else " — open, awaiting your review")]
    for old, new in retire:
        summary.append(f"Retired {old} (superseded by {new})")
    lines.append({"t": "run", "action": "commit", "run": run, "ns": ns, "summary": summary, "by": "human", "via": via})
    if accept:
        for rec in records:
            lines.append({"t": "event", "id": rec["id"], "action": "decide", "to": "accepted", "by": "human"})
    for old, new in retire:
        lines.append({"t": "event", "id": old, "action": "decide", "to": "obsolete", "by": "human",
                      "reason": f"superseded by {new}"})
    return lines


def next_ids(st: State, count: int) -> List[str]:
    base = st.max_prior
    return [f"P-{base + i + 1:04d}" for i in range(count)]


def is_run_id(text: str) -> bool:
    return bool(RUN_RE.match(text))
