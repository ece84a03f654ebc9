"""What a resident process of the kit shares: one per state home, reached by a bash hook over loopback TCP.

Two residents use it: the guardian's analyzer (``sophia.guardian.resident``) and the hook runner
(``sophia.hooks.resident``). Standard library only (they run with ``python -I -S``).

- One per state home and kind: the flock on ``run/<kind>/lock``; a second copy gives up at once.
- ``run/<kind>/resident`` (0600, in a 0700 folder, written atomically once listening): the port, the
  request secret, the answer secret, the kit's lib folder as the hook names it, the pid. One line each.
  A hook writes to the port only once ``kill -0 <pid>`` says that process, of the same user, is alive
  (the folder is the user's: ``-O``), and takes an answer only if it starts with the answer secret.
- One request per connection, NUL-terminated fields, the first ``<magic><request secret>`` (wrong: the
  connection is closed, nothing answered); what follows is the kind's (:meth:`Resident.one`).
- Exits when idle for ``idle`` seconds, when the state home, the key file or a loaded module of the kit
  (or the file that started it) changes or goes, or on SIGTERM; checked every ``check`` seconds while it
  waits, never a busy loop.
"""

from __future__ import annotations

import os
import sys

KEY = "resident"
LOCK = "lock"
MAX_REQUEST = 16 << 20
IO_TIMEOUT_S = 2.0

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket


def state_dir(home: str, kind: str) -> str:
    return os.path.join(home, "run", kind)


class Resident:
    """A listener for one state home; :meth:`one` answers one connection (a subclass says how)."""

    magic = b""

    def __init__(self, home: str, kind: str, lib: str, idle: float, check: float) -> None:
        import secrets

        self.home, self.lib, self.idle, self.check = home, lib, idle, check
        self.dir = state_dir(home, kind)
        self.key_path = os.path.join(self.dir, KEY)
        self.req = secrets.token_hex(32).encode()
        self.ans = secrets.token_hex(32).encode()
        self.key_text = b""
        self.sources: dict[str, int] = {}

    # ---- start and stop

    def listen(self) -> socket.socket:
        import socket

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        port = sock.getsockname()[1]
        self.key_text = b"%d\n%s\n%s\n%s\n%d\n" % (port, self.req, self.ans, self.lib.encode(), os.getpid())
        from .atomic import write_bytes_atomic

        write_bytes_atomic(self.key_path, self.key_text)
        return sock

    def watch_sources(self, *extra: str) -> None:
        """Remember the mtime of every loaded module of the kit (and of ``extra`` files)."""
        root = os.path.dirname(os.path.abspath(__file__))
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None)
            if f and os.path.abspath(f).startswith(root + os.sep):
                try:
                    self.sources[f] = os.stat(f).st_mtime_ns
                except OSError:
                    pass
        for f in extra:
            self.sources[f] = os.stat(f).st_mtime_ns

    def gone(self) -> str:
        """Why this process should stop now ('' to go on)."""
        if not os.path.isdir(self.home):
            return "state home gone"
        try:
            with open(self.key_path, "rb") as fh:
                if fh.read(4096) != self.key_text:
                    return "key file replaced"
        except OSError:
            return "key file gone"
        for f, mtime in self.sources.items():
            try:
                if os.stat(f).st_mtime_ns != mtime:
                    return f"code changed ({f})"
            except OSError:
                return f"code gone ({f})"
        return ""

    def cleanup(self) -> None:
        try:
            with open(self.key_path, "rb") as fh:
                mine = fh.read(4096) == self.key_text
            if mine:
                os.unlink(self.key_path)
        except OSError:
            pass

    # ---- serving

    def serve(self, sock: socket.socket) -> str:
        """Answer connections until a reason to stop; returns it."""
        import contextlib
        import select
        import time

        last = checked = time.monotonic()
        while True:
            ready, _, _ = select.select([sock], [], [], self.check)
            now = time.monotonic()
            if ready:
                try:
                    conn, _addr = sock.accept()
                except OSError:
                    conn = None
                if conn is not None:
                    with conn, contextlib.suppress(Exception):  # one bad request never ends the service
                        self.one(conn)
                    last = now = time.monotonic()
            self.tick()
            if now - last >= self.idle:
                return "idle"
            if now - checked >= self.check:
                checked = now
                why = self.gone()
                if why:
                    return why

    def open_request(self, conn: socket.socket, n: int) -> list[bytes] | None:
        """The first ``n`` fields after the secret, or None (a wrong secret, a cut request)."""
        import contextlib
        import hmac
        import socket

        conn.settimeout(IO_TIMEOUT_S)
        with contextlib.suppress(OSError):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            parts = read_fields(conn, n + 1)
        except OSError:
            return None
        if parts is None or not hmac.compare_digest(parts[0], self.magic + self.req):
            return None
        return parts[1:]

    def one(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def tick(self) -> None:
        """Run after each request and each quiet ``check`` interval."""


def read_fields(conn: socket.socket, n: int) -> list[bytes] | None:
    """``n`` NUL-terminated fields (the last may be large); None when the peer stops short."""
    chunks: list[bytes] = []
    seen = size = 0
    while seen < n:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return None
        chunks.append(chunk)
        size += len(chunk)
        seen += chunk.count(b"\0")
        if size > MAX_REQUEST:
            return None
    return b"".join(chunks).split(b"\0")[:n]


def args(argv: list[str]) -> dict[str, str]:
    """``--home``, ``--lib``, ``--idle``, ``--check`` from a command line."""
    out: dict[str, str] = {}
    it = iter(argv)
    for a in it:
        if a.startswith("--") and a[2:] in ("home", "lib", "idle", "check"):
            out[a[2:]] = next(it, "")
    return out


def detach() -> None:
    """Its own session, and no descriptor but stdio (made /dev/null) kept from whoever started it: a pipe
    held open here would keep a caller waiting for its end (a test runner, a hook runner, Claude Code)."""
    try:
        os.setsid()
    except OSError:
        pass
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, 65536)


def take_lock(home: str, kind: str) -> int | None:
    """The kind's folder made private and its lock taken (the fd), or None when one runs already."""
    from .locking import try_flock

    folder = state_dir(home, kind)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return try_flock(os.path.join(folder, LOCK))


def run(resident: Resident, warm: object = None, *extra: str) -> None:
    """Serve until a reason to stop (SIGTERM included), then remove the key file. ``warm``: a callable
    run first (imports and lazy compiles before the first real request)."""
    import signal

    signal.signal(signal.SIGTERM, lambda _s, _f: sys.exit(0))
    try:
        if callable(warm):
            warm()
        resident.watch_sources(*extra)
        sock = resident.listen()
        resident.serve(sock)
    finally:
        resident.cleanup()
