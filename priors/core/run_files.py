"""An open run's staging as the rules read it (`RunFiles`), and whether it is still open. A module
of its own: reading staging (abort, withdraw, the store) needs no rule of the protocol.
"""

from __future__ import annotations

from priors.core.errors import Refusal
from priors.core.plain import Plain
from priors.core.staged_snapshot import CountSink, IdSink, Scopes, VerifySink
from priors.core.verdicts import Verdicts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Tuple

    from priors.core.fold import State


# The staging files, in the order `RunFiles` holds them: dispositions, staged priors, calls.
STAGING_FILES = ("dispositions.jsonl", "staged.jsonl", "escalations.jsonl")
# What the run's agent tried and the door refused (`{"code", "of", "claim"}` a line): kept on the seal.
ATTEMPTS_FILE = "attempts.jsonl"
WITHDRAWN_FILE = "withdrawn.json"  # the ids `withdraw` took back from the run, a JSON list


def staging_file(run: str, kind: str) -> str:
    """Where a kind of staging (`dispositions`, `staged`, `escalations`) lies, from the target root."""
    return f".priors/runs/{run}/{kind}.jsonl"


class RunFiles(Plain):
    """An open run's staging as read from `.priors/runs/<run>/`.

    `relevant` is the stored `relevant.json` — whole, or (`store.staging.read_run(compact=True)`, the
    run verbs) with its verify, inject, nudges and floors lists held as core/staged_snapshot.py's sinks
    (the rules read them through `verify_states`, `inject_ids` and `count`, never as lists) and its
    scopes as a `Scopes`."""

    __slots__ = ("run", "relevant", "dispositions", "staged", "escalations", "attempts", "line_numbers", "freed", "_verify",
                 "_inject", "_pool", "known_keys", "keep_likes")

    def __init__(self, run: str, relevant: Optional[Dict[str, Any]], dispositions: Optional[Verdicts] = None,
                 staged: Optional[List[Any]] = None, escalations: Optional[List[Any]] = None) -> None:
        self.run, self.relevant = run, relevant
        self.dispositions = Verdicts(run) if dispositions is None else dispositions
        self.staged = [] if staged is None else staged
        self.escalations = [] if escalations is None else escalations
        self.attempts: List[Any] = []  # refusals of this run's proposals (ATTEMPTS_FILE), read by the store
        # per kind, the file line each item was read from (None: items were not read from files, or each
        # stands on the line of its place)
        self.line_numbers: Optional[Dict[str, Optional[List[int]]]] = None
        self.freed: List[str] = []  # ids `withdraw` took back (WITHDRAWN_FILE): never handed to another finding
        self._verify: Optional[Dict[str, Tuple[Any, bool, Any]]] = None
        self._inject: Optional[Tuple[List[str], frozenset]] = None
        self._pool: Any = None  # the protocol.ProposePool built for this run (the rules build it)
        self.known_keys: Any = None  # lesson_likeness.KnownKeys: lessons' signatures the store kept (set by ops)
        # whether the rules keep each lesson's Likeness for a next candidate (protocol.ProposePool.like): False
        # where one candidate is judged (suggest), which compares each lesson once
        self.keep_likes = True

    def fields(self) -> tuple:
        return ("run", "relevant", "dispositions", "staged", "escalations")  # the caches are not the run

    def view(self, dispositions: Optional[Verdicts] = None, staged: Optional[List[Any]] = None) -> RunFiles:
        """The same run with these verdicts and staged priors (none when not given): what the door saw
        before them. Shares the snapshot as read, and what was made of it."""
        out = RunFiles(self.run, self.relevant, dispositions, staged)
        out._verify, out._inject = self._verify, self._inject
        return out

    def line_of(self, kind: str, index: int) -> int:
        """The line of its file that item `index` of `kind` was read from (from 1)."""
        numbers = (self.line_numbers or {}).get(kind)
        return numbers[index] if numbers is not None and 0 <= index < len(numbers) else index + 1

    @property
    def ns(self) -> Any:
        return (self.relevant or {}).get("ns")

    @property
    def scopes(self) -> Any:
        """The snapshot's scopes, ref -> hash: a dict, or the `Scopes` a compact read keeps of many (a mapping
        alike, whose lookups cost a bisection each: fewer are handed out as the dict)."""
        s = (self.relevant or {}).get("scopes")
        if isinstance(s, Scopes):
            return s.small()
        return s if isinstance(s, dict) else {}

    @property
    def moves(self) -> Dict[str, Dict[str, Any]]:
        """The moves `relevant` found (core/moves.py), by prior id: `{id, from, to, [scope_hash]}`."""
        return {m["id"]: m for m in self.move_entries("moves")}

    @property
    def followed(self) -> List[Dict[str, Any]]:
        """The binding priors `relevant` followed to where their code went for the door's comparison alone
        (core/moves.py `followed_copies`): `{id, from, to, [scope_hash]}` each."""
        return self.move_entries("followed")

    def move_entries(self, key: str) -> List[Dict[str, Any]]:
        """The well-formed `{id, from, to, …}` entries of `relevant.json`'s list `key` (an agent can edit the
        file: any other entry is left out)."""
        got = (self.relevant or {}).get(key)
        if not isinstance(got, list):
            return []
        return [m for m in got if isinstance(m, dict) and isinstance(m.get("id"), str)
                and isinstance(m.get("from"), str) and isinstance(m.get("to"), str)]

    @property
    def rehashed(self) -> Dict[str, str]:
        """Priors judged before indentation counted whose scope is unchanged under the old scheme: id →
        the scope's hash now, which they are judged as holding (docs/snapshot.md, "Indentation")."""
        got = (self.relevant or {}).get("rehashed")
        return {k: v for k, v in got.items() if isinstance(v, str)} if isinstance(got, dict) else {}

    def items(self, kind: str) -> List[Dict[str, Any]]:
        """The object items of `relevant.json`'s list `kind` — of a snapshot read whole (`ingest-sarif`,
        which opened the run itself); a compact read keeps only what `verify_states`, `inject_ids` and
        `count` answer."""
        got = (self.relevant or {}).get(kind)
        if isinstance(got, (VerifySink, IdSink, CountSink)):
            raise TypeError(f"relevant.json's {kind} was read compactly")
        return [x for x in got if isinstance(x, dict)] if isinstance(got, list) else []

    def count(self, kind: str) -> int:
        """How many object items `relevant.json`'s list `kind` holds."""
        got = (self.relevant or {}).get(kind)
        if isinstance(got, CountSink):
            return got.count
        return len(self.items(kind))

    def verify_items(self) -> Dict[str, Dict[str, Any]]:
        """The verify items whole, by id — of a snapshot read whole (`ingest-sarif`)."""
        return {x["id"]: x for x in self.items("verify") if isinstance(x.get("id"), str) and not x.get("redacted")}

    def verify_states(self) -> Dict[str, Tuple[Any, bool, Any]]:
        """The verify items by id, as (scopeState, `changed` is true, scope_ref — a moved item's; None
        for others) — `VerifySink`. Built once per verb (a batch of 8k dispositions asks 8k times)."""
        if self._verify is None:
            got = (self.relevant or {}).get("verify")
            if not isinstance(got, VerifySink):
                sink = VerifySink()
                sink.add_all(got if isinstance(got, list) else ())
                got = sink
            self._verify = got.states
        return self._verify

    def inject_ids(self) -> List[str]:
        return self._injected()[0]

    def is_injected(self, pid: str) -> bool:
        return pid in self._injected()[1]

    def _injected(self) -> Tuple[List[str], frozenset]:
        if self._inject is None:
            got = (self.relevant or {}).get("inject")
            if not isinstance(got, IdSink):
                sink = IdSink()
                sink.add_all(got if isinstance(got, list) else ())
                got = sink
            self._inject = (got.ids, frozenset(got.ids))
        return self._inject

    def disposed_ids(self) -> List[object]:
        """The ids the staged dispositions name, as staged (a hand-edited file may hold any value)."""
        return list(self.dispositions.ids_of())

    def is_disposed(self, pid: str) -> bool:
        """`pid in disposed_ids()`, read incrementally: a batch of 8k verdicts (or an ingest) appends
        one at a time and asks each time — a list rebuilt per ask made that quadratic."""
        return self.dispositions.names(pid)


NO_SUCH_RUN = ("no open run has this id (an aborted run's id goes to the next `priors relevant`): `priors status` names"
               " the open run, and `priors relevant` opens one")


def require_open(st: State, rf: RunFiles) -> None:
    if rf.run in st.commits:
        if rf.relevant is not None:  # staging of this id is still here: sealed by another clone, or a commit to retry
            raise Refusal("RUN_COMMITTED", run=rf.run,
                          hint=f"this run id is sealed in the ledger while its staging is still here: `priors commit --run "
                               f"{rf.run}` finishes a commit of yours that was cut short, and if another clone sealed "
                               f"the same id, `priors carry --run {rf.run}` moves your staging to a new run")
        raise Refusal("RUN_COMMITTED", run=rf.run, hint="this run is sealed; open a new one with `priors relevant`")
    if rf.relevant is None:
        raise Refusal("UNKNOWN_RUN", run=rf.run, hint=NO_SUCH_RUN)
