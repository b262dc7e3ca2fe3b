"""`priors decide` on the command line: `decide ID VERDICT [--because TEXT]`, or with no ID, on a
terminal, a walk through every call waiting for the person, one at a time.

The walk reads keys from the terminal and writes every answer through `ops.decide.decide`, the
same code path as `priors decide ID VERDICT --because …` — so quitting halfway loses nothing, and
the ledger holds exactly the bytes the commands would have written.
"""

from __future__ import annotations

import os
import select
import sys

from priors.core.canonical import dumps
from priors.core.controls import describe, has_control, shell_word, visible
from priors.core.desk import KEYS, QUIT, SKIP, ask_text, commands, key_prompt
from priors.core.errors import Refusal, UsageError
from priors.core.views import plural
from priors.ops.decide import decide as decide_verdict
from priors.ops.decide import refuse_before_the_walk
from priors.ops.desk import asks_now
from priors.store.paths import Paths

try:  # single keys from a terminal: POSIX only (on Windows the walk reads a line and takes its first key)
    import termios
    import tty
except ImportError:  # pragma: no cover - Windows
    termios = tty = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from priors.cli.args import Parsed
    from priors.cli.main import Context

NOT_A_TERMINAL = ("priors decide: with no ID VERDICT, decide walks through your calls on a terminal, and this "
                  "is not one — `priors status --calls` lists them, each with the `priors decide` command that "
                  "answers it")
# `--open` walks the open findings too: those are listed by `list`, not by `status --calls` (newcomer pass 27o)
NOT_A_TERMINAL_OPEN = ("priors decide: --open walks through your calls and the open findings on a terminal, and "
                       "this is not one — `priors status --calls` lists the calls and `priors list --status open` "
                       "the open findings; answer each with `priors decide ID VERDICT`")


def cmd_decide(a: Parsed, ctx: Context) -> int:
    """One verdict, or with no ID the terminal walk; prints as it goes (the walk is a dialogue)."""
    if a.has("--open") or a.has("--ns") or not a.pos:
        if a.has("--because") or a.has("--retires") or a.has("--of"):
            flag = "--because" if a.has("--because") else "--retires" if a.has("--retires") else "--of"
            raise UsageError(f"priors decide: {flag} goes with ID VERDICT; the walk asks for each reason\n"
                             f"usage: {a.spec.usage}")
        if a.has("--ns") and not a.has("--open"):
            raise UsageError(f"priors decide: --ns goes with --open\nusage: {a.spec.usage}")
        if a.get("ns") == "":
            raise UsageError("priors decide: --ns needs a non-empty value")
        if a.pos and not a.has("--open"):
            raise UsageError(f"priors decide: wrong number of arguments\nusage: {a.spec.usage}")
        narrowed = ([f"--ns {shell_word(a.get('ns'))}"] if a.get("ns") is not None else []) + [shell_word(p) for p in a.pos]
        return walk(ctx, bool(a.get("open")), a.get("ns"), _where(ctx.root, a.pos), " ".join(narrowed))
    if len(a.pos) != 2:
        raise UsageError(f"priors decide: wrong number of arguments\nusage: {a.spec.usage}")
    pid, verdict = a.pos
    reason = a.get("because")
    retires = a.get("retires")
    of = a.get("of")
    for line in decide_verdict(Paths(ctx.root), pid, verdict, None if reason is None else str(reason),
                               None if retires is None else str(retires), None if of is None else str(of)):
        ctx.print(line)
    return 0


