"""The scope map's JSON text, joined from pieces the hashing processes wrote, instead of a dict of
every ref encoded whole.

`priors snapshot` prints one line of canonical JSON (`hashing.dumps_map`: sorted keys, no spaces).
On the standard library that line holds 74,600 refs, and building it the straight way — one dict
entry per definition, then `json.dumps(sort_keys=True)` — cost ~0.18 s in the snapshot's own
process after both cores had finished hashing: a sixth of a first snapshot's wall time, serial.
Here each file's definitions come as one ready piece of text (`anchor_json`, written by whichever
process hashed the file, already in key order), so the parent only sorts the ~2,500 files and
folders and joins their pieces.

It is the same text or nothing: `map_text` answers None (the caller encodes the dict as before)
unless it can show that every key and value needs no JSON escape (printable ASCII without `"` or
`\\`) and that the pieces' keys, in the order joined, strictly increase — so they are the sorted
keys of the map, each once.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from typing import Dict, Iterable, List, Optional, Tuple


def plain(text: str) -> bool:
    """Does `text` read the same inside a JSON string as out of it (and print as it is)?"""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def anchor_json(ref: str, pairs: Iterable[Tuple[str, str]]) -> Optional[str]:
    """`,"ref#name":"hash"` for each definition of the file `ref`, sorted by name — the map's own
    entries for them, in its order; "" when there are none. Names holding a tab or line break are
    left out, as `hashing.pack` leaves them out. None when some name or hash would need escaping
    or a name repeats (the caller then takes the long way)."""
    kept = sorted(pairs)
    if not kept:
        return ""
    names, hashes = zip(*kept)  # (C loops throughout: this runs for every file's definitions)
    joined = "".join(names)
    if "\t" in joined or "\n" in joined:
        return anchor_json(ref, [p for p in kept if "\t" not in p[0] and "\n" not in p[0]])
    if len(set(names)) != len(names) or not plain(joined + "".join(hashes)):
        return None
    pre = ',"' + ref + "#"  # each entry `,"ref#name":"hash"`
    return pre + ('"' + pre).join(map('":"'.join, kept)) + '"'


def packed_json(ref: str, packed: str) -> Optional[str]:
    """`anchor_json` of anchors packed as `hashing.pack` packs them (a cached file's)."""
    if not packed:
        return ""
    parts = packed.split("\t")
    return anchor_json(ref, zip(parts[0::2], parts[1::2]))


def map_text(files: Dict[str, str], pieces: Dict[str, Optional[str]], tree: Dict[str, str]) -> Optional[str]:
    """`hashing.dumps_map` of the map made of `files` (ref -> hash), each file's definitions
    (`pieces[ref]`, from `anchor_json`; absent: none) and `tree` (folders and `*`) — or None when
    that cannot be shown to be the same text (see the module's docstring)."""
    if not plain("".join(files) + "".join(files.values())):
        return None
    units: List[Tuple[str, str, str, str]] = []  # (first key, last key, its entry, its definitions' entries)
    for ref, h in files.items():
        piece = pieces.get(ref, "")
        if piece is None:
            return None
        if piece:
            cut = piece.rfind(',"')
            last = piece[cut + 2:piece.rindex('":"')]
        else:
            last = ref
        units.append((ref, last, f'"{ref}":"{h}"', piece))
    for ref, h in tree.items():
        if not plain(ref + h):
            return None
        units.append((ref, ref, f'"{ref}":"{h}"', ""))
    units.sort(key=_first)
    for (_f, last, _e, _p), (first, _l, _u, _q) in zip(units, units[1:]):
        if not last < first:
            return None
    if not units:
        return "{}"
    out = ["{"]  # (joined once: 5 MB of definitions' entries are not copied into each file's text first)
    for _f, _l, entry, piece in units:
        out += (entry, piece, ",")
    out[-1] = "}"  # (the last entry's comma)
    return "".join(out)


def _first(unit: Tuple[str, str, str, str]) -> str:
    return unit[0]
