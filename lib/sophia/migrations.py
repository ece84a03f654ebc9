"""Ordered migrations of the JSON state tree (``config.json`` ``schema_version``).

Each migration is a small function appended to ``MIGRATIONS`` with the version it
produces; ``migrate()`` runs those newer than the tree's version, in order, after copying
every JSON file into ``backups/pre-migration-{from}-{stamp}/``. Re-running is harmless.
A migration may return notes for the user (``s3 init`` prints them; ``logs/migrations.log``
keeps them). The last version equals ``config_defaults.SCHEMA_VERSION`` (a test checks).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import config_defaults, gaps, paths
from .atomic import append_line, ensure_dir, read_json, write_json_atomic
from .errors import SophiaError
from .locking import locked
from .timeutil import now


def _vt(v: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in str(v).split("."))
    except ValueError:
        return (0,)


def m001_seed_layout(home: Path) -> None:
    """Trees from before schema_version existed: rules as a list."""
    rp = paths.rules_path(home)
    rules = read_json(rp, default=None)
    if isinstance(rules, dict) and isinstance(rules.get("rules"), list):
        write_json_atomic(rp, rules["rules"])


def _normalise_index(home: Path) -> None:
    ip = paths.episode_index_path(home)
    idx = read_json(ip, default=None)
    if isinstance(idx, dict):
        idx.setdefault("entries", [])
        idx.setdefault("total_episodes", len(idx["entries"]))
        idx.setdefault("last_updated", None)
        if idx.get("last_updated") == "":
            idx["last_updated"] = None
        write_json_atomic(ip, idx)


def m002_sophia_sections(home: Path) -> None:
    """1.1.0: guardian and context sections; local embeddings replace the seed's OpenAI default;
    the seed's index ("last_updated": "") normalised."""
    _normalise_index(home)
    cp = paths.config_path(home)
    cfg = read_json(cp, default=None)
    if not isinstance(cfg, dict):
        return
    cfg.setdefault("guardian", {"mode": "enforce", "allow": [], "deny": []})
    cfg.setdefault("context", {})
    if cfg.get("embedding_model") == "text-embedding-3-small" and cfg.get("embedding_provider") in (None, "none", "openai"):
        cfg["embedding_model"] = "all-MiniLM-L6-v2"
    write_json_atomic(cp, cfg)


SELF_MODEL_DROPPED = ("current_state", "installed_skills", "installed_hooks", "available_agents")


def _config_1_2(cfg: dict[str, Any]) -> list[str]:
    notes = []
    for key in config_defaults.REMOVED:
        if cfg.pop(key, None) is not None:
            notes.append(f"config.json: removed `{key}` ({config_defaults.REMOVED[key]})")
    if cfg.get("embedding_provider") == "openai":
        cfg["embedding_provider"] = "none"
        notes.append('config.json: embedding_provider "openai" was never supported and meant keyword-only '
                     'recall; it is now "none" (set "local" for semantic recall with the local model)')
    model = cfg.get("embedding_model")
    if model is not None and model not in config_defaults.EMBEDDING_MODELS:
        cfg["embedding_model"] = config_defaults.EMBEDDING_MODELS[0]
        notes.append(f"config.json: embedding_model {model!r} was never loaded; it is now "
                     f"{config_defaults.EMBEDDING_MODELS[0]!r}, the model the embedding service uses")
    return notes


def m003_settings_that_do_something(home: Path) -> list[str]:
    """1.2.0: config keys that were never read go (user_mode, guardian_tier3_enabled: the seed's ``true``
    is not carried over to ``guardian.tier3_enabled``, which audits for real and is off by default); "openai" as a
    provider becomes "none" (what it did); the self-model stops storing what nothing filled
    (current_state, installed_*, available_agents: `s3 status` reads the install manifest)."""
    notes: list[str] = []
    cp = paths.config_path(home)
    cfg = read_json(cp, default=None)
    if isinstance(cfg, dict):
        notes += _config_1_2(cfg)
        write_json_atomic(cp, cfg)
    sp = paths.self_model_path(home)
    sm = read_json(sp, default=None)
    if isinstance(sm, dict) and any(k in sm for k in SELF_MODEL_DROPPED):
        with locked(sp):  # the hooks update the self-model under this lock: read again inside it
            sm = read_json(sp, default={})
            for k in SELF_MODEL_DROPPED:
                sm.pop(k, None)
            write_json_atomic(sp, sm)
    return notes


# what the zero-token learners wrote before gaps were records (learners._gap_text, 1.2.0)
_LEARNER_GAP = re.compile(r"^recurring failure in (?P<name>[^:]+): (?P<head>.*?)(?: \(\d+ sessions\))?$")


