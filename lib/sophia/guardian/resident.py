"""The resident guardian analyzer: the PreToolUse analyzer kept loaded, answering the bash hook over
loopback TCP, so a flagged call costs a connect and a few reads instead of starting Python (~35 ms).

    python3 -I -S lib/sophia/guardian/resident.py [--home DIR] [--lib TEXT] [--idle S] [--check S]

Started detached by SessionStart and, when none answers, by the guardian hook (which then falls back
to ``run.py`` for that call). Standard library only, like ``run.py``.

- One per state home: the flock on ``run/guardian/lock``; a second copy exits at once.
- ``run/guardian/resident`` (0600, in a 0700 folder, written atomically once listening): the port, the
  request secret, the answer secret, the kit's lib folder as the hook names it, the pid. One line each.
- One request per connection, in one write: NUL-terminated fields, ``S3G1 <request secret>`` (wrong:
  the connection is closed, nothing answered), then (``=value``, or empty when unset) HOME, TMPDIR, PWD,
  CLAUDE_PROJECT_DIR, CLAUDE_PLUGIN_ROOT, SOPHIA_HOME, SOPHIA_GUARDIAN_TESTING,
  SOPHIA_GUARDIAN_SYNC_LOG, SOPHIA_GUARDIAN_TIMEOUT (the environment the analyzer reads), then the payload.
  The answer: ``<answer secret>\\n``, exactly what ``run.py`` prints (``hook.answer``: the same
  decide/run code, the same time limit), a NUL. The hook takes it only whole (the NUL: this process did
  not die mid-answer) and with the answer secret (no other user's process on the port can forge it);
  it writes only once ``kill -0 <pid>`` says this process, of the same user, is alive, so the payload
  does not go to whoever took the port of a daemon that died.
- The deny/ask log is written by ``hook.write_log`` in this process, after the answer is sent (before
  it with SOPHIA_GUARDIAN_SYNC_LOG=1, as run.py does).
- Config: ``decide`` reads ``config.json`` on every call (a fraction of a millisecond), so a change
  applies to the next call. Code: when a loaded module of the kit changes or disappears, exits (the
  next hook call starts the new code).
- Exits when idle for ``--idle`` seconds (30 min), when the state home, the key file or this file is
  gone, or on SIGTERM; checked every ``--check`` seconds (5) while it waits, never a busy loop.
"""

from __future__ import annotations

import os
import sys

KEY = "resident"
MAGIC = b"S3G1 "
FIELDS = ("HOME", "TMPDIR", "PWD", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "SOPHIA_HOME",
          "SOPHIA_GUARDIAN_TESTING", "SOPHIA_GUARDIAN_SYNC_LOG", "SOPHIA_GUARDIAN_TIMEOUT")
MAX_REQUEST = 16 << 20
IO_TIMEOUT_S = 2.0
WARM = ("ls -la | grep x 2>&1", "rm -rf build/ && git push --force origin main", "curl -s \"$URL\" | jq '.a'",
        "find . -name '*.py' -exec sed -i 's/a/b/' {} +", "python -c 'import os; os.remove(\"x\")'")

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket


def state_dir(home: str) -> str:
    return os.path.join(home, "run", "guardian")


