"""Strings kept in sorted order as they are added one at a time: `ScopeIndex`'s refs (core/scope_index.py).

One sorted list moves, on each insertion, every string after the new one: `verify`'s replay at 100k
priors adds ~57k refs to lists reaching ~34k, ~7.8 GB of memory moved in all, about a tenth of each
half's time. Here the strings are held in a list of sorted lists of at most `2 * LOAD` each, so an
insertion moves at most that many, and a lookup is two bisections.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Iterable, Iterator, List

LOAD = 512  # a list of more than twice this is cut in two


class SortedStrings:
    """Distinct strings in ascending order: `add`, `remove`, `in`, and `starting` (those with a prefix)."""

    __slots__ = ("lists", "firsts")

    def __init__(self, ascending: Iterable[str] = ()) -> None:
        items = list(ascending)
        self.lists: List[List[str]] = [items[i:i + LOAD] for i in range(0, len(items), LOAD)]
        self.firsts: List[str] = [part[0] for part in self.lists]  # each list's first string

    def _at(self, s: str) -> int:
        """The list `s` belongs in: the last whose first string is not after it (the first list when none)."""
        k = bisect_right(self.firsts, s) - 1
        return k if k > 0 else 0

    def add(self, s: str) -> None:
        lists = self.lists
        if not lists:
            lists.append([s])
            self.firsts.append(s)
            return
        k = self._at(s)
        part = lists[k]
        insort(part, s)
        self.firsts[k] = part[0]
        if len(part) > 2 * LOAD:
            lists[k:k + 1] = [part[:LOAD], part[LOAD:]]
            self.firsts[k:k + 1] = [part[0], part[LOAD]]

    def remove(self, s: str) -> None:
        """`s` no longer held (nothing when it is not)."""
        if not self.lists:
            return
        k = self._at(s)
        part = self.lists[k]
        i = bisect_left(part, s)
        if i < len(part) and part[i] == s:
            del part[i]
            if part:
                self.firsts[k] = part[0]
            else:
                del self.lists[k], self.firsts[k]

    def __contains__(self, s: object) -> bool:
        if not isinstance(s, str) or not self.lists:
            return False
        part = self.lists[self._at(s)]
        i = bisect_left(part, s)
        return i < len(part) and part[i] == s

    def __len__(self) -> int:
        return sum(len(part) for part in self.lists)

    def __iter__(self) -> Iterator[str]:
        for part in self.lists:
            yield from part

    def starting(self, prefix: str) -> List[str]:
        """The strings held that start with `prefix` (itself too), ascending."""
        lists = self.lists
        if not lists:
            return []
        k = self._at(prefix)
        part = lists[k]
        i = bisect_left(part, prefix)
        out: List[str] = []
        while True:
            if i == len(part):
                k += 1
                if k == len(lists):
                    return out
                part, i = lists[k], 0
            s = part[i]
            if not s.startswith(prefix):
                return out
            out.append(s)
            i += 1
