"""Run the viewer with uvicorn on a socket bound here (so the URL is known before serving), and keep
the ``--detach`` record: ``run/ui.json`` under the state home (0600: it holds the access token)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import write_json_atomic
from .security import allowed_hosts, new_token

WILDCARDS = ("0.0.0.0", "::")


def record_path(home: Path) -> Path:
    return paths.run_dir(home) / "ui.json"


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket on ``host:port`` (port 0: a free one). Raises OSError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by accepted connections (Linux)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections wait in the backlog from now on, before uvicorn serves them
    except OSError:
        sock.close()
        raise
    return sock


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def hosts_for(host: str, port: int) -> frozenset[str]:
    """The Host headers accepted: loopback names always; the explicit ``--host`` (for a wildcard,
    this machine's own names and addresses) too."""
    if host in WILDCARDS:
        names = {socket.gethostname()}
        try:
            names |= set(socket.gethostbyname_ex(socket.gethostname())[2])
        except OSError:
            pass
        return allowed_hosts(port).union(*(allowed_hosts(port, n) for n in names))
    return allowed_hosts(port, host)


class Running:
    """One bound viewer: its socket, token, URL and app."""

    def __init__(self, home: Path, host: str, port: int) -> None:
        from .app import build

        self.home, self.host = home, host
        self.sock = bind(host, port)
        self.port = int(self.sock.getsockname()[1])
        self.token = new_token()
        shown = "127.0.0.1" if host == "127.0.0.1" else url_host(host)
        self.url = f"http://{shown}:{self.port}/?token={self.token}"
        self.app = build(home, self.token, hosts_for(host, self.port))

    def info(self) -> dict[str, Any]:
        return {"url": self.url, "host": self.host, "port": self.port, "pid": os.getpid(), "home": str(self.home)}

    def serve(self, record: bool = False) -> None:
        """Serve until SIGINT (KeyboardInterrupt reaches the caller) or SIGTERM (a clean exit 0)."""
        import uvicorn

        config = uvicorn.Config(self.app, log_level="warning", access_log=False, server_header=False,
                                date_header=False, lifespan="off")
        signal.signal(signal.SIGTERM, _exit_on_term)
        if record:
            write_json_atomic(record_path(self.home), {**self.info(), "started_at": time.time()})
        try:
            uvicorn.Server(config).run(sockets=[self.sock])
        finally:
            if record:
                _remove_record(self.home, os.getpid())


def _exit_on_term(signum: int, frame: Any) -> None:
    sys.exit(0)


def _remove_record(home: Path, pid: int) -> None:
    rec = read_record(home)
    if rec is not None and rec.get("pid") == pid:
        record_path(home).unlink(missing_ok=True)


def read_record(home: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(record_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def alive_viewer(pid: int) -> bool:
    """True when ``pid`` is a live ``s3 ui`` process (its command line says so)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc (macOS): trust the record
    return b"sophia.cli.entry" in argv and b"ui" in argv


def detach(home: Path, host: str, port: int, wait: float = 15.0) -> dict[str, Any]:
    """Start a viewer in the background (its own session, output to logs/ui.log); its record once it serves."""
    import subprocess

    paths.logs_dir(home).mkdir(parents=True, exist_ok=True)
    paths.run_dir(home).mkdir(parents=True, exist_ok=True)
    log = paths.logs_dir(home) / "ui.log"
    argv = [sys.executable, "-m", "sophia.cli.entry", "ui", "--no-open", "--port", str(port), "--record"]
    if host != "127.0.0.1":
        argv += ["--host", host]
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, start_new_session=True,
                                 env={**os.environ, "SOPHIA_HOME": str(home)})
    finally:
        os.close(fd)
    end = time.monotonic() + wait
    while time.monotonic() < end:
        rec = read_record(home)
        if rec is not None and rec.get("pid") == child.pid:
            return rec
        if child.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
            raise OSError(f"the viewer exited ({child.returncode}): {tail[0] if tail else 'see ' + str(log)}")
        time.sleep(0.05)
    child.terminate()
    raise OSError(f"the viewer did not start within {wait:g} s (see {log})")


def stop(home: Path, wait: float = 5.0) -> dict[str, Any]:
    """Stop the detached viewer: SIGTERM, then SIGKILL after ``wait`` seconds; its record removed."""
    rec = read_record(home)
    if rec is None:
        return {"stopped": None, "note": "no detached viewer is running"}
    pid = int(rec.get("pid") or 0)
    if pid <= 0 or not alive_viewer(pid):
        record_path(home).unlink(missing_ok=True)
        return {"stopped": None, "note": f"the viewer (pid {pid}) had already exited; its record is removed"}
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + wait
    while time.monotonic() < end and alive_viewer(pid):
        time.sleep(0.05)
    if alive_viewer(pid):
        os.kill(pid, signal.SIGKILL)
    record_path(home).unlink(missing_ok=True)
    return {"stopped": pid, "url": rec.get("url")}
