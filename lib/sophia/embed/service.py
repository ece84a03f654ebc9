"""The local embedding service: ``python -m sophia.embed.service [--home DIR]``.

One per SOPHIA_HOME: the process holds an exclusive flock on ``run/embed.lock`` for its
whole life (taken before any heavy import, so a losing racer exits in milliseconds), writes
``run/embed.pid``, loads MiniLM offline, then listens on ``protocol.sock_path(home)`` (0600, in
the short per-user runtime folder, 0700; a socket left by a dead service is replaced). The
socket only appears once the model is loaded, so "the socket answers" means "warm". A socket
it cannot have (unsafe folder, bind error) leaves a one-line note and exits at once.

A background thread embeds pending index items at start and whenever a client nudges.
index.db may be replaced under the service (``s3 index --rebuild`` swaps in a new file): before
each search / status request and at least every ``DB_CHECK_SECONDS`` the service compares the
file's (device, inode) with the one it has open, and reopens (then syncs) when they differ.
Interactive requests (search, embed) use a second instance of the model, so they never wait
behind an indexing batch. The service exits
after ``embedding_idle_seconds`` without requests or indexing work, and on SIGTERM/SIGINT,
removing its socket and pidfile. Output goes to ``logs/embed.log`` (the spawner redirects it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from .. import paths
from ..embed_client import protocol, settings
from ..index.db import file_identity
from ..locking import try_flock

_LOCK_FD: int | None = None
DB_CHECK_SECONDS = 2.0  # the indexer looks for a replaced index.db at least this often


def log(msg: str) -> None:
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    sys.stderr.write(f"{ts}Z embed[{os.getpid()}] {msg}\n")
    sys.stderr.flush()


def _ensure_dir(p: Path) -> None:
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        p.chmod(0o700)
    except OSError:
        pass


def acquire_singleton(home: Path) -> bool:
    """Take the per-home service lock (kept until the process exits)."""
    global _LOCK_FD
    fd = try_flock(protocol.lock_path(home))
    if fd is None:
        return False
    _LOCK_FD = fd
    tmp = protocol.pid_path(home).with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(f"{os.getpid()}\n", encoding="utf-8")
    tmp.chmod(0o600)
    os.replace(tmp, protocol.pid_path(home))
    return True


def set_phase(home: Path, phase: str) -> None:
    """Say what this service is doing (``protocol.state_path``): clients skip a search while it is not
    ready instead of waiting on it. Best effort (atomic rename)."""
    tmp = protocol.state_path(home).with_suffix(f".tmp{os.getpid()}")
    try:
        tmp.write_text(f"{phase} {os.getpid()}\n", encoding="utf-8")
        tmp.chmod(0o600)
        os.replace(tmp, protocol.state_path(home))
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _bind(home: Path) -> tuple[socket.socket, tuple[int, int]]:
    sp = protocol.sock_path(home)
    if sp.exists() or sp.is_symlink():
        # We hold the singleton lock, so no live service owns this socket.
        log(f"replacing stale socket {sp}")
        sp.unlink()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        srv.bind(str(sp))
    except OSError:
        srv.close()
        raise
    finally:
        os.umask(old)
    os.chmod(sp, 0o600)
    srv.listen(32)
    srv.setblocking(False)
    st = sp.stat()
    return srv, (st.st_dev, st.st_ino)


class Service:
    def __init__(self, home: Path, cfg: settings.EmbedSettings, backend_name: str) -> None:
        self.home = home
        self.cfg = cfg
        self.stop = threading.Event()
        self.nudge = threading.Event()
        self.nudge.set()  # initial sync
        self.last_activity = time.monotonic()
        self.started = time.time()
        self.indexing = False
        self.embedded_total = 0
        self.copied_total = 0
        self.requests = 0
        self.last_error: str | None = None
        self._batch_count = 0
        self._last_progress_log = 0.0

        from .model import Encoder

        t0 = time.perf_counter()
        self.encoder = Encoder(threads=cfg.resolved_threads(), model=cfg.model)
        self.model_seconds = time.perf_counter() - t0
        from . import vectors

        conn = vectors.connect(home)  # creates / migrates index.db
        conn.close()
        self.db_path = paths.index_db_path(home)
        self.backend_name = backend_name
        self._db_lock = threading.Lock()
        self.db_generation = 0  # how many times a replaced index.db was reopened
        self.db_id, self.backend = self._open_backend()
        from .tuning import ThreadTuner

        # embedding_threads = 0: measure 1..max threads on live batches and keep the fastest
        self.tuner = ThreadTuner(cfg.resolved_threads()) if cfg.threads == 0 else None
        log(f"model {self.cfg.model} dim {self.encoder.dim} loaded in {self.model_seconds:.1f}s "
            f"({cfg.resolved_threads()} threads); backend {self.backend.name}")

    def _make_backend(self, name: str) -> Any:
        from .backends import make_backend, sqlite_vec_available

        if name == "sqlite-vec":
            why = sqlite_vec_available()
            if why:
                log(f"sqlite-vec unavailable ({why}); using numpy")
                name = self.backend_name = "numpy"
        return make_backend(name, self.db_path, self.cfg.model, self.encoder.dim)

    def _open_backend(self) -> tuple[tuple[int, int] | None, Any]:
        """A backend on index.db and the identity of the file it opened (stat before and after)."""
        while True:
            before = file_identity(self.db_path)
            backend = self._make_backend(self.backend_name)
            if file_identity(self.db_path) == before:
                return before, backend
            backend.close()  # replaced while we opened it: again

    def check_db(self) -> bool:
        """Reopen index.db when the file was replaced (a rebuild); True when it was. One stat."""
        now = file_identity(self.db_path)
        if now is None or now == self.db_id:
            return False  # a missing file is not a new one: keep serving until one appears
        with self._db_lock:
            if file_identity(self.db_path) == self.db_id:
                return False
            old_id = self.db_id
            self.db_id, self.backend = self._open_backend()  # the old one is closed when unreferenced
            self.db_generation += 1
        log(f"index.db was replaced (inode {old_id[1] if old_id else None} -> "
            f"{self.db_id[1] if self.db_id else None}); reopened it")
        self.nudge.set()  # embed what the new file lacks
        return True

    # -- indexing ---------------------------------------------------------------
    def _indexer_conn(self, conn: Any, conn_id: Any) -> tuple[Any, Any]:
        """The indexer's connection, reopened when it is not on the file the service serves."""
        from . import vectors

        self.check_db()
        if conn is not None and conn_id == self.db_id:
            return conn, conn_id
        if conn is not None:
            conn.close()
        conn = vectors.connect(self.home)
        return conn, self.db_id

    def indexer(self) -> None:
        conn, conn_id = self._indexer_conn(None, None)
        first = True
        try:
            while not self.stop.is_set():
                woke = self.nudge.wait(timeout=DB_CHECK_SECONDS)
                conn, conn_id = self._indexer_conn(conn, conn_id)
                if not (woke or self.nudge.is_set()):
                    continue
                self.nudge.clear()
                self.indexing = True
                try:
                    if not first and self._backlog(conn):
                        set_phase(self.home, "indexing")
                    self._sync_pass(conn, conn_id)
                except Exception as exc:
                    self.last_error = f"{type(exc).__name__}: {exc}"
                    log("indexing failed: " + "".join(traceback.format_exception_only(exc)).strip())
                    conn.rollback()
                    self.stop.wait(5.0)
                finally:
                    set_phase(self.home, "ready")  # before `indexing` clears: status then means searchable
                    self.indexing = False
                    first = False
        finally:
            conn.close()

    def _backlog(self, conn: Any) -> bool:
        """More than one batch waits to be embedded: searches would wait behind it."""
        from . import vectors

        return len(vectors.pending(conn, self.cfg.model, self.cfg.batch_size + 1)) > self.cfg.batch_size

    def _sync_pass(self, conn: Any, conn_id: Any) -> None:
        """Embed what index.db lacks; a pass stops early when the file is replaced under it (the
        next pass runs on the new file)."""
        from . import indexer, vectors

        def replaced() -> bool:  # a missing file is not a new one (as in check_db): no pass on nothing
            now = file_identity(self.db_path)
            return now is not None and now != conn_id

        self._batch_count, self._last_progress_log = 0, time.monotonic()
        t0 = time.perf_counter()
        gone = vectors.delete_orphans(conn)
        conn.commit()
        done = indexer.sync(
            conn, self._bulk_encode, self.cfg.model, batch_size=self.cfg.batch_size,
            stop=lambda: self.stop.is_set() or replaced(), on_progress=self._progress,
        )
        if replaced():
            self.nudge.set()
        self.embedded_total += done["embedded"]
        self.copied_total += done["copied"]
        if done["embedded"] or done["copied"] or gone:
            dt = time.perf_counter() - t0
            rate = done["embedded"] / dt if dt > 0 else 0.0
            log(f"indexed: {done['embedded']} embedded ({rate:.0f}/s, threads chosen "
                f"{self.tuner.best if self.tuner else self.cfg.resolved_threads()}), {done['copied']} reused "
                f"by hash, {gone} orphans dropped in {dt:.1f}s")
            self._touch()

    def _bulk_encode(self, texts: list[str]) -> Any:
        if self.tuner is not None:
            self.encoder.set_threads(self.tuner.next())
        t0 = time.perf_counter()
        out = self.encoder.encode(texts, self.cfg.batch_size)
        if self.tuner is not None:
            self.tuner.done(sum(map(len, texts)), time.perf_counter() - t0)
        return out

    def _progress(self, n: int) -> None:
        self._touch()
        self._batch_count += n
        now = time.monotonic()
        if now - self._last_progress_log >= 30.0:
            threads = self.tuner.current if self.tuner else self.cfg.resolved_threads()
            log(f"indexing: {self._batch_count} embedded so far this pass ({threads} threads)")
            self._last_progress_log = now

    def _touch(self) -> None:
        self.last_activity = time.monotonic()

    # -- requests -----------------------------------------------------------------
    def handle(self, conn: socket.socket) -> None:
        try:
            deadline = time.monotonic() + 10.0
            try:
                req = protocol.decode(protocol.read_line(conn, protocol.MAX_REQUEST, deadline))
                resp = self.dispatch(req)
            except (protocol.ProtocolError, TimeoutError) as exc:
                resp = {"ok": False, "error": str(exc)}
            except Exception as exc:
                log("request failed: " + "".join(traceback.format_exception_only(exc)).strip())
                resp = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            resp["v"] = protocol.VERSION
            conn.settimeout(10.0)
            conn.sendall(protocol.encode(resp))
        except OSError:
            pass
        finally:
            conn.close()

    def dispatch(self, req: dict[str, Any]) -> dict[str, Any]:
        if req.get("v") != protocol.VERSION:
            return {"ok": False, "error": f"protocol version {req.get('v')!r} not supported (want {protocol.VERSION})"}
        op = req.get("op")
        self.requests += 1
        if op == "ping":
            return {"ok": True, "pid": os.getpid(), "model": self.cfg.model, "backend": self.backend.name}
        self._touch()
        if op in ("search", "status"):
            self.check_db()
        if op == "nudge":
            self.nudge.set()
            return {"ok": True}
        if op == "status":
            return {"ok": True, **self.status()}
        if op == "shutdown":
            self.stop.set()
            return {"ok": True}
        if op == "embed":
            return self._embed(req)
        if op == "search":
            return self._search(req)
        return {"ok": False, "error": f"unknown op {op!r}"}

    def _embed(self, req: dict[str, Any]) -> dict[str, Any]:
        texts = req.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return {"ok": False, "error": "texts must be a list of strings"}
        if len(texts) > protocol.MAX_TEXTS:
            return {"ok": False, "error": f"at most {protocol.MAX_TEXTS} texts per request"}
        vecs = self._encode([t[: protocol.MAX_TEXT_CHARS] for t in texts])
        return {"ok": True, "dim": self.encoder.dim, "vectors": [[round(float(x), 7) for x in v] for v in vecs]}

    def _search(self, req: dict[str, Any]) -> dict[str, Any]:
        query, k, types = req.get("query"), req.get("k", 10), req.get("types")
        if not isinstance(query, str) or not isinstance(k, int) or isinstance(k, bool):
            return {"ok": False, "error": "search needs query (string) and k (integer)"}
        if types is not None and (not isinstance(types, list) or not all(isinstance(t, str) for t in types)):
            return {"ok": False, "error": "types must be a list of strings"}
        k = max(0, min(k, protocol.MAX_K))
        qvec = self._encode([query[: protocol.MAX_TEXT_CHARS]])[0]
        hits = self.backend.search(qvec, k, types or None)
        return {"ok": True, "results": [[iid, round(score, 6)] for iid, score in hits]}

    def _encode(self, texts: list[str]) -> Any:
        return self.encoder.encode(texts, self.cfg.batch_size, interactive=True)

    def status(self) -> dict[str, Any]:
        from . import vectors

        conn = vectors.connect(self.home)
        try:
            counts = vectors.counts(conn, self.cfg.model)
        finally:
            conn.close()
        return {
            "pid": os.getpid(), "model": self.cfg.model, "dim": self.encoder.dim,
            "uptime_seconds": round(time.time() - self.started, 1),
            "idle_seconds": round(time.monotonic() - self.last_activity, 1),
            "idle_timeout_seconds": self.cfg.idle_seconds, "model_load_seconds": round(self.model_seconds, 2),
            "indexing": self.indexing, "embedded_total": self.embedded_total, "copied_total": self.copied_total,
            "requests": self.requests, "last_error": self.last_error, "rss_mb": _rss_mb(),
            "batch_size": self.cfg.batch_size,
            "threads": self.tuner.best if self.tuner else self.cfg.resolved_threads(), **counts, "backend": self.backend.stats(),
            "db": {"path": str(self.db_path), "device": self.db_id[0] if self.db_id else None,
                   "inode": self.db_id[1] if self.db_id else None, "generation": self.db_generation},
        }

    # -- main loop ------------------------------------------------------------------
    def serve(self, srv: socket.socket) -> None:
        worker = threading.Thread(target=self.indexer, name="indexer", daemon=True)
        worker.start()
        while not self.stop.is_set():
            try:
                ready, _, _ = select.select([srv], [], [], 0.5)
            except InterruptedError:
                continue
            if ready:
                try:
                    conn, _ = srv.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                conn.setblocking(True)
                threading.Thread(target=self.handle, args=(conn,), daemon=True).start()
                continue
            if not self.home.is_dir():
                log(f"the state home {self.home} is gone; exiting")
                self.stop.set()
                break
            idle = time.monotonic() - self.last_activity
            if not self.indexing and not self.nudge.is_set() and idle > self.cfg.idle_seconds:
                log(f"idle for {idle:.0f}s; exiting")
                self.stop.set()
        self.nudge.set()  # wake the indexer so it sees the stop
        worker.join(timeout=10.0)


