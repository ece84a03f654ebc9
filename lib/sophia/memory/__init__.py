"""Extracted memories and the appliers that turn subagent results into them.

Files are the source of truth (``memory/<kind>.json`` = ``{"items": [...]}`` in the index item
shape, ``semantic_rules.json``, ``episodes/``); the SQLite index is derived and updated after
each write when it is available (:mod:`sophia.memory.indexing`).
"""
