"""Git access: read an old revision, register the merge driver and its attributes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from priors.core.errors import MachineError, UsageError
from priors.store.files import atomic_write, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from typing import Any, Dict, Iterator, List, Optional, Tuple

# ------------------------------------------------------------------ git


def git_env() -> Dict[str, str]:
    """The environment every git call of the keeper runs in: git's replace refs (`refs/replace/*`,
    which anyone who can write `.git` can create) turned off, so that `verify --since REV` reads the
    objects REV names — not a substitute that puts another ledger or `allowed_signers` at REV; and
    no graft file (`.git/info/grafts`, which git still honours with replace refs off), so a commit's
    parents are its own — a graft gave a rewriting commit an older parent, and the pre-push hook's
    merge base with the remote's refs (or the trace of a merge's `unseen` marks) moved with it."""
    env = dict(os.environ)
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["GIT_GRAFT_FILE"] = os.devnull  # (git for Windows opens /dev/null and nul alike)
    return env


def git_show(root: Any, rev: str) -> bytes:
    """The ledger's bytes at `rev` (empty when it did not exist there); UsageError when rev is bad
    (or git is missing), MachineError when git cannot be started or cannot read what is there."""
    import subprocess

    spec = ledger_spec_at(root, rev)
    if spec is None:
        return b""
    out = subprocess.run(["git", "show", spec], cwd=str(root), capture_output=True, env=git_env())
    if out.returncode != 0:
        raise MachineError(f"priors verify: cannot read the ledger at {rev}: {out.stderr.decode('utf-8', 'replace').strip()}")
    return out.stdout


def ledger_spec_at(root: Any, rev: str) -> Optional[str]:
    """What names the ledger at `rev` for git (`REV:./.priors/ledger.jsonl`), None when it did not exist there;
    UsageError when rev is bad (or git is missing), MachineError when git cannot be started (`git_show`)."""
    import subprocess

    if rev.startswith("-"):
        raise UsageError(f"priors verify: --since {rev}: not a revision")
    try:
        chk = subprocess.run(["git", "rev-parse", "--verify", "--quiet", rev + "^{commit}"], cwd=str(root),
                             capture_output=True, env=git_env())
    except FileNotFoundError:
        raise UsageError("priors verify: --since needs git, which was not found") from None
    except OSError as exc:
        raise MachineError(f"priors verify: --since: cannot run git: {exc.strerror or exc}") from None
    if chk.returncode != 0:
        raise UsageError(f"priors verify: --since {rev}: not a revision in this git repository")
    elsewhere = work_tree_elsewhere(root)
    if elsewhere is not None:
        raise UsageError(f"priors verify: --since {rev}: {elsewhere}")
    spec = f"{rev}:./.priors/ledger.jsonl"
    exists = subprocess.run(["git", "cat-file", "-e", spec], cwd=str(root), capture_output=True, env=git_env())
    return spec if exists.returncode == 0 else None


def committed_ledger(root: Any) -> Optional[bytes]:
    """The ledger as the last commit (HEAD) holds it — or None when there is nothing to compare:
    the target is not in a git work tree, git is missing, nothing is committed yet, or HEAD has no
    ledger. `verify` without `--since` proves the working ledger only grew since then."""
    spec = committed_spec(root)
    if spec is None:
        return None
    try:
        out = _git(["show", spec], root)
    except OSError:
        return None
    return out.stdout if out.returncode == 0 else None


def committed_spec(root: Any) -> Optional[str]:
    """What names the ledger HEAD holds for git, or None when there is nothing to compare (`committed_ledger`)."""
    elsewhere = work_tree_elsewhere(root)
    if elsewhere is not None:
        raise UsageError(f"priors verify: {elsewhere}; or compare nothing: --no-git")
    try:
        inside = _git(["rev-parse", "--is-inside-work-tree"], root)
        if inside.returncode != 0 or inside.stdout.strip() != b"true":
            return None
        if _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], root).returncode != 0:
            return None
        spec = "HEAD:./.priors/ledger.jsonl"
        if _git(["cat-file", "-e", spec], root).returncode != 0:
            return None
    except OSError:
        return None
    return spec


def show_whole(root: Any, spec: str, what: str) -> bytes:
    """What `git show SPEC` writes, whole; MachineError naming `what` when git fails (`show_blocks`)."""
    return b"".join(show_blocks(root, spec, what, 1 << 20))


def show_blocks(root: Any, spec: str, what: str, size: int = 1 << 16) -> Iterator[bytes]:
    """What `git show SPEC` writes, a block of `size` at a time (verify reads a revision's ledger beside the working
    one, neither held whole); MachineError naming `what`, once every block is given, when git could not be run or
    failed."""
    import subprocess
    import tempfile

    with tempfile.TemporaryFile() as err:  # (a file, not a pipe: git's complaints never wait on a reader)
        try:
            proc = subprocess.Popen(["git", "show", spec], cwd=str(root), stdout=subprocess.PIPE, stderr=err,
                                    stdin=subprocess.DEVNULL, env=git_env())
        except OSError as exc:
            raise MachineError(f"priors verify: cannot run git: {exc.strerror or exc}") from None
        assert proc.stdout is not None
        try:
            while True:
                chunk = proc.stdout.read(size)
                if not chunk:
                    break
                yield chunk
        finally:
            proc.stdout.close()
            code = proc.wait()
        if code != 0:
            err.seek(0)
            raise MachineError(f"priors verify: cannot read {what}: {err.read().decode('utf-8', 'replace').strip()}")


def work_tree_elsewhere(root: Any) -> Optional[str]:
    """Why `root` cannot be compared with a revision although it is in a git repository: git's work
    tree for it is somewhere else, or none (`core.worktree` or `core.bare` in `.git/config`, which anyone
    who can write `.git` can set) — `REV:./.priors/…` then names nothing, and the revision would seem to hold no ledger and
    no `allowed_signers` (every line "added", the list of signers the work tree's). None when `root`
    is in its repository's work tree, or in no non-bare repository at all."""
    try:
        r = _git(["rev-parse", "--is-inside-work-tree", "--is-inside-git-dir", "--is-bare-repository"], root)
    except OSError:
        return None
    if r.returncode != 0:
        return None  # no repository (or git cannot say): nothing to compare, as before
    said = r.stdout.decode("ascii", "replace").split()
    if len(said) != 3 or said[0] != "false" or said[1] != "false":
        return None  # in the work tree; or in the .git folder or a bare repository (no work tree)
    if said[2] == "true":  # found from a folder of files, yet said to be bare (`core.bare` in .git/config)
        return (f"{root} is in a git repository that .git/config says is bare (core.bare = true), so no "
                "revision's .priors/ can be read — fix `core.bare` in .git/config")
    top = _git(["rev-parse", "--show-toplevel"], root)
    where = top.stdout.decode("utf-8", "replace").strip() if top.returncode == 0 else ""
    return (f"{root} is in a git repository whose work tree is {where or 'elsewhere'} (core.worktree?), "
            "so no revision's .priors/ can be read — fix `core.worktree` in .git/config")


UPSTREAM_REVS = ("@{upstream}", "@{u}")  # what the pre-push hook passes to `verify --since`


def lacks_upstream(root: Any) -> bool:
    """True when `@{upstream}` cannot name anything because the current branch has none yet (a
    branch's first push) or HEAD is on no branch — read from git's config, not its messages, which
    depend on the locale. False when git is missing or this is no work tree: --since says so itself."""
    try:
        if _git(["rev-parse", "--is-inside-work-tree"], root).returncode != 0:
            return False
        head = _git(["symbolic-ref", "-q", "HEAD"], root)
        if head.returncode != 0:
            return True  # a detached HEAD has no upstream
        branch = head.stdout.decode("utf-8", "replace").strip()
        if branch.startswith("refs/heads/"):
            branch = branch[len("refs/heads/"):]
        return _git(["config", "--get", f"branch.{branch}.remote"], root).returncode != 0
    except OSError:
        return False


def pushed_over(root: Any) -> Optional[str]:
    """The remote's commit a push replaces, as pre-commit's pre-push stage names it (PRE_COMMIT_FROM_REF),
    when it names one this repository holds; None otherwise (not under pre-commit, a new remote branch)."""
    ref = os.environ.get("PRE_COMMIT_FROM_REF", "").strip()
    if not ref or ref.startswith("-") or set(ref) == {"0"}:
        return None
    try:
        r = _git(["rev-parse", "--verify", "--quiet", ref + "^{commit}"], root)
    except OSError:
        return None
    return r.stdout.decode("ascii", "replace").strip() if r.returncode == 0 else None


def remote_bases(root: Any) -> Tuple[List[str], bool]:
    """Where HEAD's history leaves what the remotes hold: the best common ancestors of HEAD and all the
    remote-tracking refs (`git merge-base --all HEAD refs/remotes/…`), and whether there is any
    remote-tracking ref at all. The list is empty when there is none, or none shares history with HEAD
    (an orphan branch) — then nothing the remote holds can be compared with."""
    try:
        refs = _git(["for-each-ref", "--format=%(objectname)", "refs/remotes"], root)
        shas = sorted(set(refs.stdout.decode("ascii", "replace").split())) if refs.returncode == 0 else []
        if not shas:
            return [], False
        r = _git(["merge-base", "--all", "HEAD", *shas], root)
    except OSError:
        return [], False
    return (r.stdout.decode("ascii", "replace").split() if r.returncode == 0 else []), True


def config_value(root: Any, key: str) -> Optional[str]:
    """`git config --get KEY` in `root`'s repository (None: unset, no repository, or no git)."""
    try:
        r = _git(["config", "--get", key], root)
    except OSError:
        return None
    return r.stdout.decode("utf-8", "replace").rstrip("\n") if r.returncode == 0 else None


def hooks_path(root: Any) -> Optional[Path]:
    """Where git runs this repository's hooks from (`core.hooksPath` honoured); None outside git."""
    try:
        r = _git(["rev-parse", "--git-path", "hooks"], root)
    except OSError:
        return None
    if r.returncode != 0:
        return None
    path = Path(r.stdout.decode("utf-8", "replace").strip())
    return path if path.is_absolute() else Path(root) / path


def in_work_tree(root: Any) -> bool:
    try:
        r = _git(["rev-parse", "--is-inside-work-tree"], root)
    except OSError:
        return False
    return r.returncode == 0 and r.stdout.strip() == b"true"


# ------------------------------------------------------------------ git plumbing


def _git(args: List[str], cwd: Any) -> "Any":
    import subprocess

    return subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, env=git_env())


