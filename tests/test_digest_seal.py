"""The digest's seal (sophia.learning.seal, seal_gate): which calls the hook lets through to the client's own
rules, that it fails closed, and what of the user's settings a sealed run keeps. The real client against
these is tests/e2e/test_sealed_digest_e2e.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sophia.learning import seal, seal_gate

T = "/home/u/.claude/projects/-work-widgets/5e55.jsonl"
REFLECT = ("recall", "list")

PASSES = [
    "s3 recall word",
    "s3 recall 'Has this failure happened before?' --json --limit 5",
    's3 recall "widgets deploy" -n 3 --type rule --type episode',
    "s3 recall 'a b' --limit=5 --json --project /work/widgets --as-of 2026-11-20 --known-at 2026-11-21",
    "s3 list rules --json",
    "s3 list rules",
]
DENIED = [
    f"cat {T}",
    f"s3 recall x; cat {T}",
    f"s3 recall x && cat {T}",
    f"s3 recall x | tee {T}",
    f"s3 recall $(cat {T})",
    f"s3 recall `cat {T}`",
    f's3 recall "$(cat {T})"',
    's3 recall "$HOME"',
    f"s3 recall x > {T}",
    f"s3 recall x < {T}",
    f"s3 recall --queries {T}",
    f"s3 recall --queries={T}",
    "s3 recall --queries -",
    "s3 recall x --explain",
    "s3 recall x --team",
    "s3 recall x --limit 0",
    "s3 recall x --limit 5000",
    "s3 recall x --json=1",
    "s3 recall --type 'a b' x",
    "s3 recall a b",
    "s3 recall",
    "s3 recall -- --queries",
    "s3 recall ~/.claude",
    "s3 recall *.jsonl",
    "s3 recall x\ncat /etc/passwd",
    "s3 recall 'x\ny'",
    "s3 recall x\tcat",
    "s3 recall 'unclosed",
    "s3 recall \\x",
    "S=1 s3 recall x",
    "/usr/bin/s3 recall x",
    "s3 list ../rules",
    "s3 list rules extra",
    "s3 forget rule_1",
    "s3 learn 'x'",
    "s3 apply reflection /tmp/x.json",
]


def call(command: str, tool: str = "Bash", **extra: object) -> dict[str, object]:
    return {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {"command": command, **extra}}


@pytest.mark.parametrize("command", PASSES)
def test_an_exact_recall_or_list_goes_on_to_the_clients_rules(command: str) -> None:
    seal_gate.judge(call(command, description="recall"), REFLECT)


@pytest.mark.parametrize("command", DENIED)
def test_anything_else_in_bash_is_denied(command: str) -> None:
    with pytest.raises(seal_gate.Denied):
        seal_gate.judge(call(command), REFLECT)


def test_a_stage_may_run_only_its_own_subcommands_and_no_other_tool() -> None:
    with pytest.raises(seal_gate.Denied):
        seal_gate.judge(call("s3 recall word"), ("list",))  # consolidate: s3 list only
    with pytest.raises(seal_gate.Denied):
        seal_gate.judge(call("s3 list rules"), ())  # extract, audit: nothing at all
    for tool, inp in [("Read", {"file_path": T}), ("Glob", {"pattern": "**/*.jsonl"}), ("Grep", {"pattern": "AKIA"}),
                      ("WebFetch", {"url": f"file://{T}"}), ("mcp__files__read_file", {"path": T}),
                      ("Agent", {"prompt": "read it"}), ("Write", {"file_path": "/tmp/x", "content": ""})]:
        with pytest.raises(seal_gate.Denied):
            seal_gate.judge({"tool_name": tool, "tool_input": inp}, REFLECT)
    with pytest.raises(seal_gate.Denied):  # a background shell, or the sandbox switched off
        seal_gate.judge(call("s3 recall word", run_in_background=True), REFLECT)
    with pytest.raises(seal_gate.Denied):
        seal_gate.judge(call("s3 recall word", dangerouslyDisableSandbox=True), REFLECT)


def gate(payload: bytes, *s3: str, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    """The hook as the client runs it: its shell command line, the payload on stdin."""
    r = subprocess.run(["/bin/sh", "-c", seal.gate_command(s3, python)], input=payload, capture_output=True,
                       timeout=30, check=False)
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode())


def test_the_hook_denies_with_exit_2_and_stays_silent_on_a_call_it_lets_through() -> None:
    ok = gate(json.dumps(call("s3 recall word")).encode(), *REFLECT)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "", "")  # never "allow": the client still judges
    no = gate(json.dumps(call(f"cat {T}")).encode(), *REFLECT)
    assert no.returncode == 2 and no.stdout == ""
    assert "denied" in no.stderr and "s3 recall '<words>'" in no.stderr
    none = gate(json.dumps(call("s3 recall word")).encode())
    assert none.returncode == 2 and "no tool" in none.stderr


@pytest.mark.parametrize("payload", [b"", b"not json", b"[1, 2]", b'{"tool_name": "Bash"}', b"\xff\xfe"])
def test_the_hook_fails_closed_on_a_payload_it_cannot_judge(payload: bytes) -> None:
    assert gate(payload, *REFLECT).returncode == 2


def test_a_missing_interpreter_denies(tmp_path: Path) -> None:
    """Claude Code lets a call through on any exit code but 2: the command line turns a failure into 2."""
    r = gate(json.dumps(call("s3 recall word")).encode(), *REFLECT, python=str(tmp_path / "no-python"))
    assert r.returncode == 2


def test_the_run_keeps_of_the_users_settings_only_how_to_reach_the_model(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "claude-config"
    cfg.mkdir()
    (cfg / "settings.json").write_text(json.dumps({
        "env": {"ANTHROPIC_BASE_URL": "https://proxy.example"}, "apiKeyHelper": "/usr/local/bin/key",
        "permissions": {"allow": ["Bash", "Read"]}, "disableAllHooks": True, "enabledPlugins": {"x@y": True},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "true"}]}]}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(cfg))
    s = seal.settings(("recall",))
    assert set(s) == {"env", "apiKeyHelper", "autoMemoryEnabled", "hooks"} and s["autoMemoryEnabled"] is False
    assert s["env"] == {"ANTHROPIC_BASE_URL": "https://proxy.example"}
    (hook,) = s["hooks"]["PreToolUse"]
    assert hook["matcher"] == "*" and hook["hooks"][0]["command"].endswith("seal_gate.py recall || exit 2")
    (cfg / "settings.json").write_text("{broken")
    assert set(seal.settings(())) == {"autoMemoryEnabled", "hooks"}


def test_the_clients_own_restrictions_per_stage() -> None:
    none, reflect = seal.client_args(()), seal.client_args(REFLECT)
    for args in (none, reflect):
        assert args[args.index("--setting-sources") + 1] == "" and args[args.index("--permission-mode") + 1] == "dontAsk"
        assert "--strict-mcp-config" in args and json.loads(args[args.index("--mcp-config") + 1]) == {"mcpServers": {}}
    assert none[none.index("--tools") + 1] == "" and "--allowedTools" not in none
    assert reflect[reflect.index("--tools") + 1] == "Bash"
    assert reflect[reflect.index("--allowedTools") + 1] == "Bash(s3 recall:*),Bash(s3 list:*)"
