"""`priors mcp` driven by a real client: the official MCP Python SDK over stdio.

A whole two-run review through tools only leaves the same ledger bytes as the same review through
the command line; a refusal arrives as a tool result with isError; a usage error as a JSON-RPC
error; no person's verb is listed or callable. The raw protocol's error cases are in test_mcp.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from conftest import REPO, Keeper

if sys.version_info < (3, 10):
    pytest.skip("the MCP Python SDK (`mcp`, in the test extra) needs Python >= 3.10; test_mcp.py covers the "
                "server's protocol here with raw bytes", allow_module_level=True)

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

NS = "code-review"
AGENT_TOOLS = {"priors_relevant", "priors_disposition", "priors_propose", "priors_withdraw", "priors_commit",
               "priors_carry", "priors_abort", "priors_scopes", "priors_status", "priors_show", "priors_lessons"}
HUMAN = ("decide", "redact", "add", "score", "import", "config")

CART = """class Cart:
    def total(self, items):
        return sum(i.price for i in items)

    def add(self, item):
        self.items.append(item)

    def tax(self):
        return 0.2
"""
CART_FIXED = CART.replace("sum(i.price for i in items)", "sum(i.price - i.discount for i in items)")
FIRST = [
    {"type": "conclusion", "claim": "Cart.total ignores discounts", "at": "src/cart.py:3", "severity": "major"},
    {"type": "conclusion", "claim": "Cart.add never checks the item type", "scope_ref": "src/cart.py#Cart.add",
     "severity": "minor"},
]
RERAISE = {"type": "conclusion", "claim": "Cart.add never checks the item type", "scope_ref": "src/cart.py#Cart.add",
           "severity": "minor"}
NEW = {"type": "conclusion", "claim": "Cart.tax hard-codes a 20 percent rate", "at": "src/cart.py:9", "severity": "minor"}


def _target(root: Path) -> Keeper:
    k = Keeper(root)
    k.write("src/cart.py", CART)
    k.ok("init")
    return k


def _server(root: Path) -> StdioServerParameters:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return StdioServerParameters(command=sys.executable, args=["-m", "priors", "-C", str(root), "mcp"], env=env,
                                 cwd=str(root.parent))


def _dump(model: Any) -> Dict[str, Any]:
    """A result as JSON keys (camelCase in every SDK version)."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


async def _error_of(coro) -> Tuple[int, str]:
    """(code, message) of the JSON-RPC error a call must end in."""
    try:
        await coro
    except Exception as exc:  # McpError (SDK 1.x) or MCPError (2.x): both carry the ErrorData
        err = getattr(exc, "error", None)
        assert err is not None, repr(exc)
        return err.code, err.message
    raise AssertionError("the call did not end in a JSON-RPC error")


def _no_item(obj: Dict[str, Any]) -> Dict[str, Any]:
    """Propose answers label items by their source (a file on the command line, candidates[i] in a call)."""
    return {**obj, "items": [{k: v for k, v in it.items() if k != "item"} for it in obj["items"]]}


