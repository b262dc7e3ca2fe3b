"""Each lesson claim's signature as the door worked it out, kept under `.priors/cache/` between calls.

Why: a lesson candidate is compared with every lesson of its namespace (door 5), and each comparison
needs the lesson's `Likeness` (~0.15–0.2 ms). At 100k priors a namespace holds ~7,000 lessons: every
`suggest`, every `propose` of a lesson and every `commit` judging one worked all of them out again,
~1.2 s and ~20 MB. A lesson whose `signature` is disjoint from the candidate's cannot be like it
(`lesson_likeness.most_similar_lesson`), so with the signatures kept only the lessons sharing a key
with the candidate need a `Likeness`.

The file maps 16 bytes of each claim's SHA-256 to its signature (`lesson_likeness.KnownKeys`): it
holds no claim's text, only its words' stems — and a redaction removes `.priors/cache/` whole. Like
`fold.bin` it carries an HMAC under this user's key (store/cache_key.py): one written in the
repository by anything else is ignored, so an agent cannot make the door skip a lesson by writing a
signature of its own. It is keyed to the code that reads claims (the modules below): another version's
file is ignored. `verify` never reads it: its replay works every lesson out itself.
"""

from __future__ import annotations

import hashlib
import marshal
import sys

from priors.core import lesson_likeness, letters, lexicon, reading, similarity
from priors.core.lesson_likeness import KnownKeys
from priors.store.cache_key import read_sealed, seal_head
from priors.store.fold_cache import CACHE_DIR, write_file

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from pathlib import Path
    from typing import Any, Dict, List, Optional, Tuple

KEYS_FILE = "lesson_keys.bin"
MAGIC = b"PRIORS-LESSON-KEYS\n"
_MAX_BYTES = 64 << 20  # (a file larger than this is not one this keeper wrote: ~16 MB at 100k priors)
_SIG: List[bytes] = []


def _signature() -> bytes:
    """The code a signature depends on: how claims are read, stemmed and keyed, and this Python's marshal."""
    if not _SIG:
        h = hashlib.sha256(f"{sys.version_info[:2]}|{marshal.version}|".encode())
        for mod in (lesson_likeness, letters, lexicon, reading, similarity):
            try:
                with open(str(getattr(mod, "__file__", "")), "rb") as fh:
                    h.update(fh.read())
            except OSError:
                h.update(str(getattr(mod, "__name__", "")).encode())
        _SIG.append(h.digest())
    return _SIG[0]


def load(priors_dir: Path) -> KnownKeys:
    """The signatures kept, read on first use (none when the file is missing, another version's, or not this
    keeper's)."""
    return KnownKeys(lambda: _read(priors_dir))


def _read(priors_dir: Path) -> Optional[Dict[bytes, Tuple[Any, ...]]]:
    body = read_sealed(priors_dir, priors_dir / CACHE_DIR / KEYS_FILE, MAGIC, _signature(), _MAX_BYTES)
    if body is None:
        return None
    try:
        got = marshal.loads(body)
    except (ValueError, TypeError, EOFError):
        return None
    return got if type(got) is dict else None


def save(priors_dir: Path, known: KnownKeys) -> None:
    """Keep what this call worked out beside what was kept (best effort, like every cache file) — once it is
    worth rewriting the file: 64 signatures or a sixteenth of those kept. Each call works out at least its
    candidate's, and at 7,000 lessons the file is 1.4 MB; until then a call works out the few left over."""
    if not known.added or len(known.added) < 64 and len(known.added) * 16 < len(known.known):
        return
    every, added = known.known, known.added  # (the kept ones taken over, not copied: `known` ends up holding `every`)
    known.added = {}
    if every:
        every.update(added)
        words: Dict[Any, Any] = {}  # one object for each key of all the signatures: marshal writes it once
        for d, keys in every.items():
            every[d] = tuple(words.setdefault(k, k) for k in keys)  # (each old tuple let go as its new one comes)
    else:
        every = added  # (each key one object already: `KnownKeys.put` shares them as the signatures come)
    del added
    body = marshal.dumps(every, 4)
    head = seal_head(priors_dir, MAGIC, _signature(), body)
    if head is not None:
        write_file(priors_dir, KEYS_FILE, [head, body])  # (the sealed file, never joined: ~4 MB at 100k)
    known.known = every