def _failure_tables(home: Path) -> dict[str, dict[str, Any]]:
    """``learning/commands.json``: project -> its counted failures (empty when unreadable)."""
    try:
        st = read_json(paths.command_counts_path(home), default=None)
    except SophiaError:
        return {}
    projects = st.get("projects") if isinstance(st, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {p: v["failures"] for p, v in projects.items()
            if isinstance(v, dict) and isinstance(v.get("failures"), dict)}


def _same_head(head: str, rec: dict[str, Any]) -> bool:
    """The gap string's "`command` fails with `error`" is this counted failure's (or its cut form)."""
    full = " ".join(f"`{rec.get('command')}` fails with `{rec.get('error')}`".split())
    head = " ".join(head.split())
    return full == head or (head.endswith("…") and full.startswith(head[:-1].rstrip()))


def _learner_scope(text: str, tables: dict[str, dict[str, Any]]) -> tuple[str | None, str | None]:
    """(project, key) of an old learner gap string, when ``commands.json`` tells them unambiguously."""
    m = _LEARNER_GAP.match(text)
    if not m:
        return None, None
    name = m["name"].strip()
    named = [p for p in tables if (p.rstrip("/").rsplit("/", 1)[-1] or p) == name]
    matches = [(p, k) for p in named for k, rec in tables[p].items()
               if isinstance(rec, dict) and rec.get("gap") and _same_head(m["head"], rec)]
    if len({p for p, _ in matches}) == 1:
        project = matches[0][0]
        keys = [k for p, k in matches if p == project]
        return project, keys[0] if len(keys) == 1 else None
    return (named[0], None) if len(named) == 1 else (None, None)


def _gap_record(value: Any, tables: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    if not isinstance(value, str):
        return gaps.from_value(value)
    if not _LEARNER_GAP.match(value):
        return gaps.record(value, source="unknown")
    project, key = _learner_scope(value, tables)
    return gaps.record(value, project=project, key=key, source="learner")


def m004_scoped_gaps(home: Path) -> list[str]:
    """1.3.0: knowledge gaps become records with their project, source, key and open/closed state
    (``sophia.gaps``). A learner's "recurring failure in <name>: ..." takes its project (and key) from
    ``learning/commands.json`` when that is unambiguous; any other old gap stays unscoped: listed by
    ``s3 status`` and the viewer, not shown at SessionStart."""
    sp = paths.self_model_path(home)
    sm = read_json(sp, default=None)
    if not isinstance(sm, dict) or not any(isinstance(g, str) for g in sm.get("knowledge_gaps") or []):
        return []
    with locked(sp):  # the hooks update the self-model under this lock: read again inside it
        sm = read_json(sp, default={})
        old = sm.get("knowledge_gaps") if isinstance(sm.get("knowledge_gaps"), list) else []
        tables = _failure_tables(home)
        new = [r for r in (_gap_record(g, tables) for g in old) if r]
        sm["knowledge_gaps"] = list({r["id"]: r for r in new}.values())
        write_json_atomic(sp, sm)
    scoped = sum(1 for r in new if r["project"])
    return [f"self_model.json: {len(new)} knowledge gaps are now records; {scoped} took their project from "
            f"learning/commands.json, {len(new) - scoped} have none (`s3 status` lists them; SessionStart "
            "shows only a project's own gaps and those marked global)"]


MIGRATIONS: list[tuple[str, Callable[[Path], list[str] | None]]] = [
    ("1.0.0", m001_seed_layout),
    ("1.1.0", m002_sophia_sections),
    ("1.2.0", m003_settings_that_do_something),
    ("1.3.0", m004_scoped_gaps),
]
CURRENT = MIGRATIONS[-1][0]


def tree_version(home: Path) -> str | None:
    cfg = read_json(paths.config_path(home), default=None)
    if cfg is None:
        return None
    if isinstance(cfg, dict):
        return str(cfg.get("schema_version") or "0")
    return "0"


def backup_tree(home: Path, label: str) -> Path:
    dest = paths.backups_dir(home) / f"{label}-{now().strftime('%Y%m%dT%H%M%S')}"
    ensure_dir(dest)
    for p in home.rglob("*.json"):
        rel = p.relative_to(home)
        if rel.parts[0] in ("backups", "quarantine", "venv", "kit"):
            continue
        target = dest / rel
        ensure_dir(target.parent)
        shutil.copy2(p, target)
    return dest


def migrate(home: Path, notes: list[str] | None = None) -> list[str]:
    """Bring the tree to ``CURRENT``. Returns the versions applied (empty if none); what the user
    should know is appended to ``notes`` and to ``logs/migrations.log``."""
    cp = paths.config_path(home)
    with locked(cp):
        version = tree_version(home)
        if version is None:  # fresh tree: init writes current files
            return []
        todo = [(v, fn) for v, fn in MIGRATIONS if _vt(v) > _vt(version)]
        if not todo:
            return []
        backup_tree(home, f"pre-migration-{version}")
        applied = []
        for v, fn in todo:
            for note in fn(home) or []:
                if notes is not None:
                    notes.append(note)
                append_line(paths.logs_dir(home) / "migrations.log", f"{now().isoformat()} {v}: {note}")
            cfg: Any = read_json(cp, default=None)
            if isinstance(cfg, dict):
                cfg["schema_version"] = v
                write_json_atomic(cp, cfg)
            applied.append(v)
        return applied
