"""`priors mcp`: the agent's verbs as Model Context Protocol tools, over standard input and output.

JSON-RPC 2.0, one message a line, one request at a time (no threads). A tool call runs its verb's
`ops` function — the same function, checks, lock and writes as the command line's — so a run
through tools leaves the same ledger bytes as the same run typed at a shell. Which verbs are tools,
with their schemas, is declared with the verbs (cli/verbs.py); the protocol's data is
core/mcp_tools.py; this module reads, dispatches and writes. Standard output carries JSON-RPC
messages only: the real stdout is kept for them, and file descriptor 1 is pointed at stderr, so a
stray print or a child process cannot corrupt the stream.
"""

from __future__ import annotations

import json
import os
import sys

from priors import __version__
from priors.cli.args import check_ns, check_text
from priors.cli.main import describe, failure, flush_warnings, machine_failure
from priors.cli.verbs import tools
from priors.core.canonical import JSONError, dumps, loads
from priors.core.errors import MachineError, Refusal, UsageError
from priors.core.mcp_tools import (
    BATCH_VERSIONS,
    INSTRUCTIONS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_NAME,
    STRUCTURED_VERSIONS,
    in_tool_terms,
    negotiate,
    request_id_ok,
    schema_problem,
    tool_entry,
    unknown_tool,
)
from priors.core.vocabulary import MAX_MCP_MESSAGE_BYTES
from priors.ops import desk, ground, opening, propose, retract, run, session, timeline
from priors.ops.budget import budget_for
from priors.ops.suggest import suggest
from priors.snapshot.scan import take_snapshot
from priors.store.files import CHANGED, LANDED, WARNINGS, ledger_landed
from priors.store.paths import Paths, find_root

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, BinaryIO, Callable, Dict, Optional, Tuple

    from priors.cli.args import Parsed
    from priors.cli.main import Context
    from priors.core.answer import Answer


