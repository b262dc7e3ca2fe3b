"""`priors mcp` at the byte level: the handshake, every malformed message, batches per revision,
oversized lines, a closed stdin, a stdout that carries nothing but the protocol — and the pure
tool table (the tools declared with their verbs in priors/cli/verbs.py, the protocol's data in
priors/core/mcp_tools.py). (A real client drives the server in test_mcp_sdk.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from conftest import REPO, Keeper
from priors.cli.mcp_server import CALLS
from priors.cli.verbs import tools
from priors.core.mcp_tools import (
    PROTOCOL_VERSIONS,
    negotiate,
    schema_problem,
    tool_entry,
    unknown_tool,
)
from priors.core.vocabulary import MAX_MCP_MESSAGE_BYTES

NS = "code-review"


def _init(version: str = "2025-06-18", mid: Any = 0) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def _call(mid: Any, name: str, args: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "method": "tools/call", "params": {"name": name, "arguments": args}}


def _ping(mid: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "method": "ping"}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def serve(root: Path, messages: List[Any], *, extra: Tuple[str, ...] = (), cwd: Optional[Path] = None,
          tail: bytes = b"\n") -> Tuple[List[Any], str, int]:
    """Run `priors -C ROOT mcp` over these messages (dicts as JSON lines, bytes as they are) until stdin
    closes; (every stdout line parsed, stderr, exit code). Each stdout line must be a JSON-RPC reply."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    data = b"\n".join(m if isinstance(m, bytes) else json.dumps(m).encode("utf-8") for m in messages) + tail
    proc = subprocess.run([sys.executable, "-m", "priors", "-C", str(root), *extra, "mcp"], input=data,
                          capture_output=True, cwd=str(cwd or root), env=env, timeout=120)
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    replies = []
    for line in proc.stdout.split(b"\n")[:-1]:
        msg = json.loads(line.decode("utf-8"))
        for one in msg if isinstance(msg, list) else [msg]:
            assert one["jsonrpc"] == "2.0" and ("result" in one) != ("error" in one), one
        replies.append(msg)
    assert proc.stdout.endswith(b"\n") or proc.stdout == b""
    return replies, err, proc.returncode


def _target(tmp_path: Path, name: str = "repo", init: bool = True) -> Keeper:
    root = tmp_path / name
    root.mkdir()
    k = Keeper(root)
    k.write("src/app.py", "def parse(text):\n    return text.split()\n\n\ndef render(rows):\n    return rows\n")
    if init:
        k.ok("init")
    return k


def _error(reply: Dict[str, Any]) -> Tuple[Any, int, str]:
    return reply["id"], reply["error"]["code"], reply["error"]["message"]


# ------------------------------------------------------------------ the handshake


def test_initialize_negotiates_the_revision_and_ping_needs_none(tmp_path: Path) -> None:
    k = _target(tmp_path)
    replies, err, code = serve(k.root, [_ping("p"), _init("2025-06-18", 1), INITIALIZED, _init("2025-06-18", 2)])
    assert code == 0 and err == ""
    assert replies[0] == {"jsonrpc": "2.0", "id": "p", "result": {}}
    res = replies[1]["result"]
    assert res["protocolVersion"] == "2025-06-18"
    assert res["capabilities"] == {"tools": {"listChanged": False}}
    assert res["serverInfo"]["name"] == "priors" and res["serverInfo"]["version"]
    assert "print the exact command" in res["instructions"]
    assert _error(replies[2])[:2] == (2, -32600)  # initialize twice
    for asked, got in [("1999-01-01", PROTOCOL_VERSIONS[0]), ("2024-11-05", "2024-11-05"),
                       ("2025-11-25", "2025-11-25"), ("2025-03-26", "2025-03-26")]:
        replies, _, _ = serve(k.root, [_init(asked)])
        assert replies[0]["result"]["protocolVersion"] == got


