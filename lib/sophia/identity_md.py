"""Render the CLAUDE.md identity block (seed 17) and write it into a target file.

The block sits between ``<!-- sophia-system3:begin -->`` and ``<!-- sophia-system3:end -->``
markers; everything else in the target (the user's own instructions) is kept as it was.
Rendering is deterministic: the same self-model and rules give the same bytes.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from . import gaps, paths
from .atomic import read_json, write_bytes_atomic, write_json_atomic
from .kinds import CLAUDE_MD_BEGIN, CLAUDE_MD_END, one_line
from .locking import locked
from .timeutil import iso, now, parse

BEGIN, END = CLAUDE_MD_BEGIN, CLAUDE_MD_END  # the block's markers (kept in sophia.kinds, below the index)
TEMPLATE = Path(__file__).with_name("templates") / "CLAUDE.md.template"
TOP_CAPABILITIES = 5
RECENT_HEURISTICS = 10
# Claude Code loads this block into every session: each line and the whole block are bounded,
# whatever the state holds (a rule stored before its cap existed, hundreds of gaps).
MAX_BLOCK_CHARS = 16_000
LINE_CHARS = 300
NAME_CHARS = 60
MAX_GAPS = 10
MAX_RECORDED_TARGETS = 20
MANIFEST_NAME = "install-manifest.json"  # written by install.sh (lib/sophia/install/manifest.py)


def _pct(x: float) -> str:
    return f"{round(x * 100)}%"


def _capabilities(self_model: Any) -> str:
    caps = sorted(self_model.capabilities.items(), key=lambda kv: (-kv[1].proficiency, kv[0].lower()))
    if not caps:
        return "None tracked yet: reflection (`/s3-reflect`) adds them."
    lines = ["| Domain | Proficiency | Experience |", "|--------|-------------|------------|"]
    lines += [f"| {one_line(name, NAME_CHARS)} | {_pct(rec.proficiency)} | {rec.experience_count} tasks |"
              for name, rec in caps[:TOP_CAPABILITIES]]
    return "\n".join(lines)


def block_gaps(self_model: Any, project: str | None) -> list[dict[str, Any]]:
    """The open gaps the block names: those marked global, and ``project``'s when the target is loaded
    only in that project (``~/.claude/CLAUDE.md`` is loaded in every one: no project's gaps there)."""
    return gaps.shown_for([g.model_dump(mode="json") for g in self_model.knowledge_gaps], project)


def _gaps(shown: list[dict[str, Any]]) -> str:
    lines = [f"- {one_line(g.get('text'), LINE_CHARS)}" for g in shown[:MAX_GAPS]]
    if len(shown) > MAX_GAPS:
        lines.append(f"- ... and {len(shown) - MAX_GAPS} more (`s3 list gaps`)")
    return "\n".join(lines) or "- None identified yet."


def _heuristics(rules: list[dict[str, Any]]) -> str:
    newest = sorted(rules, key=lambda r: (str(r.get("created_at") or ""), str(r.get("id"))), reverse=True)
    return "\n".join(f"- {one_line(r.get('trigger_concept'), NAME_CHARS)}: {one_line(r.get('rule_content'), LINE_CHARS)}"
                     for r in newest[:RECENT_HEURISTICS])


def _bounded(text: str) -> str:
    """The last guard: a block over MAX_BLOCK_CHARS is cut at a line end (only a hand-edited
    self-model with a very long creed can get there)."""
    if len(text) <= MAX_BLOCK_CHARS:
        return text
    note = "\n\n(shortened: `s3 status` shows everything)\n"
    cut = text.rfind("\n", 0, MAX_BLOCK_CHARS - len(note))
    return text[: max(cut, 0)] + note


def render(self_model: Any, rules: list[dict[str, Any]], template: str | None = None,
           project: str | None = None) -> str:
    """The block; ``project``: the one project the target is loaded in (None: every project)."""
    tpl = template if template is not None else TEMPLATE.read_text(encoding="utf-8")
    creed = "\n".join(f"{i}. {one_line(c, LINE_CHARS)}" for i, c in enumerate(self_model.terminal_creed, 1))
    values = {
        "{{IDENTITY_GOAL}}": one_line(self_model.identity_goal, LINE_CHARS),
        "{{TERMINAL_CREED}}": creed,
        "{{CAPABILITIES_SUMMARY}}": _capabilities(self_model),
        "{{KNOWLEDGE_GAPS}}": _gaps(block_gaps(self_model, project)),
        "{{RECENT_HEURISTICS}}": _heuristics(rules) or "- None yet: `/s3-learn \"insight\"` adds one.",
    }
    out = tpl
    for k, v in values.items():
        out = out.replace(k, v)
    return _bounded(out.rstrip("\n") + "\n")


def splice(existing: str, block: str) -> str:
    """Put ``block`` between the markers in ``existing`` (replacing an old block, else appending)."""
    wrapped = f"{BEGIN}\n{block.rstrip()}\n{END}\n"
    start = existing.find(BEGIN)
    end = existing.find(END, start + 1) if start >= 0 else -1
    if start >= 0 and end >= 0:
        tail = existing[end + len(END):]
        return existing[:start] + wrapped.rstrip("\n") + tail if tail else existing[:start] + wrapped
    if not existing.strip():
        return wrapped
    sep = "" if existing.endswith("\n\n") else ("\n" if existing.endswith("\n") else "\n\n")
    return existing + sep + wrapped


def default_target(home: Path | None = None) -> Path:
    """The CLAUDE.md Claude Code loads for this install: ``~/.claude/CLAUDE.md``, or the project's
    ``.claude/CLAUDE.md`` when the kit was installed into projects only (``install.sh --project``)."""
    user = Path.home() / ".claude" / "CLAUDE.md"
    try:
        data = read_json((home or paths.sophia_home()) / MANIFEST_NAME, default=None)
    except Exception:  # an unreadable manifest: the user's file, as without an install
        return user
    targets = [t for t in (data.get("targets") or []) if isinstance(t, dict) and t.get("claude_dir")] \
        if isinstance(data, dict) else []
    if not targets or any(t.get("scope") != "project" for t in targets):
        return user
    return Path(str(targets[0]["claude_dir"])).expanduser() / "CLAUDE.md"


def loaded_by(path: Path) -> tuple[str, Path | None]:
    """Whether Claude Code loads ``path``: ("always", None) for ``~/.claude/CLAUDE.md``,
    ("project", DIR) for a project's ``CLAUDE.md`` or ``.claude/CLAUDE.md``, else ("never", None)."""
    p = path.expanduser().resolve()
    if p == (Path.home() / ".claude" / "CLAUDE.md").resolve():
        return "always", None
    if p.name in ("CLAUDE.md", "CLAUDE.local.md"):
        return "project", p.parent.parent if p.parent.name == ".claude" else p.parent
    return "never", None


def _record(home: Path, out: Path, stamp: str) -> None:
    """identity.json: the last write, and when each file was last written (status judges the loaded one)."""
    rec_path = paths.identity_record_path(home)
    with locked(rec_path):
        try:
            old = read_json(rec_path, default=None)
        except Exception:  # a broken record is replaced
            old = None
        written = dict(old.get("targets") or {}) if isinstance(old, dict) else {}
        written[str(out)] = stamp
        newest = sorted(written.items(), key=lambda kv: str(kv[1]), reverse=True)[:MAX_RECORDED_TARGETS]
        write_json_atomic(rec_path, {"path": str(out), "generated_at": stamp, "targets": dict(newest)})


def refresh(target: Path | None = None, home: Path | None = None, at: datetime | None = None) -> dict[str, Any]:
    from .memory.rules import load_rules
    from .models import SelfModel
    from .state import _default_self_model, load_model

    h = home or paths.sophia_home()
    sm = load_model(paths.self_model_path(h), SelfModel, _default_self_model)
    rs = load_rules(h)
    out = (target or default_target(h)).expanduser()
    loaded, project_dir = loaded_by(out)
    project = str(project_dir.resolve()) if loaded == "project" and project_dir else None
    block = render(sm, rs, project=project)
    with locked(out):
        existing = out.read_text(encoding="utf-8") if out.exists() else ""
        new = splice(existing, block)
        if new != existing:
            write_bytes_atomic(out, new.encode("utf-8"))
    stamp = (at or now()).isoformat().replace("+00:00", "Z")
    _record(h, out.resolve(), stamp)
    top = sorted(sm.capabilities.items(), key=lambda kv: (-kv[1].proficiency, kv[0].lower()))[:TOP_CAPABILITIES]
    return {
        "path": str(out.resolve()),
        "generated_at": stamp,
        "changed": new != existing,
        "loaded_by_claude_code": loaded,
        "project_dir": str(project_dir) if project_dir else None,
        "creed_values": len(sm.terminal_creed),
        "top_capabilities": [{"domain": k, "proficiency": v.proficiency} for k, v in top],
        "knowledge_gaps": len(block_gaps(sm, project)),
        "heuristics": min(len(rs), RECENT_HEURISTICS),
    }


def _written_at(home: Path, target: Path) -> str | None:
    try:
        record = read_json(paths.identity_record_path(home), default=None)
    except Exception:  # a broken record only means "unknown"
        return None
    if not isinstance(record, dict):
        return None
    written = record.get("targets")
    stamp = (written.get(str(target)) if isinstance(written, dict) else None) \
        or (record.get("generated_at") if record.get("path") == str(target) else None)
    return str(stamp) if stamp else None


def staleness(home: Path, self_model: Any) -> dict[str, Any]:
    """Is the block in the CLAUDE.md Claude Code loads (:func:`default_target`) older than the
    self-model (seed 17.4)? Writes to other files (``--output``) do not count."""
    target = default_target(home).expanduser().resolve()
    stamp = _written_at(home, target)
    try:
        has_block = BEGIN in target.read_text(encoding="utf-8", errors="replace")
    except OSError:
        has_block = False
    if not stamp or not has_block:
        return {"path": str(target), "generated_at": stamp, "stale": True,
                "message": f"{target} has no System 3 block yet: run `s3 refresh-identity` (or /s3-refresh-identity)"}
    generated, updated = parse(stamp), parse(getattr(self_model, "updated_at", None))
    stale = bool(generated and updated and updated > generated)
    msg = (f"{target} is older than the self-model: run `s3 refresh-identity`" if stale
           else f"{target} is up to date")
    return {"path": str(target), "generated_at": stamp, "stale": stale, "message": msg}


__all__ = ["BEGIN", "END", "render", "splice", "refresh", "staleness", "default_target", "loaded_by", "iso"]
