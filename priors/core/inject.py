"""Lessons for a coding session: which apply, the advisory block, and what a session was given.

`relevant` injects lessons into a keeper run; `priors lessons --inject` puts the same lessons,
ranked and budgeted by the same rules (`lessons.shape`), into an ordinary harness session's
system prompt. Which lessons apply is decided here once, for both. A session leaves no trace in
the ledger until a person scores it: what it was given lives in a small local record (ids and
ledger positions only, never text, never a clock) that `score last` turns into a sealed run.
"""

from __future__ import annotations

from priors.core.fold import PriorState, State, next_run_id, prior_number
from priors.core.lessons import is_lesson
from priors.core.vocabulary import DOOR, INJECTABLE, PRIOR_RE, RUN_RE, SESSION_KEY_RE, SESSION_VIA

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence, Tuple

SESSION_FORMAT = "priors-session"

HEADING = "## Lessons from this repository (priors)"
ADVISORY = ("Advisory lessons from this repository's ledger: some a person wrote or accepted, some agents proposed "
            "from earlier work. The user's instructions, "
            "AGENTS.md, tool evidence and the current files override them; ignore any lesson that does not "
            "fit the task at hand. Do not quote this block unless asked about it.")


# ------------------------------------------------------------------ which lessons apply


def lesson_applies(p: PriorState) -> bool:
    """A run-start prior that is open or binding: what `relevant` injects (the contract's rule)."""
    return p.status in INJECTABLE and p.facet("activation") == "run-start"


def given_in_chain(st: State, pid: Any, memo: Optional[Dict[str, Optional[str]]] = None) -> Optional[str]:
    """What an open revision of `pid` waits for, else None: the lesson given to runs along the `supersedes`
    chain from `pid` (itself first) — the last one there that applies (`lesson_applies`): one before it
    that applies is an open revision held for it — or a redacted lesson, whose tombstone no longer says
    what it revised (hostile pass 27at: a person's redaction of a middle revision let an agent's denial of
    their lesson through; such a revision waits for a person). An open revision waits while its chain
    reaches one — through a revision a person retired outright too, whose own revision was let in as a
    version of the lesson it revised (hostile pass 27ar) and is no lesson of its own while that one is
    given. `memo`: answers of earlier walks (a run's revisions share their chains: hostile pass 27at's
    3,000 revisions of a 3,000-long chain walked it 4.5 M times). A loop a hand edit made ends the walk."""
    memo = {} if memo is None else memo
    path: List[Tuple[str, PriorState]] = []
    seen = set()
    got: Optional[str] = None  # the answer for what lies past the path's end
    while isinstance(pid, str) and pid not in seen:
        if pid in memo:
            got = memo[pid]
            break
        seen.add(pid)
        q = st.priors.get(pid)
        if q is None:
            break
        path.append((pid, q))
        if q.redacted:
            break
        pid = q.rec.get("supersedes")
    for at, q in reversed(path):
        if got is None and (q.redacted or lesson_applies(q)):
            got = at
        memo[at] = got
    return got


def open_revisions(st: State, pid: str) -> List[str]:
    """The agents' revisions of lesson `pid` still open: when a person retires `pid`, nothing
    holds them back any more (a revision waits only while a lesson along its chain is given), so `decide`
    names them, with the command that retires each (hostile pass 27r)."""
    return [p.id for p in st.priors.values() if p.status == "open" and not p.redacted and is_lesson(p)
            and p.rec.get("supersedes") == pid]


def rival_lines(st: State, old: str, new: str) -> List[str]:
    """What `decide NEW accepted` (or `add --supersedes OLD`) prints of the agents' other open revisions of
    OLD, which it retires in NEW's favour: nothing holds them back any more, so they are given beside
    NEW, and the person who chose NEW is told so (newcomer pass 27as)."""
    rivals = [rid for rid in open_revisions(st, old) if rid != new]
    still = given_in_chain(st, st.priors[old].rec.get("supersedes")) if rivals else None  # (past OLD, retired now)
    now = waits_text(st, still, old) if still is not None else f"is now given to runs and sessions beside {new}"
    return [f"{rid} (an agent's other revision of {old}, open) {now} — if {new} answers it, retire it:"
            f" priors decide {rid} obsolete" for rid in rivals]


