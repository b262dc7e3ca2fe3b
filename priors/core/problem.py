"""One thing `verify` finds wrong: a line (0 for a file as a whole), a code and a message. Its own
module, free of `dataclasses` and `typing`, because the signing path reads it: every writing verb
signs through `store/signing.py`, and each would otherwise pay to import the ledger checker."""

from __future__ import annotations

from priors.core.plain import Plain

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict

LEDGER_NAME = ".priors/ledger.jsonl"


class Problem(Plain):
    """Equal by its fields and hashable (it never changes once made)."""

    __slots__ = ("line", "code", "message", "file")

    def __init__(self, line: int, code: str, message: str, file: str = LEDGER_NAME) -> None:
        self.line, self.code, self.message, self.file = line, code, message, file

    def __hash__(self) -> int:  # type: ignore[override]  # Plain is unhashable; a Problem never changes
        return hash((self.line, self.code, self.message, self.file))

    def values(self) -> tuple:
        """(line, code, message, file): `Problem(*values)` is this problem again (plain values, to cross
        a process boundary)."""
        return (self.line, self.code, self.message, self.file)

    def as_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"line": self.line, "code": self.code, "message": self.message}
        if self.file != LEDGER_NAME:
            d["file"] = self.file
        return d

    def text(self) -> str:
        """The problem for a person, with its code: docs/ci.md's tables and "When verify fails" are by code."""
        if self.file == LEDGER_NAME and self.line:
            return f"line {self.line} ({self.code}): {self.message}"
        if self.line:
            return f"{self.file} line {self.line} ({self.code}): {self.message}"
        return f"{self.file} ({self.code}): {self.message}"