def _rss_mb() -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def _cleanup(home: Path, sock_id: tuple[int, int] | None) -> None:
    sp = protocol.sock_path(home)
    try:
        st = sp.stat()
        if sock_id and (st.st_dev, st.st_ino) == sock_id:
            sp.unlink()
    except OSError:
        pass
    for pp in (protocol.pid_path(home), protocol.state_path(home)):
        try:
            if pp.read_text(encoding="utf-8").split()[-1] == str(os.getpid()):
                pp.unlink()
        except (OSError, IndexError):
            pass


def _unavailable(home: Path, why: str) -> int:
    """Leave the one-line note clients and ``s3 embed status`` show, log it, return the exit code."""
    msg = f"semantic recall disabled: {why}"
    try:
        protocol.unavailable_path(home).write_text(msg + "\n", encoding="utf-8")
    except OSError:
        pass
    log(msg)
    return 3


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m sophia.embed.service", description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", help="SOPHIA_HOME to serve (default: $SOPHIA_HOME or ~/.sophia)")
    ap.add_argument("--idle-seconds", type=float, help="override embedding_idle_seconds")
    ap.add_argument("--backend", choices=settings.BACKENDS, help="override embedding_backend")
    return ap.parse_args(argv)


def _on_signals(home: Path, svc_ref: dict[str, Service]) -> None:
    """SIGTERM/SIGINT stop a serving service; while the model still loads they leave at once."""

    def on_signal(signum: int, _frame: Any) -> None:
        if "svc" in svc_ref:
            svc_ref["svc"].stop.set()
        else:  # still loading the model: leave now
            _cleanup(home, None)
            os._exit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    home = Path(args.home).expanduser() if args.home else paths.sophia_home()
    for d in (home, paths.run_dir(home), paths.logs_dir(home)):
        _ensure_dir(d)
    cfg = settings.load(home)
    if args.idle_seconds:
        cfg.idle_seconds = args.idle_seconds
    if not cfg.enabled:
        log(f"embedding_provider is {cfg.provider!r}; the semantic tier is off, not starting")
        return 0
    if not acquire_singleton(home):
        log("another embedding service already runs for this home; exiting")
        return 0

    set_phase(home, "loading")  # until the model is loaded and the backlog embedded
    svc_ref: dict[str, Service] = {}
    _on_signals(home, svc_ref)
    log(f"starting for {home} (idle timeout {cfg.idle_seconds:.0f}s)")
    from .model import EmbeddingsUnavailable

    sock_id = None
    try:
        problem = protocol.socket_problem(home)  # before the model: a doomed start fails in milliseconds
        if problem:
            return _unavailable(home, f"cannot listen on {protocol.sock_path(home)}: {problem}")
        try:
            svc = Service(home, cfg, args.backend or cfg.resolved_backend())
        except EmbeddingsUnavailable as exc:
            return _unavailable(home, str(exc))
        protocol.unavailable_path(home).unlink(missing_ok=True)
        svc_ref["svc"] = svc
        try:
            srv, sock_id = _bind(home)
        except OSError as exc:
            return _unavailable(home, f"cannot listen on {protocol.sock_path(home)}: {exc.strerror or exc}")
        log(f"listening on {protocol.sock_path(home)}")
        try:
            svc.serve(srv)
        finally:
            srv.close()
            svc.backend.close()
        log("stopped")
        return 0
    finally:
        _cleanup(home, sock_id)


if __name__ == "__main__":
    sys.exit(main())
