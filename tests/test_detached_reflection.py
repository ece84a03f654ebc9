"""The detached reflection (sophia.hooks.reflect_runner, sophia.learning.reflect_input): what its sealed run
is handed (the episodes, redacted, within a budget; the kept heuristics), the seal it runs under, and its
JSON answer applied through `s3 apply`. A scripted `claude` stands in for the client here; the real client
against a prompt-injected model is tests/e2e/test_sealed_digest_e2e.py."""

from __future__ import annotations

import json
import re
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB
from metahelp import make_episode, seed_episodes
from sophia import paths
from sophia.contracts import validate
from sophia.hooks import reflect_runner
from sophia.learning import reflect_input

KEY = "AKIAIOSFODNN7EXAMPLE"
RUNNER = Path(reflect_runner.__file__)


@pytest.fixture
def home(sophia_home: Path) -> Path:
    from sophia.state import init_tree

    init_tree()
    return sophia_home


def calls(n: int) -> list[dict[str, Any]]:
    return [{"tool": "Bash", "outcome": "error" if i % 3 == 0 else "ok", "exit": 1 if i % 3 == 0 else 0,
             "summary": f"pytest -q tests/test_{i:03d}.py"} for i in range(n)]


# ---------------------------------------------------------------- what the run is handed


def test_the_episodes_reach_the_run_redacted_and_within_the_budget(home: Path) -> None:
    eps = [make_episode(f"ep_{i:02d}", f"Fix the widgets build {i} with the key {KEY}", "FAILURE",
                        actions=calls(1000 if i == 0 else 60), errors=[f"Bash pytest -q: failed with {KEY}"] * 20,
                        outcome_reason="the last call failed", result="did not build")
           for i in range(30)]
    seed_episodes(home, eps)
    ids = [e["id"] for e in eps]
    got = reflect_input.episodes(home, [*ids, "ep_nowhere", "../escape"])
    most = reflect_input.EPISODES_CHARS // reflect_input.MIN_EPISODE_CHARS
    assert got.shown == ids[-most:] and got.left_out == ids[:-most]  # the newest are kept
    assert got.missing == ["ep_nowhere", "../escape"]
    assert len(got.text) <= reflect_input.EPISODES_CHARS and KEY not in got.text
    for eid in got.shown:
        assert f"## {eid} |" in got.text
    one = reflect_input.episodes(home, [ids[0]])
    assert len(one.text) <= reflect_input.EPISODES_CHARS
    assert "pytest -q tests/test_000.py" in one.text and "pytest -q tests/test_999.py" in one.text  # first, last
    left = int(re.search(r"\[\.\.\. (\d+) calls left out \.\.\.\]", one.text).group(1))  # type: ignore[union-attr]
    assert left == 1000 - len(re.findall(r"^- Bash (ok|error)", one.text, re.M))
    assert "Why this outcome: the last call failed" in one.text and "Result: did not build" in one.text


def test_a_short_episode_is_handed_whole(home: Path) -> None:
    seed_episodes(home, [make_episode("ep_short", "Tidy the notes", actions=calls(3), files_touched=["/p/notes.md"])])
    text = reflect_input.episodes(home, ["ep_short", "ep_short"]).text
    assert text.count("## ep_short |") == 1 and "left out" not in text
    assert "- Bash error (exit 1): pytest -q tests/test_000.py\n- Bash ok: pytest -q tests/test_001.py" in text
    assert "Files touched: /p/notes.md" in text


def test_the_kept_heuristics_newest_first_within_their_budget(home: Path) -> None:
    assert reflect_input.rules(home) == "(none kept yet)"
    rules = [{"id": f"rule_{i:03d}", "trigger_concept": "builds", "rule_content": f"Rule number {i} " + "x" * 200,
              "confidence": 0.5, "created_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z"} for i in range(80)]
    paths.rules_path(home).write_text(json.dumps(rules))
    text = reflect_input.rules(home)
    lines = text.splitlines()
    assert lines[0].startswith("- rule_079 [builds] Rule number 79") and lines[0].endswith("(confidence 0.50)")
    assert len(text) <= reflect_input.RULES_CHARS + 100 and len(lines) - 1 <= reflect_input.RULES_SHOWN
    assert lines[-1] == f"({80 - (len(lines) - 1)} older heuristics not shown: `s3 list rules --json` lists them all)"
    paths.rules_path(home).write_text("{broken")
    assert "could not be read" in reflect_input.rules(home)


