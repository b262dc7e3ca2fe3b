"""The local session record: which lessons the current coding session was given (never committed).

It lives in `.priors/cache/session.json`: `cache/` is in the `.gitignore` that `priors init`
writes, so the record stays on this machine, and a redaction (which empties `cache/`) forgets it.
"""

from __future__ import annotations

from priors.core.canonical import JSONError, dumps, loads
from priors.core.errors import MachineError, UsageError
from priors.core.inject import read_session as check
from priors.store.files import atomic_write, check_inside, make_dir, read_bytes
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Optional

SESSION_FILE = "session.json"


def session_path(paths: Paths):
    return paths.dir / "cache" / SESSION_FILE


def read_session(paths: Paths) -> Optional[Dict[str, Any]]:
    """The recorded session, or None when there is none or it cannot be trusted (damaged, foreign,
    behind a symlink): a missing record only means nothing extra is credited."""
    path = session_path(paths)
    try:
        check_inside(path)
        data = read_bytes(path)
    except (UsageError, MachineError):
        return None
    if data is None:
        return None
    try:
        return check(loads(data.decode("utf-8")))
    except (UnicodeDecodeError, JSONError, RecursionError):
        return None


def write_session(paths: Paths, rec: Dict[str, Any]) -> None:
    """Replace the record atomically (the store's one writer); the folder is made when missing."""
    path = session_path(paths)
    make_dir(path.parent)
    atomic_write(path, (dumps(rec) + "\n").encode("utf-8"))
