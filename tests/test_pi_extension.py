"""The Pi extension (adapters/pi/) in the real `pi` (@mariozechner/pi-coding-agent, the adapter's dev
dependency, installed by .ci/run): type-checked with `tsc`, then driven in print mode (`pi -p`),
JSON mode and RPC mode (`--mode rpc`) against a stand-in model server on 127.0.0.1
(tests/pi_standin.py), offline, in a temporary HOME — with the real keeper behind a `priors`
launcher on PATH. The tests assert on what reached the model's requests and on the ledger.
Skips, saying why, when Node or the adapter's dev dependencies are not installed."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from conftest import REPO, Keeper
from pi_standin import StandIn
from priors.core.inject import HEADING

ADAPTER = REPO / "adapters" / "pi"
NODE = shutil.which("node")
TSC = ADAPTER / "node_modules" / "typescript" / "bin" / "tsc"
PI_PKG = ADAPTER / "node_modules" / "@mariozechner" / "pi-coding-agent"
PI_CLI = PI_PKG / "dist" / "cli.js"
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
needs_deps = pytest.mark.skipif(not (TSC.is_file() and PI_CLI.is_file()),
                                reason="the adapter's dev dependencies are not installed (cd adapters/pi && npm install)")
# the real-pi tests put a POSIX shell launcher named `priors` on PATH
needs_posix = pytest.mark.skipif(os.name == "nt", reason="the test's `priors` launcher is a POSIX shell script")
TIMEOUT = 120


def test_package_manifest_registers_the_extension():
    pkg = json.loads((ADAPTER / "package.json").read_text(encoding="utf-8"))
    assert pkg["pi"] == {"extensions": ["./index.ts"]}
    assert "pi-package" in pkg["keywords"]
    assert set(pkg["devDependencies"]) == {"@mariozechner/pi-coding-agent", "typescript", "@types/node"}
    assert "dependencies" not in pkg  # nothing to install at run time: types only, the keeper does the work


@needs_node
@needs_deps
def test_type_checks_against_the_published_package():
    proc = subprocess.run([NODE, str(TSC), "-p", str(ADAPTER / "tsconfig.json")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ------------------------------------------------------------------ driving the real pi


class Pi:
    """A temporary HOME with models.json pointing at the stand-in, a `priors` launcher on PATH (or
    none: `keeper=False`), and a repository with .priors/."""

    def __init__(self, tmp: Path, model: StandIn, keeper: bool = True) -> None:
        self.home = tmp / "home"
        (self.home / ".pi" / "agent").mkdir(parents=True)
        (self.home / ".pi" / "agent" / "models.json").write_text(json.dumps(model.models_json()), encoding="utf-8")
        self.bin = tmp / "bin"
        self.bin.mkdir()
        if keeper:
            launcher = self.bin / "priors"
            launcher.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m priors "$@"\n', encoding="utf-8")
            launcher.chmod(0o755)
        self.k = Keeper(tmp / "repo")
        self.k.root.mkdir()
        self.model = model
        path = os.pathsep.join([str(self.bin), os.path.dirname(NODE or "node"), "/usr/bin", "/bin"])
        self.env = {"HOME": str(self.home), "PATH": path, "PI_SKIP_VERSION_CHECK": "1", "PI_OFFLINE": "1",
                    "LANG": "C.UTF-8"}

    def argv(self, *args: str, extension: bool = True, discover: bool = False) -> List[str]:
        out = [str(NODE), str(PI_CLI), "--offline", "--model", "mock/mock-model", "--no-skills",
               "--no-context-files", "--no-prompt-templates", "--no-themes"]
        if not discover:
            out.append("--no-extensions")
        if extension:
            out += ["-e", str(ADAPTER / "index.ts")]
        return out + list(args)

    def print(self, *args: str, **kw: Any) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv("-p", *args, **kw), cwd=self.k.root, env=self.env, capture_output=True,
                              text=True, timeout=TIMEOUT)

    def rpc(self, **kw: Any) -> "Rpc":
        return Rpc(subprocess.Popen(self.argv("--mode", "rpc", **kw), cwd=self.k.root, env=self.env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))

    def traces(self) -> List[Dict[str, Any]]:
        path = self.k.root / ".priors" / "traces" / "traces.jsonl"
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def system_prompts(self) -> List[str]:
        return [r["messages"][0]["content"] for r in self.model.requests]


class Rpc:
    """pi --mode rpc: JSON lines in, events out (read on a thread, so a test never blocks forever)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.events: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.seen: List[Dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.events.put(json.loads(line))
            except ValueError:
                self.events.put({"type": "not-json", "line": line})

    def send(self, obj: Dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def until(self, pred, timeout: float = TIMEOUT) -> Dict[str, Any]:
        while True:
            ev = self.events.get(timeout=timeout)
            self.seen.append(ev)
            assert ev.get("type") != "not-json", ev
            if ev.get("type") == "extension_ui_request" and ev.get("method") in ("select", "confirm"):
                self.on_dialog(ev)
            if pred(ev):
                return ev

    answers: List[Any] = []

    def on_dialog(self, ev: Dict[str, Any]) -> None:
        value = self.answers.pop(0) if self.answers else None
        if value is None:
            self.send({"type": "extension_ui_response", "id": ev["id"], "cancelled": True})
        else:
            self.send({"type": "extension_ui_response", "id": ev["id"], ("confirmed" if ev["method"] == "confirm"
                                                                          else "value"): value})

    def command(self, text: str) -> str:
        """Send `/priors …`; the notice it answers with (RPC mode turns notify into an event)."""
        self.send({"type": "prompt", "message": text})
        ev = self.until(lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "notify")
        return str(ev["message"])

    def prompt(self, text: str) -> None:
        self.send({"type": "prompt", "message": text})
        self.until(lambda e: e.get("type") == "agent_end")

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def model() -> Iterator[StandIn]:
    m = StandIn()
    yield m
    m.close()


def seed(p: Pi) -> None:
    p.k.ok("init")
    p.k.ok("add", "--ns", "dev", "--open", "--tag", "testing", "Run the narrowest relevant test before the full suite.")
    p.k.ok("add", "--ns", "dev", "--open", "The parser tests are flaky under load; rerun them once before debugging.")
    p.k.ok("config", "max_inject", "1")  # one lesson a prompt: the one its words pick
    p.k.ok("config", "require_review", "off")  # the person's choice: proposed lessons are given too


@needs_node
@needs_deps
@needs_posix
def test_print_mode_lessons_reach_the_model_traces_are_kept_and_answers_print(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    seed(p)
    out = p.print("why is the parser test flaky?")
    assert out.returncode == 0 and out.stdout == "ok\n", out.stderr
    system = p.system_prompts()[0]
    assert system.count(HEADING) == 1 and "[P-0002] The parser tests are flaky" in system
    assert "P-0001" not in system  # ranked and budgeted by the keeper: one lesson, the one that fits
    assert [t["function"]["name"] for t in model.requests[0]["tools"]][-1] == "priors_lessons"
    [trace] = p.traces()
    assert trace["prompt"] == "why is the parser test flaky?" and trace["given"] == ["P-0002"]
    assert trace["session"].startswith("pi-") and trace["assistant"] == ["ok"]
    # a command's answer, and a refusal, reach stdout in print mode (Pi's notify does nothing there)
    status = p.print("/priors status")
    assert status.stdout.startswith("priors: 0 active lessons · 2 proposed · 0 inactive\n"), status.stdout
    assert "waiting for you: 2 proposed lessons — /priors review" in status.stdout
    assert "Nothing waits for you" not in status.stdout and "locked" not in status.stdout
    assert "proposed lessons: given too (requireReview off)" in status.stdout and "traces: 1/100 unscored" in status.stdout
    refused = p.print("/priors score success")  # a new session, given nothing yet
    assert "not scored — UNKNOWN_RUN" in refused.stdout and "was given no lessons yet" in refused.stdout
    assert refused.returncode == 1  # print mode: a refusal is not a success
    listed = p.print("/priors list proposed")
    assert "P-0001" in listed.stdout and "P-0002" in listed.stdout
    # JSON mode: the answer is a JSON line among Pi's events, on stdout
    lines = [json.loads(x) for x in p.print("--mode", "json", "/priors path").stdout.splitlines()]
    said = [x for x in lines if x.get("type") == "priors"]
    assert len(said) == 1 and "traces" in said[0]["text"] and "1/100 unscored" in said[0]["text"]
    assert len(model.requests) == 1  # commands never reach the model


@needs_node
@needs_deps
@needs_posix
def test_two_interleaved_sessions_are_scored_for_what_each_was_given(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    seed(p)
    a = p.rpc()
    try:
        a.prompt("the parser test is flaky again")  # session A: P-0002
        b = p.print("run the narrowest test for the suite")  # session B, beside it: P-0001
        assert b.returncode == 0
        assert "[P-0002]" in p.system_prompts()[0] and "[P-0001]" in p.system_prompts()[1]
        answer = a.command("/priors score failure the rerun hid a real bug")
        assert answer.startswith("run-003 → failure (coding session pi-")
        assert answer.endswith("credits 1 lesson: P-0002)")
    finally:
        a.close()
    score = p.k.ledger()[-1]
    assert score == {"t": "score", "run": "run-003", "outcome": "failure", "by": "human", "injected": ["P-0002"],
                     "reason": "the rerun hid a real bug"}
    # B is scored from B, found by its session id
    b_key = [t["session"] for t in p.traces() if t["prompt"].startswith("run the narrowest")][0]
    done = p.print("--session", b_key[len("pi-"):], "/priors score success")
    assert "credits 1 lesson: P-0001" in done.stdout, done.stdout + done.stderr
    rows = {r["id"]: r for r in json.loads(p.k.ok("lessons", "--json"))}
    assert (rows["P-0001"]["wins"], rows["P-0001"]["losses"]) == (1, 0)
    assert (rows["P-0002"]["wins"], rows["P-0002"]["losses"]) == (0, 1)
    assert {tuple(t["runs"]) for t in p.traces()} == {("run-003",), ("run-004",)}  # both kept for learning
    assert p.k.ok("verify").startswith("ledger sound")


@needs_node
@needs_deps
@needs_posix
def test_every_command_in_rpc_mode(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    p.k.ok("init")
    p.k.ok("add", "--ns", "lessons", "Keep commits small.")
    r = p.rpc()
    try:
        r.send({"type": "get_commands"})
        got = r.until(lambda e: e.get("type") == "response" and e.get("command") == "get_commands")
        assert "priors" in [c["name"] for c in got["data"]["commands"]]
        say = r.command
        assert say("/priors add #testing Run the narrowest test first.").startswith("P-0002 added to lessons")
        assert say("/priors propose #docs Read AGENTS.md before editing.").startswith("P-0003 suggested in lessons")
        revised = say("/priors revise P-0001 Keep commits small and focused.")  # (P-0001 a person's: it stays unless named)
        assert "P-0004 suggested in lessons (revises P-0001, which a person settled" in revised, revised
        assert "priors decide P-0004 accepted --retires P-0001" in revised, revised
        assert "P-0003" in say("/priors list proposed") and "P-0002" in say("/priors list active")
        first, second = say("/priors activate P-0004").splitlines()[:2]
        assert first.startswith("P-0004 → accepted")
        assert second == "P-0001 → obsolete (superseded by P-0004)"  # applying a revision replaces the lesson
        assert "P-0001" in say("/priors list inactive")
        edited = say("/priors edit P-0002 #testing Run the narrowest relevant test first.")
        assert "P-0002 → obsolete (superseded by P-0005)" in edited
        # a model's revision of a person's lesson, accepted in bulk, does not retire the person's lesson
        assert "P-0006 suggested in lessons (revises P-0005, which a person settled" in say(
            "/priors revise P-0005 Run every test first.")
        bulk = say("/priors activate all")
        assert "P-0003 → accepted" in bulk and "P-0006 → accepted" in bulk
        assert "P-0005 stays accepted" in bulk and "P-0005 → obsolete" not in bulk
        assert "P-0005" in say("/priors list active")
        assert say("/priors deactivate P-0003").startswith("P-0003 → obsolete")
        assert say("/priors reject P-0005").startswith("P-0005 → obsolete")
        assert say("/priors reject P-0006").startswith("P-0006 → obsolete")
        assert say("/priors config maxItems 4") == "maxItems = 4"
        assert "not carried" in say("/priors config minOverlap 1")
        assert say("/priors off") == "inject = off"
        r.prompt("anything at all")
        assert HEADING not in p.system_prompts()[-1]  # off: nothing injected
        assert say("/priors on") == "inject = on"
        r.prompt("keep the commits small")
        assert HEADING in p.system_prompts()[-1]
        assert "2/100 unscored" in say("/priors path")
        assert say("/priors prune 1") == "removed 1 trace, kept 1"
        assert say("/priors prune scored 5") == "removed 0 traces, kept 1"
        assert "credits" in say("/priors score partial good enough")
        assert "ALREADY_SCORED" in say("/priors score success")
        assert "wrote .priors/reflection/" in say("/priors learn 4 --dry-run")
        assert say("/priors learn --mark-existing").startswith("priors: marked 1 scored run")
        bundle = p.k.root / "bundle.json"
        assert say("/priors export bundle.json").startswith("exported ") and bundle.is_file()
        assert say("/priors export bundle.json").startswith("exported ")  # over an earlier export: fine
        # a person's file is never overwritten by mistake, and nothing goes outside the repository
        (p.k.root / "a.py").write_text("print(1)\n", encoding="utf-8")
        assert "a.py exists and is not an earlier export" in say("/priors export a.py")
        assert (p.k.root / "a.py").read_text(encoding="utf-8") == "print(1)\n"
        assert say("/priors export a.py --force").startswith("exported ")
        assert "is outside the repository" in say("/priors export ../outside.json")
        assert not (tmp_path / "outside.json").exists()
        assert "not carried" in say(f"/priors import {bundle} replace")
        assert "imported nothing" in say(f"/priors import {bundle}")
        r.answers = [True]
        assert say("/priors delete P-0005").startswith("P-0005 redacted")
        assert "status" in say("/priors")  # the usage
        assert say("/priors status").startswith("priors: ")
    finally:
        r.close()
    assert p.k.ok("verify").startswith("ledger sound")
    # only the person's commands decided: every decide and the redaction are by the human
    assert all(x.get("by") == "human" for x in p.k.ledger() if x.get("action") in ("decide", "redact"))


@needs_node
@needs_deps
@needs_posix
def test_the_model_calls_the_tool_and_learn_starts_a_turn(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    seed(p)
    # a scored session to learn from
    assert p.print("why is the parser test flaky?").returncode == 0
    key = p.traces()[0]["session"]
    p.k.ok("score", "failure", "--session", key, "--because", "rerun hid the bug")
    p.k.ok("config", "require_review", "none")  # unset: Pi's default holds proposals back
    model.script = [
        {"tool": "priors_lessons", "arguments": {"action": "propose", "text": "Read the failing assertion before rerunning.",
                                                  "tags": ["testing"]}},
        {"tool": "priors_lessons", "arguments": {"action": "revise", "id": "P-0002",
                                                  "text": "The parser tests are flaky under load; read the assertion first."}},
        "Proposed two lessons for your review.",
    ]
    out = p.print("/priors learn 4")
    assert "asking the model for lessons" in out.stdout, out.stdout + out.stderr
    learn = model.requests[1]["messages"][-1]["content"]
    text = learn if isinstance(learn, str) else " ".join(c.get("text", "") for c in learn)
    assert "# Reflection packet" in text and "trace 1: given P-0002" in text and "priors_lessons" in text
    assert HEADING not in model.requests[1]["messages"][0]["content"]  # the learn turn is given no lessons
    assert len(p.traces()) == 1  # and leaves no trace of its own: its prompt is the packet
    results = [m for m in model.requests[2]["messages"] if m.get("role") == "tool"]
    assert "P-0003 suggested in lessons" in str(results[-1]["content"])
    assert "P-0004 suggested in dev (revises P-0002)" in str(model.requests[3]["messages"][-1]["content"])
    statuses = {r["id"]: r["status"] for r in json.loads(p.k.ok("lessons", "--json"))}
    assert statuses == {"P-0001": "open", "P-0002": "open", "P-0003": "open", "P-0004": "open"}  # nothing accepted
    assert "they stay proposed until you activate them" in out.stdout
    seal = [x for x in p.k.ledger() if x.get("t") == "run"][-1]
    assert seal["via"] == "suggest" and "by" not in seal
    # by default (requireReview unset) the model's proposals are not injected until a person activates them,
    # and its revision P-0004 never beside the lesson it revises
    r = p.rpc()  # one session for the rest: each print starts Pi anew (~1 s)
    try:
        r.prompt("read the failing assertion of the parser tests")
        assert HEADING not in p.system_prompts()[-1]  # every lesson here is a proposal
        assert r.command("/priors activate P-0002").startswith("P-0002 → accepted")
        r.prompt("read the failing assertion of the parser tests")
        assert "[P-0002]" in p.system_prompts()[-1] and "P-0003" not in p.system_prompts()[-1]
        assert "P-0004" not in p.system_prompts()[-1]
    finally:
        r.close()


@needs_node
@needs_deps
@needs_posix
def test_a_missing_keeper_is_named_with_how_to_install_it(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model, keeper=False)
    (p.k.root / ".priors").mkdir()
    out = p.print("/priors status")
    assert "the keeper is missing" in out.stdout and "install" in out.stdout
    prompt = p.print("hello")
    assert prompt.stdout == "ok\n"  # the prompt still runs, without lessons
    assert "the keeper is missing" in prompt.stderr
    assert "Extension error" not in prompt.stderr and "stale" not in prompt.stderr, prompt.stderr  # said, not crashed
    assert "pipx install priors-keeper" not in out.stdout  # not on the package index (README): from a clone
    assert HEADING not in p.system_prompts()[0]


@needs_node
@needs_deps
@needs_posix
def test_loaded_twice_the_block_is_given_once_and_priors_stays_one_command(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    seed(p)
    installed = p.home / ".pi" / "agent" / "extensions" / "priors"
    installed.mkdir(parents=True)
    for name in ("index.ts", "words.ts", "package.json"):  # what ./install.sh copies
        shutil.copy(ADAPTER / name, installed / name)
    assert p.print("the parser test", discover=True).returncode == 0
    assert p.system_prompts()[0].count(HEADING) == 1
    assert [t["function"]["name"] for t in model.requests[0]["tools"]].count("priors_lessons") == 1
    assert p.print("/priors status", discover=True).stdout.startswith("priors: 0 active lessons")
    assert len(p.traces()) == 1  # one trace a run, not one per copy


@needs_node
@needs_deps
@needs_posix
def test_a_lesson_text_that_starts_with_a_dash_is_text_not_an_option(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    p.k.ok("init")
    r = p.rpc()  # one session: each print starts Pi anew (~1 s)
    try:
        added = r.command("/priors add --no-verify is never used on this repository.")
        assert added.startswith("P-0001 added to lessons"), added
        proposed = r.command("/priors propose #git -f is never given to git push here.")
        assert proposed.startswith("P-0002 suggested in lessons"), proposed
        edited = r.command("/priors edit P-0001 --no-verify is never used on any branch.")
        assert "P-0001 → obsolete (superseded by P-0003)" in edited, edited
        model.script = [{"tool": "priors_lessons", "arguments": {"action": "propose", "text": "-h prints help; read it first."}},
                        {"tool": "priors_lessons", "arguments": {"action": "revise", "id": "P-0002",
                                                                  "text": "-f is never given to git push, on any branch."}},
                        "done"]
        r.prompt("propose something")
    finally:
        r.close()
    results = [str(m["content"]) for m in model.requests[-1]["messages"] if m.get("role") == "tool"]
    assert "P-0004 suggested in lessons" in results[0] and "P-0005 suggested in lessons (revises P-0002)" in results[1]
    claims = {r["id"]: r["claim"] for r in json.loads(p.k.ok("lessons", "--all", "--json"))}
    assert claims["P-0004"] == "-h prints help; read it first." and claims["P-0003"].startswith("--no-verify")


@needs_node
@needs_deps
@needs_posix
def test_activate_all_applies_a_revision_after_the_lesson_it_revises(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    p.k.ok("init")
    p.k.ok("suggest", "--ns", "lessons", "Check the CI log before rerunning.")
    p.k.ok("suggest", "--revises", "P-0001", "Check the CI log and the failing assertion before rerunning.")
    out = p.print("/priors activate all").stdout
    assert "P-0001 → accepted" in out and "P-0002 → accepted" in out, out
    statuses = {r["id"]: r["status"] for r in json.loads(p.k.ok("lessons", "--all", "--json"))}
    assert statuses == {"P-0001": "obsolete", "P-0002": "accepted"}  # applying a revision replaces the lesson


@needs_node
@needs_deps
@needs_posix
def test_the_models_shell_cannot_run_the_persons_verbs_or_write_into_priors(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    seed(p)
    before = p.k.ledger()
    model.script = [
        {"tool": "bash", "arguments": {"command": "priors decide P-0002 accepted"}},
        {"tool": "bash", "arguments": {"command": "cd . && python3 -m priors score success --session x"}},
        {"tool": "write", "arguments": {"path": ".priors/config.json", "content": "{}"}},
        {"tool": "bash", "arguments": {"command": "echo '{}' > .priors/config.json"}},
        {"tool": "bash", "arguments": {"command": "priors lessons --status all"}},  # reading is fine
        "done",
    ]
    out = p.print("fix the parser test")
    assert out.returncode == 0, out.stderr
    results = [str(m["content"]) for m in model.requests[-1]["messages"] if m.get("role") == "tool"]
    assert len(results) == 5
    assert all("priors: refused" in r for r in results[:4]), results
    assert "`priors decide` is the person's verb" in results[0] and "files under .priors/" in results[2]
    assert "P-0002" in results[4] and "refused" not in results[4]
    assert p.k.ledger() == before  # nothing decided or scored by the model
    assert json.loads(p.k.read(".priors/config.json"))["require_review"] is False  # not overwritten
    assert "never run `priors decide`" in p.system_prompts()[0]  # the block tells the model whose verbs they are


@needs_node
@needs_deps
@needs_posix
def test_delete_keeps_the_sessions_record_and_says_what_it_removes(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    p.k.ok("init")
    p.k.ok("add", "--ns", "dev", "Run the narrowest relevant test before the full suite.")
    p.k.ok("add", "--ns", "dev", "The parser tests are flaky under load; rerun them once.")
    r = p.rpc()
    try:
        r.prompt("the parser test")  # given both (a person's lessons are always given)
        r.answers = [True]
        r.send({"type": "prompt", "message": "/priors delete P-0001"})
        dialog = r.until(lambda e: e.get("method") == "confirm")
        assert "traces that name or quote it" in dialog["message"] and "sessions' records stay" in dialog["message"]
        assert r.until(lambda e: e.get("method") == "notify")["message"].startswith("P-0001 redacted")
        answer = r.command("/priors score success")
        assert answer.startswith("run-") and answer.endswith("credits 1 lesson: P-0002)"), answer
    finally:
        r.close()


@needs_node
@needs_deps
@needs_posix
def test_status_review_and_activate_speak_pi_priors_words(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    p.k.ok("init")
    p.k.ok("add", "--ns", "dev", "Always rerun flaky tests three times.")
    for i in range(3):  # three sessions scored failure: a lesson scored low — the person's call
        p.k.ok("lessons", "--inject", "--session", f"s{i}")
        p.k.ok("score", "failure", "--session", f"s{i}")
    p.k.ok("suggest", "--ns", "dev", "Read the failing assertion first.")
    review = p.print("/priors review").stdout  # print mode lists what waits (RPC would open a dialog a row)
    assert "P-0002 (dev) Read the failing" in review and "your call" in review and "/priors activate P-0001" in review
    r = p.rpc()  # the rest in one session: each print starts Pi anew (~1 s)
    try:
        say = r.command
        status = say("/priors status")
        assert "your call: P-0001 (dev) Always rerun" in status and "keep it (/priors activate P-0001)" in status
        assert "retire it (/priors deactivate P-0001)" in status and "priors decide" not in status
        assert say("/priors activate P-0001").startswith("P-0001 → keep")  # the call answered
        n = len(p.k.ledger())
        assert say("/priors activate P-0001") == "priors: P-0001 is already active"
        assert say("/priors activate P-0002").startswith("P-0002 → accepted")
        assert say("/priors activate P-0002") == "priors: P-0002 is already active"
        assert say("/priors deactivate P-0002").startswith("P-0002 → obsolete")
        assert "Nothing waits for you." in say("/priors status")
    finally:
        r.close()
    assert p.print("/priors reject P-0002").stdout == "priors: P-0002 is already inactive\n"  # print mode: one line
    assert len(p.k.ledger()) == n + 2  # the repeats wrote nothing


@needs_node
@needs_deps
@needs_posix
def test_answers_say_what_happened_in_plain_words(tmp_path: Path, model: StandIn):
    p = Pi(tmp_path, model)
    p.k.ok("init")
    bogus = p.print("/priors bogus")
    assert bogus.stdout.startswith("priors: unknown command /priors bogus\n") and bogus.returncode == 1
    gone = p.print("/priors deactivate P-9999")  # print mode: a refusal exits 1
    assert gone.stdout == "priors: not deactivated — there is no lesson P-9999 (/priors list all)\n" and gone.returncode == 1
    r = p.rpc()  # the rest in one session: each print starts Pi anew (~1 s)
    try:
        say = r.command
        assert say("/priors config requireReview") == \
            "requireReview = default — on in Pi: proposed lessons wait until you activate them"
        shown = say("/priors config")
        assert "maxItems = default" in shown and "autoCapture = default — on" in shown and "{" not in shown
        assert say("/priors config requireReview off") == "requireReview = off"
        assert say("/priors list all") == "no lessons"
        path = say("/priors path")
        assert "1 session record)" in path or "0 session records)" in path
        assert "unknown command" in say("/priors decide")  # not a command here
        shutil.rmtree(p.k.root / ".priors")
        added = say("/priors add Keep it small.")
        assert added.startswith("priors: not added — ") and "— priors:" not in added, added
    finally:
        r.close()


_GUARDED = [
    "priors decide P-0002 accepted", "cd . && python3 -m priors score success --session x", "echo '{}' > .priors/config.json",
    "priors 'decide' P-0001 accepted", '"priors" decide P-1 accepted', "python3 -mpriors decide P-1 accepted",
    "priors -C. decide P-1 accepted", "priors -C . decide P-1 accepted", "priors \\\n decide P-1 accepted",
    "echo decide P-1 accepted | xargs priors", "echo x >| .priors/ledger.jsonl", "cd .priors && echo x >> ledger.jsonl",
    "cp /tmp/l .priors/ledger.jsonl", "echo x > .PRIORS/ledger.jsonl", "env FOO=1 priors add 'x'",
    "sudo priors config inject off", "/usr/local/bin/priors redact P-1 --because x", "x=$(priors score last success)",
    "true; priors import b.json --ns x", "tee -a .priors/ledger.jsonl < x", "sed -i s/a/b/ .priors/ledger.jsonl",
    "dd if=x of=.priors/ledger.jsonl", "echo x 2>.priors/err", 'echo "$(priors decide P-1 accepted)"',
]
_ALLOWED = [
    'grep -rn "priors decide" docs/', "echo 'see priors add for details'", 'git commit -m "docs: explain priors add"',
    "priors lessons --status all", "cat .priors/ledger.jsonl", "priors status --calls", "python3 -m pytest -q",
    "grep -c decide .priors/ledger.jsonl", "ls .priors/", "priors show P-0001", "rg 'priors config' README.md",
]


@needs_node
@needs_deps
def test_the_shell_guard_reads_commands_as_a_shell_does(tmp_path: Path):
    """The guard on the model's shell (adapters/pi/words.ts `personsCommand`) cuts a command into simple
    commands and words as a POSIX shell does: a quoted, split, wrapped or piped run of the person's verbs
    and a write into .priors/ however spelled are refused; a verb named inside another command's text
    (a search, an echo, a commit message) and reading .priors/ are not."""
    out = tmp_path / "js"
    proc = subprocess.run([NODE, str(TSC), "--outDir", str(out), "--module", "es2022", "--target", "es2022",
                           "--moduleResolution", "node", "--skipLibCheck", str(ADAPTER / "words.ts")],
                          capture_output=True, text=True, cwd=str(ADAPTER))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (out / "check.mjs").write_text(
        "import { personsCommand } from './words.js';\n"
        f"const guarded = {json.dumps(_GUARDED)};\nconst allowed = {json.dumps(_ALLOWED)};\n"
        "for (const c of guarded) if (!personsCommand(c)) console.log('NOT REFUSED ' + JSON.stringify(c));\n"
        "for (const c of allowed) if (personsCommand(c)) console.log('REFUSED ' + JSON.stringify(c));\n",
        encoding="utf-8")
    ran = subprocess.run([NODE, str(out / "check.mjs")], capture_output=True, text=True)
    assert ran.returncode == 0 and ran.stdout == "", ran.stdout + ran.stderr


@needs_node
@needs_deps
@needs_posix
def test_the_lessons_tool_answers_a_rewording_with_the_door_s_refusal_and_passes_distinct_from(tmp_path: Path,
                                                                                               model: StandIn):
    """Door 5 in the real Pi: the model's reworded lesson is refused (the refusal is the tool's answer), a
    person's retired lesson reworded stays refused with `distinct_from`, an agent's is set aside by it."""
    p = Pi(tmp_path, model)
    p.k.ok("init")
    p.k.ok("suggest", "--ns", "lessons", "Quote shell variables in scripts.")  # P-0001, an agent's
    p.k.ok("suggest", "--ns", "lessons", "Run the full test suite before every commit.")  # P-0002
    p.k.ok("decide", "P-0002", "obsolete", "--because", "CI runs it")
    quote = "Always quote the shell variables in your scripts."
    model.script = [
        {"tool": "priors_lessons", "arguments": {"action": "propose", "text": quote}},
        {"tool": "priors_lessons", "arguments": {"action": "propose", "text": quote, "distinct_from": ["P-0001"]}},
        {"tool": "priors_lessons", "arguments": {"action": "propose", "text": "Before every commit, run the full test suite.",
                                                  "distinct_from": ["P-0002"]}},
        "done"]
    assert p.print("learn something").returncode == 0
    results = [str(m["content"]) for m in model.requests[-1]["messages"] if m.get("role") == "tool"]
    assert "refused" in results[0] and "DUPLICATE" in results[0] and "P-0001" in results[0], results[0]
    assert "P-0003 suggested in lessons" in results[1], results[1]
    assert "refused" in results[2] and "RERAISE" in results[2] and "retired" in results[2], results[2]
    rows = {r["id"]: r for r in json.loads(p.k.ok("lessons", "--all", "--json"))}
    assert set(rows) == {"P-0001", "P-0002", "P-0003"}
