"""`priors decide` with no ID, on a terminal: one call at a time, each answer written at once.

The walk reads keys from the terminal and writes every answer through `write_decision`, the same
code path as `priors decide ID VERDICT --because …` — so quitting halfway loses nothing, and the
ledger holds exactly the bytes the commands would have written.
"""

from __future__ import annotations

import os
import sys

from priors.core.errors import Refusal, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence, Tuple

NOT_A_TERMINAL = ("priors decide: with no ID VERDICT, decide walks through your calls on a terminal, and this "
                  "is not one — `priors status --calls` lists them, each with the `priors decide` command that "
                  "answers it")


def lesson_calls(paths, st, ledger=None) -> Tuple[Dict[str, str], List[str]]:
    """(low-scoring lessons: id → score line, proposed lessons held for review) — the lessons loop's
    calls. `ledger`: the lessons loop's view of the ledger, when the caller has one already."""
    from priors.cli.lesson_config import read_config

    review = bool(read_config(paths).get("require_review", False)) if paths.dir.is_dir() else False
    if not st.scored and not review:
        return {}, []
    from priors.core.lessons import Ledger, fmt_score, is_lesson

    if ledger is None:
        from priors.store.ledger import read_records

        ledger = Ledger.of(read_records(paths), st)
    low = {pid: f"scored {fmt_score(s.score)} over {s.scored} runs" for pid, s in ledger.low_scores().items()}
    held = [p.id for p in st.priors.values() if is_lesson(p) and p.status == "open"] if review else []
    return low, held


def asks_now(paths, with_open: bool, ns: Optional[str], where: Sequence[str]) -> List[Dict[str, Any]]:
    from priors.core.desk import open_asks, waiting
    from priors.store.ledger import load

    _, st = load(paths, want_data=False)
    low, held = lesson_calls(paths, st)
    asks = waiting(st, low, held)
    if with_open:
        named = {a["id"] for a in asks}
        asks += [a for a in open_asks(st, ns, where) if a["id"] not in named]
    return asks


def _key_of(ask: Dict[str, Any]) -> Tuple[str, str, str]:
    return (ask["kind"], ask["id"], str(ask.get("call", "")))


class Terminal:
    """Single keys and lines from the terminal on standard input; text to standard output."""

    def __init__(self, out) -> None:
        self.fd = sys.stdin.fileno()
        self.out = out

    def write(self, text: str) -> None:
        from priors.core.controls import visible

        self.out.write(visible(text))
        self.out.flush()

    def key(self, prompt: str) -> str:
        """One key press, without Enter (end of input reads as q). The terminal takes single keys
        before the prompt shows, and keeps what was typed ahead (TCSANOW, not a flush)."""
        try:
            import termios
            import tty
        except ImportError:  # no termios (Windows): a line, its first character
            line = self.line(prompt)
            return line[:1] if line else "q"
        old = termios.tcgetattr(self.fd)
        try:
            tty.setcbreak(self.fd, termios.TCSANOW)
            self.write(prompt)
            ch = os.read(self.fd, 1)
            if ch == b"\x1b":  # an escape sequence (arrow keys…): drain it
                import select

                while select.select([self.fd], [], [], 0.05)[0]:
                    os.read(self.fd, 16)
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, old)
        if ch in (b"", b"\x04"):
            return "q"
        return ch.decode("utf-8", "replace")

    def line(self, prompt: str) -> str:
        self.write(prompt)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = os.read(self.fd, 4096)
            if not chunk:
                break
            buf += chunk
        return buf.decode("utf-8", "replace").strip()


def walk(ctx, with_open: bool, ns: Optional[str], where: Sequence[str]) -> int:
    from priors.cli.decision import write_decision
    from priors.cli.inputs import paths_of
    from priors.core.desk import KEYS, QUIT, SKIP, ask_text, commands, key_prompt
    from priors.store.ledger import load, open_runs

    if sys.stdin is None or ctx.out is None or not (sys.stdin.isatty() and ctx.out.isatty()):  # (closed: None)
        raise UsageError(NOT_A_TERMINAL)
    paths = paths_of(ctx)
    _, st = load(paths, want_data=False)
    active = open_runs(paths, st)
    if active:  # the refusal `priors decide ID VERDICT` would give, before asking anything
        raise Refusal("ACTIVE_RUN_EXISTS", run=active[0],
                      hint=f"decisions happen between runs: commit or abort {active[0]} first")
    term = Terminal(ctx.out)
    seen = set()
    decided = skipped = 0
    stopped = False
    while True:
        pending = [a for a in asks_now(paths, with_open, ns, where) if _key_of(a) not in seen]
        if not pending:
            break
        ask = pending[0]
        seen.add(_key_of(ask))
        term.write(ask_text(ask, len(seen), len(seen) + len(pending) - 1) + "\n")
        term.write("  answers: " + " | ".join(commands(ask)) + "\n")
        offered = {v[0]: v for v in ask["verdicts"]}
        while True:
            k = term.key(key_prompt(ask))
            term.write(k if k.isprintable() else "")
            term.write("\n")
            if k in offered or k in (SKIP, QUIT):
                break
            term.write(f"  not an answer here — press one of {', '.join(list(offered) + [SKIP, QUIT])}\n")
        if k == QUIT:
            stopped = True
            break
        if k == SKIP:
            skipped += 1
            term.write("  skipped\n\n")
            continue
        verdict = KEYS[k]
        reason = _reason(term, verdict, ask.get("reason") if ask["kind"] == "reversal" else None)
        if reason is None and verdict == "reopen":
            skipped += 1
            term.write("  no reason given — skipped (reopen needs one)\n\n")
            continue
        from priors.core.controls import describe, has_control

        if reason is not None and has_control(reason):  # refused as `priors decide` refuses it, and asked again later
            skipped += 1
            term.write(f"  the reason holds a control or bidirectional-format character ({describe(reason)})"
                       " — not recorded, skipped\n\n")
            continue
        try:
            lines = write_decision(ctx, ask["id"], verdict, reason)
        except Refusal as refusal:  # the ledger moved under us (a run opened): stop, as the command would
            from priors.core.canonical import dumps

            term.write(f"  refused: {dumps(refusal.payload())}\n")
            raise
        decided += 1
        for line in lines:
            term.write(f"  {line}\n")
        term.write("\n")
    left = len([a for a in asks_now(paths, with_open, ns, where)])
    if decided == skipped == 0 and not stopped:
        term.write("Nothing waits for you." + ("" if with_open else " (`priors decide --open` walks the open findings)")
                   + "\n")
        return 0
    term.write(f"{decided} decided, {skipped} skipped" + (", stopped" if stopped else "")
               + (f" — {left} still wait{'s' if left == 1 else ''}: `priors status --calls` lists them" if left
                  else " — nothing else waits for you") + "\n")
    return 0


def _reason(term: Terminal, verdict: str, default: Optional[str]) -> Optional[str]:
    """The optional reason (None: none given); reopen's default, when offered, is taken on Enter."""
    if verdict == "reopen":
        hint = f"Enter for “{default}”" if default else "required — Enter alone skips"
    else:
        hint = "optional — Enter for none"
    text = term.line(f"  reason ({hint}): ")
    if not text and verdict == "reopen" and default:
        return default
    return text or None
