"""Start a team sync in the background. Standard library only: the SessionStart hook and the digest
worker call :func:`kick`, which returns at once (a detached ``python -m sophia.team.background``
bounded in time by that process itself). Nothing happens when team sync is not configured.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # the hook path imports nothing it does not use: no typing, pathlib or subprocess
if TYPE_CHECKING:
    from pathlib import Path

SKIP_ENV = "SOPHIA_TEAM_SYNC"  # "0": never start a background sync (tests, CI)


def configured(home: Path) -> bool:
    import json

    try:
        with open(os.path.join(home, "config.json"), encoding="utf-8") as fh:
            team = json.load(fh).get("team")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(team, dict) and bool(team.get("url")) and bool(team.get("team"))


def kick(home: Path, why: str) -> bool:
    """Launch a detached sync when configured; True when one was started. Never raises."""
    try:
        if os.environ.get(SKIP_ENV) == "0" or not configured(home):
            return False
        import subprocess
        import sys

        lib = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, SOPHIA_HOME=str(home), PYTHONPATH=lib)
        os.makedirs(os.path.join(home, "logs"), mode=0o700, exist_ok=True)
        log = open(os.path.join(home, "logs", "team.log"), "ab")  # noqa: SIM115 - handed to the child
        with log:
            subprocess.Popen([sys.executable, "-m", "sophia.team.background", why], stdin=subprocess.DEVNULL,
                             stdout=log, stderr=log, env=env, cwd=str(home), start_new_session=True,
                             close_fds=True)
        return True
    except Exception:  # noqa: BLE001 - a hook's helper: never break the session
        return False
