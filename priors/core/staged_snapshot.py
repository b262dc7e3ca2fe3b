"""What the run verbs keep of a run's stored snapshot (`relevant.json`), read item by item
(core/json_stream.py): its verify list as each item's state, its inject list as ids, the lists they
only count, and its scopes compactly (`Scopes`).

At 100k priors on a ledger of open findings the snapshot holds 70k verify items, 70k scopes and
16k lessons: ~80 MB of objects parsed whole, beside the fold. What is kept here is ~10 MB, and every
rule reads it as it read the parsed file (core/run_files.py `RunFiles`).
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import repeat

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

_HEX = "0123456789abcdef"
COMPACT_FROM = 4096  # scopes held compactly from this many (fewer: the dict, each lookup cheaper)
_get = dict.get  # (of an item that is no dict: a TypeError)


class VerifySink:
    """`relevant.json`'s verify list as the rules read it: id -> (scopeState, whether `changed` is true,
    scope_ref), the id of each object item whose id is a string and that is not redacted (the last item
    of an id wins). Only a moved item's ref and `changed` are read (`judge_disposition`): the others
    share one tuple per state. Fed an item at a time (core/json_stream.py) or from the parsed list."""

    __slots__ = ("states", "known", "memo")

    def __init__(self, known: Optional[Dict[str, Any]] = None) -> None:
        self.states: Dict[str, Tuple[Any, bool, Any]] = {}
        self.known = known  # the fold's priors: an id found there is held as the fold's own string
        self.memo: Dict[str, Tuple[Any, bool, Any]] = {}

    def add_all(self, items: Sequence[Any]) -> None:
        states, memo = self.states, self.memo
        try:  # (the items as the keeper writes them, read a few at a time, at C speed; any other way, one by one)
            ids: List[Any] = list(map(_get, items, repeat("id")))
            said: List[Any] = list(map(_get, items, repeat("scopeState")))
            plain = set(map(type, ids)) == {str} and set(map(type, said)) == {str} and "moved" not in said \
                and not any(map(_get, items, repeat("redacted")))
        except TypeError:  # (an item that is no object)
            plain = False
        if not plain:
            self.each(items)
            return
        for state in set(said).difference(memo):
            memo[state] = (state, False, None)
        states.update(zip(_shared(ids, self.known), map(memo.__getitem__, said)))

    def each(self, items: Iterable[Any]) -> None:
        """`add_all`, an item at a time."""
        states, memo, known = self.states, self.memo, self.known
        for x in items:
            if not isinstance(x, dict):
                continue
            pid = x.get("id")
            if not isinstance(pid, str) or x.get("redacted"):
                continue
            state = x.get("scopeState")
            held = memo.get(state) if type(state) is str else None
            if held is None:
                if state == "moved" or type(state) is not str:
                    held = (state, x.get("changed") is True, x.get("scope_ref"))
                else:
                    held = memo[state] = (state, False, None)
            if known is not None:
                p = known.get(pid)
                if p is not None:
                    pid = p.id
            states[pid] = held


def _shared(ids: List[Any], known: Optional[Dict[str, Any]]) -> List[Any]:
    """Each id as the fold's own string for it where the fold has that prior (`VerifySink.known`)."""
    if known is None:
        return ids
    got = known.get
    return [i if p is None else p.id for i, p in zip(ids, map(got, ids))]


class IdSink:
    """`relevant.json`'s inject list as the rules read it: the id of each object item whose id is a
    string, in order (`inject_ids`, the `injected` record)."""

    __slots__ = ("ids", "known")

    def __init__(self, known: Optional[Dict[str, Any]] = None) -> None:
        self.ids: List[str] = []
        self.known = known  # (as VerifySink's)

    def add_all(self, items: Sequence[Any]) -> None:
        try:
            got: List[Any] = list(map(_get, items, repeat("id")))
        except TypeError:  # (an item that is no object)
            got = [x.get("id") for x in items if isinstance(x, dict)]
        self.ids += _shared([i for i in got if isinstance(i, str)] if set(map(type, got)) != {str} else got, self.known)


