"""Episode files and the capped episode index (seed 4.3). Standard library only (hooks use it).

``episodes/{id}.json`` holds the full episode; ``episodes/index.json`` holds at most
``MAX_INDEX_ENTRIES`` summaries, newest first. Older summaries move to
``episodes/index_archive_{year}.json`` (by the entry's timestamp); episode files stay.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import paths
from .atomic import read_json, write_json_atomic
from .errors import StateFileError
from .locking import locked
from .timeutil import iso

MAX_INDEX_ENTRIES = 1000
INDEX_FIELDS = (
    "id", "timestamp", "goal_summary", "outcome", "tool_call_count", "heuristics_count",
    "trivial", "consolidated", "keywords", "project", "session_id",
)
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")


def empty_index() -> dict[str, Any]:
    return {"last_updated": None, "total_episodes": 0, "entries": []}


def episode_path(episode_id: str, home: Path | None = None) -> Path:
    if not _SAFE_ID.match(episode_id) or episode_id.startswith("."):
        raise ValueError(f"unsafe episode id: {episode_id!r}")
    return paths.episodes_dir(home) / f"{episode_id}.json"


def index_entry(episode: dict[str, Any]) -> dict[str, Any]:
    entry = {k: episode.get(k) for k in INDEX_FIELDS if k in episode}
    entry["id"] = episode["id"]
    entry["timestamp"] = episode.get("timestamp") or episode.get("ended_at") or episode.get("started_at") or iso()
    entry["heuristics_count"] = len(episode.get("heuristics") or [])
    entry.setdefault("keywords", [])
    return entry


def _load_index(p: Path) -> dict[str, Any]:
    data = read_json(p, default=None)
    if data is None:
        return empty_index()
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise StateFileError(p, "expected an object with an 'entries' list")
    return data


def archive_path(year: str, home: Path | None = None) -> Path:
    return paths.episodes_dir(home) / f"index_archive_{year}.json"


# Episode files and the index keep one action, one entry per line (``atomic.dumps``): written fast.
DEPTH = 2


def write_episode(episode: dict[str, Any], home: Path | None = None, *, durable: bool = True) -> Path:
    """Write the episode file (``durable=False``: no fsync, for the rewrite after every turn)."""
    path = episode_path(episode["id"], home)
    write_json_atomic(path, episode, durable=durable, depth=DEPTH)
    return path


def upsert_episode(episode: dict[str, Any], home: Path | None = None) -> None:
    """Write the episode file and upsert its index entry (idempotent for the same id)."""
    write_episode(episode, home)
    upsert_index_entries([index_entry(episode)], home)


def upsert_index_entries(entries: list[dict[str, Any]], home: Path | None = None, *, durable: bool = True) -> None:
    p = paths.episode_index_path(home)
    with locked(p):
        index = _load_index(p)
        by_id = {e.get("id"): e for e in index["entries"] if isinstance(e, dict)}
        new_count = 0
        for entry in entries:
            if entry["id"] not in by_id:
                new_count += 1
            by_id[entry["id"]] = entry
        ordered = sorted(by_id.values(), key=lambda e: str(e.get("timestamp") or ""), reverse=True)
        keep, overflow = ordered[:MAX_INDEX_ENTRIES], ordered[MAX_INDEX_ENTRIES:]
        if overflow:
            _archive(overflow, home)
        index["entries"] = keep
        index["total_episodes"] = int(index.get("total_episodes") or 0) + new_count
        index["last_updated"] = iso()
        write_json_atomic(p, index, durable=durable, depth=DEPTH)


def _archive(entries: list[dict[str, Any]], home: Path | None) -> None:
    by_year: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        year = str(e.get("timestamp") or "")[:4]
        by_year.setdefault(year if year.isdigit() else "unknown", []).append(e)
    for year, items in by_year.items():
        ap = archive_path(year, home)
        with locked(ap):
            data = read_json(ap, default=None) or {"year": year, "entries": []}
            known = {e.get("id") for e in data["entries"]}
            data["entries"].extend(e for e in items if e.get("id") not in known)
            data["entries"].sort(key=lambda e: str(e.get("timestamp") or ""), reverse=True)
            write_json_atomic(ap, data, depth=DEPTH)


def read_index(home: Path | None = None) -> dict[str, Any]:
    return _load_index(paths.episode_index_path(home))
