"""Which files a snapshot sees: git's view of the tree, or a walk, limited to the named paths.
"""

from __future__ import annotations

import os
import stat as _stat
import sys
from pathlib import Path

from priors.core.errors import UsageError
from priors.store.paths import git_top

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from typing import List, Optional, Sequence


SKIP_NAMES = (".git", ".priors")


# ---------------------------------------------------------------- listing the tree

class Listing:
    """Files under the root as POSIX refs, plus the names we could not use (reported, not fatal)."""

    def __init__(self) -> None:
        self.refs: List[str] = []
        self.problems: List[str] = []


def list_tree(root: Path, prefixes: Optional[List[str]] = None) -> Listing:
    """Git's view inside a work tree (tracked + untracked-not-ignored), else a walk.

    With `prefixes` (refs under the root; "" is not one), only what lies under them is listed —
    exactly the whole listing's refs under them, without walking the rest of a large tree."""
    problems: List[str] = []
    if prefixes is not None:
        ps = sorted(set(prefixes))
        outer = [p for p in ps if not any(p.startswith(q + "/") for q in ps)]  # src/a is inside src
        problems = [f"undecodable name {os.fsencode(p)!r}" for p in outer if not _encodable(p)]
        prefixes = [p for p in outer if _listable(root, p)]
        if not prefixes:
            empty = Listing()
            empty.problems = problems
            return empty
    listing = _git_listing(root, prefixes) if git_top(root) is not None else None
    if listing is None:
        listing = _walk_listing(root, prefixes)
    listing.problems[:0] = problems
    return listing


def _listable(root: Path, prefix: str) -> bool:
    """Can the whole listing hold anything under `prefix`? Not if a folder on its way is one we
    skip, or is not a real folder (a symlink is listed as itself, never entered)."""
    parts = prefix.split("/")
    if any(p in SKIP_NAMES for p in parts) or not _encodable(prefix):
        return False  # an undecodable name is reported, never listed
    for i in range(1, len(parts)):
        try:
            mode = os.lstat(os.path.join(str(root), *parts[:i])).st_mode
        except OSError:
            return False
        if not _stat.S_ISDIR(mode):
            return False
    return True


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _git_listing(root: Path, prefixes: Optional[List[str]] = None) -> Optional[Listing]:
    import subprocess

    specs = ["--"] + [f":(literal){p}" for p in prefixes] if prefixes is not None else []
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"] + specs,
            cwd=str(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )
    except OSError:
        return None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        if msg and "not a git repository" not in msg[0]:
            sys.stderr.write(f"priors snapshot: git ls-files failed ({msg[0]}); walking the tree instead\n")
        return None
    listing = Listing()
    seen = set()
    for raw in proc.stdout.split(b"\0"):
        if not raw or raw in seen:
            continue
        seen.add(raw)
        try:
            ref = raw.decode("utf-8")
        except UnicodeDecodeError:
            listing.problems.append(f"undecodable name {raw!r}")
            continue
        parts = ref.split("/")
        if any(p in SKIP_NAMES for p in parts[:-1]) or parts[-1] in SKIP_NAMES:
            continue
        listing.refs.append(ref)
    listing.refs.sort()
    return listing


def _walk_listing(root: Path, prefixes: Optional[List[str]] = None) -> Listing:
    """Walk without following symlinks, skipping .git and .priors; order-independent by construction.
    With `prefixes`, from those only: a folder is walked, anything else is listed as itself."""
    listing = Listing()
    stack = [""]
    if prefixes is not None:
        stack = []
        for ref in prefixes:
            try:
                is_dir = _stat.S_ISDIR(os.lstat(os.path.join(str(root), *ref.split("/"))).st_mode)
            except OSError:
                continue
            if is_dir:
                stack.append(ref)
            else:
                listing.refs.append(ref)
    while stack:
        rel_dir = stack.pop()
        path = os.path.join(str(root), *rel_dir.split("/")) if rel_dir else str(root)
        try:
            entries = list(os.scandir(path))
        except OSError as exc:
            listing.problems.append(f"cannot list {rel_dir or '.'}: {exc.strerror or exc}")
            continue
        for entry in entries:
            name = entry.name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                listing.problems.append(f"undecodable name in {rel_dir or '.'}: {os.fsencode(name)!r}")
                continue
            ref = f"{rel_dir}/{name}" if rel_dir else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in SKIP_NAMES:
                        stack.append(ref)
                    continue
            except OSError:
                pass
            listing.refs.append(ref)
    listing.refs = sorted(set(listing.refs))  # nested prefixes list a ref twice
    return listing


# ---------------------------------------------------------------- selecting PATHs

class Selection:
    """Which refs a PATH list covers, and which directories are wholly covered (so may be emitted)."""

    def __init__(self, prefixes: Optional[List[str]]) -> None:
        self.prefixes = prefixes  # None = everything; "" = the root itself

    @property
    def whole(self) -> bool:
        return self.prefixes is None or "" in self.prefixes

    def wants(self, ref: str) -> bool:
        if self.whole:
            return True
        return any(ref == p or ref.startswith(p + "/") for p in self.prefixes)  # type: ignore[union-attr]  # not whole: a list

    def full_dir(self, d: str) -> bool:
        return self.wants(d)


def resolve_paths(root: Path, paths: Optional[Sequence[str]], cwd: Optional[str] = None) -> Optional[List[str]]:
    """PATH arguments (relative to cwd, or absolute) → refs relative to the root; usage error when outside or missing."""
    if not paths:
        return None
    base = cwd or os.getcwd()
    root_abs = os.path.abspath(str(root))
    out: List[str] = []
    for p in paths:
        full = os.path.abspath(os.path.join(base, p))
        if not os.path.lexists(full):
            raise UsageError(f"priors snapshot: {p}: no such file or directory")
        rel = _relative(full, root_abs)
        if rel is None:
            rel = _relative(os.path.realpath(full), os.path.realpath(root_abs))
        if rel is None:
            raise UsageError(f"priors snapshot: {p} is outside the target root {root_abs}")
        out.append(rel)
    return sorted(set(out))


def _relative(full: str, root: str) -> Optional[str]:
    try:
        rel = os.path.relpath(full, root)
    except ValueError:  # another drive on Windows
        return None
    if rel == os.curdir:
        return ""
    parts = rel.split(os.sep)
    if parts[0] == os.pardir:
        return None
    return "/".join(parts)
