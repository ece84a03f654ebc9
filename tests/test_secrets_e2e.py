"""End to end: the fake-secret corpus goes through every capture path that exists, then EVERY byte of
EVERY file under SOPHIA_HOME (state files, logs, buffers, quarantine, backups, index.db and its -wal) is
scanned for every secret value. None may appear; the things that were captured must still be there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import procs
from conftest import run_s3
from secret_scan import load_corpus, scan

ROOT = Path(__file__).resolve().parents[1]
CORPUS = load_corpus()
SECRETS = [s for e in CORPUS for s in e["secrets"]]
HOOKS = {p.stem: p for p in (ROOT / "hooks").glob("*.sh")}


def test_cli_capture_paths_never_store_a_secret(s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    captured: list[str] = []
    # s3 learn: a few real invocations, then the whole corpus through the same function in one process
    for e in CORPUS[:3]:
        r = run_s3(["learn", f"lesson {e['id']}: {e['text']}", "--domain", f"ops {e['kind']}"], s3_env)
        assert r.returncode == 0, r.stderr
        captured.append(f"lesson {e['id']}")
    code = ("import json,sys; from sophia.memory.manage import learn\n"
            "for e in json.load(sys.stdin): learn(f\"lesson {e['id']} zq{e['id'][:3]}: \" + e['text'], 'd' + e['id'][:3])")
    r = subprocess.run([sys.executable, "-c", code], input=json.dumps(CORPUS), env=s3_env, text=True,
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]

    # s3 apply: agent results (reflection heuristics, knowledge gaps, extracted facts) full of secrets
    reflection = {"heuristics": [{"trigger_concept": f"topic {e['id']}", "rule_content": f"when {e['id']}: {e['text']}",
                                  "confidence": 0.7} for e in CORPUS[:40]],
                  "knowledge_gaps_identified": [e["text"] for e in CORPUS[40:50]]}
    extraction = {"atomic_facts": [{"fact": f"fact {e['id']}: {e['text']}"} for e in CORPUS]}
    for kind, result in (("reflection", reflection), ("extraction", extraction)):
        f = tmp_path / f"{kind}.json"
        f.write_text(json.dumps(result))
        r = run_s3(["apply", kind, str(f), "--json"], s3_env)
        assert r.returncode == 0, (kind, r.stdout[-1500:], r.stderr[-1500:])
    captured += ["when 000-", "fact 001-"]

    files, findings = scan(sophia_home, SECRETS)
    assert files >= 5
    assert findings == [], "secrets reached disk:\n" + "\n".join(findings[:30])
    blob = b"".join(p.read_bytes() for p in sophia_home.rglob("*") if p.is_file())
    for c in captured:  # what was captured is really stored (with the secrets masked)
        assert c.encode() in blob, c
    assert b"[REDACTED]" in blob


def _payloads(session: str, transcript: Path, cwd: Path) -> list[tuple[str, dict[str, Any]]]:
    common = {"session_id": session, "transcript_path": str(transcript), "cwd": str(cwd), "permission_mode": "default"}
    out: list[tuple[str, dict[str, Any]]] = [("session_start", {**common, "hook_event_name": "SessionStart",
                                                                 "source": "startup"})]
    for i, e in enumerate(CORPUS):
        out.append(("prompt_context", {**common, "hook_event_name": "UserPromptSubmit", "prompt": e["text"]}))
        out.append(("log_action", {**common, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                   "tool_use_id": f"toolu_{i}", "tool_input": {"command": e["text"],
                                                                               "description": "run"},
                                   "tool_response": {"stdout": e["text"], "stderr": e["text"][:80],
                                                     "interrupted": False}, "duration_ms": 12}))
        if i % 10 == 0:
            out.append(("log_action", {**common, "hook_event_name": "PostToolUseFailure", "tool_name": "Write",
                                       "tool_use_id": f"toolu_w{i}",
                                       "tool_input": {"file_path": str(cwd / ".env"), "content": e["text"]},
                                       "error": f"EACCES writing {e['text']}"}))
            out.append(("guardian_tier1", {**common, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                                           "tool_use_id": f"toolu_g{i}",
                                           "tool_input": {"command": f"rm -rf / --no-preserve-root; echo {e['text']}"}}))
    out.append(("session_end", {**common, "hook_event_name": "Stop", "stop_hook_active": False,
                                "last_assistant_message": "Done. " + CORPUS[5]["text"]}))
    out.append(("session_end", {**common, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}))
    return out


def _transcript(path: Path, session: str) -> None:
    lines = []
    for i, e in enumerate(CORPUS):
        lines.append(json.dumps({"type": "user", "sessionId": session, "uuid": f"u{i}", "timestamp":
                                 "2025-05-01T10:00:00.000Z", "message": {"role": "user", "content": e["text"]}}))
        lines.append(json.dumps({"type": "assistant", "sessionId": session, "uuid": f"a{i}", "message": {
            "role": "assistant", "content": [{"type": "text", "text": "Running it."},
                                             {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash",
                                              "input": {"command": e["text"]}}]}}))
        lines.append(json.dumps({"type": "user", "sessionId": session, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": e["text"]}]}}))
    lines.append('{"type": "assistant", "truncated line with ' + CORPUS[0]["secrets"][0])
    path.write_text("\n".join(lines) + "\n")


def test_hook_capture_paths_never_store_a_secret_but_commit_the_episode(s3_env: dict[str, str], sophia_home: Path,
                                                                        tmp_path: Path) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    session = "sess-secrets-0001"
    transcript = tmp_path / "transcript.jsonl"
    _transcript(transcript, session)
    cwd = tmp_path / "proj"
    cwd.mkdir()
    env = {**s3_env, "CLAUDE_PROJECT_DIR": str(cwd)}
    for hook, payload in _payloads(session, transcript, cwd):
        r = subprocess.run(["bash", str(HOOKS[hook])], input=json.dumps(payload), env=env, text=True,
                           capture_output=True, timeout=60, cwd=cwd)
        assert r.returncode in ((0, 2) if hook == "guardian_tier1" else (0,)), (hook, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr, (hook, r.stderr)
    # a conversation full of secrets, ingested into memory and the index
    conv = tmp_path / "conversation.jsonl"
    conv.write_text("".join(json.dumps({"id": f"c{i}", "session": "chat-1", "speaker": "user" if i % 2 else "bot",
                                        "text": e["text"], "timestamp": f"2025-05-01T10:{i % 60:02d}:00Z"}) + "\n"
                            for i, e in enumerate(CORPUS)))
    r = run_s3(["ingest", str(conv), "--source", "secrets-chat"], s3_env)
    assert r.returncode == 0, r.stderr
    assert any(p.name.startswith("secrets-chat") for p in (sophia_home / "memory" / "conversations").iterdir())
    _wait_for_detached_work(sophia_home)
    _stop_embed_service(sophia_home)
    files, findings = scan(sophia_home, SECRETS)
    assert findings == [], "secrets reached disk:\n" + "\n".join(findings[:30])
    idx = json.loads((sophia_home / "episodes" / "index.json").read_text())
    assert any(e.get("session_id") == session for e in idx["entries"]), "the session's episode was not committed"
    stored = {str(p.relative_to(sophia_home)) for p in sophia_home.rglob("*") if p.is_file()}
    assert any(s.startswith("buffers/") for s in stored), sorted(stored)  # the action buffer was scanned too
    # the denied `rm -rf /` commands were logged (redacted), and scanned
    assert any("guardian" in s for s in stored), sorted(stored)


def _stop_embed_service(home: Path) -> None:
    """The embedding service (started by recall/ingest) lives until idle: stop it before scanning."""
    try:
        from embed_helpers import kill_services
    except ImportError:
        return
    kill_services(home)


def _wait_for_detached_work(home: Path, timeout: float = 30.0) -> None:
    """Session end may hand slow work to a detached process: wait until no process runs for this home."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not [p for p in procs.pids_with_home(home) if not procs.is_embed_service(p)]:
            return
        time.sleep(0.2)
