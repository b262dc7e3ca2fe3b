"""A verb's answer before anything prints it: its exit code, its canonical JSON object and the text a
person reads. One `ops` function computes it; the command line prints the text (or the JSON with
`--json`) and the MCP server hands back the object — so both faces say the same thing.
"""

from __future__ import annotations

from priors.core.canonical import dumps, loads
from priors.core.plain import Plain

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Iterable, Iterator, List, Optional


class Answer(Plain):
    """`code`: the exit code (0 done, 1 refused). `obj`: the canonical JSON object. `text`: the lines
    for a person (None: the verb has no text form, print the JSON). `encoded`: the JSON line when the
    verb encoded it already — `relevant`'s can be large, and the command line prints it as it is;
    `utf8`: that line in UTF-8, when the verb has it too (the command line writes it unencoded) —
    or instead of it: the line is then decoded only when asked for. `shown`: the verb checked that
    `utf8` is valid UTF-8 holding no character `controls.visible` escapes, so it is printed as it
    is, never decoded (relevant's 20 MB line: decoding and checking it as text cost ~80 ms).
    `pieces`: the line in UTF-8 as pieces to write one after another, never joined (relevant's,
    instead of `utf8`): bytes, or objects holding bytes (`bytes(piece)`; their `chunks()` give
    them a megabyte at a time — store/files.py's spools, where relevant's 19 MB verify list waits
    on disk, not in memory). `chunks`: the text in pieces, made as they are printed, instead of
    `text` (`report -o -`'s page: 26 MB at 100k priors, never held whole)."""

    __slots__ = ("code", "raw_obj", "text", "encoded", "utf8", "shown", "pieces", "chunks")

    def __init__(self, code: int, obj: Any, text: Optional[str] = None, encoded: Optional[str] = None,
                 utf8: Optional[bytes] = None, shown: bool = False, pieces: Optional[List[Any]] = None,
                 chunks: Optional[Iterable[str]] = None) -> None:
        self.code, self.raw_obj, self.text, self.encoded, self.utf8 = code, obj, text, encoded, utf8
        self.shown, self.pieces, self.chunks = shown, pieces, chunks

    @property
    def obj(self) -> Any:
        """The JSON object; when the verb gave only its encoded line (relevant's), read back on first use —
        the command line prints the line and never pays for this."""
        if self.raw_obj is None and (self.encoded is not None or self.utf8 is not None or self.pieces is not None):
            self.raw_obj = loads(self.json())
        return self.raw_obj

    def json(self) -> str:
        """The canonical JSON line (kept when the verb encoded it already)."""
        if self.encoded is None:
            utf8 = self.utf8 if self.pieces is None else b"".join(map(bytes, self.pieces))
            self.encoded = utf8.decode("utf-8") if utf8 is not None else dumps(self.obj)
        return self.encoded


def batched(pieces: Iterable[str], size: int = 1 << 16) -> Iterator[str]:
    """`pieces` joined into pieces of about `size` characters (`Answer.chunks`): fewer, larger writes."""
    held: List[str] = []
    n = 0
    for piece in pieces:
        held.append(piece)
        n += len(piece)
        if n >= size:
            yield "".join(held)
            held, n = [], 0
    if held:
        yield "".join(held)
