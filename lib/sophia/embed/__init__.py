"""Semantic tier: a local embedding service and its standard-library client.

``client`` (stdlib only, cheap to import) talks line-delimited JSON over a Unix socket in a short
per-user runtime folder (``protocol.sock_path``) to ``python -m sophia.embed.service``, which holds the MiniLM model,
embeds new index items in batches (vectors are keyed by content hash, never computed
twice) and answers nearest-neighbour searches. The heavy modules (``model``,
``backends``, ``service``) import numpy/torch and are never imported by hooks.
"""

from ..config_defaults import EMBEDDING_MODELS

MODEL_NAME = EMBEDDING_MODELS[0]  # the default embedding_model (config_defaults holds the list)
INSTALL_HINT = "pip install 'sophia-system3[embeddings]'"
