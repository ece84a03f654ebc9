"""s3 reflect --prepare / consolidate --prepare / refresh-identity."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import console, emit_json, fail

PrepareOpt = Annotated[bool, typer.Option("--prepare", help="Print the evidence pack the subagent starts from.")]


@app.command()
def reflect(
    prepare: PrepareOpt = False,
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, max=50, help="how many recent episodes")] = 5,
    episode: Annotated[str | None, typer.Option("--episode", help="reflect on this episode only")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Reflection evidence: recent unconsolidated episodes, capabilities, gaps and existing rules.

    The thinking is done by the s3-reflection subagent (/s3-reflect), which starts from this pack
    and returns its result through `s3 apply reflection FILE`.
    """
    from ..memory.prepare import reflect_pack

    if not prepare:
        fail("reflection is done by the s3-reflection subagent (run /s3-reflect in Claude Code)",
             code=2, hint="`s3 reflect --prepare --json` prints the evidence pack it starts from")
    pack = reflect_pack(episodes, episode)
    if json_out:
        emit_json(pack)
        return
    c = console()
    c.print(f"## Reflection Evidence ({len(pack['episodes'])} episodes)\n")
    for e in pack["episodes"]:
        c.print(f"- {e['id']}: {e.get('goal_summary') or '(no goal)'} [{e.get('outcome', 'UNKNOWN')}]")
    caps = pack["self_model"]["capabilities"]
    cap_text = ", ".join(f"{k} {round(v['proficiency'] * 100)}%" for k, v in caps.items()) or "none"
    c.print(f"\nCapabilities: {cap_text}")
    c.print(f"Knowledge gaps: {len(pack['self_model']['knowledge_gaps'])}; existing rules: {len(pack['existing_rules'])}")
    c.print(f"\nResult file for the subagent: {pack['task']['result_path']}\nThen: {pack['task']['apply_command']}")


@app.command()
def consolidate(prepare: PrepareOpt = False, json_out: JsonOpt = False) -> None:
    """Consolidation evidence: unconsolidated non-trivial episodes, clustered (DBSCAN).

    The s3-consolidation subagent (/s3-consolidate) turns clusters of 3+ episodes into rules and
    returns them through `s3 apply consolidation FILE`.
    """
    from .. import paths
    from ..memory.prepare import consolidate_pack
    from ..models import Config
    from ..state import load_model

    if not prepare:
        fail("consolidation is done by the s3-consolidation subagent (run /s3-consolidate in Claude Code)",
             code=2, hint="`s3 consolidate --prepare --json` prints the clusters it starts from")
    cfg = load_model(paths.config_path(), Config, lambda: Config.model_validate({}))
    pack = consolidate_pack(min_episodes=cfg.consolidation_min_episodes)
    if json_out:
        emit_json(pack)
        return
    c = console()
    c.print(f"## Consolidation Evidence: {pack['unconsolidated']} unconsolidated episodes "
            f"({pack['clustering'].get('method')})\n")
    for cl in pack["clusters"]:
        c.print(f"- {cl['cluster_id']} ({cl['size']} episodes): {', '.join(cl['episode_ids'])}")
    c.print(f"- unclustered: {len(pack['noise'])}")
    if pack["unconsolidated"] < (pack.get("min_episodes") or 0):
        c.print(f"\nFewer than {pack['min_episodes']} episodes: consolidation can wait.")
    c.print(f"\nResult file for the subagent: {pack['task']['result_path']}\nThen: {pack['task']['apply_command']}")


@app.command(name="refresh-identity")
def refresh_identity(
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="write this file instead (default: the CLAUDE.md Claude Code loads, "
        "~/.claude/CLAUDE.md, or the project's .claude/CLAUDE.md after install.sh --project)")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Regenerate the System 3 block of CLAUDE.md (creed, top capabilities, gaps, newest heuristics).

    Only the block between the sophia-system3 markers is replaced; the rest of the file is kept.
    """
    from ..identity_md import refresh

    out = refresh(output)
    if json_out:
        emit_json(out)
        return
    c = console()
    c.print("## Identity Refreshed\n")
    c.print(f"CLAUDE.md has been regenerated at: {out['path']}\n")
    c.print("Contents include:\n- Your identity goal")
    c.print(f"- Terminal creed ({out['creed_values']} values)")
    tops = ", ".join(f"{t['domain']} ({round(t['proficiency'] * 100)}%)" for t in out["top_capabilities"])
    c.print(f"- Top capabilities: {tops or 'none yet'}")
    c.print(f"- Knowledge gaps: {out['knowledge_gaps']} identified")
    c.print(f"- Recent heuristics: {out['heuristics']} included\n")
    c.print(_loaded_note(out))


def _loaded_note(out: dict[str, object]) -> str:
    """Whether Claude Code will read what was written: only ~/.claude/CLAUDE.md and a project's CLAUDE.md."""
    if out["loaded_by_claude_code"] == "always":
        return "The new CLAUDE.md will be loaded at the start of your next session."
    if out["loaded_by_claude_code"] == "project":
        return (f"Wrote {out['path']}: Claude Code loads it only in sessions started in {out['project_dir']} "
                "(or below).")
    return (f"Wrote {out['path']}. Claude Code does not load this file: it reads ~/.claude/CLAUDE.md and a "
            "project's CLAUDE.md (or .claude/CLAUDE.md); `s3 refresh-identity` without --output updates the one "
            "this install uses.")