def test_tools_before_initialize_and_bad_initialize_are_errors(tmp_path: Path) -> None:
    k = _target(tmp_path)
    replies, _, code = serve(k.root, [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        _call(2, "priors_status", {}),
        {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}},  # the stateless revision's probe
        {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {}},
        _init("2025-11-25", 5),
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
    ])
    assert code == 0
    assert [_error(r)[:2] for r in replies[:4]] == [(1, -32600), (2, -32600), (3, -32601), (4, -32602)]
    assert "initialize first" in _error(replies[0])[2]
    assert replies[4]["result"]["protocolVersion"] == "2025-11-25"
    names = [t["name"] for t in replies[5]["result"]["tools"]]
    assert names == list(tools())
    assert not any(v in n for n in names for v in ("decide", "redact", "add", "score", "import", "config"))


# ------------------------------------------------------------------ malformed input


def test_malformed_messages_get_clear_errors_and_nothing_is_written(tmp_path: Path) -> None:
    k = _target(tmp_path)
    before = k.ledger_bytes()
    replies, err, code = serve(k.root, [
        _init(),
        b"{not json",
        b"\xff\xfe{}",
        b"42",
        b'"x"',
        b"null",
        b"   ",  # a blank line: nothing to answer
        {"id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": 7},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},  # no answer
        {"jsonrpc": "2.0", "method": "no/such/notification"},  # no answer
        {"jsonrpc": "2.0", "id": 99, "result": {}},  # a response to nothing: no answer
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": [1]},
        [_ping(5)],  # batches left MCP in 2025-06-18
        _call(6, "priors_relevant", {"ns": NS, "snapshot": True, "bogus": 1}),
        _call(7, "priors_relevnt", {"ns": NS}),
        _call(8, "priors_relevant", {"ns": NS, "snapshot": 3}),
        _call(9, "priors_relevant", {}),
        _call(10, "priors_relevant", "ns"),
        _call(11, "priors_disposition", {"run": "run-001", "verdicts": [{"id": "P-0001"}]}),
        {"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"arguments": {}}},
        _ping(13),
    ])
    assert code == 0
    got = [_error(r) if "error" in r else r["result"] for r in replies[1:]]
    codes = [g[:2] if isinstance(g, tuple) else g for g in got]
    assert codes == [
        (None, -32700), (None, -32700), (None, -32600), (None, -32600), (None, -32600),
        (1, -32600), (None, -32600), (None, -32600), (2, -32600), (3, -32601), (4, -32602), (None, -32600),
        (6, -32602), (7, -32602), (8, -32602), (9, -32602), (10, -32602), (11, -32602), (12, -32602), {},
    ], codes
    messages = {g[0]: g[2] for g in got if isinstance(g, tuple) and g[0] is not None}
    assert "not UTF-8" in got[1][2]
    assert "unknown argument `bogus`" in messages[6]
    assert "did you mean 'priors_relevant'" in messages[7]
    assert "`snapshot` has the wrong type" in messages[8]
    assert "`ns` is required" in messages[9]
    assert "`arguments` must be an object" in messages[10]
    assert "`verdicts[0].verdict` is required" in messages[11]
    assert "batches are not part of MCP revision 2025-06-18" in got[11][2]
    assert k.ledger_bytes() == before
    assert list((k.root / ".priors" / "runs").iterdir()) == []
    assert "ignored" not in err


def test_text_that_is_not_unicode_is_a_usage_error_and_the_reply_is_still_json(tmp_path: Path) -> None:
    k = _target(tmp_path)
    replies, _, _ = serve(k.root, [
        _init(),
        _call(1, "priors_relevant", {"ns": NS, "snapshot": True}),
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"priors_propose","arguments":'
        b'{"run":"run-001","ns":"code-review","candidates":[{"type":"conclusion","claim":"bad \\ud800 text",'
        b'"scope_ref":"src/app.py"}]}}}',
        _call(3, "priors_relevant", {"ns": NS, "query": "\ud800"}),
    ])
    assert replies[1]["result"]["isError"] is False
    assert _error(replies[2])[:2] == (2, -32602) and "nothing was written" in _error(replies[2])[2]
    assert _error(replies[3])[:2] == (3, -32602) and "not valid text" in _error(replies[3])[2]
    assert k.ledger_bytes() == b""


