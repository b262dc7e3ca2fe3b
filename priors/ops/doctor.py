"""`priors doctor`: whether this machine and this clone are set up as the keeper needs — the command
on PATH, the skills in each agent harness's folder, the Claude Code lesson hooks and what they run,
the MCP registrations, the Pi extension, the ledger's merge driver, the pre-commit hooks, signing
(when `.priors/allowed_signers` asks for it), and the ledger itself. One line a check, each off one
with the command that fixes it.

It only reads: files under the home folder, the target's git config and hooks, and the ledger
(through `verify`). It starts no agent client: a registration is read from the client's own file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from fnmatch import fnmatchcase
from pathlib import Path

from priors import __version__
from priors.core.answer import Answer
from priors.core.errors import MachineError, Refusal, UsageError
from priors.core.signing import KEY_TYPES, unreadable_signers
from priors.ops.verify import verify
from priors.store.cache_key import cache_key, key_inside, key_path
from priors.store.files import read_bytes
from priors.store.git import ATTR_LINES, config_value, hooks_path, in_work_tree
from priors.store.paths import Paths
from priors.store.signing import ready_to_sign, signers_path, signing_key

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional

OK, OFF, NONE = "ok", "off", "–"  # set up; set up wrongly or missing where it is needed; not set up (optional)
INSTALL = "./install.sh (in your clone of the priors repository)"
HOOKS = "./install.sh --hooks (in your clone of the priors repository)"
HOOK_MARK = b"priors lessons --inject"  # in our hook script's docstring: a lessons_hook.py without it is not ours
SKILLS = ("priors", "with-priors")
# Harness folders install.sh fills, and whether the harness also reads ~/.agents/skills (README.md)
HARNESSES = ((".claude", False), (".codex", True), (".agents", False), (".pi/agent", True), (".openclaw", True))
MAX_JSON = 4 * 1024 * 1024  # a settings file larger than this is not one to read


def check(name: str, state: str, detail: str, fix: str = "") -> Dict[str, str]:
    out = {"check": name, "state": state, "detail": detail}
    if fix:
        out["fix"] = fix
    return out


def tilde(path: Any, home: Path) -> str:
    text = str(path)
    return "~" + text[len(str(home)):] if text.startswith(str(home) + os.sep) else text


def _read(path: Path) -> Optional[bytes]:
    """A file's bytes; None when absent — or not a regular file, or unreadable: doctor reports, never stops."""
    try:
        return read_bytes(path, MAX_JSON, "a settings file")
    except (UsageError, MachineError):
        return None


def _json(path: Path) -> Optional[Any]:
    data = _read(path)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return ValueError


def command_check(home: Path) -> Dict[str, str]:
    found = shutil.which("priors")
    running = f"this one: priors {__version__}, {Path(sys.executable).as_posix()} -m priors"
    if found:
        other = _other_keeper(found)
        if other:
            return check("command", OFF, f"`priors` on PATH is {tilde(found, home)}, which runs {tilde(other, home)} — "
                                         f"not {running}", INSTALL + ", or run the one on PATH")
        return check("command", OK, f"`priors` on PATH is {tilde(found, home)} ({running})")
    local = home / ".local" / "bin" / "priors"
    if local.is_file() and os.access(str(local), os.X_OK):
        return check("command", OFF, f"{tilde(local, home)} is installed but not on PATH ({running})",
                     'export PATH="$HOME/.local/bin:$PATH" (in your shell profile)')
    return check("command", OFF, f"no `priors` on PATH ({running})", INSTALL)


def _other_keeper(launcher: str) -> Optional[str]:
    """The interpreter (or checkout) the `priors` on PATH runs when it is plainly not this one; None when it is
    this one or cannot be told (a binary, a launcher of another shape): doctor only reads, it runs nothing.

    Read: a console script's `#!PYTHON` line, and install.sh's `'PYTHON' [-I] -m priors` launcher (with
    `PYTHONPATH='CHECKOUT'` when it runs a checkout)."""
    if os.path.realpath(launcher) == os.path.realpath((sys.argv[0] if sys.argv else "") or "."):
        return None
    data = _read(Path(launcher))
    if data is None or b"\0" in data[:1024]:
        return None
    text = data[:4096].decode("utf-8", "replace")
    lines = text.splitlines()
    if lines and lines[0].startswith("#!") and "python" in lines[0] and "priors" in text:
        words = lines[0][2:].split()
        python = words[0] if words and not words[0].endswith("/env") else None
    else:
        m = re.search(r"'([^']+)' (?:-I )?-m priors", text)
        python = m.group(1) if m else None
        where = re.search(r"PYTHONPATH='([^']+)'", text)
        here = Path(__file__).resolve().parents[2]
        if where and python and not _same(where.group(1), str(here)):
            return where.group(1)
    if python is None:
        return None
    return None if _same(python, sys.executable) else python


