"""The user model learns from the digests (memory.user_model): preferences, stable traits and goals from
the profile facts a real ``s3 apply extraction`` stored, knowledge levels from what the episodes show;
the real SessionStart hook then shows the stable profile within its cap."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, set_config
from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.episode_store import upsert_index_entries
from sophia.memory import user_model
from sophia.memory.apply import apply_result
from sophia.state import init_tree


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree()
    set_config(sophia_home, embedding_provider="none")
    return sophia_home


def digest(home: Path, *profile: dict[str, Any], at: datetime | None = None) -> None:
    """What a digest's stage 1 stores: profile facts, through the real applier."""
    out = apply_result("extraction", {"subject": "a session", "profile": list(profile)}, home, at=at)
    assert not out["already_applied"]


def episodes(home: Path, goals: list[str], outcome: str = "SUCCESS", start: int = 0) -> None:
    upsert_index_entries([{"id": f"ep_{start + i:04d}", "timestamp": "2026-11-01T10:00:00Z", "goal_summary": g,
                           "outcome": outcome, "trivial": False, "keywords": []} for i, g in enumerate(goals)], home)


def test_preferences_traits_and_goals_come_from_the_digests_profile_facts(home: Path) -> None:
    digest(home, {"fact": "Prefers short answers with the command first", "kind": "preference", "confidence": 0.9},
           {"fact": "Is a backend developer who maintains the billing service", "kind": "stable_trait"},
           {"fact": "Wants to migrate the billing service to Postgres 16 before January", "kind": "transient_state"},
           {"fact": "Is tired today", "kind": "transient_state",
            "valid_until": (datetime.now(UTC) - timedelta(hours=1)).isoformat()})
    um = paths.user_model_path("default", home)
    mine = read_json(um)
    mine["preferences"] = {"editor": "vim"}  # the user's own key: never touched
    write_json_atomic(um, mine)
    assert user_model.refresh(home) is True
    data = read_json(um)
    assert data["preferences"]["editor"] == "vim"
    learned = [v for v in data["preferences"].values() if isinstance(v, dict)]
    assert [p["text"] for p in learned] == ["Prefers short answers with the command first"]
    assert learned[0]["source"] == "digest" and learned[0]["stability"] == "transient"
    assert data["traits"] == ["Is a backend developer who maintains the billing service"]
    assert data["inferred_goals"] == ["Wants to migrate the billing service to Postgres 16 before January"]
    assert "Is tired today" not in json.dumps(data)  # expired: not the user any more
    assert data["interaction_count"] == 0 and data["user_id"] == "default"  # the rest kept as it was
    assert user_model.refresh(home) is False  # nothing new: not rewritten


def test_knowledge_level_from_what_the_user_asked_and_directed(home: Path) -> None:
    episodes(home, ["how do I write a kubernetes helm chart?", "what is a kubernetes pod", "scale the kubernetes pods with helm"])
    episodes(home, [f"fix the flaky pytest fixtures in module {i}" for i in range(5)], start=10)
    episodes(home, ["add a pydantic model for invoices", "speed up the pip install in the venv"], start=20,
             outcome="FAILURE")
    episodes(home, ["hello there"], start=30)  # no domain: not rated
    user_model.refresh(home)
    data = read_json(paths.user_model_path("default", home))
    assert data["knowledge_level"] == {"Kubernetes": "NOVICE", "Testing": "EXPERT", "Python": "INTERMEDIATE"}
    assert data["knowledge_basis"]["Kubernetes"] == "3 sessions: 2 asked, 1 directed, 3 succeeded"
    lines = user_model.profile_lines(home)
    assert lines == ["- The user: knows Testing well; new to Kubernetes (explain more)"], lines


def test_a_superseded_preference_is_dropped(home: Path) -> None:
    digest(home, {"fact": "Prefers tabs for indentation", "kind": "preference", "confidence": 0.9})
    user_model.refresh(home)
    items = read_json(paths.memory_dir(home) / "profile.json")
    items["items"][0]["meta"]["superseded_by"] = "prof_newer"
    write_json_atomic(paths.memory_dir(home) / "profile.json", items)
    user_model.refresh(home)
    assert read_json(paths.user_model_path("default", home))["preferences"] == {}


def test_only_firm_preferences_are_shown(home: Path) -> None:
    digest(home, {"fact": "Prefers British spelling in docs", "kind": "preference", "confidence": 0.9},
           {"fact": "Prefers dark terminals maybe", "kind": "preference", "confidence": 0.5})
    user_model.refresh(home)
    assert user_model.profile_lines(home) == ["- About the user: Prefers British spelling in docs"]


def test_session_start_shows_the_profile_within_its_cap(home: Path, tmp_path: Path) -> None:
    digest(home, {"fact": "Prefers answers in French", "kind": "preference", "confidence": 0.95},
           {"fact": "Is an SRE who runs the payments cluster", "kind": "stable_trait"})
    user_model.refresh(home)

    def start(**cfg: Any) -> str:
        c = read_json(paths.config_path(home))
        c["context"].update(cfg)
        write_json_atomic(paths.config_path(home), c)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home.parent), "SOPHIA_HOME": str(home)}
        r = subprocess.run(["bash", str(ROOT / "hooks" / "session_start.sh")], text=True, capture_output=True,
                           input=json.dumps({"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "SessionStart",
                                             "source": "startup"}), env=env, timeout=60)
        assert r.returncode == 0 and not r.stderr, r.stderr
        return str(json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]) if r.stdout else ""

    ctx = start()
    assert "## The user (learned from past sessions)\n- About the user: Is an SRE who runs the payments cluster; " \
           "Prefers answers in French" in ctx, ctx
    small = start(session_start_max_tokens=100)
    assert len(small) <= 400


def test_after_session_refreshes_the_user_model(home: Path, tmp_path: Path) -> None:
    from sophia.hooks import after_session

    digest(home, {"fact": "Prefers pnpm over npm", "kind": "preference", "confidence": 0.9})
    line = after_session.run(home, {"session": "s-u", "transcript": "", "project": str(tmp_path), "cwd": str(tmp_path),
                                    "episode": None, "trivial": True}, None)
    assert "user model updated" in line, line
    prefs = read_json(paths.user_model_path("default", home))["preferences"]
    assert [v["text"] for v in prefs.values()] == ["Prefers pnpm over npm"]
