"""s3 learn / list / forget."""

from __future__ import annotations

from typing import Annotated

import typer

from ..memory.rules import MAX_RULE_CHARS
from .app import app
from .cmd_core import JsonOpt
from .output import console, emit_json, fail

LIST_KINDS = ("rules", "episodes", "foresight", "facts", "profile", "scenes", "gaps", "causal", "procedures",
              "memcells", "conflicts")


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
    kind: Annotated[str, typer.Argument(help=" | ".join(LIST_KINDS))],
    json_out: JsonOpt = False,
) -> None:
    """List stored memories of one kind (JSON: an array of the stored objects)."""
    from ..memory.manage import list_kind

    if kind not in LIST_KINDS:
        fail(f"unknown kind {kind!r}", code=2, hint=f"one of: {', '.join(LIST_KINDS)}")
    items = list_kind(kind)
    if json_out:
        emit_json(items)
        return
    c = console()
    c.print(f"## {kind.capitalize()}: {len(items)}\n")
    for it in items:
        if isinstance(it, str):
            c.print(f"- {it}")
        elif kind == "rules":
            c.print(f"- {it.get('id')} [{it.get('trigger_concept')}] {it.get('rule_content')} "
                    f"(confidence {float(it.get('confidence') or 0):.2f})")
        elif kind == "episodes":
            c.print(f"- {it.get('id')} [{it.get('outcome')}] {it.get('goal_summary') or '(no goal)'}"
                    + (" (consolidated)" if it.get("consolidated") else ""))
        elif kind == "conflicts":
            c.print(f"- {it.get('superseded_id')} superseded by {it.get('kept_id')} ({it.get('signal')})")
        else:
            window = ""
            if it.get("valid_from") or it.get("valid_until"):
                window = f" (valid {it.get('valid_from') or '...'} to {it.get('valid_until') or '...'})"
            when = f" @{it['event_time']}" if it.get("event_time") else ""
            c.print(f"- {it.get('id')} {it.get('text')}{when}{window}")


@app.command()
def forget(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="rule_..., ep_..., fact_..., fs_..., prof_...")],
    json_out: JsonOpt = False,
) -> None:
    """Remove one memory from its file and from the index (episodes too); says what it removed."""
    from ..memory.manage import forget as do_forget

    out = do_forget(memory_id)
    if json_out:
        emit_json(out)
        return
    typer.echo(f"Forgot {out['removed']} (from {out['from']}): {out['text']}")
