"""The one ledger API: load the folded ledger, append records, read and write a run's staging.
"""

from __future__ import annotations

from pathlib import Path

from priors.core.canonical import dumps
from priors.core.errors import UsageError, os_failure
from priors.store.files import atomic_write, read_bytes
from priors.store.paths import GITIGNORE_LINES, Paths
from priors.core.vocabulary import RUN_RE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence, Tuple



def load(paths: Paths, want_data: bool = True):
    """(ledger bytes, folded state) — the one way every verb reads the ledger.

    Goes through the fold cache (priors.cache), which is exact or ignored. Read-only callers pass
    want_data=False and get None for the bytes, sparing the memory of a large ledger.
    """
    loaded = load_ledger(paths, want_data)
    return loaded.data, loaded.state


def load_ledger(paths: Paths, want_data: bool = True):
    """The folded ledger with its length and digest (priors.cache.Loaded): what a writing verb needs."""
    from priors.store.files import check_inside
    from priors.store.fold_cache import load as cached_load
    from priors.store.paths import require_ledger

    check_inside(paths.ledger)
    require_ledger(paths)
    return cached_load(paths.dir, paths.ledger, want_data)


def read_records(paths: Paths) -> List[Dict[str, Any]]:
    """The ledger's records, parsed once, in order — for the verbs that read its timeline (show,
    history, reflect) rather than its folded state. Every other verb reads `load`."""
    from priors.core.fold import parse_lines
    from priors.store.files import check_inside
    from priors.store.paths import read_ledger_bytes, require_init

    require_init(paths)
    check_inside(paths.ledger)
    return parse_lines(read_ledger_bytes(paths))  # refuses a deleted ledger too


def append_ledger(paths: Paths, data: Optional[bytes], records: List[Dict[str, Any]],
                  loaded=None) -> Optional[Tuple[int, bytes]]:
    """Old bytes plus new canonical lines, written atomically.

    With `data` None the old bytes are copied from the file the `loaded` fold came from (they are
    never read into memory). Given `loaded`, returns the new ledger's (length, sha256)."""
    body = "".join(dumps(r) + "\n" for r in records).encode("utf-8")
    if data is None:
        if loaded is None:
            raise ValueError("append_ledger needs the old bytes or the loaded ledger")
        sep = b"\n" if loaded.length and not loaded.ends_with_newline else b""
        new = sep + body
        atomic_write(paths.ledger, [new], keep=loaded.length)
    else:
        new = (b"\n" if data and not data.endswith(b"\n") else b"") + body
        atomic_write(paths.ledger, [data, new])
    return None if loaded is None else loaded.mark_after(new)


def render(paths: Paths, state=None, base: Optional[Tuple[int, bytes]] = None,
           appended: Sequence[Dict[str, Any]] = (), after: Optional[Tuple[int, bytes]] = None,
           shown: Optional[Dict[str, str]] = None) -> None:
    """Write PRIORS.md for `state`, the fold of ledger `after` = ledger `base` + `appended`.

    With both marks known only the rows that can have changed are rendered (priors.rendered);
    `shown` (id → status column before the append) drops those whose column did not move.
    Without a state the ledger is loaded: it is `after` (and `base` too, unless given)."""
    from priors.core.fold import named_in
    from priors.core.views import display_status
    from priors.store.rendered import write

    if state is None:
        loaded = load_ledger(paths, want_data=False)
        state, after = loaded.state, loaded.mark
        base = after if base is None else base
    named = named_in(appended)
    if shown:
        priors = state.priors
        named = {pid: whole for pid, whole in named.items()
                 if whole or pid not in priors or shown.get(pid) != display_status(priors[pid])}
    write(paths, state, base, named, after)


def read_jsonl(path: Path) -> List[Any]:
    """Staging lines; an unparseable line is kept as None so commit can name it malformed."""
    from priors.core.canonical import JSONError, loads

    data = read_bytes(path)
    out: List[Any] = []
    if not data:
        return out
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            out.append(loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, JSONError):
            out.append(None)
    return out


def write_jsonl(path: Path, items: List[Any]) -> None:
    atomic_write(path, "".join(dumps(x) + "\n" for x in items).encode("utf-8"))


def read_run(paths: Paths, run: str):
    from priors.core.canonical import JSONError, loads
    from priors.core.protocol import RunFiles
    from priors.store.files import check_inside

    rdir = paths.run_dir(run)
    check_inside(rdir / "relevant.json")  # staging read through a symlink could be anyone's data
    rel_bytes = read_bytes(rdir / "relevant.json")
    relevant = None
    if rel_bytes is not None:
        try:
            relevant = loads(rel_bytes.decode("utf-8"))
        except (UnicodeDecodeError, JSONError):
            raise UsageError(f"priors: {rdir / 'relevant.json'} is damaged; `priors abort --run {run}` and reopen") from None
        if not isinstance(relevant, dict):
            raise UsageError(f"priors: {rdir / 'relevant.json'} is not an object; `priors abort --run {run}` and reopen")
    return RunFiles(run, relevant, read_jsonl(rdir / "dispositions.jsonl"), read_jsonl(rdir / "staged.jsonl"),
                    read_jsonl(rdir / "escalations.jsonl"))


def open_runs(paths: Paths, state) -> List[str]:
    from priors.store.paths import list_run_dirs

    return [name for name in list_run_dirs(paths)
            if RUN_RE.match(name) and name not in state.commits and (paths.run_dir(name) / "relevant.json").is_file()]


def check_layout(paths: Paths) -> None:
    """Everything `init` (or a first `relevant`) would create is absent or already of the right
    kind — checked before the first folder is made, so a `.gitignore` that is a directory (say)
    is named up front instead of leaving half a `.priors/` behind."""
    import os

    want = [(paths.dir, True), (paths.runs, True), (paths.ledger, False), (paths.dir / ".gitignore", False),
            (paths.rendered, False)]
    for path, folder in want:
        if not os.path.lexists(str(path)):
            continue
        if path.is_symlink():
            raise UsageError(f"priors: {path} is a symlink; everything under .priors/ must be a real "
                             f"{'folder' if folder else 'file'} — move it aside and run again; nothing was created")
        if path.is_dir() != folder:
            raise UsageError(f"priors: {path} is {'not a folder' if folder else 'a folder'}, expected a "
                             f"{'folder' if folder else 'file'} — move it aside and run again; nothing was created")


def ensure_dirs(paths: Paths) -> None:
    """Create .priors/ and runs/ (what init and a first `relevant` need), after `check_layout`."""
    check_layout(paths)
    for d in (paths.dir, paths.runs):
        if d.is_symlink() or (d.exists() and not d.is_dir()):
            raise UsageError(f"priors: {d} exists and is not a directory")
        new = not d.is_dir()
        try:
            d.mkdir(exist_ok=True)
        except OSError as exc:
            raise os_failure(f"priors: cannot create {d}: {exc.strerror or exc}", exc) from None
        if new:  # recorded once made: a folder that could not be created is not named among the changes
            from priors.store.files import CHANGED

            CHANGED.append(str(d))


def first_files(paths: Paths) -> None:
    """An empty ledger and the .gitignore lines that keep staging, the lock and caches out of git."""
    if not paths.ledger.exists():
        atomic_write(paths.ledger, b"")
    gi = paths.dir / ".gitignore"
    have = (read_bytes(gi) or b"").decode("utf-8", "replace").splitlines()
    want = [ln for ln in GITIGNORE_LINES if ln not in have]
    if want:
        atomic_write(gi, ("\n".join([*have, *want]) + "\n").encode("utf-8"))
