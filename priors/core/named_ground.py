"""A finding's named ground (door 7): a person's decision on a definition the finding's words name, held
to it wherever the finding is placed in that definition's file, or on a folder holding it or `*` — as
SETTLED_NEARBY holds a finding on the decided definition itself (`protocol.settled_nearby`). A rewording
the similarity measure misses could otherwise step beside the decision (hostile pass 27ah).
"""

from __future__ import annotations

import re

from priors.core.fold import PriorState
from priors.core.grammar import Candidate
from priors.core.letters import as_read
from priors.core.similarity import scopes_related, settled_near

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Dict, List, Optional, Sequence


def ground_of(cand: Candidate) -> Optional[str]:
    """Where a finding's named ground is looked for (`named_ground`): the file of the definition it stands
    on, else the file, folder or `*` itself; None for what has no such ground (a repo-wide candidate, a
    lesson, a floor, an analyzer's result)."""
    ref = cand.scope_ref
    if (cand.repo_wide or not isinstance(ref, str) or cand.identity is not None
            or cand.facets.get("activation") != "verify-phase"):
        return None
    return ref.split("#", 1)[0]


def named_ground(priors: Sequence[PriorState], cand: Candidate) -> List[PriorState]:
    """The decisions among `priors` that a finding stands beside by its own words: a person's binding
    finding on a definition (its file the finding's, or inside the finding's folder or `*`) whose name the
    claim says as a word (`total` in "total() ignores discounts", not in `grand_total`), on other ground
    than `settled_near` already relates. From door 7 such a finding must name the decision in
    `distinct_from` (SETTLED_NEARBY), as on the decided definition itself: a rewording the measure misses,
    placed on a folder, `*` or a sibling definition, otherwise escaped it (hostile pass 27ah)."""
    ref = cand.scope_ref
    if ground_of(cand) is None or not isinstance(ref, str):
        return []
    out, seen = [], set()
    for p in priors:
        at = p.scope_ref
        if (p.id in seen or not p.binding or p.redacted or not isinstance(at, str) or "#" not in at
                or p.facet("activation") != "verify-phase" or settled_near(at, ref)):
            continue
        name = _def_name(at)
        if name is not None and _word_in(name, cand.claim):
            seen.add(p.id)
            out.append(p)
    return out


_CODE_BEFORE = frozenset("`.#:>'\"<[$@")  # a character that makes the name after it code: `x`, a.x, ->x, 'x', <x>
_CODE_AFTER = frozenset("(`\"[>=")  # one after it (spaces skipped before `(` and `[`): x(), x [0], x= — not `'`: rate's


def _word_in(name: str, text: str) -> bool:
    """`name` in `text` as a whole identifier written as code, case aside, as it reads (`letters.as_read`:
    look-alike and full-width letters, invisible characters): marked as code by a character beside it
    (`_CODE_BEFORE`, `_CODE_AFTER`: `rate()`, `rate ()`, `` `rate` ``, `'rate'`, `.rate`, `->rate`,
    `<rate>`, `rate[0]`, `rate=`) — or anywhere, for a name no English word spells (`snake_case`,
    `camelCase`, a digit). "a flat rate" names no `rate()` (hostile pass 27aj: a common word is not the
    definition); hostile pass 27al found the marks the first list missed."""
    low, key = as_read(text), as_read(name)
    coded = "_" in name or any(c.isdigit() for c in name) or any(c.isupper() for c in name[1:])
    at = low.find(key)
    while at >= 0:
        end = at + len(key)
        before, after = low[at - 1] if at else "", low[end] if end < len(low) else ""
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            spaced = low[end:].lstrip(" ")[:1]
            if coded or before in _CODE_BEFORE or after in _CODE_AFTER or spaced in ("(", "["):
                return True
        at = low.find(key, at + 1)
    return False


_TOKEN = re.compile(r"\w{3,}")


def _def_name(ref: Optional[str]) -> Optional[str]:
    """A definition's own name as its ref spells it (`a.py#Cart.total` → `total`), or None for what is no
    definition or has a name too short to count (three characters or more)."""
    if not isinstance(ref, str) or "#" not in ref:
        return None
    name = ref.rsplit("#", 1)[1].rsplit(".", 1)[-1]
    return name if len(name) >= 3 else None


def name_of(ref: Optional[str]) -> Optional[str]:
    """`_def_name` as it reads (`letters.as_read`): the key `DecidedNames` holds a decision under."""
    name = _def_name(ref)
    return as_read(name) if name is not None else None


class DecidedNames:
    """A person's decided findings on definitions, by the definition's name: `verify`'s replay looks up
    the ones a finding's words may name by the words themselves, not by every decision inside a `*`
    or a folder the finding stands on (`named_ground` then reads each as the door does)."""

    __slots__ = ("by_name",)

    def __init__(self) -> None:
        self.by_name: Dict[str, List[PriorState]] = {}

    def add(self, p: PriorState) -> None:
        name = name_of(p.scope_ref)
        if name is not None:
            self.by_name.setdefault(name, []).append(p)

    def relocate(self, p: PriorState, old: Optional[str]) -> None:
        """`p` held under the name of its ref `old`, now under its new ref's (a `moved` event)."""
        name = name_of(old)
        held = self.by_name.get(name) if name is not None else None
        if held is not None and p in held:
            held.remove(p)
            self.add(p)

    def around(self, base: str, claim: str) -> List[PriorState]:
        """The decisions whose definition's name is among `claim`'s words, inside `base` (a file, a folder, `*`)."""
        if not self.by_name:
            return []
        out: List[PriorState] = []
        for word in set(_TOKEN.findall(as_read(claim))):
            for p in self.by_name.get(word, ()):
                if base == "*" or scopes_related(base, p.scope_ref):
                    out.append(p)
        return out