def _same(a: str, b: str) -> bool:
    """Whether two interpreters or checkouts are one. A venv's python is a symlink to the system's, so two venvs
    resolve alike: pythons in one folder (`bin/python`, `bin/python3`) are one, links are not followed."""
    if os.path.abspath(a) == os.path.abspath(b) or os.path.dirname(os.path.abspath(a)) == os.path.dirname(os.path.abspath(b)) \
            and os.path.basename(a).startswith("python") and os.path.basename(b).startswith("python"):
        return True
    if os.path.islink(a) or os.path.islink(b):
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def skills_checks(home: Path) -> List[Dict[str, str]]:
    shared = home / ".agents" / "skills"
    shared_ok = all((shared / s / "SKILL.md").is_file() for s in SKILLS)
    out = []
    for folder, reads_shared in HARNESSES:
        base = home / folder
        if not base.is_dir():
            continue
        where = base / "skills"
        missing = [s for s in SKILLS if not (where / s / "SKILL.md").is_file()]
        name = f"skills in {tilde(where, home)}"
        if not missing:
            out.append(check(name, OK, "priors and with-priors"))
        elif folder == ".claude" and _claude_plugin(base):
            out.append(check(name, OK, "from the priors plugin"))
        elif reads_shared and shared_ok and folder != ".agents":
            out.append(check(name, OK, f"priors and with-priors, from {tilde(shared, home)} (read there too)"))
        else:
            out.append(check(name, OFF, f"{' and '.join(missing)} missing", INSTALL))
    if not out:
        out.append(check("skills", NONE, "no agent harness folder found (~/.claude, ~/.codex, ~/.agents, "
                                          "~/.pi/agent, ~/.openclaw)", INSTALL + " — it fills ~/.agents/skills"))
    return out


def _claude_plugin(claude: Path) -> bool:
    """Whether Claude Code holds the priors plugin (its skills then come with it, not from ~/.claude/skills)."""
    plugins = claude / "plugins"
    if not plugins.is_dir():
        return False
    for dirpath, dirnames, _ in os.walk(str(plugins)):
        if dirpath.count(os.sep) - str(plugins).count(os.sep) >= 3:
            dirnames[:] = []
        if os.path.isfile(os.path.join(dirpath, ".claude-plugin", "plugin.json")) and \
                os.path.isfile(os.path.join(dirpath, "skills", "with-priors", "SKILL.md")):
            return True
    return False


def _resolves(word: str) -> bool:
    return os.path.isfile(word) if os.sep in word or (os.altsep and os.altsep in word) else shutil.which(word) is not None


def hooks_check(home: Path) -> Dict[str, str]:
    name = "Claude Code lesson hooks"
    settings = home / ".claude" / "settings.json"
    obj = _json(settings)
    if obj is ValueError or (obj is not None and not isinstance(obj, dict)):
        return check(name, OFF, f"{tilde(settings, home)} is not a JSON object", "fix the file, then " + HOOKS)
    hooks = obj.get("hooks") if isinstance(obj, dict) else None
    found = [(event, h["command"]) for event, entries in (hooks.items() if isinstance(hooks, dict) else ())
             if isinstance(entries, list)
             for e in entries if isinstance(e, dict) and isinstance(e.get("hooks"), list) for h in e["hooks"]
             if isinstance(h, dict) and isinstance(h.get("command"), str) and "lessons_hook.py" in h["command"]]
    cmds: List[str] = [cmd for _, cmd in found]
    if not cmds:
        return check(name, NONE, "not in ~/.claude/settings.json (optional; the Claude Code plugin carries its own)",
                     HOOKS)
    interpreter, keeper = "", None
    for cmd in cmds:
        try:
            words = shlex.split(cmd.split("||")[0])
        except ValueError:
            return check(name, OFF, f"a hook command that cannot be read: {cmd}", HOOKS)
        if len(words) < 2:
            return check(name, OFF, f"a hook command that runs nothing: {cmd}", HOOKS)
        interpreter, script = words[0], words[1]
        if not _resolves(interpreter):
            return check(name, OFF, f"the hooks run {interpreter}, which is not there", HOOKS)
        if not os.path.isfile(script):
            return check(name, OFF, f"the hook script {tilde(script, home)} is gone", HOOKS)
        if os.path.basename(script) != "lessons_hook.py" or HOOK_MARK not in (_read(Path(script)) or b""):
            return check(name, OFF, f"a hook runs {tilde(script, home)}, which is not the keeper's lessons_hook.py", HOOKS)
        if "stop" in words[2:3] and b'"stop"' not in (_read(Path(script)) or b""):
            return check(name, OFF, f"the Stop hook runs {tilde(script, home)}, a copy older than the Stop hook: "
                                    "no session's trace is kept", HOOKS)
        keeper = words[words.index("--keeper") + 1] if "--keeper" in words[:-1] else None
        if keeper is not None and not os.path.isfile(keeper) and shutil.which("priors") is None:
            return check(name, OFF, f"the hooks run the keeper {tilde(keeper, home)}, which is not there, and no "
                                    "`priors` is on PATH", INSTALL)
    missing = [event for event in ("SessionStart", "UserPromptSubmit", "Stop") if event not in {ev for ev, _ in found}]
    if missing:
        return check(name, OFF, f"no {' or '.join(missing)} hook (an install from before it"
                                + ("; no session's trace is kept)" if "Stop" in missing else ")"), HOOKS)
    return check(name, OK, f"{len(cmds)} hook{'s' if len(cmds) != 1 else ''}, run by {interpreter}"
                           + (f", the keeper {tilde(keeper, home)}" if keeper else ", the keeper found on PATH"))


