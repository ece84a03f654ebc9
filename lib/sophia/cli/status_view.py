"""What ``s3 status`` shows: its data besides the validated state files, and its text as lines, for the
typer command (``cmd_core.status``) and the fast path (``fast_cmds``) alike. Standard library only.

A line is ``(kind, text)``: ``"h"`` a bold header (rich markup; printed plainly off a terminal, as rich
does), ``"m"`` a line rich reads with markup, ``"p"`` one it prints without, ``"table"`` the capabilities
table (built with rich by the typer command; its text is empty).
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

Line = tuple[str, str]


def collect(home: Path, self_model: dict[str, Any], rules_total: int, index: Any = None) -> dict[str, Any]:
    """The status data around the self-model (its JSON dump) and the number of semantic rules; ``index``: the
    episode index when the caller has just read and checked it (after a turn: not decoded twice)."""
    from .. import paths
    from ..config_defaults import load as load_config
    from ..episode_store import read_index
    from ..identity_md import staleness as identity_staleness
    from ..install.inventory import inventory
    from ..learning.audits import summary as audit_summary
    from ..learning.ledger import summary as digest_summary
    from ..learning.metrics import status_trend

    if not isinstance(index, dict):
        index = read_index(home)
    entries = index.get("entries", [])
    cfg = load_config(paths.config_path(home))[0]
    return {
        "home": str(home),
        "digests": digest_summary(home, bool(cfg.get("learning_enabled")), cfg),
        "guardian_audits": audit_summary(home, cfg["guardian"]["tier3_enabled"] is True),
        "growth": status_trend(home),
        "self_model": self_model,
        "episodes": {
            "total": int(index.get("total_episodes") or len(entries)),
            "in_index": len(entries),
            "recent": entries[:5],
        },
        "rules": {"total": rules_total},
        "claude_md": identity_staleness(home, _Updated(self_model.get("updated_at"))),
        "installed": inventory(home),
        "claude_code_memory": _claude_code_memory(home),
        "team_memory": _team_memory(home),
    }


class _Updated:
    """What ``identity_md.staleness`` reads of the self-model: when it was last updated."""

    def __init__(self, updated_at: Any) -> None:
        self.updated_at = updated_at


def _claude_code_memory(home: Path) -> dict[str, Any]:
    """Claude Code's own auto memory for this user and the current project (sophia.memory.claude_code)."""
    from ..hooks.project import project_of
    from ..memory import claude_code

    project = project_of(os.getcwd())
    claude_code.refresh_quietly(home, [project] if project else None)
    return claude_code.status(home, project)


def _team_memory(home: Path) -> dict[str, Any]:
    """The team memory kept in repositories (sophia.memory.team_repo): this one's and every project's."""
    from .. import paths
    from ..hooks.project import project_of
    from ..memory import team_repo

    project = project_of(os.getcwd())
    team_repo.refresh_quietly(home, [project] if project else None)
    counts = team_repo.counts(home)
    return {"project": project, "folder": paths.TEAM_FOLDER, "here": counts.get(project or "", 0),
            "total": sum(counts.values()), "projects": counts}


def pct(x: float) -> str:
    return f"{round(x * 100)}%"


def lines(data: dict[str, Any]) -> list[Line]:
    """The status text, line by line."""
    sm = data["self_model"]
    out: list[Line] = [("h", "[bold]## System 3 Status[/bold]\n"), ("h", "[bold]### Identity[/bold]"),
                       ("m", f"- Agent ID: {sm['agent_id']}"), ("m", f"- Goal: {sm['identity_goal']}\n"),
                       ("h", "[bold]### Terminal Creed[/bold]")]
    out += [("m", f"{i}. {line}") for i, line in enumerate(sm["terminal_creed"], 1)]
    out.append(("h", "\n[bold]### Capabilities[/bold]"))
    out.append(("table", "") if sm.get("capabilities") else ("m", "- none tracked yet (reflection adds them)"))
    out += _gap_lines(sm.get("knowledge_gaps") or [])
    out += _statistics(data)
    out += _episode_lines(data["episodes"]["recent"])
    out += _memory_lines(data)
    out += _installed_lines(data["installed"])
    return out


