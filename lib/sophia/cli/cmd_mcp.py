"""s3 mcp: the memory as an MCP server over stdio (``mcp_server``; the tools are ``mcp_tools``)."""

from __future__ import annotations

import typer

from .app import app


@app.command()
def mcp() -> None:
    """Serve the memory to an agent over stdio (Model Context Protocol): search, get, timeline, remember, forget.

    Claude Code starts it through the plugin's .mcp.json (or the settings install's entry in
    ~/.claude.json), Codex through ~/.codex/config.toml; to try it by hand, point an MCP client at
    `s3 mcp`. Nothing but protocol messages goes to stdout; errors are MCP error results.
    """
    from .mcp_server import main

    rc = main()
    if rc:
        raise typer.Exit(rc)
