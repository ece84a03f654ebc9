"""Wire format and file locations shared by the client and the service. Standard library only.

One request per connection: the client writes one JSON object and a newline, the service
answers with one JSON object and a newline, then closes. Every message carries ``"v"``
(the protocol version); a service that sees another version answers ``ok: false``.
Sizes are bounded on both sides so that a confused peer cannot make the other allocate
without limit.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the module itself stays cheap for the index writer's nudge (no ``socket`` import)
    import socket

from .. import paths

try:  # the builtin BLAKE2: hashlib would load OpenSSL (~10 ms) on every hook that reaches the client
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b as _blake2b


def _digest(data: bytes) -> str:
    """16 hex characters naming ``data`` (a home's real path) in the socket's file name."""
    return _blake2b(data, digest_size=8).hexdigest()

VERSION = 1
MAX_REQUEST = 4 * 1024 * 1024  # bytes of one request line (embed of a few hundred texts)
MAX_RESPONSE = 32 * 1024 * 1024  # bytes of one response line
MAX_TEXTS = 512  # texts per embed request
MAX_TEXT_CHARS = 20_000  # longer texts are cut (the model reads ~256 tokens anyway)
MAX_K = 1000
SOCK_PATH_MAX = 107  # bytes: sun_path holds 108 with the terminating NUL
_SOCK_TAIL = len("/sophia/embed-0123456789abcdef.sock")  # what sock_path adds to $XDG_RUNTIME_DIR


class ProtocolError(Exception):
    pass


def runtime_dir() -> Path:
    """The short per-user folder that holds the sockets: ``$XDG_RUNTIME_DIR/sophia`` when that is
    a private folder of this user, else ``/tmp/sophia-<uid>`` (the service creates it 0700)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    fits = len(os.fsencode(xdg)) + _SOCK_TAIL <= SOCK_PATH_MAX
    if xdg.startswith("/") and fits and private_dir_problem(Path(xdg)) is None:
        return Path(xdg) / "sophia"
    return Path(f"/tmp/sophia-{os.getuid()}")


def home_key(home: Path | None = None) -> str:
    """16 hex digits naming one state tree (its real path), so that each home gets its own socket."""
    real = os.path.realpath(os.fspath(home or paths.sophia_home()))
    return _digest(os.fsencode(real))


def sock_path(home: Path | None = None) -> Path:
    """The service's socket: in the runtime folder, not in the home, so that a long SOPHIA_HOME
    never makes it longer than a Unix socket path may be (107 bytes)."""
    return runtime_dir() / f"embed-{home_key(home)}.sock"


def private_dir_problem(d: Path) -> str | None:
    """None when ``d`` is a real folder (not a symlink) of this user that nobody else may enter."""
    try:
        st = os.lstat(d)
    except OSError as exc:
        return f"{d}: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{d} is not a folder"
    if st.st_uid != os.getuid():
        return f"{d} belongs to uid {st.st_uid}, not to this user ({os.getuid()})"
    if st.st_mode & 0o077:
        return f"{d} is open to other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def ensure_runtime_dir() -> str | None:
    """Create the runtime folder (0700) if needed; None when it is safe to use, else why not."""
    d = runtime_dir()
    try:
        d.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        return f"cannot create {d}: {exc.strerror}"
    problem = private_dir_problem(d)
    if problem and "open to other users" in problem:
        try:
            os.chmod(d, 0o700)  # ours (checked above): close it
        except OSError:
            return problem
        problem = private_dir_problem(d)
    return problem


def socket_problem(home: Path | None = None) -> str | None:
    """Why the service could not listen on its socket (folder unsafe, path too long), or None."""
    sp = sock_path(home)
    if len(os.fsencode(sp)) > SOCK_PATH_MAX:
        return f"the socket path {sp} is longer than {SOCK_PATH_MAX} bytes"
    return ensure_runtime_dir()


def pid_path(home: Path | None = None) -> Path:
    return paths.run_dir(home) / "embed.pid"


def lock_path(home: Path | None = None) -> Path:
    """Held (flock) by the running service for its whole life: one service per home."""
    return paths.run_dir(home) / "embed.lock"


def spawn_marker_path(home: Path | None = None) -> Path:
    """Touched by a client that spawned the service (rate-limits spawns)."""
    return paths.run_dir(home) / "embed.spawned"


def state_path(home: Path | None = None) -> Path:
    """What the service is doing, ``<phase> <pid>``: ``loading`` (its model, then the backlog of items to
    embed at start), ``indexing`` (a backlog of more than one batch), ``ready``. Written by the service;
    a client does not send a search to a live service that is not ready (it would wait on it)."""
    return paths.run_dir(home) / "embed.state"


PHASES = ("loading", "indexing", "ready")


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
