"""`priors suggest`: an agent's lesson (or a revision of one) outside a keeper run — what a coding
session's model proposes through the `priors_lessons` tool, or `/priors propose` in Pi.

The candidate is judged by the very rules `propose` applies at the door (`judge_candidate`:
grammar, supersedes, secrets, duplicates, re-raises of a person's decisions, reversals), then
sealed on its own as an agent run: the prior (open — advisory, and held back from injection with
`require_review on`), an empty `injected` record (the run was shown nothing, so it credits and
counts nothing), and the run record with `via: suggest`. A person accepts it with
`priors decide P-… accepted`; nothing here can make a lesson binding.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.canonical import normalize
from priors.core.errors import UsageError
from priors.core.fold import next_run_id
from priors.core.grammar import check_lesson_claim, check_tags
from priors.core.protocol import judge_candidate, prior_record, reversal_refusal
from priors.core.run_files import RunFiles
from priors.core.vocabulary import DOOR, PRIOR_RE, SUGGEST_VIA
from priors.ops.lessons import lesson_ledger, refuse_if_open
from priors.store import lesson_keys
from priors.store.ledger import append_and_apply
from priors.store.lock import Lock
from priors.store.paths import Paths, list_run_dirs, require_init

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence


def suggest(paths: Paths, ns: Optional[str], words: Sequence[str], tags: Sequence[str],
            supersedes: Optional[str], note: Optional[str], distinct_from: Sequence[str] = ()) -> Answer:
    """Judge and seal one agent lesson; `supersedes` makes it a proposed revision of that lesson;
    `distinct_from`, the agent's word that it says something else than those (an agent's) lessons."""
    claim = normalize(" ".join(words))
    if not claim:
        raise UsageError("priors suggest: the lesson TEXT is empty")
    check_lesson_claim(claim, "priors suggest: the lesson TEXT")
    if supersedes is not None and not PRIOR_RE.match(supersedes):
        raise UsageError(f"priors suggest: --revises {supersedes!r} is not a prior id like P-0003")
    raw: Dict[str, Any] = {"type": "calibration", "claim": claim}
    if tags:
        raw["tags"] = check_tags(list(tags))
    if note is not None and normalize(note):
        raw["evidence"] = normalize(note)
    for pid in distinct_from:
        if not PRIOR_RE.match(pid):
            raise UsageError(f"priors suggest: --distinct-from {pid!r} is not a prior id like P-0003")
    if distinct_from:
        raw["distinct_from"] = sorted(set(distinct_from), key=lambda x: (len(x), x))
    require_init(paths)
    with Lock(paths):
        loaded, ledger = lesson_ledger(paths)
        st = ledger.state
        if ns is None:
            old = st.priors.get(supersedes) if supersedes else None
            if supersedes and old is None:
                raise UsageError(f"priors suggest: --revises names {supersedes}, which is not a prior in the ledger")
            if old is None or not isinstance(old.ns, str):
                raise UsageError("priors suggest: give --ns NS (or --revises P-… to take that lesson's namespace)")
            ns = old.ns
        if supersedes is not None:
            raw["supersedes"] = supersedes
        refuse_if_open(paths, st, "suggest")
        run = next_run_id(st, list_run_dirs(paths))
        rf = RunFiles(run, {"ns": ns, "run": run, "scopes": {}, "inject": [], "verify": []})
        known = rf.known_keys = lesson_keys.load(paths.dir)  # (lessons' signatures from earlier calls)
        rf.keep_likes = False  # (one candidate: each lesson is compared once)
        try:
            cand, current, esc = judge_candidate(st, rf, raw, ns)
        finally:
            del rf  # (its pool let go before the signatures are written)
            lesson_keys.save(paths.dir, known)
        del known  # (the lessons' signatures let go before the write: ~8 MB at 100k)
        if esc is not None:
            raise reversal_refusal(esc)
        pid = f"P-{st.max_prior + 1:04d}"
        rec = prior_record(cand, pid, ns, run, current)
        what = f"revises {supersedes}" if supersedes else "a new lesson"
        kept = supersedes is not None and st.priors[supersedes].binding  # a person's: accepting leaves it in force
        summary = [f"Suggested by an agent: {pid} ({what}) — open, awaiting your review"]
        lines: List[Dict[str, Any]] = [
            rec,
            {"t": "injected", "run": run, "ids": []},
            {"t": "run", "action": "commit", "run": run, "ns": ns, "summary": summary, "via": SUGGEST_VIA,
             "door": DOOR},
        ]
        append_and_apply(paths, loaded, lines)
    said = f", which a person settled: accepting it leaves {supersedes} in force unless they name it" if kept else ""
    text = (f"{pid} suggested in {ns} ({what}{said}) — open until a person decides (`priors status --calls` lists it):\n"
            f"  priors decide {pid} accepted\n" + (f"  priors decide {pid} accepted --retires {supersedes}\n" if kept else "")
            + f"  priors decide {pid} obsolete")
    out: Dict[str, Any] = {"id": pid, "ns": ns, "run": run}
    if supersedes:
        out["supersedes"] = supersedes
    return Answer(0, out, text)
