"""s3 ui / s3 ui stop: the local web viewer (sophia.ui)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import FAILED, emit_json, existing_home, fail, usage

ui_app = typer.Typer(
    name="ui",
    help="See the mind: a local web viewer of memory, rules, growth, the digest queue and the guardian.",
    invoke_without_command=True,
)
app.add_typer(ui_app, name="ui")


@ui_app.callback()
def ui(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", help="Listen on this port (default: a free one).")] = 0,
    no_open: Annotated[bool, typer.Option("--no-open", help="Do not open the browser.")] = False,
    detach: Annotated[bool, typer.Option("--detach", help="Run in the background; `s3 ui stop` stops it.")] = False,
    host: Annotated[str | None, typer.Option(
        "--host", metavar="ADDR",
        help="Listen on ADDR instead of 127.0.0.1 (a warning is printed: others on that network can reach "
             "it; the token still guards it).")] = None,
    record: Annotated[bool, typer.Option("--record", hidden=True, help="Write run/ui.json (--detach's child).")]
    = False,
    json_out: JsonOpt = False,
) -> None:
    """Start the viewer on 127.0.0.1, print its URL (with a random access token) and open the browser.

    Ctrl-C stops it. Every request needs the token (a cookie after the first visit); the Host header
    must be loopback; changes (forget, edit a rule, retry or drop a digest job) ask for a confirmation
    and go through the same functions as the CLI.
    """
    if ctx.invoked_subcommand is not None:
        return
    if not 0 <= port <= 65535:
        usage(f"--port must be between 0 and 65535, not {port}")
    home = existing_home()
    addr = host or "127.0.0.1"
    if host is not None and host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"s3 ui: warning: listening on {host}, not only on this machine: anyone who can reach it "
                   "and learns the token can read and change your memory", err=True)
    if detach:
        _detached(home, addr, port, json_out)
        return
    _foreground(home, addr, port, no_open, record, json_out)


def _detached(home: Any, host: str, port: int, json_out: bool) -> None:
    from ..ui import server

    running = server.read_record(home)
    if running is not None and server.alive_viewer(int(running.get("pid") or 0)):
        if json_out:
            emit_json(running)
        else:
            typer.echo(f"s3 ui: already running: {running['url']}  (pid {running['pid']}; `s3 ui stop` stops it)")
        return
    try:
        rec = server.detach(home, host, port)
    except OSError as exc:
        fail(f"ui: {exc}")
    if json_out:
        emit_json(rec)
        return
    typer.echo(f"s3 ui: {rec['url']}  (pid {rec['pid']}; `s3 ui stop` stops it)")


def _foreground(home: Any, host: str, port: int, no_open: bool, record: bool, json_out: bool) -> None:
    from ..ui import server

    try:
        running = server.Running(home, "127.0.0.1" if host == "localhost" else host, port)
    except OSError as exc:
        fail(f"ui: cannot listen on {host}:{port}: {exc.strerror or exc}", FAILED,
             hint="give another --port, or leave it out for a free one")
    if json_out:
        emit_json(running.info())
    else:
        typer.echo(f"s3 ui: {running.url}  (Ctrl-C stops it)")
    import sys

    sys.stdout.flush()
    if not no_open:
        import webbrowser

        webbrowser.open(running.url)
    try:
        running.serve(record=record)
    except KeyboardInterrupt:
        pass
    if not json_out:
        typer.echo("s3 ui: stopped", err=True)


@ui_app.command("stop")
def stop(json_out: JsonOpt = False) -> None:
    """Stop the viewer `s3 ui --detach` started."""
    from ..ui import server

    out = server.stop(existing_home())
    if json_out:
        emit_json(out)
        return
    typer.echo(f"s3 ui: stopped pid {out['stopped']}" if out["stopped"] else f"s3 ui: {out['note']}")
