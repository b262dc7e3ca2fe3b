"""The one code path that writes a human verdict: `priors decide ID VERDICT` and the terminal walk both call it.
"""

from __future__ import annotations

from priors.cli.inputs import paths_of
from priors.core.errors import UsageError
from priors.store.files import aftercare
from priors.store.ledger import append_ledger, load_ledger, open_runs, render
from priors.store.lock import Lock

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List, Optional


def write_decision(ctx, pid: str, verdict: str, reason: Optional[str]) -> List[str]:
    """`priors decide ID VERDICT [--because REASON]`: the one code path that writes a human verdict
    (the command and the interactive walk both call it). Returns the lines to print."""
    from priors.core.grammar import AGENT_VERDICTS, HUMAN_VERDICTS
    from priors.core.human import decide_event

    if verdict not in HUMAN_VERDICTS:
        extra = " (that is an agent verdict — see `priors disposition`)" if verdict in AGENT_VERDICTS else ""
        raise UsageError(f"priors decide: unknown verdict {verdict!r}{extra} — one of {', '.join(HUMAN_VERDICTS)}")
    from priors.core.canonical import bad_text

    if reason is not None and bad_text(reason):  # the walk reads it from a terminal; decide from argv (checked too)
        raise UsageError("priors decide: the reason is not valid text (bytes that are not UTF-8); nothing was written")
    from priors.core.controls import describe, has_control

    if reason is not None and has_control(reason):
        raise UsageError(f"priors decide: the reason holds a control or bidirectional-format character"
                         f" ({describe(reason)}); nothing was written")
    if verdict == "reopen" and not reason:
        raise UsageError("priors decide: reopen needs --because TEXT (why the settled judgment no longer holds)")
    paths = paths_of(ctx)
    with Lock(paths):
        loaded = load_ledger(paths, want_data=False)
        st = loaded.state
        active = open_runs(paths, st)
        event = decide_event(st, pid, verdict, reason, active[0] if active else None)
        from priors.cli.lessons_verbs import supersede_events

        retired = supersede_events(st, pid, verdict)
        after = append_ledger(paths, None, [event] + retired, loaded)
        from priors.core.fold import apply

        for rec in [event] + retired:
            apply(st, rec)
        # the decision landed: a failure from here on is a warning, never the answer (docs/reliability.md)
        aftercare("rendering .priors/PRIORS.md", render, paths, st, loaded.mark, [event] + retired, after)
    out = [f"{pid} → {verdict} (your call — this sticks)"]
    for rec in retired:
        out.append(f"{rec['id']} → obsolete (superseded by {pid})")
    return out
