"""Client of the local embedding service. STANDARD LIBRARY ONLY (socket + json): cheap to
import, safe on hook paths (``python -I -S``).

Nothing here ever waits for the model to load: when the service is not warm, ``search`` and
``embed`` return None at once (and start the service in the background), so the caller
answers from the keyword tier. Every socket operation has a deadline. The index's writer calls
``index_written`` after each change, which nudges a running service (never starts one).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import paths
from . import protocol, settings

SPAWN_COOLDOWN = 30.0  # seconds between two spawn attempts for one home (unless forced)
UNAVAILABLE_TTL = 3600.0  # a service that found no sentence-transformers is not retried for an hour
LOG_ROTATE_BYTES = 1_000_000
_LIB_DIR = Path(__file__).resolve().parents[2]


def _home(home: Path | str | None) -> Path:
    return Path(home) if home is not None else paths.sophia_home()


def _request(req: dict[str, Any], home: Path, timeout: float) -> dict[str, Any] | None:
    """One round trip; None when no service listens, on timeout, or on a protocol error.

    Raises ConnectionRefusedError / FileNotFoundError when nobody listens (callers that care
    about "not running" vs "slow" catch those).
    """
    import socket  # not at the top: the writer's nudge (on the Stop hook's path) needs only _socket

    deadline = time.monotonic() + max(timeout, 0.001)
    sp = protocol.sock_path(home)
    if protocol.private_dir_problem(sp.parent):  # never talk to a socket another user could have put there
        raise ConnectionRefusedError(errno.ENOENT, "no private runtime folder")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(max(deadline - time.monotonic(), 0.001))
        s.connect(str(sp))
        s.settimeout(max(deadline - time.monotonic(), 0.001))
        s.sendall(protocol.encode({"v": protocol.VERSION, **req}))
        line = protocol.read_line(s, protocol.MAX_RESPONSE, deadline)
        resp = protocol.decode(line)
    except (TimeoutError, protocol.ProtocolError):
        return None
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK):
            raise ConnectionRefusedError(exc.errno, exc.strerror) from None
        return None
    finally:
        s.close()
    if resp.get("v") != protocol.VERSION:
        return None
    return resp


Start = bool | Callable[[], bool]  # or a test run only when no service answers ("is it worth it?")


def _call(req: dict[str, Any], home: Path, timeout: float, start: Start) -> dict[str, Any] | None:
    try:
        resp = _request(req, home, timeout)
    except ConnectionRefusedError:
        if start is True or (callable(start) and start()):
            ensure_started(home)
        return None
    return resp if resp and resp.get("ok") else None


def enabled(home: Path | str | None = None) -> bool:
    return settings.load(_home(home)).enabled


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"  # a zombie has exited
    except (OSError, IndexError):
        return True


def service_pid(home: Path | str | None = None) -> int | None:
    """Pid of the live service of this home, from its pidfile (None if none runs)."""
    try:
        pid = int(protocol.pid_path(_home(home)).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if b"sophia.embed.service" not in fh.read():
                return None  # pid reused by something else
    except OSError:
        pass  # no /proc: trust kill(0)
    return pid


def is_warm(home: Path | str | None = None, timeout: float = 0.1) -> bool:
    """True when the service answers (it only listens once the model is loaded)."""
    try:
        resp = _request({"op": "ping"}, _home(home), timeout)
    except ConnectionRefusedError:
        return False
    return bool(resp and resp.get("ok"))


def unavailable_reason(home: Path | str | None = None) -> str | None:
    """The note left by a service that could not load the model (recent ones only)."""
    p = protocol.unavailable_path(_home(home))
    try:
        if time.time() - p.stat().st_mtime > UNAVAILABLE_TTL:
            return None
        return p.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _service_cmd(home: Path) -> list[str]:
    py = os.environ.get("SOPHIA_EMBED_PYTHON") or sys.executable
    return [py, "-m", "sophia.embed.service", "--home", str(home)]


def ensure_started(home: Path | str | None = None, *, force: bool = False) -> int | None:
    """Spawn the service in the background if none runs; never waits. Returns the new pid.

    Spawns at most once per ``SPAWN_COOLDOWN`` seconds per home (``force`` skips that and the
    "unavailable" note); two racing spawns are harmless: the service's flock lets one live.
    """
    h = _home(home)
    if not enabled(h) or service_pid(h) is not None:
        return None
    run = paths.run_dir(h)
    marker = protocol.spawn_marker_path(h)
    if not force:
        if unavailable_reason(h):
            return None
        try:
            if time.time() - marker.stat().st_mtime < SPAWN_COOLDOWN:
                return None
        except OSError:
            pass
    try:
        for d in (h, run, paths.logs_dir(h)):
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        marker.touch(mode=0o600)
        os.utime(marker)
        if force:
            protocol.unavailable_path(h).unlink(missing_ok=True)
        lp = protocol.log_path(h)
        with contextlib.suppress(OSError):
            if lp.stat().st_size > LOG_ROTATE_BYTES:
                os.replace(lp, lp.with_name(lp.name + ".1"))
        fd = os.open(lp, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        return None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_LIB_DIR), env.get("PYTHONPATH", "")) if p)
    env["SOPHIA_HOME"] = str(h)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    import subprocess

    try:
        proc = subprocess.Popen(
            _service_cmd(h), stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, env=env, cwd=str(h),
            start_new_session=True, close_fds=True,
        )
    except OSError:
        return None
    finally:
        os.close(fd)
    return proc.pid


def embed(texts: list[str], *, home: Path | str | None = None, timeout: float = 30.0,
          start: bool = True) -> list[list[float]] | None:
    """Vectors for ``texts`` (L2-normalised), or None when the service is not warm / too slow."""
    h = _home(home)
    if not texts:
        return []
    if not enabled(h):
        return None
    out: list[list[float]] = []
    deadline = time.monotonic() + timeout
    for i in range(0, len(texts), protocol.MAX_TEXTS):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        resp = _call({"op": "embed", "texts": list(texts[i : i + protocol.MAX_TEXTS])}, h, left, start)
        if resp is None or not isinstance(resp.get("vectors"), list):
            return None
        out.extend(resp["vectors"])
    return out


def busy(home: Path | str | None = None) -> bool:
    """True while the live service of ``home`` is loading its model or embedding a backlog (its state
    file, ``protocol.state_path``): a search sent now would wait on it."""
    h = _home(home)
    try:
        phase, pid = protocol.state_path(h).read_text(encoding="utf-8").split()
    except (OSError, ValueError):
        return False
    return phase != "ready" and pid.isdigit() and service_pid(h) == int(pid)


def search(query: str, k: int, *, home: Path | str | None = None, types: list[str] | None = None,
           timeout: float = 0.2, start: Start = True) -> list[tuple[str, float]] | None:
    """``[(item_id, cosine)]`` best first, or None (not warm, disabled, or slower than ``timeout``).

    When no service runs, one is started in the background for the next call (``start`` may be a
    function that says whether that is worth it). While the service is not ready (:func:`busy`: the
    model loading, a backlog being embedded) nothing is asked: None at once, never a wait.
    """
    h = _home(home)
    if not enabled(h) or busy(h):
        return None
    req: dict[str, Any] = {"op": "search", "query": query, "k": int(k)}
    if types:
        req["types"] = list(types)
    resp = _call(req, h, timeout, start)
    if resp is None or not isinstance(resp.get("results"), list):
        return None
    try:
        return [(str(iid), float(score)) for iid, score in resp["results"]]
    except (TypeError, ValueError):
        return None


def request_embed(home: Path | str | None = None, timeout: float = 0.2) -> bool:
    """Nudge: new items wait to be embedded. Starts the service if none runs (it embeds at start)."""
    h = _home(home)
    if not enabled(h):
        return False
    return _call({"op": "nudge"}, h, timeout, start=True) is not None


def nudge(home: Path | str | None = None) -> bool:
    """Tell a running service that new items wait, without waiting for it and without starting one
    (hook-safe: one connect and one small write on a local socket). True when it was delivered."""
    import _socket

    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(0.05)
        s.connect(str(protocol.sock_path(_home(home))))
        s.sendall(protocol.encode({"v": protocol.VERSION, "op": "nudge"}))
    except OSError:
        return False
    finally:
        s.close()
    return True


def index_written(conn: Any) -> None:
    """Called by the index's one writer after it changed items: nudge the service of the home that
    holds this index.db (a rebuild's temporary file is left alone). Never raises."""
    try:
        db = Path(conn.execute("PRAGMA database_list").fetchone()[2])
        if db.name == paths.index_db_path(db.parent).name:
            nudge(db.parent)
    except Exception:
        pass


def status(home: Path | str | None = None, timeout: float = 2.0) -> dict[str, Any] | None:
    """The service's own report (counts, backend, pid...), or None when it is not warm."""
    return _call({"op": "status"}, _home(home), timeout, start=False)


def stop(home: Path | str | None = None, timeout: float = 10.0) -> bool:
    """Stop the service (SIGTERM to the pid from the pidfile); True once it is gone."""
    h = _home(home)
    pid = service_pid(h)
    if pid is None:
        return True
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 15)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def wait_warm(home: Path | str | None = None, timeout: float = 120.0, child: int | None = None) -> bool:
    """Block until the service answers (for the CLI's ``start --wait`` and benches).

    Returns False early when the service left an "unavailable" note, or when ``child`` (the pid
    ``ensure_started`` returned) has exited and no other service holds the home."""
    h = _home(home)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_warm(h, timeout=0.5):
            return True
        if service_pid(h) is None and (unavailable_reason(h) or (child and not _alive(child))):
            return is_warm(h, timeout=0.5)
        time.sleep(0.1)
    return False


def wait_embedded(home: Path | str | None = None, timeout: float = 600.0) -> bool:
    """Block until nothing is pending (after a nudge): for ingest with ``--wait`` and benches."""
    h = _home(home)
    request_embed(h)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = status(h, timeout=5.0)
        if st is not None and st.get("pending") == 0 and not st.get("indexing"):
            return True
        time.sleep(0.2)
    return False
