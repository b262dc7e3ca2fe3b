#!/usr/bin/env python3
"""Add or remove priors' lesson hooks in a Claude Code settings file (used by `install.sh --hooks`).

    claude_settings.py add SETTINGS HOOK_SCRIPT KEEPER [--dry-run]
    claude_settings.py remove SETTINGS HOOK_SCRIPT [--created] [--dry-run]

A JSON merge that keeps every other setting: `add` appends one SessionStart entry (matcher
startup|resume|clear|compact), one UserPromptSubmit entry and one Stop entry, each running HOOK_SCRIPT, unless a
hook running HOOK_SCRIPT is already there (so a second run changes nothing); `remove` takes out
only hooks whose command runs HOOK_SCRIPT, and the entries and keys that leaves empty — and with
`--created` (the installer made the file), the file itself when nothing else is left in it. The
file is replaced atomically and only when something changed. A settings file that is not a JSON
object (or whose `hooks` is not shaped as Claude Code reads it) is refused, unchanged: exit 3.
Exit 0 otherwise. Standard library only.

The hook command names no interpreter path: `python3` from the session's PATH runs the script,
as the plugin's hooks.json does, so removing the Python that ran the installer breaks nothing.
KEEPER is the full path of the `priors` command the installer wrote (empty: none), passed to the
script as `--keeper`, so a session whose PATH lacks ~/.local/bin still reaches the keeper.
"""

import json
import os
import sys
import tempfile

MATCHER = "startup|resume|clear|compact"


class Refused(Exception):
    pass


def quote(path):
    """`path` as one shell word (POSIX sh: Claude Code runs hook commands through a shell)."""
    return "'" + path.replace("'", "'\\''") + "'"


def commands(script, keeper):
    extra = f" --keeper {quote(keeper)}" if keeper else ""
    return {
        # `|| true`: even a script gone missing (python exits 2, which would block a prompt) stays quiet
        "SessionStart": f"python3 {quote(script)} session-start{extra} || true",
        "UserPromptSubmit": f"python3 {quote(script)} prompt{extra} || true",
        "Stop": f"python3 {quote(script)} stop{extra} || true",
    }


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _finite(text):
    """A number as written, unless writing it back would not be JSON (`1e400` reads as infinity,
    which `json.dumps` writes as `Infinity`, a file Claude Code cannot read)."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text} is too large to write back as JSON")
    return value


def load(path):
    if os.path.islink(path) and not os.path.exists(path):
        raise Refused(f"{path} is a symlink to {os.readlink(path)}, which is not there")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:  # a folder in its place, no permission: never a traceback
        raise Refused(f"{path} cannot be read ({exc.strerror or exc.__class__.__name__})") from None
    try:
        obj = json.loads(data.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite) if data.strip() else {}
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise Refused(f"{path} is not valid JSON ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(obj, dict):
        raise Refused(f"{path} does not hold a JSON object")
    hooks = obj.get("hooks", {})
    if not isinstance(hooks, dict):
        raise Refused(f"{path}: `hooks` is not an object")
    for event, entries in hooks.items():
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise Refused(f"{path}: `hooks.{event}` is not a list of objects")
        for e in entries:
            if "hooks" in e and not (isinstance(e["hooks"], list) and all(isinstance(h, dict) for h in e["hooks"])):
                raise Refused(f"{path}: an entry of `hooks.{event}` has `hooks` that is not a list of objects")
    return data, obj


def runs_script(hook, script):
    """Whether `hook` is one of ours for `script`, as `commands` writes it (the path quoted, or bare as an
    older install wrote it) — never a person's own command that merely names the path (hostile pass 27ae)."""
    cmd = hook.get("command")
    if not isinstance(cmd, str):
        return False
    for word in (quote(script), script):
        head = f"python3 {word} "
        if cmd.startswith(head) and cmd[len(head):].split(" ", 1)[0] in ("session-start", "prompt", "stop"):
            return True
    return False


def add(obj, script, keeper):
    hooks = obj.setdefault("hooks", {})
    done = []
    for event, cmd in commands(script, keeper).items():
        entries = hooks.setdefault(event, [])
        if any(runs_script(h, script) for e in entries for h in e.get("hooks", [])):
            continue
        entry = {"hooks": [{"type": "command", "command": cmd, "timeout": 15}]}
        if event == "SessionStart":
            entry = {"matcher": MATCHER, **entry}
        entries.append(entry)
        done.append(event)
    return done


def remove(obj, script):
    hooks = obj.get("hooks")
    if not isinstance(hooks, dict):
        return []
    done = []
    for event in list(hooks):
        entries = hooks[event]
        kept = []
        for e in entries:
            inner = e.get("hooks")
            if isinstance(inner, list) and any(runs_script(h, script) for h in inner):
                rest = [h for h in inner if not runs_script(h, script)]
                if event not in done:
                    done.append(event)
                if rest:
                    kept.append(dict(e, hooks=rest))
                continue
            kept.append(e)
        if event in done:
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if done and not hooks:
        del obj["hooks"]
    return done


def write(path, obj):
    """Replace the file atomically — the file a symlink leads to, when `path` is one (a settings file
    kept in a dotfiles repository stays linked). Text that UTF-8 cannot hold (a lone surrogate read
    from a `\\ud800` escape) is written escaped, as it was read."""
    path = os.path.realpath(path)
    try:
        data = (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        data = (json.dumps(obj, indent=2, ensure_ascii=True) + "\n").encode("ascii")
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".settings.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def main(argv):
    dry = "--dry-run" in argv
    created = "--created" in argv
    args = [a for a in argv[1:] if a not in ("--dry-run", "--created")]
    if not args or args[0] not in ("add", "remove") or len(args) != (4 if args[0] == "add" else 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    verb, path, script = args[0], args[1], args[2]
    shown = path.replace(os.path.expanduser("~"), "~", 1) if path.startswith(os.path.expanduser("~")) else path
    try:
        _, obj = load(path)
    except Refused as exc:
        print(f"  left alone: {exc}; fix it, or add the hooks by hand (see adapters/claude-code.md)")
        return 3
    done = add(obj, script, args[3]) if verb == "add" else remove(obj, script)
    if not done:
        print(f"  {shown}: {'the lesson hooks are already there' if verb == 'add' else 'no lesson hooks of ours'}")
        return 0
    what = done[0] if len(done) == 1 else ", ".join(done[:-1]) + " and " + done[-1]
    if dry:
        print(f"  would {'add' if verb == 'add' else 'remove'} the {what} lesson hook{'s' if len(done) > 1 else ''}"
              f" {'to' if verb == 'add' else 'from'} {shown}")
        return 0
    if verb == "remove" and created and not obj:  # the installer made it, and only our hooks were in it
        os.unlink(path)
        print(f"  removed the {what} lesson hook{'s' if len(done) > 1 else ''} and {shown}, which install.sh had"
              " created and which held nothing else")
        return 0
    try:
        write(path, obj)
    except OSError as exc:
        print(f"  left alone: {shown} could not be written ({exc.strerror or exc.__class__.__name__}); fix it, or add"
              " the hooks by hand (see adapters/claude-code.md)")
        return 3
    print(f"  {'added' if verb == 'add' else 'removed'} the {what} lesson hook{'s' if len(done) > 1 else ''}"
          f" {'to' if verb == 'add' else 'from'} {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
