"""Near misses: which known word a mistyped one was probably meant to be (`staus` → `status`).

A small edit distance instead of difflib: this runs on every call's error path and difflib
would add its import to every call. Deterministic: ties go to the earlier choice.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Iterable, Optional


def distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`."""
    prev2: list = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                d = min(d, prev2[j - 2] + 1)
            cur.append(d)
        prev2, prev = prev, cur
    return prev[-1]


def nearest(word: str, choices: Iterable[str]) -> Optional[str]:
    """The closest choice within a third of the word's length (at least one edit), else None."""
    best, best_d = None, max(1, len(word) // 3) + 1
    for c in choices:
        d = distance(word.lower(), c.lower())
        if d < best_d:
            best, best_d = c, d
    return best
