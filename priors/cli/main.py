"""The `priors` command line: parse the global options, dispatch to a verb (cli/verbs.py declares
them), print its answer, map errors to exit codes.

The one lazy import of the package is here: a verb's module is imported when that verb runs, so a
call pays only for what its verb uses.
"""

from __future__ import annotations

import atexit
import importlib
import os
import sys

from priors import __version__
from priors.cli.args import HelpRequested, parse
from priors.cli.verbs import ANSWER, GROUPS, VERBS
from priors.core.answer import Answer
from priors.core.canonical import dumps
from priors.core.controls import visible
from priors.core.errors import DamagedLedger, MachineError, Refusal, UsageError
from priors.core.spelling import nearest
from priors.store.files import CHANGED, LANDED, WARNINGS, ledger_landed
from priors.store.paths import find_root

TYPE_CHECKING = False

# What a person does about a damaged ledger (newcomer pass 27av: the message named the line, not the way back).
DAMAGED_NEXT = ("\n  `priors verify` names every damaged line; a ledger under git comes back as last committed with"
                " `git checkout -- .priors/ledger.jsonl` (then `priors render`)")
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from pathlib import Path
    from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

    from priors.cli.args import Parsed

class Context:
    """What every verb gets: the -C option and where to print."""

    def __init__(self, root_opt: Optional[str], out=None, err=None) -> None:
        self.root_opt = root_opt
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._root: Optional[Path] = None
        self.lost = False  # the answer could not be printed (stdout closed or full)
        self.cwd: Optional[str] = None  # what PATH arguments are relative to (None: the current directory)

    @property
    def root(self) -> Any:
        if self._root is None:
            self._root = find_root(self.root_opt)
        return self._root

    def print(self, text: str = "", utf8: Optional[bytes] = None) -> None:
        """`text` and a newline, every control character shown escaped. `utf8`: `text` in UTF-8, when the
        caller has it (relevant's 20 MB line): written as it is when nothing needs escaping and the
        stream writes UTF-8 anyway — not encoded again, nor copied to add the newline."""
        if self.lost:
            return
        try:
            out = self.out
            shown = visible(text)
            if utf8 is None or shown is not text or not self._utf8_written(utf8):
                out.write(shown)
                out.write("\n")
        except BrokenPipeError:
            raise  # the reader went away (`| head`): main stops quietly
        except (AttributeError, OSError, ValueError):  # stdout closed (None) or full
            self.lost = True

    def print_chunks(self, chunks: Iterable[str]) -> None:
        """`print` of a text in pieces (`Answer.chunks`), each written as it is made — every control
        shown escaped, piece by piece as over the whole (`visible` is character by character) — and a
        newline. An error making a piece is the verb's, raised as it is; once the stream is lost the
        rest is not made."""
        for piece in chunks:
            self._write(visible(piece))
            if self.lost:
                return
        self._write("\n")

    def _write(self, text: str) -> None:
        if self.lost:
            return
        try:
            self.out.write(text)
        except BrokenPipeError:
            raise  # the reader went away (`| head`): main stops quietly
        except (AttributeError, OSError, ValueError):  # stdout closed (None) or full
            self.lost = True

    def print_utf8(self, utf8: Union[bytes, List[Any]]) -> bool:
        """`utf8` (UTF-8 text that needs no escape: `Answer.shown`; or its pieces, bytes or spools,
        written one after another) and a newline, written as they are — never decoded. False when the stream does not
        write UTF-8 bytes: then print the text."""
        if self.lost:
            return True
        try:
            return self._utf8_written(utf8)
        except BrokenPipeError:
            raise
        except (AttributeError, OSError, ValueError):
            self.lost = True
            return True

    def _utf8_written(self, utf8: Union[bytes, List[Any]]) -> bool:
        out = self.out
        buffer = getattr(out, "buffer", None)
        if buffer is None or str(getattr(out, "encoding", "")).lower() not in ("utf-8", "utf8"):
            return False
        out.flush()
        for piece in [utf8] if isinstance(utf8, bytes) else utf8:
            for chunk in [piece] if isinstance(piece, bytes) else piece.chunks():  # (a spool: store/files.py)
                buffer.write(chunk)
        out.write("\n")
        return True


