"""A stand-in model server for driving the real `pi` in tests: OpenAI-compatible chat completions
on 127.0.0.1, streamed as pi asks (SSE chunks, a usage chunk, `[DONE]`), standard library only.

Every request body is kept (`requests`), so a test asserts on what reached the model: the system
prompt an extension extended, the messages, the `tools` array. Answers come from a script (a
list of texts or tool calls, taken in order); with the script empty, the answer is "ok".
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Union

Reply = Union[str, Dict[str, Any]]  # a text, or {"tool": NAME, "arguments": {...}}


class StandIn:
    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.script: List[Reply] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with owner.lock:
                    owner.requests.append(body)
                    reply = owner.script.pop(0) if owner.script else "ok"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for chunk in chunks(reply):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode("utf-8") + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def models_json(self) -> Dict[str, Any]:
        """The `~/.pi/agent/models.json` that points pi at this server (model `mock/mock-model`)."""
        return {"providers": {"mock": {
            "baseUrl": f"http://127.0.0.1:{self.port}/v1", "api": "openai-completions", "apiKey": "k",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "mock-model", "name": "Mock"}]}}}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def chunks(reply: Reply) -> List[Dict[str, Any]]:
    base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0, "model": "mock-model"}
    if isinstance(reply, str):
        delta: Dict[str, Any] = {"role": "assistant", "content": reply}
        finish = "stop"
    else:
        delta = {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {
            "name": reply["tool"], "arguments": json.dumps(reply["arguments"])}}]}
        finish = "tool_calls"
    return [dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
            dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]),
            dict(base, choices=[], usage={"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12})]