def git_dir(cwd: Any) -> Optional[str]:
    try:
        r = _git(["rev-parse", "--absolute-git-dir"], cwd)
    except OSError:
        return None
    if r.returncode != 0:
        return None
    path = r.stdout.decode("utf-8", "replace").strip()
    return path if os.path.isdir(path) else None


def head_commit(cwd: Any) -> str:
    try:
        r = _git(["rev-parse", "-q", "--verify", "HEAD"], cwd)
    except OSError:
        return ""
    return r.stdout.decode("ascii", "replace").strip() if r.returncode == 0 else ""


def driver_command() -> str:
    """`priors` when it is on PATH, else this interpreter running the keeper from the folder this one runs from.
    Isolated (`-I`): git runs the driver in the repository's top folder, and `-m priors` there imported that
    repository's own `priors/` (or anything else of its) in place of the keeper's (hostile pass 27ax: a merge
    that dropped the other branch's lines without a word)."""
    import shutil

    if shutil.which("priors"):
        return "priors"
    exe = Path(sys.executable).as_posix()
    home = Path(__file__).resolve().parents[2].as_posix()  # (the folder holding the `priors` package)
    return f'"{exe}" -I -c \'{ISOLATED_BOOT}\' "{home}"'


# How an isolated interpreter (`-I`: no current folder, PYTHONPATH or user site on the path) finds the keeper:
# the folder holding the package, its first argument, put at the end of the path (so it never shadows the
# standard library), then the CLI with the rest of the arguments.
ISOLATED_BOOT = "import sys;sys.path.append(sys.argv.pop(1));from priors.cli.main import run;run()"


