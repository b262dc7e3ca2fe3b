"""What waits for a person, read from the ledger: `priors status` (and its `--calls`), the asks the
terminal walk of `priors decide` goes through, and the lessons loop's calls both of them add —
lessons that keep losing, and (with `require_review`) lessons a person has not accepted yet.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.desk import commands, findings_under, open_asks, waiting
from priors.core.errors import UsageError
from priors.core.lessons import Ledger, call_lines_for, fmt_score, is_lesson, score_lines_for
from priors.core.views import BUCKETS, check_namespace, known_namespaces, namespaces, status_text, tally
from priors.store.config import config_if_set_up
from priors.store.ledger import load_ledger, open_runs, read_records
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

    from priors.core.fold import State


def lesson_calls(paths: Paths, st: State, ledger: Optional[Ledger] = None) -> Tuple[Dict[str, str], List[str]]:
    """(low-scoring lessons: id → score line, proposed lessons held for review) — the lessons loop's
    calls. `ledger`: the lessons loop's view of the ledger, when the caller has one already."""
    review = bool(config_if_set_up(paths).get("require_review", False))
    if not st.scored and not review:
        return {}, []
    if ledger is None:
        ledger = Ledger.of(read_records(paths), st)
    low = {pid: f"scored {fmt_score(s.score)} over {s.scored} runs" for pid, s in ledger.low_scores().items()}
    held = [p.id for p in st.priors.values() if is_lesson(p) and p.status == "open"] if review else []
    return low, held


def asks_now(paths: Paths, with_open: bool, ns: Optional[str], where: Sequence[str]) -> List[Dict[str, Any]]:
    """Everything waiting for a person now, in the order the walk asks; `with_open`: the open
    findings too (of namespace `ns`, under the paths `where`)."""
    st = load_ledger(paths, want_data=False).state
    if with_open and ns is not None:
        check_namespace("decide", [ns], known_namespaces(st))
    if with_open:
        for path in where:  # a mistyped path would walk nothing and look like a clean slate
            if not findings_under(st, ns, path):
                raise UsageError(f"priors decide: {path}: no finding in the ledger lies under it"
                                 + (f" in namespace {ns}" if ns is not None else ""))
    low, held = lesson_calls(paths, st)
    asks = waiting(st, low, held)
    if with_open:
        named = {a["id"] for a in asks}
        asks += [a for a in open_asks(st, ns, where) if a["id"] not in named]
    return asks


def _score_extras(paths: Paths, st: State) -> Optional[Callable[[str, bool], Tuple[List[str], List[str]]]]:
    """`status` extras: per namespace, score lines and (with --calls) keep-or-retire and review calls."""
    review = bool(config_if_set_up(paths).get("require_review", False))
    if not st.scored and not review:
        return None
    ledger = Ledger(st)  # statistics are computed once, on first use, for every namespace

    def extras(ns: str, with_calls: bool) -> Tuple[List[str], List[str]]:
        return score_lines_for(ledger, ns), (call_lines_for(ledger, ns, review) if with_calls else [])

    return extras


def status(paths: Paths, calls: bool, as_json: bool) -> Answer:
    """Where each namespace stands. The JSON form counts per namespace and, with `calls`, lists the
    calls as the desk holds them, each with the `priors decide` commands that answer it."""
    st = load_ledger(paths, want_data=False).state
    running = open_runs(paths, st)
    if not as_json:
        return Answer(0, None, status_text(st, calls, _score_extras(paths, st), running))
    counts = tally(st)
    rows = [dict(counts.get(ns) or dict.fromkeys(BUCKETS, 0), ns=ns) for ns in namespaces(st, list(counts))]
    obj: Dict[str, Any] = {"namespaces": rows, "open_runs": list(running)}
    if calls:
        low, held = lesson_calls(paths, st)
        obj["calls"] = [dict(ask, commands=commands(ask)) for ask in waiting(st, low, held)]
    return Answer(0, obj)