def test_the_prompt_shows_an_answer_the_contract_accepts_and_every_field_is_filled(home: Path) -> None:
    text = reflect_runner.PROMPT.read_text()
    (block,) = re.findall(r"```json\n(.*?)\n```", text, re.S)
    validate("reflection", json.loads(block))
    seed_episodes(home, [make_episode("ep_one", "Deploy the widgets")])
    eps = reflect_input.Episodes("## ep_one | outcome SUCCESS", ["ep_one"], ["ep_zero"], [])
    prompt = reflect_runner.build_prompt(home, eps)
    assert string.Template(text).get_identifiers() and not re.search(r"\$\{?[a-z_]+", prompt)  # every field filled
    assert "Episodes ep_one," in prompt and "left out for room: ep_zero" in prompt and "(none kept yet)" in prompt


def test_the_answer_names_only_the_episodes_it_was_handed() -> None:
    shown = ["ep_a", "ep_b"]
    assert reflect_runner.bind({"episodes_analyzed": ["ep_b", "ep_other"]}, shown)["episodes_analyzed"] == ["ep_b"]
    assert reflect_runner.bind({"episodes_analyzed": ["ep_other"]}, shown)["episodes_analyzed"] == shown
    assert reflect_runner.bind({"heuristics": []}, shown) == {"heuristics": [], "episodes_analyzed": shown}


# ---------------------------------------------------------------- the run, with a scripted client

FAKE = """#!/usr/bin/env bash
# `claude -p` stand-in: records its argv, folder, guard and which s3 it would run, answers $FAKE_ANSWER.
printf '%s\\n' "$@" > "$SOPHIA_HOME/fake.args"
pwd > "$SOPHIA_HOME/fake.pwd"
echo "guard=${SOPHIA_HOOK_GUARD:-unset} s3=$(command -v s3)" > "$SOPHIA_HOME/fake.env"
python3 -c 'import json, os; print(json.dumps({"type": "result", "subtype": "success", "result": os.environ["FAKE_ANSWER"], "total_cost_usd": 0.01}))'
"""
RULE = "When the widgets deploy is denied, check the staging credentials first"


def answer(**over: Any) -> str:
    base = {"episodes_analyzed": ["ep_20261120_widgets", "ep_other"], "error_analysis": "The first deploy was denied.",
            "heuristics": [{"trigger_concept": "widgets deploy", "rule_content": RULE, "confidence": 0.7,
                            "source_episodes": ["ep_20261120_widgets"]}],
            "capability_updates": [], "knowledge_gaps_identified": []}
    return "Here it is:\n```json\n" + json.dumps({**base, **over}) + "\n```"


