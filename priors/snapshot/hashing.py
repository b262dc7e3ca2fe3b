"""How text is hashed for scopes: whitespace-normalized UTF-8, raw bytes, links and trees.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import operator
import os
import re

from priors.core.canonical import WS_RUN as _WS_RUN
from priors.core.canonical import dumps, normalize, sha12, sha12_bytes
from priors.core.vocabulary import MAX_WHOLE_FILE_BYTES
from priors.store.files import iter_chunks

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from typing import Callable, Collection, Dict, Iterable, List, Optional, Set, Tuple


ROOT_REF = "*"
BINARY_SNIFF = 8192

# ---------------------------------------------------------------- pure: content hashing

_WS_BYTES = bytes.maketrans(b"\t\n\x0b\x0c\r", b"     ")
_SPACE_RUN = re.compile(rb"  +")
# The non-ASCII ECMAScript whitespace characters, and their UTF-8 encodings.
NONASCII_WS_CHARS = "\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
_NONASCII_WS = re.compile(
    rb"\xc2\xa0|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80|\xef\xbb\xbf"
)


def is_binary(data: bytes) -> bool:
    """Binary means a NUL byte in the first 8 KiB — git's own heuristic."""
    return b"\0" in data[:BINARY_SNIFF]


def normalized_utf8(data: bytes) -> bytes:
    """UTF-8 bytes of `normalize(decode_text(data))`, computed without a str round trip when possible.

    Valid UTF-8 never contains ASCII whitespace bytes inside a multi-byte
    sequence, so when no non-ASCII whitespace is present the ECMAScript
    collapse is a byte translation plus one run-squeeze — several times
    faster than a Unicode regex on the hot path.
    """
    if not data.isascii():
        data = _as_utf8(data)
        if _NONASCII_WS.search(data):
            return normalize(data.decode("utf-8")).encode("utf-8")
    return _SPACE_RUN.sub(b" ", data.translate(_WS_BYTES)).strip(b" ")


def squeezable(data: bytes) -> bool:
    """Is `squeeze` of `data` its normalized text (`normalized_utf8`, unstripped)? Yes for valid UTF-8
    without non-ASCII whitespace — which only then can be squeezed byte by byte."""
    if data.isascii():
        return True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    # (`in` answers at once for a character wider than any of the text's: Latin-1 text is searched once)
    return not any(c in text for c in NONASCII_WS_CHARS)


def squeeze(data: bytes) -> bytes:
    """`data` (`squeezable`) with every whitespace run made one space, not trimmed: `normalized_utf8(data)`
    once stripped, and the text every definition's hash is cut from (`squeezed_offsets`)."""
    return _SPACE_RUN.sub(b" ", data.translate(_WS_BYTES))


def squeezed_offsets(data: bytes, points: List[int], text: Optional[str] = None) -> Dict[int, int]:
    """Where each offset into `data` (characters of `text`, its decoding, when given) falls in
    `squeeze(data)`: `len(squeeze(data[:p]))`.

    A run of whitespace squeezes to one space wherever it is cut, so for a span that ends on a
    non-space, `squeeze(data)[at[s]:at[e]].strip()` is the span's own normalized text: each
    definition is hashed without squeezing its text again (a class's methods were squeezed twice)."""
    at: Dict[int, int] = {}
    prev = acc = 0
    char = byte = 0
    for point in sorted(set(points)):
        q = point
        if text is not None:  # a character offset: its byte offset, counted on from the last one
            byte += len(text[char:point].encode("utf-8"))
            char, q = point, byte
        if q > prev:
            seg = data[prev:q].translate(_WS_BYTES)
            acc += len(_SPACE_RUN.sub(b" ", seg))
            if prev and seg[:1] == b" " and data[prev - 1:prev].translate(_WS_BYTES) == b" ":
                acc -= 1  # the run that crosses `prev` was already counted as one space
            prev = q
        at[point] = acc
    return at


def _as_utf8(data: bytes) -> bytes:
    """`data` itself when it is valid UTF-8, else its decoding with U+FFFD for bad bytes, re-encoded."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace").encode("utf-8")
    return data


# Files whose indentation is syntax (issue 28): their normalized text keeps each line's depth.
INDENTED_SUFFIXES = (".py", ".pyi", ".pyw", ".yml", ".yaml", ".mk")
INDENTED_NAMES = ("makefile", "gnumakefile")
_LINE_BREAK = re.compile(rb"\r\n?")
_DEPTH, _BREAK = b"\x01", b"\x02"  # no whitespace: the whitespace squeeze leaves them where they stand


def indent_counts(path: str) -> bool:
    """Whether `path` (a ref, `/`-separated) names a file whose indentation is syntax: Python,
    YAML, Makefiles. Its text is hashed with `indented_utf8`, every other file's as before."""
    name = path.replace("\\", "/").rpartition("/")[2].lower()
    return name.endswith(INDENTED_SUFFIXES) or name in INDENTED_NAMES


