"""Priors indexed by scope ref: a candidate meets only the priors whose scope can matter to it.

The door's pool (`protocol.ProposePool`) is one; `verify`'s replay keeps one per namespace and the
priors a person decided in others (core/ledger_replay.py), with the maps of one prior or several
(`held_in`, `dropped_from`) its exact rule looks priors up in.
"""

from __future__ import annotations

import bisect

from priors.core.fold import PriorState
from priors.core.grammar import Candidate
from priors.core.plain import Plain
from priors.core.sorted_strings import SortedStrings

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Optional


class ScopeIndex(Plain):
    """Priors indexed by scope ref, so that a candidate meets only the priors whose scope can matter
    to it (the same, a containing or contained scope, a prefix for floors), in the order they were
    added: exactly what a scan of every prior would find, without scanning them all for every
    candidate. The door's pool (`ProposePool`) is one; `verify`'s replay keeps one per namespace
    and adds each prior as the ledger brings it (core/ledger_replay.py)."""

    __slots__ = ("items", "by_ref", "refs", "wide", "lengths")

    def __init__(self) -> None:
        self.items: List[PriorState] = []
        # ref -> the positions of the priors held under it: one position as an int, several as a list (most
        # refs hold one prior: a list each costs ~6 MB at 100k priors in `verify`'s replay)
        self.by_ref: Dict[str, Any] = {}
        self.lengths: List[int] = []  # the lengths of the refs held, ascending: the only prefixes worth looking up
        self.refs: Optional[SortedStrings] = SortedStrings()  # for the refs inside a scope (None while a pool is built)
        self.wide: List[int] = []  # repo-wide priors

    def add(self, p: PriorState) -> None:
        pos = len(self.items)
        self.items.append(p)
        ref = p.scope_ref
        if isinstance(ref, str):
            self.hold(ref, pos)
        if p.facet("scope") == "repo-wide":
            self.wide.append(pos)

    def relocate(self, p: PriorState, old: Optional[str]) -> None:
        """`p`, held under the ref `old`, moved with its code (core/moves.py): held under its new ref."""
        if old is None or p.scope_ref == old:
            return
        held = self.positions(old)
        pos = next((i for i in held if self.items[i] is p), None)
        if pos is None:
            return
        rest = [i for i in held if i != pos]
        if rest:
            self.by_ref[old] = rest if len(rest) > 1 else rest[0]
        else:
            del self.by_ref[old]
            if self.refs is not None and old in self.refs:
                self.refs.remove(old)
        ref = p.scope_ref  # (its place in the pool's order stays: the order is the ledger's)
        if isinstance(ref, str):
            self.hold(ref, pos)

    def positions(self, ref: str) -> List[int]:
        """The positions of the priors held under `ref`, ascending."""
        got = self.by_ref.get(ref)
        return [] if got is None else got if type(got) is list else [got]

    def hold(self, ref: str, pos: int) -> None:
        """`pos` held under `ref` in order; a new ref's place among the refs and its length among the
        lengths made when it first comes."""
        got = self.by_ref.get(ref)
        if got is None:
            self.by_ref[ref] = pos
            if self.refs is not None:
                self.refs.add(ref)
            n = len(ref)
            at = bisect.bisect_left(self.lengths, n)
            if at == len(self.lengths) or self.lengths[at] != n:
                self.lengths.insert(at, n)
        elif type(got) is list:
            bisect.insort(got, pos)
        else:
            self.by_ref[ref] = [got, pos] if got < pos else [pos, got]

    def around(self, cand: Candidate) -> List[PriorState]:
        """The priors, in pool order, whose scope is the candidate's, contains it or lies inside it,
        is a string prefix of it (a floor's reach) or `*` — and the repo-wide ones."""
        return self.around_ref(cand.scope_ref)

    def around_ref(self, ref: Optional[str]) -> List[PriorState]:
        """`around` a scope ref (None: a repo-wide candidate's)."""
        if ref is None or ref == "*":
            return list(self.items) if ref == "*" else [self.items[i] for i in sorted(set(self.wide) | set(
                self.positions("*")))]

        by_ref, got, most = self.by_ref, [], len(ref)  # the position lists that apply; mostly none, so no set is made
        for n in self.lengths:  # every prefix of `ref` that is a ref held (`range(1, len(ref) + 1)`, less misses)
            if n > most:
                break
            held = by_ref.get(ref[:n])
            if held is not None:
                got.append(held if type(held) is list else (held,))
        for inside in self.refs.starting(ref) if self.refs is not None else ():
            if len(inside) > most:  # (the ref itself came with its prefixes)
                held = by_ref[inside]
                got.append(held if type(held) is list else (held,))
        star = by_ref.get("*")
        for extra in (self.wide, star if type(star) is list else (star,) if star is not None else ()):
            if extra:
                got.append(extra)
        items = self.items
        if not got:
            return []
        if len(got) == 1:  # one list: its positions are distinct and ascending already
            return [items[i] for i in got[0]]
        return [items[i] for i in sorted(set().union(*got))]


def held_in(held: Dict[Any, Any], key: Any, p: PriorState) -> None:
    """`p` held under `key` in a map of one prior or a list of them (most keys hold one, and a list each
    costs ~13 MB at 100k priors in `verify`'s replay): alone, or appended to those already there."""
    have = held.get(key)
    if have is None:
        held[key] = p
    elif type(have) is list:
        have.append(p)
    else:
        held[key] = [have, p]


def dropped_from(held: Dict[Any, Any], key: Any, p: PriorState) -> bool:
    """`p` no longer held under `key` (`held_in` undone); whether it was."""
    have = held.get(key)
    ps = have if type(have) is list else [have] if have is not None else []
    rest = [q for q in ps if q is not p]
    if rest and len(rest) < len(ps):
        held[key] = rest if len(rest) > 1 else rest[0]
    elif ps and not rest:
        del held[key]
    return len(rest) < len(ps)


def inner_named(index: Optional[ScopeIndex], inner_ref: str, inner: tuple) -> tuple:
    """The definitions inside `inner_ref` the run's snapshot is known to have held: those its own lines
    reveal (`inner`, as the door finds them in the snapshot) and those any prior of the namespace
    names as its scope (`index.refs`, sorted) — the ledger keeps no snapshot, so these stand for it."""
    if index is None or inner_ref == "*" or inner_ref.endswith("/"):
        return inner
    lead = inner_ref + ("." if "#" in inner_ref else "#")
    out = list(inner)
    for ref in index.refs.starting(lead) if index.refs is not None else ():
        if len(out) >= 200:
            break
        if ref not in inner:
            out.append(ref)
    return tuple(out)
