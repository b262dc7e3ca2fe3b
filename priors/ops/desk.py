"""What waits for a person, read from the ledger: `priors status` (and its `--calls`), the asks the
terminal walk of `priors decide` goes through, and the lessons loop's calls both of them add —
lessons that keep losing, and (with `require_review`) lessons a person has not accepted yet.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.desk import call_text, commands, findings_under, open_asks, waiting, waiting_in_order
from priors.core.errors import UsageError
from priors.core.lessons import Ledger, fmt_score, is_lesson, score_lines_for
from priors.core.views import BUCKETS, check_namespace, known_namespaces, namespaces, status_lines, status_text, tally
from priors.store.config import config_if_set_up
from priors.store.ledger import load_ledger, open_runs
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

    from priors.core.fold import State


def lesson_calls(paths: Paths, st: State, ledger: Optional[Ledger] = None) -> Tuple[Dict[str, str], List[str]]:
    """(low-scoring lessons: id → score line, proposed lessons held for review) — the lessons loop's
    calls. `ledger`: the lessons loop's view of the ledger, when the caller has one already."""
    review = bool(config_if_set_up(paths).get("require_review", False))
    if not st.scored and not review:
        return {}, []
    if ledger is None:
        ledger = Ledger(st)  # (its low scores read the fold: the records, read here before, were never used)
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


def _score_extras(st: State) -> Optional[Callable[[str], List[str]]]:
    """`status` extras: per namespace, the scored lessons' score lines (none before a run is scored)."""
    if not st.scored:
        return None
    ledger = Ledger(st)  # statistics are computed once, on first use, for every namespace

    def extras(ns: str) -> List[str]:
        return score_lines_for(ledger, ns)

    return extras


def status(paths: Paths, calls: bool, as_json: bool) -> Answer:
    """Where each namespace stands. With `calls`, what waits for a person as the desk holds it (the walk's
    asks), each with the `priors decide` commands that answer it — as text, one command a line."""
    st = load_ledger(paths, want_data=False).state
    running = open_runs(paths, st)
    low, held = lesson_calls(paths, st) if calls else ({}, [])
    if not as_json:
        if calls:
            # each ask's lines kept as one piece of UTF-8 (half a UCS-2 text's size, one object an ask), the fold
            # let go before they are decoded and joined: the peak of `status --calls` at 100k priors 140 -> ~105 MB
            by_ns: Dict[str, List[bytes]] = {}
            for ask in waiting_in_order(st, low, held):  # (each ask printed, then dropped: none held all at once)
                by_ns.setdefault(ask["ns"], []).append("\n".join(call_text(ask)).encode("utf-8", "surrogatepass"))
            lines = status_lines(st, by_ns, _score_extras(st), running)
            del st, by_ns
            # printed a piece at a time, each ask's text decoded as it is written, never joined: the text of
            # 25k asks (plain bench shape, 100k priors) was ~30 MB as one string, and as many again in pieces
            return Answer(0, None, chunks=_decoded(lines)) if lines else Answer(0, None, "")
        return Answer(0, None, status_text(st, None, _score_extras(st), running))
    asks = waiting(st, low, held) if calls else []
    counts = tally(st)
    rows = [dict(counts.get(ns) or dict.fromkeys(BUCKETS, 0), ns=ns) for ns in namespaces(st, list(counts))]
    obj: Dict[str, Any] = {"namespaces": rows, "open_runs": list(running)}
    if calls:
        obj["calls"] = [dict(ask, commands=commands(ask)) for ask in asks]
    return Answer(0, obj)


def _decoded(lines: List[Any]) -> Iterator[str]:
    """`status --calls`' lines (each ask's text one piece of UTF-8) as text, a newline between each two —
    a few hundred decoded and joined at a time as they are printed, never all."""
    for at in range(0, len(lines), 256):
        run = lines[at:at + 256]
        yield ("\n" if at else "") + "\n".join(x if isinstance(x, str) else x.decode("utf-8", "surrogatepass")
                                               for x in run)
