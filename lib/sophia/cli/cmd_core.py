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
    from ..errors import StateFileError
    from ..models import SelfModel
    from ..state import _check_file, load_model, state_files
    from .status_view import collect

    if not home.is_dir():
        fail(f"{home} does not exist", hint="run `s3 init` (or ./install.sh) first")
    for sf in state_files(home):  # every state file, not only the ones shown: a corrupt one is named
        prob = _check_file(sf, sf.path(home))
        if prob is not None and prob.reason != "missing":
            raise StateFileError(prob.path, prob.reason)
    sm = load_model(paths.self_model_path(home), SelfModel)
    rules = read_json(paths.rules_path(home), default=[])
    if not isinstance(rules, list):
        raise StateFileError(paths.rules_path(home), "expected a JSON array of semantic rules")
    return collect(home, sm.model_dump(mode="json"), len(rules))


@app.command()
def status(json_out: JsonOpt = False) -> None:
    """Show identity, creed, capabilities, knowledge gaps, statistics, recent episodes and what is
    installed (skills, agents, hooks: read from the install manifest).

    Warns when the generated CLAUDE.md is older than the self-model (run
    `s3 refresh-identity`). A state file that does not parse is named, with the fix.
    """
    from .. import paths
    from ..state import state_files
    from . import status_stamp

    home = paths.sophia_home()
    seen = status_stamp.identities([sf.path(home) for sf in state_files(home)]) if home.is_dir() else {}
    data = _status_data(home)
    status_stamp.record(home, seen, data["self_model"], data["rules"]["total"])  # the next status trusts them
    if json_out:
        emit_json(data)
        return
    _render_status(data)


def _render_status(data: dict[str, Any]) -> None:
    from .status_view import lines

    c = console()
    for kind, text in lines(data):
        if kind == "table":
            c.print(_capabilities(data["self_model"]["capabilities"]))
        else:
            c.print(text, markup=kind != "p")


def _capabilities(caps: dict[str, Any]) -> Any:
    from rich.table import Table

    from .status_view import pct

    t = Table("Domain", "Proficiency", "Experience", "Success Rate")
    ranked = sorted(caps.items(), key=lambda kv: kv[1]["proficiency"], reverse=True)
    for name, rec in ranked:
        t.add_row(name, pct(rec["proficiency"]), f"{rec['experience_count']} tasks", pct(rec["success_rate"]))
    return t


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
