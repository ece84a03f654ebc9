"""A scripted Anthropic-Messages-API server on 127.0.0.1 for end-to-end tests.

The real ``claude`` client talks to whatever ``ANTHROPIC_BASE_URL`` names. Each POST to
``/v1/messages`` from the main agent loop (a request that offers tools) gets the next
scripted reply; side requests (no tools: titles, summaries) get a short text reply and do
not consume the script. A run given no tool at all (``--tools ""``: a sealed digest stage) sends its main
requests with an empty ``tools`` list: ``ScriptedModel(main=has_tools_field)`` counts those too. Every
request body is recorded so tests can assert what context the hooks injected.

A script step is one of:
- ``{"text": "..."}``: an assistant text reply ending the turn;
- ``{"tool_use": [{"name": "Bash", "input": {"command": "ls"}}, ...]}``: tool calls
  (stop_reason ``tool_use``), optionally with ``"text"`` before them;
- a callable ``(request_body) -> step`` for replies that depend on the request.
When the script runs out, the server answers ``{"text": "Done."}``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def offers_tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


def has_tools_field(body: dict[str, Any]) -> bool:
    """A main-loop request, tools or none (a run with ``--tools ""`` still sends ``"tools": []``)."""
    return isinstance(body.get("tools"), list)


class LocalServer:
    """A scripted HTTP server on 127.0.0.1 (a free port), served from a daemon thread while started;
    ``handler()`` says how it answers."""

    _server: ThreadingHTTPServer | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def start(self) -> Self:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def origin(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ScriptedModel(LocalServer):
    def __init__(self, script: list[Step] | None = None, model: str = "claude-sonnet-4-5",
                 main: Callable[[dict[str, Any]], bool] = offers_tools) -> None:
        self.script: list[Step] = list(script or [])
        self.model = model
        self.is_main = main
        self.requests: list[dict[str, Any]] = []  # every /v1/messages body, in order
        self.main_requests: list[dict[str, Any]] = []  # those that consumed (or asked for) a script step
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        return self.origin

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    # ------------------------------------------------------------ replies
    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            if not self.is_main(body):
                return {"text": "OK."}
            self.main_requests.append(body)
            step: Step = self.script.pop(0) if self.script else {"text": "Done."}
        return step(body) if callable(step) else step

    def record_other(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"


def request_text(body: dict[str, Any]) -> str:
    """All text a request carries (system prompt and every message), for assertions."""
    parts: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, str):
            parts.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                if k in ("text", "content", "input") or isinstance(v, (list, dict)):
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(body.get("system"))
    walk(body.get("messages"))
    return "\n".join(parts)


def _blocks(model: ScriptedModel, step: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    blocks: list[dict[str, Any]] = []
    if step.get("text"):
        blocks.append({"type": "text", "text": step["text"]})
    for call in step.get("tool_use") or []:
        blocks.append({"type": "tool_use", "id": model.new_id("toolu"), "name": call["name"],
                       "input": call.get("input", {})})
    if not blocks:
        blocks.append({"type": "text", "text": "Done."})
    stop = "tool_use" if step.get("tool_use") else "end_turn"
    return blocks, stop


def _make_handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _read_body(self) -> dict[str, Any]:
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b"{}"
            try:
                data = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                data = {}
            return data if isinstance(data, dict) else {}

        def _send_json(self, obj: Any, status: int = 200) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._send_json({"data": [], "has_more": False})

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            path = self.path.split("?")[0]
            body = self._read_body()
            if path.endswith("/count_tokens"):
                model.record_other(body)
                self._send_json({"input_tokens": 100})
                return
            if not path.endswith("/v1/messages"):
                model.record_other(body)
                self._send_json({"ok": True})
                return
            step = model.next_step(body)
            blocks, stop = _blocks(model, step)
            msg_id = model.new_id("msg")
            usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 0}
            if not body.get("stream"):
                self._send_json({"id": msg_id, "type": "message", "role": "assistant", "model": model.model,
                                 "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage})
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True

            def event(name: str, data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

            event("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": model.model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}})
            for i, b in enumerate(blocks):
                if b["type"] == "text":
                    event("content_block_start", {"type": "content_block_start", "index": i,
                                                  "content_block": {"type": "text", "text": ""}})
                    event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                  "delta": {"type": "text_delta", "text": b["text"]}})
                else:
                    event("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                        "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
                    event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                        "type": "input_json_delta", "partial_json": json.dumps(b["input"])}})
                event("content_block_stop", {"type": "content_block_stop", "index": i})
            event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                    "usage": {"output_tokens": 20}})
            event("message_stop", {"type": "message_stop"})
            self.wfile.flush()

    return Handler