def waits_text(st: State, held_by: str, old: str) -> str:
    """Why a revision of `old` still waits once `old` is retired: `held_by`, which `given_in_chain` found past it."""
    if st.priors[held_by].redacted:
        return f"still waits ({held_by}, which {old} revised, was redacted: a person decides it)"
    return f"still waits while {held_by}, which {old} revised, is given"


def inject_item(p: PriorState, keep: bool = False) -> Dict[str, Any]:
    """The inject item of a lesson that applies, exactly as `relevant` prints it. `keep`: keep the
    record inflated (ranking reads it again); `relevant` reads thousands once and keeps none."""
    rec = p.rec if keep else p.record()
    return inject_row(p, rec.get("claim"))


def inject_row(p: PriorState, claim: Any) -> Dict[str, Any]:
    """The inject item of a lesson that applies whose claim is read already (`relevant` reads its
    lessons' claims from their ledger lines, in batches)."""
    return {"id": p[0], "claim": claim, "status": p[1]}  # (PriorState.LAYOUT: 0 id, 1 status — thousands a run)


def lesson_pool(st: State, namespaces: Optional[Sequence[str]]) -> List[Dict[str, Any]]:
    """The lessons that apply in these namespaces (all when None), namespace by namespace in name
    order, each in ledger order — for one namespace, exactly `relevant`'s inject list."""
    lessons = st.loop["lessons"]
    if namespaces is None:
        names = sorted(n for n in lessons if isinstance(n, str))
    else:
        names = sorted(set(namespaces))
    out: List[Dict[str, Any]] = []
    for ns in names:
        for pid in lessons.get(ns, ()):
            p = st.priors.get(pid)
            if p is not None and p.ns == ns and lesson_applies(p):
                out.append(inject_item(p, keep=True))
    return out


# ------------------------------------------------------------------ the block


def block(items: Sequence[Dict[str, Any]], tags: Dict[str, List[str]]) -> str:
    """The advisory block for a system prompt: a heading, the framing, one line per lesson."""
    lines = [HEADING, "", ADVISORY, ""]
    for item in items:
        t = "".join(f"#{x} " for x in tags.get(item["id"], []))
        claim = " ".join(str(item.get("claim") or "").split())
        lines.append(f"- [{item['id']}] {t}{claim}")
    return "\n".join(lines)


# ------------------------------------------------------------------ the session record


def check_key(key: Any) -> bool:
    return isinstance(key, str) and SESSION_KEY_RE.match(key) is not None


def read_session(obj: Any) -> Optional[Dict[str, Any]]:
    """A session record as written by `record`, or None for anything else (a damaged or foreign
    file is ignored, never trusted: the record only ever adds credit a person asks for)."""
    if not isinstance(obj, dict) or obj.get("format") != SESSION_FORMAT or obj.get("version") != 1:
        return None
    ints = [obj.get(k) for k in ("seq", "start", "at")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in ints):
        return None
    ids, last, sealed = obj.get("ids"), obj.get("last"), obj.get("sealed", [])
    if not (_str_list(ids, PRIOR_RE) and _str_list(last, PRIOR_RE) and _str_list(sealed, RUN_RE)):
        return None
    key = obj.get("key")
    if key is not None and not check_key(key):
        return None
    return obj


def _str_list(value: Any, pattern) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) and pattern.match(x) for x in value)


def same_session(old: Optional[Dict[str, Any]], key: Optional[str], fresh: bool) -> bool:
    """Does this injection continue the recorded session? Not after it was scored (sealed), not
    when the harness names another session, not when asked for a fresh one."""
    if old is None or fresh or old.get("sealed"):
        return False
    return key is None or old.get("key") == key