def indented_refs(refs: Collection[str]) -> Set[str]:
    """The refs of `refs` (files, or definitions `f.py#X`) whose file `indent_counts`. Looked for
    together first: when their names, lowercased and joined, hold none of `.py`, `.yml`, `.yaml`,
    `.mk`, `makefile`, none is (a run's snapshot can change 35k refs, most of other languages)."""
    names = "\n".join(refs).lower()
    if not any(mark in names for mark in (".py", ".yml", ".yaml", ".mk", "makefile")):
        return set()
    return {ref for ref in refs if indent_counts(ref.split("#", 1)[0])}


def indented_utf8(data: bytes) -> bytes:
    """`normalized_utf8` that keeps each line's relative indentation depth: a line's depth is the rank
    of its indentation's width among the distinct widths of the text's lines (leading ASCII
    whitespace, a tab reaching the next multiple of eight columns; lines of nothing but ASCII
    whitespace are blank and count for nothing), and the rest of each line is collapsed as before.
    So re-indenting a whole file or definition (4 → 2 spaces, tabs → spaces, moved out of its class)
    or CRLF line ends change nothing, and moving a line into or out of a block does. Depths and line
    breaks are marked with bytes no whitespace rule touches (U+0001 per level, U+0002 between lines);
    a line that normalizes to nothing is dropped. Line by line only through C loops (`map`): a
    Python file costs a few times a whitespace-blind hash, not a Python step per line."""
    if not data.isascii():
        data = _as_utf8(data)
    if b"\r" in data:
        data = _LINE_BREAK.sub(b"\n", data)
    lines = data.split(b"\n")
    bodies = list(map(bytes.lstrip, lines))
    if b"\t" in data and _TAB_LEAD.search(data):  # (the regex tries every line: asked only where a tab is)
        widths = [len(line[:len(line) - len(body)].expandtabs(8)) for line, body in zip(lines, bodies)]
    else:
        widths = list(map(operator.sub, map(len, lines), map(len, bodies)))
    rank = {w: i for i, w in enumerate(sorted(set(itertools.compress(widths, bodies))))}
    marks = [_DEPTH * i for i in range(len(rank))]
    depths = map(marks.__getitem__, map(rank.__getitem__, itertools.compress(widths, bodies)))
    joined = _BREAK.join(map(operator.add, depths, itertools.compress(bodies, bodies)))
    plain = joined.isascii() or not _NONASCII_WS.search(joined)
    if plain:
        squeezed = _SPACE_RUN.sub(b" ", joined.translate(_WS_BYTES)).strip(b" ")
    else:
        squeezed = normalize(joined.decode("utf-8")).encode("utf-8")
    if plain and b"\x01" not in data and b"\x02" not in data:
        # Plain text (the common case): a body starts on a byte no rule squeezes, so the only space
        # beside a mark is a line's trailing one, and no line normalizes to nothing.
        return squeezed.replace(b" \x02", b"\x02")
    # a squeezed run is one space at most: the one beside a mark goes (bytes.replace, no template per match)
    out = squeezed.replace(b" \x01", b"\x01").replace(b"\x01 ", b"\x01").replace(b" \x02", b"\x02").replace(
        b"\x02 ", b"\x02")
    return _EMPTY_LINE.sub(b"", _BREAK + out + _BREAK)[1:-1] if _BREAK in out or _DEPTH in out else out


