"""Reflection on session end, when the user opted in. Stdlib only.

``config.reflection_trigger``: ``manual`` (default: never from a hook), ``on_session_end``
(each finished non-trivial episode), ``after_n_episodes`` (every
``reflection_every_n_episodes`` non-trivial episodes). Never while ``learning_enabled`` is true: the
digest worker's second stage (``reflect``) then reflects on each session, and a session is not reflected
on twice. The hook only *launches*
:mod:`sophia.hooks.reflect_runner` detached (own session, output to ``logs/``, the lowest CPU priority)
and returns.

Never recursive: the runner's environment has ``SOPHIA_HOOK_GUARD=1`` (every hook exits at
once when it sees it), its ``claude -p`` is sealed (``--setting-sources ""``: none of the user's hooks
load, only the seal's gate; see :mod:`sophia.hooks.reflect_runner`), and at most one reflection runs per
home at a time (``run/reflection.lock``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from .. import config_defaults, paths
from ..atomic import read_json, write_json_atomic
from ..locking import flock_held, locked
from ..timeutil import iso

RUNNER = Path(__file__).with_name("reflect_runner.py")


def lock_path(home: Path) -> Path:
    return paths.run_dir(home) / "reflection.lock"


def state_path(home: Path) -> Path:
    return paths.run_dir(home) / "reflection.json"


def running(home: Path) -> bool:
    """True while a reflection runner holds the lock."""
    return flock_held(lock_path(home))


def episodes_to_reflect(home: Path, cfg: dict[str, Any], episode: dict[str, Any] | None) -> list[str]:
    """Which episode ids to reflect on now (empty: nothing to do). Updates the pending list."""
    cfg = {**config_defaults.defaults(), **cfg}
    trigger = cfg["reflection_trigger"]
    if cfg["learning_enabled"]:  # the digest's reflection stage reflects on every session: never twice
        return []
    if trigger == "manual" or not episode or episode.get("trivial"):
        return []
    if trigger == "on_session_end":
        return [episode["id"]]
    if trigger != "after_n_episodes":
        return []
    every = cfg["reflection_every_n_episodes"]
    sp = state_path(home)
    with locked(sp, timeout=2):
        st = read_json(sp, default=None)
        if not isinstance(st, dict):
            st = {}
        pending = [e for e in st.get("pending") or [] if isinstance(e, str)]
        if episode["id"] not in pending:
            pending.append(episode["id"])
        due = len(pending) >= every and not running(home)
        st["pending"] = [] if due else pending[-1000:]
        if due:
            st["last_launch"] = iso()
        write_json_atomic(sp, st)
    return pending if due else []


def launch(home: Path, episode_ids: list[str], *, python: str | None = None) -> int | None:
    """Start the runner detached; returns its pid (None if one is already running)."""
    if not episode_ids or running(home):
        return None
    logs = paths.logs_dir(home)
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    import subprocess

    env = dict(os.environ)
    env["SOPHIA_HOOK_GUARD"] = "1"
    env["SOPHIA_HOME"] = str(home)
    out = os.open(logs / "reflection.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        proc = subprocess.Popen(
            [python or sys.executable, "-I", "-S", str(RUNNER), *episode_ids],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
            cwd=str(home), start_new_session=True, close_fds=True,
        )
    finally:
        with contextlib.suppress(OSError):
            os.close(out)
    from .runtime import background

    return background(proc.pid)