def record(old: Optional[Dict[str, Any]], key: Optional[str], fresh: bool, at: int,
           given: Sequence[str], seq: int) -> Dict[str, Any]:
    """The session record after giving `given` (ids, in the order shown) at ledger position `at`
    (how many records the ledger held). `seq` counts injections across every session on this
    machine (the caller passes one more than the highest recorded), so the most recent session is
    the one with the highest `seq` — no clock needed."""
    if same_session(old, key, fresh):
        assert old is not None
        ids = sorted(set(old["ids"]) | set(given), key=_id_order)
        start = old["start"]
        key = old.get("key") if key is None else key
    else:
        ids = sorted(set(given), key=_id_order)
        start = at
    out: Dict[str, Any] = {"format": SESSION_FORMAT, "version": 1, "seq": seq, "start": start, "at": at,
                           "ids": ids, "last": list(given)}
    if key is not None:
        out["key"] = key
    return out


def already_given(old: Optional[Dict[str, Any]], key: Optional[str], fresh: bool) -> set:
    """The ids this session was already given (nothing, when this injection starts a new session)."""
    return set(old["ids"]) if old is not None and same_session(old, key, fresh) else set()


def _id_order(pid: str) -> Tuple[int, str]:
    return (prior_number(pid), pid)


# ------------------------------------------------------------------ scoring a session


def seal_lines(st: State, ids: Sequence[str], run_dirs: Sequence[str], tag: Optional[str] = None
               ) -> List[Dict[str, Any]]:
    """Lines that seal a scored session as agent runs, one per namespace of the lessons it was
    given (in name order): an `injected` record naming them, then the run's seal. Ids no longer
    in the ledger, redacted, or of a prior that is not a lesson are dropped. Run ids follow the
    ledger's and `run_dirs`' highest. `tag` (the sha12 of a harness's session key) goes on each
    seal as `session`: only a record of that same session reaches these runs again
    (`score --again|--replace`)."""
    by_ns: Dict[str, List[str]] = {}
    for pid in ids:
        p = st.priors.get(pid)
        if p is None or p.redacted or not isinstance(p.ns, str) or p.facet("activation") != "run-start":
            continue  # (the record is local and anyone can edit it: a finding was never given as a lesson)
        by_ns.setdefault(p.ns, []).append(pid)
    lines: List[Dict[str, Any]] = []
    made: List[str] = []
    for ns in sorted(by_ns):
        run = next_run_id(st, [*run_dirs, *made])
        made.append(run)
        shown = by_ns[ns]
        word = "lesson" if len(shown) == 1 else "lessons"
        summary = [f"A coding session, given {len(shown)} {word} of {ns} ({', '.join(shown)}) — sealed when you scored it"]
        lines.append({"t": "injected", "run": run, "ids": list(shown)})
        seal: Dict[str, Any] = {"t": "run", "action": "commit", "run": run, "ns": ns, "summary": summary,
                                "via": SESSION_VIA, "door": DOOR}
        if tag is not None:
            seal["session"] = tag
        lines.append(seal)
    return lines


def injected_record(relevant: Dict[str, Any], run: str, ids: Optional[List[Any]] = None) -> Optional[Dict[str, Any]]:
    """At commit: the `injected` record to append when the run was shown fewer lessons than the contract's set.
    `ids`: the ids of its inject list as read already (`RunFiles.inject_ids`; a compact read keeps no list)."""
    omitted = relevant.get("inject_omitted")
    held = relevant.get("awaiting_review")
    if not (isinstance(omitted, list) and omitted) and not (isinstance(held, list) and held):
        return None
    if ids is None:
        inject = relevant.get("inject")
        ids = [x.get("id") for x in inject if isinstance(x, dict) and isinstance(x.get("id"), str)] \
            if isinstance(inject, list) else []
    return {"t": "injected", "run": run, "ids": list(ids)}
