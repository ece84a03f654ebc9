"""Connecting to the team database (psycopg 3 with the pgvector adapter), bounded in time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import config

CONNECT_TIMEOUT = 5  # seconds
STATEMENT_TIMEOUT_MS = 60_000


class TeamOffline(Exception):
    """The team database cannot be reached (or refused the login)."""


def missing_driver() -> str | None:
    """Why the team extra is unusable (None: psycopg and pgvector import)."""
    try:
        import pgvector.psycopg  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        return f"team sync needs the team extra ({exc.name} is missing): ./install.sh --team or pip install '.[team]'"
    return None


def connect(cfg: dict[str, Any], home: Path | None = None, *, timeout: int = CONNECT_TIMEOUT,
            vectors: bool = True) -> Any:
    """An autocommit connection (transactions are explicit); raises TeamOffline when unreachable."""
    import psycopg

    kw: dict[str, Any] = {"connect_timeout": timeout, "autocommit": True,
                          "options": f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
                          "application_name": "sophia-team"}
    pw = config.password(home)
    if pw:
        kw["password"] = pw
    try:
        conn = psycopg.connect(cfg["url"], **kw)
    except psycopg.OperationalError as exc:
        raise TeamOffline(" ".join(str(exc).split())[:300]) from exc
    if vectors:
        try:
            from pgvector.psycopg import register_vector

            register_vector(conn)
        except psycopg.ProgrammingError:  # the extension is not created yet (before the first migration)
            pass
    return conn