def test_tools_listed_with_valid_schemas_and_no_human_verb(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator  # the SDK's own dependency

    root = tmp_path / "repo"
    root.mkdir()
    k = _target(root)

    async def go() -> Tuple[Dict[str, Any], List[Dict[str, Any]], List[Tuple[int, str]]]:
        async with stdio_client(_server(root)) as (read, write):
            async with ClientSession(read, write) as session:
                init = _dump(await session.initialize())
                tools = [_dump(t) for t in (await session.list_tools()).tools]
                errors = [await _error_of(session.call_tool(name, {"id": "P-0001", "verdict": "accepted"}))
                          for verb in HUMAN for name in (f"priors_{verb}", verb)]
                return init, tools, errors

    init, tools, errors = asyncio.run(go())
    assert init["serverInfo"]["name"] == "priors"
    assert init["protocolVersion"] in ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert "priors decide" in init["instructions"] and "never run it yourself" in init["instructions"]
    assert {t["name"] for t in tools} == AGENT_TOOLS
    for t in tools:
        Draft202012Validator.check_schema(t["inputSchema"])
        assert t["inputSchema"]["type"] == "object" and t["description"]
        assert not any(verb in t["name"] for verb in HUMAN)
    schemas = {t["name"]: t["inputSchema"] for t in tools}
    good = {"ns": NS, "snapshot": True}
    assert not list(Draft202012Validator(schemas["priors_relevant"]).iter_errors(good))
    assert list(Draft202012Validator(schemas["priors_relevant"]).iter_errors({"ns": NS, "snapshot": 3}))
    cand = {"run": "run-001", "ns": NS, "candidates": [FIRST[0]]}
    assert not list(Draft202012Validator(schemas["priors_propose"]).iter_errors(cand))
    assert all(code == -32602 for code, _ in errors), errors
    assert all("person's verb" in msg for msg, in [(m,) for _, m in errors]), errors
    assert k.ledger_bytes() == b""


def _cli_review(k: Keeper) -> Dict[str, Any]:
    """The two-run review at the command line; every answer in its --json form."""
    out: Dict[str, Any] = {}
    out["relevant1"] = json.loads(k.ok("relevant", "--ns", NS, "--snapshot"))
    k.write("first.json", json.dumps(FIRST))
    out["propose1"] = json.loads(k.ok("propose", "first.json", "--run", "run-001", "--ns", NS, "--json"))
    out["commit1"] = json.loads(k.ok("commit", "--run", "run-001", "--json"))
    return out


def _cli_second(k: Keeper) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    out["relevant2"] = json.loads(k.ok("relevant", "--ns", NS, "--snapshot"))
    out["disposition"] = json.loads(k.ok("disposition", "P-0001", "fixed", "--run", "run-002", "--json"))
    k.write("again.json", json.dumps(RERAISE))
    out["reraise"] = k.refused("RERAISE", "propose", "again.json", "--run", "run-002", "--ns", NS)
    k.write("new.json", json.dumps(NEW))
    out["propose2"] = json.loads(k.ok("propose", "new.json", "--run", "run-002", "--ns", NS, "--json"))
    out["commit2"] = json.loads(k.ok("commit", "--run", "run-002", "--json"))
    out["status"] = json.loads(k.ok("status", "--calls", "--json"))
    out["show"] = json.loads(k.ok("show", "P-0001", "--json"))
    return out


def _between_runs(k: Keeper) -> None:
    """What a person does between the runs (never through the server): decide, and fix the code."""
    k.ok("decide", "P-0002", "wontfix", "--because", "by design")
    k.write("src/cart.py", CART_FIXED)


def test_a_two_run_review_through_tools_writes_the_cli_ledger_byte_for_byte(tmp_path: Path) -> None:
    cli, tools = tmp_path / "cli", tmp_path / "tools"
    cli.mkdir()
    tools.mkdir()
    kc, kt = _target(cli), _target(tools)
    expected = _cli_review(kc)
    _between_runs(kc)
    expected.update(_cli_second(kc))

    async def call(session: ClientSession, name: str, args: Dict[str, Any]) -> Tuple[bool, Dict[str, Any]]:
        res = _dump(await session.call_tool(name, args))
        text = res["content"][0]["text"]
        assert res["content"][0]["type"] == "text"
        assert json.loads(text) == res["structuredContent"]  # the same canonical JSON, as text and as structure
        return bool(res.get("isError")), res["structuredContent"]

    async def go() -> Dict[str, Any]:
        got: Dict[str, Any] = {}
        async with stdio_client(_server(tools)) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.list_tools()
                for key, name, args in [
                    ("relevant1", "priors_relevant", {"ns": NS, "snapshot": True}),
                    ("propose1", "priors_propose", {"run": "run-001", "ns": NS, "candidates": FIRST}),
                    ("commit1", "priors_commit", {"run": "run-001"}),
                ]:
                    err, got[key] = await call(s, name, args)
                    assert not err, got[key]
                _between_runs(kt)  # a person, at the command line, while the server keeps running
                before = kt.ledger_bytes()
                got["usage"] = await _error_of(s.call_tool("priors_disposition", {
                    "run": "run-2", "verdicts": [{"id": "P-0001", "verdict": "fixed"}]}))  # not a run id
                got["usage_human"] = await _error_of(s.call_tool("priors_decide", {"id": "P-0002", "verdict": "keep"}))
                assert kt.ledger_bytes() == before
                for key, name, args in [
                    ("relevant2", "priors_relevant", {"ns": NS, "snapshot": True}),
                    ("disposition", "priors_disposition", {"run": "run-002",
                                                           "verdicts": [{"id": "P-0001", "verdict": "fixed"}]}),
                    ("reraise", "priors_propose", {"run": "run-002", "ns": NS, "candidates": [RERAISE]}),
                    ("propose2", "priors_propose", {"run": "run-002", "ns": NS, "candidates": [NEW]}),
                    ("commit2", "priors_commit", {"run": "run-002"}),
                    ("status", "priors_status", {"calls": True}),
                    ("show", "priors_show", {"id": "P-0001"}),
                ]:
                    err, got[key] = await call(s, name, args)
                    assert err == (key == "reraise"), (key, got[key])
        return got

    got = asyncio.run(go())
    assert kt.ledger_bytes() == kc.ledger_bytes()
    assert (tools / ".priors" / "PRIORS.md").read_bytes() == (cli / ".priors" / "PRIORS.md").read_bytes()
    for key in ("relevant1", "commit1", "relevant2", "disposition", "reraise", "commit2", "status", "show"):
        assert got[key] == expected[key], key
    for key in ("propose1", "propose2"):
        assert _no_item(got[key]) == _no_item(expected[key]), key
    assert [it["item"] for it in got["propose1"]["items"]] == ["candidates[0]", "candidates[1]"]
    assert got["propose1"]["items"][0]["scope_ref"] == "src/cart.py#Cart.total"  # `at` resolved to its definition
    assert got["reraise"]["refused"] == "RERAISE" and got["reraise"]["hint"]
    assert got["commit2"]["summary"][0].startswith("Checked against")
    code, message = got["usage"]
    assert code == -32602 and "bad run id 'run-2'" in message
    assert got["usage_human"][0] == -32602 and "person's verb" in got["usage_human"][1]
    assert kt.ledger_bytes().count(b'"to":"wontfix"') == 1  # the person's decision, written once, by the CLI


def test_a_usage_error_is_a_jsonrpc_error_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    k = _target(root)

    async def go() -> List[Tuple[int, str]]:
        async with stdio_client(_server(root)) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                res = _dump(await s.call_tool("priors_relevant", {"ns": NS, "snapshot": ["src"]}))
                assert not res.get("isError") and res["structuredContent"]["run"] == "run-001"
                return [
                    await _error_of(s.call_tool("priors_disposition", {
                        "run": "run-001", "verdicts": [{"id": "P-0001", "verdict": "wontfix"}]})),
                    await _error_of(s.call_tool("priors_propose", {
                        "run": "run-001", "ns": NS, "candidates": [{"type": "conclusion", "claim": "x",
                                                                    "sevrity": "major", "scope_ref": "src/"}]})),
                    await _error_of(s.call_tool("priors_relevant", {"ns": "Code Review"})),
                    await _error_of(s.call_tool("priors_commit", {})),
                ]

    errors = asyncio.run(go())
    assert [c for c, _ in errors] == [-32602] * 4, errors
    assert "human verdict" in errors[0][1] and "priors decide" in errors[0][1]
    assert "did you mean 'severity'" in errors[1][1]
    assert "bad namespace" in errors[2][1]
    assert "`run` is required" in errors[3][1]
    assert k.ledger_bytes() == b""
    assert sorted(p.name for p in (root / ".priors" / "runs").iterdir()) == ["run-001"]


def test_the_lessons_tool_s_list_reaches_a_real_client(tmp_path: Path) -> None:
    """`priors_lessons` `list` answers a JSON list: MCP's `structuredContent` must be an object, so the
    SDK's client refused the whole result (a pydantic ValidationError) — the tool could not list lessons
    (hostile pass 27q). A list answer travels as the text content only."""
    root = tmp_path / "repo"
    root.mkdir()
    k = _target(root)
    k.ok("add", "Run the narrowest test first.", "--ns", NS)

    async def go() -> Dict[str, Any]:
        async with stdio_client(_server(root)) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return _dump(await s.call_tool("priors_lessons", {"action": "list"}))

    res = asyncio.run(go())
    assert not res.get("isError") and "structuredContent" not in res
    assert [r["id"] for r in json.loads(res["content"][0]["text"])] == ["P-0001"]
