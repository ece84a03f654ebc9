"""One sync (push, then pull) with its outcome recorded in ``<home>/team/status.json``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..atomic import read_json, write_json_atomic
from ..locking import try_flock
from ..timeutil import iso
from . import config


def record_status(home: Path, doc: dict[str, Any]) -> None:
    write_json_atomic(config.status_path(home), doc)


def last_status(home: Path) -> dict[str, Any]:
    data = read_json(config.status_path(home), default={})
    return data if isinstance(data, dict) else {}


def sync(home: Path, cfg: dict[str, Any], *, push: bool = True, pull: bool = True,
         timeout: int | None = None) -> dict[str, Any]:
    """Push then pull; raises TeamOffline, SecretRefused. The outcome is recorded either way."""
    import os

    from . import db
    from . import sync as s

    os.makedirs(config.team_dir(home), mode=0o700, exist_ok=True)
    t0 = time.monotonic()
    doc: dict[str, Any] = {"at": iso(), "team": cfg["team"], "ok": False}
    try:
        conn = db.connect(cfg, home, timeout=timeout or db.CONNECT_TIMEOUT)
        with conn:
            if push:
                doc["push"] = s.push(conn, home, cfg)
            if pull:
                doc["pull"] = s.pull(conn, home, cfg)
        doc["ok"] = True
        return doc
    except Exception as exc:
        doc["error"] = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        doc["seconds"] = round(time.monotonic() - t0, 3)
        record_status(home, doc)


def sync_once(home: Path, cfg: dict[str, Any], timeout: int) -> dict[str, Any] | None:
    """A sync unless another one runs now (None then): the background runs never pile up."""
    import os

    os.makedirs(config.team_dir(home), mode=0o700, exist_ok=True)
    fd = try_flock(config.team_dir(home) / "sync.lock")
    if fd is None:
        return None
    try:
        return sync(home, cfg, timeout=timeout)
    finally:
        os.close(fd)
