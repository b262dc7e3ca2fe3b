"""core/sorted_strings.py: the same answers as one sorted list, under any adds and removes."""

from __future__ import annotations

import bisect
from typing import List

from hypothesis import given, settings
from hypothesis import strategies as st

from priors.core import sorted_strings
from priors.core.sorted_strings import SortedStrings

_WORDS = st.text(alphabet="ab/c.#", max_size=6)


def _starting(ref: List[str], prefix: str) -> List[str]:
    i = bisect.bisect_left(ref, prefix)
    out = []
    while i < len(ref) and ref[i].startswith(prefix):
        out.append(ref[i])
        i += 1
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _WORDS), max_size=300), st.lists(_WORDS, max_size=20),
       st.lists(_WORDS, max_size=40, unique=True))
def test_as_one_sorted_list(ops, prefixes, start) -> None:
    old = sorted_strings.LOAD
    sorted_strings.LOAD = 2  # lists cut often: every path of `add` and `remove` taken
    try:
        ref = sorted(start)
        got = SortedStrings(ref)
        for adding, s in ops:
            if adding and s not in ref:
                bisect.insort(ref, s)
                got.add(s)
            elif not adding:
                if s in ref:
                    ref.remove(s)
                got.remove(s)
            assert list(got) == ref and len(got) == len(ref)
            assert all(len(part) <= 2 * sorted_strings.LOAD and part for part in got.lists)
            assert got.firsts == [part[0] for part in got.lists]
        for p in prefixes + [s for _a, s in ops]:
            assert got.starting(p) == _starting(ref, p)
            assert (p in got) == (p in ref)
    finally:
        sorted_strings.LOAD = old
