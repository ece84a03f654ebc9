"""Embedding settings read from config.json with the standard library (hooks and client use it).

Keys, defaults and allowed values: ``config_defaults`` (``embedding_provider`` local | none,
``embedding_model``, ``embedding_backend``, ``embedding_idle_seconds``, ``embedding_batch_size``,
``embedding_threads``). A bad value leaves that key at its fallback (an unknown provider means
"none": no service starts) and is listed in ``problems`` (``s3 doctor`` reports it as an error);
recall must not die of a config file.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import config_defaults, paths

BACKENDS: tuple[str, ...] = config_defaults.BY_KEY["embedding_backend"].allowed
DEFAULT_BACKEND = "numpy"  # what "auto" means: chosen by bench/vector_search.py (docs/benchmarks.md)
_D = {s.key: s.default for s in config_defaults.SETTINGS if s.key.startswith("embedding_")}


class EmbedSettings:
    """The embedding keys of config.json. A plain class, not a dataclass: ``dataclasses`` pulls in
    ``inspect`` (~15 ms), and this module sits on the prompt hook's path through the client."""

    __slots__ = ("provider", "backend", "idle_seconds", "batch_size", "threads", "model", "problems")

    def __init__(self, provider: str = _D["embedding_provider"], backend: str = _D["embedding_backend"],
                 idle_seconds: float = float(_D["embedding_idle_seconds"]),
                 batch_size: int = _D["embedding_batch_size"], threads: int = _D["embedding_threads"],
                 model: str = _D["embedding_model"], problems: list[str] | None = None) -> None:
        self.provider = provider
        self.backend = backend
        self.idle_seconds = idle_seconds
        self.batch_size = batch_size
        self.threads = threads  # 0: auto, the service measures 1..min(2, cpu count) threads, keeps the fastest
        self.model = model  # the sentence-transformers model the service loads (embed/model.py)
        self.problems = problems or []  # config.json lines about these keys that did not hold

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
    cfg, problems = config_defaults.load(paths.config_path(home), only="embedding_")
    return EmbedSettings(
        provider=cfg["embedding_provider"],
        backend=cfg["embedding_backend"],
        idle_seconds=float(cfg["embedding_idle_seconds"]),
        batch_size=cfg["embedding_batch_size"],
        threads=cfg["embedding_threads"],
        model=cfg["embedding_model"],
        problems=problems,
    )
