"""``s3 mcp``: the memory's five tools (``mcp_tools``) served over stdio with the official MCP SDK.

The protocol owns stdout: before anything else the real stdout is kept for it and file descriptor 1
(and ``sys.stdout``) point at stderr, so a stray print of any library cannot corrupt a message. A
tool's failure is an MCP error result (``isError``) with one line, never a traceback; the server goes
on answering. Started by the Claude Code plugin (``.mcp.json``), a settings install and Codex
(``~/.codex/config.toml``); it imports neither torch nor the embedding model (the service has them).

Start-up: the handshake is answered before the SDK loads (``mcp_handshake``), and the SDK is loaded lean
(``_load_sdk``): its two package ``__init__`` files only re-export, and they bring the SDK's client,
FastMCP, starlette and more (~0.4 s) that a lowlevel stdio server never uses.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

NAME = "sophia-memory"
INSTRUCTIONS = ("Sophia System 3's memory, shared by Claude Code and Codex: `search` before a task, `get` for "
                "details, `timeline` for what happened around a session, `remember` a lesson or fact worth "
                "keeping, `forget` a wrong one when the user asks.")


def _protocol_stdout() -> Any:
    """The real stdout as a binary file for the protocol; fd 1 and ``sys.stdout`` go to stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "wb", buffering=0)


LEAN_PACKAGES = ("mcp", "mcp.server")


def _load_sdk() -> None:
    """Import the SDK's lowlevel server and stdio transport with ``LEAN_PACKAGES`` made as bare packages
    (their submodules found as always, their re-exports not run); anything failing on that road imports
    the SDK the ordinary way."""
    import importlib
    import types as pytypes
    from importlib.util import find_spec

    if "mcp" in sys.modules:
        return
    try:
        for name in LEAN_PACKAGES:
            spec = find_spec(name)
            if spec is None or spec.submodule_search_locations is None:
                raise ImportError(name)
            pkg = pytypes.ModuleType(name)
            pkg.__spec__, pkg.__path__, pkg.__file__ = spec, list(spec.submodule_search_locations), spec.origin
            pkg.__package__ = name
            sys.modules[name] = pkg
        importlib.import_module("mcp.server.lowlevel")
        importlib.import_module("mcp.server.stdio")
    except Exception:  # noqa: BLE001 - a layout this road does not know: the ordinary import
        for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
            del sys.modules[name]
        importlib.import_module("mcp.server.lowlevel")


def build() -> Any:
    """The SDK server with the tools registered (no I/O)."""
    _load_sdk()
    import mcp.types as types
    from mcp.server.lowlevel import Server

    from .. import __version__
    from . import mcp_tools

    server: Any = Server(NAME, version=__version__, instructions=INSTRUCTIONS)
    tools = [types.Tool(name=t["name"], description=t["description"], inputSchema=t["inputSchema"],
                        annotations=types.ToolAnnotations(**t["annotations"])) for t in mcp_tools.TOOLS]

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tools

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            text = mcp_tools.call(name, arguments)
        except mcp_tools.ToolError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"s3 mcp: {exc}")],
                                        isError=True)
        except Exception as exc:  # a bug: one line, and the server keeps answering
            msg = f"s3 mcp: unexpected {type(exc).__name__}: {str(exc)[:300]}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=msg)], isError=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=False)

    return server


def _answer_early(out: Any) -> tuple[Any, Any]:
    """Read the first line and answer it when it is a handshake ``mcp_handshake`` can answer; the text
    stdin and stdout the SDK then gets (that line first; its answer to it held back)."""
    from io import TextIOWrapper

    from .. import __version__
    from .mcp_handshake import HoldFirstAnswer, Replay, early_answer

    first = sys.stdin.buffer.readline()
    stdin = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    stdout: Any = TextIOWrapper(out, encoding="utf-8", write_through=True)
    sent = early_answer(first, {"name": NAME, "version": __version__}, INSTRUCTIONS) if first else None
    if sent is not None:
        stdout.write(json.dumps(sent, separators=(",", ":")) + "\n")
        stdout = HoldFirstAnswer(stdout, sent)
    return (Replay(first, stdin) if first else stdin), stdout


async def _serve(stdin: Any, stdout: Any) -> None:
    server = build()  # first: it loads the SDK lean
    import anyio
    from mcp.server.stdio import stdio_server

    async with stdio_server(stdin=anyio.wrap_file(stdin), stdout=anyio.wrap_file(stdout)) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> int:
    """Serve until the client closes stdin; the exit status."""
    import logging

    out = _protocol_stdout()
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr, format="s3 mcp: %(message)s")
    try:
        stdin, stdout = _answer_early(out)
        import anyio

        anyio.run(_serve, stdin, stdout)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # noqa: BLE001 - a closed pipe or a group of them: one line on stderr
        if _only_closed_pipes(exc):
            return 0
        sys.stderr.write(f"s3 mcp: error: {type(exc).__name__}: {str(exc)[:300]}\n")
        return 1
    return 0


def _only_closed_pipes(exc: BaseException) -> bool:
    subs = getattr(exc, "exceptions", None)
    if subs:
        return all(_only_closed_pipes(e) for e in subs)
    return isinstance(exc, (BrokenPipeError, ConnectionResetError, EOFError))
