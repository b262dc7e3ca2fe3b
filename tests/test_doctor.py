"""`priors doctor`: one line a check of the set-up, each off one with its fix; exit 1 when any is off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from conftest import REPO, Keeper

GIT = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
       "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"}


def env_of(home: Path) -> Dict[str, str]:
    return dict(GIT, HOME=str(home), PATH=f"{home / '.local' / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin")


def git(root: Path, home: Path, *args: str) -> None:
    env = dict(os.environ)
    env.update(env_of(home))
    subprocess.run(["git", *args], cwd=str(root), env=env, check=True, capture_output=True)


def states(keeper: Keeper, home: Path):
    r = keeper("doctor", "--json", env=env_of(home))
    body = json.loads(r.out)
    return r.code, {c["check"]: c for c in body["checks"]}


def set_up(home: Path, repo: Keeper) -> None:
    """Everything in place: the launcher on PATH, the skills, the hooks, MCP, Pi, the merge driver,
    pre-commit hooks, a sound ledger."""
    launcher = home / ".local" / "bin" / "priors"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    launcher.chmod(0o755)
    for folder in (".claude", ".codex", ".agents", ".pi/agent"):
        for skill in ("priors", "with-priors"):
            dest = home / folder / "skills" / skill
            dest.mkdir(parents=True)
            (dest / "SKILL.md").write_bytes((REPO / "skills" / skill / "SKILL.md").read_bytes())
    script = home / ".local" / "share" / "priors" / "hooks" / "lessons_hook.py"
    script.parent.mkdir(parents=True)
    script.write_bytes((REPO / "hooks" / "lessons_hook.py").read_bytes())
    subprocess.run(["python3", str(REPO / "hooks" / "claude_settings.py"), "add", str(home / ".claude" / "settings.json"),
                    str(script), str(launcher)], check=True, capture_output=True)
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"priors": {"command": str(launcher),
                                                                            "args": ["mcp"]}}}), encoding="utf-8")
    (home / ".codex" / "config.toml").write_text(f'[mcp_servers.priors]\ncommand = "{launcher}"\nargs = ["mcp"]\n',
                                                 encoding="utf-8")
    ext = home / ".pi" / "agent" / "extensions" / "priors"
    ext.mkdir(parents=True)
    (ext / "index.ts").write_text("// the extension\n", encoding="utf-8")
    git(repo.root, home, "init", "-q")
    repo.ok("init")
    assert repo("init", "--git", env=env_of(home)).code == 0
    (repo.root / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: local\n    hooks:\n      - id: priors-verify\n      - id: priors-verify-since-upstream\n",
        encoding="utf-8")
    for stage in ("pre-commit", "pre-push"):
        hook = repo.root / ".git" / "hooks" / stage
        hook.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        hook.chmod(0o755)


@pytest.fixture
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("home")  # (beside the repository: a home inside it keeps no cache key)


def test_an_empty_machine_names_what_is_missing_and_exits_1(keeper, home):
    code, checks = states(keeper, home)
    assert code == 1
    assert checks["command"]["state"] == "off" and checks["command"]["fix"].startswith("./install.sh")
    assert checks["skills"]["state"] == "–" and checks["ledger"]["state"] == "ok"
    text = keeper("doctor", env=env_of(home)).out
    assert text.splitlines()[0].startswith("off  command") and text.rstrip().endswith("1 thing is off.")
    assert "— fix: ./install.sh" in text and "— to set it up: ./install.sh (in your clone" in text


@pytest.mark.skipif(os.name == "nt", reason="shell launchers and git hooks as POSIX files")
def test_a_full_set_up_is_all_ok_and_each_break_is_named_with_its_fix(keeper, home):
    set_up(home, keeper)
    code, checks = states(keeper, home)
    assert {name: c["state"] for name, c in checks.items()} == {
        "command": "ok", "skills in ~/.claude/skills": "ok", "skills in ~/.codex/skills": "ok",
        "skills in ~/.agents/skills": "ok", "skills in ~/.pi/agent/skills": "ok", "Claude Code lesson hooks": "ok",
        "MCP server in Claude Code": "ok", "MCP server in Codex": "ok", "Pi extension": "ok", "merge driver": "ok",
        "pre-commit hooks": "ok", "signing": "–", "ledger": "ok", "cache key": "ok"}, checks
    assert checks["cache key"]["detail"].startswith("~/.cache/priors/cache.key (outside the repository")
    assert code == 0 and keeper("doctor", env=env_of(home)).out.rstrip().endswith("Everything needed is set up.")
    assert "~/.local/bin/priors" in checks["command"]["detail"]
    assert "python3" in checks["Claude Code lesson hooks"]["detail"]

    (home / ".local" / "share" / "priors" / "hooks" / "lessons_hook.py").unlink()
    (home / ".claude" / "skills" / "with-priors" / "SKILL.md").unlink()
    (home / ".codex" / "skills" / "priors" / "SKILL.md").unlink()  # Codex reads ~/.agents/skills too: still ok
    (home / ".pi" / "agent" / "extensions" / "priors" / "index.ts").unlink()
    (keeper.root / ".gitattributes").write_text("", encoding="utf-8")
    (keeper.root / ".git" / "hooks" / "pre-push").unlink()
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(b'{"t":"prior"}\n')
    code, checks = states(keeper, home)
    assert code == 1
    off = {name: c.get("fix") for name, c in checks.items() if c["state"] == "off"}
    assert off == {"Claude Code lesson hooks": "./install.sh --hooks (in your clone of the priors repository)",
                   "skills in ~/.claude/skills": "./install.sh (in your clone of the priors repository)",
                   "Pi extension": "./install.sh (in your clone of the priors repository)",
                   "merge driver": "priors init --git",
                   "pre-commit hooks": "pre-commit install --hook-type pre-commit --hook-type pre-push",
                   "ledger": "priors verify (lists them)"}, checks
    # a launcher that left PATH is named with the line that puts it back
    env = env_of(home)
    env["PATH"] = "/usr/bin:/bin"
    body = json.loads(keeper("doctor", "--json", env=env).out)
    command = body["checks"][0]
    assert command["state"] == "off" and "not on PATH" in command["detail"] and "export PATH" in command["fix"]


def test_the_ledger_line_is_verifys_verdict_when_a_change_holds_a_persons_decisions(keeper, home):
    """verify lists a person's uncommitted lines after its verdict: the ledger check gives the verdict
    (it gave the last one listed, `line 3: decide P-0001 accepted — unsigned`, as the ledger's state)."""
    git(keeper.root, home, "init", "-q")
    git(keeper.root, home, "add", "-A")
    git(keeper.root, home, "commit", "-qm", "priors")
    keeper.ok("add", "--ns", "dev", "Run the narrowest relevant test before the full suite.")
    assert "by a person in this change" in keeper("verify", env=env_of(home)).out
    _, checks = states(keeper, home)
    assert checks["ledger"]["state"] == "ok"
    assert checks["ledger"]["detail"].startswith("ledger sound: "), checks["ledger"]


@pytest.mark.skipif(os.name == "nt", reason="shell launchers and git hooks as POSIX files")
def test_a_merge_driver_that_is_not_the_keepers_or_runs_nothing_is_off(keeper, home):
    """Set, but not to something that runs: an interpreter gone since `init --git`, a command that is not
    `priors merge-driver` (git would take it and keep one side), or the PRIORS.md driver unset."""
    set_up(home, keeper)
    for key, value, said in (
            ("merge.priors.driver", '"/gone/venv/bin/python" -m priors merge-driver %O %A %B %P', "/gone/venv/bin/python"),
            ("merge.priors.driver", "true", "does not run `priors merge-driver`"),
            ("merge.priors-render.driver", None, "merge.priors-render.driver")):
        assert keeper("init", "--git", env=env_of(home)).code == 0
        git(keeper.root, home, "config", *(("--unset", key) if value is None else (key, value)))
        code, checks = states(keeper, home)
        assert code == 1 and checks["merge driver"]["state"] == "off", (key, value, checks["merge driver"])
        assert said in checks["merge driver"]["detail"] and checks["merge driver"]["fix"] == "priors init --git"
    assert keeper("init", "--git", env=env_of(home)).code == 0
    assert states(keeper, home)[1]["merge driver"]["state"] == "ok"


def test_settings_files_of_the_wrong_shape_are_named_not_a_crash(keeper, home):
    """An MCP entry whose command is not a string, a hooks entry whose `hooks` is not a list: doctor still
    answers, one line each (it crashed with a TypeError, exit 3)."""
    (home / ".claude").mkdir()
    for command in (["priors"], 5, None):
        (home / ".claude.json").write_text(json.dumps({"mcpServers": {"priors": {"command": command}}}), encoding="utf-8")
        for hooks in (5, "x", {"command": "python3 lessons_hook.py"}):
            (home / ".claude" / "settings.json").write_text(
                json.dumps({"hooks": {"SessionStart": [{"hooks": hooks}]}}), encoding="utf-8")
            r = keeper("doctor", "--json", env=env_of(home))
            assert r.code == 1 and r.err == "", (command, hooks, r.err)
            checks = {c["check"]: c for c in json.loads(r.out)["checks"]}
            assert checks["MCP server in Claude Code"]["state"] == "off"
            assert checks["Claude Code lesson hooks"]["state"] == "–"


@pytest.mark.skipif(os.name == "nt", reason="shell launchers and git hooks as POSIX files")
def test_what_looks_set_up_but_would_not_run_is_off(keeper, home):
    """Each said `ok` before: a pre-commit hook file git cannot execute (git skips it), a hook command that
    merely mentions lessons_hook.py, a script of that name that is not the keeper's, and `.priors` a file."""
    set_up(home, keeper)
    assert states(keeper, home)[0] == 0
    hook = keeper.root / ".git" / "hooks" / "pre-push"
    hook.chmod(0o644)
    code, checks = states(keeper, home)
    assert code == 1 and checks["pre-commit hooks"]["state"] == "off", checks["pre-commit hooks"]
    assert "pre-push hook is not executable" in checks["pre-commit hooks"]["detail"]
    assert checks["pre-commit hooks"]["fix"].startswith("chmod +x ")
    hook.chmod(0o755)

    settings = home / ".claude" / "settings.json"
    good = settings.read_text(encoding="utf-8")
    script = str(home / ".local" / "share" / "priors" / "hooks" / "lessons_hook.py")
    stranger = home / "elsewhere" / "lessons_hook.py"
    stranger.parent.mkdir()
    stranger.write_text("print('not the keeper')\n", encoding="utf-8")
    other = home / "other.py"
    other.write_text("print('lessons_hook.py')\n", encoding="utf-8")
    for replacement, said in ((f"'{stranger}'", "elsewhere/lessons_hook.py"), (f"'{other}' '{script}'", "other.py")):
        settings.write_text(good.replace(f"'{script}'", replacement), encoding="utf-8")
        code, checks = states(keeper, home)
        hooks = checks["Claude Code lesson hooks"]
        assert code == 1 and hooks["state"] == "off" and said in hooks["detail"], hooks
        assert "not the keeper's lessons_hook.py" in hooks["detail"]
    # an install from before the Stop hook: no Stop entry, or a Stop entry running a copy that knows no `stop`
    no_stop = json.loads(good)
    del no_stop["hooks"]["Stop"]
    settings.write_text(json.dumps(no_stop), encoding="utf-8")
    code, checks = states(keeper, home)
    hooks = checks["Claude Code lesson hooks"]
    assert code == 1 and hooks["state"] == "off" and "no Stop hook" in hooks["detail"], hooks
    old = home / "old" / "lessons_hook.py"
    old.parent.mkdir()
    old.write_text(Path(script).read_text(encoding="utf-8").replace('"stop"', "'stop'"), encoding="utf-8")
    settings.write_text(good.replace(f"'{script}' stop", f"'{old}' stop"), encoding="utf-8")
    code, checks = states(keeper, home)
    hooks = checks["Claude Code lesson hooks"]
    assert code == 1 and hooks["state"] == "off" and "older than the Stop hook" in hooks["detail"], hooks
    settings.write_text(good, encoding="utf-8")
    assert states(keeper, home)[0] == 0

    shutil.rmtree(str(keeper.root / ".priors"))
    (keeper.root / ".priors").write_text("not a folder\n", encoding="utf-8")
    r = keeper("doctor", "--json", env=env_of(home))
    ledger = {c["check"]: c for c in json.loads(r.out)["checks"]}["ledger"]
    assert r.code == 1 and ledger["state"] == "off" and "is a file, not the keeper's folder" in ledger["detail"]
    assert {c["check"]: c for c in json.loads(r.out)["checks"]}["signing"]["state"] == "–"


@pytest.mark.skipif(os.name == "nt", reason="shell launchers as POSIX files")
def test_a_priors_on_path_that_runs_another_keeper_is_named(keeper, home):
    """install.sh's launcher names its python (and, for a checkout, its folder): one that is not the python
    running doctor is another keeper — its version, its fixes — and doctor says which."""
    set_up(home, keeper)
    launcher = home / ".local" / "bin" / "priors"
    launcher.write_text("#!/bin/sh\nexec '/gone/venv/bin/python' -m priors \"$@\"\n", encoding="utf-8")
    code, checks = states(keeper, home)
    assert code == 1 and checks["command"]["state"] == "off", checks["command"]
    assert "which runs /gone/venv/bin/python — not this one" in checks["command"]["detail"]
    launcher.write_text(f"#!/bin/sh\nexec env PYTHONPATH='{home}/old-checkout' '{sys.executable}' -m priors \"$@\"\n",
                        encoding="utf-8")
    code, checks = states(keeper, home)
    assert code == 1 and "which runs ~/old-checkout — not this one" in checks["command"]["detail"], checks["command"]
    launcher.write_text(f"#!/bin/sh\nexec env PYTHONPATH='{REPO}' '{sys.executable}' -m priors \"$@\"\n",
                        encoding="utf-8")
    code, checks = states(keeper, home)
    assert code == 0 and checks["command"]["state"] == "ok", checks["command"]


def test_the_mcp_advice_without_claude_s_command_is_the_command_itself(keeper, home):
    """install.sh registers the MCP server through Claude Code's `claude` command: without it on PATH,
    doctor's advice is the registration command, not a re-run of the installer that cannot do it."""
    (home / ".claude").mkdir()
    code, checks = states(keeper, home)
    mcp = checks["MCP server in Claude Code"]
    assert mcp["state"] == "–" and mcp["fix"].startswith("claude mcp add --scope user priors -- priors mcp"), mcp


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_signing_is_checked_before_a_person_decides(keeper, home, tmp_path):
    """With .priors/allowed_signers, doctor says what `decide` would refuse: no key, a principal the
    file does not list, a key other than the one listed for it; ok when they match."""
    git(keeper.root, home, "init", "-q")
    _, checks = states(keeper, home)
    assert checks["signing"]["state"] == "–" and "Human lines are signed" in checks["signing"]["fix"]
    keys = {}
    for name in ("alice", "mallory"):
        keys[name] = tmp_path / name
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys[name])], check=True)
    pub = (tmp_path / "alice.pub").read_text(encoding="utf-8").split()
    (keeper.root / ".priors" / "allowed_signers").write_text(f"alice@example.com {pub[0]} {pub[1]}\n",
                                                             encoding="utf-8")
    _, checks = states(keeper, home)
    assert checks["signing"]["state"] == "off" and "gpg.format ssh" in checks["signing"]["detail"]
    git(keeper.root, home, "config", "gpg.format", "ssh")
    git(keeper.root, home, "config", "user.signingkey", str(keys["alice"]))
    git(keeper.root, home, "config", "user.email", "bob@example.com")
    code, checks = states(keeper, home)
    assert code == 1 and checks["signing"]["state"] == "off"
    assert "bob@example.com (git config user.email) is not in .priors/allowed_signers" in checks["signing"]["detail"]
    git(keeper.root, home, "config", "user.email", "alice@example.com")
    git(keeper.root, home, "config", "user.signingkey", str(keys["mallory"]) + ".pub")
    _, checks = states(keeper, home)
    assert checks["signing"]["state"] == "off"
    assert "is not the one .priors/allowed_signers lists for alice@example.com" in checks["signing"]["detail"]
    git(keeper.root, home, "config", "user.signingkey", str(keys["alice"]))
    _, checks = states(keeper, home)
    assert checks["signing"] == {"check": "signing", "state": "ok",
                                 "detail": "a person's decisions are signed: you sign as alice@example.com"}
    # a pattern of principals counts, as for ssh-keygen
    (keeper.root / ".priors" / "allowed_signers").write_text(f"*@example.com {pub[0]} {pub[1]}\n", encoding="utf-8")
    assert states(keeper, home)[1]["signing"]["state"] == "ok"
    (keeper.root / ".priors" / "allowed_signers").unlink()
    (keeper.root / ".priors" / "allowed_signers").mkdir()  # named, not a crash
    signing = states(keeper, home)[1]["signing"]
    assert signing["state"] == "off" and "cannot be read" in signing["detail"], signing


def test_a_clone_without_a_ledger_is_not_told_to_set_one_up_for_the_merge_driver(bare, home):
    """Where install.sh leaves a newcomer — a git clone with no .priors/ (the priors clone itself) — the
    merge driver and the hooks have no ledger to look after: not "off" (exit 1) with `priors init --git`
    as the fix, which would start a ledger in the wrong repository; the ledger line says where it goes."""
    git(bare.root, home, "init", "-q")
    code, checks = states(bare, home)
    assert checks["merge driver"]["state"] == "–" and "priors init --git" in checks["merge driver"]["detail"]
    assert checks["pre-commit hooks"]["state"] == "–"
    assert checks["ledger"]["state"] == "–" and "repository an agent reviews" in checks["ledger"]["fix"]
    assert not (bare.root / ".priors").exists()
    assert "merge driver" not in {name for name, c in checks.items() if c["state"] == "off"}
