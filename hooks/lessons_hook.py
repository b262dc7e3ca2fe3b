#!/usr/bin/env python3
"""Claude Code hook: the repository's lessons, from the priors keeper, in every session.

    lessons_hook.py session-start [--keeper PATH]   (SessionStart: startup, resume, clear, compact)
    lessons_hook.py prompt [--keeper PATH]          (UserPromptSubmit: lessons ranked by the submitted prompt)
    lessons_hook.py stop [--keeper PATH]            (Stop: the turn's trace, kept for `priors reflect`)

`--keeper PATH`: the `priors` command's full path (`install.sh --hooks` passes its launcher's), used
when it is there, so a session whose PATH lacks it still reaches the keeper.

Claude Code passes the hook's input as one JSON object on standard input (`session_id`, `cwd`,
`source` for SessionStart, `prompt` for UserPromptSubmit). This script asks the keeper —
`priors lessons --inject`, the single source of truth — for the block, and hands it back as
`hookSpecificOutput.additionalContext`. On a prompt it passes `--new-only`: only lessons the
session was not given yet, so an unchanged set adds nothing. On Stop (the agent's turn ended) it
reads the turn from the session's transcript (`transcript_path`, JSON lines: the last prompt a
person typed, the assistant's text after it, each tool call with its result) and hands it to
`priors trace - --session ID`, which cuts it to size, replaces credentials and keeps it in
`.priors/traces/` (private, gitignored) for `priors reflect`; it prints nothing.

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

EVENTS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "stop": "Stop"}
ECHOES = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>")
MAX_TRANSCRIPT = 32 << 20  # bytes of a transcript read from its end: one turn is far less
SESSION_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")  # what `--session` accepts
MAX_QUERY = 4000  # characters of the prompt used for ranking: plenty of words, far from argv limits
TIMEOUT = 10  # seconds; the hook's own timeout in hooks.json is longer


ISOLATED_BOOT = "import sys;sys.path.append(sys.argv.pop(1));from priors.cli.main import run;run()"  # (store/git.py's)


def keeper(given=None):
    """The command that runs the keeper: `given` (a full path) when it is an executable file, else
    `priors` on PATH, else this Python running the keeper it can import — isolated (`-I`, the package's folder
    named): the session's folder is the project's, whose own `priors/` `-m priors` would have run (hostile pass
    27ax) — else None."""
    if given and os.path.isfile(given) and os.access(given, os.X_OK):
        return [given]
    exe = shutil.which("priors")
    if exe:
        return [exe]
    try:
        import importlib.util

        spec = importlib.util.find_spec("priors")
        if spec is not None and spec.submodule_search_locations and importlib.util.find_spec("priors.cli") is not None:
            home = os.path.dirname(os.path.abspath(list(spec.submodule_search_locations)[0]))
            return [sys.executable, "-I", "-c", ISOLATED_BOOT, home]
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


def cut(value, limit=4000):
    """A tool's JSON input with each text in it cut to `limit` characters (the keeper keeps far less)."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list):
        return [cut(x, limit) for x in value[:100]]
    if isinstance(value, dict):
        return {str(k): cut(v, limit) for k, v in list(value.items())[:100]}
    return value


def turn_of(path):
    """The last turn of a Claude Code transcript as a trace object ({prompt, assistant, tools}), or
    None when there is none: the last user entry that is a prompt (text, not tool results), then
    the assistant's text and tool calls after it, each call with its result."""
    try:
        if not os.path.isfile(path):  # a FIFO would block, /dev/zero never end
            return None
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - MAX_TRANSCRIPT))
            data = fh.read(MAX_TRANSCRIPT)
    except (OSError, ValueError, TypeError):
        return None
    entries = []
    for raw in data.split(b"\n"):
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if not isinstance(obj, dict) or any(obj.get(k) is True for k in ("isMeta", "isSidechain", "isCompactSummary")):
            continue  # Claude Code's own notes, a subagent's turns, a compaction's summary: not what a person typed
        message = obj.get("message")
        if isinstance(message, dict) and obj.get("type") in ("user", "assistant"):
            entries.append((obj["type"], message.get("content")))

    def blocks(content):
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []

    def prompt_of(content):
        texts = [b.get("text") for b in blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)]
        if any(b.get("type") == "tool_result" for b in blocks(content)):
            return None
        text = "\n".join(texts).strip()
        if text.startswith(ECHOES) or text == "[Request interrupted by user]":
            return None  # Claude Code's echo of a slash command or its output, or an interruption: not a prompt
        return text or None

    start = None
    for i in range(len(entries) - 1, -1, -1):
        if entries[i][0] == "user" and prompt_of(entries[i][1]):
            start = i
            break
    if start is None:
        return None
    said, tools, calls = [], [], {}
    for kind, content in entries[start + 1:]:
        for b in blocks(content):
            if kind == "assistant" and b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip():
                said.append(b["text"])
            elif kind == "assistant" and b.get("type") == "tool_use" and isinstance(b.get("name"), str):
                call = {"name": b["name"]}
                if b.get("input") is not None:  # as JSON, not a JSON text: the keeper judges each text in it
                    call["input"] = cut(b["input"])
                tools.append(call)
                if isinstance(b.get("id"), str):
                    calls[b["id"]] = call
            elif kind == "user" and b.get("type") == "tool_result" and str(b.get("tool_use_id")) in calls:
                out = b.get("content")
                if isinstance(out, list):
                    out = "\n".join(x.get("text", "") for x in out if isinstance(x, dict) and isinstance(x.get("text"), str))
                call = calls[b["tool_use_id"]]
                if isinstance(out, str):
                    call["output"] = out[:4000]
                if b.get("is_error") is True:
                    call["error"] = True
    trace = {"prompt": prompt_of(entries[start][1])[:8000]}
    if said:
        trace["assistant"] = said
    if tools:
        trace["tools"] = tools
    return trace


def keep_trace(cmd, hook, cwd, env):
    """Stop: the turn's trace to the keeper (`priors trace - --session ID`); prints nothing."""
    key = hook.get("session_id")
    path = hook.get("transcript_path")
    if not (isinstance(key, str) and SESSION_KEY.match(key) and isinstance(path, str)):
        return 0
    trace = turn_of(path)
    if trace is None:
        return 0
    try:
        subprocess.run(cmd + ["trace", "-", "--session", key], cwd=cwd, env=env,
                       input=json.dumps(trace).encode("utf-8"), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=TIMEOUT)
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    return 0


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
    cmd = keeper(given)
    cwd = hook.get("cwd")
    if not (isinstance(cwd, str) and os.path.isdir(cwd)):
        cwd = None
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"
    if event == "stop":
        return 0 if cmd is None else keep_trace(cmd, hook, cwd, env)
    args = arguments(event, hook)
    if args is None or cmd is None:
        return 0
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
