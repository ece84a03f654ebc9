"""Unit tests of lib/sophia/install/settings_merge.py (the settings.json merge install.sh runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sophia.install import settings_merge as sm

ROOT = Path(__file__).resolve().parents[1]
HOOKS_JSON = ROOT / "hooks" / "hooks.json"
SCRIPT = ROOT / "lib" / "sophia" / "install" / "settings_merge.py"


def plugin_hooks() -> dict:
    return json.loads(HOOKS_JSON.read_text())


def user_settings(home: Path) -> dict:
    return {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"{home}/mine.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "echo done", "timeout": 2}]}],
            "Notification": [],
        },
    }


def ours_for(kit: Path) -> dict:
    return sm.hooks_for_kit(plugin_hooks(), str(kit))


def all_commands(settings: dict) -> list[str]:
    return [h["command"] for groups in settings.get("hooks", {}).values() for g in groups for h in g["hooks"]]


def test_hooks_for_kit_substitutes_and_quotes(tmp_path: Path) -> None:
    kit = tmp_path / "a dir" / "kit"
    ours = ours_for(kit)
    assert set(ours) == {"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd",
                         "SessionStart", "UserPromptSubmit"}
    cmds = sm.commands_of(ours)
    assert len(cmds) == 5
    for c in cmds:
        assert "${CLAUDE_PLUGIN_ROOT}" not in c
        path = sm.command_path(c)
        assert path is not None and path.startswith(str(kit) + "/hooks/") and path.endswith(".sh")
        assert c.startswith("'")  # the space is quoted for the shell
    assert ours["PreToolUse"][0]["matcher"] == "Bash|Write|Edit|MultiEdit|NotebookEdit"
    assert ours["PreToolUse"][0]["hooks"][0]["timeout"] == 10


def test_merge_keeps_user_and_is_idempotent(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    user = user_settings(tmp_path)
    once = sm.merge(user, ours_for(kit), str(kit))
    twice = sm.merge(once, ours_for(kit), str(kit))
    assert once == twice
    assert user == user_settings(tmp_path)  # input untouched
    assert once["model"] == "opus" and once["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert once["hooks"]["PreToolUse"][0] == user["hooks"]["PreToolUse"][0]  # theirs first
    assert once["hooks"]["Notification"] == []
    cmds = all_commands(once)
    assert cmds.count(f"{tmp_path}/mine.sh") == 1 and cmds.count("echo done") == 1
    assert len(cmds) == 2 + 7
    sm.verify_merged(once, ours_for(kit))


def test_strip_removes_only_ours_and_only_emptied_arrays(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    user = user_settings(tmp_path)
    merged = sm.merge(user, ours_for(kit), str(kit))
    stripped, removed = sm.strip_ours(merged, str(kit))
    assert removed == 7
    assert stripped == user  # the user's empty Notification array stays, ours are gone


def test_strip_keeps_a_user_hook_sharing_a_group_with_ours(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    ours_cmd = f"{kit}/hooks/log_action.sh"
    settings = {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "their-logger"}, {"type": "command", "command": ours_cmd}]}]}}
    stripped, removed = sm.strip_ours(settings, str(kit))
    assert removed == 1
    assert stripped == {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "their-logger"}]}]}}


def test_only_ours_then_strip_leaves_empty_object(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    merged = sm.merge({}, ours_for(kit), str(kit))
    assert sm.strip_ours(merged, str(kit)) == ({}, 7)


def test_forget_and_lookalikes(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    old = "/old/place/kit/hooks/guardian_tier1.sh"
    lookalike = f"{kit}-other/hooks/guardian_tier1.sh"  # a prefix match that is not under the kit
    prompt_hook = {"type": "prompt", "prompt": f"{kit}/hooks/x"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": old}, {"type": "command", "command": lookalike}, prompt_hook]}]}}
    stripped, removed = sm.strip_ours(settings, str(kit), frozenset({old}))
    assert removed == 1
    assert stripped["hooks"]["PreToolUse"][0]["hooks"] == [{"type": "command", "command": lookalike}, prompt_hook]


@pytest.mark.parametrize("text, fragment", [
    ('{"hooks": ', "not valid JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"hooks": []}', '"hooks" is not an object'),
    ('{"hooks": {"Stop": [{"matcher": "x"}]}}', "hooks.Stop[0].hooks is missing"),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}', "timeout"),
])
def test_refuses_bad_files_untouched(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-I", "-S", str(SCRIPT), "merge", "--settings", str(path),
                           "--hooks-json", str(HOOKS_JSON), "--kit", str(tmp_path / "kit")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert fragment in proc.stderr and proc.stderr.count("\n") == 1
    assert path.read_text() == text
    assert list(path.parent.iterdir()) == [path]


def run_cli(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-I", "-S", str(SCRIPT), *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_cli_round_trip_with_backups_and_modes(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    path = tmp_path / "settings.json"
    original = user_settings(tmp_path)
    path.write_text(json.dumps(original))
    os.chmod(path, 0o640)
    out = run_cli("merge", "--settings", str(path), "--hooks-json", str(HOOKS_JSON), "--kit", str(kit))
    assert out["changed"] and out["backup"] and len(out["commands"]) == 5
    assert json.loads(Path(out["backup"]).read_text()) == original
    assert path.stat().st_mode & 0o777 == 0o640
    again = run_cli("merge", "--settings", str(path), "--hooks-json", str(HOOKS_JSON), "--kit", str(kit))
    assert not again["changed"] and again["backup"] is None
    dry = run_cli("remove", "--settings", str(path), "--kit", str(kit), "--dry-run")
    assert dry["changed"] and dry["removed"] == 7
    assert len(all_commands(json.loads(path.read_text()))) == 9
    out = run_cli("remove", "--settings", str(path), "--kit", str(kit))
    assert json.loads(path.read_text()) == original
    assert len(list(tmp_path.glob("settings.json.sophia-bak-*"))) == 2


def test_cli_delete_if_empty_and_symlink(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    run_cli("merge", "--settings", str(link), "--hooks-json", str(HOOKS_JSON), "--kit", str(kit))
    assert link.is_symlink() and len(all_commands(json.loads(real.read_text()))) == 7
    # a symlinked file is never deleted, only emptied through the link
    out = run_cli("remove", "--settings", str(link), "--kit", str(kit), "--delete-if-empty")
    assert not out["deleted"] and link.is_symlink() and json.loads(real.read_text()) == {}
    plain = tmp_path / "plain.json"
    run_cli("merge", "--settings", str(plain), "--hooks-json", str(HOOKS_JSON), "--kit", str(kit))
    out = run_cli("remove", "--settings", str(plain), "--kit", str(kit), "--delete-if-empty")
    assert out["deleted"] and not plain.exists()
    assert not list(tmp_path.glob("plain.json.sophia-bak-*"))
