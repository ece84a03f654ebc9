"""Doctor checks for what an interrupted writer can leave behind (registered with state.register_checker).

A writer killed at the wrong moment (SIGKILL, power loss) never leaves a half-written state file (writes
are atomic renames), but it can leave:

* a temp file ``.NAME.XXXX.tmp`` next to the target (the write that never got renamed): removed by
  ``s3 doctor --repair`` once it is older than ``STALE_TMP_SECONDS`` (a live writer's temp file is younger);
* an episode file whose index entry was never written (killed between the two steps of
  ``episode_store.upsert_episode``): the entry is re-added by ``--repair``, so the episode is not lost to
  ``s3 status`` and recall.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from . import paths
from .atomic import read_json
from .errors import SophiaError
from .problem import Problem

STALE_TMP_SECONDS = 300
_TMP = re.compile(r"^\..+\.tmp$")


def stale_temp_files(home: Path, older_than: float = STALE_TMP_SECONDS) -> list[Path]:
    cutoff = time.time() - older_than
    out = []
    for root, dirs, files in os.walk(home):
        dirs[:] = [d for d in dirs if d not in ("venv", "kit", "node_modules")]
        for f in files:
            if _TMP.match(f):
                p = Path(root) / f
                with contextlib.suppress(OSError):
                    if p.stat().st_mtime < cutoff:
                        out.append(p)
    return sorted(out)


def unindexed_episodes(home: Path) -> list[Path]:
    ed = paths.episodes_dir(home)
    if not ed.is_dir():
        return []
    known: set[str] = set()
    for ip in ed.glob("index*.json"):
        try:
            data = read_json(ip, default={}) or {}
        except SophiaError:
            return []  # a corrupt index is the state checker's finding; --repair restores it first
        if isinstance(data, dict):
            known.update(str(e.get("id")) for e in data.get("entries", []) if isinstance(e, dict))
    return [p for p in sorted(ed.glob("*.json"))
            if not p.name.startswith("index") and not p.name.startswith(".") and p.stem not in known]


def check_interrupted_writes(home: Path, repair: bool) -> list[Problem]:
    from .episode_store import index_entry, upsert_index_entries

    problems: list[Problem] = []
    tmps = stale_temp_files(home)
    if tmps:
        prob = Problem(tmps[0].parent, f"{len(tmps)} temp file(s) left by interrupted writes (e.g. {tmps[0].name})")
        if repair:
            removed = 0
            for p in tmps:
                with contextlib.suppress(OSError):
                    p.unlink()
                    removed += 1
            prob.action = f"removed {removed}"
        problems.append(prob)
    missing = unindexed_episodes(home)
    if missing:
        prob = Problem(paths.episode_index_path(home),
                       f"{len(missing)} episode file(s) missing from the index (e.g. {missing[0].name})")
        if repair:
            entries = []
            for p in missing:
                with contextlib.suppress(SophiaError, KeyError, TypeError, AttributeError):
                    ep = read_json(p)
                    if isinstance(ep, dict) and ep.get("id") == p.stem:
                        entries.append(index_entry(ep))
            if entries:
                upsert_index_entries(entries, home)
            prob.action = f"re-indexed {len(entries)}"
            if len(entries) < len(missing):
                prob.action += f"; {len(missing) - len(entries)} unreadable (see the episode checks)"
        problems.append(prob)
    return problems