def test_batches_are_answered_only_in_the_revision_that_has_them(tmp_path: Path) -> None:
    k = _target(tmp_path)
    replies, _, _ = serve(k.root, [
        [_ping(0)],  # before initialize: no revision, no batch
        _init("2025-03-26", 1),
        [_ping(2), INITIALIZED, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, 5, _init("2025-03-26", 6)],
        [],
        [INITIALIZED],
        _call(7, "priors_status", {}),
    ])
    assert _error(replies[0])[:2] == (None, -32600)
    assert replies[1]["result"]["protocolVersion"] == "2025-03-26"
    batch = replies[2]
    assert isinstance(batch, list) and len(batch) == 4
    assert batch[0] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert len(batch[1]["result"]["tools"]) == len(tools())
    assert _error(batch[2])[:2] == (None, -32600)
    assert _error(batch[3])[:2] == (6, -32600) and "batch" in _error(batch[3])[2]
    assert _error(replies[3])[:2] == (None, -32600)  # an empty batch; the batch of one notification has no reply
    result = replies[4]["result"]
    assert "structuredContent" not in result  # 2025-03-26 predates structured tool output
    assert json.loads(result["content"][0]["text"])["namespaces"] == []


def test_an_oversized_message_is_refused_unread_and_the_server_goes_on(tmp_path: Path) -> None:
    k = _target(tmp_path)
    k.ok("relevant", "--ns", NS, "--snapshot")
    huge = json.dumps(_call(1, "priors_propose", {"run": "run-001", "ns": NS, "candidates": [
        {"type": "conclusion", "claim": "x" * MAX_MCP_MESSAGE_BYTES, "scope_ref": "src/app.py"}]})).encode()
    before = k.ledger_bytes()
    replies, _, code = serve(k.root, [_init(), huge, _ping(2)])
    assert code == 0
    assert _error(replies[1])[:2] == (None, -32600)
    assert f"longer than {MAX_MCP_MESSAGE_BYTES} bytes" in _error(replies[1])[2]
    assert replies[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert k.ledger_bytes() == before
    assert not (k.root / ".priors" / "runs" / "run-001" / "staged.jsonl").exists()


def test_a_closed_stdin_ends_the_server_cleanly(tmp_path: Path) -> None:
    k = _target(tmp_path)
    assert serve(k.root, [], tail=b"") == ([], "", 0)
    replies, err, code = serve(k.root, [_init(), _ping(1)], tail=b"")  # the last line has no newline
    assert code == 0 and err == "" and replies[1]["id"] == 1
    replies, _, code = serve(k.root, [_init(), b'{"jsonrpc":"2.0","id":2,"method":"pi'], tail=b"")  # cut mid-message
    assert code == 0 and _error(replies[1])[:2] == (None, -32700)


def test_an_open_run_stays_open_when_stdin_closes(tmp_path: Path) -> None:
    k = _target(tmp_path)
    replies, _, code = serve(k.root, [_init(), _call(1, "priors_relevant", {"ns": NS, "snapshot": True})])
    assert code == 0 and replies[1]["result"]["structuredContent"]["run"] == "run-001"
    assert (k.root / ".priors" / "runs" / "run-001" / "relevant.json").is_file()
    assert k.ledger_bytes() == b""
    k.ok("commit", "--run", "run-001")  # the next session (or a shell) finishes it


def test_failures_inside_a_call_are_reported_honestly(tmp_path: Path, monkeypatch) -> None:
    """An unexpected error is a JSON-RPC error saying nothing changed; after the ledger landed, a warning."""
    import io

    from priors.cli import mcp_server
    from priors.ops import retract, run
    from priors.store import files

    k = _target(tmp_path)
    server = mcp_server.Server(str(k.root), io.BytesIO(), io.StringIO())
    assert server.handle(_init())["result"]["protocolVersion"] == "2025-06-18"

    def full_disk(paths: Any, run_id: str) -> Any:
        raise OSError(28, "No space left on device")

    def landed_then_failed(paths: Any, run_id: str) -> Any:
        files.CHANGED.append(str(k.root / ".priors" / "ledger.jsonl"))
        files.LANDED.append(str(k.root / ".priors" / "ledger.jsonl"))
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(retract, "abort", full_disk)
    reply = server.handle(_call(1, "priors_abort", {"run": "run-001"}))
    assert reply["error"]["code"] == -32603
    assert "No space left on device" in reply["error"]["message"] and "nothing was changed" in reply["error"]["message"]
    assert "the machine failed, not your call" in reply["error"]["message"]
    monkeypatch.setattr(run, "commit", landed_then_failed)
    result = server.handle(_call(2, "priors_commit", {"run": "run-001"}))["result"]
    assert result["isError"] is False
    assert "the change stands, do not repeat the call" in result["structuredContent"]["warning"]
    assert server.handle(_ping(3))["result"] == {}  # and it goes on


def test_a_failure_of_the_machine_is_an_error_that_names_the_machine(tmp_path: Path) -> None:
    """A read-only or full disk (every write fails, through tests/faultrun.py): the tool call is a
    -32603 error saying the machine failed, not the call — exit 3 on the command line — while a
    wrong call on the same server stays a -32602 usage error."""
    k = _target(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PRIORS_FAULT="all:EROFS")
    msgs = [_init(), _call(1, "priors_relevant", {"ns": NS, "snapshot": ["src"]}),
            _call(2, "priors_abort", {"run": "run-1"})]
    data = b"\n".join(json.dumps(m).encode("utf-8") for m in msgs) + b"\n"
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "faultrun.py"), "-C", str(k.root), "mcp"],
                          input=data, capture_output=True, cwd=str(tmp_path), env=env, timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    replies = [json.loads(x) for x in proc.stdout.decode("utf-8").splitlines()]
    mid, code, message = _error(replies[1])
    assert (mid, code) == (1, -32603), replies[1]
    assert "Read-only file system" in message and "the machine failed, not your call" in message, message
    assert replies[2]["error"]["code"] == -32602, replies[2]  # the caller's mistake stays theirs
    assert "bad run id" in replies[2]["error"]["message"] and "the machine" not in replies[2]["error"]["message"]
    assert not (k.root / ".priors" / "runs").exists() or not list((k.root / ".priors" / "runs").iterdir())
    assert k.ledger_bytes() == b""


