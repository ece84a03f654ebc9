"""Figures too slow for a page request (the growth series reads every episode: ~1 s at 10k episodes),
kept in the server process and recomputed in a thread when their source files change.

``Slow.get()`` returns the last value at once. When the key (cheap ``stat`` results of the files the
figure is read from) changed, a recomputation starts in a thread; the request waits for it up to
``wait`` seconds, so a small home shows fresh figures and a big one shows the previous ones (or
"measuring" the first time) without blocking the page.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def stat_key(*paths: Path) -> tuple[Any, ...]:
    """(size, mtime_ns) of each path, None for a missing one: a directory's mtime changes when a file
    is added or removed; a file's when it is rewritten (atomic writes replace it)."""
    out: list[Any] = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


class Slow:
    def __init__(self, compute: Callable[[], Any], key: Callable[[], Any], wait: float = 0.25) -> None:
        self.compute, self.key, self.wait = compute, key, wait
        self.value: Any = None
        self.at = 0.0
        self.error = ""
        self._key: Any = object()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def _run(self, key: Any) -> None:
        try:
            value = self.compute()
            error = ""
        except Exception as exc:  # a damaged file: the page says so, the server goes on
            value, error = self.value, f"{type(exc).__name__}: {exc}"
        with self._lock:
            self.value, self.error, self.at, self._key = value, error, time.time(), key
            self._thread = None

    def refresh(self) -> threading.Thread | None:
        """Start a recomputation when the key changed and none is running; the running one, if any."""
        key = self.key()
        with self._lock:
            if key != self._key and self._thread is None:
                self._thread = threading.Thread(target=self._run, args=(key,), daemon=True)
                self._thread.start()
            return self._thread

    def get(self) -> Any:
        t = self.refresh()
        if t is not None:
            t.join(self.wait)
        with self._lock:
            return self.value
