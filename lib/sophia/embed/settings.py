"""Embedding settings read from config.json with the standard library (hooks and client use it).

Keys (all optional; see ``models.Config``): ``embedding_provider`` ("local" | "none"),
``embedding_backend`` ("auto" | "numpy" | "sqlite-vec"), ``embedding_idle_seconds``,
``embedding_batch_size``, ``embedding_threads``. A config that does not parse leaves
the defaults in place (the doctor reports the file; recall must not die of it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import paths

BACKENDS = ("auto", "numpy", "sqlite-vec")
DEFAULT_BACKEND = "numpy"  # what "auto" means: chosen by bench/vector_search.py (docs/benchmarks.md)


class EmbedSettings:
    """The embedding keys of config.json. A plain class, not a dataclass: ``dataclasses`` pulls in
    ``inspect`` (~15 ms), and this module sits on the prompt hook's path through the client."""

    __slots__ = ("provider", "backend", "idle_seconds", "batch_size", "threads")

    def __init__(self, provider: str = "local", backend: str = "auto", idle_seconds: float = 900.0,
                 batch_size: int = 32, threads: int = 0) -> None:
        self.provider = provider
        self.backend = backend
        self.idle_seconds = idle_seconds
        self.batch_size = batch_size
        self.threads = threads  # 0: auto, the service measures 1..min(2, cpu count) threads, keeps the fastest

    def __repr__(self) -> str:
        return "EmbedSettings(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EmbedSettings) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    @property
    def enabled(self) -> bool:
        return self.provider == "local"

    def resolved_backend(self) -> str:
        return DEFAULT_BACKEND if self.backend == "auto" else self.backend

    def resolved_threads(self) -> int:
        return self.threads if self.threads > 0 else max(1, min(2, os.cpu_count() or 1))


def load(home: Path | None = None) -> EmbedSettings:
    try:
        with open(paths.config_path(home), encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError):
        raw = {}
    if not isinstance(raw, dict):
        raw = {}
    d = EmbedSettings()

    def num(key: str, default: float, lo: float, hi: float) -> float:
        v = raw.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int | float):
            return default
        return float(min(max(v, lo), hi))

    provider = raw.get("embedding_provider", d.provider)
    backend = raw.get("embedding_backend", d.backend)
    return EmbedSettings(
        provider=provider if provider in ("local", "none", "openai") else d.provider,
        backend=backend if backend in BACKENDS else d.backend,
        idle_seconds=num("embedding_idle_seconds", d.idle_seconds, 1, 7 * 86400),
        batch_size=int(num("embedding_batch_size", d.batch_size, 1, 1024)),
        threads=int(num("embedding_threads", d.threads, 0, 64)),
    )
