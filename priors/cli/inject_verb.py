"""`priors lessons --inject`: lessons for a coding session's system prompt, and scoring that session.

Read-only with respect to the ledger: no run is opened, nothing is appended. The lessons are
chosen, ranked and budgeted by the very functions `relevant` uses (`core.inject.lesson_pool`,
`core.lessons.shape`); what the session was given goes to the local session record
(`store.session`), so that `priors score last` can credit a session that never opened a run.
"""

from __future__ import annotations

from priors.core.canonical import dumps
from priors.core.errors import MachineError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional

INJECT_ONLY = ("query", "session", "fresh", "new_only", "max_inject", "max_chars")


def check_options(a) -> None:
    """`--query` and friends belong to `--inject`; `--all` does not."""
    if a.get("inject"):
        if a.get("all"):
            raise UsageError("priors lessons: --all lists retired lessons; --inject gives only the live ones")
        key = a.get("session")
        if key is not None:
            from priors.core.inject import check_key

            if not check_key(key):
                raise UsageError(f"priors lessons: bad --session {key!r} — the harness's session id: letters, digits,"
                                 " '.', '_', ':' and '-', at most 128 characters")
        return
    for name in INJECT_ONLY:
        if a.get(name) is not None:
            raise UsageError(f"priors lessons: --{name.replace('_', '-')} goes with --inject")


def cmd_inject(a, ctx) -> int:
    """Print the lessons for this session (nothing when there is no .priors/ or no lesson)."""
    from priors.store.paths import Paths

    paths = Paths(ctx.root)
    as_json = bool(a.get("json"))
    if not paths.dir.is_dir():
        return _print(ctx, as_json, {"inject": [], "inject_omitted": []}, "")
    from priors.cli.lesson_config import budget_from
    from priors.core.inject import already_given, block, lesson_pool, record
    from priors.store.ledger import load
    from priors.store.session import read_session, write_session

    budget = budget_from(a, paths, "lessons")
    _, st = load(paths, want_data=False)
    namespaces = a.get("ns")
    pool = lesson_pool(st, list(namespaces) if namespaces else None)
    out: Dict[str, Any] = {"inject": pool, "inject_omitted": []}
    if budget is not None and budget.active and pool:
        from priors.core.lessons import Ledger, shape

        shaped = shape({"inject": pool}, Ledger(st), budget)  # `relevant`'s ranking and budgets, not a copy
        out = {"inject": shaped["inject"], "inject_omitted": shaped["inject_omitted"]}
        if "awaiting_review" in shaped:
            out["awaiting_review"] = shaped["awaiting_review"]
    items: List[Dict[str, Any]] = out["inject"]
    key = a.get("session")
    fresh = bool(a.get("fresh"))
    old = read_session(paths)
    if a.get("new_only"):
        have = already_given(old, key, fresh)
        out["already_given"] = [i["id"] for i in items if i["id"] in have]
        items = [i for i in items if i["id"] not in have]
    out["inject"] = [_described(st, i) for i in items]
    if not items:
        return _print(ctx, as_json, out, "")
    rec = record(old, key, fresh, st.records, [i["id"] for i in items])
    try:
        write_session(paths, rec)
        out["seq"] = rec["seq"]
    except (OSError, UsageError, MachineError) as exc:  # the lessons still go out; only the credit for them is lost
        from priors.store.files import WARNINGS

        detail = getattr(exc, "strerror", None) or str(exc)
        WARNINGS.append(f"priors: warning: could not record the session in .priors/cache/ ({detail}); "
                        "`priors score last` will not credit these lessons")
    return _print(ctx, as_json, out, block(items, {i["id"]: _tags(st, i["id"]) for i in items}))


def _described(st, item: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(item)
    p = st.priors[item["id"]]
    out["ns"] = p.ns
    tags = _tags(st, item["id"])
    if tags:
        out["tags"] = tags
    return out


def _tags(st, pid: str) -> List[str]:
    t = st.priors[pid].rec.get("tags")
    return [x for x in t if isinstance(x, str)] if isinstance(t, list) else []


def _print(ctx, as_json: bool, out: Dict[str, Any], text: str) -> int:
    if as_json:
        ctx.print(dumps(out))
    elif text:
        ctx.print(text)
    return 0


# ------------------------------------------------------------------ scoring the session


def session_targets(paths, ledger) -> Optional[List[str]]:
    """`score last` when the session record says so: the runs sealed for the scored session (when
    the latest agent run is one of them), else None — `last` means the latest run, or a session
    newer than it, which `seal_session` turns into runs."""
    from priors.store.session import read_session

    session = read_session(paths)
    if session is None or not session.get("sealed"):
        return None
    agent = [r for r in ledger.runs.values() if not r.by_human]
    if not agent:
        return None
    latest = max(agent, key=lambda r: r.index).run
    sealed = [r for r in session["sealed"] if r in ledger.runs]
    return sealed if latest in sealed else None


def pending_session(paths, ledger) -> Optional[Dict[str, Any]]:
    """The unscored session, when it is newer than the latest committed agent run."""
    from priors.core.inject import session_is_last
    from priors.store.session import read_session

    session = read_session(paths)
    agent = [r for r in ledger.runs.values() if not r.by_human]
    last_at = max(r.index for r in agent) if agent else None
    return session if session_is_last(session, last_at) else None


def seal_session(paths, ledger, session: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The lines sealing the session as runs (empty when none of its lessons is left)."""
    from priors.core.inject import seal_lines
    from priors.store.paths import list_run_dirs

    return seal_lines(ledger.state, session["ids"], list_run_dirs(paths))


def remember_sealed(paths, session: Dict[str, Any], runs: List[str]) -> None:
    """After the ledger landed: the session record notes its runs, so a new injection starts a new session."""
    from priors.store.session import write_session

    rec = dict(session)
    rec["sealed"] = list(runs)
    write_session(paths, rec)
