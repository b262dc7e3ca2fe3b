"""`priors lessons`: the list of lessons with their records, and with `--inject` the lessons for a
coding session's system prompt, with the session record that lets `priors score last` credit a
session that never opened a run.

Read-only with respect to the ledger: no run is opened, nothing is appended. The lessons are
chosen, ranked and budgeted by the very functions `relevant` uses (`core.inject.lesson_pool`,
`core.lessons.shape`); what the session was given goes to the local session record
(`store.session`), which `score last` later seals as runs (ops/score.py).
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.errors import MachineError, UsageError
from priors.core.inject import already_given, block, check_key, given_in_chain, lesson_pool, record, seal_lines
from priors.core.lessons import Budget, Ledger, lesson_rows, lessons_table, shape
from priors.core.unseen import lessons_unseen
from priors.core.views import check_namespace, known_namespaces
from priors.core.vocabulary import SESSION_VIA
from priors.ops.budget import budget_for
from priors.store.config import read_config
from priors.store.files import WARNINGS
from priors.store.ledger import load_ledger
from priors.store.paths import Paths, list_run_dirs, require_init
from priors.store.session import highest_seq, latest_session, read_session, write_session

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from priors.core.fold import State


def check_session_key(key: Optional[str]) -> None:
    """`--session KEY`: the harness's session id, a name (it is written to the session record)."""
    if key is not None and not check_key(key):
        raise UsageError(f"priors lessons: bad --session {key!r} — the harness's session id: letters, digits,"
                         " '.', '_', ':' and '-', at most 128 characters")


# With no max_chars set (config or option), a session's lessons are cut to this many characters of
# text once they would pass it: a prompt is not a place for pages of lessons. Binding lessons stay.
DEFAULT_SESSION_CHARS = 8000


def inject(paths: Paths, ns: Optional[Sequence[str]], max_inject: Any, max_chars: Any, query: Any,
           key: Optional[str], fresh: bool, new_only: bool, remember: bool = True,
           hold_proposals: bool = False) -> Answer:
    """The lessons for this session (text: the advisory block; nothing where there is no .priors/
    or no lesson). JSON: `{"inject", "inject_omitted"[, "awaiting_review", "already_given", "seq"]}`.
    `hold_proposals`: open lessons wait for a person unless `require_review` is set off (pi-prior's
    default, which the Pi extension asks for)."""
    check_session_key(key)
    if not paths.dir.is_dir():
        return Answer(0, {"inject": [], "inject_omitted": []}, "")
    if read_config(paths).get("inject") is False:  # `priors config inject off`: the person turned it off
        return Answer(0, {"inject": [], "inject_omitted": [], "off": True}, "")
    budget = budget_for(paths, max_inject, max_chars, query, "lessons", review_default=hold_proposals)
    st = load_ledger(paths, want_data=False).state
    pool, waiting = _one_version(st, lesson_pool(st, list(ns) if ns else None))
    if (budget is None or budget.max_chars is None) and \
            sum(len(str(i.get("claim") or "")) for i in pool) > DEFAULT_SESSION_CHARS:
        budget = budget or Budget()
        budget.max_chars = DEFAULT_SESSION_CHARS
    out: Dict[str, Any] = {"inject": pool, "inject_omitted": []}
    if budget is not None and budget.active and pool:
        shaped = shape({"inject": pool}, Ledger(st), budget)  # `relevant`'s ranking and budgets, not a copy
        out = {"inject": shaped["inject"], "inject_omitted": shaped["inject_omitted"]}
        if "awaiting_review" in shaped:
            out["awaiting_review"] = shaped["awaiting_review"]
    if waiting:
        out["awaiting_review"] = sorted({*out.get("awaiting_review", ()), *waiting}, key=_number)
    items: List[Dict[str, Any]] = out["inject"]
    old = read_session(paths, key)
    if new_only:
        have = already_given(old, key, fresh)
        out["already_given"] = [i["id"] for i in items if i["id"] in have]
        items = [i for i in items if i["id"] not in have]
    out["inject"] = [_described(st, i) for i in items]
    if not items:
        return Answer(0, out, "")
    if not remember:  # a lookup (the `priors_lessons` tool's retrieve): nothing is given to a session
        return Answer(0, out, block(items, {i["id"]: _tags(st, i["id"]) for i in items}))
    rec = record(old, key, fresh, st.records, [i["id"] for i in items], highest_seq(paths) + 1)
    try:
        write_session(paths, rec)
        out["seq"] = rec["seq"]
    except (OSError, UsageError, MachineError) as exc:  # the lessons still go out; only the credit for them is lost
        detail = getattr(exc, "strerror", None) or str(exc)
        WARNINGS.append(f"priors: warning: could not record the session in .priors/cache/ ({detail}); "
                        "`priors score last` will not credit these lessons")
    return Answer(0, out, block(items, {i["id"]: _tags(st, i["id"]) for i in items}))


def _one_version(st: State, pool: List[Dict[str, Any]]) -> Tuple[List[Dict[str, Any]], List[str]]:
    """A session is never given two versions of one lesson: an open revision waits (for a person to
    activate it, which retires what it revises) while the lesson it revises, or one that one revises in
    turn, is given (`inject.given_in_chain`, as `relevant` holds a run's back). Nor a lesson a parallel
    branch's run wrote without seeing a person's decision on a lesson (`unseen.lessons_unseen`)."""
    keep: List[Dict[str, Any]] = []
    waiting: List[str] = []
    memo: Dict[str, Optional[str]] = {}
    for item in pool:
        p = st.priors[item["id"]]
        if p.status == "open" and (given_in_chain(st, p.rec.get("supersedes"), memo) is not None
                                   or p.id in st.unseen and lessons_unseen(st, p)):
            waiting.append(p.id)
        else:
            keep.append(item)
    return keep, waiting