ATTR_LINES = (
    ".priors/ledger.jsonl merge=priors -text",
    ".priors/PRIORS.md merge=priors-render -text",
)


def require_git(root: Any) -> None:
    """UsageError unless `root` is inside a git work tree (checked before anything is written);
    MachineError when git is there but cannot be started."""
    try:
        inside = _git(["rev-parse", "--is-inside-work-tree"], root)
    except FileNotFoundError:
        raise UsageError("priors init --git: git was not found") from None
    except OSError as exc:
        raise MachineError(f"priors init --git: cannot run git: {exc.strerror or exc}") from None
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        raise UsageError(f"priors init --git: {root} is not inside a git work tree — run `git init` first")


def register_git(root: Any) -> List[str]:
    """Register the merge drivers in the repo's git config and `.gitattributes` beside `.priors/`. Idempotent."""

    require_git(root)
    cmd = driver_command()
    settings = [
        ("merge.priors.name", "priors ledger: base + both sides' new lines, their ids renumbered"),
        ("merge.priors.driver", f"{cmd} merge-driver %O %A %B %P"),
        ("merge.priors-render.name", "priors PRIORS.md: rendered from the merged ledger"),
        ("merge.priors-render.driver", f"{cmd} merge-driver --render %O %A %B %P"),
    ]
    done: List[str] = []
    for key, value in settings:
        cur = _git(["config", "--local", "--get", key], root)
        if cur.returncode == 0 and cur.stdout.decode("utf-8", "replace").rstrip("\n") == value:
            continue
        r = _git(["config", "--local", key, value], root)
        if r.returncode != 0:
            raise MachineError(f"priors init --git: git config {key} failed: {r.stderr.decode('utf-8', 'replace').strip()}")
        done.append(f"git config {key}")
    attrs = Path(root) / ".gitattributes"
    old = (read_bytes(attrs) or b"").decode("utf-8", "replace")
    have = {ln.strip() for ln in old.splitlines()}
    missing = [ln for ln in ATTR_LINES if ln not in have]
    if missing:
        text = old + ("" if not old or old.endswith("\n") else "\n") + "".join(ln + "\n" for ln in missing)
        atomic_write(attrs, text.encode("utf-8"))
        done.append(".gitattributes")
    return done


