"""What `verify`'s replay keeps of each prior it folds (core/ledger_replay.py): the fields a rule reads,
held as a tuple of values beside the prior's state (`fold.PriorState`, packed) — not as a dict each.

A dict of a finding's ten kept fields takes ~330 bytes, its values' tuple ~100: the prior's state holds
its id, namespace, facets, scope ref and review_every in places of its own (those a packed record's
fields are read from), and the tuple the rest. A claim that is not ASCII (one dash makes every
character of it two bytes) is held as UTF-8, half its size, and decoded when asked (`claim_of`): the
rules read a finding's claim some ten thousand times a replay of 100k priors. Any other use of the
record reads it back whole (`inflate`, as the fold cache's packed records are): the same dict, key for
key and in the same order. A lesson's record is read back whole once the lookup by meaning files it
(`unpacked`): that lookup reads lessons' claims hundreds of thousands of times a replay, and compares
them by identity (core/lesson_likeness.py) — a lesson no lookup ever asks for stays packed.
"""

from __future__ import annotations

from operator import itemgetter

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, Optional, Tuple

# What of a prior's record the replay keeps (the rules read no more): a fold of 100k priors holds
# these, not their evidence.
KEEP_ORDER = ("t", "id", "ns", "type", "facets", "claim", "born", "scope_ref", "scope_hash", "direction", "opposes", "depth",
              "severity", "redacted", "review_every", "supersedes", "distinct_from", "rule", "fingerprint")
FEW_VALUES = ("t", "ns", "type", "born", "severity", "depth", "direction")  # kept once each (`KeptPriors.interned`)

# Where a packed prior's state holds a value of its record (`PriorState.LAYOUT`): its id, namespace and
# review_every always, its facets when they are a dict and its scope ref when it is a string (the places
# `PriorState.facet` and `scope_ref` read without the record).
_IN_STATE = {"id": 0, "ns": 8, "review_every": 10}
_FACETS, _REF = 7, 9
_FIXED = ("t", "type", "severity", "depth")  # a few values each: a string value is held by the shape, one for each
SHAPES_MAX = 1024  # shapes of record remembered: the keeper writes a few; past these a record is kept whole


def stored(rec: Dict[str, Any]) -> Dict[str, Any]:
    """A prior's line as the replay keeps it: the fields a rule reads (`KEEP_ORDER`), under the keys' own
    strings — the parser gives every line's keys strings of their own: 22 MB more at 100k, kept as parsed."""
    return {k: rec[k] for k in KEEP_ORDER if k in rec}


def _getter(keys: Tuple[str, ...]) -> Callable[[Dict[str, Any]], Tuple[Any, ...]]:
    if len(keys) > 1:
        return itemgetter(*keys)  # (several keys: a tuple)
    if keys:
        key = keys[0]
        return lambda rec: (rec[key],)
    return lambda rec: ()


class Kept:
    """One shape of kept record — its keys in order, whether its facets and ref are held by the state, the
    string value of each of `_FIXED` it holds (None: another value, in the tuple) — and the store
    (`PriorState._src`) its priors' records are read back from."""

    __slots__ = ("keys", "places", "take", "has_claim")

    def __init__(self, keys: Tuple[str, ...], facets_held: bool, ref_held: bool, *fixed: Any) -> None:
        in_state = dict(_IN_STATE, **({"facets": _FACETS} if facets_held else {}), **({"scope_ref": _REF} if ref_held else {}))
        held = {k: v for k, v in zip(_FIXED, fixed) if v is not None}
        self.has_claim = "claim" in keys
        rest = (("claim",) if self.has_claim else ()) + tuple(k for k in keys if k not in in_state and k not in held
                                                                and k != "claim")
        self.keys = keys
        # each value's place: in the tuple (its index), in the state (~its slot), or the shape's own ((value,))
        self.places = tuple(~in_state[k] if k in in_state else (held[k],) if k in held else rest.index(k) for k in keys)
        self.take = _getter(rest)

    def inflate(self, p: Any) -> Dict[str, Any]:
        vals = p[6]
        rec = {k: i[0] if isinstance(i, tuple) else vals[i] if i >= 0 else p[~i] for k, i in zip(self.keys, self.places)}
        if self.has_claim and type(vals[0]) is bytes:
            rec["claim"] = vals[0].decode("utf-8", "surrogatepass")
        return rec

    def claim_of(self, p: Any) -> Any:
        if not self.has_claim:
            return None
        c = p[6][0]
        return c.decode("utf-8", "surrogatepass") if type(c) is bytes else c


