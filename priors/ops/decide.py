"""`priors decide ID VERDICT`: the one code path that writes a human verdict. The command and the
terminal walk (`decide` with no ID) both come through `decide`, so a walk leaves exactly the bytes
the commands would have written.
"""

from __future__ import annotations

from priors.core.canonical import bad_text
from priors.core.controls import describe, has_control
from priors.core.errors import Refusal, UsageError
from priors.core.grammar import AGENT_VERDICTS, HUMAN_VERDICTS
from priors.core.human import decide_event
from priors.core.inject import given_in_chain, open_revisions, rival_lines, waits_text
from priors.core.lessons import (
    check_retires,
    is_lesson,
    kept_in_force,
    said_to_differ,
    supersede_events,
)
from priors.store.ledger import append_and_apply, load_ledger, open_runs
from priors.store.lock import Lock
from priors.store.paths import Paths, require_init
from priors.store.signing import ready_to_sign

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List, Optional


def check_reason(reason: Optional[str]) -> None:
    """A person's reason is text for the ledger: valid Unicode, no control or bidi-format character."""
    if reason is not None and bad_text(reason):  # the walk reads it from a terminal; decide from argv (checked too)
        raise UsageError("priors decide: the reason is not valid text (bytes that are not UTF-8); nothing was written")
    if reason is not None and has_control(reason):
        raise UsageError(f"priors decide: the reason holds a control or bidirectional-format character"
                         f" ({describe(reason)}); nothing was written")


def refuse_before_the_walk(paths: Paths) -> None:
    """The refusals `decide ID VERDICT` gives while a run is open, or while signing is on and cannot
    sign — the walk says them before asking anything."""
    require_init(paths)
    ready_to_sign(paths.root)
    active = open_runs(paths, load_ledger(paths, want_data=False).state)
    if active:
        raise Refusal("ACTIVE_RUN_EXISTS", run=active[0],
                      hint=f"decisions happen between runs: commit or abort {active[0]} first")


def decide(paths: Paths, pid: str, verdict: str, reason: Optional[str], retires: Optional[str] = None,
           of: Optional[str] = None) -> List[str]:
    """Write a person's verdict on `pid` (and retire a lesson it supersedes, in the same write — a
    binding one only when the person names it: `retires`). `duplicate` with `of`: `pid` says what
    `of` says — written as `obsolete` carrying `same_as` (the reference keeper reads an obsolete
    decision), and its words count as `of`'s from then on. Returns the lines to print."""
    if (verdict == "duplicate") != (of is not None):
        raise UsageError("priors decide: duplicate needs --of P-… (the prior it repeats), and --of goes with duplicate only")
    if verdict == "duplicate":
        return _duplicate(paths, pid, str(of), reason)
    if verdict not in HUMAN_VERDICTS:
        extra = " (that is an agent verdict — see `priors disposition`)" if verdict in AGENT_VERDICTS else ""
        raise UsageError(f"priors decide: unknown verdict {verdict!r}{extra} — one of {', '.join(HUMAN_VERDICTS)}"
                         " (or duplicate --of P-…)")
    check_reason(reason)
    if verdict == "reopen" and not reason:
        raise UsageError("priors decide: reopen needs --because TEXT (why the settled judgment no longer holds)")
    require_init(paths)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        st = loaded.state
        active = open_runs(paths, st)
        event = decide_event(st, pid, verdict, reason, active[0] if active else None)
        check_retires(st, pid, verdict, retires)
        retired = supersede_events(st, pid, verdict, retires)
        kept = kept_in_force(st, pid) if verdict in ("accepted", "keep") and not retired else None
        kept_status = st.priors[kept].status if kept is not None else None
        retiring = verdict == "obsolete" and is_lesson(st.priors[pid])  # (a wontfix lesson is still given)
        waiting = open_revisions(st, pid) if retiring else []
        differing = said_to_differ(st, pid) if retiring else []
        # `decide NEW accepted --retires OLD` after `decide NEW accepted`: NEW stands as said already, so
        # only the retirement is new (a second acceptance would read, in the list of a change's human
        # lines, like a copy of the first)
        again = bool(retired) and st.priors[pid].status == ("accepted" if verdict == "keep" else verdict)
        # the decision lands first; a failure after it is a warning, never the answer (docs/reliability.md)
        append_and_apply(paths, loaded, ([] if again else [event]) + retired)
    if again:
        out = [f"{pid} stays {verdict} (already your call)"]
    elif verdict == "reopen":  # nothing sticks here: the prior is open again, for the next run to judge
        out = [f"{pid} → reopen (your call — open again: the next run checks it)"]
    else:
        out = [f"{pid} → {verdict} (your call — this sticks)"]
    out += [f"{rec['id']} → obsolete (superseded by {pid})" for rec in retired]
    out += [line for rec in retired for line in rival_lines(st, rec["id"], pid)]
    if kept is not None:
        out.append(f"{kept} stays {kept_status} — {pid} supersedes it, but a person settled it; to retire it too:"
                   f" priors decide {kept} obsolete --because \"superseded by {pid}\"")
    still = given_in_chain(loaded.state, loaded.state.priors[pid].rec.get("supersedes")) if waiting else None
    out += [(f"{rid} (an agent's revision of {pid}, open) {waits_text(loaded.state, still, pid)}"
             if still is not None else f"{rid} (an agent's revision of {pid}, open) is now given to runs in its place")
            + f" — to retire it too: priors decide {rid} obsolete" for rid in waiting]
    out += [f"{rid} (an agent's lesson, open, that says it differs from {pid}) is still given to runs — if it says"
            f" the same, retire it too: priors decide {rid} obsolete" for rid in differing]
    return out


def _duplicate(paths: Paths, pid: str, of: str, reason: Optional[str]) -> List[str]:
    """`decide P duplicate --of Q`: P is retired as the same finding as Q; the keeper compares every
    later candidate with P's words too, as Q's (`fold.wordings`), so that rewording is refused next time."""
    check_reason(reason)
    require_init(paths)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        st = loaded.state
        active = open_runs(paths, st)
        event = decide_event(st, pid, "obsolete", reason, active[0] if active else None)
        target = st.priors.get(of)
        if target is None:
            raise Refusal("UNKNOWN_PRIOR", id=of)
        if target.redacted:
            raise Refusal("REDACTED", id=of)
        if of == pid or target.ns != st.priors[pid].ns:
            raise UsageError(f"priors decide: --of names another prior of {pid}'s namespace ({st.priors[pid].ns}),"
                             f" not {of}")
        event["same_as"] = of
        append_and_apply(paths, loaded, [event])
    return [f"{pid} → obsolete, the same finding as {of} (your call — this sticks): its words now count as {of}'s"]
