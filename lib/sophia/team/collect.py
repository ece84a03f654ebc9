"""What a machine shares, read from its local files, and the secret check that refuses an upload.

Shared, per team: semantic rules (global or of a shared project), guardian allow/deny patterns,
project facts (facts with a project), procedures (the project playbooks and error -> fix procedures
included), and episodes of the projects named in ``share_episodes``. Never shared: the self-model
(its creed included), the user model, conversations, and anything of a ``private_projects`` project.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import read_json
from ..redact import redact

# rule fields that are merged (max), not part of the content a version names
RULE_VOLATILE = ("confidence", "base_confidence", "validation_count", "last_validated", "validated_by")
KINDS = ("rule", "guardian", "fact", "procedure", "episode")


class SecretRefused(Exception):
    """Something to upload looks like a secret: the whole upload is refused."""


def version_of(kind: str, body: dict[str, Any]) -> str:
    """The content hash naming a version (volatile rule fields left out)."""
    data = {k: v for k, v in body.items() if not (kind == "rule" and k in RULE_VOLATILE)}
    return hashlib.sha256(f"{kind}\x1f{json.dumps(data, sort_keys=True, default=str)}".encode()).hexdigest()[:24]


def _row(kind: str, iid: str, text: str, body: dict[str, Any], project: Any = None,
         event_time: Any = None) -> dict[str, Any]:
    row = {"id": iid, "kind": kind, "text": text, "body": body, "project": project,
           "event_time": event_time, "version": version_of(kind, body), "confidence": None, "validations": None}
    if kind == "rule":
        row["confidence"] = float(body.get("confidence") or 0.0)
        row["validations"] = int(body.get("validation_count") or 0)
    return row


def _private(project: Any, cfg: dict[str, Any]) -> bool:
    return bool(project) and str(project) in set(cfg.get("private_projects") or [])


def rules(home: Path) -> list[dict[str, Any]]:
    from ..kinds import rule_item

    data = read_json(paths.rules_path(home), default=[])
    out = []
    for r in data if isinstance(data, list) else []:
        if isinstance(r, dict) and r.get("id"):
            out.append(_row("rule", str(r["id"]), rule_item(r)["text"], r, r.get("project"), r.get("created_at")))
    return out


def guardian(home: Path) -> list[dict[str, Any]]:
    cfg = read_json(paths.config_path(home), default={}) or {}
    g = cfg.get("guardian") if isinstance(cfg, dict) else None
    out = []
    for which in ("allow", "deny"):
        for pat in (g or {}).get(which) or []:
            if isinstance(pat, str) and pat:
                iid = "guard_" + hashlib.sha256(f"{which}\x1f{pat}".encode()).hexdigest()[:12]
                out.append(_row("guardian", iid, f"guardian {which}: {pat}", {"list": which, "pattern": pat}))
    return out


def memory_items(home: Path, stem: str, kind: str) -> list[dict[str, Any]]:
    data = read_json(paths.memory_dir(home) / f"{stem}.json", default=None)
    items = data.get("items") if isinstance(data, dict) else None
    return [_row(kind, str(i["id"]), str(i.get("text") or ""), i, i.get("project"), i.get("event_time"))
            for i in items or [] if isinstance(i, dict) and i.get("id")]


def episodes(home: Path, projects: set[str]) -> list[dict[str, Any]]:
    from ..kinds import episode_item

    out = []
    d = paths.episodes_dir(home)
    for p in sorted(d.glob("*.json")) if d.is_dir() and projects else []:
        ep = read_json(p, default=None) if not p.name.startswith("index") else None
        if isinstance(ep, dict) and ep.get("id") and ep.get("project") in projects:
            out.append(_row("episode", str(ep["id"]), episode_item(ep)["text"], ep, ep.get("project"),
                            ep.get("started_at")))
    return out


def local_rows(home: Path, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The local rows of the shareable kinds (episodes: of the opted-in projects only)."""
    return (rules(home) + guardian(home) + memory_items(home, "facts", "fact")
            + memory_items(home, "procedures", "procedure") + episodes(home, set(cfg.get("share_episodes") or [])))


def exists_locally(home: Path, kind: str, iid: str, ids: set[str]) -> bool:
    """Whether an item is still here (``ids``: those of :func:`local_rows`); an episode of a project no
    longer opted in is still here even though it is not shared."""
    if iid in ids:
        return True
    return kind == "episode" and (paths.episodes_dir(home) / f"{iid}.json").is_file()


def shared_rows(rows: list[dict[str, Any]], cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows this machine shares with its team (the filters of the module doc)."""
    eps = set(cfg.get("share_episodes") or [])
    out = []
    for r in rows:
        if _private(r["project"], cfg):
            continue
        if r["kind"] == "fact" and not r["project"]:
            continue  # a fact without a project is about the user, not a project
        if r["kind"] == "episode" and r["project"] not in eps:
            continue
        out.append(r)
    return out


def looks_secret(text: str) -> bool:
    """The scanner every team share goes through (the Postgres sync, the repository's team folder): the
    redactor (``sophia.redact``) would change something in ``text``."""
    return redact(text) != text


def refuse_secrets(rows: list[dict[str, Any]]) -> None:
    """Raise SecretRefused naming the first row whose text looks like a secret (nothing is uploaded)."""
    for r in rows:
        blob = r["text"] + "\n" + json.dumps(r["body"], ensure_ascii=False, default=str)
        if looks_secret(blob):
            raise SecretRefused(
                f"upload refused: {r['kind']} {r['id']} holds what looks like a secret; nothing was uploaded "
                "(remove the secret with `s3 forget`/an edit, or list its project in team.private_projects)")
