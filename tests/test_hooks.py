"""The Claude Code hooks (hooks/hooks.json, hooks/lessons_hook.py) fed real hook JSON on stdin:
what they print, their exit codes, and that nothing ever blocks a session (fail-open)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, Keeper

HOOK = REPO / "hooks" / "lessons_hook.py"
pytestmark = pytest.mark.skipif(os.name == "nt", reason="the fake `priors` on PATH is a sh script")


def fake_keeper(bin_dir: Path, body: str = None) -> Path:
    """A `priors` on PATH that runs this checkout's keeper (or `body`, a failing stand-in)."""
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "priors"
    exe.write_text("#!/bin/sh\n" + (body or f"PYTHONPATH='{REPO}' exec '{sys.executable}' -m priors \"$@\"\n"))
    exe.chmod(0o755)
    return bin_dir


def run_hook(event: str, stdin, cwd: Path, path: str, isolated: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PATH")}
    env["PATH"] = path
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode("utf-8")
    cmd = [sys.executable, *(["-S"] if isolated else []), str(HOOK), event]
    return subprocess.run(cmd, input=data, cwd=str(cwd), env=env, capture_output=True, timeout=60)


def start_json(root: Path, source: str = "startup", session: str = "0b5f8a1e-1111-4c2d-9a77-123456789abc") -> dict:
    return {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(root),
            "hook_event_name": "SessionStart", "source": source}


def prompt_json(root: Path, prompt, session: str = "0b5f8a1e-1111-4c2d-9a77-123456789abc") -> dict:
    return {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(root),
            "hook_event_name": "UserPromptSubmit", "prompt": prompt}


def context(proc: subprocess.CompletedProcess, event: str) -> str:
    assert proc.returncode == 0, proc
    out = json.loads(proc.stdout)
    assert set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"]["hookEventName"] == event
    return out["hookSpecificOutput"]["additionalContext"]


@pytest.fixture
def repo(tmp_path: Path) -> Keeper:
    k = Keeper(tmp_path / "repo")
    k.root.mkdir()
    k.ok("init")
    k.ok("add", "--ns", "dev", "--tag", "testing", "--open", "Run the narrowest relevant test before the full suite.")
    k.ok("add", "--ns", "dev", "--open", "The parser tests are flaky under load; rerun them once before debugging.")
    k.ok("add", "--ns", "dev", "Never edit generated files by hand.")  # accepted: no budget drops it
    k.ok("config", "max_inject", "2")
    return k


def test_plugin_hooks_json_wires_every_event():
    spec = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert set(spec) == {"SessionStart", "UserPromptSubmit", "Stop"}
    (start,) = spec["SessionStart"]
    assert start["matcher"] == "startup|resume|clear|compact"
    (prompt,) = spec["UserPromptSubmit"]
    (stop,) = spec["Stop"]
    for entry, event in ((start, "session-start"), (prompt, "prompt"), (stop, "stop")):
        (hook,) = entry["hooks"]
        assert hook["type"] == "command"
        assert hook["command"] == f'python3 "${{CLAUDE_PLUGIN_ROOT}}/hooks/lessons_hook.py" {event} || true'
    assert HOOK.is_file()


def test_session_start_and_prompts(repo: Keeper, tmp_path: Path):
    path = str(fake_keeper(tmp_path / "bin"))
    text = context(run_hook("session-start", start_json(repo.root), tmp_path, path), "SessionStart")
    assert text.startswith("## Lessons from this repository (priors)")
    assert "- [P-0003] Never edit generated files" in text  # a person's lesson: always, and first
    assert "- [P-0001] #testing Run the narrowest" in text and "P-0002" not in text  # max_inject 2
    # a prompt about the parser: a lesson the session does not have yet
    proc = run_hook("prompt", prompt_json(repo.root, "why is the parser test flaky?"), tmp_path, path)
    text = context(proc, "UserPromptSubmit")
    assert "- [P-0002] The parser tests are flaky" in text and "P-0001" not in text and "P-0003" not in text
    # the same prompt again: nothing new, nothing printed
    again = run_hook("prompt", prompt_json(repo.root, "why is the parser test flaky?"), tmp_path, path)
    assert (again.returncode, again.stdout) == (0, b"")
    # compaction re-injects the session's block; a subfolder of the repo finds .priors/ above it
    sub = repo.root / "src"
    sub.mkdir()
    (repo.root / ".git").mkdir()
    proc = run_hook("session-start", dict(start_json(repo.root, "compact"), cwd=str(sub)), tmp_path, path)
    assert "P-0001" in context(proc, "SessionStart") and "P-0003" in context(proc, "SessionStart")
    # what the session was given is on record, and `score last` credits it
    out = repo.ok("score", "last", "success")
    assert out == ("run-004 → success (coding session 0b5f8a1e-1111-4c2d-9a77-123456789abc: credits 3 lessons:"
                   " P-0001, P-0002, P-0003)\n")  # `last` names the session it credited
    assert repo.ledger_bytes().count(b'"t":"prompt"') == 0 and b"flaky?" not in repo.ledger_bytes()


def transcript(path: Path, *entries) -> str:
    """A Claude Code transcript (JSON lines of user and assistant messages), as the Stop hook reads it."""
    path.write_text("".join(json.dumps({"type": kind, "message": {"role": kind, "content": content}}) + "\n"
                            for kind, content in entries), encoding="utf-8")
    return str(path)


def test_the_stop_hook_keeps_the_turns_trace(repo: Keeper, tmp_path: Path):
    """Stop: the turn — the person's last prompt, the assistant's text, each tool call with its
    result — reaches `priors trace` under the session's id, with the lessons the session was given;
    credentials are replaced; the hook prints nothing. `reflect` then quotes it."""
    path = str(fake_keeper(tmp_path / "bin"))
    session = "0b5f8a1e-1111-4c2d-9a77-123456789abc"
    context(run_hook("session-start", start_json(repo.root), tmp_path, path), "SessionStart")
    log = transcript(tmp_path / "t.jsonl",
                     ("user", "an older prompt"), ("assistant", [{"type": "text", "text": "older answer"}]),
                     ("user", "fix the flaky parser test"),
                     ("assistant", [{"type": "text", "text": "Running the narrowest test first."},
                                    {"type": "tool_use", "id": "t1", "name": "Bash",
                                     "input": {"command": "pytest tests/test_parser.py -x"}}]),
                     ("user", [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                "content": [{"type": "text", "text": "1 failed; token ghp_" + "a" * 36}]}]),
                     ("assistant", [{"type": "text", "text": "Fixed the race in the fixture."}]))
    stop = {"session_id": session, "transcript_path": log, "cwd": str(repo.root), "hook_event_name": "Stop",
            "stop_hook_active": False}
    proc = run_hook("stop", stop, tmp_path, path)
    assert (proc.returncode, proc.stdout) == (0, b"")
    (trace,) = [json.loads(x) for x in (repo.root / ".priors" / "traces" / "traces.jsonl").read_text().splitlines()]
    assert trace["prompt"] == "fix the flaky parser test"
    assert trace["assistant"] == ["Running the narrowest test first.", "Fixed the race in the fixture."]
    (call,) = trace["tools"]
    assert call["name"] == "Bash" and "test_parser.py" in call["input"] and call["error"] is True
    assert "ghp_" not in call["output"] and "1 failed" in call["output"]
    assert trace["given"] == ["P-0001", "P-0003"]  # what the session-start block gave (max_inject 2)
    # Claude Code's echo of a slash command after the prompt is not a prompt: the turn is still the typed one
    echoed = transcript(tmp_path / "c.jsonl", ("user", "fix the flaky parser test"),
                        ("assistant", [{"type": "text", "text": "Done."}]),
                        ("user", "<command-name>/model</command-name>"),
                        ("user", "<local-command-stdout>Set model</local-command-stdout>"),
                        ("user", "[Request interrupted by user]"))
    assert run_hook("stop", dict(stop, transcript_path=echoed), tmp_path, path).returncode == 0
    kept = [json.loads(x) for x in (repo.root / ".priors" / "traces" / "traces.jsonl").read_text().splitlines()]
    assert len(kept) == 2 and kept[-1]["prompt"] == "fix the flaky parser test" and kept[-1]["assistant"] == ["Done."]
    # no transcript, or no prompt in it: nothing kept, nothing printed
    for bad in ("/nowhere.jsonl", transcript(tmp_path / "e.jsonl", ("assistant", [{"type": "text", "text": "x"}]))):
        again = run_hook("stop", dict(stop, transcript_path=bad), tmp_path, path)
        assert (again.returncode, again.stdout) == (0, b"")
    assert len((repo.root / ".priors" / "traces" / "traces.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("stdin", [
    b"", b"not json", b"[1, 2]", b'{"prompt": 5}', b"\xff\xfe", b'{"cwd": "/nowhere", "prompt": ""}',
    b'{"session_id": "x y", "cwd": 7}', b"{" * 5000,
])
def test_malformed_input_prints_nothing_and_exits_0(repo: Keeper, tmp_path: Path, stdin: bytes):
    path = str(fake_keeper(tmp_path / "bin"))
    for event in ("session-start", "prompt"):
        proc = run_hook(event, stdin, repo.root, path)
        assert proc.returncode == 0, proc
        if event == "prompt" or stdin in (b"", b"not json", b"[1, 2]", b"\xff\xfe", b"{" * 5000):
            assert proc.stdout == b"", proc
    assert repo.ledger_bytes().count(b"\n") == 7  # the hooks never write the ledger


