"""Wire format and file locations shared by the client and the service. Standard library only.

One request per connection: the client writes one JSON object and a newline, the service
answers with one JSON object and a newline, then closes. Every message carries ``"v"``
(the protocol version); a service that sees another version answers ``ok: false``.
Sizes are bounded on both sides so that a confused peer cannot make the other allocate
without limit.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from .. import paths

VERSION = 1
MAX_REQUEST = 4 * 1024 * 1024  # bytes of one request line (embed of a few hundred texts)
MAX_RESPONSE = 32 * 1024 * 1024  # bytes of one response line
MAX_TEXTS = 512  # texts per embed request
MAX_TEXT_CHARS = 20_000  # longer texts are cut (the model reads ~256 tokens anyway)
MAX_K = 1000


class ProtocolError(Exception):
    pass


def sock_path(home: Path | None = None) -> Path:
    return paths.run_dir(home) / "embed.sock"


def pid_path(home: Path | None = None) -> Path:
    return paths.run_dir(home) / "embed.pid"


def lock_path(home: Path | None = None) -> Path:
    """Held (flock) by the running service for its whole life: one service per home."""
    return paths.run_dir(home) / "embed.lock"


def spawn_marker_path(home: Path | None = None) -> Path:
    """Touched by a client that spawned the service (rate-limits spawns)."""
    return paths.run_dir(home) / "embed.spawned"


def unavailable_path(home: Path | None = None) -> Path:
    """Written by a service that cannot run (no sentence-transformers): holds the one-line reason."""
    return paths.run_dir(home) / "embed.unavailable"


def log_path(home: Path | None = None) -> Path:
    return paths.logs_dir(home) / "embed.log"


def encode(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def read_line(sock: socket.socket, limit: int, deadline: float | None) -> bytes:
    """Read up to and excluding the first newline; honours ``deadline`` (monotonic) on every recv."""
    buf = bytearray()
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("read timed out")
            sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            if buf:
                raise ProtocolError("connection closed mid-message")
            raise ProtocolError("connection closed")
        nl = chunk.find(b"\n")
        if nl >= 0:
            buf += chunk[:nl]
            return bytes(buf)
        buf += chunk
        if len(buf) > limit:
            raise ProtocolError(f"message larger than {limit} bytes")


def decode(line: bytes) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"bad JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ProtocolError("message is not a JSON object")
    return obj
