"""What a run's block reveals of the snapshot its run was judged on (`verify`'s replay).

The ledger keeps no snapshot: a run's scopes are known only as far as its own lines state them — a
new prior's `scope_ref`/`scope_hash`, a disposition's `scope_hash` on its prior's scope (or where a
`moved` event in the run took it), a move's target. Two hashes for one scope in one block are a hand
edit; neither is trusted. core/ledger_replay.py judges each of the block's findings against this.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

from priors.core.fold import PriorState


def revealed(lines: List[Tuple[int, Dict[str, Any]]], priors: Dict[str, PriorState]
             ) -> Tuple[Dict[str, Optional[str]], Set[Any]]:
    """(ref -> the hash the block states for it, None where it states two; the ids it disposes of)."""
    known: Dict[str, Optional[str]] = {}
    disposed: Set[Any] = set()
    moved: Dict[Any, Any] = {}  # prior -> the ref its code moved to in this run (core/moves.py)
    for _no, rec in lines:
        t = rec.get("t")
        if t == "event" and rec.get("action") == "moved":
            if isinstance(rec.get("id"), str):  # (any other id is named by the field checks)
                moved[rec["id"]] = rec.get("to")
            _reveal(known, rec.get("to"), rec.get("scope_hash"))
        elif t == "event" and rec.get("action") == "disposition":
            who: Any = rec.get("id")
            if isinstance(who, str):  # (any other id is named by the field checks)
                disposed.add(who)
            p = priors.get(who) if isinstance(who, str) else None
            if p is not None:
                _reveal(known, moved.get(who, p.scope_ref), rec.get("scope_hash"))
        elif t == "prior" and rec.get("redacted") is not True:
            _reveal(known, rec.get("scope_ref"), rec.get("scope_hash"))
    return known, disposed


def _reveal(known: Dict[str, Optional[str]], ref: Any, h: Any) -> None:
    if isinstance(ref, str) and isinstance(h, str):
        if known.get(ref, h) != h:
            known[ref] = None  # two hashes for one scope in one run: a hand edit; trust neither
        elif ref not in known:
            known[ref] = h