class IndentedLines:
    """A file's lines measured and squeezed once, so that its `indented_utf8` and every
    definition's — a slice of its lines, the last one cut short — are joined from them.

    Hashing each definition on its own normalized a method's lines once for itself and again for
    its class: 1.5 s of the standard library's 4 s first snapshot. Here a definition costs a slice
    of the file's lines, its own depth ranks and one hash. Only for text where the shortcut is
    provably `indented_utf8` (`fits`): valid UTF-8 without non-ASCII whitespace, no lone carriage
    return, no tab in any line's indentation, no U+0001/U+0002 (the marks) in the text.

    The lines are kept as one list of marks and bodies in turn (`_marks_and_bodies`), never as a
    new object a line: the marks are a few shared strings, and `bytes.join` takes them as they are."""

    def __init__(self, data: bytes) -> None:
        lines = data.split(b"\n")
        bodies = list(map(bytes.lstrip, lines))
        widths = list(map(operator.sub, map(len, lines), map(len, bodies)))
        self.data = data
        self.seq: Optional[List[bytes]] = None
        self.levels: Dict[int, int] = {}
        self.widths = list(itertools.compress(widths, bodies))  # of the lines that are not blank
        self.before = [0, *itertools.accumulate(map(bool, bodies))]  # blank-free index of each line
        joined = _BREAK.join(itertools.compress(bodies, bodies))
        # A body starts on a byte no rule squeezes, so the only space beside a break is a line's trailing one.
        self.bodies = _SPACE_RUN.sub(b" ", joined.translate(_WS_BYTES)).replace(b" \x02", b"\x02").rstrip(
            b" ").split(_BREAK) if self.widths else []

    @staticmethod
    def fits(data: bytes) -> bool:
        """Is the shortcut `indented_utf8` for `data`? (Rare text takes the long way.)"""
        return (squeezable(data) and b"\x01" not in data and b"\x02" not in data
                and not (b"\r" in data and _LONE_CR.search(data))
                and not (b"\t" in data and _TAB_LEAD.search(data)))

    def whole(self) -> bytes:
        """`indented_utf8` of the file."""
        return b"".join(self._marks_and_bodies())

    def _marks_and_bodies(self) -> List[bytes]:
        """`[mark, body, mark, body, …]`: each line's depth in the file (after a break, but the first)
        and its squeezed text, joined whole the file's `indented_utf8`; and each width's depth
        (`levels`). Kept: a definition whose widths are a run of the file's is a slice of it."""
        if self.seq is None:
            levels = sorted(set(self.widths))
            self.levels = {w: i for i, w in enumerate(levels)}
            seq: List[bytes] = [b""] * (2 * len(self.bodies))
            seq[0::2] = map(_break_marks(levels).__getitem__, self.widths)
            seq[1::2] = self.bodies
            if seq:
                seq[0] = seq[0][1:]
            self.seq = seq
        return self.seq

    def span_hashes(self, spans: Iterable[Tuple[int, int]]) -> List[Optional[str]]:
        """sha12 of `indented_utf8(data[start:end])` for each byte span that starts a line (a
        definition's does); None for any other span (the caller normalizes it itself). One loop
        for all of a file's spans: this runs for every definition of every Python file."""
        data, widths, bodies, before = self.data, self.widths, self.bodies, self.before
        seq, grank = self._marks_and_bodies(), self.levels
        count, rfind, sha, sub = data.count, data.rfind, hashlib.sha256, _SPACE_RUN.sub
        out: List[Optional[str]] = []
        first = at = 0  # the line `at` (a line's start) is on: spans come in order, lines are counted on
        for start, end in spans:
            if start < at:
                first = at = 0
            if not 0 <= start < end <= len(data) or (start and data[start - 1] != 10):  # (10: b"\n")
                out.append(None)
                continue
            first += count(b"\n", at, start)
            at = start
            cut = rfind(b"\n", start, end - 1) + 1 or start  # where the line holding its last byte starts
            tail = data[cut:end].lstrip().translate(_WS_BYTES)
            if not tail:
                out.append(None)
                continue
            last = first + count(b"\n", start, cut)
            if b"  " in tail:
                tail = sub(b" ", tail)
            a, c = before[first], before[last]
            ws = widths[a:c + 1]
            kinds = set(ws)
            low = grank[min(kinds)]
            if grank[max(kinds)] - low + 1 == len(kinds):
                # Its widths are a run of the file's: its depths are the file's less `low`, a slice of
                # the file's marks and bodies (one bytes.replace, not a new line object per line).
                part = seq[2 * a:2 * c + 1]
                part[0] = part[0][1 + low:] if a else part[0][low:]
                part.append(tail.rstrip(b" "))
                text = b"".join(part)
                if low:
                    text = text.replace(_BREAK + _DEPTH * low, _BREAK)
            else:
                # Some of the file's widths between its own are missing (a continuation line aligned
                # under a bracket elsewhere): its own marks, in turn with its bodies.
                part = [b""] * (2 * (c - a) + 1)
                part[0::2] = map(_break_marks(sorted(kinds)).__getitem__, ws)
                part[1::2] = bodies[a:c]
                part[0] = part[0][1:]
                part.append(tail.rstrip(b" "))
                text = b"".join(part)
            out.append(sha(text).hexdigest()[:12])
        return out


_BREAK_MARKS = tuple(_BREAK + _DEPTH * i for i in range(32))


