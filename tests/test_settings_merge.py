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


# hooks/hooks.json's hook entries and distinct scripts (counted there, not written down twice)
N_ENTRIES = sum(len(g["hooks"]) for groups in plugin_hooks()["hooks"].values() for g in groups)
N_SCRIPTS = len({h["command"] for groups in plugin_hooks()["hooks"].values() for g in groups for h in g["hooks"]})


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
                         "SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact"}
    cmds = sm.commands_of(ours)
    assert len(cmds) == N_SCRIPTS == 6
    for c in cmds:
        assert "${CLAUDE_PLUGIN_ROOT}" not in c
        path = sm.command_path(c)
        assert path is not None and path.startswith(str(kit) + "/hooks/") and path.endswith(".sh")
        assert c.startswith("'")  # the space is quoted for the shell
    assert ours["PreToolUse"][0]["matcher"] == "Bash|PowerShell|Write|Edit|MultiEdit|NotebookEdit|Read|Grep|Glob|WebFetch|WebSearch"
    assert ours["PreToolUse"][1]["matcher"] == "mcp__.*"
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
    assert len(cmds) == 2 + N_ENTRIES
    sm.verify_merged(once, ours_for(kit))


def test_strip_removes_only_ours_and_only_emptied_arrays(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    user = user_settings(tmp_path)
    merged = sm.merge(user, ours_for(kit), str(kit))
    stripped, removed = sm.strip_ours(merged, str(kit))
    assert removed == N_ENTRIES
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
    assert sm.strip_ours(merged, str(kit)) == ({}, N_ENTRIES)


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
    assert out["changed"] and out["backup"] and len(out["commands"]) == N_SCRIPTS
    assert json.loads(Path(out["backup"]).read_text()) == original
    assert path.stat().st_mode & 0o777 == 0o640
    again = run_cli("merge", "--settings", str(path), "--hooks-json", str(HOOKS_JSON), "--kit", str(kit))
    assert not again["changed"] and again["backup"] is None
    dry = run_cli("remove", "--settings", str(path), "--kit", str(kit), "--dry-run")
    assert dry["changed"] and dry["removed"] == N_ENTRIES
    assert len(all_commands(json.loads(path.read_text()))) == 2 + N_ENTRIES
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
    assert link.is_symlink() and len(all_commands(json.loads(real.read_text()))) == N_ENTRIES
    # a symlinked file is never deleted, only emptied through the link
    out = run_cli("remove", "--settings", str(link), "--kit", str(kit), "--delete-if-empty")
    assert not out["deleted"] and link.is_symlink() and json.loads(real.read_text()) == {}
    plain = tmp_path / "plain.json"
    run_cli("merge", "--settings", str(plain), "--hooks-json", str(HOOKS_JSON), "--kit", str(kit))
    out = run_cli("remove", "--settings", str(plain), "--kit", str(kit), "--delete-if-empty")
    assert out["deleted"] and not plain.exists()
    assert not list(tmp_path.glob("plain.json.sophia-bak-*"))


# ---------------------------------------------------------------------------------------------
# claude_md: the System 3 block out of CLAUDE.md again (uninstall)

from sophia import identity_md  # noqa: E402
from sophia.install import claude_md  # noqa: E402


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("orig", ["# Mine\n", "# Mine", "# Mine\n\n", "\n# Mine\n\n\n", "a\r\nb\r\n", "x\n\n\n\n"])
def test_strip_block_gives_back_the_users_bytes(orig: str) -> None:
    once = identity_md.splice(orig, "block v1")
    twice = identity_md.splice(once, "block v2\n\nlonger")  # a later refresh replaces it in place
    assert claude_md.strip_block(twice, _sha(orig)) == orig


def test_strip_block_without_a_record_prefers_one_final_newline() -> None:
    for orig in ("# Mine\n", "# Mine\n\n", "# Mine"):
        assert claude_md.strip_block(identity_md.splice(orig, "b")) == "# Mine\n"


def test_strip_block_keeps_what_the_user_wrote_around_the_block() -> None:
    text = identity_md.splice("top\n", "b") + "written after\n"
    assert claude_md.strip_block("edited " + text) == "edited top\n\nwritten after\n"
    assert claude_md.strip_block("no block here\n") is None
    assert claude_md.strip_block(identity_md.splice("", "b")) == ""
    assert claude_md.strip_block(f"{identity_md.BEGIN}\nhalf a block\n") is None


def test_plan_and_clean_restore_mode_and_remove_lock(tmp_path: Path) -> None:
    md = tmp_path / "CLAUDE.md"
    md.write_bytes(b"# Mine\r\n")
    md.chmod(0o644)
    record = claude_md.snapshot(md)
    assert record["existed"] is True and record["mode"] == 0o644
    md.write_bytes(identity_md.splice("# Mine\r\n", "b").encode())
    md.chmod(0o600)
    (tmp_path / "CLAUDE.md.lock").write_text("")
    step = claude_md.plan(md, record)
    assert step is not None and step["action"] == "strip"
    claude_md.clean(step)
    assert md.read_bytes() == b"# Mine\r\n"
    assert md.stat().st_mode & 0o777 == 0o644
    assert not (tmp_path / "CLAUDE.md.lock").exists()
    assert claude_md.plan(md, record) is None


def test_plan_deletes_a_file_the_install_did_not_find(tmp_path: Path) -> None:
    md = tmp_path / "CLAUDE.md"
    record = claude_md.snapshot(md)
    assert record["existed"] is False
    md.write_text(identity_md.splice("", "b"))
    step = claude_md.plan(md, record)
    assert step is not None and step["action"] == "delete"
    claude_md.clean(step)
    assert not md.exists()
    # a file that already held a block at install time: nothing is known, an emptied one goes too
    md.write_text(identity_md.splice("", "b"))
    assert claude_md.snapshot(md)["existed"] is None
