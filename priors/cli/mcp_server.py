"""`priors mcp`: the agent's verbs as Model Context Protocol tools, over standard input and output.

JSON-RPC 2.0, one message a line, one request at a time (no threads). A tool call runs its verb's
own function — the same parser, core, lock and writes as the command line — so a run through tools
leaves the same ledger bytes as the same run typed at a shell. What a tool is, and how its
arguments become the verb's, is data in `priors/core/mcp_tools.py`; this module reads, dispatches
and writes. Standard output carries JSON-RPC messages only: the real stdout is kept for them, and
file descriptor 1 is pointed at stderr, so a stray print or a child process cannot corrupt the stream.
"""

from __future__ import annotations

import sys

from priors.cli.args import Spec, parse
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
    TOOLS,
    negotiate,
    request_id_ok,
    schema_problem,
    tool_list,
    unknown_tool,
    verb_call,
)
from priors.core.vocabulary import MAX_MCP_MESSAGE_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, BinaryIO, Dict, List, Optional, Tuple

MCP = Spec("mcp", "priors [-C DIR] mcp", help="""usage: priors [-C DIR] mcp

Serve the agent's verbs as Model Context Protocol tools on standard input and
output (JSON-RPC 2.0, one message per line) until standard input closes.
Register it with your agent client, e.g. `claude mcp add priors -- priors mcp`;
see docs/mcp.md. Tools: priors_relevant, priors_disposition, priors_propose,
priors_withdraw, priors_commit, priors_abort, priors_scopes, priors_status,
priors_show. A person's verbs (decide, redact, add, score, import, config) are
never tools. Each call runs exactly the command-line verb: same checks, same
lock, same ledger bytes. A refusal is a tool result with isError: true; a usage
error is a JSON-RPC error (-32602), and so is a failure of the machine (-32603,
saying so). Messages over 4 MiB are refused unread.
  -C DIR   the target root (default: where the client starts the server,
           found as every verb finds it)""")

# verb -> (module, its Spec's name — or a function returning it, the answering function)
OPS = {
    "relevant": ("priors.cli.run_verbs", "RELEVANT", "relevant"),
    "disposition": ("priors.cli.run_verbs", "DISPOSITION", "disposition"),
    "propose": ("priors.cli.run_verbs", "PROPOSE", "propose"),
    "commit": ("priors.cli.run_verbs", "COMMIT", "commit"),
    "abort": ("priors.cli.run_verbs", "ABORT", "abort"),
    "withdraw": ("priors.cli.ground_verbs", "WITHDRAW", "withdraw"),
    "scopes": ("priors.cli.ground_verbs", "SCOPES", "scopes"),
    "status": ("priors.cli.desk_verbs", "STATUS", "status"),
    "show": ("priors.cli.inspect_verbs", "show_spec", "show"),
}


class RpcError(Exception):
    """A JSON-RPC error response: the request itself was wrong (or the verb's arguments were)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def cmd_mcp(argv: List[str], ctx) -> int:
    parse(argv, MCP)
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
    import os

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
            import json

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
            from priors import __version__

            self.version = negotiate(params["protocolVersion"])
            return {"protocolVersion": self.version, "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": SERVER_NAME, "version": __version__}, "instructions": INSTRUCTIONS}
        if method in ("tools/list", "tools/call") and self.version is None:
            raise RpcError(INVALID_REQUEST, f"{method} before initialize — send initialize first")
        if method == "tools/list":
            return {"tools": tool_list()}
        if method == "tools/call":
            return self.call(params)
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method!r} (this server answers initialize, ping, "
                                         "tools/list and tools/call)")

    # ---------------------------------------------------------------- tools

    def call(self, params: Dict[str, Any]) -> Dict[str, Any]:
        name = params.get("name")
        args = params.get("arguments")
        args = {} if args is None else args
        if not isinstance(name, str) or name not in TOOLS:
            raise RpcError(INVALID_PARAMS, unknown_tool(name) if isinstance(name, str)
                           else "tools/call needs params.name (a string)")
        why = schema_problem(TOOLS[name][4], args)
        if why is not None:
            raise RpcError(INVALID_PARAMS, f"{name}: {why}")
        verb, argv, inband = verb_call(name, args)
        code, obj, text = self.run(verb, argv, inband)
        result: Dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": code != 0}
        if self.version in STRUCTURED_VERSIONS:
            result["structuredContent"] = obj
        return result

    def run(self, verb: str, argv: List[str], inband: Dict[str, Any]) -> Tuple[int, Dict[str, Any], str]:
        """(exit code, canonical JSON object, its text) — exactly what the command line would answer;
        a usage error becomes a JSON-RPC error (-32602), as it would be exit 2 with a message, and a
        failure of the machine one that says so (-32603), as it would be exit 3."""
        import importlib

        from priors.cli.args import HelpRequested
        from priors.cli.main import Context, _flush_warnings, describe, failure, machine_failure
        from priors.store.files import CHANGED, WARNINGS, ledger_landed

        del CHANGED[:], WARNINGS[:]  # one call's record, as for one process
        module, spec_name, fn_name = OPS[verb]
        mod = importlib.import_module(module)
        spec = getattr(mod, spec_name)
        spec = spec() if callable(spec) else spec
        ctx = Context(self.root_opt, out=_Sink(), err=self.err)
        kwargs: Dict[str, Any] = {}
        if "scopes" in inband:
            kwargs["scopes_given"] = inband["scopes"]
        if "candidates" in inband:
            kwargs["given"] = inband["candidates"]
        try:
            ctx.cwd = str(ctx.root)  # a tool's paths are relative to the target root: a client has no working directory
            a = parse(argv, spec, min_pos=0 if verb == "propose" else None)
            answer = getattr(mod, fn_name)(a, ctx, **kwargs)
            return answer.code, answer.obj, answer.json()
        except Refusal as refusal:
            body = refusal.payload()
            return 1, body, dumps(body)
        except UsageError as exc:
            message = str(exc).replace("priors: ", "", 1)
            if not ledger_landed():
                raise RpcError(INVALID_PARAMS, str(exc)) from None
            return self._landed(failure(message)[1])
        except HelpRequested as h:
            raise RpcError(INVALID_PARAMS, h.text) from None
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # never a traceback on the stream: an honest message, as the CLI gives
            code, text = machine_failure(exc) if isinstance(exc, MachineError) else failure(describe(exc))
            if code == 0:
                return self._landed(text)
            raise RpcError(INTERNAL_ERROR, text + MACHINE_NOT_CALL) from None
        finally:
            _flush_warnings()

    def _landed(self, text: str) -> Tuple[int, Dict[str, Any], str]:
        """A step after the ledger landed failed: the change stands, and the answer says so."""
        self.err.write(text + "\n")
        obj = {"warning": text}
        return 0, obj, dumps(obj)


# What a -32603 error adds to the command line's message (exit 3): whose failure it is.
MACHINE_NOT_CALL = (" — the machine failed, not your call: the call was well formed, and the same call "
                    "may succeed once the cause is gone")


class _Sink:
    """Where a verb's own printing would go: nowhere (the answer travels as the tool result)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _error(mid: Any, code: int, message: str) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}
