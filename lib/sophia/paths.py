"""Where the state lives. Standard library only (imported by hooks).

``sophia_home()`` is the one place that decides the state location: ``$SOPHIA_HOME``
if set, else ``~/.sophia``. Every other path is derived from it.
"""

from __future__ import annotations

import os
from pathlib import Path


def sophia_home() -> Path:
    env = os.environ.get("SOPHIA_HOME")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".sophia"


def config_path(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "config.json"


def self_model_path(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "self_model.json"


def user_model_path(user_id: str = "default", home: Path | None = None) -> Path:
    return (home or sophia_home()) / "user_models" / f"{user_id}.json"


def episodes_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "episodes"


def episode_index_path(home: Path | None = None) -> Path:
    return episodes_dir(home) / "index.json"


def rules_path(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "semantic_rules.json"


def agent_results_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "agent_results"


def logs_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "logs"


def buffers_dir(home: Path | None = None) -> Path:
    """Per-session action buffers (PostToolUse), private to the user."""
    return (home or sophia_home()) / "buffers"


def memory_dir(home: Path | None = None) -> Path:
    """Extracted memories (facts, foresight, profile, scenes, links...), one JSON file per kind."""
    return (home or sophia_home()) / "memory"


def quarantine_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "quarantine"


def backups_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "backups"


def index_db_path(home: Path | None = None) -> Path:
    """The derived SQLite index (rebuildable from the files)."""
    return (home or sophia_home()) / "index.db"


def run_dir(home: Path | None = None) -> Path:
    """Sockets and pidfiles of background helpers (embedding service, reflection)."""
    return (home or sophia_home()) / "run"


TREE_DIRS = ("user_models", "episodes", "agent_results", "logs", "buffers", "memory", "run")


def identity_record_path(home: Path | None = None) -> Path:
    """Where ``s3 refresh-identity`` records which CLAUDE.md it wrote and when."""
    return (home or sophia_home()) / "identity.json"
