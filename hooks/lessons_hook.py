#!/usr/bin/env python3
"""Claude Code hook: the repository's lessons, from the priors keeper, in every session.

    lessons_hook.py session-start [--keeper PATH]   (SessionStart: startup, resume, clear, compact)
    lessons_hook.py prompt [--keeper PATH]          (UserPromptSubmit: lessons ranked by the submitted prompt)

`--keeper PATH`: the `priors` command's full path (`install.sh --hooks` passes its launcher's), used
when it is there, so a session whose PATH lacks it still reaches the keeper.

Claude Code passes the hook's input as one JSON object on standard input (`session_id`, `cwd`,
`source` for SessionStart, `prompt` for UserPromptSubmit). This script asks the keeper —
`priors lessons --inject`, the single source of truth — for the block, and hands it back as
`hookSpecificOutput.additionalContext`. On a prompt it passes `--new-only`: only lessons the
session was not given yet, so an unchanged set adds nothing.

Fail-open, always: no keeper, no `.priors/`, malformed input, a slow or failing keeper — the
script prints nothing and exits 0. It never blocks a prompt (exit code 2 would) and never
writes anything itself. Standard library only; it does not import the keeper.
"""

import json
import os
import re
import shutil
import subprocess
import sys

EVENTS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit"}
SESSION_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")  # what `--session` accepts
MAX_QUERY = 4000  # characters of the prompt used for ranking: plenty of words, far from argv limits
TIMEOUT = 10  # seconds; the hook's own timeout in hooks.json is longer


def keeper(given=None):
    """The command that runs the keeper: `given` (a full path) when it is an executable file, else
    `priors` on PATH, else this Python's `-m priors`, else None."""
    if given and os.path.isfile(given) and os.access(given, os.X_OK):
        return [given]
    exe = shutil.which("priors")
    if exe:
        return [exe]
    try:
        import importlib.util

        if importlib.util.find_spec("priors") is not None and importlib.util.find_spec("priors.cli") is not None:
            return [sys.executable, "-m", "priors"]
    except (ImportError, ValueError):
        pass
    return None


def read_input():
    """The hook's JSON object, or None when stdin holds anything else."""
    try:
        data = sys.stdin.buffer.read() if sys.stdin is not None else b""
        obj = json.loads(data.decode("utf-8")) if data.strip() else None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def arguments(event, hook):
    """The `lessons --inject` arguments for this event, or None when there is nothing to ask."""
    args = ["lessons", "--inject"]
    key = hook.get("session_id")
    if isinstance(key, str) and SESSION_KEY.match(key):
        args += ["--session", key]
    elif event == "session-start" and hook.get("source") in ("startup", "clear"):
        args.append("--fresh")  # no id to tell sessions apart: a new session starts here
    if event == "prompt":
        prompt = hook.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return None
        args += ["--query", prompt[:MAX_QUERY], "--new-only"]
    return args


def main(argv):
    given = None
    if len(argv) == 4 and argv[2] == "--keeper":
        given, argv = argv[3], argv[:2]
    if len(argv) != 2 or argv[1] not in EVENTS:
        return 0  # misconfigured: still never in the way
    event = argv[1]
    hook = read_input()
    if hook is None:
        return 0
    args = arguments(event, hook)
    cmd = keeper(given)
    if args is None or cmd is None:
        return 0
    cwd = hook.get("cwd")
    if not (isinstance(cwd, str) and os.path.isdir(cwd)):
        cwd = None
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"
    try:
        proc = subprocess.run(cmd + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=TIMEOUT)
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0
    if proc.returncode != 0:
        return 0
    text = proc.stdout.decode("utf-8", "replace").strip()
    if not text:
        return 0
    out = {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": text}}
    try:
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    return 0


if __name__ == "__main__":
    try:
        code = main(sys.argv)
    except BaseException:  # fail-open: whatever happened, the session goes on
        code = 0
    sys.exit(code)
