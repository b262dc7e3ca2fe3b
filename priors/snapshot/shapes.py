"""What a run needs, beyond the scope map, to follow code that moved and to read hashes of before
issue 28 — computed from disk only for the few files that need it, never in `priors snapshot`:

- a definition's **shape** (`definition_shapes`): its hash with its own name taken out, and a small
  sketch of its lines, so that a definition renamed in place or moved to another file is found
  again (exactly, or nearly as git's rename detection finds a file: `shape_similarity`);
- the **whitespace-blind hashes** (`blind_hashes`) the keeper gave a Python, YAML or Makefile scope
  before indentation counted: a prior judged then is compared under both schemes until its next
  verdict records the new hash (docs/snapshot.md, "Indentation").
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from priors.snapshot.anchors import EXTRACTORS, disambiguate, language_of
from priors.snapshot.hashing import indent_counts, indented_utf8, normalized_utf8, text_hash
from priors.store.files import read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Dict, Iterable, List, Optional, Tuple

SKETCH_LINES = 16  # a shape keeps the 16 smallest of its lines' 16-bit hashes: a bottom-k sketch
NEAR = 0.5  # lines in common (estimated Jaccard) for "nearly the same", as git's default rename score
_NAME_MARK = "\x00"


def _read(root: Path, rel: str) -> Optional[bytes]:
    parts = rel.split("/")
    if any(p in ("", ".", "..") or "\\" in p for p in parts) or os.path.isabs(rel):
        return None
    full = os.path.join(str(root), *parts)
    if os.path.islink(full) or not os.path.isfile(full):
        return None
    try:
        return read_bytes(Path(full), 16 << 20)
    except Exception:  # unreadable, too large, gone meanwhile: no shape (a move is then not found)
        return None


def _spans(rel: str, text: str) -> List[Tuple[str, int, int]]:
    lang = language_of(rel)
    if lang is None:
        return []
    try:
        return disambiguate(EXTRACTORS[lang](text))
    except Exception:  # as anchors_for: a file we cannot parse has no definitions
        return []


def shape_of(segment: str, qualname: str, indented: bool) -> str:
    """`<hash without the name>:<sketch>` of one definition's source. The name is its last
    component (`C.parse~2` → `parse`), taken out wherever it stands as a word (a recursive call
    too); the sketch is the smallest SKETCH_LINES of its lines' 16-bit hashes, each line
    whitespace-collapsed."""
    name = qualname.rpartition(".")[2].split("~", 1)[0]
    if name:
        segment = re.sub(r"(?<![\w$#])" + re.escape(name) + r"(?![\w$])", _NAME_MARK, segment)
    data = segment.encode("utf-8", "surrogatepass")
    whole = hashlib.sha256((indented_utf8 if indented else normalized_utf8)(data)).hexdigest()[:12]
    lines = set()
    for line in data.splitlines():
        norm = normalized_utf8(line)
        if norm:
            lines.add(hashlib.sha256(norm).hexdigest()[:4])
    return whole + ":" + "".join(sorted(lines)[:SKETCH_LINES])


def definition_shapes(root: Path, files: Iterable[str], scopes: Dict[str, str]) -> Dict[str, str]:
    """`{definition ref: shape}` for every definition of `files` (refs of the run's snapshot) whose
    text on disk is the one the snapshot hashed — a file changed since is left out."""
    out: Dict[str, str] = {}
    for rel in sorted(set(files)):
        data = _read(root, rel)
        if data is None or b"\0" in data[:8192] or scopes.get(rel) != text_hash(data, rel):
            continue
        text = data.decode("utf-8", "replace")
        indented = indent_counts(rel)
        for qual, start, end in _spans(rel, text):
            out[rel + "#" + qual] = shape_of(text[start:end], qual, indented)
    return out


def shape_similarity(a: str, b: str) -> float:
    """How alike two shapes are: 1.0 for the same body without its name, else the estimated share
    of lines in common (bottom-k Jaccard of the two sketches), 0.0 for a malformed shape."""
    ha, _, sa = a.partition(":")
    hb, _, sb = b.partition(":")
    if not ha or ha == hb:
        return 1.0 if ha else 0.0
    xa = {sa[i:i + 4] for i in range(0, len(sa), 4)}
    xb = {sb[i:i + 4] for i in range(0, len(sb), 4)}
    union = sorted(xa | xb)[:SKETCH_LINES]
    if not union:
        return 0.0
    return sum(1 for x in union if x in xa and x in xb) / len(union)


def blind_hashes(root: Path, refs: Iterable[str]) -> Dict[str, str]:
    """The hashes the keeper gave these refs (files, or definitions `f.py#X`) before indentation
    counted: whitespace-blind, as `priors hash` still hashes every other file. Only refs of files
    whose indentation is syntax; a ref naming nothing on disk is absent."""
    want: Dict[str, List[str]] = {}
    for ref in refs:
        rel = ref.split("#", 1)[0]
        if indent_counts(rel):
            want.setdefault(rel, []).append(ref)
    out: Dict[str, str] = {}
    for rel in sorted(want):
        data = _read(root, rel)
        if data is None or b"\0" in data[:8192]:
            continue
        if rel in want[rel]:
            out[rel] = hashlib.sha256(normalized_utf8(data)).hexdigest()[:12]
        inner = [r for r in want[rel] if r != rel]
        if inner:
            text = data.decode("utf-8", "replace")
            for qual, start, end in _spans(rel, text):
                ref = rel + "#" + qual
                if ref in inner:
                    seg = text[start:end].encode("utf-8", "surrogatepass")
                    out[ref] = hashlib.sha256(normalized_utf8(seg)).hexdigest()[:12]
    return out