def test_in_process_the_server_uses_the_streams_it_is_given(tmp_path: Path, monkeypatch) -> None:
    """main(["mcp"]) with replaced sys.stdin/sys.stdout (an embedding, the fuzz tests) never touches fds 0 and 1."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from priors.cli.main import main

    k = _target(tmp_path)
    lines = json.dumps(_init()) + "\n" + json.dumps(_ping(1)) + "\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines.encode("utf-8")), encoding="utf-8"))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["-C", str(k.root), "mcp"]) == 0
    replies = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [r["id"] for r in replies] == [0, 1] and replies[1]["result"] == {}
    assert err.getvalue() == ""


def test_the_documented_snippets_are_the_ones_install_prints() -> None:
    snippet = '{"mcpServers": {"priors": {"command": "priors", "args": ["mcp"]}}}'
    assert json.loads(snippet)["mcpServers"]["priors"] == {"command": "priors", "args": ["mcp"]}
    for doc in (REPO / "README.md", REPO / "docs" / "mcp.md"):
        assert snippet in doc.read_text(encoding="utf-8"), doc
    # install.sh prints it with the command `priors` on PATH, or the launcher's full path when it is not
    # (tests/test_install.py runs both)
    assert ('{\\"mcpServers\\": {\\"priors\\": {\\"command\\": \\"$(snippet_command)\\", \\"args\\": [\\"mcp\\"]}}}'
            in (REPO / "install.sh").read_text(encoding="utf-8"))
    assert "claude mcp add --scope user priors -- priors mcp" in (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")


def test_stdout_carries_only_the_protocol(tmp_path: Path) -> None:
    k = _target(tmp_path, init=False)  # the first run sets .priors/ up and says so — on stderr
    replies, err, code = serve(k.root, [_init(), _call(1, "priors_relevant", {"ns": NS, "snapshot": ["src"]})],
                               cwd=tmp_path)
    assert code == 0
    assert "set up" in err
    body = replies[1]["result"]["structuredContent"]
    assert body["run"] == "run-001" and replies[1]["result"]["isError"] is False
    assert json.loads((k.root / ".priors" / "runs" / "run-001" / "relevant.json").read_text())["scopes"]


def test_a_directory_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    replies, err, code = serve(tmp_path / "missing", [_init()], cwd=tmp_path)
    assert (replies, code) == ([], 2)
    assert "not a directory" in err


# ------------------------------------------------------------------ the keeper through tools


def test_refusals_are_tool_results_and_the_ledger_matches_the_cli(tmp_path: Path) -> None:
    """One run through tools and through the command line, in two targets: the same ledger bytes."""
    cli, tools = _target(tmp_path, "cli"), _target(tmp_path, "tools")
    found = {"type": "conclusion", "claim": "parse() splits on any whitespace", "at": "src/app.py:2",
             "severity": "minor"}
    cli.ok("relevant", "--ns", NS, "--snapshot")
    cli.write("c.json", json.dumps(found))
    cli.ok("propose", "c.json", "--run", "run-001", "--ns", NS)
    dup = cli.refused("DUPLICATE", "propose", "c.json", "--run", "run-001", "--ns", NS)
    cli.ok("commit", "--run", "run-001")
    replies, _, code = serve(tools.root, [
        _init(),
        _call(1, "priors_relevant", {"ns": NS, "snapshot": True}),
        _call(2, "priors_propose", {"run": "run-001", "ns": NS, "candidates": [found]}),
        _call(3, "priors_propose", {"run": "run-001", "ns": NS, "candidates": [found]}),
        _call(4, "priors_scopes", {"run": "run-001", "paths": ["src/app.py"], "lines": True}),
        _call(5, "priors_commit", {"run": "run-001"}),
        _call(6, "priors_commit", {"run": "run-001"}),
        _call(7, "priors_abort", {"run": "run-001"}),
        _call(8, "priors_show", {"id": "P-0009"}),
    ])
    assert code == 0
    res = {r["id"]: r["result"] for r in replies[1:]}
    assert res[2]["structuredContent"]["items"][0]["scope_ref"] == "src/app.py#parse"
    assert res[3]["isError"] is True and res[3]["structuredContent"] == dup
    assert json.loads(res[3]["content"][0]["text"]) == dup
    assert res[4]["structuredContent"] == {"src/app.py": res[4]["structuredContent"]["src/app.py"],
                                           "src/app.py#parse": [1, 2], "src/app.py#render": [5, 6]}
    assert res[5]["structuredContent"] == res[6]["structuredContent"]  # a retry: the same summary, nothing written
    assert res[7]["isError"] is True and res[7]["structuredContent"]["refused"] == "RUN_COMMITTED"
    assert res[8]["structuredContent"] == {"id": "P-0009", "refused": "UNKNOWN_PRIOR",
                                           "hint": "the ledger's one prior is P-0001"}
    assert tools.ledger_bytes() == cli.ledger_bytes()
    assert (tools.root / ".priors" / "PRIORS.md").read_bytes() == (cli.root / ".priors" / "PRIORS.md").read_bytes()


def test_the_cli_json_forms_are_the_tool_results(tmp_path: Path) -> None:
    k = _target(tmp_path)
    k.ok("relevant", "--ns", NS, "--snapshot")
    k.write("c.json", json.dumps({"type": "conclusion", "claim": "render() returns rows unchanged",
                                  "scope_ref": "src/app.py#render"}))
    staged = json.loads(k.ok("propose", "c.json", "--run", "run-001", "--ns", NS, "--json"))
    assert staged == {"items": [{"id": "P-0001", "item": "c.json", "scope_ref": "src/app.py#render"}], "run": "run-001"}
    assert json.loads(k.ok("withdraw", "--run", "run-001", "P-0001", "--json")) == {"run": "run-001", "withdrawn": ["P-0001"]}
    status = json.loads(k.ok("status", "--json"))
    assert status == {"namespaces": [], "open_runs": ["run-001"]}
    assert json.loads(k.ok("abort", "--run", "run-001", "--json")) == {"aborted": True, "run": "run-001"}
    assert k.ok("status").strip()  # the text form is unchanged: words for a person
    replies, _, _ = serve(k.root, [_init(), _call(1, "priors_status", {"calls": True})])
    assert replies[1]["result"]["structuredContent"] == {"calls": [], "namespaces": [], "open_runs": []}


def test_status_with_calls_gives_the_commands_for_the_person(tmp_path: Path) -> None:
    k = _target(tmp_path)
    lesson = {"type": "calibration", "claim": "Prefer small pure functions in the parser"}
    replies, _, _ = serve(k.root, [
        _init(),
        _call(1, "priors_relevant", {"ns": NS, "snapshot": True}),
        _call(2, "priors_propose", {"run": "run-001", "ns": NS, "candidates": [lesson]}),
        _call(3, "priors_commit", {"run": "run-001"}),
        _call(4, "priors_relevant", {"ns": NS, "snapshot": True}),
        _call(5, "priors_disposition", {"run": "run-002", "verdicts": [{"id": "P-0001", "verdict": "challenged"}]}),
        _call(6, "priors_commit", {"run": "run-002"}),
        _call(7, "priors_status", {"calls": True}),
    ])
    assert [r["result"]["isError"] for r in replies[1:]] == [False] * 7, replies
    assert replies[4]["result"]["structuredContent"]["inject"][0]["id"] == "P-0001"
    status = replies[7]["result"]["structuredContent"]
    assert status == json.loads(k.ok("status", "--calls", "--json"))
    (call,) = status["calls"]
    assert (call["id"], call["kind"]) == ("P-0001", "challenged")
    assert call["commands"] == ["priors decide P-0001 keep", "priors decide P-0001 obsolete"]


# ------------------------------------------------------------------ the pure tool table


def test_negotiation_and_the_tool_table() -> None:
    assert negotiate("2025-06-18") == "2025-06-18"
    assert negotiate("2026-07-28") == negotiate(None) == PROTOCOL_VERSIONS[0]
    listed = [tool_entry(n, v.tool.title, v.tool.read_only, v.tool.description, v.tool.schema)
              for n, v in tools().items()]
    assert [t["name"] for t in listed] == list(tools())
    assert all(t["inputSchema"]["additionalProperties"] is False for t in listed)
    assert "person's verb" in unknown_tool("priors_redact", list(tools())) and "person's verb" in unknown_tool("score", [])
    assert "did you mean 'priors_commit'" in unknown_tool("priors_comit", list(tools()))


def test_every_tool_has_its_call_and_every_call_its_tool() -> None:
    # A verb record that gains a Tool without a call in cli/mcp_server.py would be listed by
    # tools/list and then fail on every call: the two tables must name the same verbs.
    assert sorted(CALLS) == sorted(v.name for v in tools().values())


def test_schema_problems_are_named_by_their_path() -> None:
    schema = tools()["priors_disposition"].tool.schema
    assert schema_problem(schema, {"run": "run-001", "verdicts": [{"id": "P-0001", "verdict": "fixed"}]}) is None
    assert schema_problem(schema, {"run": "run-001", "verdicts": []}) == "`verdicts` must hold at least 1 item(s)"
    assert schema_problem(schema, {"run": 1, "verdicts": [{}]}) == "`run` must be a string"
    assert schema_problem(schema, {"run": "run-001", "verdicts": [{"id": "P-0001", "verdict": "fixed", "x": 1}]}) \
        .startswith("unknown argument `verdicts[0].x`")
    rel = tools()["priors_relevant"].tool.schema
    assert schema_problem(rel, {"ns": NS, "snapshot": ["a", "b"], "max_inject": 2}) is None
    assert schema_problem(rel, {"ns": NS, "max_inject": -1}) == "`max_inject` must be at least 0"
    assert schema_problem(rel, {"ns": NS, "settled": True}) == "`settled` must be a whole number"
    assert schema_problem(rel, {"ns": NS, "scopes": {"a.py": 3}}) == "`scopes.a.py` must be a string"
    assert schema_problem(rel, {"ns": NS, "snapshots": True}).startswith(
        "unknown argument `snapshots` — did you mean `snapshot`?")
    # a misspelt required argument is named as the misspelling, not as the one missing (newcomer pass 27ai)
    assert schema_problem(rel, {"nss": NS}).startswith("unknown argument `nss` — did you mean `ns`?")
    assert schema_problem(schema, {"run": "run-001", "verdictz": [{}]}).startswith(
        "unknown argument `verdictz` — did you mean `verdicts`?")


def test_a_tool_call_reaches_its_verb_with_its_arguments_as_they_are(tmp_path: Path) -> None:
    """No argument vector in between: a query or an id that looks like a flag stays a value, and the
    answer is the command line's for the same values (the ids after `--` there)."""
    k = _target(tmp_path)
    replies, err, code = serve(k.root, [
        _init(),
        _call(1, "priors_relevant", {"ns": NS, "query": "-x", "max_chars": 50, "scopes": {}}),
        _call(2, "priors_disposition", {"run": "run-001", "verdicts": [{"id": "--help", "verdict": "fixed"}]}),
        _call(3, "priors_show", {"id": "-h"}),
    ])
    assert code == 0
    assert replies[1]["result"]["structuredContent"]["run"] == "run-001"
    cli = k("disposition", "--run", "run-001", "--json", "--", "--help", "fixed")
    assert cli.code == 1 and replies[2]["result"]["isError"] is True
    assert replies[2]["result"]["content"][0]["text"] == cli.out.strip()
    assert _error(replies[3])[1] == -32602 and "'-h' is not a prior id" in _error(replies[3])[2]


