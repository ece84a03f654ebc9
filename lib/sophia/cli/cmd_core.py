"""s3 init / status / doctor / version."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .output import console, emit_json, fail

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]


@app.command()
def version(json_out: JsonOpt = False) -> None:
    """Print the kit's version."""
    from .. import __version__

    if json_out:
        emit_json({"version": __version__})
    else:
        typer.echo(f"s3 (Sophia System 3) {__version__}")


@app.command()
def init(json_out: JsonOpt = False) -> None:
    """Create the ~/.sophia state tree (idempotent: existing files are kept as they are).

    Creates config.json, self_model.json, user_models/default.json, episodes/index.json,
    semantic_rules.json, agent_results/ and logs/; directories 0700, files 0600. An older tree is
    migrated first (a backup is kept in backups/); what changed is printed as notes.
    """
    from .. import paths
    from ..state import init_tree, secure_tree

    home = paths.sophia_home()
    notes: list[str] = []
    created = init_tree(home, notes)
    secure_tree(home)
    from ..learning.procedures import sweep

    retired = sweep(home)  # procedures an older kit learned that would not be taught now
    if retired:
        notes.append(f"retired {len(retired)} learned procedure(s) that force past a safety check or are tied "
                     "to a one-off value")
    if json_out:
        emit_json({"home": str(home), "created": created, "migration_notes": notes})
        return
    for note in notes:
        typer.echo(f"Note: {note}")
    if created:
        typer.echo(f"Initialised {home}: created {', '.join(created)}")
    else:
        typer.echo(f"{home} is already initialised; nothing changed.")
    typer.echo("Next: `s3 status` to see the self-model, `s3 recall QUERY` to search memory.")


def _status_data(home: Path) -> dict[str, Any]:
    from .. import paths
    from ..atomic import read_json
    from ..episode_store import read_index
    from ..identity_md import staleness as identity_staleness
    from ..install.inventory import inventory
    from ..models import SelfModel
    from ..state import load_model

    if not home.is_dir():
        fail(f"{home} does not exist", hint="run `s3 init` (or ./install.sh) first")
    from ..errors import StateFileError
    from ..state import _check_file, state_files

    for sf in state_files(home):  # every state file, not only the ones shown: a corrupt one is named
        prob = _check_file(sf, sf.path(home))
        if prob is not None and prob.reason != "missing":
            raise StateFileError(prob.path, prob.reason)
    sm = load_model(paths.self_model_path(home), SelfModel)
    index = read_index(home)
    rules = read_json(paths.rules_path(home), default=[])
    if not isinstance(rules, list):
        raise StateFileError(paths.rules_path(home), "expected a JSON array of semantic rules")
    entries = index.get("entries", [])
    from ..config_defaults import load as load_config
    from ..learning.audits import summary as audit_summary
    from ..learning.ledger import summary as digest_summary
    from ..learning.metrics import status_trend

    cfg = load_config(paths.config_path(home))[0]
    return {
        "home": str(home),
        "digests": digest_summary(home, bool(cfg.get("learning_enabled")), cfg),
        "guardian_audits": audit_summary(home, cfg["guardian"]["tier3_enabled"] is True),
        "growth": status_trend(home),
        "self_model": sm.model_dump(mode="json"),
        "episodes": {
            "total": int(index.get("total_episodes") or len(entries)),
            "in_index": len(entries),
            "recent": entries[:5],
        },
        "rules": {"total": len(rules)},
        "claude_md": identity_staleness(home, sm),
        "installed": inventory(home),
        "claude_code_memory": _claude_code_memory(home),
        "team_memory": _team_memory(home),
    }


def _claude_code_memory(home: Path) -> dict[str, Any]:
    """Claude Code's own auto memory for this user and the current project (sophia.memory.claude_code)."""
    import os

    from ..hooks.project import project_of
    from ..memory import claude_code

    project = project_of(os.getcwd())
    claude_code.refresh_quietly(home, [project] if project else None)
    return claude_code.status(home, project)


def _team_memory(home: Path) -> dict[str, Any]:
    """The team memory kept in repositories (sophia.memory.team_repo): this one's and every project's."""
    import os

    from .. import paths
    from ..hooks.project import project_of
    from ..memory import team_repo

    project = project_of(os.getcwd())
    team_repo.refresh_quietly(home, [project] if project else None)
    counts = team_repo.counts(home)
    return {"project": project, "folder": paths.TEAM_FOLDER, "here": counts.get(project or "", 0),
            "total": sum(counts.values()), "projects": counts}


@app.command()
def status(json_out: JsonOpt = False) -> None:
    """Show identity, creed, capabilities, knowledge gaps, statistics, recent episodes and what is
    installed (skills, agents, hooks: read from the install manifest).

    Warns when the generated CLAUDE.md is older than the self-model (run
    `s3 refresh-identity`). A state file that does not parse is named, with the fix.
    """
    from .. import paths

    home = paths.sophia_home()
    data = _status_data(home)
    if json_out:
        emit_json(data)
        return
    _render_status(data)


def _pct(x: float) -> str:
    return f"{round(x * 100)}%"


def _render_gaps(c: Any, stored: list[Any]) -> None:
    """The open gaps, one line each (with their project), and how many are closed."""
    from .. import gaps

    c.print("\n[bold]### Knowledge Gaps[/bold]")
    records = gaps.records(stored)
    open_ = [g for g in records if gaps.is_open(g)]
    for g in open_:
        c.print(f"- {gaps.line(g)}", markup=False)
    if not open_:
        c.print("- none open")
    if len(records) > len(open_):
        c.print(f"- {len(records) - len(open_)} closed (`s3 list gaps` lists them)")