def test_fail_open(repo: Keeper, tmp_path: Path):
    ok_path = str(fake_keeper(tmp_path / "bin"))
    # no keeper at all: not on PATH, not importable
    empty = tmp_path / "empty"
    empty.mkdir()
    for event, hook in (("session-start", start_json(repo.root)), ("prompt", prompt_json(repo.root, "parser"))):
        proc = run_hook(event, hook, tmp_path, str(empty), isolated=True)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b""), proc
    # a failing keeper: a damaged config makes it exit 2 — the hook stays silent
    (repo.root / ".priors" / "config.json").write_text("{not json")
    proc = run_hook("session-start", start_json(repo.root), tmp_path, ok_path)
    assert (proc.returncode, proc.stdout) == (0, b"")
    # a keeper that crashes or hangs up
    broken = str(fake_keeper(tmp_path / "broken", "echo boom >&2; exit 3\n"))
    proc = run_hook("prompt", prompt_json(repo.root, "parser"), tmp_path, broken)
    assert (proc.returncode, proc.stdout) == (0, b"")
    # no .priors/ in the session's folder: nothing
    other = tmp_path / "other"
    other.mkdir()
    proc = run_hook("session-start", start_json(other), tmp_path, ok_path)
    assert (proc.returncode, proc.stdout) == (0, b"")
    # a wrong event name in the configuration still never blocks
    proc = run_hook("pre-tool", start_json(repo.root), tmp_path, ok_path)
    assert (proc.returncode, proc.stdout) == (0, b"")


