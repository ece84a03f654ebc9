"""``memory/<plural>.json`` stores: ``{"items": [item, ...]}`` in the index item shape.

Which kinds live here, and the item shape itself, come from the registry (:mod:`sophia.kinds`).

Every write happens under the file's lock and is atomic. Callers that change items then hand
the same items to :func:`sophia.memory.indexing.upsert` so ``s3 recall`` sees them.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import kinds, paths
from ..atomic import read_json, write_json_atomic
from ..errors import StateFileError
from ..kinds import index_view, make_item
from ..locking import locked

__all__ = ["index_view", "make_item", "memory_file", "load_items", "update_items", "all_memory_stems", "find_item"]

# Writers queue behind each other (8 concurrent `s3 learn` on 2 busy cores wait > 5 s).
WRITE_TIMEOUT = 30.0


def memory_file(stem: str, home: Path | None = None) -> Path:
    return paths.memory_dir(home) / f"{stem}.json"


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
    known = {k.plural for k in kinds.in_store("memory")}
    if d.is_dir():
        known |= {p.stem for p in d.glob("*.json")}
    return sorted(known)


def find_item(item_id: str, home: Path | None = None) -> tuple[str, dict[str, Any]] | None:
    for stem in all_memory_stems(home):
        for item in load_items(stem, home):
            if item.get("id") == item_id:
                return stem, item
    return None
