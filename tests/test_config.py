"""config.json: one table of defaults (sophia.config_defaults) that the model, the template and the
stdlib readers agree on; no setting that does nothing; a bad value is one clear error in the CLI and
a default plus one log line in a hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_s3
from sophia import config_defaults, paths
from sophia.atomic import read_json, write_json_atomic
from sophia.embed_client import settings as embed_settings
from sophia.guardian import config as guardian_config
from sophia.hooks.runtime import load_config
from sophia.migrations import CURRENT, migrate
from sophia.models import Config, ContextConfig, GuardianConfig, SelfModel
from sophia.state import check_tree, init_tree, template_json

# One value each key must refuse (wrong type or out of range or not a choice).
BAD: dict[str, Any] = {
    "schema_version": 12, "embedding_provider": "openai", "embedding_model": "text-embedding-3-small",
    "embedding_backend": "faiss", "embedding_idle_seconds": 0, "embedding_batch_size": 4096,
    "embedding_threads": -1, "reflection_trigger": "always", "reflection_every_n_episodes": 0,
    "reflection_max_turns": 500, "reflection_timeout_seconds": 5, "consolidation_min_episodes": "5",
    "learning_enabled": "true", "learning_daily_max_jobs": -1, "learning_daily_max_usd": 1000.0,
    "learning_exclude_projects": ["relative/path"], "learning_model": "",
    "current_user": "../etc", "guardian.mode": "loud", "guardian.allow": "x", "guardian.deny": ["("], "guardian.mcp_allow": "mcp__x__*", "guardian.mcp_deny": [""],
    "guardian.tier3_enabled": "on",
    "context.session_start_enabled": "yes", "context.session_start_max_tokens": 50,
    "context.prompt_context_enabled": 1, "context.prompt_context_max_items": 99,
    "context.prompt_context_min_score": 2.0, "context.include_ingested": "no",
}


def _nested(key: str, value: Any) -> dict[str, Any]:
    section, _, name = key.rpartition(".")
    return {section: {name: value}} if section else {key: value}


def _fields(model: type[Any], prefix: str = "") -> dict[str, Any]:
    out = {}
    for name, f in model.model_fields.items():
        if f.annotation in ("GuardianConfig", "ContextConfig") or name in ("guardian", "context"):
            continue
        out[prefix + name] = f
    return out


def test_model_template_and_table_agree() -> None:
    fields = {**_fields(Config), **_fields(GuardianConfig, "guardian."), **_fields(ContextConfig, "context.")}
    assert set(fields) == set(config_defaults.BY_KEY)
    for key, s in config_defaults.BY_KEY.items():
        f = fields[key]
        default = f.default_factory() if f.default_factory else f.default  # type: ignore[call-arg]
        assert default == s.default, key
        assert f.description == s.doc, key
    assert Config().model_dump(mode="json") == config_defaults.defaults()
    assert template_json("config.json") == config_defaults.defaults(), (
        "regenerate: python -m sophia.config_defaults > lib/sophia/templates/config.json")
    assert CURRENT == config_defaults.SCHEMA_VERSION == Config().schema_version
    assert set(BAD) == set(config_defaults.BY_KEY), "every key needs a refused value in BAD"


def test_readme_documents_every_key() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    for key in config_defaults.BY_KEY:
        assert f"`{key}`" in section, key


@pytest.mark.parametrize("key", sorted(BAD))
def test_each_bad_value_is_an_error_for_the_model_and_a_default_for_hooks(key: str, sophia_home: Path) -> None:
    raw = _nested(key, BAD[key])
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        Config.model_validate(raw)
    resolved, problems = config_defaults.check(raw)
    assert len(problems) == 1 and problems[0].startswith(key)
    section, _, name = key.rpartition(".")
    got = resolved[section][name] if section else resolved[key]
    s = config_defaults.BY_KEY[key]
    assert got == ([] if s.kind == "regexes" else s.fallback)
    sophia_home.mkdir(parents=True)
    paths.config_path().write_text(json.dumps(raw))
    cfg = load_config(sophia_home)  # the hooks' reader: never raises, logs one line
    assert (cfg[section][name] if section else cfg[key]) == got
    log = (sophia_home / "logs" / "hooks.log").read_text().splitlines()
    assert len(log) == 1 and key in log[0]


@pytest.mark.parametrize("key", sorted(config_defaults.REMOVED))
def test_settings_that_did_nothing_are_gone(key: str) -> None:
    """user_mode and guardian_tier3_enabled were accepted and never read."""
    assert key not in Config.model_fields
    assert key not in template_json("config.json")
    with pytest.raises(ValueError, match=f"{key}: no longer a setting"):
        Config.model_validate({key: "single" if key == "user_mode" else True})


def test_openai_provider_is_one_clear_error_in_doctor(s3_env: dict[str, str], sophia_home: Path) -> None:
    """It used to be accepted and silently mean keyword-only recall."""
    init_tree()
    cfg = read_json(paths.config_path())
    cfg["embedding_provider"] = "openai"
    write_json_atomic(paths.config_path(), cfg)
    r = run_s3(["doctor"], s3_env)
    assert r.returncode == 1
    assert 'embedding_provider: "openai" is not supported (expected one of local, none)' in r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    r = run_s3(["status"], s3_env)
    assert r.returncode != 0 and "embedding_provider" in r.stderr and "Traceback" not in r.stderr
    es = embed_settings.load(sophia_home)  # the stdlib reader: no service starts for it
    assert es.provider == "none" and not es.enabled and "embedding_provider" in es.problems[0]


def test_embedding_model_is_read_and_checked(sophia_home: Path) -> None:
    """embedding_model was never read: any string was accepted and MiniLM loaded regardless."""
    init_tree()
    assert embed_settings.load(sophia_home).model == "all-MiniLM-L6-v2"
    cfg = read_json(paths.config_path())
    cfg["embedding_model"] = "text-embedding-3-small"
    write_json_atomic(paths.config_path(), cfg)
    assert any("embedding_model" in p.reason for p in check_tree(extras=False))
    es = embed_settings.load(sophia_home)
    assert es.model == "all-MiniLM-L6-v2" and "embedding_model" in es.problems[0]
    from sophia.embed.model import EmbeddingsUnavailable, model_path

    with pytest.raises(EmbeddingsUnavailable, match="not supported"):
        model_path("text-embedding-3-small")


def test_guardian_keeps_its_good_patterns_when_one_is_bad(sophia_home: Path) -> None:
    sophia_home.mkdir(parents=True)
    paths.config_path().write_text(json.dumps({"guardian": {"mode": "warn", "deny": ["(", r"\bnpm publish\b"]}}))
    g = guardian_config.load(str(sophia_home))
    assert g.mode == "warn" and [p.pattern for p in g.deny] == [r"\bnpm publish\b"]
    assert len(g.notes) == 1 and "not a valid regex" in g.notes[0]


def test_a_hook_with_a_bad_config_runs_and_leaves_one_log_line(s3_env: dict[str, str], sophia_home: Path) -> None:
    init_tree()
    cfg = read_json(paths.config_path())
    cfg["context"]["session_start_max_tokens"] = "lots"
    write_json_atomic(paths.config_path(), cfg)
    payload = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup",
                          "cwd": str(sophia_home.parent)})
    r = subprocess.run(["bash", str(ROOT / "hooks/session_start.sh")], input=payload,
                       env={**s3_env, "SOPHIA_PYTHON": sys.executable}, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    log = (sophia_home / "logs" / "hooks.log").read_text().splitlines()
    assert len(log) == 1 and "context.session_start_max_tokens" in log[0]


OLD_CONFIG = {"schema_version": "1.1.0", "embedding_provider": "openai", "embedding_model": "all-MiniLM-L6-v2",
              "reflection_trigger": "manual", "guardian_tier3_enabled": True, "consolidation_min_episodes": 5,
              "user_mode": "single", "current_user": "default",
              "guardian": {"mode": "warn", "allow": [], "deny": ["npm publish"]}, "context": {}}
DROPPED = ("current_state", "installed_skills", "installed_hooks", "available_agents")


def _old_tree(home: Path) -> None:
    home.mkdir(parents=True)
    write_json_atomic(paths.config_path(), OLD_CONFIG)
    sm = SelfModel().model_dump(mode="json")
    sm.update(current_state={"status": "IDLE", "active_goal": None}, installed_skills=[], installed_hooks=[],
              available_agents=[], identity_goal="Keep my goal")
    write_json_atomic(paths.self_model_path(), sm)


def test_migration_1_2_0_removes_what_did_nothing(s3_env: dict[str, str], sophia_home: Path) -> None:
    _old_tree(sophia_home)
    assert "run `s3 init` to migrate" in check_tree(extras=False)[0].reason
    r = run_s3(["init"], s3_env)
    assert r.returncode == 0, r.stderr
    assert 'embedding_provider "openai"' in r.stdout and "removed `user_mode`" in r.stdout
    cfg = read_json(paths.config_path())
    assert cfg["schema_version"] == CURRENT and cfg["embedding_provider"] == "none"
    assert "user_mode" not in cfg and "guardian_tier3_enabled" not in cfg
    assert cfg["guardian"]["deny"] == ["npm publish"] and cfg["guardian"]["mode"] == "warn"
    sm = read_json(paths.self_model_path())
    assert not set(DROPPED) & set(sm) and sm["identity_goal"] == "Keep my goal"
    assert list((sophia_home / "backups").glob("pre-migration-1.1.0-*"))
    assert "openai" in (sophia_home / "logs" / "migrations.log").read_text()
    assert check_tree(extras=False) == [] and migrate(sophia_home) == []


def test_doctor_repair_migrates_an_old_tree_instead_of_quarantining_it(s3_env: dict[str, str],
                                                                       sophia_home: Path) -> None:
    _old_tree(sophia_home)
    r = run_s3(["doctor", "--repair"], s3_env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert read_json(paths.config_path())["guardian"]["deny"] == ["npm publish"]
    assert not (sophia_home / "quarantine").exists() or not list((sophia_home / "quarantine").iterdir())


def test_self_model_no_longer_stores_what_nothing_filled() -> None:
    for key in DROPPED:
        assert key not in SelfModel.model_fields
        assert key not in template_json("self_model.json")


def _record_manifest(home: Path, claude: Path) -> None:
    (claude / "skills" / "s3-recall").mkdir(parents=True)
    (claude / "agents").mkdir()
    (claude / "agents" / "s3-reflection.md").write_text("x")
    kit = home / "kit"
    args = ["record", "--manifest", str(home / "install-manifest.json"), "--scope", "user",
            "--claude-dir", str(claude), "--settings", str(claude / "settings.json"), "--version", "0.1.0",
            "--source", str(ROOT), "--sophia-home", str(home), "--kit", str(kit), "--venv", str(kit / "venv"),
            "--venv-python", sys.executable, "--venv-created", "0", "--settings-created", "1",
            "--command", f'"{ROOT}/hooks/session_end.sh"', "--command", f'"{ROOT}/hooks/guardian_tier1.sh"',
            "--dir", str(claude / "skills" / "s3-recall"), "--dir", str(claude / "skills" / "s3-old"),
            "--file", str(claude / "agents" / "s3-reflection.md")]
    subprocess.run([sys.executable, "-I", "-S", str(ROOT / "lib/sophia/install/manifest.py"), *args], check=True)


def test_status_reads_what_is_installed_from_the_manifest(s3_env: dict[str, str], sophia_home: Path) -> None:
    init_tree()
    r = run_s3(["status", "--json"], s3_env)
    inst = json.loads(r.stdout)["installed"]
    assert inst["installed"] is False and "install.sh" in inst["note"]
    _record_manifest(sophia_home, sophia_home.parent / ".claude")
    r = run_s3(["status", "--json"], s3_env)
    data = json.loads(r.stdout)
    assert not set(DROPPED) & set(data["self_model"])
    inst = data["installed"]
    assert inst["skills"] == ["s3-recall"] and inst["agents"] == ["s3-reflection"]
    assert inst["hooks"] == ["guardian_tier1.sh", "session_end.sh"] and inst["missing"] == ["s3-old"]
    r = run_s3(["status"], s3_env)
    assert "Skills (1): s3-recall" in r.stdout and "Missing (run ./install.sh again): s3-old" in r.stdout
