"""`priors decide` with no ID: the walk through what waits, driven through a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ledgerkit as k
from conftest import REPO, Keeper

pty = pytest.importorskip("pty")

BEHAVIORAL = dict(k.BEHAVIORAL)


def desk_ledger() -> bytes:
    """Something of every kind for the desk: a challenged lesson, a reversal, a review nudge, open findings."""
    lesson = k.prior("P-0002", "run-001", "Run the narrow test first", type="behavioral", facets=BEHAVIORAL)
    del lesson["scope_ref"]
    recs = [
        k.prior("P-0001", "run-001", "total() ignores <script>alert('x')</script> discounts — ünïcode",
                ref="src/cart.py#Cart.total", severity="major", evidence="src/cart.py:41"),
        lesson,
        k.prior("P-0003", "run-001", "prices are rounded half-even", ref="src/price.py", severity="minor"),
        k.prior("P-0004", "run-001", "the cache is never invalidated", ref="lib/cache.py", review_every=1),
        k.prior("P-0005", "run-001", "a finding elsewhere", ns="api", ref="api/x.py", severity="gate"),
        k.commit("run-001"),
        k.decide("P-0003", "wontfix", "we accept the rounding"),
        k.disp("P-0002", "run-002", "challenged"),
        k.call("run-002", 1, "P-0003"),
        k.disp("P-0001", "run-002", "still-open"),
        k.commit("run-002"),
    ]
    return k.to_bytes(recs)


def make_target(root: Path) -> Keeper:
    root.mkdir(parents=True, exist_ok=True)
    keeper = Keeper(root)
    keeper.ok("init")
    (root / ".priors" / "ledger.jsonl").write_bytes(desk_ledger())
    keeper.ok("render")
    return keeper


class Pty:
    """`python -m priors ARGS` on a pseudo-terminal: send keys, read what it prints."""

    def __init__(self, cwd: Path, *args: str) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        env["PYTHONIOENCODING"] = "utf-8"
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the keeper on the terminal
            os.chdir(str(cwd))
            os.execvpe(sys.executable, [sys.executable, "-m", "priors", *args], env)
        self.buf = b""

    def expect(self, text: str, timeout: float = 120) -> str:
        want = text.encode("utf-8")
        end = time.monotonic() + timeout
        while want not in self.buf:
            left = end - time.monotonic()
            assert left > 0, f"timed out waiting for {text!r}; got:\n{self.buf.decode('utf-8', 'replace')}"
            if select.select([self.fd], [], [], min(left, 1.0))[0]:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    assert want in self.buf, f"ended before {text!r}:\n{self.buf.decode('utf-8', 'replace')}"
                self.buf += chunk
        at = self.buf.index(want) + len(want)
        seen, self.buf = self.buf[:at], self.buf[at:]
        return seen.decode("utf-8", "replace")

    def send(self, text: str) -> None:
        os.write(self.fd, text.encode("utf-8"))

    def finish(self, timeout: float = 120) -> tuple:
        rest = b""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if select.select([self.fd], [], [], 1.0)[0]:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                rest += chunk
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8, \
            (self.buf + rest).decode("utf-8", "replace")


PROMPT = " > "


def test_the_walk_writes_exactly_what_the_commands_write(tmp_path):
    walked = make_target(tmp_path / "walked")
    typed = make_target(tmp_path / "typed")
    t = Pty(walked.root, "decide", "--open")
    first = t.expect(PROMPT)
    # the challenged lesson first, with where it came from and its answers
    assert "[1/" in first and "P-0002" in first and "challenged" in first
    assert "claim:    Run the narrow test first" in first and "origin:   born in run-001" in first
    assert "k keep · o obsolete · s skip · q quit" in first
    assert "  answers:\r\n    priors decide P-0002 keep\r\n    priors decide P-0002 obsolete\r\n" in first
    t.send("x")  # not an answer: asked again
    assert "not an answer here" in t.expect(PROMPT)
    t.send("k")
    t.expect("reason (optional — Enter for none; Ctrl-D takes this answer back): ")
    t.send("still useful\n")
    out = t.expect(PROMPT)
    assert "P-0002 → keep (your call — this sticks)" in out
    # the reversal: reopen takes the call's acceptance as its reason on Enter
    assert "P-0003" in out and "reversal: run-002-C-01" in out
    t.send("r")
    t.expect("Enter for “accept run-002-C-01”): ")
    t.send("\n")
    out = t.expect(PROMPT)
    assert "P-0003 → reopen (your call — open again: the next run checks it)" in out and "sticks" not in out
    assert "P-0004" in out and "due for review" in out  # the review nudge
    t.send("s")
    out = t.expect(PROMPT)
    # then the open findings, the worst first: severity, evidence and scope shown, text as typed
    assert "P-0005" in out and "severity: gate" in out
    t.send("s")
    out = t.expect(PROMPT)
    assert "P-0001" in out and "severity: major" in out and "evidence: src/cart.py:41" in out
    assert "scope:    src/cart.py#Cart.total" in out and "<script>alert('x')</script>" in out and "ünïcode" in out
    assert "w wontfix · o obsolete · a accepted" in out
    t.send("w")
    t.expect("takes this answer back): ")
    t.send("legacy — ünïcode\n")
    t.expect("P-0001 → wontfix")
    t.expect(PROMPT)
    t.send("q")
    code, rest = t.finish()
    assert code == 0, rest
    # what is left is named with the command that shows it: P-0004's review is a call, P-0005 and P-0003 open findings
    assert "3 decided, 2 skipped, stopped — 1 call still waits: `priors status --calls` lists it; " \
           "2 open findings still wait: `priors decide --open` walks them" in rest, rest  # P-0005, reopened P-0003
    assert walked.ok("status", "--calls").count("  ? ") == 1

    typed.ok("decide", "P-0002", "keep", "--because", "still useful")
    typed.ok("decide", "P-0003", "reopen", "--because", "accept run-002-C-01")
    typed.ok("decide", "P-0001", "wontfix", "--because", "legacy — ünïcode")
    assert walked.ledger_bytes() == typed.ledger_bytes()
    assert (walked.root / ".priors" / "PRIORS.md").read_bytes() == (typed.root / ".priors" / "PRIORS.md").read_bytes()
    walked.assert_rendered()


def test_quitting_at_once_writes_nothing_and_an_empty_desk_says_so(tmp_path):
    keeper = make_target(tmp_path / "t")
    before = keeper.ledger_bytes()
    t = Pty(keeper.root, "decide")
    t.expect(PROMPT)
    t.send("q")
    code, rest = t.finish()
    assert code == 0 and "0 decided, 0 skipped, stopped" in rest
    assert keeper.ledger_bytes() == before
    (tmp_path / "empty").mkdir()
    empty = Keeper(tmp_path / "empty")
    empty.ok("init")
    t = Pty(empty.root, "decide")
    code, rest = t.finish()
    assert code == 0 and "Nothing waits for you." in rest and "--open" in rest


def test_an_open_run_is_refused_before_anything_is_asked(tmp_path):
    keeper = make_target(tmp_path / "t")
    keeper.open_run("web", {})
    t = Pty(keeper.root, "decide")
    code, rest = t.finish()
    # a person reads a sentence with the commands that end the run, not the refusal's JSON
    assert code == 1 and PROMPT not in rest and '"refused"' not in rest, rest
    assert "A run is open (run-003): decisions happen between runs" in rest and "priors commit --run run-003" in rest


def test_ctrl_d_at_the_reason_takes_that_answer_back(tmp_path):
    keeper = make_target(tmp_path / "t")
    before = keeper.ledger_bytes()
    t = Pty(keeper.root, "decide")
    t.expect(PROMPT)
    t.send("k")
    t.expect("Ctrl-D takes this answer back): ")
    t.send("half a reas")
    t.send("\x04\x04")  # Ctrl-D after some text, then on the empty rest: the input ends
    out = t.expect(PROMPT)
    assert "cancelled — nothing recorded for P-0002" in out
    assert keeper.ledger_bytes() == before
    t.send("q")
    code, rest = t.finish()
    assert code == 0 and "0 decided, 1 skipped, stopped" in rest and keeper.ledger_bytes() == before


def test_open_findings_filtered_by_namespace_and_path(tmp_path):
    keeper = make_target(tmp_path / "t")
    t = Pty(keeper.root, "decide", "--open", "--ns", "web", "src/")
    for _ in range(3):  # the three calls
        t.expect(PROMPT)
        t.send("s")
    out = t.expect(PROMPT)
    assert "P-0001" in out  # under src/, namespace web
    t.send("s")
    code, rest = t.finish()
    assert code == 0 and "P-0005" not in rest and "4 skipped" in rest  # P-0004 is in lib/, P-0005 in api
    # the closing line's command walks the same findings again: the same --ns and PATH
    assert "1 open finding still waits: `priors decide --open --ns web src/` walks it" in rest, rest


def test_a_mistyped_namespace_for_the_open_findings_is_named_before_anything_is_asked(tmp_path):
    keeper = make_target(tmp_path / "t")
    t = Pty(keeper.root, "decide", "--open", "--ns", "wbe")
    code, rest = t.finish()
    assert code == 2 and "--ns wbe: the ledger holds no namespace of that name — did you mean web?" in rest, rest
    assert PROMPT not in rest


def test_not_a_terminal_is_a_usage_error_pointing_to_status_calls(keeper):
    err = keeper.usage("decide")
    assert "priors status --calls" in err and "terminal" in err
    err = keeper.usage("decide", "--open")  # the open findings are `list`'s, not `status --calls`'s (pass 27o)
    assert "priors status --calls" in err and "`priors list --status open` the open findings" in err
    assert "list --status open" not in keeper.usage("decide")


def test_decide_argument_errors(keeper):
    assert "wrong number of arguments" in keeper.usage("decide", "P-0001")
    assert "wrong number of arguments" in keeper.usage("decide", "P-0001", "keep", "extra")
    assert "--ns goes with --open" in keeper.usage("decide", "--ns", "web")
    assert "--because" in keeper.usage("decide", "--because", "x")


def test_the_docs_name_the_keys_the_walk_uses():
    from priors.core.desk import KEYS, QUIT, SKIP

    text = (REPO / "docs" / "desk.md").read_text(encoding="utf-8")
    for key, verdict in KEYS.items():
        assert f"`{key}` {verdict}" in text
    assert f"`{SKIP}` skips, `{QUIT}` stops" in text


def every_other_kind(keeper: Keeper) -> None:
    """A proposed retirement (web), a lesson that keeps losing and a lesson held for review (dev)."""
    keeper.ok("init")
    keeper.ok("add", "--ns", "dev", "Run the narrowest test first.")  # P-0001, run-001
    for n in (2, 3, 4):
        run = json.loads(keeper.ok("relevant", "--ns", "dev"))["run"]
        keeper.ok("commit", "--run", run)
        keeper.ok("score", run, "failure", "--because", f"miss {n}")
    run = keeper.open_run("web", {"a.py": "aaaaaaaaaaaa"})["run"]
    assert keeper.propose(run, "web", {"type": "conclusion", "claim": "a() is slow", "scope_ref": "a.py"}).code == 0
    keeper.ok("commit", "--run", run)  # P-0002
    run = keeper.open_run("web", {"a.py": "aaaaaaaaaaaa"})["run"]
    keeper.ok("disposition", "--run", run, "P-0002", "obsolete-proposed")
    keeper.ok("commit", "--run", run)
    keeper.ok("config", "require_review", "on")
    run = json.loads(keeper.ok("relevant", "--ns", "dev"))["run"]
    assert keeper.propose(run, "dev", {"type": "calibration", "claim": "Agents like small diffs."}).code == 0
    keeper.ok("commit", "--run", run)  # P-0003, held for review


def test_every_kind_of_call_is_walked_in_its_order_with_its_keys(tmp_path):
    walked, typed = Keeper(tmp_path / "walked"), Keeper(tmp_path / "typed")
    for k_ in (walked, typed):
        k_.root.mkdir(parents=True, exist_ok=True)
        every_other_kind(k_)
    t = Pty(walked.root, "decide")
    out = t.expect(PROMPT)
    assert "P-0002 · web · obsolete-proposed — a run proposed retiring this" in out and "k keep · o obsolete" in out
    t.send("o")
    t.expect("takes this answer back): ")
    t.send("\n")
    out = t.expect(PROMPT)
    assert "P-0002 → obsolete" in out
    assert "P-0001 · dev · accepted — this lesson keeps losing" in out, out
    assert "score:    scored 0.00 over 3 runs" in out, out
    t.send("k")
    t.expect("takes this answer back): ")
    t.send("still right\n")
    out = t.expect(PROMPT)
    assert "P-0003 · dev · open — a proposed lesson, not injected until you accept it" in out
    assert "a accepted · o obsolete" in out and "w wontfix" not in out
    t.send("a")
    t.expect("takes this answer back): ")
    t.send("\n")
    code, rest = t.finish()
    assert code == 0 and "3 decided, 0 skipped" in rest, rest
    typed.ok("decide", "P-0002", "obsolete")
    typed.ok("decide", "P-0001", "keep", "--because", "still right")
    typed.ok("decide", "P-0003", "accepted")
    assert walked.ledger_bytes() == typed.ledger_bytes()


def test_hand_written_ledger_text_never_changes_a_suggested_command(keeper):
    """A call id or a claim written by hand into the ledger is offered to a person inside a command to
    copy (`status --calls`, `status --calls --json`, the report): it stays one quoted shell word."""
    import shlex

    keeper.write("a.py", "x = 1\n")
    keeper.open_run("cr", {"a.py": keeper.hash("a.py")})
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": "x is one", "scope_ref": "a.py",
                                           "direction": "smaller"}), "--run", "run-001", "--ns", "cr")
    keeper.ok("commit", "--run", "run-001")
    keeper.ok("decide", "P-0001", "accepted")
    evil = 'run-002-C-01"; touch PWNED; echo "'
    call = {"t": "call", "call_id": evil, "kind": "reversal", "run": "run-002", "ns": "cr",
            "conflicts_with": "P-0001", "claim": "x should be bigger $(touch PWNED2)", "direction": "bigger"}
    path = keeper.root / ".priors" / "ledger.jsonl"
    path.write_bytes(path.read_bytes() + (json.dumps(call, separators=(",", ":"), sort_keys=True) + "\n").encode())
    text = keeper.ok("status", "--calls")
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if "reverses P-0001" in ln)
    suggested = [ln.strip() for ln in lines[at + 1:] if ln.startswith("      priors decide ")]
    assert [shlex.split(c) for c in suggested] == [["priors", "decide", "P-0001", "reopen", "--because", f"accept {evil}"],
                                                   ["priors", "decide", "P-0001", "keep"]]
    calls = json.loads(keeper.ok("status", "--calls", "--json"))["calls"]
    reopen = next(c for ask in calls for c in ask["commands"] if " reopen " in c)
    assert shlex.split(reopen) == ["priors", "decide", "P-0001", "reopen", "--because", f"accept {evil}"]
    assert not (keeper.root / "PWNED").exists() and not (keeper.root / "PWNED2").exists()


def test_the_walk_retires_a_persons_lesson_only_on_the_persons_key(tmp_path):
    """Issue 27: accepting a lesson that supersedes one a person accepted leaves that one in force;
    the walk asks, and only `y` — the person naming it — retires it in the same write."""
    k = Keeper(tmp_path / "t")
    k.root.mkdir()
    k.ok("init")
    k.ok("add", "--ns", "dev", "Name constants.")
    run = k.open_run("dev", {})["run"]
    for claim in ("Prefer named constants.", "Give every magic number a name."):
        k.ok("propose", k.candidate({"type": "calibration", "claim": claim, "supersedes": "P-0001"}),
             "--run", run, "--ns", "dev")
    k.ok("commit", "--run", run)
    k.ok("config", "require_review", "on")
    t = Pty(k.root, "decide")
    first = t.expect(PROMPT)
    assert "replaces: P-0001 — a person settled it (accepted): accepting this lesson leaves it in force" in first
    assert "priors decide P-0002 accepted --retires P-0001" in first
    t.send("a")
    t.expect("reason (optional — Enter for none; Ctrl-D takes this answer back): ")
    t.send("\n")
    t.expect("retire it too? y yes · n no (keep it) > ")
    t.send("n")  # kept: P-0001 stays in force
    t.expect("P-0001 stays accepted")
    t.expect(PROMPT)  # P-0003: the same question
    t.send("a")
    t.expect("reason (optional — Enter for none; Ctrl-D takes this answer back): ")
    t.send("\n")
    t.expect("retire it too? y yes · n no (keep it) > ")
    t.send("y")
    t.expect("P-0001 → obsolete (superseded by P-0003)")
    code, _ = t.finish()
    assert code == 0
    assert [(r.get("id"), r.get("to")) for r in k.ledger()[-3:]] == [
        ("P-0002", "accepted"), ("P-0003", "accepted"), ("P-0001", "obsolete")]


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_the_walk_says_signing_cannot_work_before_asking_anything(tmp_path):
    """With signing on and no key set up, the walk took a key and a reason, then printed the refusal
    twice and stopped: now it refuses at once, before the first question, and writes nothing."""
    keeper = make_target(tmp_path / "t")
    subprocess.run(["git", "init", "-q"], cwd=str(keeper.root), check=True)
    subprocess.run(["git", "config", "gpg.format", "openpgp"], cwd=str(keeper.root), check=True)  # no SSH key set up
    (keeper.root / ".priors" / "allowed_signers").write_text(
        "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO0000000000000000000000000000000000000000000\n")
    ledger = keeper.ledger_bytes()
    t = Pty(keeper.root, "decide")
    try:
        said = t.expect("SIGNING_FAILED", timeout=60)  # (a walk that asks first waits at its prompt instead)
    except AssertionError:
        os.kill(t.pid, 9)
        raise
    code, rest = t.finish()
    assert code == 1 and PROMPT not in said + rest, said + rest
    assert keeper.ledger_bytes() == ledger


def test_open_findings_paths_are_relative_to_where_you_stand_and_a_path_naming_nothing_is_said(tmp_path):
    """A PATH is read from the current folder, as `priors snapshot PATH` reads it: `cart.py` typed in
    src/ is src/cart.py. One outside the target, or under which the ledger holds no finding, is a usage
    error before anything is asked — a mistyped path would otherwise walk nothing and look like a clean slate."""
    keeper = make_target(tmp_path / "t")
    (keeper.root / "src").mkdir()
    t = Pty(keeper.root / "src", "-C", "..", "decide", "--open", "--ns", "web", "cart.py")
    for _ in range(3):  # the three calls
        t.expect(PROMPT)
        t.send("s")
    out = t.expect(PROMPT)
    assert "P-0001" in out  # src/cart.py, read from src/
    t.send("q")
    assert t.finish()[0] == 0
    for where, words in ((keeper.root, "srcc/: no finding in the ledger lies under it"),
                         (keeper.root / "src", "../../elsewhere is outside the target root")):
        path = "srcc/" if where == keeper.root else "../../elsewhere"
        t = Pty(where, "-C", str(keeper.root), "decide", "--open", path)
        code, rest = t.finish()
        assert code == 2 and words in rest and PROMPT not in rest, rest


def test_the_walk_shows_an_analyzers_rule_id_as_list_does(tmp_path):
    """An analyzer's finding (ingest-sarif) is known by its rule id — `list`, `show` and the report show
    `ruff:E722`; the walk showed only the claim."""
    keeper = Keeper(tmp_path / "t")
    keeper.root.mkdir()
    keeper.ok("init")
    recs = [k.prior("P-0001", "run-001", "Do not use bare `except`", ns="ruff", ref="src/app.py", rule="ruff:E722",
                    direction="ruff:E722", severity="major"), k.commit("run-001", ns="ruff")]
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(k.to_bytes(recs))
    assert "[ruff:E722] Do not use bare" in keeper.ok("list")
    t = Pty(keeper.root, "decide", "--open")
    out = t.expect(PROMPT)
    assert "  rule:     ruff:E722\n" in out.replace("\r\n", "\n"), out
    t.send("q")
    assert t.finish()[0] == 0
