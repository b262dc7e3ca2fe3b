"""`priors trace`: keep a harness's trace of one agent run of a coding session, prune the traces,
or say where everything private lives. Traces feed `priors reflect` once their session is scored
(`store/traces.py` marks them); until then the newest `max_traces` (config, default 100) are kept.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.errors import UsageError
from priors.core.settings import parse_count
from priors.core.traces import DEFAULT_MAX_TRACES, prune, shape_trace
from priors.ops.session import check_session_key
from priors.store.config import read_config
from priors.store.lock import Lock
from priors.store.paths import Paths, require_init
from priors.store.reflection import REFLECTION_DIR
from priors.store.session import all_sessions, read_session
from priors.store.traces import TRACES_DIR, TRACES_FILE, add_trace, read_traces, write_traces

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Optional


def keep_limit(paths: Paths) -> int:
    value = read_config(paths).get("max_traces")
    return value if isinstance(value, int) else DEFAULT_MAX_TRACES


def record(paths: Paths, key: Optional[str], obj: Any) -> Answer:
    """Keep one trace (checked, cut to size, secrets replaced) for session `key`."""
    check_session_key(key)
    require_init(paths)
    session = read_session(paths, key)
    given = list(session["last"]) if session is not None and not session.get("sealed") else []
    trace = shape_trace(obj, given)  # validated before anything is written
    # a trace cannot say a session was given lessons its record does not hold (one run's trace
    # pinned on another session would put words in that session's mouth for reflection)
    known = set(session["ids"]) if session is not None else set()
    foreign = [x for x in trace["given"] if x not in known]
    if foreign:
        who = f"session {key}" if key else "the keyless session"
        raise UsageError(f"priors trace: `given` names {', '.join(foreign)}, which {who} was not given (its record in"
                         " .priors/cache/ says what it was given) — nothing kept")
    if read_config(paths).get("capture") is False:
        return Answer(0, {"kept": False}, "not kept: capture is off (priors config capture on)")
    with Lock(paths):
        rec = add_trace(paths, trace, key, keep_limit(paths))
    return Answer(0, {"kept": True, "n": rec["n"]}, f"kept trace {rec['n']}"
                  + (f" of session {key}" if key else ""))


def prune_traces(paths: Paths, unscored: Any, scored: Any) -> Answer:
    """Keep the newest N unscored traces (default: max_traces) and, when asked, the newest M scored."""
    require_init(paths)
    keep_u = parse_count(unscored, "priors trace: --prune") if unscored is not None else keep_limit(paths)
    keep_s = parse_count(scored, "priors trace: --prune-scored") if scored is not None else None
    with Lock(paths):
        before = read_traces(paths)
        after = prune(before, keep_u, keep_s)
        if len(after) != len(before):
            write_traces(paths, after)
    gone = len(before) - len(after)
    return Answer(0, {"removed": gone, "kept": len(after)},
                  f"removed {gone} trace{'s' if gone != 1 else ''}, kept {len(after)}")


def where(paths: Paths) -> Answer:
    """Where the keeper keeps things, and how many traces and session records there are."""
    require_init(paths)
    traces = read_traces(paths)
    scored = sum(1 for t in traces if t.get("runs"))
    out: Dict[str, Any] = {
        "root": str(paths.root), "ledger": str(paths.ledger), "config": str(paths.dir / "config.json"),
        "traces": str(paths.dir / TRACES_DIR / TRACES_FILE), "reflection": str(paths.dir / REFLECTION_DIR),
        "sessions": str(paths.dir / "cache"), "unscored": len(traces) - scored, "scored": scored,
        "max_traces": keep_limit(paths), "session_records": len(all_sessions(paths)),
    }
    lines = [f"ledger      {out['ledger']}  (committed)",
             f"config      {out['config']}  (committed)",
             f"traces      {out['traces']}  (private: {out['unscored']}/{out['max_traces']} unscored,"
             f" {scored} scored)",
             f"reflection  {out['reflection']}  (private)",
             f"sessions    {out['sessions']}  (private: {out['session_records']} session"
             f" record{'s' if out['session_records'] != 1 else ''})"]
    return Answer(0, out, "\n".join(lines))


def check_modes(recording: bool, pruning: bool, listing: bool) -> None:
    if recording + pruning + listing != 1:
        raise UsageError("priors trace: give a trace (FILE or -), or --prune/--prune-scored, or --where")