def overview() -> str:
    lines = [
        "priors — agent memory that closes the loop",
        "",
        "usage: priors [-C DIR] VERB [ARGS]      (priors VERB --help for details)",
        "",
        "An append-only ledger (.priors/ledger.jsonl) of settled judgments. Before a run",
        "the keeper selects what still applies; the run must account for every old",
        "finding before anything new; duplicates, re-raises of your decisions, reversals",
        "and below-floor nits are refused; the run is sealed atomically — or not at all.",
        "",
    ]
    for group in GROUPS:
        lines.append(group + ":")
        lines += [f"  {v.name:<13}{v.summary}" for v in VERBS.values() if v.group == group]
        lines.append("")
    lines += [
        "Global options:",
        "  -C DIR       use DIR as the target root (default: here, or the nearest",
        "               ancestor with .priors/ inside the same git work tree)",
        "  --version    print the version",
        "",
        "Exit codes: 0 done · 1 refused by a rule (one JSON line on stdout) ·",
        "2 usage error (fix the call) · 3 the machine failed (disk, permissions, I/O).",
    ]
    return "\n".join(lines)


def _split_global(argv: Sequence[str]):
    """Pull -C DIR out wherever it stands; the first other non-flag token is the verb."""
    root_opt = None
    rest: List[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "-C" or tok == "--root":
            if i + 1 >= len(argv):
                raise UsageError("priors: -C needs a directory")
            if root_opt is not None:
                raise UsageError("priors: -C given twice")
            root_opt = argv[i + 1]
            i += 2
            continue
        if tok.startswith("-C") and len(tok) > 2 and not rest:
            root_opt = tok[2:]
            i += 1
            continue
        rest.append(tok)
        i += 1
    return root_opt, rest


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _utf8_streams()
    del CHANGED[:], WARNINGS[:], LANDED[:]  # one call's record (main may run more than once in a process)

    try:
        root_opt, rest = _split_global(argv)
        if not rest or rest[0] in ("-h", "--help", "help"):
            if len(rest) > 1 and rest[0] == "help" and rest[1] in VERBS:
                return main(([] if root_opt is None else ["-C", root_opt]) + [rest[1], "--help"])
            if rest:
                return _say(overview())
            _err(overview())
            return 2
        if rest[0] in ("--version", "-V", "version"):
            return _say(f"priors {__version__}")
        verb = VERBS.get(rest[0])
        if verb is None and rest[0].startswith("-"):  # `priors --versoin`: an option, misspelt — not a verb
            known = ["--version", "--help", "-C"]
            raise UsageError(f"priors: unknown option {rest[0]}{_did_you_mean(rest[0], known)}"
                             " (options before the verb: -C DIR, --help, --version) — try `priors --help`")
        if verb is None:
            raise UsageError(f"priors: unknown verb {rest[0]!r}{_did_you_mean(rest[0], VERBS)} — try `priors --help`")
        a = parse(rest[1:], verb.spec)
        handler = getattr(importlib.import_module(verb.module), verb.handler)  # the one lazy import
        ctx = Context(root_opt)
        result = handler(a, ctx)
        code = emit(ctx, a, result) if verb.prints == ANSWER else int(result or 0)
        return _finish(ctx, code)
    except Refusal as refusal:
        try:
            sys.stdout.write(dumps(refusal.payload()) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_broken_pipe()
        except (AttributeError, OSError, ValueError):  # stdout closed or full: the refusal goes to stderr
            _quiet_broken_pipe()
            _err(dumps(refusal.payload()))
        return 1
    except UsageError as exc:
        if ledger_landed():  # a step after the ledger landed: the change stands
            return _failed(str(exc).replace("priors: ", "", 1))
        _err(str(exc) + (DAMAGED_NEXT if isinstance(exc, DamagedLedger) else ""))
        return 2
    except MachineError as exc:  # the environment failed a right call: exit 3, never the caller's fault
        code, text = machine_failure(exc)
        _err(text)
        return code
    except HelpRequested as h:
        return _say(h.text)
    except KeyboardInterrupt:
        _err("priors: interrupted")
        return 130
    except BrokenPipeError:
        _quiet_broken_pipe()
        return 0
    except Exception as exc:  # OSError, RecursionError, the last line of defence: a message, never a traceback
        return _failed(describe(exc))
    finally:
        flush_warnings()


def emit(ctx: Context, a: Parsed, answer: Answer) -> int:
    """Print an answer on the command line: its text (nothing when it is empty), or its canonical JSON
    with `--json` (or when the verb has no text form)."""
    if answer.chunks is not None:  # (the verb made them in the form asked for)
        ctx.print_chunks(answer.chunks)
    elif a.get("json") or answer.text is None:
        utf8 = answer.utf8 if answer.pieces is None else answer.pieces
        if not (answer.shown and utf8 is not None and ctx.print_utf8(utf8)):
            ctx.print(answer.json(), answer.utf8)
    elif answer.text:
        ctx.print(answer.text)
    return answer.code


def _finish(ctx: Context, code: int) -> int:
    """Flush the answer. If it cannot be printed (stdout closed or full), say so on stderr; a verb
    that changed something still exits with its own code — the change stands, and repeating the
    call would record it twice."""
    try:
        if ctx.out is None:
            raise ValueError("standard output is closed")
        ctx.out.flush()
    except BrokenPipeError:
        raise
    except (AttributeError, OSError, ValueError):
        ctx.lost = True
    if not ctx.lost:
        return code
    _quiet_broken_pipe()  # so the interpreter's own flush at exit does not fail again
    if CHANGED:
        _err("priors: warning: the answer could not be printed (standard output is closed or full); "
             "the change was made and stands — do not repeat the call (`priors status` shows the state)")
        return code
    _err("priors: cannot write the answer to standard output (closed or full); nothing was changed")
    return 2


def _say(text: str) -> int:
    """Print a text that changes nothing (help, the version): exit 0, or 2 when standard output is
    closed or full — the same answer as any read-only verb that cannot print."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return 0
    except BrokenPipeError:
        _quiet_broken_pipe()
        return 0
    except (AttributeError, OSError, ValueError):
        _quiet_broken_pipe()
        _err("priors: cannot write the answer to standard output (closed or full); nothing was changed")
        return 2


def describe(exc: BaseException) -> str:
    """An unexpected exception in words (a file system error names its file)."""
    if isinstance(exc, OSError):
        name = getattr(exc, "filename", None)
        return f"{exc.strerror or exc}{f': {name}' if name else ''}"
    if isinstance(exc, RecursionError):
        return "input nested too deeply"
    return f"unexpected error ({type(exc).__name__}: {exc}) — please report it"


def failure(message: str):
    """(exit code, honest message) for a call that failed: "nothing was changed" only when this process
    changed nothing. An error after the ledger landed is a warning: the change stands (exit 0), the
    next verb repairs. Otherwise exit 3: what ends here is the machine's failure (an OSError, an
    unexpected exception), not a wrong call. The MCP server words its errors with this too."""
    if ledger_landed():
        return 0, (f"priors: warning: {message}; this came after the ledger was written — the change stands, "
                   "do not repeat the call (`priors verify` checks .priors/, `priors render` repairs PRIORS.md)")
    if CHANGED:
        changed = ", ".join(sorted(set(CHANGED)))
        return 3, f"priors: {message}; the ledger was not changed, but this call changed: {changed}"
    return 3, f"priors: {message}; nothing was changed"


def machine_failure(exc: BaseException) -> Tuple[int, str]:
    """(exit code, message) for a MachineError: its own words, exit 3, when the call changed nothing;
    else `failure`'s, which names what changed (or, after the ledger landed, is a warning, exit 0)."""
    if CHANGED:  # its own "nothing was changed" would be false: `failure` names what was
        return failure(str(exc).replace("priors: ", "", 1).replace("; nothing was changed", ""))
    return 3, str(exc)


def _failed(message: str) -> int:
    code, text = failure(message)
    _err(text)
    return code


def flush_warnings() -> None:
    """The warnings of steps that failed after the ledger landed, on stderr (exit 0: the change stands)."""
    for w in WARNINGS:
        _err(w)
    del WARNINGS[:]


def _err(text: str) -> None:
    try:
        sys.stderr.write(visible(text) + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass  # stderr is closed too: nothing left to tell


def _quiet_broken_pipe() -> None:
    """The reader went away (`priors … | head`): stop quietly, without Python's shutdown complaint."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except (OSError, ValueError):
        pass


def _utf8_streams() -> None:
    """Write UTF-8 with \\n line ends whatever the locale or platform."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="backslashreplace", newline="\n")  # type: ignore[union-attr]  # any stream
        except (AttributeError, ValueError):
            pass


def run() -> None:
    """The process's entry point (the `priors` console script and `python -m priors`): `main()`,
    then leave at once.

    By then the answer is flushed and every file the verb wrote is closed (writes go through
    `store.files`, which closes and syncs before it returns). What is left is the interpreter
    tearing down the folded ledger object by object, which costs as much as a small verb on a
    large ledger (~80 ms for `history` at 20k priors): `os._exit` skips it. It leaves the normal
    way — `sys.exit` — whenever anything else waits for the end: a thread still running, or work
    registered with `atexit` (a coverage tool, a temporary folder's clean-up), or a stream that
    cannot be flushed."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        sys.exit(code)
    if _nothing_waits_for_exit():
        os._exit(code & 0xFF)
    sys.exit(code)


def _nothing_waits_for_exit() -> bool:
    """No other thread alive and nothing registered with `atexit` (unknown on an interpreter
    without CPython's counter: then something may be)."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    count = getattr(atexit, "_ncallbacks", None)
    return count is not None and count() == 0


def _did_you_mean(word: str, known) -> str:
    """` — did you mean `status`?` for a near miss (difflib's ratio ≥ 0.6), else nothing."""
    close = nearest(word, known)
    return f" — did you mean `{close}`?" if close else ""


if __name__ == "__main__":
    run()