def run_runner(home: Path, tmp_path: Path, s3_env: dict[str, str], reply: str, *ids: str) -> str:
    """The runner as reflection.launch starts it (``python -I -S``), waited for; returns its log."""
    fake = tmp_path / "claude"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    kit = tmp_path / "kit-bin"  # the kit's s3, named s3, as SOPHIA_S3
    kit.mkdir(exist_ok=True)
    (kit / "s3").write_text(f"#!/bin/sh\nPYTHONPATH={LIB} exec {sys.executable} -m sophia.cli.entry \"$@\"\n")
    (kit / "s3").chmod(0o755)
    env = dict(s3_env, SOPHIA_CLAUDE_BIN=str(fake), SOPHIA_S3=str(kit / "s3"), FAKE_ANSWER=reply,
               SOPHIA_HOOK_GUARD="1", PATH="/usr/bin:/bin")
    proc = subprocess.run([sys.executable, "-I", "-S", str(RUNNER), *ids], env=env, cwd=home, timeout=120,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    return (paths.logs_dir(home) / "reflection.log").read_text()


def widgets(home: Path) -> None:
    seed_episodes(home, [
        make_episode("ep_20261120_widgets", f"Deploy widgets with the key {KEY}", "SUCCESS", actions=[
            {"tool": "Bash", "outcome": "error", "exit": 1, "summary": "./deploy.sh"},
            {"tool": "Bash", "outcome": "ok", "exit": 0, "summary": "./deploy.sh --staging"}],
            errors=[f"Bash ./deploy.sh: denied for {KEY}"]),
        make_episode("ep_other", "Another session the run was not given")])


def test_a_detached_reflection_runs_sealed_and_applies_its_answer(home: Path, tmp_path: Path,
                                                                 s3_env: dict[str, str]) -> None:
    widgets(home)
    log = run_runner(home, tmp_path, s3_env, answer(), "ep_20261120_widgets")
    assert "finished (applied)" in log and "Traceback" not in log, log
    args = (home / "fake.args").read_text().split("\n")
    cut = args.index("--max-turns")
    prompt = "\n".join(args[1:cut])
    assert args[0] == "-p" and "./deploy.sh --staging" in prompt and "denied for [REDACTED]" in prompt
    assert KEY not in prompt and "ep_other" not in prompt
    opt = {a: args[i + 1] for i, a in enumerate(args[:-1]) if i >= cut and a.startswith("--")}
    assert opt["--tools"] == "Bash" and opt["--setting-sources"] == "" and opt["--permission-mode"] == "dontAsk"
    assert opt["--allowedTools"] == "Bash(s3 recall:*),Bash(s3 list:*)" and "--add-dir" not in args
    assert opt["--model"] == "haiku"  # learning_model: the user's settings (and their model) do not load
    settings = json.loads(opt["--settings"])
    (gate,) = settings["hooks"]["PreToolUse"]
    assert gate["matcher"] == "*" and gate["hooks"][0]["command"].endswith("seal_gate.py recall list || exit 2")
    assert "disableAllHooks" not in settings and settings["autoMemoryEnabled"] is False
    where = Path((home / "fake.pwd").read_text().strip())
    assert where.name.startswith("sophia-stage-") and not where.exists()  # a fresh folder, removed
    assert (home / "fake.env").read_text().split() == ["guard=1", f"s3={tmp_path / 'kit-bin' / 's3'}"]
    rules = json.loads(paths.rules_path(home).read_text())
    assert [r["rule_content"] for r in rules] == [RULE]
    ep = json.loads((paths.episodes_dir(home) / "ep_20261120_widgets.json").read_text())
    assert ep["reflected"] is True and RULE in ep["heuristics"] and ep["error_analysis"] == "The first deploy was denied."
    assert not json.loads((paths.episodes_dir(home) / "ep_other.json").read_text()).get("reflected")
    (result,) = paths.agent_results_dir(home).glob("reflect_*.json")
    saved = json.loads(result.read_text())
    assert saved["agent_type"] == "s3-reflection" and saved["result"]["episodes_analyzed"] == ["ep_20261120_widgets"]


def test_an_invalid_answer_changes_nothing(home: Path, tmp_path: Path, s3_env: dict[str, str]) -> None:
    widgets(home)
    log = run_runner(home, tmp_path, s3_env, answer(notes="a field the contract lacks"), "ep_20261120_widgets")
    assert "finished (s3 apply exit 2)" in log and "notes" in log, log
    assert json.loads(paths.rules_path(home).read_text() or "[]") == []
    assert not json.loads((paths.episodes_dir(home) / "ep_20261120_widgets.json").read_text()).get("reflected")
    log = run_runner(home, tmp_path, s3_env, "I could not decide.", "ep_20261120_widgets")
    assert "gave no result: invalid output: the answer holds no JSON object" in log and "finished (no result)" in log


def test_no_readable_episode_starts_no_run(home: Path, tmp_path: Path, s3_env: dict[str, str]) -> None:
    log = run_runner(home, tmp_path, s3_env, answer(), "ep_nowhere")
    assert "no readable episode file for ['ep_nowhere']" in log and "finished (no episode to reflect on)" in log
    assert not (home / "fake.args").exists()