# ------------------------------------------------------------------ hooks/claude_settings.py (install.sh --hooks)

SETTINGS_TOOL = REPO / "hooks" / "claude_settings.py"


def _settings(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SETTINGS_TOOL), *args], capture_output=True, text=True, timeout=60)


def test_settings_that_json_cannot_write_back_are_left_alone(tmp_path: Path):
    """`1e400` reads as infinity, which would be written back as `Infinity` (not JSON, so Claude Code
    could no longer read its settings): refused, exit 3, the file untouched, never a traceback."""
    for body in ('{"x": 1e400, "hooks": {}}', '{"x": NaN}', '{"x": -Infinity}'):
        settings = tmp_path / "settings.json"
        settings.write_text(body, encoding="utf-8")
        r = _settings("add", str(settings), "/opt/hook.py", "/usr/local/bin/priors")
        assert r.returncode == 3 and "left alone" in r.stdout and "Traceback" not in r.stderr, r
        assert settings.read_text(encoding="utf-8") == body


def test_settings_with_a_lone_surrogate_escape_keep_it(tmp_path: Path):
    settings = tmp_path / "settings.json"
    settings.write_text('{"note": "\\ud800 kept", "n": 1.5}', encoding="utf-8")
    r = _settings("add", str(settings), "/opt/hook.py", "/usr/local/bin/priors")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r
    obj = json.loads(settings.read_text(encoding="utf-8"))
    assert obj["note"] == "\ud800 kept" and obj["n"] == 1.5 and "UserPromptSubmit" in obj["hooks"]


def test_a_symlinked_settings_file_stays_a_link(tmp_path: Path):
    """A settings file kept in a dotfiles repository: the file it leads to is updated, the link kept."""
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"theme": "dark"}', encoding="utf-8")
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    r = _settings("add", str(link), "/opt/hook.py", "/usr/local/bin/priors")
    assert r.returncode == 0, r
    assert link.is_symlink() and os.readlink(str(link)) == str(real)
    obj = json.loads(real.read_text(encoding="utf-8"))
    assert obj["theme"] == "dark" and "SessionStart" in obj["hooks"]