class CountSink:
    """A list of `relevant.json` the run verbs only count the objects of (nudges, floors)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def add_all(self, items: Sequence[Any]) -> None:
        self.count += len(items) if set(map(type, items)) == {dict} else sum(1 for x in items if isinstance(x, dict))


class Scopes:
    """A snapshot's scopes (ref -> hash) as a mapping read like the dict the parser makes. Held as the
    refs in ascending order and each hash's 12 hex digits as 6 bytes, looked up by bisection (~6 MB
    for 70k, a dict ~12 MB) — when the file holds them so, as the keeper writes them (each ref after
    the one before, each hash 12 lowercase hex digits: the dict's order is then the refs' order);
    any other scopes are held as that dict. Fed a run of pairs at a time (`add_pairs`, in file order)."""

    __slots__ = ("refs", "blob", "d")

    def __init__(self) -> None:
        self.refs: List[str] = []
        self.blob = bytearray()
        self.d: Optional[Dict[Any, Any]] = None  # the dict, once the scopes are not held compactly

    def add_pairs(self, pairs: Dict[Any, Any]) -> None:
        """The next pairs of the file's object, as the parser makes them (a key twice: its last value)."""
        if self.d is None:
            refs, keys = self.refs, list(pairs)
            try:
                hashes = "".join(pairs.values())
                held = (keys == sorted(keys) and (not refs or not keys or refs[-1] < keys[0])
                        and set(map(len, pairs.values())) <= {12} and not hashes.strip(_HEX))
            except TypeError:  # (a value that is no string)
                held = False
            if held:  # (keys ascending after the last held, each hash 12 lowercase hex digits)
                refs += keys
                self.blob += bytes.fromhex(hashes)
                return
            self.d = dict(zip(refs, self.values()))
            self.refs, self.blob = [], bytearray()
        self.d.update(pairs)

    def small(self) -> Any:
        """Itself — or, held as a dict or fewer than COMPACT_FROM, the dict (made once: cheaper to look up)."""
        if self.d is None and len(self.refs) < COMPACT_FROM:
            self.d = dict(zip(self.refs, self.values()))
            self.refs, self.blob = [], bytearray()
        return self.d if self.d is not None else self

    def __getitem__(self, ref: Any) -> Any:
        if self.d is not None:
            return self.d[ref]
        if type(ref) is str:
            refs = self.refs
            i = bisect_left(refs, ref)
            if i < len(refs) and refs[i] == ref:
                return self.blob[6 * i:6 * i + 6].hex()
        hash(ref)  # (an unhashable key raises as a dict's lookup does)
        raise KeyError(ref)

    def __contains__(self, ref: object) -> bool:
        if self.d is not None:
            return ref in self.d
        if type(ref) is str:
            refs = self.refs
            i = bisect_left(refs, ref)
            return i < len(refs) and refs[i] == ref
        hash(ref)
        return False

    def __iter__(self) -> Iterator[Any]:
        return iter(self.d if self.d is not None else self.refs)

    def __len__(self) -> int:
        return len(self.d if self.d is not None else self.refs)

    def values(self) -> Any:
        if self.d is not None:
            return self.d.values()
        blob = self.blob
        return [blob[i:i + 6].hex() for i in range(0, len(blob), 6)]

    def get(self, ref: Any, default: Any = None) -> Any:
        try:
            return self[ref]
        except KeyError:
            return default

    def keys(self) -> Any:
        return self.d.keys() if self.d is not None else list(self.refs)

    def items(self) -> Any:
        return self.d.items() if self.d is not None else list(zip(self.refs, self.values()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Scopes):
            other = dict(other.items())
        return isinstance(other, dict) and dict(self.items()) == other

    __hash__ = None  # type: ignore[assignment]  # (mutable)

    def __repr__(self) -> str:
        return f"Scopes({dict(self)!r})"


def sinks(known: Optional[Dict[str, Any]] = None, keep: bool = True) -> Dict[str, Callable[[], Any]]:
    """What the run verbs keep of `relevant.json`'s large lists and scopes (core/json_stream.py
    `read_object`). `known`: the fold's priors — an id found there is held as the fold's own string
    (the same text), so a run's 70k ids are not held twice. `keep` False: nothing is kept of them
    (a verb that needs only to know the snapshot is sound: `withdraw`)."""
    if not keep:
        return {"verify": CountSink, "inject": CountSink, "nudges": CountSink, "floors": CountSink, "scopes": Nothing}
    return {"verify": lambda: VerifySink(known), "inject": lambda: IdSink(known), "nudges": CountSink,
            "floors": CountSink, "scopes": Scopes}


class Nothing:
    """Pairs of an object read and let go (`sinks(keep=False)`)."""

    __slots__ = ()

    def add_pairs(self, pairs: Dict[Any, Any]) -> None:
        pass


