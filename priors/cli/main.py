"""The `priors` command line: parse the global options, dispatch to a verb, map errors to exit codes.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List, Optional, Sequence

# verb -> (module, function, one-line summary). Each function takes (argv, ctx) and returns an exit code.
VERBS = {
    "init": ("priors.cli.desk_verbs", "cmd_init", "create .priors/ in the target repo (idempotent)"),
    "hash": ("priors.cli.desk_verbs", "cmd_hash", "print the sha12 of a file, a text or raw bytes"),
    "snapshot": ("priors.cli.snapshot_verb", "cmd_snapshot", "print a map of scope refs (files, definitions, dirs, *) to hashes"),
    "relevant": ("priors.cli.run_verbs", "cmd_relevant", "open a run: select what still applies"),
    "disposition": ("priors.cli.run_verbs", "cmd_disposition", "record the agent's verdict on an old finding"),
    "propose": ("priors.cli.run_verbs", "cmd_propose", "stage a new prior (vetoed if it repeats the past)"),
    "withdraw": ("priors.cli.ground_verbs", "cmd_withdraw", "take back priors this open run staged"),
    "scopes": ("priors.cli.ground_verbs", "cmd_scopes", "print an open run's scope refs (with --lines, line spans)"),
    "ingest-sarif": ("priors.cli.sarif_verbs", "cmd_ingest_sarif", "one whole run from an analyzer's SARIF log (ruff, semgrep, CodeQL…)"),
    "commit": ("priors.cli.run_verbs", "cmd_commit", "seal the run atomically — or refuse"),
    "abort": ("priors.cli.run_verbs", "cmd_abort", "drop an open run's staging; the ledger is untouched"),
    "decide": ("priors.cli.desk_verbs", "cmd_decide", "a human verdict that sticks (between runs)"),
    "redact": ("priors.cli.desk_verbs", "cmd_redact", "remove a prior's content from .priors/ for good"),
    "status": ("priors.cli.desk_verbs", "cmd_status", "one line per namespace; --calls lists your calls"),
    "render": ("priors.cli.desk_verbs", "cmd_render", "rewrite .priors/PRIORS.md from the ledger"),
    "report": ("priors.cli.report_verb", "cmd_report", "write one self-contained HTML page: chart, your calls, open findings"),
    "show": ("priors.cli.inspect_verbs", "cmd_show", "one prior in plain words and its whole timeline"),
    "list": ("priors.cli.inspect_verbs", "cmd_list", "list priors, filtered by namespace, status or type"),
    "history": ("priors.cli.inspect_verbs", "cmd_history", "per-run table and chart: a project converging to quiescence"),
    "verify": ("priors.cli.verify_verb", "cmd_verify", "check the ledger is sound (CI, pre-commit); --since REV: it only grew"),
    "merge-driver": ("priors.cli.merge_verb", "cmd_merge_driver", "git merge driver for the ledger (set up by `init --git`)"),
    "add": ("priors.cli.lessons_verbs", "cmd_add", "record a lesson a person wrote, as accepted (between runs)"),
    "score": ("priors.cli.lessons_verbs", "cmd_score", "score how a committed run turned out; credits its lessons"),
    "reflect": ("priors.cli.lessons_verbs", "cmd_reflect", "write a reflection packet from scored runs for the next run"),
    "lessons": ("priors.cli.lessons_verbs", "cmd_lessons", "list lessons with uses, wins, partials, losses and score"),
    "export": ("priors.cli.lessons_verbs", "cmd_export", "write a JSON bundle of lessons (no runs, scores or notes)"),
    "import": ("priors.cli.lessons_verbs", "cmd_import", "add a bundle's lessons as a sealed run, skipping known ones"),
    "config": ("priors.cli.lessons_verbs", "cmd_config", "show or set .priors/config.json (injection budget, review)"),
    "demo": ("priors.cli.demo", "cmd_demo", "watch three scripted runs in a scratch repo (start here)"),
    "mcp": ("priors.cli.mcp_server", "cmd_mcp", "serve the agent's verbs as MCP tools on stdin/stdout (for agent clients)"),
}

GROUPS = [
    ("Start here", ["demo"]),
    ("Set up", ["init", "hash", "snapshot", "mcp"]),
    ("The run ritual (agent)", ["relevant", "scopes", "disposition", "propose", "withdraw", "commit", "abort"]),
    ("Humans", ["decide", "redact", "status", "render"]),
    ("See what is settled", ["show", "list", "history", "report"]),
    ("CI and git", ["verify", "merge-driver", "ingest-sarif"]),
    ("Lessons", ["add", "score", "reflect", "lessons", "export", "import", "config"]),
]


class Context:
    """What every verb gets: the -C option and where to print."""

    def __init__(self, root_opt: Optional[str], out=None, err=None) -> None:
        self.root_opt = root_opt
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._root = None
        self.lost = False  # the answer could not be printed (stdout closed or full)
        self.cwd: Optional[str] = None  # what PATH arguments are relative to (None: the current directory)

    @property
    def root(self):
        if self._root is None:
            from priors.store.paths import find_root

            self._root = find_root(self.root_opt)
        return self._root

    def print(self, text: str = "") -> None:
        if self.lost:
            return
        try:
            self.out.write(_visible(text) + "\n")
        except BrokenPipeError:
            raise  # the reader went away (`| head`): main stops quietly
        except (AttributeError, OSError, ValueError):  # stdout closed (None) or full
            self.lost = True


def _version() -> str:
    from priors import __version__

    return __version__


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
    listed = set()
    for title, verbs in GROUPS:
        lines.append(title + ":")
        for v in verbs:
            if v in VERBS:
                listed.add(v)
                lines.append(f"  {v:<13}{VERBS[v][2]}")
        lines.append("")
    rest = [v for v in VERBS if v not in listed]
    if rest:
        lines.append("More:")
        for v in rest:
            lines.append(f"  {v:<13}{VERBS[v][2]}")
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
    from priors.core.errors import UsageError

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
    from priors.core.errors import MachineError, Refusal, UsageError
    from priors.store.files import CHANGED, WARNINGS

    del CHANGED[:], WARNINGS[:]  # one call's record (main may run more than once in a process)

    try:
        root_opt, rest = _split_global(argv)
        if not rest or rest[0] in ("-h", "--help", "help"):
            if len(rest) > 1 and rest[0] == "help" and rest[1] in VERBS:
                return main(([] if root_opt is None else ["-C", root_opt]) + [rest[1], "--help"])
            if rest:
                print(overview())
                return 0
            _err(overview())
            return 2
        if rest[0] in ("--version", "-V", "version"):
            print(f"priors {_version()}")
            return 0
        verb = rest[0]
        if verb not in VERBS:
            raise UsageError(f"priors: unknown verb {verb!r}{_did_you_mean(verb, VERBS)} — try `priors --help`")
        module, func, _ = VERBS[verb]
        import importlib

        fn = getattr(importlib.import_module(module), func)
        ctx = Context(root_opt)
        code = int(fn(rest[1:], ctx) or 0)
        return _finish(ctx, code)
    except Refusal as refusal:
        from priors.core.canonical import dumps

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
        from priors.store.files import ledger_landed

        if ledger_landed():  # a step after the ledger landed: the change stands
            return _failed(str(exc).replace("priors: ", "", 1))
        _err(str(exc))
        return 2
    except MachineError as exc:  # the environment failed a right call: exit 3, never the caller's fault
        code, text = machine_failure(exc)
        _err(text)
        return code
    except _help_type() as h:
        try:
            print(h.text)
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_broken_pipe()
        return 0
    except KeyboardInterrupt:
        _err("priors: interrupted")
        return 130
    except BrokenPipeError:
        _quiet_broken_pipe()
        return 0
    except Exception as exc:  # OSError, RecursionError, the last line of defence: a message, never a traceback
        return _failed(describe(exc))
    finally:
        _flush_warnings()


def _finish(ctx: Context, code: int) -> int:
    """Flush the answer. If it cannot be printed (stdout closed or full), say so on stderr; a verb
    that changed something still exits with its own code — the change stands, and repeating the
    call would record it twice."""
    from priors.store.files import CHANGED

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
    from priors.store.files import CHANGED, ledger_landed

    if ledger_landed():
        return 0, (f"priors: warning: {message}; this came after the ledger was written — the change stands, "
                   "do not repeat the call (`priors verify` checks .priors/, `priors render` repairs PRIORS.md)")
    if CHANGED:
        changed = ", ".join(sorted(set(CHANGED)))
        return 3, f"priors: {message}; the ledger was not changed, but this call changed: {changed}"
    return 3, f"priors: {message}; nothing was changed"


def machine_failure(exc: BaseException):
    """(exit code, message) for a MachineError: its own words, exit 3, when the call changed nothing;
    else `failure`'s, which names what changed (or, after the ledger landed, is a warning, exit 0)."""
    from priors.store.files import CHANGED

    if CHANGED:
        return failure(str(exc).replace("priors: ", "", 1))
    return 3, str(exc)


