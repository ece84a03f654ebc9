"""A scripted OpenAI-Responses-API server on 127.0.0.1 for end-to-end tests with the real ``codex``.

Codex (npm @openai/codex, pinned by test.sh) talks to a custom model provider's ``base_url``
(``~/.codex/config.toml``: ``wire_api = "responses"``, an ``env_key``; no account). Each agent step is
``POST {base_url}/responses`` with ``stream: true``; a main-loop request offers ``tools`` and gets the
next scripted step as server-sent events (``response.created``, ``response.output_item.added`` and
``.done`` per item, ``response.completed`` with ``usage``); a side request (no tools: a compaction
summary) gets a short text and consumes nothing. Every request body is recorded, so a test can assert
what the hooks injected into the first one.

A step is one of:
- ``{"text": "..."}``: the assistant's message, ending the turn;
- ``{"shell": "ls -la"}``: an ``exec_command`` call;
- ``{"patch": "*** Begin Patch ..."}``: an ``apply_patch`` call;
- ``{"mcp": ["server", "tool", {arguments}]}``: an MCP tool call;
- a callable ``(request_body) -> step``.
When the script runs out, the server answers ``{"text": "Done."}``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from .model_server import LocalServer

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
MODEL = "gpt-5.5"  # a slug of codex 0.171's bundled catalog (an unknown one gets no apply_patch tool)


class ScriptedResponses(LocalServer):
    def __init__(self, script: list[Step] | None = None) -> None:
        self.script: list[Step] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.main_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            if not body.get("tools"):
                return {"text": "OK."}
            self.main_requests.append(body)
            step: Step = self.script.pop(0) if self.script else {"text": "Done."}
        return step(body) if callable(step) else step

    def items(self, step: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if step.get("shell") is not None:
            out.append({"type": "function_call", "name": "exec_command", "call_id": self.new_id("call"),
                        "arguments": json.dumps({"cmd": step["shell"]})})
        if step.get("patch") is not None:
            out.append({"type": "custom_tool_call", "name": "apply_patch", "call_id": self.new_id("call"),
                        "input": step["patch"]})
        if step.get("mcp") is not None:
            server, tool, args = step["mcp"]
            out.append({"type": "function_call", "namespace": f"mcp__{server}", "name": tool,
                        "call_id": self.new_id("call"), "arguments": json.dumps(args)})
        if step.get("text") or not out:
            out.insert(0, {"type": "message", "role": "assistant", "id": self.new_id("msg"),
                           "content": [{"type": "output_text", "text": step.get("text") or "Done.",
                                        "annotations": []}]})
        return out


def request_text(body: dict[str, Any]) -> str:
    """Every text of a request's ``input`` (instructions, developer and user messages, tool outputs)."""
    parts: list[str] = [str(body.get("instructions") or "")]

    def walk(x: Any) -> None:
        if isinstance(x, str):
            parts.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                if k in ("text", "output", "input", "arguments") or isinstance(v, (list, dict)):
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(body.get("input"))
    return "\n".join(parts)


def _make_handler(model: ScriptedResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _json(self, obj: Any, status: int = 200) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - /models and the like
            self._json({"object": "list", "data": [], "models": []})

        def do_POST(self) -> None:  # noqa: N802
            n = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(n) or b"{}")
            except ValueError:
                body = {}
            if not self.path.split("?")[0].endswith("/responses") or not isinstance(body, dict):
                self._json({"ok": True})
                return
            items = model.items(model.next_step(body))
            rid = model.new_id("resp")
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True

            def event(data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())

            base = {"id": rid, "object": "response", "model": MODEL, "status": "in_progress", "output": []}
            event({"type": "response.created", "response": base})
            for i, item in enumerate(items):
                event({"type": "response.output_item.added", "output_index": i, "item": item})
                event({"type": "response.output_item.done", "output_index": i, "item": item})
            usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
                     "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}
            event({"type": "response.completed", "response": {**base, "status": "completed", "output": items,
                                                              "usage": usage}})
            self.wfile.flush()

    return Handler
