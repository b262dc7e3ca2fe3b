"""Taking staged work back: `withdraw` (priors this open run staged, and the calls filed against
them) and `abort` (the whole staging). The ledger is never touched. A module of its own: neither
needs the protocol's rules, only the staging and the lock.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.canonical import dumps
from priors.core.errors import Refusal, UsageError
from priors.core.grammar import check_run_id
from priors.core.run_files import NO_SUCH_RUN, WITHDRAWN_FILE, require_open
from priors.core.vocabulary import PRIOR_RE
from priors.store.files import atomic_write, remove_tree
from priors.store.ledger import load_ledger
from priors.store.lock import Lock
from priors.store.paths import Paths, require_init
from priors.store.staging import read_run, write_jsonl

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Sequence


def withdraw(paths: Paths, run: str, ids: Sequence[str]) -> Answer:
    """Take staged priors back (and the calls filed against them); JSON: `{"run", "withdrawn": [ids]}`."""
    check_run_id(run, "withdraw")
    for pid in ids:
        if not PRIOR_RE.match(pid):
            raise UsageError(f"priors withdraw: {pid!r} is not a prior id like P-0012")
    ids = list(dict.fromkeys(ids))
    require_init(paths)
    with Lock(paths):
        st = load_ledger(paths, want_data=False).state
        rf = read_run(paths, run, snapshot="none", known=st.priors)
        require_open(st, rf)
        staged = {r.get("id") for r in rf.staged if isinstance(r, dict)}
        missing = [pid for pid in ids if pid not in staged]
        if missing:
            raise Refusal("NOT_STAGED", ids=missing, run=run,
                          hint="only priors this open run staged can be withdrawn; the ledger's are settled history")
        gone = set(ids)
        rdir = paths.run_dir(run)
        keep_esc = [e for e in rf.escalations if not (isinstance(e, dict) and e.get("conflicts_with") in gone)]
        if len(keep_esc) != len(rf.escalations):
            write_jsonl(rdir / "escalations.jsonl", keep_esc)
        atomic_write(rdir / WITHDRAWN_FILE, (dumps(sorted(set(rf.freed) | gone)) + "\n").encode("utf-8"))
        write_jsonl(rdir / "staged.jsonl", [r for r in rf.staged if not (isinstance(r, dict) and r.get("id") in gone)])
    return Answer(0, {"run": run, "withdrawn": ids}, f"{', '.join(ids)} withdrawn from {run} — the ledger was untouched")


def abort(paths: Paths, run: str) -> Answer:
    """Drop an open run's staging; JSON: `{"aborted": true, "run"}`."""
    check_run_id(run, "abort")
    require_init(paths)
    with Lock(paths):
        st = load_ledger(paths, want_data=False).state
        here = paths.run_dir(run).exists()
        if run in st.commits and not here:
            raise Refusal("RUN_COMMITTED", run=run, hint="a sealed run cannot be aborted")
        if not here:
            raise Refusal("UNKNOWN_RUN", run=run, hint=NO_SUCH_RUN)
        remove_tree(paths.run_dir(run))
    if run in st.commits:  # staging left beside a sealed run of that id (another clone's, or a killed commit's)
        return Answer(0, {"aborted": True, "run": run},
                      f"{run}'s leftover staging removed ({run} is sealed in the ledger); the ledger was untouched")
    return Answer(0, {"aborted": True, "run": run}, f"{run} aborted — uncommitted staging removed; the ledger was untouched")
