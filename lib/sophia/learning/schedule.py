"""When the automatic consolidation runs. Standard library only.

After a session (the after-session runner), :func:`maybe_enqueue_consolidation` queues ONE consolidation
job (the worker's ``consolidate`` stage: clusters -> rules, confidence decay, conflict records) when all hold:

- ``learning_enabled`` is true;
- at least ``consolidation_min_episodes`` non-trivial, unconsolidated episodes ended since the last
  consolidation was queued (all of them before the first one);
- none was queued in the last 24 hours, and none is pending or running now.

When it was last queued is recorded in ``run/consolidation.json`` (atomic write, under its lock), so two
sessions ending together queue one job.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from .. import paths
from ..atomic import read_json, write_json_atomic
from ..errors import SophiaError
from ..locking import locked
from ..timeutil import iso, parse
from . import queue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MIN_INTERVAL = 24 * 3600.0  # at most one consolidation a day


def state_path(home: Path) -> Path:
    return paths.run_dir(home) / "consolidation.json"


def last_queued(home: Path) -> float | None:
    """When a consolidation was last queued (epoch seconds), None: never."""
    try:
        st = read_json(state_path(home), default=None)
    except SophiaError:
        return None
    at = st.get("last_queued_at") if isinstance(st, dict) else None
    d = parse(at) if isinstance(at, str) else None
    return d.timestamp() if d else None


def fresh_episodes(home: Path, since: float | None) -> int:
    """Non-trivial, unconsolidated episodes of the index that ended after ``since`` (all when None)."""
    try:
        index = read_json(paths.episode_index_path(home), default=None)
    except SophiaError:
        return 0
    entries = index.get("entries") if isinstance(index, dict) else None
    n = 0
    for e in entries or []:
        if not isinstance(e, dict) or e.get("trivial") or e.get("consolidated"):
            continue
        if since is not None:
            d = parse(e.get("timestamp")) if isinstance(e.get("timestamp"), str) else None
            if d is None or d.timestamp() <= since:
                continue
        n += 1
    return n


def _active(home: Path) -> dict[str, Any] | None:
    """A consolidation job waiting or running now."""
    return next((j for j in queue.jobs(home, ("pending", "running")) if j.get("kind") == "consolidation"), None)


def not_due(home: Path, cfg: dict[str, Any], now: float) -> str | None:
    """Why no consolidation is queued now (None: one is due)."""
    if not cfg.get("learning_enabled"):
        return "learning_enabled is false"
    last = last_queued(home)
    if last is not None and now - last < MIN_INTERVAL:
        return f"the last one was queued {(now - last) / 3600:.1f} h ago, at most one a day"
    active = _active(home)
    if active:
        return f"{active['id']} is {active['state']}"
    want = int(cfg.get("consolidation_min_episodes") or 5)
    have = fresh_episodes(home, last)
    if have < want:
        return f"{have} new episodes since the last one (consolidation_min_episodes = {want})"
    return None


def maybe_enqueue_consolidation(home: Path, cfg: dict[str, Any], now: float | None = None) -> tuple[str, str | None]:
    """Queue the consolidation if it is due. Returns (what happened, the job id or None)."""
    t = time.time() if now is None else now
    sp = state_path(home)
    sp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with locked(sp, timeout=10):
        why = not_due(home, cfg, t)
        if why:
            return f"no consolidation ({why})", None
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t))
        _, job = queue.enqueue(home, stamp, kind="consolidation", reason="automatic: enough new episodes")
        write_json_atomic(sp, {"last_queued_at": iso(datetime.fromtimestamp(t, UTC)), "job": job["id"]})
    return f"consolidation {job['id']} queued", job["id"]

