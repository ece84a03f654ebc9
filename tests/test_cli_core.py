"""The s3 CLI's core commands as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_s3


def test_help_everywhere(s3_env: dict[str, str]) -> None:
    top = run_s3(["-h"], s3_env)
    assert top.returncode == 0 and "init" in top.stdout and "status" in top.stdout
    for cmd in ["init", "status", "doctor", "version"]:
        r = run_s3([cmd, "--help"], s3_env)
        assert r.returncode == 0, (cmd, r.stderr)
        assert "--json" in r.stdout


def test_init_status_json_has_creed(s3_env: dict[str, str], sophia_home: Path) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    r = run_s3(["status", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert len(data["self_model"]["terminal_creed"]) == 5
    assert data["episodes"]["total"] == 0
    assert data["claude_md"]["stale"] is True


def test_status_names_corrupt_file(s3_env: dict[str, str], sophia_home: Path) -> None:
    run_s3(["init"], s3_env)
    (sophia_home / "self_model.json").write_text("[1, 2")
    r = run_s3(["status"], s3_env)
    assert r.returncode == 1
    assert "self_model.json" in r.stderr and "doctor --repair" in r.stderr
    assert "Traceback" not in r.stderr
    r = run_s3(["doctor", "--json"], s3_env)
    assert r.returncode == 1
    assert json.loads(r.stdout)["problems"][0]["path"].endswith("self_model.json")
    r = run_s3(["doctor", "--repair"], s3_env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert run_s3(["status", "--json"], s3_env).returncode == 0


def test_status_before_init_says_what_to_do(s3_env: dict[str, str]) -> None:
    r = run_s3(["status"], s3_env)
    assert r.returncode == 1 and "s3 init" in r.stderr


def test_version_json(s3_env: dict[str, str]) -> None:
    r = run_s3(["version", "--json"], s3_env)
    assert json.loads(r.stdout)["version"]
