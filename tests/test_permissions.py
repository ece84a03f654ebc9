"""SOPHIA_HOME is 0700 and everything in it 0600/0700 after a full session, even under umask 022."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from conftest import run_s3

ROOT = Path(__file__).resolve().parents[1]
HOOKS = {p.stem: p for p in (ROOT / "hooks").glob("*.sh")} if (ROOT / "hooks").is_dir() else {}


def _loose_umask() -> None:
    os.umask(0o022)


def _run(args: list[str], env: dict[str, str], data: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, input=data, capture_output=True, text=True, timeout=120,
                          preexec_fn=_loose_umask)


def test_tree_is_private_after_a_full_session(s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    s3 = [sys.executable, "-m", "sophia.cli.entry"]
    assert _run(s3 + ["init"], s3_env).returncode == 0
    session, cwd = "perm-session", tmp_path / "proj"
    cwd.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "fix the build"}}) + "\n")
    common = {"session_id": session, "transcript_path": str(transcript), "cwd": str(cwd)}
    events = [("session_start", {"hook_event_name": "SessionStart", "source": "startup"}),
              ("prompt_context", {"hook_event_name": "UserPromptSubmit", "prompt": "fix the build"}),
              ("guardian_tier1", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                                  "tool_input": {"command": "make test"}}),
              ("log_action", {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "make"},
                              "tool_response": {"stdout": "ok", "stderr": ""}}),
              ("session_end", {"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "done"}),
              ("session_end", {"hook_event_name": "SessionEnd", "reason": "other"})]
    for hook, payload in events:
        if hook in HOOKS:
            r = _run(["bash", str(HOOKS[hook])], {**s3_env, "CLAUDE_PROJECT_DIR": str(cwd)},
                     json.dumps({**common, **payload}))
            assert r.returncode in (0, 2), (hook, r.stderr)
    if "learn" in run_s3(["--help"], s3_env).stdout:
        assert _run(s3 + ["learn", "Always run the linter before committing"], s3_env).returncode == 0
    (sophia_home / "self_model.json").write_text("{broken")
    assert _run(s3 + ["doctor", "--repair"], s3_env).returncode == 0  # quarantine/ and backups/ too

    loose = []
    for dirpath, dirs, files in os.walk(sophia_home):
        dirs[:] = [d for d in dirs if d not in ("venv", "kit")]
        mode = stat.S_IMODE(os.stat(dirpath).st_mode)
        if mode != 0o700:
            loose.append(f"{dirpath}: {oct(mode)}")
        for f in files:
            p = os.path.join(dirpath, f)
            if os.path.islink(p):
                continue
            mode = stat.S_IMODE(os.stat(p).st_mode)
            if mode & 0o077:
                loose.append(f"{p}: {oct(mode)}")
    assert loose == [], "\n".join(loose)
    assert (sophia_home / "quarantine").is_dir()
