"""A minimal MCP server over stdio with one tool, ``read_file`` (a path in, its text out): what a user might
have configured, and what a sealed digest run must never see. ``python mcp_file_server.py``.

Speaks just enough JSON-RPC 2.0 (one message a line) for Claude Code: ``initialize``, ``tools/list``,
``tools/call``, ``ping``; notifications get no answer.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOL = {"name": "read_file", "description": "Read a text file from the local disk.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion") or "2024-11-05",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "files", "version": "1.0"}}
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        try:
            with open(str((params.get("arguments") or {}).get("path")), encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            text = f"cannot read: {exc}"
        return {"content": [{"type": "text", "text": text}]}
    return {}


def main() -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue  # a notification
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": answer(str(msg.get("method")), msg.get("params") or {})}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
