"""The ``team`` section of ``config.json`` and the database password. Standard library only.

``config.json`` holds ``{"team": {"url", "team", "machine", "user", "share_episodes", "private_projects"}}``;
the URL never carries a password. The password comes from ``$SOPHIA_TEAM_PASSWORD`` or from
``<home>/team/password`` (mode 0600, nothing else accepted).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from .. import paths
from ..errors import BadInput

PASSWORD_ENV = "SOPHIA_TEAM_PASSWORD"
SCHEMES = ("postgresql", "postgres")


class TeamConfigError(BadInput):
    hint = "see `s3 team init --help`"


def team_dir(home: Path | None = None) -> Path:
    return (home or paths.sophia_home()) / "team"


def password_file(home: Path | None = None) -> Path:
    return team_dir(home) / "password"


def ledger_path(home: Path | None = None) -> Path:
    return team_dir(home) / "ledger.json"


def status_path(home: Path | None = None) -> Path:
    return team_dir(home) / "status.json"


def check_url(url: str) -> str:
    """The URL if it is a password-free ``postgresql://`` URL; raises TeamConfigError otherwise."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise TeamConfigError(f"not a valid URL: {exc}") from exc
    if parts.scheme not in SCHEMES:
        raise TeamConfigError(f"expected a postgresql:// URL, not {parts.scheme or 'no scheme'}://")
    if parts.password is not None or "password=" in parts.query.lower():
        raise TeamConfigError(
            "the URL carries a password: config.json never holds one; give the URL without it and put "
            f"the password in ${PASSWORD_ENV} or {password_file()} (mode 0600)")
    if not parts.hostname and "host=" not in parts.query:
        raise TeamConfigError("the URL names no host")
    return url


def load(home: Path | None = None) -> dict[str, Any] | None:
    """The team section (validated URL), or None when team sync is not configured."""
    try:
        with open(paths.config_path(home), encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError):
        return None
    team = raw.get("team") if isinstance(raw, dict) else None
    if not isinstance(team, dict) or not isinstance(team.get("url"), str) or not team.get("team"):
        return None
    out = {"machine": socket.gethostname(), "user": os.environ.get("USER") or "unknown",
           "share_episodes": [], "private_projects": []}
    out.update(team)
    return out


def password(home: Path | None = None) -> str | None:
    """The password from the environment or the 0600 file; None when neither has one."""
    env = os.environ.get(PASSWORD_ENV)
    if env:
        return env
    p = password_file(home)
    try:
        st = p.stat()
    except OSError:
        return None
    if st.st_mode & 0o077:
        raise TeamConfigError(f"{p} is readable by others (mode {st.st_mode & 0o777:o}); run chmod 600 on it")
    return p.read_text(encoding="utf-8").rstrip("\n") or None


def user_of(url: str) -> str:
    return unquote(urlsplit(url).username or "")