class Resident:
    def __init__(self, home: str, lib: str, idle: float, check: float) -> None:
        import secrets

        self.home, self.lib, self.idle, self.check = home, lib, idle, check
        self.dir = state_dir(home)
        self.key_path = os.path.join(self.dir, KEY)
        self.req = secrets.token_hex(32).encode()
        self.ans = secrets.token_hex(32).encode()
        self.key_text = b""
        self.sources: dict[str, float] = {}

    # ---- start and stop

    def listen(self) -> socket.socket:
        import socket

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        port = sock.getsockname()[1]
        self.key_text = b"%d\n%s\n%s\n%s\n%d\n" % (port, self.req, self.ans, self.lib.encode(), os.getpid())
        from ..atomic import write_bytes_atomic

        write_bytes_atomic(self.key_path, self.key_text)
        return sock

    def watch_sources(self) -> None:
        """Remember the mtime of every loaded module of the kit (and this file)."""
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None)
            if f and os.path.abspath(f).startswith(root + os.sep):
                try:
                    self.sources[f] = os.stat(f).st_mtime_ns
                except OSError:
                    pass
        self.sources[os.path.abspath(__file__)] = os.stat(os.path.abspath(__file__)).st_mtime_ns

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
            if now - last >= self.idle:
                return "idle"
            if now - checked >= self.check:
                checked = now
                why = self.gone()
                if why:
                    return why

    def one(self, conn: socket.socket) -> None:
        """One request: the secret, the fields and payload, the answer, then the log."""
        import contextlib
        import hmac
        import socket

        from .. import paths
        from . import hook

        conn.settimeout(IO_TIMEOUT_S)
        with contextlib.suppress(OSError):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            parts = _read_fields(conn, len(FIELDS) + 2)
        except OSError:
            return
        if parts is None or not hmac.compare_digest(parts[0], MAGIC + self.req):
            return
        parts = parts[1:]
        env = {k: v[1:].decode("utf-8", "surrogateescape") for k, v in zip(FIELDS, parts, strict=False) if v[:1] == b"="}
        env["SOPHIA_HOME"] = paths.home_str(env)  # as hook.main resolves it
        sync = env.get("SOPHIA_GUARDIAN_SYNC_LOG") == "1"
        out = hook.answer(parts[-1], env)
        if sync and hook.PENDING_LOG:  # SOPHIA_GUARDIAN_SYNC_LOG: the log and its audit before the answer
            hook.write_log(detach=False)
        try:
            conn.sendall(self.ans + b"\n" + out.encode("utf-8") + b"\0")
        except OSError:
            pass
        if hook.PENDING_LOG:
            conn.close()
            hook.write_log(detach=False, resident=True)


def _read_fields(conn: socket.socket, n: int) -> list[bytes] | None:
    """n NUL-terminated fields (the last may be large)."""
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


def _args(argv: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    it = iter(argv)
    for a in it:
        if a.startswith("--") and a[2:] in ("home", "lib", "idle", "check"):
            out[a[2:]] = next(it, "")
    return out


def _warm(home: str) -> None:
    """Import the analyzer and compile its lazy patterns before the first real call (no log)."""
    from .hook import decide

    for cmd in WARM:
        decide({"tool_name": "Bash", "tool_input": {"command": cmd}, "cwd": "/home/dev/p"},
               {"HOME": "/home/dev", "SOPHIA_HOME": home})


def main(argv: list[str]) -> int:
    from .. import paths
    from ..locking import try_flock

    a = _args(argv)
    home = a.get("home") or paths.home_str()
    lib = a.get("lib") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.isdir(home):
        return 0
    # Detach: its own session, and no descriptor but stdio kept from whoever started it (a pipe held
    # open here would keep a caller waiting for its end: a test runner, a hook runner).
    try:
        os.setsid()
    except OSError:
        pass
    os.closerange(3, 65536)
    os.makedirs(state_dir(home), mode=0o700, exist_ok=True)
    os.chmod(state_dir(home), 0o700)
    lock = try_flock(os.path.join(state_dir(home), "lock"))
    if lock is None:
        return 0  # one is running already
    r = Resident(home, lib, float(a.get("idle") or 1800), float(a.get("check") or 5))
    import signal

    signal.signal(signal.SIGTERM, lambda _s, _f: sys.exit(0))
    try:
        _warm(home)
        r.watch_sources()
        sock = r.listen()
        r.serve(sock)
    finally:
        r.cleanup()
    return 0


def _entry() -> int:
    try:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        from sophia.guardian.resident import main as real_main

        return real_main(sys.argv[1:])
    except BaseException:  # noqa: BLE001 - a daemon of convenience: any failure just ends it, quietly
        return 0


if __name__ == "__main__":
    sys.exit(_entry())
