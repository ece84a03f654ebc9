"""The digest's two stages: their prompts (the condensed session inlined, the episode named, the example
answers held to the contracts) and what they leave behind (a reflection's lessons kept on its episode).

The model is a test double where one is needed (tests/test_digest_queue.py's scripted `claude`); the
contracts, the appliers, the recall index and the CLI are the real ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_s3
from metahelp import make_episode, seed_episodes
from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.contracts import validate
from sophia.memory import apply as apply_mod
from sophia.memory.apply import apply_result
from sophia.state import init_tree

LESSON = "When pytest cannot import the package, run it with --import-mode=importlib"
ANALYSIS = "pytest failed with ModuleNotFoundError: the src layout was not importable; importlib mode fixed it."


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree(sophia_home)
    cfg = read_json(paths.config_path(sophia_home))
    cfg["embedding_provider"] = "none"
    write_json_atomic(paths.config_path(sophia_home), cfg)
    seed_episodes(sophia_home, [
        make_episode("ep_fix", "make the widgets tests pass", "SUCCESS", ["pytest", "widgets"]),
        make_episode("ep_other", "write the release notes", "SUCCESS", ["release"]),
    ])
    return sophia_home


def episode(home: Path, eid: str) -> dict[str, Any]:
    return json.loads((paths.episodes_dir(home) / f"{eid}.json").read_text())


def reflection(**kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "episodes_analyzed": ["ep_fix"],
        "heuristics": [{"trigger_concept": "pytest imports", "rule_content": LESSON, "confidence": 0.8},
                       {"trigger_concept": "release", "rule_content": "Tag only after the changelog is merged",
                        "source_episodes": ["ep_other"]}],
        "error_analysis": ANALYSIS,
    }
    out.update(kw)
    return out


# ---------------------------------------------------------------- a reflection's lessons stay on its episode


def test_reflection_keeps_its_lessons_on_the_episodes_it_analysed(home: Path, s3_env: dict[str, str]) -> None:
    before = episode(home, "ep_fix")
    assert before["heuristics"] == [] and "error_analysis" not in before
    out = apply_result("reflection", reflection(), home)
    ep = episode(home, "ep_fix")
    # the heuristic scoped to another episode (source_episodes) is not this one's lesson
    assert ep["heuristics"] == [LESSON] and ep["error_analysis"] == ANALYSIS and ep["reflected"] is True
    assert out["changes"]["episodes_analyzed"][0]["heuristics"] == [LESSON]
    assert episode(home, "ep_other")["heuristics"] == []  # not analysed: untouched
    index = read_json(paths.episode_index_path(home))
    assert {e["id"]: e["heuristics_count"] for e in index["entries"]} == {"ep_fix": 1, "ep_other": 0}

    # recall finds the episode by a word only its lesson holds, and shows the lesson
    r = run_s3(["recall", "importlib", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    hits = {h["id"]: h for h in json.loads(r.stdout)["results"]}
    assert "ep_fix" in hits, r.stdout
    assert LESSON in json.dumps(hits["ep_fix"]) and ANALYSIS in json.dumps(hits["ep_fix"])


def test_the_same_reflection_twice_adds_nothing(home: Path) -> None:
    apply_result("reflection", reflection(), home)
    first = episode(home, "ep_fix")
    assert apply_result("reflection", reflection(), home)["already_applied"] is True
    # even past the ledger (a crash between the effects and the ledger), the lessons are kept once
    model = validate("reflection", reflection())
    from datetime import UTC, datetime

    apply_mod.apply_reflection(model, "another-digest", home, datetime.now(UTC))  # type: ignore[arg-type]
    assert episode(home, "ep_fix") == first


def test_a_later_reflection_adds_its_lesson_and_replaces_the_analysis(home: Path) -> None:
    apply_result("reflection", reflection(), home)
    apply_result("reflection", reflection(heuristics=[
        {"trigger_concept": "pytest", "rule_content": "Run pytest -q before committing"}],
        error_analysis="Nothing failed this time."), home)
    ep = episode(home, "ep_fix")
    assert ep["heuristics"] == [LESSON, "Run pytest -q before committing"]
    assert ep["error_analysis"] == "Nothing failed this time."


def test_error_analysis_is_optional_and_checked(home: Path) -> None:
    from sophia.contracts import ContractError

    assert validate("reflection", {"error_analysis": None}).error_analysis is None  # type: ignore[union-attr]
    with pytest.raises(ContractError, match="error_analysis"):
        validate("reflection", {"error_analysis": ["not", "a", "string"]})
    apply_result("reflection", {"episodes_analyzed": ["ep_fix"]}, home)
    assert episode(home, "ep_fix").get("error_analysis") is None