class RpcError(Exception):
    """A JSON-RPC error response: the request itself was wrong (or the verb's arguments were)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def cmd_mcp(a: Parsed, ctx: Context) -> int:
    if ctx.root_opt is not None:
        ctx.root  # noqa: B018 — a -C that names no directory is a usage error now, not at every call
    reader, writer, restore = _claim_streams()
    try:
        Server(ctx.root_opt, writer, ctx.err).serve(reader)
    finally:
        restore()
    return 0


def _claim_streams():
    """(reader, writer, restore) on standard input and output.

    For the process's own streams (fds 0 and 1): private duplicates for the protocol, while fd 1
    points at stderr and fd 0 at the null device, so nothing but this server can read a request or
    write a byte of the stream; `restore` puts them back. A caller that replaced sys.stdin and
    sys.stdout (an embedding, a test) gets its own objects, untouched."""
    stdin, stdout = sys.stdin, sys.stdout
    try:
        real = stdin.fileno() == 0 and stdout.fileno() == 1
    except (AttributeError, OSError, ValueError):
        real = False
    if not real:
        return _BytesIn(stdin), _BytesOut(stdout), lambda: None
    stdout.flush()
    reader, writer = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    saved = (os.dup(0), os.dup(1))
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)

    def restore() -> None:
        for stream in (reader, writer):
            try:
                stream.close()
            except OSError:
                pass
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        os.close(saved[0])
        os.close(saved[1])

    return reader, writer, restore


class _BytesIn:
    """Lines as bytes from a stream that may be text."""

    def __init__(self, stream) -> None:
        self.stream = getattr(stream, "buffer", None) or stream

    def readline(self, limit: int) -> bytes:
        got = self.stream.readline(limit) if self.stream is not None else b""
        return got.encode("utf-8", "surrogateescape") if isinstance(got, str) else got


class _BytesOut:
    """Bytes written to a stream that may be text."""

    def __init__(self, stream) -> None:
        self.stream, self.raw = stream, getattr(stream, "buffer", None)

    def write(self, data: bytes) -> None:
        if self.raw is not None:
            self.raw.write(data)
        else:
            self.stream.write(data.decode("utf-8"))

    def flush(self) -> None:
        self.stream.flush()
        if self.raw is not None:
            self.raw.flush()


class Server:
    """One client's session: the negotiated revision, and one answer per request, in order."""

    def __init__(self, root_opt: Optional[str], out: BinaryIO, err) -> None:
        self.root_opt, self.out, self.err = root_opt, out, err
        self.version: Optional[str] = None  # set by `initialize`

    # ---------------------------------------------------------------- the stream

    def serve(self, reader: BinaryIO) -> None:
        """Answer messages until standard input closes (or the client stops reading)."""
        while True:
            line = reader.readline(MAX_MCP_MESSAGE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_MCP_MESSAGE_BYTES and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest of it, unread
                    line = reader.readline(65536)
                reply: Any = _error(None, INVALID_REQUEST, f"message longer than {MAX_MCP_MESSAGE_BYTES} bytes — "
                                                            "refused unread; send smaller calls (fewer candidates each)")
            elif not line.strip():
                continue
            else:
                reply = self.handle_bytes(line)
            if reply is not None and not self.send(reply):
                return

    def handle_bytes(self, data: bytes) -> Any:
        try:
            msg = loads(data.decode("utf-8"))
        except UnicodeDecodeError:
            return _error(None, PARSE_ERROR, "parse error: the message is not UTF-8")
        except JSONError as exc:
            return _error(None, PARSE_ERROR, f"parse error: not valid JSON ({exc})")
        return self.handle(msg)

    def send(self, msg: Any) -> bool:
        """Write one message line; False when the client went away."""
        text = dumps(msg)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate echoed back from a request: escape it
            data = json.dumps(msg, ensure_ascii=True, separators=(",", ":"), sort_keys=True).encode("ascii")
        try:
            self.out.write(data + b"\n")
            self.out.flush()
        except (OSError, ValueError):
            return False
        return True

    # ---------------------------------------------------------------- messages

    def handle(self, msg: Any) -> Any:
        """The reply to one parsed message (a batch's replies as a list), or None when none is due."""
        if isinstance(msg, list):
            if self.version not in BATCH_VERSIONS:
                return _error(None, INVALID_REQUEST, "JSON-RPC batches are not part of MCP "
                              + (f"revision {self.version}" if self.version else "before initialize")
                              + f" (only {', '.join(BATCH_VERSIONS)} has them); send one message per line")
            if not msg:
                return _error(None, INVALID_REQUEST, "an empty batch")
            replies = [r for r in (self.one(m, batched=True) for m in msg) if r is not None]
            return replies or None
        return self.one(msg)

    def one(self, msg: Any, batched: bool = False) -> Optional[Dict[str, Any]]:
        if not isinstance(msg, dict):
            return _error(None, INVALID_REQUEST, "a JSON-RPC message must be an object")
        has_id = "id" in msg
        mid = msg.get("id")
        reply_id = mid if request_id_ok(mid) else None
        method = msg.get("method")
        if msg.get("jsonrpc") != "2.0":
            return _error(reply_id, INVALID_REQUEST, 'a JSON-RPC message needs "jsonrpc": "2.0"')
        if method is None and has_id and ("result" in msg or "error" in msg):
            return None  # a response: this server sends no requests, so none is awaited
        if not isinstance(method, str):
            return _error(reply_id, INVALID_REQUEST, "`method` must be a string")
        if has_id and reply_id is None:
            return _error(None, INVALID_REQUEST, "`id` must be a string or a whole number")
        params = msg.get("params", {})
        if not has_id:
            if method == "notifications/initialized" and self.version is None:
                self.err.write("priors mcp: notifications/initialized before initialize — ignored\n")
            return None  # notifications (initialized, cancelled, …) need no answer
        if not isinstance(params, dict):
            return _error(mid, INVALID_PARAMS, "`params` must be an object")
        if batched and method == "initialize":
            return _error(mid, INVALID_REQUEST, "initialize may not be part of a batch")
        try:
            return {"jsonrpc": "2.0", "id": mid, "result": self.request(method, params)}
        except RpcError as exc:
            return _error(mid, exc.code, exc.message)

    def request(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        if method == "ping":
            return {}
        if method == "initialize":
            if self.version is not None:
                raise RpcError(INVALID_REQUEST, "already initialized")
            if not isinstance(params.get("protocolVersion"), str):
                raise RpcError(INVALID_PARAMS, "initialize needs params.protocolVersion (a string)")
            self.version = negotiate(params["protocolVersion"])
            return {"protocolVersion": self.version, "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": SERVER_NAME, "version": __version__}, "instructions": INSTRUCTIONS}
        if method in ("tools/list", "tools/call") and self.version is None:
            raise RpcError(INVALID_REQUEST, f"{method} before initialize — send initialize first")
        if method == "tools/list":
            return {"tools": [tool_entry(name, v.tool.title, v.tool.read_only, v.tool.description, v.tool.schema)
                              for name, v in tools().items() if v.tool is not None]}
        if method == "tools/call":
            return self.call(params)
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method!r} (this server answers initialize, ping, "
                                         "tools/list and tools/call)")

    # ---------------------------------------------------------------- tools

    def call(self, params: Dict[str, Any]) -> Dict[str, Any]:
        name = params.get("name")
        args = params.get("arguments")
        args = {} if args is None else args
        known = tools()
        verb = known.get(name) if isinstance(name, str) else None
        if verb is None or verb.tool is None:
            raise RpcError(INVALID_PARAMS, unknown_tool(name, list(known)) if isinstance(name, str)
                           else "tools/call needs params.name (a string)")
        why = schema_problem(verb.tool.schema, args)
        if why is not None:
            raise RpcError(INVALID_PARAMS, f"{name}: {why}")
        code, obj, text = self.run(verb.name, args)
        result: Dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": code != 0}
        if self.version in STRUCTURED_VERSIONS and isinstance(obj, dict):  # MCP's structured content is an object:
            result["structuredContent"] = obj  # a list answer (`priors_lessons` list) travels as the text alone
        return result

    def run(self, verb: str, args: Dict[str, Any]) -> Tuple[int, Dict[str, Any], str]:
        """(exit code, canonical JSON object, its text) — exactly what the command line would answer;
        a usage error becomes a JSON-RPC error (-32602), as it would be exit 2 with a message, and a
        failure of the machine one that says so (-32603), as it would be exit 3."""
        del CHANGED[:], WARNINGS[:], LANDED[:]  # one call's record, as for one process
        try:
            _check_texts(verb, args)
            root = find_root(self.root_opt)
            answer = CALLS[verb](Paths(root), args, self.err)
            return answer.code, answer.obj, answer.json()
        except Refusal as refusal:
            body = refusal.payload()
            if isinstance(body.get("hint"), str):  # a command line in the hint becomes the tool that does it
                body["hint"] = in_tool_terms(body["hint"], TOOL_VERBS)
            return 1, body, dumps(body)
        except UsageError as exc:
            message = str(exc).replace("priors: ", "", 1)
            if not ledger_landed():
                raise RpcError(INVALID_PARAMS, str(exc)) from None
            return self._landed(failure(message)[1])
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # never a traceback on the stream: an honest message, as the CLI gives
            code, text = machine_failure(exc) if isinstance(exc, MachineError) else failure(describe(exc))
            if code == 0:
                return self._landed(text)
            raise RpcError(INTERNAL_ERROR, text + MACHINE_NOT_CALL) from None
        finally:
            flush_warnings()

    def _landed(self, text: str) -> Tuple[int, Dict[str, Any], str]:
        """A step after the ledger landed failed: the change stands, and the answer says so."""
        self.err.write(text + "\n")
        obj = {"warning": text}
        return 0, obj, dumps(obj)


