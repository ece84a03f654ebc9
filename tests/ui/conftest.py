"""A state home built by the real hooks and `s3` commands, and the real `s3 ui` server on it.

The state: `s3 init`; a session through hooks/session_end.sh (an episode with actions and errors);
rules by `s3 learn` (one of them hostile HTML); facts, foresight, profile, causal links, procedures and a
scene by `s3 apply extraction`; a deny and an ask by hooks/guardian_tier1.sh, then the ask let through
once by `s3 guardian allow-once`; a digest job by hooks/compact.sh with learning on; two sessions of a
project read by `s3 backfill` (`cd shop && pytest -q` fails in colour, a variant passes: a fix, a playbook
command, an episode whose error came with terminal escapes); and, when the shared data is there, the real
sessions of shared/data/transcripts read by `s3 backfill` (their episodes, fixes and procedures).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "lib"
FIX = ROOT / "tests" / "fixtures"
SID = "b60c9b2f-790f-4a53-81eb-ca4204d1f601"
HOSTILE = ["<script>alert(1)</script>", "\"'><img src=x onerror=alert(2)>"]
HOSTILE_RULE = f"Never trust {HOSTILE[0]} or {HOSTILE[1]} in a page"
DOCKER_RULE = "Always run docker compose down before rebuilding the images of a stack"
URL = re.compile(r"(http://([\d.]+|\[[\w:]+\]):(\d+)/\?token=([\w-]+))")


def env_for(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
    env.update(HOME=str(tmp), SOPHIA_HOME=str(tmp / ".sophia"), PYTHONPATH=str(LIB),
               SOPHIA_PYTHON=os.path.realpath(sys.executable), SOPHIA_RECALL_SEMANTIC="0")
    return env


def s3(args: list[str], env: dict[str, str], input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([sys.executable, "-m", "sophia.cli.entry", *args], env=env, input=input,
                       capture_output=True, text=True, timeout=120)
    if check:
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def hook(name: str, payload: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["bash", str(ROOT / "hooks" / name)], input=json.dumps(payload), env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 2), (name, r.stdout, r.stderr)
    return r


def _set_config(home: Path, **values: Any) -> None:
    p = home / "config.json"
    cfg = json.loads(p.read_text())
    cfg.update(values)
    p.write_text(json.dumps(cfg))


def build_state(tmp: Path) -> dict[str, Any]:
    """The state home under ``tmp``; returns the ids the tests look for."""
    env = env_for(tmp)
    home = tmp / ".sophia"
    s3(["init"], env)
    _backfill_shared(tmp, env)
    shop = _backfill_own(tmp, env)
    project = tmp / "proj"
    project.mkdir()
    transcript = tmp / "t.jsonl"
    transcript.write_text((FIX / "lifecycle" / "transcript_basic.jsonl").read_text().replace("@PROJECT@", str(tmp)))
    hook("session_end.sh", {"session_id": SID, "transcript_path": str(transcript), "cwd": str(project),
                            "hook_event_name": "SessionEnd", "reason": "other"}, env)
    episode = next(e for e in (json.loads(p.read_text()) for p in (home / "episodes").glob("ep_*.json"))
                   if e["session_id"] == SID)
    rules = {}
    for text in (DOCKER_RULE, HOSTILE_RULE):
        rules[text] = json.loads(s3(["learn", text, "--json"], env).stdout)["rule"]["id"]
    extraction = json.loads((FIX / "contracts" / "extraction" / "valid" / "full.json").read_text())
    extraction["episode_id"] = episode["id"]
    extraction["links"][1]["target_id"] = episode["id"]
    s3(["apply", "extraction", "-", "--json"], env, input=json.dumps(extraction))
    for command in ("rm -rf /", "git push --force origin feature/x"):
        hook("guardian_tier1.sh", {"session_id": SID, "transcript_path": str(transcript), "cwd": str(project),
                                   "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                                   "tool_input": {"command": command}, "tool_use_id": "toolu_01"}, env)
    s3(["guardian", "allow-once", "--match", "git push", "--yes"], env, input="")
    hook("guardian_tier1.sh", {"session_id": SID, "transcript_path": str(transcript), "cwd": str(project),
                               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": "git push --force origin feature/x"}, "tool_use_id": "toolu_02"}, env)
    _set_config(home, learning_enabled=True)
    hook("compact.sh", {"session_id": SID, "transcript_path": str(transcript), "cwd": str(project),
                        "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}, env)
    _set_config(home, learning_enabled=False)
    return {"env": env, "home": home, "episode": episode["id"], "rules": rules, "transcript": str(transcript),
            "shop": str(shop), "shop_transcript": str(tmp / "own" / "shop" / f"{OWN[0]}.jsonl")}


OWN = ("00000001-1111-4222-8333-444455556666", "00000002-1111-4222-8333-444455556666")
ANSI_ERROR = "\x1b[0;31mE   ModuleNotFoundError: No module named 'widgets'\x1b[0m"


def _own_session(root: Path, cwd: Path, sid: str, day: str) -> None:
    """A session in ``cwd``: `cd DIR && pytest -q` fails (its error in terminal colours), a file is edited,
    `pytest -q --import-mode=importlib` passes."""
    lines: list[dict[str, Any]] = [{"type": "user", "cwd": str(cwd), "sessionId": sid, "timestamp": f"{day}T10:00:00.000Z",
                                    "message": {"role": "user", "content": "make the widgets tests pass"}}]
    calls = [("Bash", {"command": f"cd {cwd} && pytest -q"}, f"Exit code 1\n{ANSI_ERROR}", True),
             ("Edit", {"file_path": f"{cwd}/src/widgets.py", "old_string": "a", "new_string": "b"}, "ok", False),
             ("Bash", {"command": "pytest -q --import-mode=importlib"}, "3 passed in 0.1s", False)]
    for i, (tool, inp, result, error) in enumerate(calls, 1):
        cid = f"{sid[:8]}-t{i}"
        lines.append({"type": "assistant", "cwd": str(cwd), "sessionId": sid, "timestamp": f"{day}T10:00:0{i}.000Z",
                      "message": {"role": "assistant", "content": [{"type": "tool_use", "id": cid, "name": tool,
                                                                    "input": inp}]}})
        lines.append({"type": "user", "cwd": str(cwd), "sessionId": sid, "timestamp": f"{day}T10:00:0{i}.500Z",
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid,
                                                               "content": result, "is_error": error}]}})
    lines.append({"type": "assistant", "cwd": str(cwd), "sessionId": sid, "timestamp": f"{day}T10:00:09.000Z",
                  "message": {"role": "assistant", "content": [{"type": "text", "text": "The tests pass now."}]}})
    (root / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def _backfill_own(tmp: Path, env: dict[str, str]) -> Path:
    """Two sessions of the project ``shop`` read by `s3 backfill`: a fix and a playbook command, with evidence."""
    shop = tmp / "shop"
    (shop / ".git").mkdir(parents=True)
    root = tmp / "own" / "shop"
    root.mkdir(parents=True)
    for sid, day in zip(OWN, ("2026-03-02", "2026-03-09"), strict=True):
        _own_session(root, shop, sid, day)
    s3(["backfill", "--from", str(tmp / "own"), "--no-digest"], env)
    return shop


def _backfill_shared(tmp: Path, env: dict[str, str]) -> None:
    """`s3 backfill --from` a folder laid out as ~/.claude/projects (a link per shared transcript)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from shared_data import shared_path

    src = shared_path("data/transcripts")
    if not src.is_dir():
        return
    for f in sorted(src.glob("*.jsonl")):
        owner, _, rest = f.name.partition("__")
        (tmp / "projects" / owner).mkdir(parents=True, exist_ok=True)
        (tmp / "projects" / owner / rest.partition("__")[2]).symlink_to(f)
    s3(["backfill", "--from", str(tmp / "projects"), "--no-digest"], env)


class Server:
    """`s3 ui --no-open` as a subprocess on a free port; ``url`` carries the token."""

    def __init__(self, env: dict[str, str], *extra: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "sophia.cli.entry", "ui", "--no-open", *extra], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = URL.search(line)
        if m is None:
            self.proc.kill()
            raise AssertionError(f"no URL printed: {line!r} {self.proc.communicate()[1]!r}")
        self.url, self.addr, self.port, self.token = m.group(1), m.group(2), int(m.group(3)), m.group(4)
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self) -> tuple[int, str]:
        """Ctrl-C, as a person stops it: (exit code, stderr)."""
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_state(tmp_path_factory.mktemp("ui"))


@pytest.fixture(scope="module")
def server(state: dict[str, Any]) -> Iterator[Server]:
    srv = Server(state["env"])
    yield srv
    code, err = srv.stop()
    assert code == 0 and "stopped" in err and "Traceback" not in err, (code, err)


def gone(pid: int) -> bool:
    """No such process, or a zombie (an exited child not yet reaped by whoever adopted it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)
