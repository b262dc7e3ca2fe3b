"""The three ways a call ends early, and whose fault each is: a refusal (a rule said no), a usage
error (the call was wrong) and a machine error (the call was fine; the machine failed it).
"""

from __future__ import annotations

import errno

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict


class UsageError(Exception):
    """Bad verb, flag, argument or input shape: exit 2, message on stderr, nothing changed."""


class DamagedLedger(UsageError):
    """A ledger line that is not one JSON object in UTF-8; named with its line number."""


CHANGED_IN_PLACE = ("priors: .priors/ledger.jsonl changed in place while this command read it (another program "
                    "wrote into it) — see `priors verify`, then run the command again")


class MachineError(Exception):
    """The environment failed a call that was right: exit 3, message on stderr.

    A lock that cannot be created or cleared, permission denied, a full disk, an I/O error, a file
    another program changed while the verb ran. It exists so that a caller can tell "you called me
    wrong" (exit 2: change the call) from "the machine failed" (exit 3: the same call may succeed
    once the cause is gone — free space, fix permissions, retry). It is deliberately neither a
    UsageError nor a Refusal, so no handler of those catches it by accident. Exit 3 is what
    pre-commit uses for an unexpected error; an unexpected exception also exits 3."""


# errno values that say the path itself is wrong (not there, not a folder, a folder or a file in
# the way, a symlink loop, too long, a name the system does not allow — EINVAL on Windows): what an
# OSError with one of these reports is for the caller to fix, not the machine's failure.
_PATH_ERRNOS = ("ENOENT", "ENOTDIR", "ENAMETOOLONG", "ELOOP", "EISDIR", "EEXIST", "EINVAL")


def os_failure(message: str, exc: OSError) -> Exception:
    """The error to raise for `exc`, an OSError met reading or writing a path: a UsageError when
    the path itself is wrong (see _PATH_ERRNOS), else a MachineError (permission denied, disk full,
    I/O error, a read-only file system, too many open files...)."""
    if exc.errno is not None and exc.errno in {getattr(errno, n) for n in _PATH_ERRNOS if hasattr(errno, n)}:
        return UsageError(message)
    return MachineError(message)


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