TOOL_VERBS = frozenset(v.name for v in tools().values())  # the verbs an agent calls as tools


# What a -32603 error adds to the command line's message (exit 3): whose failure it is.
MACHINE_NOT_CALL = (" — the machine failed, not your call: the call was well formed, and the same call "
                    "may succeed once the cause is gone")


# ------------------------------------------------------------------ each tool's call of its `ops` function


POSITIONAL = ("id",)  # a tool argument that is a positional on the command line (`priors show ID`)


def _check_texts(verb: str, args: Dict[str, Any]) -> None:
    """The command line's rules for its arguments, for a tool's: a namespace is a name; every other
    string that may reach the ledger or a screen is valid, control-free text of a sane size. Data the
    verb checks itself (candidates, an in-band snapshot, snapshot paths) is left to it."""
    for key, value in args.items():
        if key in ("candidates", "scopes", "snapshot"):
            continue
        if key == "ns" and isinstance(value, str):
            check_ns(verb, value)
        for item in value if isinstance(value, list) else [value]:
            for text in item.values() if isinstance(item, dict) else [item]:
                if isinstance(text, str):
                    positional = isinstance(value, list) or key in POSITIONAL
                    check_text(verb, "an argument" if positional else "--" + key.replace("_", "-"), text)


def _relevant(paths: Paths, args: Dict[str, Any], err: Any) -> Answer:
    if args.get("run") is not None:
        opening.check_chosen_run(args["run"])
    counts = {k: str(args[k]) for k in ("max_inject", "max_chars", "settled") if k in args}  # as argv carries them
    opening.check_settled(counts.get("settled"))
    snap = args.get("snapshot", False)
    if "scopes" in args and snap is not False:
        raise UsageError("priors relevant: give --scopes or --snapshot, not both")
    if "scopes" in args:
        scopes = args["scopes"]
        if not isinstance(scopes, dict) or not all(isinstance(v, str) for v in scopes.values()):
            raise UsageError("priors relevant: scopes must be a JSON object mapping scope refs to hash strings")
    elif snap is not False:  # a tool's paths are relative to the target root: a client has no working directory
        scopes = take_snapshot(paths.root, None if snap is True else (list(snap) or None), cwd=str(paths.root))
    else:
        scopes = {}
    budget = budget_for(paths, counts.get("max_inject"), counts.get("max_chars"), args.get("query"))
    return opening.open_run(paths, args["ns"], scopes, args.get("run"), budget, counts.get("settled"),
                        say=lambda line: err.write(line + "\n"))