def _codex_command(text: str) -> Optional[str]:
    """The `command` of `[mcp_servers.priors]` in Codex's config.toml (a line-level read: no TOML parser
    before Python 3.11); "" when the table is there without one; None when the table is not."""
    inside, found = False, None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("["):
            inside = s == "[mcp_servers.priors]"
            if inside:
                found = ""
            continue
        if inside and s.startswith("command") and "=" in s:
            value = s.split("=", 1)[1].strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            found = value
    return found


def mcp_checks(home: Path) -> List[Dict[str, str]]:
    out = []
    registered: Dict[str, Optional[str]] = {}
    if (home / ".claude").is_dir() or (home / ".claude.json").is_file():
        obj = _json(home / ".claude.json")
        servers = obj.get("mcpServers") if isinstance(obj, dict) else None
        entry = servers.get("priors") if isinstance(servers, dict) else None
        cmd = entry.get("command") if isinstance(entry, dict) else None
        registered["Claude Code"] = (cmd if isinstance(cmd, str) else "") if isinstance(entry, dict) else None
    if (home / ".codex").is_dir():
        data = _read(home / ".codex" / "config.toml")
        registered["Codex"] = _codex_command(data.decode("utf-8", "replace")) if data is not None else None
    for client, cmd in registered.items():
        name = f"MCP server in {client}"
        if cmd is None:
            fix = INSTALL
            if client == "Claude Code" and shutil.which("claude") is None:  # install.sh registers through it
                fix = "claude mcp add --scope user priors -- priors mcp (once Claude Code's claude command is on PATH)"
            out.append(check(name, NONE, "not registered (optional: the agent then uses the shell)", fix))
        elif not cmd or not _resolves(cmd):
            out.append(check(name, OFF, f"registered to run {cmd or '(no command)'}, which is not there", INSTALL))
        else:
            out.append(check(name, OK, f"registered: {tilde(cmd, home)} mcp"))
    return out


def pi_check(home: Path) -> Dict[str, str]:
    if not (home / ".pi" / "agent").is_dir():
        return check("Pi extension", NONE, "Pi is not set up here (~/.pi/agent)")
    ext = home / ".pi" / "agent" / "extensions" / "priors" / "index.ts"
    if ext.is_file():
        return check("Pi extension", OK, tilde(ext.parent, home))
    return check("Pi extension", OFF, f"Pi is here but {tilde(ext.parent, home)} is missing", INSTALL)


