"""Ordered migrations of the JSON state tree (``config.json`` ``schema_version``).

Each migration is a small function appended to ``MIGRATIONS`` with the version it
produces; ``migrate()`` runs those newer than the tree's version, in order, after copying
every JSON file into ``backups/pre-migration-{from}-{stamp}/``. Re-running is harmless.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import paths
from .atomic import ensure_dir, read_json, write_json_atomic
from .locking import locked
from .timeutil import now


def _vt(v: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in str(v).split("."))
    except ValueError:
        return (0,)


def m001_seed_layout(home: Path) -> None:
    """Trees from before schema_version existed: rules as a list."""
    rp = paths.rules_path(home)
    rules = read_json(rp, default=None)
    if isinstance(rules, dict) and isinstance(rules.get("rules"), list):
        write_json_atomic(rp, rules["rules"])


def _normalise_index(home: Path) -> None:
    ip = paths.episode_index_path(home)
    idx = read_json(ip, default=None)
    if isinstance(idx, dict):
        idx.setdefault("entries", [])
        idx.setdefault("total_episodes", len(idx["entries"]))
        idx.setdefault("last_updated", None)
        if idx.get("last_updated") == "":
            idx["last_updated"] = None
        write_json_atomic(ip, idx)


def m002_sophia_sections(home: Path) -> None:
    """1.1.0: guardian and context sections; local embeddings replace the seed's OpenAI default;
    the seed's index ("last_updated": "") normalised."""
    _normalise_index(home)
    cp = paths.config_path(home)
    cfg = read_json(cp, default=None)
    if not isinstance(cfg, dict):
        return
    cfg.setdefault("guardian", {"mode": "enforce", "allow": [], "deny": []})
    cfg.setdefault("context", {})
    if cfg.get("embedding_model") == "text-embedding-3-small" and cfg.get("embedding_provider") in (None, "none", "openai"):
        cfg["embedding_model"] = "all-MiniLM-L6-v2"
    write_json_atomic(cp, cfg)


MIGRATIONS: list[tuple[str, Callable[[Path], None]]] = [
    ("1.0.0", m001_seed_layout),
    ("1.1.0", m002_sophia_sections),
]
CURRENT = MIGRATIONS[-1][0]


def tree_version(home: Path) -> str | None:
    cfg = read_json(paths.config_path(home), default=None)
    if cfg is None:
        return None
    if isinstance(cfg, dict):
        return str(cfg.get("schema_version") or "0")
    return "0"


def backup_tree(home: Path, label: str) -> Path:
    dest = paths.backups_dir(home) / f"{label}-{now().strftime('%Y%m%dT%H%M%S')}"
    ensure_dir(dest)
    for p in home.rglob("*.json"):
        rel = p.relative_to(home)
        if rel.parts[0] in ("backups", "quarantine", "venv", "kit"):
            continue
        target = dest / rel
        ensure_dir(target.parent)
        shutil.copy2(p, target)
    return dest


def migrate(home: Path) -> list[str]:
    """Bring the tree to ``CURRENT``. Returns the versions applied (empty if none)."""
    cp = paths.config_path(home)
    with locked(cp):
        version = tree_version(home)
        if version is None:  # fresh tree: init writes current files
            return []
        todo = [(v, fn) for v, fn in MIGRATIONS if _vt(v) > _vt(version)]
        if not todo:
            return []
        backup_tree(home, f"pre-migration-{version}")
        applied = []
        for v, fn in todo:
            fn(home)
            cfg: Any = read_json(cp, default=None)
            if isinstance(cfg, dict):
                cfg["schema_version"] = v
                write_json_atomic(cp, cfg)
            applied.append(v)
        return applied
