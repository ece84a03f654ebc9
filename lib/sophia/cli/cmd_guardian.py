"""s3 guardian check / stats / apply: test the tier-1 decision, see what it did, record a tier-3 audit."""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any

import typer

from .app import app
from .output import GUARDIAN_EXIT, emit_json, usage

guardian_app = typer.Typer(
    name="guardian",
    help="The guardian: see what it decides for a command, what it did for you, and record s3-guardian audits.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(guardian_app, name="guardian")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]


@guardian_app.command("check", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
def check(
    words: Annotated[list[str] | None, typer.Argument(help="The Bash command to judge, as you would type it (the same as -c 'CMD').", show_default=False)] = None,
    command: Annotated[str | None, typer.Option("--command", "-c", help="A Bash command to judge (else a PreToolUse payload is read from stdin).")] = None,
    file: Annotated[str | None, typer.Option("--file", help="Judge a Write to this path instead of a command.")] = None,
    cwd: Annotated[str | None, typer.Option("--cwd", help="The working directory to judge against (default: the current one).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Show what the guardian decides (deny / ask / allow, and why) without running anything.

    Handy to test your guardian.allow / guardian.deny patterns in config.json:
    `s3 guardian check -c 'rm -rf build'` (or `s3 guardian check rm -rf build`; quote what the shell would
    expand or run: `s3 guardian check 'git push --force && rm -rf ~'`), or pipe a hook payload:
    `s3 guardian check --json < payload.json`.

    Exit code = the decision (whatever the mode): 0 allow, 3 ask, 4 deny; 2 bad input.
    """
    from ..guardian.hook import decide

    here = cwd or os.getcwd()
    if words:
        if command is not None or file is not None:
            usage("give the command once: as words or with -c, not both (nor with --file)")
        command = " ".join(words)
    payload: dict[str, Any]
    if command is not None:
        payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": here}
    elif file is not None:
        payload = {"tool_name": "Write", "tool_input": {"file_path": os.path.abspath(file), "content": ""}, "cwd": here}
    else:
        raw = sys.stdin.read()
        try:
            payload = json.loads(raw)
        except ValueError:
            usage("stdin is not a JSON PreToolUse payload", hint="use --command 'CMD' to judge a command")
        if not isinstance(payload, dict):
            usage("stdin is not a JSON object")
        payload.setdefault("cwd", here)
    env = dict(os.environ)
    env.setdefault("CLAUDE_PROJECT_DIR", payload.get("cwd") or here)
    res = decide(payload, env)
    effective = res["decision"] if res["mode"] == "enforce" else "allow"
    data = {"decision": res["decision"], "effective": effective, "mode": res["mode"], "rule": res["rule"],
            "reason": res["reason"], "tool": res["tool"], "subject": res["subject"], "notes": res["notes"]}
    if json_out:
        emit_json(data)
    else:
        _say(res, effective)
    raise typer.Exit(GUARDIAN_EXIT.get(res["decision"], 0))


@guardian_app.command("stats")
def stats(
    days: Annotated[int, typer.Option("--days", min=1, max=3650, help="Look this many days back.")] = 30,
    top: Annotated[int, typer.Option("--top", min=0, max=100, help="How many of the most asked commands to list.")] = 10,
    json_out: JsonOpt = False,
) -> None:
    """What the guardian did for you: denies and asks per day and per rule, and the commands it asked
    about most (from logs/guardian_blocks.jsonl; allowed calls are not logged)."""
    from .. import paths
    from ..guardian import stats as gstats

    entries, bad = gstats.read(paths.sophia_home())
    data = gstats.summarize(entries, days=days, top=top)
    data["unreadable_lines"] = bad
    if json_out:
        emit_json(data)
        return
    by = data["by_decision"]
    once = f", {by['allowed_once']} let through on your allow-once grant" if by.get("allowed_once") else ""
    typer.echo(f"Last {days} days: {by.get('deny', 0)} denied, {by.get('ask', 0)} asked{once}"
               + (f" ({bad} unreadable log lines skipped)" if bad else ""))
    if not data["total"]:
        typer.echo("Nothing was denied or asked about.")
        return
    typer.echo("By rule:")
    for r in data["by_rule"]:
        typer.echo(f"  {r['count']:>5}  {r['decision']:<4}  {r['rule']}")
    typer.echo("By day:")
    for d in data["by_day"][-14:]:
        typer.echo(f"  {d['day']}  deny {d.get('deny', 0)}  ask {d.get('ask', 0)}")
    if data["top_asked"]:
        typer.echo("Most asked:")
        for c in data["top_asked"]:
            typer.echo(f"  {c['count']:>5}  {c['command']}")


@guardian_app.command("allow-once")
def allow_once(
    match: Annotated[str, typer.Option("--match", "-m", help="Pick the newest blocked call whose command holds this text.")] = "",
    minutes: Annotated[float, typer.Option("--minutes", min=0.5, max=60, help="How long the grant lasts.")] = 10,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Let exactly the call the guardian just denied or asked about through, for a few minutes.

    Run it yourself, in your own terminal: an agent running it is denied. The grant matches the exact
    command (or path, URL, MCP tool), is logged, and expires; Claude Code's own permission rules still apply.
    """
    from .. import paths
    from ..guardian import grants
    from ..guardian import stats as gstats
    from .output import fail

    home = paths.sophia_home()
    entry = grants.latest_blocked(gstats.read(home)[0], match)
    if entry is None:
        fail("no denied or asked call in the guardian's log" + (f" whose command holds {match!r}" if match else ""))
    if not yes and not json_out and sys.stdin.isatty():
        typer.confirm(f"Allow for {minutes:g} min: {entry.get('command')!s:.300}\n({entry.get('reason')})?", abort=True)
    try:
        g = grants.grant(str(home), entry, minutes)
    except ValueError as exc:
        fail(str(exc))
    if json_out:
        emit_json({k: g[k] for k in ("tool", "command", "rule", "until_iso")})
    else:
        typer.echo(f"Allowed until {g['until_iso']}: {g['command']}")


def _say(res: dict[str, Any], effective: str) -> None:
    line = f"{res['decision'].upper()}"
    if res["reason"]:
        line += f": {res['reason']}"
    typer.echo(line)
    if effective != res["decision"]:
        typer.echo(f"(mode {res['mode']}: the hook would allow it)")
    for n in res["notes"]:
        typer.echo(f"note: {n}")


@guardian_app.command("apply")
def apply(
    source: Annotated[str, typer.Argument(help="A JSON file with the AuditResult (or its AgentResult envelope), or - for stdin.")],
    json_out: JsonOpt = False,
) -> None:
    """Validate an s3-guardian audit and append it to logs/guardian_audits.jsonl (once per task and content)."""
    from ..guardian.audit import AuditError, apply_guardian_source

    try:
        res = apply_guardian_source(source)
    except AuditError as exc:
        usage(f"invalid guardian audit: {exc}")
    if json_out:
        emit_json(res)
        return
    verdict = "passed" if res["passed"] else ("failed" if res["passed"] is False else res["status"])
    state = "logged" if res["logged"] else "already logged"
    typer.echo(f"Audit {res['task_id']}: {verdict} (risk {res['risk_level'] or '-'}); {state} in {res['log']}")