def _failed(message: str) -> int:
    code, text = failure(message)
    _err(text)
    return code


def _flush_warnings() -> None:
    from priors.store.files import WARNINGS

    for w in WARNINGS:
        _err(w)
    del WARNINGS[:]


def _visible(text: str) -> str:
    """No control or bidi-format character reaches a terminal raw (priors/core/controls.py)."""
    from priors.core.controls import visible

    return visible(text)


def _err(text: str) -> None:
    try:
        sys.stderr.write(_visible(text) + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass  # stderr is closed too: nothing left to tell


def _quiet_broken_pipe() -> None:
    """The reader went away (`priors … | head`): stop quietly, without Python's shutdown complaint."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except (OSError, ValueError):
        pass


def _help_type():
    from priors.cli.args import HelpRequested

    return HelpRequested


def _utf8_streams() -> None:
    """Write UTF-8 with \\n line ends whatever the locale or platform."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="backslashreplace", newline="\n")  # type: ignore[attr-defined]
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
    import os

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
    import atexit

    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    count = getattr(atexit, "_ncallbacks", None)
    return count is not None and count() == 0


def _did_you_mean(word: str, known) -> str:
    """` — did you mean `status`?` for a near miss (difflib's ratio ≥ 0.6), else nothing."""
    from priors.core.spelling import nearest

    close = nearest(word, known)
    return f" — did you mean `{close}`?" if close else ""


if __name__ == "__main__":
    run()
