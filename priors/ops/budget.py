"""The lessons loop's hooks into a run: the injection budget (`relevant` and `lessons --inject` share
it), the ranking `relevant` applies, and what it holds back. A module of its own so that a run's verbs
load the ranking and nothing else of the lessons loop.
"""

from __future__ import annotations

from priors.core.controls import without_controls
from priors.core.fold import prior_number
from priors.core.lessons import Budget, Ledger, shape
from priors.core.settings import parse_count
from priors.core.unseen import lessons_unseen
from priors.store.config import config_if_set_up
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Optional

    from priors.core.fold import State


def budget_for(paths: Paths, max_inject: Any = None, max_chars: Any = None, query: Any = None,
               verb: str = "relevant", review_default: bool = False) -> Optional[Budget]:
    """The injection budget: the options given over .priors/config.json (no options, no config: None,
    the contract's `relevant`). `lessons --inject` takes the same options and the same config.
    `review_default`: whether open lessons wait for a person when `require_review` is not set
    (`lessons --inject --hold-proposals`, pi-prior's default); a set value always wins."""
    cfg = config_if_set_up(paths)
    held = cfg.get("require_review")
    review = review_default if held is None else bool(held)
    if (max_inject is None and max_chars is None and query is None and cfg.get("max_inject") is None
            and cfg.get("max_chars") is None and not review):
        return None
    return Budget(
        max_inject=parse_count(max_inject, f"priors {verb}: --max-inject") if max_inject is not None else cfg.get("max_inject"),
        max_chars=parse_count(max_chars, f"priors {verb}: --max-chars") if max_chars is not None else cfg.get("max_chars"),
        query=without_controls(str(query)) if query is not None else None,
        require_review=review,
    )


def relevant_hook(budget: Optional[Budget], st: State, out: Dict[str, Any]) -> Dict[str, Any]:
    """Rank, budget and hold back `relevant`'s inject list; add low-score nudges.

    With no budget and no scores in the ledger, the contract's output is returned untouched — but for a
    lesson a parallel branch's run wrote without seeing a person's decision on a lesson: it waits for
    the person (`awaiting_review`), as a proposal does under `require_review` (`unseen.lessons_unseen`).
    """
    held = [i["id"] for i in out.get("inject", ()) if i.get("id") in st.unseen
            and lessons_unseen(st, st.priors[i["id"]])] if st.unseen else []
    if held:
        out = dict(out, inject=[i for i in out["inject"] if i.get("id") not in held])
    if (budget is not None and budget.active) or st.scored:
        out = shape(out, Ledger(st), budget or Budget())
    if held:
        out["awaiting_review"] = sorted({*out.get("awaiting_review", ()), *held}, key=lambda i: (prior_number(i), i))
    return out
