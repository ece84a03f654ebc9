"""``s3 export`` and ``s3 import``: the whole memory (or one project's) out to a file or a folder, and
a JSON export merged back.

What travels: every kind of the registry (:mod:`sophia.kinds`) the kit keeps itself, as stored:
whole episode files, the semantic rules, each ``memory/<stem>.json`` (the extracted kinds, and any other
stem found there) and the ingested conversations (``memory/conversations/<source>.jsonl``). Not Claude
Code's own memory (``cc_memory``: its files are Claude Code's), nor a repository's team memory (``team``: its
files travel with the repository), nor the self model, config, logs or index (derived: the import indexes
what it adds).

JSON (:data:`FORMAT`): one file a program reads back. Markdown: a folder a person reads and versions,
one file per kind, each item under its id. :func:`import_file` merges a JSON export: same ids, nothing
duplicated; an identical item is skipped; an item whose id exists with other content keeps the local
version and is recorded as a conflict (``memory/conflicts.jsonl``, :mod:`sophia.memory.conflicts`,
with the incoming version); everything is redacted on the way in; the whole file is checked before
anything is written (a bad file writes nothing); each store is written atomically under the lock the
CLI's other writes take.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import kinds, paths
from ..errors import BadInput, SophiaError

FORMAT = "sophia-memory-export"
VERSION = 1
Progress = Callable[[int, int, str], None]
BIG = 500  # an import of this many items or more reports its progress every BIG items
_STEM = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


# ---------------------------------------------------------------- what there is


def _episodes(h: Path) -> list[dict[str, Any]]:
    from .manage import LOADERS

    return LOADERS["episodes"](kinds.KINDS["episode"], h)


def _memory_stems(h: Path) -> list[str]:
    from .files import all_memory_stems

    return [s for s in all_memory_stems(h) if _STEM.match(s)]


def _conversations(h: Path) -> dict[str, list[dict[str, Any]]]:
    from ..index.conversations import conversation_files, read_conversation

    return {p.stem: read_conversation(p) for p in conversation_files(h)}


def _mine(obj: dict[str, Any], project: str | None) -> bool:
    return project is None or obj.get("project") == project


def collect(home: Path | None = None, project: str | None = None) -> dict[str, Any]:
    """The export document: ``{"format", "version", "exported_at", "project", "episodes", "rules",
    "memory": {stem: [items]}, "conversations": {source: [turns]}}``."""
    from ..timeutil import iso
    from .files import load_items
    from .rules import load_rules

    h = home or paths.sophia_home()
    if not h.is_dir():
        raise SophiaError(f"{h} does not exist: run `s3 init` first")
    memory = {s: [i for i in load_items(s, h) if _mine(i, project)] for s in _memory_stems(h)}
    convs = {s: [t for t in turns if _mine(t, project)] for s, turns in _conversations(h).items()}
    return {"format": FORMAT, "version": VERSION, "exported_at": iso(), "project": project,
            "episodes": sorted((e for e in _episodes(h) if _mine(e, project)), key=lambda e: str(e["id"])),
            "rules": [r for r in load_rules(h) if _mine(r, project)],
            "memory": {s: items for s, items in memory.items() if items},
            "conversations": {s: turns for s, turns in convs.items() if turns}}


def counts(doc: dict[str, Any]) -> dict[str, int]:
    out = {"episodes": len(doc["episodes"]), "rules": len(doc["rules"])}
    out.update({s: len(v) for s, v in doc["memory"].items()})
    out["turns"] = sum(len(v) for v in doc["conversations"].values())
    return out


# ---------------------------------------------------------------- export


def export_json(doc: dict[str, Any], output: Path) -> None:
    from ..atomic import write_bytes_atomic

    write_bytes_atomic(output, (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))


def _index_item(kind_name: str, obj: dict[str, Any]) -> dict[str, Any]:
    kind = kinds.get(kind_name)
    return kind.index_item(obj) if kind is not None else kinds.index_view(obj)


def _md_item(it: dict[str, Any]) -> str:
    facts = [("type", it.get("type")), ("project", it.get("project")), ("recorded", it.get("timestamp")),
             ("happened", it.get("event_time")), ("valid", " to ".join(str(v or "...") for v in (
                 it.get("valid_from"), it.get("valid_until"))) if it.get("valid_from") or it.get("valid_until")
                 else None), ("sources", ", ".join(it.get("source_ids") or []) or None)]
    lines = [f"## {it.get('id')}", ""] + [f"- {k}: {v}" for k, v in facts if v] + ["", str(it.get("text") or "")]
    return "\n".join(lines).rstrip() + "\n"


def _md_file(title: str, items: list[dict[str, Any]]) -> str:
    head = f"# {title} ({len(items)})\n\n"
    return head + "\n".join(_md_item(it) for it in items)


def export_markdown(doc: dict[str, Any], folder: Path) -> list[Path]:
    """One Markdown file per kind in ``folder`` (plus README.md naming them); returns the files written."""
    from ..atomic import write_bytes_atomic

    files: dict[str, str] = {}
    if doc["episodes"]:
        files["episodes.md"] = _md_file("Episodes", [_index_item("episode", e) for e in doc["episodes"]])
    if doc["rules"]:
        files["rules.md"] = _md_file("Rules", [_index_item("rule", r) for r in doc["rules"]])
    for stem, items in doc["memory"].items():
        kind = kinds.by_plural(stem)
        files[f"{stem}.md"] = _md_file(kind.label or stem.title() if kind else stem,
                                       [_index_item(kind.name if kind else stem, i) for i in items])
    turns = [t for ts in doc["conversations"].values() for t in ts]
    if turns:
        files["turns.md"] = _md_file("Ingested conversation turns", [kinds.index_view(t) for t in turns])
    scope = f"project {doc['project']}" if doc["project"] else "the whole memory"
    readme = [f"# Sophia System 3 memory export ({scope}, {doc['exported_at']})", "",
              "One file per kind; each memory under its id (`s3 recall`, `s3 forget ID`).", ""]
    readme += [f"- [{name}]({name})" for name in sorted(files)]
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in {**files, "README.md": "\n".join(readme) + "\n"}.items():
        write_bytes_atomic(folder / name, text.encode("utf-8"))
        written.append(folder / name)
    return written


# ---------------------------------------------------------------- import: read and check the whole file first


def _objects(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise BadInput(f"{where} must be a list")
    for n, obj in enumerate(value):
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not obj["id"].strip():
            raise BadInput(f"{where}[{n}] must be an object with a string 'id'")
    return value


def _check_items(kind_name: str, objs: list[dict[str, Any]], where: str) -> None:
    from ..index.store import normalize

    if kinds.get(kind_name) is None:  # a memory stem no kind names: kept as it is, never indexed
        return
    for obj in objs:
        try:
            normalize(_index_item(kind_name, obj))
        except (ValueError, TypeError, KeyError) as exc:
            raise BadInput(f"{where}: item {obj.get('id')!r}: {exc}") from None


def _check_sections(doc: dict[str, Any]) -> None:
    from ..episode_store import episode_path
    from ..index.conversations import safe_source

    for ep in _objects(doc.get("episodes", []), "episodes"):
        try:
            episode_path(ep["id"])
        except ValueError as exc:
            raise BadInput(f"episodes: {exc}") from None
    _check_items("episode", doc.get("episodes", []), "episodes")
    _check_items("rule", _objects(doc.get("rules", []), "rules"), "rules")
    for name in ("memory", "conversations"):
        if not isinstance(doc.get(name, {}), dict):
            raise BadInput(f"{name} must be an object")
    for stem, items in doc.get("memory", {}).items():
        if not _STEM.match(stem):
            raise BadInput(f"memory: {stem!r} is not a memory file name")
        kind = kinds.by_plural(stem)
        if kind is not None and kind.store != "memory":
            raise BadInput(f"memory: {stem!r} is not kept in memory/ (it is {kind.file})")
        _check_items(kind.name if kind else stem, _objects(items, f"memory.{stem}"), f"memory.{stem}")
    for source, turns in doc.get("conversations", {}).items():
        if safe_source(source) != source:
            raise BadInput(f"conversations: {source!r} is not a conversation name")
        _check_items("turn", _objects(turns, f"conversations.{source}"), f"conversations.{source}")


def read_export(path: Path) -> dict[str, Any]:
    """The export in ``path``, checked whole and redacted; BadInput (one line) when it is not one."""
    from ..redact import redact_obj

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"{path} is not a JSON export of `s3 export` ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BadInput(f"{path} is not an `s3 export --format json` file (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise BadInput(f"{path}: export version {doc.get('version')!r}, this kit reads version {VERSION}")
    try:
        _check_sections(doc)
    except BadInput as exc:
        raise BadInput(f"{path}: {exc}") from None
    return dict(redact_obj(doc))


# ---------------------------------------------------------------- import: merge, store by store


class Merge:
    """What an import did: counts per section, conflict records, the index items to write, progress."""

    def __init__(self, source: str, total: int, progress: Progress | None) -> None:
        self.source, self.total, self.progress = source, total, progress
        self.added: dict[str, int] = {}
        self.skipped = 0
        self.conflicts: list[dict[str, Any]] = []
        self.index: list[dict[str, Any]] = []
        self.done = 0

    def merge(self, section: str, existing: dict[str, dict[str, Any]], incoming: list[dict[str, Any]],
              kind_name: str) -> list[dict[str, Any]]:
        """The incoming objects to add (new ids); identical ones skipped, differing ones recorded."""
        new = []
        for obj in incoming:
            old = existing.get(obj["id"])
            if old is None:
                new.append(obj)
                existing[obj["id"]] = obj
                self.added[section] = self.added.get(section, 0) + 1
                if kinds.get(kind_name) is not None:  # a memory stem no kind names is kept, not indexed
                    self.index.append(_index_item(kind_name, obj))
            elif old == obj:
                self.skipped += 1
            else:
                self.conflicts.append(self._conflict(section, kind_name, old, obj))
            self.tick(section)
        return new

    def _conflict(self, section: str, kind_name: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        from ..timeutil import iso
        from .text import content_id

        return {"id": content_id("conflict_", old["id"], json.dumps(new, sort_keys=True, default=str)),
                "detected_at": iso(), "scene_id": None, "signal": "import_same_id_different_content",
                "resolution": "kept_existing", "kept_id": old["id"], "superseded_id": old["id"],
                "kept_text": _index_item(kind_name, old).get("text"),
                "superseded_text": _index_item(kind_name, new).get("text"),
                "section": section, "import_source": self.source, "incoming": new}

    def tick(self, label: str) -> None:
        self.done += 1
        if self.progress and self.total >= BIG and (self.done % BIG == 0 or self.done == self.total):
            self.progress(self.done, self.total, label)


def _import_episodes(m: Merge, eps: list[dict[str, Any]], h: Path) -> None:
    from ..atomic import read_json
    from ..episode_store import episode_path, index_entry, upsert_index_entries
    from ..locking import locked

    entries = []
    for ep in eps:
        p = episode_path(ep["id"], h)
        with locked(p):
            old = read_json(p, default=None)
            if m.merge("episodes", {ep["id"]: old} if isinstance(old, dict) else {}, [ep], "episode"):
                from ..atomic import write_json_atomic

                write_json_atomic(p, ep)
                entries.append(index_entry(ep))
    if entries:
        upsert_index_entries(entries, h)


def _import_rules(m: Merge, incoming: list[dict[str, Any]], h: Path) -> None:
    from .rules import update_rules

    if incoming:
        with update_rules(h) as rs:
            rs.extend(m.merge("rules", {str(r.get("id")): r for r in rs}, incoming, "rule"))


def _import_memory(m: Merge, stem: str, incoming: list[dict[str, Any]], h: Path) -> None:
    from .files import update_items

    kind = kinds.by_plural(stem)
    with update_items(stem, h) as items:
        items.extend(m.merge(stem, {str(i.get("id")): i for i in items}, incoming, kind.name if kind else stem))


def _import_turns(m: Merge, source: str, incoming: list[dict[str, Any]], h: Path) -> None:
    from ..index.conversations import conversation_path, read_conversation
    from ..ingest.core import _write_conversation
    from ..locking import locked

    path = conversation_path(source, h)
    with locked(path):
        turns = read_conversation(path) if path.exists() else []
        new = m.merge("turns", {str(t.get("id")): t for t in turns}, incoming, "turn")
        if new:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _write_conversation(path, turns + new)


def import_file(path: Path, home: Path | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Merge the JSON export in ``path`` into ``home`` (see the module doc); returns what it did."""
    from . import conflicts, indexing

    h = home or paths.sophia_home()
    if not h.is_dir():
        raise SophiaError(f"{h} does not exist: run `s3 init` first")
    doc = read_export(path)  # checked whole before any write
    total = sum(counts({"episodes": doc.get("episodes", []), "rules": doc.get("rules", []),
                        "memory": doc.get("memory", {}), "conversations": doc.get("conversations", {})}).values())
    m = Merge(str(path), total, progress)
    _import_episodes(m, doc.get("episodes", []), h)
    _import_rules(m, doc.get("rules", []), h)
    for stem, items in doc.get("memory", {}).items():
        _import_memory(m, stem, items, h)
    for source, turns in doc.get("conversations", {}).items():
        _import_turns(m, source, turns, h)
    conflicts.log_records(m.conflicts, h)
    indexed = indexing.upsert(m.index, h)
    return {"file": str(path), "added": m.added, "skipped": m.skipped, "conflicts": len(m.conflicts),
            "conflict_ids": [c["kept_id"] for c in m.conflicts], "indexed": indexed, "items": total}
