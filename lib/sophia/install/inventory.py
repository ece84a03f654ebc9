"""What is installed (skills, agents, hooks), read when asked from the install manifest and the
filesystem. The self-model once stored these lists and nothing filled them: a copy goes stale,
the manifest ``install.sh`` writes (and ``uninstall.sh`` reads) does not. Standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .manifest import load
from .settings_merge import command_path

MANIFEST = "install-manifest.json"


def _names(paths: list[str], suffix: str = "") -> tuple[list[str], list[str]]:
    """(present, missing) names of the recorded paths, ``suffix`` removed."""
    present: set[str] = set()
    missing: set[str] = set()
    for p in paths:
        if not isinstance(p, str) or not p:
            continue
        name = os.path.basename(p.rstrip("/")).removesuffix(suffix)
        (present if os.path.exists(p) else missing).add(name)
    return sorted(present), sorted(missing - present)


def inventory(home: Path) -> dict[str, Any]:
    """``{"manifest", "installed", "targets", "skills", "agents", "hooks", "missing", "note"}``.

    ``targets``: the Claude configuration folders installed into; ``missing``: what the manifest
    recorded but is gone (reinstall with ./install.sh). Never raises: a broken manifest is a note.
    """
    path = home / MANIFEST
    out: dict[str, Any] = {"manifest": str(path), "installed": False, "targets": [], "skills": [],
                           "agents": [], "hooks": [], "missing": [], "note": ""}
    try:
        data = load(path)
    except ValueError as exc:
        out["note"] = str(exc)
        return out
    targets = [t for t in data["targets"] if isinstance(t, dict)]
    if not targets:
        out["note"] = f"not installed by ./install.sh (no target in {path})"
        return out
    dirs = [d for t in targets for d in t.get("dirs") or []]
    files = [f for t in targets for f in t.get("files") or []]
    hooks = [command_path(c) or "" for t in targets for c in t.get("hook_commands") or [] if isinstance(c, str)]
    out["skills"], missing_skills = _names(dirs)
    out["agents"], missing_agents = _names(files, ".md")
    out["hooks"], missing_hooks = _names(hooks)
    out["missing"] = missing_skills + missing_agents + missing_hooks
    out["targets"] = [str(t.get("claude_dir")) for t in targets]
    out["installed"] = True
    return out
