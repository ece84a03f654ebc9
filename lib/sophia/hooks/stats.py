"""Session statistics in self_model.json and the user model, without pydantic. Stdlib only.

Each update is lock, read, change the few keys it owns, atomic write: every other key of
the file is preserved as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import read_json, write_json_atomic
from ..locking import locked
from ..timeutil import iso

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
MAX_TOPICS = 100
NEGATIVE = ("frustrated", "angry", "stuck", "hate")
POSITIVE = ("thanks", "great", "perfect", "love")


def _keep_last(path: Path, home: Path) -> Path:
    try:
        rel = path.relative_to(home)
    except ValueError:
        rel = Path(path.name)
    return paths.backups_dir(home) / "last" / rel


def _default_self_model(now: str) -> dict[str, Any]:
    try:
        data = json.loads((TEMPLATES / "self_model.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data.setdefault("created_at", now)
    data.setdefault("updated_at", now)
    return data


def _later(a: Any, b: str) -> str:
    """The later of two ISO times (``b`` when ``a`` is not one)."""
    from ..timeutil import parse

    pa, pb = parse(a) if isinstance(a, str) else None, parse(b)
    return a if pa is not None and pb is not None and pa > pb else b


def update_self_model(home: Path, *, new_session: bool, new_episode: bool, stamp: bool = False,
                      now: str | None = None, ended: str | None = None, durable: bool = True) -> bool:
    """Count a new session / a new episode and stamp ``last_session``. Returns True if written.

    ``stamp``: write ``last_session`` even when nothing is counted (the session ended). ``ended``: a
    past session's own end (``s3 backfill``): ``last_session`` becomes it only when it is later than the
    one recorded, so a backfill never claims a session happened at its own clock. ``durable=False``: no
    fsync (a turn's update of the file; the session's end writes durably, and so does the file's first write).
    """
    if not (new_session or new_episode or stamp):
        return False
    t = now or iso()
    p = paths.self_model_path(home)
    with locked(p, timeout=2):
        data = read_json(p, default=None)
        durable = durable or data is None  # a new file: no rename over an old one guards it
        if not isinstance(data, dict):
            data = _default_self_model(t)
        if new_session:
            data["total_sessions"] = int(data.get("total_sessions") or 0) + 1
        if new_episode:
            data["total_episodes"] = int(data.get("total_episodes") or 0) + 1
        data["last_session"] = _later(data.get("last_session"), ended) if ended else t
        data["updated_at"] = t
        write_json_atomic(p, data, keep_last=_keep_last(p, home), durable=durable)
    return True


def default_user_model(user_id: str, now: str) -> dict[str, Any]:
    return {
        "user_id": user_id,
        "inferred_goals": [],
        "knowledge_level": {},
        "preferences": {},
        "affect_state": {"valence": 0.0, "arousal": 0.5, "stress_indicator": 0.0, "idle_minutes": 0},
        "trust_score": 0.5,
        "interaction_count": 0,
        "last_interaction": None,
        "topics_discussed": [],
        "successful_patterns": [],
        "created_at": now,
        "updated_at": now,
    }


def apply_affect(affect: dict[str, Any], text: str) -> None:
    """The seed's affect heuristic (6.3) for one user message."""
    lower = text.lower()

    def num(key: str, default: float) -> float:
        v = affect.get(key, default)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default

    if any(w in lower for w in NEGATIVE):
        affect["stress_indicator"] = round(min(1.0, num("stress_indicator", 0.0) + 0.2), 4)
        affect["valence"] = round(max(-1.0, num("valence", 0.0) - 0.3), 4)
    if any(w in lower for w in POSITIVE):
        affect["valence"] = round(min(1.0, num("valence", 0.0) + 0.2), 4)
        affect["stress_indicator"] = round(max(0.0, num("stress_indicator", 0.0) - 0.1), 4)


def safe_user_id(cfg: dict[str, Any]) -> str:
    user = cfg.get("current_user")
    if not isinstance(user, str) or not user or "/" in user or user.startswith(".") or len(user) > 128:
        return "default"
    return user


def update_user_model(home: Path, user_id: str, *, prompts: list[str], topics: list[str],
                      now: str | None = None, ended: str | None = None, durable: bool = True) -> bool:
    """Fold new prompts (count, affect) and episode keywords (topics) in. True if written. ``ended``: a
    past session's end, as in :func:`update_self_model`, for ``last_interaction``. ``durable=False``: no
    fsync (a turn's update of the file; the session's end writes durably, and so does the file's first write)."""
    t = now or iso()
    p = paths.user_model_path(user_id, home)
    with locked(p, timeout=2):
        data = read_json(p, default=None)
        durable = durable or data is None  # a new file: no rename over an old one guards it
        if not isinstance(data, dict):
            data = default_user_model(user_id, t)
        known = data.get("topics_discussed")
        if not isinstance(known, list):
            known = []
        new_topics = [k for k in topics if k not in known]
        if not prompts and not new_topics:
            return False
        if prompts:
            data["interaction_count"] = int(data.get("interaction_count") or 0) + len(prompts)
            data["last_interaction"] = _later(data.get("last_interaction"), ended) if ended else t
            affect = data.get("affect_state")
            if not isinstance(affect, dict):
                affect = {"valence": 0.0, "arousal": 0.5, "stress_indicator": 0.0, "idle_minutes": 0}
            for text in prompts:
                apply_affect(affect, text)
            data["affect_state"] = affect
        data["topics_discussed"] = (known + new_topics)[-MAX_TOPICS:]
        data["updated_at"] = t
        write_json_atomic(p, data, keep_last=_keep_last(p, home), durable=durable)
    return True
