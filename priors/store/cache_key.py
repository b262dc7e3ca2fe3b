"""The key that proves a cache file was written by this keeper, for this user, on this machine.

Why: `.priors/cache/` lives in the repository, which an agent may write. The fold cache proves which
ledger it was folded from (its SHA-256), never who folded it, so a `fold.bin` written by hand with the
ledger's digest and a state of its own was believed: a person's `wontfix` read as open in `status`,
`relevant` and `PRIORS.md` (and in `render`, whose stale table `verify` then named for good), and
`commit` sealed an agent's verdict on it (hostile pass 27av; `verify`, which folds the ledger itself,
named the line). Each cache file the verbs believe (`fold.bin`, `render.bin`, `lesson_keys.bin`) carries an HMAC-SHA256
under a random key kept outside the repository, in this user's cache folder; a file whose MAC does not
check is ignored like a torn one, and the ledger is folded afresh. Writing files in the repository is
no longer enough to forge one: that takes reading the key — as much as running a person's verb.

Where no key can be kept (no home folder, a read-only one), or the key would lie inside the repository
itself (a home folder that is the repository: hostile pass 27aw), no cache is read or written: every
verb folds the ledger itself — slower on a large ledger, never wrong. `priors doctor` says so. A cache
file, like the key, is read only when it is a regular file (`open_cache`): a FIFO in its place made
every verb wait for a writer (hostile pass 27aw).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from pathlib import Path
    from typing import IO, Any, Dict, Iterable, List, Optional

KEY_BYTES = 32
KEY_FILE = "cache.key"
MAC_BYTES = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_KEY: List[Optional[bytes]] = []  # this process's key, once read (or None: none can be kept)
_INSIDE: Dict[str, bool] = {}  # a target root -> whether the key lies inside its repository


def key_folder() -> Optional[str]:
    """This user's cache folder for priors: `%LOCALAPPDATA%\\priors` on Windows, else `$XDG_CACHE_HOME/priors`
    or `~/.cache/priors`. None when the place is not an absolute path (no home folder)."""
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "priors") if os.path.isabs(base) else None


def key_path() -> Optional[str]:
    folder = key_folder()
    return None if folder is None else os.path.join(folder, KEY_FILE)


def cache_key(priors_dir: Path) -> Optional[bytes]:
    """The key for the caches of `priors_dir` (made on first use: 32 random bytes, readable by this user
    alone), or None — none can be kept, or it lies inside the repository `priors_dir` is in (`key_inside`)."""
    if key_inside(priors_dir):
        return None
    if not _KEY:
        _KEY.append(_read_or_make())
    return _KEY[0]


def key_inside(priors_dir: Path) -> bool:
    """Whether the key's place is inside the repository holding `priors_dir`: the outermost folder above it with
    a `.git` (a work tree's top: the outermost, since an agent writing the repository can plant a `.git` nearer —
    hostile pass 27ax), else the target root itself. Anything there an agent may read."""
    root = os.path.realpath(os.path.dirname(os.path.abspath(str(priors_dir))))
    got = _INSIDE.get(root)
    if got is None:
        path = key_path()
        top = here = root
        while True:
            if os.path.lexists(os.path.join(here, ".git")):
                top = here
            up = os.path.dirname(here)
            if up == here:
                break
            here = up
        where = os.path.realpath(path) if path is not None else None
        got = _INSIDE[root] = where is not None and (where == top or where.startswith(top.rstrip(os.sep) + os.sep))
    return got


def open_cache(path: Any) -> Optional[IO[bytes]]:
    """`path` open for reading when it is a regular file, else None: never waits on a FIFO, never follows a link."""
    try:
        fd = os.open(str(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | _BINARY)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return os.fdopen(fd, "rb")
    except OSError:
        pass
    os.close(fd)
    return None


def mac(key: bytes, parts: Iterable[bytes]) -> bytes:
    """HMAC-SHA256 of the parts, in order."""
    h = hmac.new(key, digestmod=hashlib.sha256)
    for part in parts:
        h.update(part)
    return h.digest()


def read_sealed(priors_dir: Path, path: Any, magic: bytes, signature: bytes, most: int) -> Optional[bytes]:
    """The body of a small cache file `seal` wrote — its magic, the signature of the code that wrote it, the MAC
    under this user's key, the body — or None for any other file (read only when regular, at most `most` bytes)."""
    key = cache_key(priors_dir)
    fh = open_cache(path) if key is not None else None
    if fh is None or key is None:
        return None
    try:
        with fh:
            raw = fh.read(most + 1)
    except OSError:
        return None
    at = len(magic) + len(signature)
    if len(raw) > most or len(raw) < at + MAC_BYTES or not raw.startswith(magic) or raw[len(magic):at] != signature:
        return None
    body = raw[at + MAC_BYTES:]
    return body if mac(key, [body]) == raw[at:at + MAC_BYTES] else None


def seal(priors_dir: Path, magic: bytes, signature: bytes, body: bytes) -> Optional[bytes]:
    """What `read_sealed` reads back, or None without a key (then no cache file is written)."""
    head = seal_head(priors_dir, magic, signature, body)
    return None if head is None else head + body


def seal_head(priors_dir: Path, magic: bytes, signature: bytes, body: bytes) -> Optional[bytes]:
    """`seal`'s bytes before `body` (a large body is written after them, not joined to them)."""
    key = cache_key(priors_dir)
    return None if key is None else magic + signature + mac(key, [body])


def new_mac(key: bytes) -> "hmac.HMAC":
    """An HMAC-SHA256 to feed a file's bytes as they are read."""
    return hmac.new(key, digestmod=hashlib.sha256)


def _read(path: str) -> Optional[bytes]:
    fh = open_cache(path)
    if fh is None:
        return None
    try:
        with fh:
            data = fh.read(KEY_BYTES + 1)
    except OSError:
        return None
    return data if len(data) == KEY_BYTES else None


def _read_or_make() -> Optional[bytes]:
    path = key_path()
    if path is None:
        return None
    key = _read(path)
    if key is not None:
        return key
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, 0o600)
        try:
            data = os.urandom(KEY_BYTES)
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # (never replaces a key another process made meanwhile: its caches stay good)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not os.path.lexists(path):
                os.replace(tmp, path)
    except OSError:
        return None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return _read(path)
