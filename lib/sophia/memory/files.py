"""``memory/<kind>.json`` stores: ``{"items": [item, ...]}`` in the index item shape.

Every write happens under the file's lock and is atomic. Callers that change items then hand
the same items to :func:`sophia.memory.indexing.upsert` so ``s3 recall`` sees them.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import read_json, write_json_atomic
from ..errors import StateFileError
from ..locking import locked
from ..timeutil import iso

# item type -> file stem under memory/
KIND_FILES: dict[str, str] = {
    "fact": "facts",
    "foresight": "foresight",
    "profile": "profile",
    "scene": "scenes",
    "causal": "causal",
    "procedure": "procedures",
    "memcell": "memcells",
}
FILE_KINDS = {v: k for k, v in KIND_FILES.items()}
ITEM_KEYS = ("id", "type", "text", "project", "timestamp", "event_time", "source_ids", "valid_from",
             "valid_until", "temporality", "scene_id", "memcell_id", "links", "meta")

# Writers queue behind each other (8 concurrent `s3 learn` on 2 busy cores wait > 5 s).
WRITE_TIMEOUT = 30.0


def memory_file(stem: str, home: Path | None = None) -> Path:
    return paths.memory_dir(home) / f"{stem}.json"


def make_item(id: str, type: str, text: str, **kw: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": id, "type": type, "text": text, "project": None, "timestamp": iso(), "event_time": None,
        "source_ids": [], "valid_from": None, "valid_until": None, "temporality": None, "scene_id": None,
        "memcell_id": None, "links": [], "meta": {},
    }
    item.update(kw)
    return item


def index_view(item: dict[str, Any]) -> dict[str, Any]:
    """The standard keys only (per-kind extras such as a scene centroid stay in the file)."""
    out = {k: item.get(k) for k in ITEM_KEYS}
    out["source_ids"] = list(out["source_ids"] or [])
    out["links"] = list(out["links"] or [])
    out["meta"] = dict(out["meta"] or {})
    return out


def load_items(stem: str, home: Path | None = None) -> list[dict[str, Any]]:
    p = memory_file(stem, home)
    data = read_json(p, default=None)
    if data is None:
        return []
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise StateFileError(p, 'expected {"items": [...]}')
    return [i for i in data["items"] if isinstance(i, dict)]


@contextlib.contextmanager
def update_items(stem: str, home: Path | None = None) -> Iterator[list[dict[str, Any]]]:
    """Lock, read, let the caller mutate the list in place, write atomically (only if it changed)."""
    p = memory_file(stem, home)
    with locked(p, timeout=WRITE_TIMEOUT):
        items = load_items(stem, home)
        before = copy.deepcopy(items)
        yield items
        if items != before:
            write_json_atomic(p, {"items": items})


def all_memory_stems(home: Path | None = None) -> list[str]:
    d = paths.memory_dir(home)
    known = set(KIND_FILES.values())
    if d.is_dir():
        known |= {p.stem for p in d.glob("*.json")}
    return sorted(known)


def find_item(item_id: str, home: Path | None = None) -> tuple[str, dict[str, Any]] | None:
    for stem in all_memory_stems(home):
        for item in load_items(stem, home):
            if item.get("id") == item_id:
                return stem, item
    return None
