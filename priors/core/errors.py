"""The two ways a call ends early: a refusal (a rule said no) and a usage error.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict


class UsageError(Exception):
    """Bad verb, flag, argument or input shape: exit 2, message on stderr, nothing changed."""


class DamagedLedger(UsageError):
    """A ledger line that is not one JSON object in UTF-8; named with its line number."""


class Refusal(Exception):
    """A rule said no: exit 1, one canonical JSON line `{"refused": CODE, ...}` on stdout."""

    def __init__(self, code: str, **details: Any) -> None:
        super().__init__(code)
        self.code = code
        self.details: Dict[str, Any] = {k: v for k, v in details.items() if v is not None}

    def payload(self) -> Dict[str, Any]:
        body = {"refused": self.code}
        body.update(self.details)
        return body


class MachineError(Exception):
    """The machine failed, not the call: a disk full, a permission denied, a lock that cannot be
    created, a file another program changed under us. Exit 3, message on stderr; calling again
    differently would not help, fixing the machine (or waiting) would."""