def git_checks(root: Path, kept: bool = True) -> List[Dict[str, str]]:
    """The merge driver and the hooks of the repository at `root`; `kept`: it has a `.priors/` — where
    it has none (the priors clone itself, where install.sh leaves a newcomer) there is no ledger for
    a driver to merge, and `priors init --git` belongs in the repository an agent reviews."""
    if not in_work_tree(root):
        return [check("merge driver", NONE, f"{root} is not in a git work tree"),
                check("pre-commit hooks", NONE, "no git work tree")]
    out = []
    if not kept:
        out.append(check("merge driver", NONE, "no ledger here to merge (`priors init --git` in the repository you"
                         " review registers it there)"))
        return out + [check("pre-commit hooks", NONE, "no ledger here to verify")]
    drivers = [config_value(root, key) for key in DRIVER_KEYS]
    attrs = (_read(root / ".gitattributes") or b"").decode("utf-8", "replace")
    have = {ln.strip() for ln in attrs.splitlines()}
    missing = [ln for ln in ATTR_LINES if ln not in have]
    broken = [why for why in map(_driver_problem, DRIVER_KEYS, drivers) if why]
    driver = all(drivers)
    if driver and not missing and broken:
        out.append(check("merge driver", OFF, broken[0], "priors init --git"))
    elif driver and not missing:
        out.append(check("merge driver", OK, "registered in this clone (.gitattributes and git config)"))
    else:
        unset = [key for key, value in zip(DRIVER_KEYS, drivers) if not value]
        what = " and ".join((["git config " + ", ".join(unset)] if unset else []) + ([".gitattributes lines"] if missing else []))
        out.append(check("merge driver", OFF, f"{what} missing: two branches' runs would conflict", "priors init --git"))
    config = (_read(root / ".pre-commit-config.yaml") or b"").decode("utf-8", "replace")
    wanted = [stage for stage, hook in (("pre-commit", "priors-verify"), ("pre-push", "priors-verify-since-upstream"))
              if hook + "\n" in config + "\n" or f"id: {hook} " in config or f"id: {hook}\t" in config]
    if not wanted:
        out.append(check("pre-commit hooks", NONE, "priors-verify is not in .pre-commit-config.yaml (optional)",
                         "add the priors-verify hooks (docs/ci.md, pre-commit)"))
        return out
    where = hooks_path(root)
    absent = [stage for stage in wanted if where is None or not (where / stage).is_file()]
    # git skips a hook file it cannot execute (with a hint at most): on POSIX that hook never runs
    idle = [stage for stage in wanted if stage not in absent and where is not None and os.name != "nt"
            and not os.access(str(where / stage), os.X_OK)]
    if idle and not absent:
        out.append(check("pre-commit hooks", OFF, f"the {' and '.join(idle)} hook is not executable: git skips it",
                         "chmod +x " + " ".join(os.path.join(str(where), s) for s in idle) + " (or pre-commit install again)"))
    elif absent:
        out.append(check("pre-commit hooks", OFF, f"configured, but git has no {' or '.join(absent)} hook installed",
                         "pre-commit install " + " ".join(f"--hook-type {s}" for s in wanted)))
    else:
        out.append(check("pre-commit hooks", OK, f"{' and '.join(wanted)} installed"))
    return out


DRIVER_KEYS = ("merge.priors.driver", "merge.priors-render.driver")  # what `init --git` sets (store/git.py)


def _driver_problem(key: str, value: Optional[str]) -> Optional[str]:
    """Why the merge driver git would run for `key` is not the keeper's (None: it is, or it is unset)."""
    if not value:
        return None
    try:
        words = shlex.split(value)
    except ValueError:
        words = []
    if "merge-driver" not in words:
        return f"git config {key} is `{value}`, which does not run `priors merge-driver`: merges would not be the keeper's"
    if not _resolves(words[0]):
        return f"git config {key} runs {words[0]}, which is not there: a merge of two branches' runs would fail"
    return None


SIGN_DOC = 'docs/ci.md, "Human lines are signed"'


def signing_check(paths: Paths) -> Dict[str, str]:
    """With `.priors/allowed_signers` (signing on): git's settings name a key and a principal, ssh-keygen
    is there, and the file lists that principal — with that key, when its public half can be read
    without asking for a passphrase. What `decide` would refuse, said before a person decides."""
    try:
        listed = read_bytes(Path(signers_path(paths.root))) if paths.dir.is_dir() else None
    except (OSError, UsageError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).replace("priors: ", "", 1)
        return check("signing", OFF, f".priors/allowed_signers cannot be read: {why}", SIGN_DOC)
    if listed is None and paths.dir.is_dir():
        try:
            ready_to_sign(paths.root)  # (HEAD may hold the list the work tree lacks: still on, and refused)
        except Refusal as exc:
            return check("signing", OFF, str(exc.details.get("hint", exc.code)).split("; nothing was written")[0],
                         SIGN_DOC)
    if listed is None:
        return check("signing", NONE, "a person's decisions are not signed (no .priors/allowed_signers; optional)",
                     SIGN_DOC)
    try:
        ready_to_sign(paths.root)
        email, key, literal, _ = signing_key(paths.root)
    except Refusal as exc:
        why = str(exc.details.get("hint", exc.code)).split("; nothing was written")[0]
        return check("signing", OFF, why, SIGN_DOC)
    bad = unreadable_signers(listed)
    if bad:
        return check("signing", OFF, f".priors/allowed_signers {bad[0][1]}", SIGN_DOC)
    keys = set()
    for line in listed.decode("utf-8", "replace").splitlines():
        words = line.split()
        at = next((i for i, w in enumerate(words) if w in KEY_TYPES), None)
        if words and not words[0].startswith("#") and at and at + 1 < len(words) and any(
                fnmatchcase(email, pat) for pat in words[0].split(",") if pat and not pat.startswith("!")):
            keys.add((words[at], words[at + 1]))
    if not keys:
        return check("signing", OFF, f"your principal {email} (git config user.email) is not in "
                     ".priors/allowed_signers: every `priors decide` would be refused",
                     f"add `{email} <your public key>` to it, in a change of its own that lands first")
    mine = key if literal else (read_bytes(Path(key if key.endswith(".pub") else key + ".pub")) or b"").decode(
        "utf-8", "replace")
    words = mine.split()
    if len(words) >= 2 and words[0] in KEY_TYPES and (words[0], words[1]) not in keys:
        return check("signing", OFF, f"the key git signs with ({key}) is not the one .priors/allowed_signers "
                     f"lists for {email}: every `priors decide` would be refused",
                     f"git config user.signingkey <the key listed for {email}>, or list this one")
    return check("signing", OK, f"a person's decisions are signed: you sign as {email}")


