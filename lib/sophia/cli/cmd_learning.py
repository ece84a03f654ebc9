"""s3 backfill / s3 metrics: learning from the sessions already on disk, and whether it shows."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import console, emit_json, existing_home, fail, interrupted, usage


def _progress_bar(total_hint: list[int]) -> tuple[Any, Any]:
    """A rich progress bar on stderr (a terminal only) and the callback that advances it."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("backfill"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   TextColumn("{task.description}"), console=Console(stderr=True), transient=True)
    task = bar.add_task("", total=None)

    def advance(done: int, total: int, path: Path | None) -> None:
        total_hint[0] = done
        bar.update(task, completed=done, total=total, description=path.parent.name[-40:] if path else "")

    return bar, advance


def _n(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "es" if word.endswith("x") else "s")


def _say_backfill(r: dict[str, Any], dry_run: bool) -> None:
    c = console()
    for note in r["notes"]:
        c.print(f"Note: {note}", markup=False)
    if dry_run:
        c.print(f"{_n(r['found'], 'transcript')} under {r['root']}: {r['todo']} to backfill, {r['unchanged']} done "
                f"already, {r['known']} seen by the hooks", markup=False)
        for p in r["would_process"]:
            c.print(f"- {p}", markup=False)
        return
    c.print(f"Backfilled {r['processed']} of {_n(r['found'], 'transcript')} ({r['unchanged']} done already, "
            f"{r['known']} seen by the hooks): {_n(r['episodes'], 'episode')}, {_n(r['fixes'], 'fix')}, "
            f"{_n(r['procedures_added'], 'procedure')} and {_n(r['gaps_added'], 'knowledge gap')} added", markup=False)
    c.print(f"Digests: {r['digests_queued']} queued{_not_queued(r['digests_skipped'])}"
            + (f"; worker started (pid {r['worker']})" if r["worker"] else ""), markup=False)
    if r["bad_lines"]:
        c.print(f"Skipped {_n(sum(r['bad_lines'].values()), 'unreadable line')} in "
                f"{_n(len(r['bad_lines']), 'transcript')}", markup=False)
    for f in r["failed"]:
        c.print(f"Failed: {f['path']}: {f['error']}", markup=False)


def _not_queued(skipped: dict[str, int]) -> str:
    """``; 4 not queued (learning_enabled is false)``, or with several reasons
    ``; not queued: 3 (trivial session), 1 (...)``: each count beside its reason."""
    reasons = sorted(skipped.items(), key=lambda kv: -kv[1])
    if len(reasons) == 1:
        return f"; {reasons[0][1]} not queued ({reasons[0][0]})"
    return ("; not queued: " + ", ".join(f"{n} ({why})" for why, n in reasons)) if reasons else ""


@app.command()
def backfill(
    since: Annotated[str | None, typer.Option("--since", metavar="DATE",
                                              help="Only sessions written on or after DATE (YYYY-MM-DD).")] = None,
    project: Annotated[Path | None, typer.Option("--project", metavar="PATH",
                                                 help="Only sessions run in PATH or a folder below it.")] = None,
    source: Annotated[Path | None, typer.Option("--from", metavar="DIR",
                                                help="Read transcripts from DIR instead of "
                                                     "~/.claude/projects.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be read; change nothing.")] = False,
    no_digest: Annotated[bool, typer.Option("--no-digest", help="Queue no digest, even when learning is on.")] = False,
    agent: Annotated[str, typer.Option("--agent", metavar="AGENT",
                                       help="Whose sessions: claude (~/.claude/projects) or codex "
                                            "(~/.codex/sessions, or $CODEX_HOME/sessions).")] = "claude",
    json_out: JsonOpt = False,
) -> None:
    """Learn from the Claude Code sessions already on disk (`~/.claude/projects/*/*.jsonl`), or Codex's
    with --agent codex (`~/.codex/sessions/**/rollout-*.jsonl`).

    For each session, newest first: its episode (redacted, as SessionEnd builds it) and the lessons that
    cost no tokens (error -> fix procedures, the project playbook, recurring failures). When automatic
    learning is on (`learning_enabled`), digest jobs are queued only within today's caps
    (`learning_daily_max_jobs`, `learning_daily_max_usd`). Idempotent: a second run reads only what is
    new or grew. Ctrl-C stops after saving what was done; run it again to resume.
    """
    from ..hooks import backfill as bf

    if agent not in ("claude", "codex"):
        usage(f"--agent must be claude or codex, not {agent!r}")
    try:
        opts = bf.Options(since=bf.since_epoch(since) if since else None, dry_run=dry_run, digest=not no_digest,
                          project=str(project.expanduser().resolve()) if project else None,
                          agent="codex" if agent == "codex" else "claude_code")
    except ValueError:
        usage(f"--since {since!r} is not a date", hint="give it as YYYY-MM-DD")
    default_root = bf.codex_sessions_dir() if agent == "codex" else bf.projects_dir()
    root = Path(os.path.abspath(source.expanduser())) if source else default_root  # episodes record it
    home = existing_home()
    _check_where(bf, root, source is not None, opts.project)
    done = [0]
    bar = None
    if not json_out and not dry_run and sys.stderr.isatty():
        bar, opts.progress = _progress_bar(done)
    else:
        opts.progress = lambda i, _n, _p: done.__setitem__(0, i)
    try:
        if bar is not None:
            with bar:
                report = bf.run(home, root, opts)
        else:
            report = bf.run(home, root, opts)
    except bf.Busy as exc:
        fail(str(exc), hint="wait for it to finish")
    except KeyboardInterrupt:
        interrupted(f"{done[0]} transcripts backfilled, progress saved", "resume with `s3 backfill`")
    data = report.as_dict()
    if json_out:
        emit_json(data)
    else:
        _say_backfill(data, dry_run)


