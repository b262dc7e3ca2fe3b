"""Plain value objects: equality and repr by named fields, without dataclasses' import cost.
"""

from __future__ import annotations


class Plain:
    """Subclasses list their fields in `__slots__` (or override `fields`) and set them in `__init__`."""

    __slots__ = ()

    def fields(self) -> tuple:
        return self.__slots__

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.fields())

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]  # unhashable, as mutable; typeshed types object.__hash__ a method

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self.fields()) + ")"


class Unkept(dict):
    """A map a fold writes and its reader never reads, kept empty: `verify`'s replay has no use for the
    lessons loop's bookkeeping (`fold.new_loop`: where each run starts and ends, each lesson's spans) nor
    for the seals (`State.commits`), ~7 MB at 100k priors. Reads answer as an empty map's; nothing
    written is stored."""

    __slots__ = ()

    def __setitem__(self, key: object, value: object) -> None:
        pass

    def setdefault(self, key: object, default: object = None) -> object:
        return default