def test_a_settings_path_that_is_a_folder_or_a_dangling_link_is_left_alone(tmp_path: Path):
    """Hostile pass 27ae: a folder in the settings file's place, or a link to a file in a folder that is not
    there, ended in a traceback (exit 1) instead of "left alone" (exit 3)."""
    folder = tmp_path / "adir.json"
    folder.mkdir()
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere" / "s.json")
    for path in (folder, dangling):
        r = _settings("add", str(path), "/opt/hook.py", "/usr/local/bin/priors")
        assert r.returncode == 3 and "left alone" in r.stdout and "Traceback" not in r.stderr, r
    assert folder.is_dir() and dangling.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_person_s_own_hook_naming_the_script_is_neither_removed_nor_taken_for_ours(tmp_path: Path):
    """Hostile pass 27ae: `remove` deleted any command holding the script's path (`my-own /x/lessons_hook.py.orig`),
    and `add` skipped installing beside one."""
    settings = tmp_path / "settings.json"
    own = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-own /x/lessons_hook.py.orig"}]}]}}
    settings.write_text(json.dumps(own), encoding="utf-8")
    r = _settings("remove", str(settings), "/x/lessons_hook.py")
    assert r.returncode == 0 and "no lesson hooks of ours" in r.stdout, r
    assert json.loads(settings.read_text(encoding="utf-8")) == own
    assert _settings("add", str(settings), "/x/lessons_hook.py", "/usr/local/bin/priors").returncode == 0
    stop = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["Stop"]
    assert [h["command"] for e in stop for h in e["hooks"]] == ["my-own /x/lessons_hook.py.orig",
                                                               "python3 '/x/lessons_hook.py' stop --keeper"
                                                               " '/usr/local/bin/priors' || true"]
    r = _settings("remove", str(settings), "/x/lessons_hook.py")
    assert r.returncode == 0 and json.loads(settings.read_text(encoding="utf-8")) == own, r


def test_the_stop_hook_survives_hostile_transcripts_and_quoted_passwords_in_tool_inputs(repo: Keeper, tmp_path: Path):
    """A FIFO or a device as the transcript ends the hook at once (it never blocks or reads without
    end); a tool_result whose tool_use_id is not text does not lose the turn; a password written
    in quotes into a tool's input (JSON) is replaced like one in a prompt."""
    path = str(fake_keeper(tmp_path / "bin"))
    session = "0b5f8a1e-1111-4c2d-9a77-123456789abc"
    fifo = tmp_path / "fifo"
    os.mkfifo(str(fifo))
    for bad in (str(fifo), "/dev/zero"):
        stop = {"session_id": session, "transcript_path": bad, "cwd": str(repo.root), "hook_event_name": "Stop"}
        proc = run_hook("stop", stop, tmp_path, path)  # run_hook's timeout (60 s) would fail a blocked hook
        assert (proc.returncode, proc.stdout) == (0, b"")
    log = transcript(tmp_path / "t.jsonl", ("user", "set up the database"),
                     ("assistant", [{"type": "tool_use", "id": "t1", "name": "Write",
                                     "input": {"file_path": "settings.py", "content": 'DB_PASSWORD = "hunter2hunter2"\n'}}]),
                     ("user", [{"type": "tool_result", "tool_use_id": ["t1"], "content": "x"},
                               {"type": "tool_result", "tool_use_id": "t1", "content": "written"}]))
    with open(log, "a", encoding="utf-8") as fh:  # Claude Code's own notes and a subagent's turn come after
        fh.write("5\n")
        for extra in ({"type": "user", "isMeta": True, "message": {"role": "user", "content": "Caveat: local commands"}},
                      {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "subagent task"}}):
            fh.write(json.dumps(extra) + "\n")
    stop = {"session_id": session, "transcript_path": log, "cwd": str(repo.root), "hook_event_name": "Stop"}
    assert run_hook("stop", stop, tmp_path, path).returncode == 0
    (trace,) = [json.loads(x) for x in (repo.root / ".priors" / "traces" / "traces.jsonl").read_text().splitlines()]
    assert trace["prompt"] == "set up the database"
    (call,) = trace["tools"]
    assert "hunter2" not in call["input"] and "settings.py" in call["input"] and call["output"] == "written"


def test_the_fallback_keeper_never_runs_the_project_s_own_priors_package(repo):
    """Hostile pass 27ax: with no `priors` on PATH the hook ran `python -m priors` in the session's folder — the
    project's — so a project folder named `priors/` ran in the keeper's place. It runs isolated, the keeper's
    package named."""
    marker = repo.root / "hijacked"
    (repo.root / "priors").mkdir()
    (repo.root / "priors" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (repo.root / "priors" / "__main__.py").write_text("")
    text = context(run_hook("session-start", start_json(repo.root), repo.root, "/usr/bin:/bin"), "SessionStart")
    assert "Never edit generated files by hand." in text
    assert not marker.exists()
