"""Setting a target up: `init` (`.priors/`, and with `--git` the merge driver) and `render`
(PRIORS.md from the ledger).
"""

from __future__ import annotations

from priors.store.git import register_git, require_git
from priors.store.ledger import ensure_dirs, first_files, load_ledger, render
from priors.store.lock import Lock
from priors.store.paths import Paths, require_init

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List



def init(paths: Paths, git: bool) -> List[str]:
    """Create `.priors/` (nothing existing is touched) and, with `git`, register the merge driver.
    Returns the lines to print."""
    if git:
        require_git(paths.root)
    existed = paths.ledger.is_file()
    ensure_dirs(paths)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        first_files(paths)
        render(paths, loaded.state, loaded.mark, (), loaded.mark)
    done = register_git(paths.root) if git else []  # one line, not one a git config key: what was set, in a word each
    out = [f"priors: already set up at {paths.dir}" + ("" if done else " — nothing to do") if existed
           else f"priors: set up {paths.dir} — commit it with your repo"]
    if git:
        where = [w for w in ("git config", ".gitattributes") if any(d.startswith(w) for d in done)]
        if where:
            out.append(f"priors: merge driver registered ({' and '.join(where)})"
                       + (" — commit .gitattributes too (git config stays in this clone)" if ".gitattributes" in where else ""))
    return out


def render_all(paths: Paths) -> None:
    """Rewrite PRIORS.md from the ledger, under the writer lock."""
    require_init(paths)
    with Lock(paths):
        render(paths)