def held(claim: str) -> Any:
    """A claim as a packed prior holds it: as it is when ASCII, else as UTF-8 (two claims are held alike only
    when they are the same text)."""
    return claim if claim.isascii() else claim.encode("utf-8", "surrogatepass")


class Shapes(dict):
    """The shapes of the records a replay keeps (`Kept`), by their kind (`pack`), and the last one asked for."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        super().__init__()
        self.last: Tuple[Any, Any] = ((), None)


def pack(p: Any, rec: Dict[str, Any], shapes: Shapes, words: Dict[str, str]) -> bool:
    """Hold the state `p` of the prior whose record is `rec` (a `stored` one, which `p` holds) packed: its
    values in a tuple of one of `shapes` (a new shape added), the few values `words` holds once each
    (`KeptPriors.interned`) as those, its claim as UTF-8 when it is not ASCII, the record let go. False,
    nothing done, when `p` holds another record or the shapes are too many."""
    if p[5] is not rec:
        return False
    get = rec.get
    facets, ref, ns, born, t, typ, severity, depth = (get("facets"), get("scope_ref"), get("ns"), get("born"), get("t"),
                                                      get("type"), get("severity"), get("depth"))
    kind = (tuple(rec), type(facets) is dict, type(ref) is str, t if type(t) is str else None,
            typ if type(typ) is str else None, severity if type(severity) is str else None,
            depth if type(depth) is str else None)
    last = shapes.last
    if kind == last[0]:  # (the last prior's, mostly: a comparison of the same objects, not a hash of them)
        shape = last[1]
    else:
        shape = shapes.get(kind)
        if shape is None:
            if len(shapes) >= SHAPES_MAX:
                return False
            shape = shapes[kind] = Kept(*kind)
        shapes.last = (kind, shape)
    if type(born) is str:
        rec["born"] = words.setdefault(born, born)
    if "direction" in rec and type(rec["direction"]) is str:
        rec["direction"] = words.setdefault(rec["direction"], rec["direction"])
    vals = shape.take(rec)
    if shape.has_claim:
        c = vals[0]
        if type(c) is str and not c.isascii():
            vals = (held(c),) + vals[1:]
    p[6], p[7], p[8], p[9], p[10], p[11] = (vals, facets if kind[1] else None, words.setdefault(ns, ns) if type(ns) is str
                                            else ns, ref if kind[2] else None, get("review_every"), shape)
    p[5] = None
    return True


def unpacked(p: Any) -> None:
    """`p`'s record kept whole from now on (`LessonIndex.whole`: a lesson as the lookup by meaning files it)."""
    if type(p[11]) is Kept:  # (read back already, perhaps — by `rec`, which keeps what it reads: its values let go)
        p.rec = p.rec


class KeptPriors:
    """What a replay (`ledger_replay.Replay`) keeps of the priors it folds, and how it finds one by its claim."""

    words: Dict[str, str]  # each value of `FEW_VALUES` seen, once
    # namespace -> a normalized claim -> the first prior saying it: as UTF-8 for a prior holding it so (packed, its
    # claim stored normalized: the very object it holds, no second copy), else as text
    claims: Dict[str, Dict[Any, Any]]
    order: Dict[str, int]  # each prior's place (`Replay.order`)
    shapes: Shapes  # the shapes of the records kept

    def first_saying(self, ns: str, claim: str) -> Optional[Any]:
        """The first prior folded of namespace `ns` whose normalized claim is `claim` (`claims`, either way held)."""
        said = self.claims.get(ns, {})
        first = said.get(claim)
        if claim.isascii():
            return first
        other = said.get(held(claim))
        if first is None or other is None:
            return other if first is None else first
        return first if self.order[first.id] < self.order[other.id] else other

    def interned(self, rec: Dict[str, Any]) -> Dict[str, Any]:
        """A prior's record as it is kept: one string for each of the few values `FEW_VALUES` take, not one per
        prior (a prior skipped for another namespace's half is never kept, so never interned)."""
        words = self.words
        for k in FEW_VALUES:
            v = rec.get(k)
            if type(v) is str:
                rec[k] = words.setdefault(v, v)
        return rec