def commit_graph(root: Any, tips: List[str], stop: str) -> Optional[Dict[str, List[str]]]:
    """Each commit reachable from `tips` and not from `stop`, with its parents (`git rev-list
    --parents`); None when git cannot say."""
    try:
        out = _git(["rev-list", "--parents", *tips, "^" + stop, "--"], root)
    except OSError:
        return None
    if out.returncode != 0:
        return None
    graph: Dict[str, List[str]] = {}
    for line in out.stdout.decode("ascii", "replace").split("\n"):
        ids = line.split()
        if ids:
            graph[ids[0]] = ids[1:]
    return graph


def rev_id(root: Any, rev: str) -> Optional[str]:
    """The commit `rev` names (`HEAD`, `MERGE_HEAD` while a merge is in progress), or None."""
    try:
        out = _git(["rev-parse", "-q", "--verify", rev + "^{commit}"], root)
    except OSError:
        return None
    return out.stdout.decode("ascii", "replace").strip() or None if out.returncode == 0 else None


def merge_base(root: Any, a: str, b: str) -> Optional[str]:
    try:
        out = _git(["merge-base", a, b], root)
    except OSError:
        return None
    return out.stdout.decode("ascii", "replace").strip() or None if out.returncode == 0 else None


def shallow_commits(root: Any) -> List[str]:
    """The commits where a shallow clone's history stops (git's `shallow` file): their parents are not here."""
    gitdir = git_dir(root)
    try:
        with open(os.path.join(gitdir, "shallow"), encoding="ascii") as fh:  # type: ignore[arg-type]
            return fh.read().split()
    except (OSError, TypeError, UnicodeDecodeError):
        return []


def ledger_at(root: Any, commit: str) -> bytes:
    """The ledger's bytes at `commit` (a commit id; empty when it held none)."""
    return file_at(root, commit, ".priors/ledger.jsonl") or b""


def head_holds(root: Any, rels: List[str]) -> Optional[List[str]]:
    """Which of `rels` (paths under the target root) HEAD holds — or None when git cannot say for this work
    tree: not in one, a bare repository or one whose work tree is elsewhere (`core.bare`, `core.worktree`),
    HEAD unborn or not a commit. None is not "no"."""
    try:
        where = _git(["rev-parse", "--is-bare-repository", "--is-inside-work-tree"], root)
        if where.returncode != 0 or where.stdout.split() != [b"false", b"true"]:
            return None
        got = _git(["ls-tree", "--name-only", "HEAD", "--", *[f"./{r}" for r in rels]], root)
    except OSError:
        return None
    if got.returncode != 0:
        return None
    listed = {line.strip() for line in got.stdout.decode("utf-8", "replace").splitlines()}
    return [r for r in rels if r in listed]


def ever_committed(root: Any, rel: str) -> bool:
    """Whether the last commit any ref reaches that changed `rel` (a path under the target root) holds it —
    added or changed it, not removed it. Asked only where git cannot show HEAD (`head_holds` None: HEAD
    unborn, say, as a fresh repository's is, or as an agent may point it), so that a list committed on a
    branch still counts (hostile pass 27ac) and one whose removal was committed does not (27ad)."""
    try:
        got = _git(["rev-list", "-1", "--all", "--", f"./{rel}"], root)
        last = got.stdout.decode("ascii", "replace").strip() if got.returncode == 0 else ""
        return bool(last) and _git(["cat-file", "-e", f"{last}:./{rel}"], root).returncode == 0
    except OSError:
        return False


def file_at(root: Any, rev: str, rel: str) -> Optional[bytes]:
    """The bytes of `rel` (a path under the target root) at `rev`; None when it is not there, or
    git cannot say (`verify` compares `.priors/config.json` and `.priors/allowed_signers` with it)."""
    try:
        out = _git(["show", f"{rev}:./{rel}"], root)
    except OSError:
        return None
    return out.stdout if out.returncode == 0 else None
