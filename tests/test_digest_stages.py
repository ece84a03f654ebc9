"""The digest's two stages: their prompts (the condensed session inlined, the episode named, the example
answers held to the contracts) and what they leave behind (a reflection's lessons kept on its episode).

The model is a test double where one is needed (tests/test_digest_queue.py's scripted `claude`); the
contracts, the appliers, the recall index and the CLI are the real ones.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_s3
from metahelp import make_episode, seed_episodes
from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.contracts import CONTRACTS, validate
from sophia.learning import condense, queue, worker
from sophia.memory import apply as apply_mod
from sophia.memory.apply import apply_result
from sophia.state import init_tree
from test_digest_queue import fake_claude, sealed

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



# ---------------------------------------------------------------- the stage prompts


def _example(text: str) -> Any:
    (block,) = re.findall(r"```json\n(.*?)\n```", text, re.S)
    return json.loads(block)


@pytest.mark.parametrize("stage", [s for stages in worker.STAGES.values() for s in stages], ids=lambda s: s.name)
def test_each_stage_prompt_shows_an_answer_its_contract_accepts(stage: worker.Stage, home: Path) -> None:
    """The prompts show the model the contract by example; the example is held to the contract (drift is
    caught here), and every field a prompt names is one the worker fills."""
    text = (queue.PROMPT_DIR / f"{stage.name}.md").read_text()
    if stage.apply_kind == "guardian":  # a tier-3 audit: validated by its own applier
        from sophia.guardian import audit

        assert audit.validate(_example(text))[1] == _example(text)
    else:
        validate(stage.apply_kind, _example(text))
        assert isinstance(CONTRACTS[stage.apply_kind].model_validate(_example(text)), CONTRACTS[stage.apply_kind])
    named = set(string.Template(text).get_identifiers())
    job = {"id": "session_s1", "session_id": "s1", "episode": "ep_fix", "summary": "compacted: all fine"}
    filled = worker.prompt_fields(home, job, named)
    assert named <= set(filled), named - set(filled)


@pytest.mark.parametrize(("agent", "kind"), [("s3-reflection", "reflection"), ("s3-extraction", "extraction"),
                                             ("s3-consolidation", "consolidation")])
def test_each_agent_example_is_accepted_by_its_contract(agent: str, kind: str) -> None:
    text = (ROOT / "agents" / f"{agent}.md").read_text()
    validate(kind, _example(text)["result"])


def session_file(tmp_path: Path) -> Path:
    """A session whose first pytest fails and whose variant passes, with a key in one output."""
    lines: list[dict[str, Any]] = [{"type": "user", "cwd": "/proj", "sessionId": "s1", "timestamp": "2026-03-02T10:00:00Z",
                                    "message": {"role": "user", "content": "make the widgets tests pass"}}]
    calls = [("pytest -q", "Exit code 1\nE   ModuleNotFoundError: No module named 'widgets'", True),
             ("pytest -q --import-mode=importlib", "3 passed; AWS key AKIAIOSFODNN7EXAMPLE", False)]
    for i, (cmd, out, err) in enumerate(calls):
        lines.append({"type": "assistant", "timestamp": f"2026-03-02T10:00:0{i}Z", "message": {
            "role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": cmd}}]}})
        lines.append({"type": "user", "timestamp": f"2026-03-02T10:00:0{i}Z", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": out, "is_error": err}]}})
    lines.append({"type": "assistant", "timestamp": "2026-03-02T10:00:09Z", "message": {
        "role": "assistant", "content": [{"type": "text", "text": "The tests pass now."}]}})
    p = tmp_path / "s1.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines) + json.dumps({"type": "user", "padding": "x" * 200_000}) + "\n")
    return p


def test_the_prompt_carries_the_condensed_session_not_the_transcript(home: Path, tmp_path: Path) -> None:
    t = session_file(tmp_path)
    job = {"id": "session_s1", "session_id": "s1", "transcript": str(t), "cwd": "/proj", "episode": "ep_fix"}
    st = worker.Settings(home)
    prompt = worker.stage_prompt(st, job, worker.STAGES["session"][0])
    assert "pytest -q --import-mode=importlib" in prompt and "ModuleNotFoundError" in prompt
    assert "The tests pass now." in prompt and '"episode_id": "ep_fix"' in prompt
    assert "AKIAIOSFODNN7EXAMPLE" not in prompt and "tool_use_id" not in prompt and "xxxxxxxx" not in prompt
    template = (queue.PROMPT_DIR / "extract.md").read_text()
    assert len(prompt) <= len(template) + condense.BUDGET_TOKENS * condense.CHARS_PER_TOKEN
    assert "$" + "session" not in prompt and "$" + "episode_id" not in prompt

    # stage 2 also reads what stage 1 stored
    stored = {"episode_id": "ep_fix", "atomic_facts": [{"fact": "the widgets tests need importlib mode"}]}
    write_json_atomic(worker.result_path(home, job, worker.STAGES["session"][0]), stored)
    prompt2 = worker.stage_prompt(st, job, worker.STAGES["session"][1])
    assert "the widgets tests need importlib mode" in prompt2 and "ModuleNotFoundError" in prompt2
    assert "s3 recall '<question>' --json --limit 5" in prompt2


def test_an_unreadable_transcript_is_a_named_failure_unless_a_compact_summary_tells_the_story(home: Path) -> None:
    job = {"id": "session_s1", "session_id": "s1", "transcript": str(home / "gone.jsonl")}
    with pytest.raises(worker.Failed, match="cannot read the transcript .*gone.jsonl"):
        worker.stage_prompt(worker.Settings(home), job, worker.STAGES["session"][0])
    job["summary"] = "The user fixed the widgets import."
    assert "The user fixed the widgets import." in worker.stage_prompt(worker.Settings(home), job,
                                                                       worker.STAGES["session"][0])


def test_a_job_without_its_episode_finds_it_by_session(home: Path) -> None:
    assert worker.episode_of(home, {"session_id": "s-ep_other"}) == "ep_other"  # make_episode's session id
    assert worker.episode_of(home, {"session_id": "s-nope"}) is None
    assert worker.episode_of(home, {"session_id": "s-ep_other", "episode": "ep_fix"}) == "ep_fix"


def test_the_kit_prompts_run_both_stages_and_the_lessons_reach_the_episode(home: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit's own prompts through the worker (a scripted `claude` answers): the answers leave the episode
    out, the worker names it, so the facts cite it and the heuristic is kept on it; the model is the
    configured learning_model."""
    fake_claude(tmp_path, monkeypatch)
    cfg = read_json(paths.config_path(home))
    cfg.update(learning_enabled=True, learning_model="claude-haiku-4-5")
    write_json_atomic(paths.config_path(home), cfg)
    queue.enqueue(home, "s1", str(session_file(tmp_path)), "/proj", episode="ep_fix")
    out = worker.drain(worker.Settings(home, backoffs=(), max_wait=1.0))
    assert out["done"] == 1, queue.jobs(home)
    runs = [json.loads(x) for x in (tmp_path / "fake" / "log").read_text().splitlines()]
    assert len(runs) == 2 and all(r["args"][r["args"].index("--model") + 1] == "claude-haiku-4-5" for r in runs)
    assert "Stage 1 of 2" in runs[0]["args"][1] and "ModuleNotFoundError" in runs[0]["args"][1]
    assert "fake fact from call 1" in runs[1]["args"][1]  # stage 2 saw what stage 1 stored
    args = runs[0]["args"]
    assert sealed(args, ()) and sealed(runs[1]["args"], ("recall", "list"))  # the transcript is out of reach
    facts = read_json(paths.memory_dir(home) / "facts.json")["items"]
    assert [f["source_ids"] for f in facts] == [["ep_fix"]]
    assert episode(home, "ep_fix")["heuristics"] == ["run the tests first (call 2)"]