def test_a_tool_call_is_held_to_the_command_lines_rules_for_text(tmp_path: Path) -> None:
    """No parser in between, the same rules: a bad namespace, a control or bidi character, a lone
    surrogate or an oversized value is a usage error (-32602) with the command line's own words,
    and nothing is written."""
    k = _target(tmp_path)
    before = k.ledger_bytes()
    bell, rlo = "\u0007", "\u202e"
    replies, err, code = serve(k.root, [
        _init(),
        _call(1, "priors_relevant", {"ns": "Code Review", "scopes": {}}),
        _call(2, "priors_relevant", {"ns": NS, "run": f"run-001{bell}", "scopes": {}}),
        _call(3, "priors_disposition", {"run": "run-001", "verdicts": [{"id": f"P-0001{rlo}", "verdict": "fixed"}]}),
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"priors_show","arguments":{"id":"P-\\ud800"}}}',
        _call(5, "priors_scopes", {"run": "run-001", "paths": ["x" * (2 << 20)]}),
    ])
    assert code == 0
    cli = k("relevant", "--ns", NS, "--run", f"run-001{bell}", "--scopes", k.scopes({}))
    assert cli.code == 2
    expected = {
        1: "bad namespace 'Code Review'",
        2: cli.err.strip().split("priors relevant: ", 1)[1],
        3: "an argument holds a control or bidirectional-format character",
        4: "is not valid text",
        5: "is longer than",
    }
    for reply in replies[1:]:
        mid, rpc, message = _error(reply)
        assert rpc == -32602 and expected[mid] in message, (mid, message)
    assert k.ledger_bytes() == before and not (k.root / ".priors" / "runs" / "run-001").exists()
