"""Shared fixtures: no test ever touches the real HOME or ~/.sophia."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib"
if str(LIB) not in sys.path:
    sys.path.insert(0, str(LIB))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point HOME and SOPHIA_HOME at temp dirs for every test.

    A test whose recall or ingest woke the embedding service of one of its homes stops it when it
    ends: the service is a long-lived background process by design (it exits after its idle timeout),
    and the orphan guard fails the session for any process that outlives the tests.
    """
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SOPHIA_HOME", str(home / ".sophia"))
    monkeypatch.delenv("SOPHIA_HOOK_GUARD", raising=False)
    yield home
    stop_embedding_services(tmp_path)
    from sophia.embed_client import protocol

    protocol.sock_path(home / ".sophia").unlink(missing_ok=True)  # one a killed service or a test left


def stop_embedding_services(root: Path) -> None:
    """Stop every embedding service whose ``--home`` lies under ``root`` (SIGTERM, then SIGKILL).

    Found by command line rather than pidfile: a service still loading its model has none yet.
    """
    import procs

    prefix = os.fsencode(str(root)) + b"/"
    procs.stop([p for p in procs.live_pids() if procs.is_embed_service(p)
                and any(a.startswith(prefix) for a in procs.argv(p))])


@pytest.fixture
def sophia_home(isolated_home: Path) -> Path:
    return isolated_home / ".sophia"


def made_home(root: Path, *commands: list[str]) -> Path:
    """A state home under ``root`` that the real ``s3`` made: ``s3 init``, then ``commands`` (each asserted to
    succeed). For a fixture of a wider scope, whose tests each get a copy (``copy_home``)."""
    env = {k: v for k, v in os.environ.items() if k != "SOPHIA_HOOK_GUARD"}
    env.update(HOME=str(root), SOPHIA_HOME=str(root / ".sophia"), PYTHONPATH=str(LIB))
    for args in (["init"], *commands):
        r = run_s3(args, env)
        assert r.returncode == 0, (args, r.stderr)
    return root / ".sophia"


def copy_home(made: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` (an ``s3_env``) whose home is a copy of ``made``: the test's own, as if its commands had made it."""
    import shutil

    shutil.copytree(made, env["SOPHIA_HOME"], symlinks=True)
    return env


@pytest.fixture(scope="session")
def inited_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("inited")
    yield made_home(root)
    stop_embedding_services(root)


@pytest.fixture
def inited(s3_env: dict[str, str], inited_home: Path) -> dict[str, str]:
    """``s3_env`` whose home ``s3 init`` made (a copy of one made once a session)."""
    return copy_home(inited_home, s3_env)


@pytest.fixture
def s3_env(isolated_home: Path) -> dict[str, str]:
    """Environment for running the ``s3`` CLI / hooks as subprocesses."""
    env = dict(os.environ)
    env["HOME"] = str(isolated_home)
    env["SOPHIA_HOME"] = str(isolated_home / ".sophia")
    env["PYTHONPATH"] = str(LIB)
    return env


def wait_for(pred, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    """Poll ``pred`` every 50 ms until it is true or ``timeout`` seconds pass; one last look at the end."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return bool(pred())


def set_config(home: Path, **values: Any) -> None:
    """Set top-level config.json keys of the home ``s3 init`` made (the rest stays as it is)."""
    from sophia import paths
    from sophia.atomic import read_json, write_json_atomic

    cfg = read_json(paths.config_path(home))
    cfg.update(values)
    write_json_atomic(paths.config_path(home), cfg)


def tool_call_lines(project: Path, i: int, tool: str, inp: dict[str, Any], result: str,
                    error: bool) -> list[dict[str, Any]]:
    """The two transcript lines of one tool call (call i, second i of 2026-11-20 10:00) and its result."""
    return [{"type": "assistant", "cwd": str(project), "timestamp": f"2026-11-20T10:00:0{i}.000Z",
             "message": {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": tool,
                                                           "input": inp}]}},
            {"type": "user", "cwd": str(project), "timestamp": f"2026-11-20T10:00:0{i}.500Z",
             "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                      "content": result, "is_error": error}]}}]


def run_s3(args: list[str], env: dict[str, str], input: str | None = None):  # type: ignore[no-untyped-def]
    import subprocess

    return subprocess.run([sys.executable, "-m", "sophia.cli.entry", *args], env=env, input=input,
                          capture_output=True, text=True, timeout=120)


# ---- reliability: no process started by the tests may outlive them (tests/orphan_guard.py)
def pytest_configure(config: pytest.Config) -> None:
    from orphan_guard import OrphanGuard

    if not config.pluginmanager.has_plugin("sophia-orphan-guard"):
        config.pluginmanager.register(OrphanGuard(), "sophia-orphan-guard")
