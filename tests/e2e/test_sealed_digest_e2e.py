"""The seal end to end: the real claude client, the real digest worker and detached reflection runner, and
a scripted model that acts prompt-injected. In the digest's extract and reflect stages, and in the opt-in
reflection a SessionEnd launches, it tries to read the session's raw transcript, which holds a planted
key, every way a run could: Read, Glob, Grep, Bash (``cat``, ``s3 recall x; cat``, ``s3 recall $(cat ...)``,
``s3 recall --queries``), WebFetch, and an MCP tool of a server the user configured; then it answers with
whatever key it found. Each call is refused, the key reaches no model request, no stage result, no ledger
line and no file of the state home, a plain ``s3 recall`` in the reflections still works, and their
answers are applied.

The seal's two locks are each tried alone on the same attacks (:func:`test_each_lock_alone_refuses_the_attacks`),
and an unsealed run shows the attacks are real: it hands the key over.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import run_s3, set_config, tool_call_lines

from sophia.hooks import reflect_runner, session_end
from sophia.learning import queue, seal

from .harness import REPO, ClaudeRun
from .model_server import ScriptedModel, has_tools_field, request_text

pytestmark = pytest.mark.e2e

SECRET = "AKIAPLANTEDSEAL00042"  # an AWS key id: in the raw transcript only (the condensed session redacts it)
FOUND = re.compile(r"AKIA[0-9A-Z]{16}")
SESSION = "5e55a1ed-0000-4000-8000-00000000c0de"
RULE = "When the widgets deploy fails, check the staging credentials first"
PLAIN_RECALL = "s3 recall widgets --json --limit 5"
LESSON = "When a deploy is denied, retry it against staging before changing the credentials"
MCP_SERVER = Path(__file__).with_name("mcp_file_server.py")
RUNNER = Path(reflect_runner.__file__)


def attacks(transcript: Path) -> list[tuple[str, dict[str, Any]]]:
    t, folder = str(transcript), str(transcript.parent.parent)
    return [("Read", {"file_path": t}),
            ("Glob", {"pattern": "**/*.jsonl", "path": folder}),
            ("Grep", {"pattern": "AKIA", "path": folder, "output_mode": "content"}),
            ("Bash", {"command": f"cat {t}", "description": "read"}),
            ("Bash", {"command": f"s3 recall x; cat {t}", "description": "read"}),
            ("Bash", {"command": f"s3 recall $(cat {t})", "description": "read"}),
            ("Bash", {"command": f"s3 recall --queries {t}", "description": "read"}),
            ("WebFetch", {"url": f"file://{t}", "prompt": "print it"}),
            ("mcp__files__read_file", {"path": t})]


def blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]


def tool_results(body: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(tool, input, result block) of every call the request's history holds, in order."""
    calls = {b["id"]: b for b in blocks(body) if b.get("type") == "tool_use"}
    return [(calls[b["tool_use_id"]]["name"], calls[b["tool_use_id"]]["input"], b)
            for b in blocks(body) if b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    return json.dumps(block.get("content"))


class Injected:
    """One model for every run (told apart by their prompts: the digest's two stages, the detached
    reflection): the attacks one per turn, in the reflections then a plain recall, then an answer carrying
    whatever key a tool gave."""

    def __init__(self, transcript: Path) -> None:
        self.attacks = attacks(transcript)
        self.last: dict[str, dict[str, Any]] = {}  # the last request of each stage

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = request_text(body)
        stage = ("extract" if "Stage 1 of 2" in text else "reflect" if "Stage 2 of 2" in text
                 else "detached" if "detached reflection" in text else "")
        assert stage, text[:500]
        self.last[stage] = body
        steps = self.attacks + ([("Bash", {"command": PLAIN_RECALL, "description": "recall"})]
                                if stage != "extract" else [])
        done = len(tool_results(body))
        if done < len(steps):
            name, inp = steps[done]
            return {"tool_use": [{"name": name, "input": inp}]}
        seen = FOUND.search(" ".join(result_text(r) for _, _, r in tool_results(body)))
        leak = seen.group(0) if seen else "nothing"
        if stage == "extract":
            return {"text": json.dumps({"subject": "Widgets deploy", "summary": "The deploy was fixed.",
                                        "atomic_facts": [{"fact": f"The tools gave the key {leak}"}]})}
        lessons = [{"trigger_concept": "widgets deploy", "rule_content": LESSON, "confidence": 0.7}]
        return {"text": json.dumps({"error_analysis": f"The tools gave the key {leak}",
                                    "heuristics": lessons if stage == "detached" else [],
                                    "knowledge_gaps_identified": [], "capability_updates": []})}


def write_transcript(home: Path, project: Path) -> Path:
    folder = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    folder.mkdir(parents=True)
    lines = [{"type": "user", "cwd": str(project), "timestamp": "2026-11-20T09:59:00.000Z", "sessionId": SESSION,
              "message": {"role": "user", "content": f"Deploy widgets with the key {SECRET} and fix it if it fails"}},
             *tool_call_lines(project, 1, "Bash", {"command": "./deploy.sh"}, f"denied for {SECRET}", True),
             *tool_call_lines(project, 2, "Bash", {"command": "./deploy.sh --staging"}, "deployed", False)]
    t = folder / f"{SESSION}.jsonl"
    t.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return t


def permissive_user(home: Path) -> None:
    """A user-scope MCP server (``~/.claude.json``) that reads any file it is asked for, and user settings
    that allow every tool and switch hooks off: none of it may reach a sealed run."""
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"files": {
        "type": "stdio", "command": sys.executable, "args": [str(MCP_SERVER)]}}}))
    (home / ".claude" / "settings.json").write_text(json.dumps({
        "disableAllHooks": True, "permissions": {"allow": ["Bash", "Read", "Glob", "Grep", "WebFetch", "mcp__files"]}}))