def _where(root: Any, paths: Sequence[str]) -> List[str]:
    """The walk's PATHs, read from the current folder as `priors snapshot PATH` reads them, as refs
    relative to the target root (a `#Qual.name` part kept); one outside the root is a usage error."""
    root_abs = os.path.abspath(str(root))
    out = []
    for p in paths:
        file, mark, name = p.partition("#")
        full = os.path.abspath(os.path.join(os.getcwd(), file))
        rel = None
        for f, r in ((full, root_abs), (os.path.realpath(full), os.path.realpath(root_abs))):
            rel = os.path.relpath(f, r).replace(os.sep, "/")
            if rel != os.pardir and not rel.startswith(os.pardir + "/"):
                break
            rel = None
        if rel is None:
            raise UsageError(f"priors decide: {p} is outside the target root {root_abs}")
        rel = "" if rel == os.curdir else rel
        out.append(rel + ("/" if rel and file.endswith("/") else "") + mark + name)
    return out


def _key_of(ask: Dict[str, Any]) -> Tuple[str, str, str]:
    return (ask["kind"], ask["id"], str(ask.get("call", "")))


class Terminal:
    """Single keys and lines from the terminal on standard input; text to standard output."""

    def __init__(self, out: Any) -> None:
        self.fd = sys.stdin.fileno()
        self.out = out

    def write(self, text: str) -> None:
        self.out.write(visible(text))
        self.out.flush()

    def key(self, prompt: str) -> str:
        """One key press, without Enter (end of input reads as q). The terminal takes single keys
        before the prompt shows, and keeps what was typed ahead (TCSANOW, not a flush)."""
        if termios is None or tty is None:  # no termios (Windows): a line, its first character
            line = self.line(prompt)
            return line[:1] if line else "q"
        old = termios.tcgetattr(self.fd)
        try:
            tty.setcbreak(self.fd, termios.TCSANOW)
            self.write(prompt)
            ch = os.read(self.fd, 1)
            if ch == b"\x1b":  # an escape sequence (arrow keys…): drain it
                while select.select([self.fd], [], [], 0.05)[0]:
                    os.read(self.fd, 16)
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, old)
        if ch in (b"", b"\x04"):
            return "q"
        return ch.decode("utf-8", "replace")

    def line(self, prompt: str) -> Optional[str]:
        """A line typed and ended with Enter; None when the input ended first (Ctrl-D)."""
        self.write(prompt)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = os.read(self.fd, 4096)
            if not chunk:
                return None
            buf += chunk
        return buf.decode("utf-8", "replace").strip()


def walk(ctx: Context, with_open: bool, ns: Optional[str], where: Sequence[str], narrowed: str = "") -> int:
    """Every call waiting for the person, one at a time, each answer written at once; `narrowed`: the
    walk's --ns and PATHs as typed, for the closing line's command to walk the same findings again."""
    if sys.stdin is None or ctx.out is None or not (sys.stdin.isatty() and ctx.out.isatty()):  # (closed: None)
        raise UsageError(NOT_A_TERMINAL_OPEN if with_open else NOT_A_TERMINAL)
    paths = Paths(ctx.root)
    term = Terminal(ctx.out)
    try:
        refuse_before_the_walk(paths)
    except Refusal as refusal:  # a person at a terminal reads a sentence, not the refusal's JSON
        term.write(refused_text(refusal) + "\n")
        return 1
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
        term.write("  answers:\n" + "".join(f"    {cmd}\n" for cmd in commands(ask)))
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
        reason = _reason(term, verdict, offered_reason(ask, verdict))
        if reason is CANCELLED:  # Ctrl-D at the reason: this answer is taken back, nothing is written
            skipped += 1
            term.write(f"\n  cancelled — nothing recorded for {ask['id']}\n\n")
            continue
        if reason is None and verdict == "reopen":
            skipped += 1
            term.write("  no reason given — skipped (reopen needs one)\n\n")
            continue
        if reason is not None and has_control(reason):  # refused as `priors decide` refuses it, and asked again later
            skipped += 1
            term.write(f"  the reason holds a control or bidirectional-format character ({describe(reason)})"
                       " — not recorded, skipped\n\n")
            continue
        retires = None
        if verdict in ("accepted", "keep") and ask.get("supersedes_binding"):  # only the person's own key retires it
            old = ask["supersedes"]
            k2 = term.key(f"  {old} is {ask['supersedes_binding']} by a person — retire it too? y yes · n no (keep it) > ")
            term.write((k2 if k2.isprintable() else "") + "\n")
            retires = old if k2 == "y" else None
        try:
            lines = decide_verdict(paths, ask["id"], verdict, reason, retires,
                                   ask["differs_from"] if verdict == "duplicate" else None)
        except Refusal as refusal:  # the ledger moved under us (a run opened): stop, as the command would
            term.write("  " + refused_text(refusal) + "\n")
            return 1
        decided += 1
        for line in lines:
            term.write(f"  {line}\n")
        term.write("\n")
    left = asks_now(paths, with_open, ns, where)
    if decided == skipped == 0 and not stopped:
        term.write("Nothing waits for you." + ("" if with_open else " (`priors decide --open` walks the open findings)")
                   + "\n")
        return 0
    term.write(f"{decided} decided, {skipped} skipped" + (", stopped" if stopped else "") + still_waiting(left, narrowed) + "\n")
    return 0