def _break_marks(levels: List[int]) -> Dict[int, bytes]:
    """Each width's line start: a break, then as many U+0001 as widths below it."""
    if len(levels) <= len(_BREAK_MARKS):
        return dict(zip(levels, _BREAK_MARKS))
    return {w: _BREAK + _DEPTH * i for i, w in enumerate(levels)}


_LONE_CR = re.compile(rb"\r(?!\n)")
_TAB_LEAD = re.compile(rb"(?m)^[ \x0b\x0c]*\t")  # a tab in some line's indentation: widths need expanding
_EMPTY_LINE = re.compile(rb"\x02\x01*(?=\x02)")  # a line that normalized to nothing: no line at all


def text_hash(data: bytes, path: str = "") -> str:
    """sha12 of normalized text — identical to `priors hash FILE`. `path`: the file's ref or name;
    a file whose indentation is syntax (`indent_counts`) keeps its lines' depths."""
    norm = indented_utf8(data) if path and indent_counts(path) else normalized_utf8(data)
    return hashlib.sha256(norm).hexdigest()[:12]


def content_hash(data: bytes, path: str = "") -> str:
    """A file's hash: raw bytes for binary files, normalized text otherwise (see `text_hash`)."""
    return sha12_bytes(data) if is_binary(data) else text_hash(data, path)


def _squeezed(data: bytes) -> bytes:
    """UTF-8 of `decode_text(data)` with every whitespace run made one space — not trimmed."""
    if not data.isascii():
        data = _as_utf8(data)
        if _NONASCII_WS.search(data):
            return _WS_RUN.sub(" ", data.decode("utf-8")).encode("utf-8")
    return _SPACE_RUN.sub(b" ", data.translate(_WS_BYTES))


def _char_start(data: bytes) -> int:
    """Where to cut `data` so that decoding the two parts apart equals decoding them together:
    before the last byte that is not a UTF-8 continuation byte (within a sequence's length)."""
    for back in range(1, min(4, len(data)) + 1):
        if data[-back] & 0xC0 != 0x80:
            return len(data) - back
    return len(data)


def _normalized_stream(chunks: Iterable[bytes]) -> str:
    """`text_hash` of the concatenated chunks, holding one chunk at a time. Each chunk is cut at a
    character boundary (invalid bytes become U+FFFD exactly as a whole decode makes them),
    squeezed on the fast byte path, and joined to the last with one space where whitespace met."""
    h = hashlib.sha256()
    emitted = gap = False
    carry = b""
    for chunk in itertools.chain(chunks, [None]):
        if chunk is None:
            seg, carry = carry, b""
        else:
            data = carry + chunk
            cut = _char_start(data)
            seg, carry = data[:cut], data[cut:]
        if not seg:
            continue
        s = _squeezed(seg)
        core = s.strip(b" ")
        if core:
            if emitted and (gap or s[:1] == b" "):
                h.update(b" ")
            h.update(core)
            emitted, gap = True, s[-1:] == b" "
        elif s:
            gap = True
    return h.hexdigest()[:12]


def digest_stream(chunks: Iterable[bytes], mode: str, whole: int, path: str = "") -> Tuple[str, Optional[bytes]]:
    """(sha12, the bytes when they fit in `whole`, else None) of a file read in chunks.

    `mode`: "content" (a file in a snapshot: raw when binary — a NUL in its first 8 KiB — else
    normalized text), "text" (`priors hash FILE`), "raw". Up to `whole` bytes the file is hashed as
    one value (the fast path, and the caller may anchor it); past that it is hashed as a stream,
    so a file of any size costs `whole` bytes of memory, not its size. `path`: the file's name, for
    `text_hash` (a streamed file past the limit is hashed whitespace-blind, indentation or not)."""
    it = iter(chunks)
    buf = bytearray()
    for chunk in it:
        buf += chunk
        if len(buf) > whole and len(buf) >= BINARY_SNIFF:  # the binary sniff needs its first 8 KiB
            break
    else:
        data = bytes(buf)
        if mode == "raw":
            return sha12_bytes(data), data
        return (content_hash(data, path) if mode == "content" else text_hash(data, path)), data
    if mode == "raw" or (mode == "content" and is_binary(bytes(buf[:BINARY_SNIFF]))):
        h = hashlib.sha256(buf)
        del buf
        for chunk in it:
            h.update(chunk)
        return h.hexdigest()[:12], None
    return _normalized_stream(itertools.chain(slices(buf), it)), None


def slices(buf: bytearray, size: int = 1 << 20) -> Iterable[bytes]:
    """`buf` a megabyte at a time, emptied as it goes: a streamed head is never held twice."""
    while buf:
        piece = bytes(buf[:size])
        del buf[:size]
        yield piece


