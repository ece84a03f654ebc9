"""Helpers for the meta-cognition tests: seed episodes, snapshot the state tree."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


def make_episode(eid: str, goal: str, outcome: str = "SUCCESS", keywords: list[str] | None = None,
                 ended: str = "2026-01-10T10:00:00Z", trivial: bool = False, **extra: Any) -> dict[str, Any]:
    ep = {
        "id": eid, "session_id": f"s-{eid}", "started_at": ended, "ended_at": ended,
        "end_trigger": "stop_hook", "goal": goal, "goal_summary": goal, "outcome": outcome,
        "tool_call_count": 5, "keywords": keywords or [], "heuristics": [], "trivial": trivial,
        "consolidated": False, "actions": [{"tool": "Bash", "input": "docker ps"}],
    }
    ep.update(extra)
    return ep


def seed_episodes(home: Path, episodes: list[dict[str, Any]]) -> None:
    from sophia.episode_store import upsert_episode

    for ep in episodes:
        upsert_episode(ep, home)


def standard_episodes(home: Path) -> None:
    seed_episodes(home, [
        make_episode("ep_a", "Deploy the app with Docker", keywords=["docker", "deploy"]),
        make_episode("ep_c1", "Debug 500 error in the orders API", "SUCCESS", ["api", "500", "logs"]),
        make_episode("ep_c2", "Debug 500 error in the users API", "SUCCESS", ["api", "500", "logs"]),
        make_episode("ep_c3", "Debug 500 error in the billing API", "PARTIAL", ["api", "500", "logs"]),
    ])


def snapshot(home: Path) -> dict[str, str]:
    """sha256 of every state file (lock files excluded: taking a lock is not a change)."""
    out = {}
    for p in sorted(home.rglob("*")):
        if p.is_file() and not p.name.endswith(".lock"):
            out[str(p.relative_to(home))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def load_fixture(rel: str) -> Any:
    return json.loads((FIXTURES / rel).read_text())


def self_model(home: Path) -> dict[str, Any]:
    return json.loads((home / "self_model.json").read_text())


def rules(home: Path) -> list[dict[str, Any]]:
    return json.loads((home / "semantic_rules.json").read_text())


def items(home: Path, stem: str) -> list[dict[str, Any]]:
    p = home / "memory" / f"{stem}.json"
    return json.loads(p.read_text())["items"] if p.exists() else []