def _render_status(data: dict[str, Any]) -> None:
    from rich.table import Table

    from ..learning.audits import summary_lines
    from ..learning.ledger import summary_line
    from ..learning.metrics import trend_line

    c = console()
    sm = data["self_model"]
    c.print("[bold]## System 3 Status[/bold]\n")
    c.print("[bold]### Identity[/bold]")
    c.print(f"- Agent ID: {sm['agent_id']}")
    c.print(f"- Goal: {sm['identity_goal']}\n")
    c.print("[bold]### Terminal Creed[/bold]")
    for i, line in enumerate(sm["terminal_creed"], 1):
        c.print(f"{i}. {line}")
    c.print("\n[bold]### Capabilities[/bold]")
    caps = sm.get("capabilities") or {}
    if caps:
        t = Table("Domain", "Proficiency", "Experience", "Success Rate")
        ranked = sorted(caps.items(), key=lambda kv: kv[1]["proficiency"], reverse=True)
        for name, rec in ranked:
            t.add_row(name, _pct(rec["proficiency"]), f"{rec['experience_count']} tasks", _pct(rec["success_rate"]))
        c.print(t)
    else:
        c.print("- none tracked yet (reflection adds them)")
    _render_gaps(c, sm.get("knowledge_gaps") or [])
    eps = data["episodes"]
    c.print("\n[bold]### Statistics[/bold]")
    c.print(f"- Total sessions: {sm['total_sessions']}")
    c.print(f"- Total episodes: {eps['total']}")
    c.print(f"- Semantic rules: {data['rules']['total']}")
    c.print(f"- Last session: {sm.get('last_session') or 'never'}")
    c.print(f"- Last reflection: {sm.get('last_reflection') or 'never'}")
    c.print(f"- {summary_line(data['digests'])}")
    for line in summary_lines(data["guardian_audits"]):
        c.print(f"{'' if line.startswith(' ') else '- '}{line}", markup=False)
    growth = trend_line(data["growth"])
    if growth:
        c.print(f"- Growth: {growth}", markup=False)
    c.print("\n[bold]### Recent Episodes[/bold]")
    if not eps["recent"]:
        c.print("- none yet")
    for i, e in enumerate(eps["recent"], 1):
        h = e.get("heuristics_count") or 0
        extra = f", {h} heuristics" if h else ""
        c.print(f"{i}. [{e.get('outcome', 'UNKNOWN')}] {e.get('goal_summary') or '(no goal)'} "
                f"({e.get('tool_call_count', 0)} tools{extra}) {e.get('id')}")
    cm = data["claude_md"]
    c.print("\n[bold]### CLAUDE.md[/bold]")
    c.print(f"- {cm['message']}")
    cc = data["claude_code_memory"]
    c.print("\n[bold]### Claude Code's own memory[/bold]")
    c.print(f"- Auto memory: {'on' if cc['auto_memory_enabled'] else 'off'} ({cc['why']}); "
            f"{cc['files_indexed']} of its files indexed (memory files and CLAUDE.md, read only; "
            "`s3 recall --type cc_memory`)", markup=False)
    tm = data["team_memory"]
    c.print("\n[bold]### Team memory[/bold]")
    c.print(f"- {tm['here']} items shared in this repository's {tm['folder']}/ ({tm['total']} in "
            f"{len(tm['projects'])} repositories; read only: edit the files; `s3 list team`, `s3 team suggest`)",
            markup=False)
    _render_installed(data["installed"])


def _render_installed(inv: dict[str, Any]) -> None:
    c = console()
    c.print("\n[bold]### Installed[/bold]")
    if not inv["installed"]:
        c.print(f"- {inv['note']}", markup=False)
        return
    for label, key in (("Skills", "skills"), ("Agents", "agents"), ("Hooks", "hooks")):
        c.print(f"- {label} ({len(inv[key])}): {', '.join(inv[key]) or 'none'}", markup=False)
    c.print(f"- Into: {', '.join(inv['targets'])}", markup=False)
    if inv["missing"]:
        c.print(f"- Missing (run ./install.sh again): {', '.join(inv['missing'])}", markup=False)


@app.command()
def doctor(
    repair: Annotated[bool, typer.Option("--repair", help="Mend a bad config.json key alone (its last good "
                                         "value, else the default; your other keys are kept); move other corrupt "
                                         "files to quarantine/ and restore the last good copy (or the default).")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Check every state file (and the index); with --repair, set bad ones aside and restore them.

    Exits 1 when problems remain (after --repair: when something could not be restored).
    """
    from .. import paths
    from ..index.doctor import check_index
    from ..state import check_tree, register_checker, repair_tree

    register_checker(check_index)  # the index sits above the state tree: its check is added here
    home = paths.sophia_home()
    problems = repair_tree(home) if repair else check_tree(home)
    unresolved = [p for p in problems if not repair or "no good copy" in p.action or not p.action]
    if json_out:
        emit_json({
            "home": str(home),
            "ok": not problems,
            "repaired": repair,
            "problems": [{"path": str(p.path), "reason": p.reason, "action": p.action} for p in problems],
        })
    else:
        if not problems:
            typer.echo(f"{home}: all state files parse and match their schemas.")
        for p in problems:
            line = f"{p.path}: {p.reason}"
            if p.action:
                line += f" -> {p.action}"
            typer.echo(line)
        if problems and not repair:
            typer.echo("Run `s3 doctor --repair` to repair them: a bad config.json key is mended alone (your other "
                       "keys are kept); other bad files are set aside in quarantine/ and restored.")
    if unresolved:
        raise typer.Exit(1)
