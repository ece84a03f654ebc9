"""Nearest-neighbour search over the ``vectors`` table: two interchangeable backends.

- ``numpy``: the vectors live in an in-memory float32 matrix (one matrix-vector product per
  query); the matrix follows the table: appended rows are loaded incrementally, anything else
  (replaced or deleted rows) triggers a full reload. Changes are noticed through
  ``PRAGMA data_version`` plus a (count, max rowid) signature of the table.
- ``sqlite-vec``: no copy in memory; every query scans the table inside SQLite with the
  sqlite-vec extension's ``vec_distance_cosine`` (loaded through ``apsw``, since the stdlib
  ``sqlite3`` of this Python cannot load extensions).

Both only consider vectors whose content hash still matches their item, and return
``[(item_id, cosine similarity)]`` best first. Vectors are L2-normalised by the model.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

_JOIN = ("FROM vectors v JOIN items i ON i.id = v.item_id AND i.content_hash = v.content_hash "
         "WHERE v.model = ? AND v.dim = ?")


class Backend(Protocol):
    name: str

    def search(self, qvec: Any, k: int, types: Sequence[str] | None = None) -> list[tuple[str, float]]: ...

    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class NumpyBackend:
    name = "numpy"

    def __init__(self, db_path: Path, model: str, dim: int) -> None:
        self.model, self.dim = model, dim
        self._conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10, check_same_thread=False)
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._types: list[str] = []
        self._mat = np.zeros((0, dim), dtype=np.float32)
        self._type_idx: dict[str, np.ndarray] = {}
        self._data_version = -1
        self._sig: tuple[int, int] = (-1, -1)
        self.load_seconds = 0.0
        self.reloads = 0
        self.refresh()

    def _signature(self) -> tuple[int, int]:
        cnt, mx = self._conn.execute("SELECT count(*), coalesce(max(rowid), 0) FROM vectors").fetchone()
        return int(cnt), int(mx)

    def _rows(self, after_rowid: int = 0) -> tuple[list[str], list[str], np.ndarray]:
        """Matching rows after ``after_rowid``, filled straight into one preallocated matrix."""
        args = (self.model, self.dim, after_rowid)
        n = self._conn.execute(f"SELECT count(*) {_JOIN} AND v.rowid > ?", args).fetchone()[0]
        mat = np.empty((n, self.dim), dtype=np.float32)
        ids: list[str] = []
        types: list[str] = []
        cur = self._conn.execute(f"SELECT v.item_id, i.type, v.vec {_JOIN} AND v.rowid > ? ORDER BY v.rowid", args)
        for j, (iid, typ, blob) in enumerate(cur):
            if j >= n:
                break
            mat[j] = np.frombuffer(blob, dtype="<f4")
            ids.append(iid)
            types.append(typ)
        return ids, types, mat[: len(ids)]

    def refresh(self, force: bool = False) -> bool:
        """Bring the matrix up to date with the table; True when something was (re)loaded."""
        with self._lock:
            dv = self._conn.execute("PRAGMA data_version").fetchone()[0]
            if dv == self._data_version and not force:
                return False
            self._data_version = dv
            self._conn.execute("BEGIN")
            try:
                sig = self._signature()
                if sig == self._sig and not force:
                    return False
                t0 = time.perf_counter()
                old_cnt, old_max = self._sig
                appended = (not force and old_cnt >= 0 and sig[1] > old_max
                            and sig[0] - old_cnt == self._conn.execute(
                                "SELECT count(*) FROM vectors WHERE rowid > ?", (old_max,)).fetchone()[0])
                if appended:
                    ids, types, mat = self._rows(old_max)
                    self._ids += ids
                    self._types += types
                    self._mat = np.concatenate([self._mat, mat]) if len(ids) else self._mat
                else:
                    self._ids, self._types, self._mat = self._rows(0)
                self._sig = sig
            finally:
                self._conn.execute("COMMIT")
            by_type: dict[str, list[int]] = {}
            for n, t in enumerate(self._types):
                by_type.setdefault(t, []).append(n)
            self._type_idx = {t: np.asarray(ix, dtype=np.int64) for t, ix in by_type.items()}
            self.load_seconds = time.perf_counter() - t0
            self.reloads += 1
            return True

    def search(self, qvec: Any, k: int, types: Sequence[str] | None = None) -> list[tuple[str, float]]:
        self.refresh()
        with self._lock:
            mat, ids = self._mat, self._ids
            if not len(ids) or k <= 0:
                return []
            q = np.asarray(qvec, dtype=np.float32).reshape(-1)
            scores = mat @ q
            if types:
                parts = [self._type_idx[t] for t in types if t in self._type_idx]
                if not parts:
                    return []
                cand = np.concatenate(parts)
                sub = scores[cand]
            else:
                cand = None
                sub = scores
            kk = min(k, sub.shape[0])
            top = np.argpartition(-sub, kk - 1)[:kk] if kk < sub.shape[0] else np.arange(sub.shape[0])
            top = top[np.argsort(-sub[top], kind="stable")]
            rows = cand[top] if cand is not None else top
            return [(ids[int(r)], float(scores[int(r)])) for r in rows]

    def stats(self) -> dict[str, Any]:
        return {"backend": self.name, "vectors": len(self._ids), "matrix_bytes": int(self._mat.nbytes),
                "load_seconds": round(self.load_seconds, 4), "reloads": self.reloads}

    def close(self) -> None:
        self._conn.close()


def sqlite_vec_available() -> str | None:
    """None when apsw + sqlite-vec load here, else the reason."""
    try:
        import apsw
        import sqlite_vec
    except ImportError as exc:
        return f"{exc.name or exc} is not installed"
    try:
        c = apsw.Connection(":memory:")
        c.enable_load_extension(True)
        c.load_extension(sqlite_vec.loadable_path())
        c.close()
    except Exception as exc:  # apsw raises its own hierarchy
        return f"sqlite-vec does not load: {exc}"
    return None


class SqliteVecBackend:
    name = "sqlite-vec"

    def __init__(self, db_path: Path, model: str, dim: int) -> None:
        import apsw
        import sqlite_vec

        self.model, self.dim = model, dim
        t0 = time.perf_counter()
        self._conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
        self._conn.set_busy_timeout(10_000)
        self._conn.enable_load_extension(True)
        self._conn.load_extension(sqlite_vec.loadable_path())
        self._conn.enable_load_extension(False)
        self.load_seconds = time.perf_counter() - t0

    def search(self, qvec: Any, k: int, types: Sequence[str] | None = None) -> list[tuple[str, float]]:
        if k <= 0:
            return []
        q = np.asarray(qvec, dtype="<f4").reshape(-1).tobytes()
        sql = f"SELECT v.item_id, vec_distance_cosine(v.vec, ?) AS d {_JOIN}"
        args: list[Any] = [q, self.model, self.dim]
        if types:
            sql += f" AND i.type IN ({','.join('?' * len(types))})"
            args += list(types)
        sql += " ORDER BY d, v.rowid LIMIT ?"
        args.append(int(k))
        return [(iid, 1.0 - float(d)) for iid, d in self._conn.execute(sql, args)]

    def stats(self) -> dict[str, Any]:
        return {"backend": self.name, "load_seconds": round(self.load_seconds, 4)}

    def close(self) -> None:
        self._conn.close()


def make_backend(name: str, db_path: Path, model: str, dim: int) -> Backend:
    if name == "sqlite-vec":
        return SqliteVecBackend(db_path, model, dim)
    if name == "numpy":
        return NumpyBackend(db_path, model, dim)
    raise ValueError(f"unknown vector backend {name!r} (numpy or sqlite-vec)")
