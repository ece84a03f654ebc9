"""Render the CLAUDE.md identity block (seed 17) and write it into a target file.

The block sits between ``<!-- sophia-system3:begin -->`` and ``<!-- sophia-system3:end -->``
markers; everything else in the target (the user's own instructions) is kept as it was.
Rendering is deterministic: the same self-model and rules give the same bytes.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from . import paths
from .atomic import read_json, write_bytes_atomic, write_json_atomic
from .locking import locked
from .timeutil import iso, now

BEGIN = "<!-- sophia-system3:begin -->"
END = "<!-- sophia-system3:end -->"
TEMPLATE = Path(__file__).with_name("templates") / "CLAUDE.md.template"
TOP_CAPABILITIES = 5
RECENT_HEURISTICS = 10


def _pct(x: float) -> str:
    return f"{round(x * 100)}%"


def render(self_model: Any, rules: list[dict[str, Any]], template: str | None = None) -> str:
    tpl = template if template is not None else TEMPLATE.read_text(encoding="utf-8")
    creed = "\n".join(f"{i}. {c}" for i, c in enumerate(self_model.terminal_creed, 1))
    caps = sorted(self_model.capabilities.items(), key=lambda kv: (-kv[1].proficiency, kv[0].lower()))
    if caps:
        lines = ["| Domain | Proficiency | Experience |", "|--------|-------------|------------|"]
        lines += [f"| {name} | {_pct(rec.proficiency)} | {rec.experience_count} tasks |"
                  for name, rec in caps[:TOP_CAPABILITIES]]
        cap_text = "\n".join(lines)
    else:
        cap_text = "None tracked yet: reflection (`/s3-reflect`) adds them."
    gaps = "\n".join(f"- {g}" for g in self_model.knowledge_gaps) or "- None identified yet."
    newest = sorted(rules, key=lambda r: (str(r.get("created_at") or ""), str(r.get("id"))), reverse=True)
    heur = "\n".join(f"- {r.get('trigger_concept')}: {r.get('rule_content')}" for r in newest[:RECENT_HEURISTICS])
    values = {
        "{{IDENTITY_GOAL}}": self_model.identity_goal,
        "{{TERMINAL_CREED}}": creed,
        "{{CAPABILITIES_SUMMARY}}": cap_text,
        "{{KNOWLEDGE_GAPS}}": gaps,
        "{{RECENT_HEURISTICS}}": heur or "- None yet: `/s3-learn \"insight\"` adds one.",
    }
    out = tpl
    for k, v in values.items():
        out = out.replace(k, v)
    return out.rstrip("\n") + "\n"


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


def default_target() -> Path:
    return Path.home() / ".claude" / "CLAUDE.md"


def refresh(target: Path | None = None, home: Path | None = None, at: datetime | None = None) -> dict[str, Any]:
    from .memory.rules import load_rules
    from .models import SelfModel
    from .state import _default_self_model, load_model

    h = home or paths.sophia_home()
    sm = load_model(paths.self_model_path(h), SelfModel, _default_self_model)
    rs = load_rules(h)
    block = render(sm, rs)
    out = (target or default_target()).expanduser()
    with locked(out):
        existing = out.read_text(encoding="utf-8") if out.exists() else ""
        new = splice(existing, block)
        if new != existing:
            write_bytes_atomic(out, new.encode("utf-8"))
    stamp = (at or now()).isoformat().replace("+00:00", "Z")
    rec_path = paths.identity_record_path(h)
    with locked(rec_path):
        write_json_atomic(rec_path, {"path": str(out.resolve()), "generated_at": stamp})
    top = sorted(sm.capabilities.items(), key=lambda kv: (-kv[1].proficiency, kv[0].lower()))[:TOP_CAPABILITIES]
    return {
        "path": str(out.resolve()),
        "generated_at": stamp,
        "changed": new != existing,
        "creed_values": len(sm.terminal_creed),
        "top_capabilities": [{"domain": k, "proficiency": v.proficiency} for k, v in top],
        "knowledge_gaps": len(sm.knowledge_gaps),
        "heuristics": min(len(rs), RECENT_HEURISTICS),
    }


def recorded(home: Path | None = None) -> dict[str, Any] | None:
    data = read_json(paths.identity_record_path(home), default=None)
    return data if isinstance(data, dict) else None


__all__ = ["BEGIN", "END", "render", "splice", "refresh", "recorded", "iso"]
