"""The settings the install produces, and the plugin manifests, against Claude Code's JSON schemas.

The schemas are vendored in ``tests/schemas/`` (byte-for-byte copies of ``../shared/data/schemas/``, see
the README there), so these tests run on any clone. ``claude plugin validate`` runs the real client.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sophia.install import settings_merge as sm

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "tests" / "schemas"
HOOKS_JSON = ROOT / "hooks" / "hooks.json"

jsonschema = pytest.importorskip("jsonschema")


def validator(name: str):  # type: ignore[no-untyped-def]
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def errors(v, doc: object) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]


def merged(kit: Path, base: dict) -> dict:
    return sm.merge(base, sm.hooks_for_kit(json.loads(HOOKS_JSON.read_text()), str(kit)), str(kit))


USER = {
    "model": "opus",
    "env": {"FOO": "bar"},
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/x/mine.sh", "timeout": 3}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


@pytest.mark.parametrize("base", [{}, USER], ids=["fresh", "with-user-settings"])
def test_merged_settings_are_schema_valid(tmp_path: Path, base: dict) -> None:
    v = validator("claude-code-settings.json")
    assert errors(v, base) == []
    doc = merged(tmp_path / "home dir" / ".sophia" / "kit", base)
    assert errors(v, doc) == []
    assert set(doc["hooks"]) >= {"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop",
                                 "SessionEnd", "PreCompact", "PostCompact"}


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    v = validator("claude-code-settings.json")
    doc = merged(tmp_path / "kit", {})
    doc["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = "ten"
    doc["hooks"]["Stop"][0]["hooks"][0]["kind"] = "command"
    assert len(errors(v, doc)) >= 2


def test_settings_written_by_the_cli_are_schema_valid(tmp_path: Path) -> None:
    v = validator("claude-code-settings.json")
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(USER))
    assert sm.main(["merge", "--settings", str(path), "--hooks-json", str(HOOKS_JSON),
                    "--kit", str(tmp_path / "kit")]) == 0
    assert errors(v, json.loads(path.read_text())) == []


def test_plugin_manifest_is_schema_valid() -> None:
    v = validator("claude-code-plugin-manifest.json")
    doc = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert errors(v, doc) == []
    assert doc["name"] == "sophia-system3"
    for key in ("version", "description", "author", "homepage", "license", "keywords"):
        assert doc.get(key), key


def test_marketplace_is_schema_valid() -> None:
    v = validator("claude-code-marketplace.json")
    doc = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert errors(v, doc) == []
    assert [p["name"] for p in doc["plugins"]] == ["sophia-system3"]
    assert doc["plugins"][0]["source"] == "./"


def test_plugin_hooks_json_shape() -> None:
    """hooks/hooks.json is the one source of the hook table: every command is a script that exists."""
    doc = json.loads(HOOKS_JSON.read_text())
    v = validator("claude-code-settings.json")
    assert errors(v, {"hooks": doc["hooks"]}) == []
    for cmd in sm.commands_of(doc["hooks"]):
        rel = cmd.strip('"').replace("${CLAUDE_PLUGIN_ROOT}/", "")
        assert (ROOT / rel).is_file() and os.access(ROOT / rel, os.X_OK), rel


def claude_binary() -> str | None:
    env = os.environ.get("SOPHIA_TEST_CLAUDE")
    if env and os.access(env, os.X_OK):
        return env
    return shutil.which("claude")


def validate(tmp_path: Path, target: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    claude = claude_binary()
    if not claude:
        pytest.skip("claude binary not found (set SOPHIA_TEST_CLAUDE or put claude on PATH)")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "CLAUDE"))}
    env.update(HOME=str(home), DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    return subprocess.run([claude, "plugin", "validate", target], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("target", [".", ".claude-plugin/plugin.json"], ids=["marketplace", "plugin+hooks"])
def test_claude_plugin_validate(tmp_path: Path, target: str) -> None:
    proc = validate(tmp_path, target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Validation passed" in proc.stdout


def test_claude_plugin_validate_checks_our_hooks_json(tmp_path: Path) -> None:
    """Negative control: the same plugin with a broken hooks/hooks.json fails validation."""
    copy = tmp_path / "plugin"
    shutil.copytree(ROOT / ".claude-plugin", copy / ".claude-plugin")
    shutil.copytree(ROOT / "hooks", copy / "hooks")
    doc = json.loads(HOOKS_JSON.read_text())
    doc["hooks"]["PreToolUse"][0]["hookz"] = doc["hooks"]["PreToolUse"][0].pop("hooks")
    (copy / "hooks" / "hooks.json").write_text(json.dumps(doc))
    proc = validate(tmp_path, ".claude-plugin/plugin.json", cwd=copy)
    assert proc.returncode != 0
    assert "hooks.PreToolUse.0.hooks" in proc.stdout + proc.stderr
