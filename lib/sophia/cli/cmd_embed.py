"""s3 embed status|start|stop: the local embedding service of the semantic recall tier."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import emit_json, fail

embed_app = typer.Typer(
    name="embed",
    help="The local embedding service (semantic recall): status, start, stop.",
    no_args_is_help=True,
)
app.add_typer(embed_app, name="embed")


def _db_counts(home: Path) -> dict[str, Any] | None:
    """Items / embedded / pending straight from index.db (read-only), when the service is not warm."""
    import sqlite3

    from ..embed import vectors
    from ..embed_client import settings
    from ..index.db import read_only

    try:
        conn = read_only(home, timeout=2)
        if conn is None:
            return None
        try:
            return vectors.counts(conn, settings.load(home).model)
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def _db_report(home: Path, live: dict[str, Any] | None) -> dict[str, Any]:
    """Which index.db the service serves (device, inode, how often it reopened a replaced one) and
    whether that is the file now on disk: a mismatch means semantic recall reads a stale index."""
    import os

    from .. import paths

    path = paths.index_db_path(home)
    try:
        st = os.stat(path)
        on_disk: int | None = st.st_ino
    except OSError:
        on_disk = None
    served = (live or {}).get("db") or {}
    return {"path": str(path), "inode": on_disk, "served_inode": served.get("inode"),
            "generation": served.get("generation"),
            "current": None if not live else served.get("inode") == on_disk}


def _status(home: Path) -> dict[str, Any]:
    from ..embed_client import client, protocol, settings

    cfg = settings.load(home)
    live = client.status(home, timeout=3.0) if cfg.enabled else None
    data: dict[str, Any] = {
        "home": str(home),
        "provider": cfg.provider,
        "enabled": cfg.enabled,
        "warm": live is not None,
        "pid": live.get("pid") if live else client.service_pid(home),
        "model": cfg.model,
        "config_problems": cfg.problems,
        "backend": (live or {}).get("backend", {}).get("backend") if live else cfg.resolved_backend(),
        "idle_timeout_seconds": cfg.idle_seconds,
        "unavailable": client.unavailable_reason(home),
        "socket": str(protocol.sock_path(home)),
        "log": str(protocol.log_path(home)),
    }
    counts = {k: live[k] for k in ("items", "embedded", "pending")} if live else _db_counts(home)
    data.update(counts or {"items": None, "embedded": None, "pending": None})
    data["db"] = _db_report(home, live)
    if live:
        data["service"] = {k: v for k, v in live.items() if k not in ("ok", "v")}
    return data


def _render(d: dict[str, Any]) -> None:
    if not d["enabled"]:
        typer.echo(f"Semantic recall is off (embedding_provider = {d['provider']!r} in config.json).")
        return
    state = "warm" if d["warm"] else ("starting (loading the model)" if d["pid"] else "not running")
    typer.echo(f"Embedding service: {state}" + (f", pid {d['pid']}" if d["pid"] else ""))
    typer.echo(f"Model: {d['model']}; backend: {d['backend']}; idle timeout: {d['idle_timeout_seconds']:.0f}s")
    if d["items"] is None:
        typer.echo("Index: no index.db yet (nothing ingested).")
    else:
        typer.echo(f"Items: {d['items']}, embedded: {d['embedded']}, pending: {d['pending']}")
    db = d["db"]
    if d["warm"]:
        typer.echo(f"Serves: {db['path']} (inode {db['served_inode']}, reopened {db['generation']}x)")
        if db["current"] is False:
            typer.echo(f"Warning: the file on disk is inode {db['inode']}; the service reads a replaced "
                       "index (run `s3 embed stop` then `s3 embed start`).")
    if d["unavailable"]:
        typer.echo(f"Note: {d['unavailable']}")
    typer.echo(f"Log: {d['log']}")


@embed_app.command("status")
def status_cmd(json_out: JsonOpt = False) -> None:
    """Whether the service is warm, its pid and backend, the index.db it serves, and how many items are
    embedded / pending."""
    from .. import paths

    d = _status(paths.sophia_home())
    if json_out:
        emit_json(d)
    else:
        _render(d)


@embed_app.command("start")
def start_cmd(
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until the model is loaded.")] = True,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.")] = 120.0,
    json_out: JsonOpt = False,
) -> None:
    """Start the service in the background (it embeds pending items, then exits when idle)."""
    from .. import paths
    from ..embed_client import client, settings

    home = paths.sophia_home()
    if not settings.load(home).enabled:
        fail("semantic recall is off (embedding_provider is \"none\")",
             hint='set "embedding_provider": "local" in config.json to turn it on')
    spawned = client.ensure_started(home, force=True) if not client.is_warm(home) else None
    ok = client.wait_warm(home, timeout, child=spawned) if wait else True
    d = _status(home)
    d["spawned"] = spawned
    if json_out:
        emit_json(d)
    else:
        _render(d)
    if not ok:
        fail(_start_failure(home, timeout, spawned), hint=f"see {d['log']}")


def _start_failure(home: Path, timeout: float, child: int | None) -> str:
    """One line on why ``start`` failed: the service's note, its last log line if it died, or the wait."""
    from ..embed_client import client, protocol

    reason = client.unavailable_reason(home)
    if reason:
        return reason
    if child and client.service_pid(home) is None:
        try:
            last = protocol.log_path(home).read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1]
        except (OSError, IndexError):
            last = "no log"
        return f"the embedding service exited while starting ({last[:300]})"
    return f"the service did not become warm within {timeout:.0f}s"


@embed_app.command("stop")
def stop_cmd(json_out: JsonOpt = False) -> None:
    """Stop the service (SIGTERM); it also stops by itself after the idle timeout."""
    from .. import paths
    from ..embed_client import client

    home = paths.sophia_home()
    pid = client.service_pid(home)
    ok = client.stop(home)
    if json_out:
        emit_json({"home": str(home), "stopped": ok, "pid": pid})
    elif pid is None:
        typer.echo("The embedding service is not running.")
    else:
        typer.echo(f"Stopped the embedding service (pid {pid})." if ok else f"pid {pid} did not stop in time.")
    if not ok:
        raise typer.Exit(1)
