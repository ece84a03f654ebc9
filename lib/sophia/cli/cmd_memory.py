"""s3 learn / list / forget."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import kinds
from ..kinds import MAX_RULE_CHARS
from .app import app
from .cmd_core import JsonOpt
from .output import console, emit_json, fail


@app.command()
def learn(
    insight: Annotated[str, typer.Argument(help=f"the lesson or heuristic to remember (at most {MAX_RULE_CHARS:,} "
                                           "characters)")],
    domain: Annotated[str | None, typer.Option("--domain", "-d", help="what it applies to, e.g. Docker (default: the "
                                               "technology or topic the insight names, else General)")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Capture a heuristic as a manual semantic rule (a near-duplicate is merged instead)."""
    from ..memory.manage import learn as do_learn

    out = do_learn(insight, domain)
    if json_out:
        emit_json(out)
        return
    r = out["rule"]
    c = console()
    c.print("## Insight Captured\n")
    c.print(f"**Domain:** {r['trigger_concept']}")
    c.print(f"**Rule:** {r['rule_content']}")
    c.print(f"**Id:** {r['id']}\n")
    if out["status"] == "merged":
        c.print(f"This matches an existing rule: validated {r['validation_count']}x, confidence {r['confidence']:.2f}.")
    else:
        c.print("This has been saved to your semantic rules. It will be retrieved when you work on similar "
                "tasks in the future.")
    c.print(f"\nCurrent semantic rules count: {out['total_rules']}")


@app.command(name="list")
def list_cmd(
    kind: Annotated[str, typer.Argument(help=" | ".join(kinds.list_words()))],
    json_out: JsonOpt = False,
) -> None:
    """List stored memories of one kind (JSON: an array of the stored objects)."""
    from ..memory.manage import list_kind

    if kind not in kinds.list_words():
        fail(f"unknown kind {kind!r}", code=2, hint=f"one of: {', '.join(kinds.list_words())}")
    if kind == "team":  # this repository's team folder too, when no hook or recall has seen it yet
        from .. import paths
        from ..memory import team_repo
        from .recall_run import here_projects

        team_repo.refresh_quietly(paths.sophia_home(), here_projects())
    items = list_kind(kind)
    if json_out:
        emit_json(items)
        return
    c = console()
    c.print(f"## {kind.capitalize()}: {len(items)}\n")
    k = kinds.by_plural(kind)
    for it in items:
        c.print(_other_line(kind, it) if k is None or not isinstance(it, dict) else k.line(it), markup=False)


def _other_line(kind: str, it: object) -> str:
    if kind == "gaps" and isinstance(it, dict):
        from .. import gaps

        return f"- {gaps.line(it)}"
    if kind == "conflicts" and isinstance(it, dict):
        return f"- {it.get('superseded_id')} superseded by {it.get('kept_id')} ({it.get('signal')})"
    if kind == "sources" and isinstance(it, dict):
        span = f" {str(it.get('first') or '')[:10]}..{str(it.get('last') or '')[:10]}" if it.get("first") else ""
        projects = f" [{', '.join(it['projects'])}]" if it.get("projects") else ""
        return f"- {it.get('source')}: {it.get('turns')} turns, {it.get('memcells')} MemCells{span}{projects}"
    return f"- {it}"


@app.command()
def forget(
    memory_id: Annotated[str | None, typer.Argument(
        metavar="ID", help="any id `s3 recall` or `s3 list` shows: "
        + ", ".join(f"{k.prefix}..." for k in kinds.KINDS.values()) + ", mc:SOURCE:N")] = None,
    source: Annotated[str | None, typer.Option(
        "--source", help="forget a whole ingested conversation (see `s3 list sources`)")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Remove one memory, or a whole ingested conversation, from its file and from the index."""
    from ..memory.manage import forget as do_forget
    from ..memory.manage import forget_source

    if (memory_id is None) == (source is None):
        fail("give either an ID or --source NAME", code=2, hint="see `s3 forget --help`")
    if source is not None:
        gone = forget_source(source)
        if json_out:
            emit_json(gone)
            return
        typer.echo(f"Forgot source {gone['source']}: {gone['turns_removed']} turns "
                   f"({gone['index_rows_removed']} index rows)")
        return
    assert memory_id is not None
    out = do_forget(memory_id)
    if json_out:
        emit_json(out)
        return
    typer.echo(f"Forgot {out['removed']} (from {out['from']}): {out['text']}")