def _lessons(paths: Paths, args: Dict[str, Any], err: Any) -> Answer:
    """`priors_lessons`: list, retrieve, propose, revise — never accept, retire or delete."""
    action = args["action"]
    ns = args.get("ns")
    if action == "list":
        return session.lessons_by_status(paths, str(args.get("status") or "active"), [ns] if ns else None)
    if action == "retrieve":
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise UsageError("priors lessons: retrieve needs a query")
        return session.inject(paths, [ns] if ns else None, None, None, query, None, False, False, remember=False)
    if action not in ("propose", "revise"):
        raise UsageError(f"priors lessons: unknown action {action!r} — list, retrieve, propose or revise (a person"
                         " accepts, retires and deletes lessons)")
    text = args.get("text")
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"priors lessons: {action} needs the lesson's text")
    if action == "revise" and not args.get("id"):
        raise UsageError("priors lessons: revise needs the id of the lesson it corrects")
    return suggest(paths, ns, [text], list(args.get("tags") or []), args.get("id") if action == "revise" else None,
                   args.get("note"), list(args.get("distinct_from") or []))


CALLS: Dict[str, Callable[[Paths, Dict[str, Any], Any], Answer]] = {
    "lessons": _lessons,
    "relevant": _relevant,
    "disposition": lambda paths, args, err: run.disposition(
        paths, args["run"], [(item["id"], item["verdict"]) for item in args["verdicts"]]),
    "propose": lambda paths, args, err: propose.propose(
        paths, args["run"], args["ns"], [(f"candidates[{i}]", c) for i, c in enumerate(args["candidates"])]),
    "withdraw": lambda paths, args, err: retract.withdraw(paths, args["run"], args["ids"]),
    "commit": lambda paths, args, err: run.commit(paths, args["run"]),
    "carry": lambda paths, args, err: run.carry(paths, args["run"]),
    "abort": lambda paths, args, err: retract.abort(paths, args["run"]),
    "scopes": lambda paths, args, err: ground.list_scopes(paths, args["run"], args.get("paths", []),
                                                          bool(args.get("lines"))),
    "status": lambda paths, args, err: desk.status(paths, bool(args.get("calls")), True),
    "show": lambda paths, args, err: timeline.show(paths, args["id"]),
}


class _Sink:
    """Where a verb's own printing would go: nowhere (the answer travels as the tool result)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _error(mid: Any, code: int, message: str) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}