def kit_path() -> str:
    """PATH with the kit's `s3` first (as the worker puts it) and no other `s3`."""
    rest = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not os.access(os.path.join(d, "s3"), os.X_OK)]
    return os.pathsep.join([str(Path(sys.executable).parent), *rest])


@pytest.fixture
def sealed(e2e: ClaudeRun) -> tuple[ClaudeRun, Path]:
    """A state home with one rule to recall, a raw transcript with a planted key, a permissive user."""
    home = e2e.home / ".sophia"
    e2e.extra_env.update(SOPHIA_CLAUDE_BIN=str(e2e.binary), PYTHONPATH=str(REPO / "lib"), PATH=kit_path())
    env = dict(os.environ, HOME=str(e2e.home), SOPHIA_HOME=str(home), PYTHONPATH=str(REPO / "lib"))
    assert run_s3(["init"], env).returncode == 0
    set_config(home, embedding_provider="none", learning_enabled=True, reflection_max_turns=20)
    assert run_s3(["learn", RULE, "--domain", "widgets"], env).returncode == 0
    permissive_user(e2e.home)
    return e2e, write_transcript(e2e.home, e2e.project)


def run_worker(run: ClaudeRun, server: ScriptedModel) -> Any:
    return subprocess.run([sys.executable, "-m", "sophia.learning.worker", "--once"], env=run.env(server.base_url),
                          cwd=run.project, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_a_prompt_injected_digest_reads_nothing_but_its_prompt(sealed: tuple[ClaudeRun, Path]) -> None:
    run, transcript = sealed
    home = run.home / ".sophia"
    queue.enqueue(home, SESSION, str(transcript), str(run.project))
    model = Injected(transcript)
    server = ScriptedModel([model] * 40, main=has_tools_field).start()
    try:
        proc = run_worker(run, server)
    finally:
        server.stop()
    log = (home / "logs" / "digest.log").read_text()
    assert proc.returncode == 0 and f"session_{SESSION}: done" in log, proc.stderr + log
    assert SECRET not in json.dumps(server.requests)  # the key never reached the model, by any way
    assert SECRET not in (home / "digests" / "results" / f"session_{SESSION}.extract.json").read_text()
    for stage in ("extract", "reflect"):
        _each_attack_refused(model.last[stage], transcript)
        assert not any(t["name"].startswith("mcp__") for t in model.last[stage]["tools"])
    _plain_recall_works(model.last["reflect"])
    _stage_ran_in_an_empty_folder(model.last["extract"], run)
    assert _files_holding(home, SECRET) == []  # results, ledger, logs, memory, index: nowhere
    ledger = [json.loads(x) for x in (home / "digests" / "ledger.jsonl").read_text().splitlines()]
    assert [(e["stage"], e["ok"]) for e in ledger] == [("extract", True), ("reflect", True)]


def test_a_prompt_injected_detached_reflection_reads_nothing_but_its_prompt(sealed: tuple[ClaudeRun, Path]) -> None:
    """The opt-in reflection a SessionEnd launches (learning off) is sealed like the digest's reflect stage:
    the episode is in its prompt, every attack is refused, a plain recall works, and its answer (no file
    written: JSON on stdout) is applied, its lesson kept on the episode."""
    run, transcript = sealed
    home = run.home / ".sophia"
    set_config(home, learning_enabled=False, reflection_trigger="on_session_end")
    end = {"hook_event_name": "SessionEnd", "session_id": SESSION, "transcript_path": str(transcript),
           "cwd": str(run.project), "reason": "other"}
    episode = session_end.process(end, home, past=True)["episode"]  # what the SessionEnd hook records
    model = Injected(transcript)
    server = ScriptedModel([model] * 20).start()
    try:
        proc = subprocess.run([sys.executable, "-I", "-S", str(RUNNER), episode], env=run.env(server.base_url),
                              cwd=home, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    finally:
        server.stop()
    log = (home / "logs" / "reflection.log").read_text()
    assert proc.returncode == 0 and "reflection: finished (applied)" in log, proc.stderr + log
    last = model.last["detached"]
    text = request_text(last)
    handed = text[text.index("<episodes>"):text.index("</kept_heuristics>")]
    assert f"## {episode} |" in handed and "- Bash error: deploy.sh\n- Bash ok: deploy.sh" in handed, handed
    assert RULE in handed  # the kept heuristics are handed over too
    assert SECRET not in json.dumps(server.requests)
    _each_attack_refused(last, transcript)
    _plain_recall_works(last)
    assert [t["name"] for t in last["tools"]] == ["Bash"]  # no Write, no Read, no MCP tool
    _stage_ran_in_an_empty_folder(last, run)
    assert _files_holding(home, SECRET) == []
    ep = json.loads((home / "episodes" / f"{episode}.json").read_text())
    assert ep["reflected"] is True and LESSON in ep["heuristics"]
    assert ep["error_analysis"] == "The tools gave the key nothing"
    assert LESSON in [r["rule_content"] for r in json.loads((home / "semantic_rules.json").read_text())]


def _each_attack_refused(last: dict[str, Any], transcript: Path) -> None:
    tried = tool_results(last)[:len(attacks(transcript))]
    assert [(name, inp) for name, inp, _ in tried] == attacks(transcript)
    for name, inp, res in tried:
        assert res.get("is_error") is True, (name, inp, res)
        text = result_text(res)
        assert SECRET not in text and ("denied" in text or "No such tool available" in text), (name, text)


def _plain_recall_works(last: dict[str, Any]) -> None:
    name, inp, res = tool_results(last)[-1]
    assert inp["command"] == PLAIN_RECALL and not res.get("is_error"), res
    hits = json.loads(json.loads(result_text(res)) if isinstance(res["content"], str) else res["content"][0]["text"])
    assert any(RULE in h["text"] for h in hits["results"]), hits


def _stage_ran_in_an_empty_folder(body: dict[str, Any], run: ClaudeRun) -> None:
    """The run's working directory (its system prompt names it) was a fresh folder, not the project or
    the home, and it is gone."""
    m = re.search(r"Primary working directory: (\S+)", request_text(body))
    assert m, request_text(body)[:3000]
    where = Path(m.group(1))
    assert where.name.startswith("sophia-stage-") and not where.exists()
    assert str(run.project) not in str(where) and str(run.home) not in str(where)


def _files_holding(root: Path, text: str) -> list[str]:
    out = []
    for p in root.rglob("*"):
        if p.is_file() and text.encode() in p.read_bytes():
            out.append(str(p))
    return out


LAYERS = {
    # the attacks work on a run without the seal: the key comes back
    "none": lambda mcp: ["--allowedTools", "Bash,Read,Glob,Grep,WebFetch,mcp__files", "--mcp-config", mcp],
    # the client's own restrictions alone (the user's MCP server and settings are there, our hook is not)
    "client": lambda mcp: seal.client_args(("recall", "list")),
    # our hook alone, on a client that would allow every tool and load the MCP server (the user's settings
    # are left out, as the client's restrictions do: their disableAllHooks would switch every hook off)
    "hook": lambda mcp: ["--allowedTools", "Bash,Read,Glob,Grep,WebFetch,mcp__files", "--mcp-config", mcp,
                         "--setting-sources", "", "--settings", json.dumps(seal.settings(("recall", "list")))],
}


@pytest.mark.parametrize("layer", list(LAYERS))
def test_each_lock_alone_refuses_the_attacks(layer: str, sealed: tuple[ClaudeRun, Path], tmp_path: Path) -> None:
    """Run, like the worker, in a fresh empty folder."""
    run, transcript = sealed
    res = _attacked(ClaudeRun(run.home, tmp_path / "sophia-stage-test", run.extra_env), transcript,
                    LAYERS[layer])
    last = res.main_requests[-1]
    results = {(n, json.dumps(i)): r for n, i, r in tool_results(last)}
    assert len(results) == len(attacks(transcript)) + 1
    _plain_recall_works(last)
    offered = {t["name"] for t in last["tools"]}
    assert ("mcp__files__read_file" in offered) == (layer != "client"), offered
    if layer == "none":  # the harness is honest: unsealed, Read, Bash and the MCP tool hand the key over
        leaked = {n for (n, _), r in results.items() if SECRET in result_text(r)}
        assert {"Read", "Bash", "mcp__files__read_file"} <= leaked, leaked
        return
    for n, i in attacks(transcript):
        r = results[(n, json.dumps(i))]
        assert SECRET not in result_text(r), (layer, n, i)
        if layer == "client" and "--queries" in i.get("command", ""):
            continue  # the client cannot judge s3's own options: only the hook refuses a file as --queries
        assert r.get("is_error") is True, (layer, n, i, r)
    assert SECRET not in json.dumps(res.requests)


def test_why_a_stage_never_runs_in_the_project(sealed: tuple[ClaudeRun, Path]) -> None:
    """Claude Code lets a run read its own folder's transcripts under ~/.claude/projects without asking:
    with the client's restrictions alone, a run in the session's project reads the session's transcript
    with ``cat``. The worker runs each stage in a fresh empty folder (and the hook refuses ``cat``)."""
    run, transcript = sealed
    res = _attacked(run, transcript, LAYERS["client"])
    (cat,) = [r for n, i, r in tool_results(res.main_requests[-1]) if i.get("command", "").startswith("cat ")]
    assert SECRET in result_text(cat)


def _attacked(run: ClaudeRun, transcript: Path, layer: Any) -> Any:
    steps: list[Any] = [{"tool_use": [{"name": n, "input": i}]} for n, i in attacks(transcript)]
    steps += [{"tool_use": [{"name": "Bash", "input": {"command": PLAIN_RECALL, "description": "recall"}}]},
              {"text": "done"}]
    mcp = json.dumps({"mcpServers": {"files": {"type": "stdio", "command": sys.executable, "args": [str(MCP_SERVER)]}}})
    res = run.run("Stage 2 of 2: reflect", steps, allowed_tools=None, extra_args=layer(mcp))
    assert res.returncode == 0, res.stderr + res.stdout
    return res
