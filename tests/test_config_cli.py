"""``s3 config list|get|set|unset``: every change goes through the one table of settings (config_defaults)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, run_s3
from sophia import config_defaults


def config(home: Path) -> dict:
    return json.loads((home / "config.json").read_text())


@pytest.mark.usefixtures("inited")
def test_set_learning_enabled_and_read_it_back(s3_env: dict[str, str], sophia_home: Path) -> None:
    before = config(sophia_home)
    r = run_s3(["config", "set", "learning_enabled", "true"], s3_env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "learning_enabled = true"
    after = config(sophia_home)
    assert after["learning_enabled"] is True
    assert {k: v for k, v in after.items() if k != "learning_enabled"} == \
        {k: v for k, v in before.items() if k != "learning_enabled"}
    assert run_s3(["config", "get", "learning_enabled"], s3_env).stdout.strip() == "true"
    got = json.loads(run_s3(["config", "get", "learning_enabled", "--json"], s3_env).stdout)
    assert got["value"] is True and got["set"] is True and got["default"] is False


@pytest.mark.usefixtures("inited")
def test_a_bad_value_exits_2_with_one_line_and_writes_nothing(s3_env: dict[str, str], sophia_home: Path) -> None:
    before = (sophia_home / "config.json").read_bytes()
    r = run_s3(["config", "set", "learning_daily_max_usd", "lots"], s3_env)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and r.stdout == ""
    assert "learning_daily_max_usd" in r.stderr and "a number from 0.0 to 100.0" in r.stderr
    # the same line s3 doctor gives for that value in the file
    _, problems = config_defaults.check({"learning_daily_max_usd": "lots"})
    assert problems[0] in r.stderr
    for key, value in (("guardian.mode", "loud"), ("learning_daily_max_jobs", "-1"),
                       ("guardian.deny", '["(unclosed"]'), ("learning_exclude_projects", '["relative"]'),
                       ("context.prompt_context_min_score", "2")):
        r = run_s3(["config", "set", key, value], s3_env)
        assert r.returncode == 2 and key in r.stderr and r.stderr.strip().count("\n") == 0, (key, r.stderr)
    assert (sophia_home / "config.json").read_bytes() == before


@pytest.mark.parametrize(("key", "value", "want"), [
    ("guardian.mode", "warn", "warn"),
    ("learning_daily_max_usd", "1.25", 1.25),
    ("learning_daily_max_jobs", "3", 3),
    ("guardian.deny", '["^terraform destroy"]', ["^terraform destroy"]),
    ("learning_model", "sonnet", "sonnet"),
])
@pytest.mark.usefixtures("inited")
def test_set_each_kind_of_value(key: str, value: str, want: object, s3_env: dict[str, str],
                                sophia_home: Path) -> None:
    r = run_s3(["config", "set", key, value, "--json"], s3_env)
    assert r.returncode == 0, r.stderr and json.loads(r.stdout) == {"key": key, "value": want}
    section, _, name = key.rpartition(".")
    cfg = config(sophia_home)
    assert (cfg[section][name] if section else cfg[name]) == want


@pytest.mark.usefixtures("inited")
def test_unset_list_and_unknown_keys(s3_env: dict[str, str], sophia_home: Path) -> None:
    run_s3(["config", "set", "guardian.mode", "warn"], s3_env)
    rows = {r["key"]: r for r in json.loads(run_s3(["config", "list", "--json"], s3_env).stdout)}
    assert set(rows) == set(config_defaults.BY_KEY)
    assert rows["guardian.mode"]["value"] == "warn" and rows["guardian.mode"]["set"] is True
    text = run_s3(["config", "list"], s3_env).stdout
    assert 'guardian.mode' in text and '"warn"  (default "enforce")' in text
    r = run_s3(["config", "unset", "guardian.mode"], s3_env)
    assert r.returncode == 0 and "mode" not in config(sophia_home)["guardian"]
    assert run_s3(["config", "get", "guardian.mode"], s3_env).stdout.strip() == '"enforce"'
    for args in (["get", "no_such_key"], ["set", "no_such_key", "1"], ["set", "schema_version", "9"]):
        r = run_s3(["config", *args], s3_env)
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0, (args, r.stderr)
    assert run_s3(["config", "list"], {**s3_env, "SOPHIA_HOME": str(sophia_home) + "-none"}).returncode == 1


def test_readme_settings_table_is_generated_from_the_table() -> None:
    readme = (ROOT / "README.md").read_text()
    assert config_defaults.readme_table() in readme, \
        "regenerate it: cd lib && python -m sophia.config_defaults --readme"
