"""paths.home_str / sophia_home: the one resolver of the state home.

Order: $SOPHIA_HOME, then the ``.sophia_home`` file an install leaves in the kit (beside lib/sophia)
and in the venv it created, then ~/.sophia. The kit and venv cases run the real file from a copied
layout in a fresh interpreter, as a hook or the venv's s3 would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sophia import paths

LIB = Path(__file__).resolve().parents[1] / "lib"
PROBE = "import sys; sys.path.insert(0, sys.argv[1]); from sophia import paths; print(paths.home_str())"


def _kit(tmp_path: Path) -> Path:
    kit = tmp_path / "kit"
    (kit / "lib" / "sophia").mkdir(parents=True)
    for name in ("__init__.py", "paths.py"):
        (kit / "lib" / "sophia" / name).write_text((LIB / "sophia" / name).read_text())
    return kit


def _probe(python: str, lib: Path, env: dict[str, str], *flags: str) -> str:
    proc = subprocess.run([python, *flags, "-c", PROBE, str(lib)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SOPHIA_HOME"}
    env["HOME"] = str(home)
    env.update(extra)
    return env


def test_env_wins_and_tilde_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SOPHIA_HOME", "~/state")
    assert paths.sophia_home() == tmp_path / "state"
    assert paths.home_str({"SOPHIA_HOME": "/x/y", "HOME": "/h"}) == "/x/y"
    assert paths.config_path() == tmp_path / "state" / "config.json"


def test_default_is_dot_sophia_in_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SOPHIA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert paths.sophia_home() == tmp_path / ".sophia"
    assert paths.home_str({"HOME": "/h"}) == "/h/.sophia"


def test_kit_marker_names_the_home_when_the_env_does_not(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    home = tmp_path / "home"
    assert _probe(sys.executable, kit / "lib", _env(home), "-I", "-S") == str(home / ".sophia")
    (kit / ".sophia_home").write_text(f"{tmp_path}/custom state\n")
    assert _probe(sys.executable, kit / "lib", _env(home), "-I", "-S") == f"{tmp_path}/custom state"
    assert _probe(sys.executable, kit / "lib", _env(home, SOPHIA_HOME="/env/wins"), "-I", "-S") == "/env/wins"


def test_venv_marker_names_the_home_of_the_venvs_own_s3(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    home = tmp_path / "home"
    py = str(venv / "bin" / "python")  # run with site, as its console script s3 runs
    assert _probe(py, LIB, _env(home)) == str(home / ".sophia")
    (venv / ".sophia_home").write_text(f"{tmp_path}/state\n")
    assert _probe(py, LIB, _env(home)) == f"{tmp_path}/state"


def test_the_hook_path_does_not_import_pathlib(tmp_path: Path) -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from sophia import paths; paths.home_str(); "
            "print('pathlib' in sys.modules)")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(LIB)], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_no_other_module_resolves_the_home() -> None:
    """SOPHIA_HOME is read and ~/.sophia spelled out in paths.py only."""
    offenders = []
    for f in (LIB / "sophia").rglob("*.py"):
        if f.name == "paths.py" and f.parent.name == "sophia":
            continue
        text = f.read_text()
        for needle in ('environ.get("SOPHIA_HOME")', "getenv(\"SOPHIA_HOME\")", '"~/.sophia"', '".sophia")'):
            if needle in text:
                offenders.append(f"{f.relative_to(LIB)}: {needle}")
    assert offenders == []