def _check_where(bf: Any, root: Path, given: bool, project: str | None) -> None:
    """A ``--from`` folder that does not exist, or a ``--project`` that is no folder and that no session ran
    in, is a typo (exit 2), not "0 of 0 transcripts". Claude Code's own folder may be absent (nothing yet)."""
    if not root.is_dir() and (given or root.exists()):
        usage(f"--from {root}: " + ("not a folder" if root.exists() else "no such folder"))
    if project and not Path(project).is_dir() and root.is_dir() and not bf.find(root, bf.Options(project=project)):
        usage(f"--project {project}: no such folder, and no session under {root} ran in it")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{round(x * 100)}%"


def _week_line(w: dict[str, Any]) -> str:
    return (f"  {w['week']:<9} {w['episodes']:>8} {w['steps_per_episode']:>9} {_pct(w['failure_rate']):>8} "
            f"{_pct(w['success_rate']):>8} {w['repeated_errors']:>9}")


def _say_project(c: Any, p: dict[str, Any]) -> None:
    c.print(f"\n{p['project'] or '(no project)'}: {_n(p['episodes'], 'episode')}, {p['steps_per_episode']} steps "
            f"per episode, failure rate {_pct(p['failure_rate'])}, success {_pct(p['success_rate'])}, "
            f"{_n(p['repeated_errors'], 'repeated error')}", markup=False)
    c.print(f"  {'week':<9} {'episodes':>8} {'steps/ep':>9} {'failure':>8} {'success':>8} {'repeated':>9}",
            markup=False)
    for w in p["weeks"]:
        c.print(_week_line(w), markup=False)
    for cl in p["clusters"]:
        first, last = cl["weeks"][0], cl["weeks"][-1]
        change = (f": {first['steps_per_episode']} -> {last['steps_per_episode']} steps, failure rate "
                  f"{_pct(first['failure_rate'])} -> {_pct(last['failure_rate'])} ({first['week']} -> {last['week']})"
                  if len(cl["weeks"]) > 1 else f": {cl['steps_per_episode']} steps per episode")
        c.print(f"  task \"{cl['task']}\" ({_n(cl['episodes'], 'episode')}){change}", markup=False)


def _metrics_project(home: Path, given: Path) -> str:
    """``--project`` as recorded (cli/projects.py); a project no episode has and no folder is bad input."""
    import os

    from ..learning.metrics import rows
    from .projects import resolve, unknown

    text = os.path.normpath(str(given.expanduser()))
    found = resolve(text, lambda p: any(r["project"] and os.path.normpath(r["project"]) == p for r in rows(home)))
    if found is None:
        usage(unknown(text, "episode (of 2 tool calls or more)"))
    return found


def _nothing_measured(home: Path, project: str | None) -> str:
    """Why there is nothing to show: no episodes at all, or none in this project (and how many elsewhere)."""
    if project:
        from ..learning.metrics import rows

        others = len(rows(home))
        if others:
            return (f"No episodes of {project} to measure yet; {_n(others, 'episode')} in other projects "
                    "(`s3 metrics` shows them).")
    return "No episodes to measure yet (run `s3 backfill` to read your past sessions)."


@app.command()
def metrics(
    project: Annotated[Path | None, typer.Option("--project", metavar="PATH",
                                                 help="Only this project (its git root, as episodes record it).")]
    = None,
    json_out: JsonOpt = False,
) -> None:
    """Growth over time: steps per episode, failure rate, success and repeated errors, per project and
    recurring task, per week.

    Counted over non-trivial episodes (2 tool calls or more). A task is a cluster of a project's episodes
    whose keywords overlap; a repeated error is one an earlier episode of the project already met. The
    trend compares the last 4 weeks with the 4 before (5 episodes in each at least).
    """
    from ..learning.metrics import series, trend_line

    home = existing_home()
    chosen = _metrics_project(home, project) if project else None
    data = series(home, chosen)
    if json_out:
        emit_json(data)
        return
    c = console()
    if not data["episodes"]:
        c.print(_nothing_measured(home, chosen), markup=False)
        return
    line = trend_line(data["trend"])
    c.print(f"Trend: {line}" if line else "Trend: not enough episodes yet (5 in each of the last two 4-week "
            "windows)", markup=False)
    for p in data["projects"]:
        _say_project(c, p)