def _gap_lines(stored: list[Any]) -> list[Line]:
    """The open gaps, one line each (with their project), and how many are closed."""
    from .. import gaps

    out: list[Line] = [("h", "\n[bold]### Knowledge Gaps[/bold]")]
    records = gaps.records(stored)
    open_ = [g for g in records if gaps.is_open(g)]
    out += [("p", f"- {gaps.line(g)}") for g in open_]
    if not open_:
        out.append(("m", "- none open"))
    if len(records) > len(open_):
        out.append(("m", f"- {len(records) - len(open_)} closed (`s3 list gaps` lists them)"))
    return out


def _statistics(data: dict[str, Any]) -> list[Line]:
    from ..learning.audits import summary_lines
    from ..learning.ledger import summary_line
    from ..learning.metrics import trend_line

    sm = data["self_model"]
    out: list[Line] = [("h", "\n[bold]### Statistics[/bold]"),
                       ("m", f"- Total sessions: {sm['total_sessions']}"),
                       ("m", f"- Total episodes: {data['episodes']['total']}"),
                       ("m", f"- Semantic rules: {data['rules']['total']}"),
                       ("m", f"- Last session: {sm.get('last_session') or 'never'}"),
                       ("m", f"- Last reflection: {sm.get('last_reflection') or 'never'}"),
                       ("m", f"- {summary_line(data['digests'])}")]
    out += [("p", f"{'' if line.startswith(' ') else '- '}{line}") for line in summary_lines(data["guardian_audits"])]
    growth = trend_line(data["growth"])
    if growth:
        out.append(("p", f"- Growth: {growth}"))
    return out


def _episode_lines(recent: list[dict[str, Any]]) -> list[Line]:
    out: list[Line] = [("h", "\n[bold]### Recent Episodes[/bold]")]
    if not recent:
        out.append(("m", "- none yet"))
    for i, e in enumerate(recent, 1):
        h = e.get("heuristics_count") or 0
        extra = f", {h} heuristics" if h else ""
        out.append(("m", f"{i}. [{e.get('outcome', 'UNKNOWN')}] {e.get('goal_summary') or '(no goal)'} "
                         f"({e.get('tool_call_count', 0)} tools{extra}) {e.get('id')}"))
    return out


def _memory_lines(data: dict[str, Any]) -> list[Line]:
    cm, cc, tm = data["claude_md"], data["claude_code_memory"], data["team_memory"]
    return [("h", "\n[bold]### CLAUDE.md[/bold]"), ("m", f"- {cm['message']}"),
            ("h", "\n[bold]### Claude Code's own memory[/bold]"),
            ("p", f"- Auto memory: {'on' if cc['auto_memory_enabled'] else 'off'} ({cc['why']}); "
                  f"{cc['files_indexed']} of its files indexed (memory files and CLAUDE.md, read only; "
                  "`s3 recall --type cc_memory`)"),
            ("h", "\n[bold]### Team memory[/bold]"),
            ("p", f"- {tm['here']} items shared in this repository's {tm['folder']}/ ({tm['total']} in "
                  f"{len(tm['projects'])} repositories; read only: edit the files; `s3 list team`, `s3 team "
                  "suggest`)")]


def _installed_lines(inv: dict[str, Any]) -> list[Line]:
    out: list[Line] = [("h", "\n[bold]### Installed[/bold]")]
    if not inv["installed"]:
        return [*out, ("p", f"- {inv['note']}")]
    for label, key in (("Skills", "skills"), ("Agents", "agents"), ("Hooks", "hooks")):
        out.append(("p", f"- {label} ({len(inv[key])}): {', '.join(inv[key]) or 'none'}"))
    out.append(("p", f"- Into: {', '.join(inv['targets'])}"))
    if inv["missing"]:
        out.append(("p", f"- Missing (run ./install.sh again): {', '.join(inv['missing'])}"))
    return out