def ledger_check(paths: Paths) -> Dict[str, str]:
    if os.path.lexists(str(paths.dir)) and not paths.dir.is_dir():
        return check("ledger", OFF, f"{paths.dir} is a file, not the keeper's folder", "move it away, then priors init")
    if not paths.dir.is_dir():
        return check("ledger", NONE, f"no .priors/ in {paths.root}",
                     "priors init (in the repository an agent reviews: it keeps the ledger there)")
    try:
        answer, _ = verify(paths, None, False)
    except UsageError as exc:  # a damaged ledger: named by verify's own message
        return check("ledger", OFF, str(exc).replace("priors: ", "", 1), "priors verify")
    if answer.code == 0:
        # the verdict line: verify lists a change's decisions by a person after it
        verdict = [line for line in (answer.text or "").splitlines() if line.startswith("ledger sound")]
        return check("ledger", OK, verdict[0] if verdict else "sound")
    problems = answer.obj["problems"]
    first = problems[0] if problems else {}
    where = first.get("file") or (f"line {first['line']}" if first.get("line") else ".priors/")
    n = len(problems)  # (the first named: a config the keeper cannot read is not the ledger's doing)
    return check("ledger", OFF, f"{n} problem{'s' if n != 1 else ''} in .priors/, the first {where} ({first.get('code')})",
                 "priors verify (lists them)")


def cache_check(home: Path, paths: Paths) -> Dict[str, str]:
    """The key that proves a cache file this keeper's (store/cache_key.py): without one no cache is kept."""
    where = key_path()
    if where is not None and key_inside(paths.dir):
        return check("cache key", OFF, f"{tilde(where, home)} is inside this repository, where an agent can read it:"
                     " no cache is kept, so every verb folds the ledger itself (slower on a large ledger, never wrong)",
                     "give XDG_CACHE_HOME (LOCALAPPDATA on Windows) a folder of yours outside the repository")
    if cache_key(paths.dir) is not None:
        return check("cache key", OK, f"{tilde(where, home)} (outside the repository: a cache an agent wrote is not believed)")
    return check("cache key", NONE, f"none can be kept{' at ' + tilde(where, home) if where else ''}: no fold cache, so"
                 " every verb folds the ledger itself (slower on a large ledger, never wrong)",
                 "give XDG_CACHE_HOME (LOCALAPPDATA on Windows) a folder of yours that can be written")


def doctor(paths: Paths) -> Answer:
    """Every check, in the order a set-up is built; exit 1 when any is off."""
    home = Path(os.path.expanduser("~"))
    checks = [command_check(home)] + skills_checks(home) + [hooks_check(home)] + mcp_checks(home) + [pi_check(home)]
    checks += git_checks(Path(paths.root), paths.dir.is_dir()) + [signing_check(paths), ledger_check(paths),
                                                                   cache_check(home, paths)]
    off = [c for c in checks if c["state"] == OFF]
    width = max(len(c["check"]) for c in checks)
    lines = [f"{c['state']:<3}  {c['check']:<{width}}  {c['detail']}"
             + ("" if not c.get("fix") or c["state"] == OK else f" — fix: {c['fix']}" if c["state"] == OFF
                else f" — to set it up: {c['fix']}") for c in checks]
    lines.append(f"{len(off)} thing{'s are' if len(off) != 1 else ' is'} off." if off else "Everything needed is set up.")
    return Answer(1 if off else 0, {"checks": checks, "ok": not off}, "\n".join(lines))