def link_hash(target: str) -> str:
    """A symlink is never followed: its hash is over its target string, marked so no file can collide."""
    return sha12_bytes(b"symlink\0" + target.encode("utf-8", "surrogateescape"))


def tree_hash(children: Iterable[Tuple[str, str]]) -> str:
    """A directory's hash: sha12 of the canonical JSON of its `[name, hash]` pairs sorted by name.

    Names are valid Unicode (undecodable ones never get this far) and lists
    keep their order, so the C encoder's output is the canonical one.
    """
    pairs = sorted([name, h] for name, h in children)
    return sha12(json.dumps(pairs, ensure_ascii=False, separators=(",", ":")))


def pack(defs: List[Tuple[str, str]]) -> str:
    """Anchors as one string `name\thash\tname\thash…` — cheap to cache, ship between processes and expand."""
    names = "".join(map(operator.itemgetter(0), defs))
    if "\t" in names or "\n" in names:
        defs = [(q, h) for q, h in defs if "\t" not in q and "\n" not in q]
    return "\t".join(map("\t".join, defs))


def combine(
    files: Dict[str, str],
    anchors: Dict[str, str],
    full_dirs: Callable[[str], bool],
    include_root: bool,
    hidden: Iterable[str] = (),
) -> Dict[str, str]:
    """Assemble the map: files, their anchors, every directory `full_dirs` accepts, and `*`.

    Directories are derived from file refs only, so an empty directory does
    not exist here — as in git — and a git and a plain tree of the same files
    give the same map.
    """
    out: Dict[str, str] = dict(files)
    left_out = set(hidden)
    for rel in left_out:  # counted in their folder's hash, but no ref of their own (see scan.ambiguous_refs)
        out.pop(rel, None)
    for rel, packed in anchors.items():
        if packed and rel not in left_out:  # (nor its definitions': `a.py#z.py#q` reads as a.py's `z.py#q`)
            parts = packed.split("\t")
            prefix = rel + "#"
            out.update(zip([prefix + q for q in parts[0::2]], parts[1::2]))
    out.update(tree_entries(files, full_dirs, include_root))
    return out


def tree_entries(files: Dict[str, str], full_dirs: Callable[[str], bool], include_root: bool) -> Dict[str, str]:
    """The map's folders (`d/`, each one `full_dirs` accepts; deepest first) and `*`, from the file refs."""
    out: Dict[str, str] = {}
    children: Dict[str, List[Tuple[str, str]]] = {"": []}
    dirs = set()
    for rel, h in files.items():
        parent, _, name = rel.rpartition("/")
        children.setdefault(parent, []).append((name, h))
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = parent.rpartition("/")[0]
    for d in sorted(dirs, key=lambda p: -p.count("/")):  # deepest first: children are complete
        h = tree_hash(children.get(d, []))
        parent, _, name = d.rpartition("/")
        children.setdefault(parent, []).append((name + "/", h))
        if full_dirs(d):
            out[d + "/"] = h
    if include_root:
        out[ROOT_REF] = tree_hash(children[""])
    return out


def dumps_map(m: Dict[str, str]) -> str:
    """Canonical JSON of a flat str->str map; uses the C encoder when its order provably agrees."""
    text = json.dumps(m, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if text.isascii() or not re.search("[\ud800-\udfff\U00010000-\U0010ffff]", text):
        return text  # code-point order equals UTF-16 order, and no escapes differ
    return dumps(m)


def read_or_stream(fd: int, mode: str, path: str = "", size: Optional[int] = None) -> Tuple[str, Optional[bytes]]:
    """(sha12, the file's bytes or None) for the regular file open on `fd` (closed here). A file up
    to MAX_WHOLE_FILE_BYTES is read whole (the fast path; the caller may anchor it); a larger one
    is hashed as a stream, a megabyte at a time — a 1.5 GB file no longer costs 1.5 GB of memory.
    `mode` as `hashing.digest_stream`'s, except that in "content" mode a file read whole comes back
    unhashed, ("", bytes): `hash_job` hashes and anchors it in one pass. `size`: the file's, when
    the caller has it from its own `fstat` (read to the end all the same: it may have grown)."""
    if size is None:
        size = os.fstat(fd).st_size
    if size <= MAX_WHOLE_FILE_BYTES:  # one read, and one that finds the end (no file object: one per file)
        data = b"".join(iter_chunks(fd, size=size + 1))
        return digest_stream([data], mode, len(data), path) if mode != "content" else ("", data)
    return digest_stream(iter_chunks(fd), mode, 0, path)