def _number(pid: str) -> Tuple[int, str]:
    return (int(pid[2:]) if pid[2:].isdigit() else 0, pid)


def _described(st: State, item: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(item)
    p = st.priors[item["id"]]
    out["ns"] = p.ns
    tags = _tags(st, item["id"])
    if tags:
        out["tags"] = tags
    return out


def _tags(st: State, pid: str) -> List[str]:
    t = st.priors[pid].rec.get("tags")
    return [x for x in t if isinstance(x, str)] if isinstance(t, list) else []


# ------------------------------------------------------------------ scoring the session


def scorable_runs(ledger: Ledger) -> List[Any]:
    """Committed runs a score may name: agent runs — not a person's `add`/`import`, not a lesson an
    agent suggested outside a run (`priors suggest`)."""
    return [r for r in ledger.runs.values() if r.scorable]


def session_targets(session: Optional[Dict[str, Any]], ledger: Ledger, tag: Optional[str] = None
                    ) -> Optional[List[str]]:
    """The runs sealed for a scored session that are still in the ledger, or None. The record is a
    local file anything can write, so only what a session's scoring seals counts: a run sealed as a
    coding session (`via: session`) shown nothing the record says its session was not given, and
    sealed for this very session — its seal's `session` is `tag` (the sha12 of the record's key;
    none for a keyless session). A record naming a keeper run, or another session's runs, never
    turns a person's score to them; nor does a seal no score follows (`score` writes both at once:
    one without was written by hand)."""
    if session is None or not session.get("sealed"):
        return None
    given = set(session.get("ids") or ())
    out = []
    for r in session["sealed"]:
        info = ledger.runs.get(r)
        if info is None or info.rec.get("via") != SESSION_VIA or not set(ledger.shown_for(r) or ()) <= given:
            continue
        if info.rec.get("session") != tag:
            continue
        if not ledger.scores.get(r):  # `score` seals a session with its score, in one write: a seal with
            continue  # none was written by hand (an agent's), and a person's --again/--replace never reaches it
        out.append(r)
    return out or None


def last_session(paths: Paths, ledger: Ledger) -> Optional[Dict[str, Any]]:
    """What `score last` means when it is a session: the session given lessons most recently on this
    machine, when that was after the latest keeper run was sealed (a session sealed by scoring is
    dated by its lessons, not by its score: scoring one session does not make another older)."""
    latest = latest_session(paths)
    if latest is None or not latest.get("ids"):
        return None
    keeper = [r.index for r in scorable_runs(ledger) if r.rec.get("via") != SESSION_VIA]
    return latest if not keeper or latest["at"] > max(keeper) else None


def keyed_session(paths: Paths, key: str) -> Optional[Dict[str, Any]]:
    check_session_key(key)
    return read_session(paths, key)


def is_pending(session: Optional[Dict[str, Any]]) -> bool:
    """Is the session given lessons and not scored yet?"""
    return session is not None and not session.get("sealed") and bool(session.get("ids"))


def seal_session(paths: Paths, ledger: Ledger, session: Dict[str, Any], tag: Optional[str] = None
                 ) -> List[Dict[str, Any]]:
    """The lines sealing the session as runs (empty when none of its lessons is left); `tag`: the
    sha12 of its key, which each seal carries."""
    return seal_lines(ledger.state, session["ids"], list_run_dirs(paths), tag)


def remember_sealed(paths: Paths, session: Dict[str, Any], runs: List[str]) -> None:
    """After the ledger landed: the session record notes its runs, so a new injection starts a new session."""
    rec = dict(session)
    rec["sealed"] = list(runs)
    write_session(paths, rec)


def list_lessons(paths: Paths, ns: Optional[Sequence[str]], include_all: bool, verb: str = "lessons") -> Answer:
    """Every lesson with its outcome record (`priors lessons`, `list --lessons`); JSON: the rows."""
    require_init(paths)
    st = load_ledger(paths, want_data=False).state
    if ns:
        check_namespace(verb, ns, known_namespaces(st))
    rows = lesson_rows(Ledger(st), list(ns) if ns else None, include_all)
    return Answer(0, rows, lessons_table(rows))


# pi-prior's statuses over ours: active = a person accepted (or kept) it; proposed = open, no person
# has decided; inactive and rejected = retired (obsolete). `all`: every lesson.
TOOL_STATUSES = {"active": ("accepted", "wontfix"), "proposed": ("open",), "inactive": ("obsolete",),
                 "rejected": ("obsolete",), "all": None}


def lessons_by_status(paths: Paths, status: str, ns: Optional[Sequence[str]]) -> Answer:
    """The lessons in one of pi-prior's statuses (`priors lessons --status`, the tool's `list`)."""
    if status not in TOOL_STATUSES:
        raise UsageError(f"priors lessons: --status must be one of {', '.join(TOOL_STATUSES)}")
    require_init(paths)
    want = TOOL_STATUSES[status]
    rows = lesson_rows(Ledger(load_ledger(paths, want_data=False).state), list(ns) if ns else None,
                       want is None or "obsolete" in want)
    if want is not None:
        rows = [r for r in rows if r.get("status") in want]
    return Answer(0, rows, lessons_table(rows) if rows else "no lessons" if status == "all" else f"no {status} lessons")
