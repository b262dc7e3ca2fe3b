"""Where things live under a target: finding the root, the paths of .priors/, stray temp files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from priors.core.errors import UsageError, os_failure
from priors.core.plain import Plain
from priors.store.files import read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, List, Optional


LEDGER = "ledger.jsonl"
LOCK = "keeper.lock"
GITIGNORE_LINES = ["runs/", "keeper.lock", "*.tmp", "cache/", "reflection/"]


def find_root(root_opt: Optional[str]) -> Path:
    """The target root: -C DIR, else here — or, inside a git work tree, the nearest ancestor holding
    .priors/, and when none does, the work tree's top (so `cd src && priors init` sets up the repo)."""
    if root_opt is not None:
        root = Path(root_opt)
        if not root.is_dir():
            raise UsageError(f"priors: -C {root_opt}: not a directory")
        return Path(os.path.abspath(root))
    here = Path(os.path.abspath(os.getcwd()))
    if (here / ".priors").is_dir():
        return here
    top = git_top(here)
    if top is None:
        return here
    for cand in [here, *here.parents]:
        if (cand / ".priors").is_dir():
            return cand
        if cand == top:
            break
    return top


def git_top(start: Path) -> Optional[Path]:
    for cand in [start, *start.parents]:
        if (cand / ".git").exists():
            return cand
    return None


class Paths(Plain):
    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def dir(self) -> Path:
        return self.root / ".priors"

    @property
    def ledger(self) -> Path:
        return self.dir / LEDGER

    @property
    def runs(self) -> Path:
        return self.dir / "runs"

    @property
    def lock(self) -> Path:
        return self.dir / LOCK

    @property
    def rendered(self) -> Path:
        return self.dir / "PRIORS.md"

    def run_dir(self, run: str) -> Path:
        return self.runs / run


def ledger_missing(paths: Paths) -> Optional[str]:
    """Why a missing ledger.jsonl looks deleted rather than never written, or None: PRIORS.md lists
    priors, a run is staged, or the fold cache describes a ledger. (A fresh `.priors/` has none.)"""
    if os.path.lexists(str(paths.ledger)):
        return None
    md = read_bytes(paths.rendered) if paths.rendered.is_file() and not paths.rendered.is_symlink() else None
    rows = 0 if md is None else md.count(b"\n| P-")
    if rows:
        return f".priors/PRIORS.md lists {rows} prior{'s' if rows != 1 else ''}"
    runs = [r for r in list_run_dirs(paths) if not r.startswith(".")]
    if runs:
        return f".priors/runs/ holds {', '.join(runs[:3])}"
    if (paths.dir / "cache" / "fold.bin").exists():
        return ".priors/cache/ describes a ledger"
    return None


def require_ledger(paths: Paths) -> None:
    """Refuse to treat a deleted ledger as an empty one: every verb would start over from P-0001 and
    run-001, and the next write would make the loss permanent."""
    why = ledger_missing(paths)
    if why is not None:
        raise UsageError(f"priors: .priors/ledger.jsonl is missing, but {why} — was the ledger deleted? "
                         "Restore it (`git checkout -- .priors/ledger.jsonl`, or from a backup); nothing was "
                         "changed. To start over on purpose, remove .priors/ and run `priors init`.")


def require_init(paths: Paths) -> None:
    if not paths.dir.is_dir():
        raise UsageError(f"priors: no .priors/ in {paths.root} — run `priors init` first")


def list_run_dirs(paths: Paths) -> List[str]:
    try:
        return sorted(os.listdir(str(paths.runs)))
    except OSError:
        return []


def under_folder(folder: Path, outer: Path) -> bool:
    """Whether `folder` is `outer` or lies inside it, by the folders' identity (device and inode) rather
    than their spelling: a disk that ignores case (macOS, Windows) names `.priors` as `.PRIORS` too."""
    try:
        want = os.stat(str(outer))
    except (OSError, ValueError):
        return False
    if not want.st_ino:
        return False  # a file system without inode numbers: the spelling's check alone
    try:
        here = os.path.realpath(str(folder))
    except (OSError, ValueError):
        return False
    while True:
        try:
            st = os.stat(here)
        except (OSError, ValueError):
            return False
        if (st.st_dev, st.st_ino) == (want.st_dev, want.st_ino):
            return True
        up = os.path.dirname(here)
        if up == here:
            return False
        here = up


def output_target(verb: str, flag: str, name: str, root: Any) -> Path:
    """Where `-o NAME` may be written: a new or regular file inside the target, outside its `.priors/`
    and `.git/` (a path a person names never reaches outside the repository: `-` prints instead).

    The page or log is written atomically (a temporary file renamed over the target), which would
    replace a device node, a FIFO or a symlink, and would overwrite the ledger itself — so those are
    usage errors, checked before anything is read or written; so is an empty NAME, the same for every verb."""
    if name == "":  # `Path("")` is `.`, the working directory: one message for every verb, not four
        raise UsageError(f"priors {verb}: {flag} '': an empty path — give a file path, or - for stdout")
    if not name.strip() or not name.isprintable():
        raise UsageError(f"priors {verb}: {flag} {name!r}: a file name of blanks or with control characters"
                         " — give a plain file path, or - for stdout")
    target = Path(name)
    shown = f"priors {verb}: {flag} {name}"
    try:
        st = os.lstat(str(target))
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise os_failure(f"{shown}: {exc.strerror or exc}", exc) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{shown}: a directory — expected a file path")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{shown}: not a regular file (a symlink, device or pipe would be replaced, not written to)")
    parent = target.parent
    if not parent.is_dir():
        raise UsageError(f"{shown}: no such directory {parent}")
    keeper = Paths(Path(root)).dir
    git = Path(root) / ".git"
    try:
        real = os.path.realpath(str(parent / target.name))
        inside = real.startswith(os.path.realpath(str(keeper)) + os.sep)
        in_git = real.startswith(os.path.realpath(str(git)) + os.sep)
    except (OSError, ValueError):
        inside = in_git = False
    if not (inside or in_git):  # the same folders by identity, however spelled (`.PRIORS/` on a case-blind disk)
        inside, in_git = under_folder(parent, keeper), under_folder(parent, git)
    if not under_folder(parent, Path(root)):
        raise UsageError(f"{shown}: outside the repository ({root}) — an output is written inside it; "
                         "use - for stdout and redirect it anywhere")
    if inside:
        raise UsageError(f"{shown}: inside {keeper} — the keeper's own files are never an output")
    if in_git:
        raise UsageError(f"{shown}: inside {git} — git's own files are never an output")
    return target