def still_waiting(left: Sequence[Dict[str, Any]], narrowed: str = "") -> str:
    """What is left after the walk, each with the command that lists it: your calls are in `status
    --calls`; open findings only the walk with --open goes through, so that is the command named."""
    calls = sum(1 for a in left if a["kind"] != "open")
    found = len(left) - calls
    parts = []
    if calls:
        parts.append(f"{plural(calls, 'call')} still wait{'s' if calls == 1 else ''}:"
                     f" `priors status --calls` lists {'them' if calls != 1 else 'it'}")
    if found:
        parts.append(f"{plural(found, 'open finding')} still wait{'s' if found == 1 else ''}:"
                     f" `priors decide --open{' ' + narrowed if narrowed else ''}` walks {'them' if found != 1 else 'it'}")
    return (" — " + "; ".join(parts)) if parts else " — nothing else waits for you"


def refused_text(refusal: Refusal) -> str:
    """A refusal in plain words for the person at the terminal (the command line's JSON is for programs)."""
    body = refusal.payload()
    if body.get("refused") == "ACTIVE_RUN_EXISTS":
        run = body.get("run")
        return (f"A run is open ({run}): decisions happen between runs. Finish it — `priors commit --run {run}` —"
                f" or drop it — `priors abort --run {run}` — then run `priors decide` again.")
    hint = body.get("hint")
    return f"refused ({body.get('refused')})" + (f": {hint}" if isinstance(hint, str) else f": {dumps(body)}")


CANCELLED = "\x04"  # what `_reason` returns when the person ended the input (Ctrl-D): no reason can be this


def offered_reason(ask: Dict[str, Any], verdict: str) -> Optional[str]:
    """The reason the answering command printed above the prompt carries (`commands`), which Enter takes,
    so that the key writes what that command writes: a reversal's or a pressed decision's reopen, and a
    "differs" call's reopen ("a different finding from Q") and obsolete ("the same finding as Q (ns)",
    the answer "the same" to another namespace's decision), and a finding's reopen where a run proposed retiring it."""
    if verdict == "reopen" and ask["kind"] in ("reversal", "pressed", "differs", "obsolete-proposed"):
        return ask.get("reason")
    if verdict == "obsolete" and ask["kind"] == "differs":
        return ask.get("same_reason")
    return None


def _reason(term: Terminal, verdict: str, default: Optional[str]) -> Optional[str]:
    """The optional reason (None: none given; CANCELLED: Ctrl-D, take the answer back); the default
    the offered command carries, when there is one, is taken on Enter."""
    if default:
        hint = f"Enter for “{default}”" + ("" if verdict == "reopen" else "; Ctrl-D takes this answer back")
    elif verdict == "reopen":
        hint = "required — Enter alone skips"
    else:
        hint = "optional — Enter for none; Ctrl-D takes this answer back"
    text = term.line(f"  reason ({hint}): ")
    if text is None:
        return CANCELLED
    if not text and default:
        return default
    return text or None
