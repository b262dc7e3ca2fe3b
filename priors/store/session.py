"""The local session records: which lessons each coding session was given (never committed).

A session without a key (a shell, `--fresh`) lives in `.priors/cache/session.json`; a harness's
session (`--session KEY`) in `.priors/cache/sessions/<sha12 of KEY>.json`, one file per key, so two
sessions running side by side (two Pi windows, a `pi -p` beside a terminal) never overwrite each
other's record and each is scored for what it was given. The key is hashed for the file name (a
key like `con` or one holding `:` is no file name on Windows); the record itself names its key.
`cache/` is in the `.gitignore` that `priors init` writes, so the records stay on this machine;
a redaction empties `cache/` and writes them back (they hold ids and positions, no content).
"""

from __future__ import annotations

import os

from priors.core.canonical import JSONError, dumps, loads, sha12
from priors.core.errors import MachineError, UsageError
from priors.core.inject import read_session as check
from priors.store.files import atomic_write, check_inside, make_dir, read_bytes
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from pathlib import Path
    from typing import Any, Dict, List, Optional

SESSION_FILE = "session.json"
SESSIONS_DIR = "sessions"
KEEP_SESSIONS = 64  # keyed records kept; older ones (by `seq`) go when a new one is written


def session_path(paths: Paths, key: Optional[str] = None) -> Path:
    if key is None:
        return paths.dir / "cache" / SESSION_FILE
    return paths.dir / "cache" / SESSIONS_DIR / f"{sha12(key)}.json"


def _read(path: Path, key: Optional[str]) -> Optional[Dict[str, Any]]:
    try:
        check_inside(path)
        data = read_bytes(path)
    except (UsageError, MachineError):
        return None
    if data is None:
        return None
    try:
        rec = check(loads(data.decode("utf-8")))
    except (UnicodeDecodeError, JSONError, RecursionError):
        return None
    if rec is not None and rec.get("key") != key:
        return None  # a record in another session's place is not trusted
    return rec


def read_session(paths: Paths, key: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The record of session `key` (None: the keyless one), or None when there is none or it cannot
    be trusted (damaged, foreign, behind a symlink): a missing record only means nothing extra is
    credited."""
    return _read(session_path(paths, key), key)


def all_sessions(paths: Paths) -> List[Dict[str, Any]]:
    """Every record that can be trusted, keyless first, then by key."""
    out: List[Dict[str, Any]] = []
    keyless = read_session(paths)
    if keyless is not None:
        out.append(keyless)
    folder = paths.dir / "cache" / SESSIONS_DIR
    try:
        if folder.is_symlink() or not folder.is_dir():
            return out
        names = sorted(os.listdir(str(folder)))
    except OSError:
        return out
    keyed = []
    for name in names:
        if not name.endswith(".json"):
            continue
        got = _peek_key(folder / name)  # a record is held to the key its file is named after
        rec = _read(folder / name, got) if got is not None and name == f"{sha12(got)}.json" else None
        if rec is not None:
            keyed.append(rec)
    out += sorted(keyed, key=lambda r: str(r.get("key")))
    return out


def _peek_key(path: Path) -> Optional[str]:
    try:
        check_inside(path)
        obj = loads((read_bytes(path) or b"").decode("utf-8"))
    except (UnicodeDecodeError, JSONError, RecursionError, UsageError, MachineError):
        return None
    key = obj.get("key") if isinstance(obj, dict) else None
    return key if isinstance(key, str) else None


def latest_session(paths: Paths) -> Optional[Dict[str, Any]]:
    """The session given lessons most recently (highest `seq`; a tie, by key): what `score last` means."""
    recs = all_sessions(paths)
    if not recs:
        return None
    return max(recs, key=lambda r: (r["seq"], str(r.get("key") or "")))


def highest_seq(paths: Paths) -> int:
    recs = all_sessions(paths)
    return max((r["seq"] for r in recs), default=0)


def write_session(paths: Paths, rec: Dict[str, Any]) -> None:
    """Replace the session's record atomically (the store's one writer); the folder is made when
    missing. Keyed records beyond the newest KEEP_SESSIONS are removed. Not forced to disk: it is
    written on every prompt, and a record a power cut empties reads as none (`read_session`) —
    what is lost is the credit for that session's lessons, as when it cannot be written at all."""
    key = rec.get("key")
    path = session_path(paths, key if isinstance(key, str) else None)
    make_dir(path.parent)
    atomic_write(path, (dumps(rec) + "\n").encode("utf-8"), durable=False)
    if isinstance(key, str):
        _prune(paths)


def _prune(paths: Paths) -> None:
    keyed = [r for r in all_sessions(paths) if isinstance(r.get("key"), str)]
    if len(keyed) <= KEEP_SESSIONS:
        return
    keyed.sort(key=lambda r: (r["seq"], str(r["key"])))
    for rec in keyed[:len(keyed) - KEEP_SESSIONS]:
        try:
            session_path(paths, rec["key"]).unlink()
        except OSError:
            pass
