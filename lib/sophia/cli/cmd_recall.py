"""s3 recall / index / ingest: the memory index from the command line.

``s3 recall`` normally runs through the typer-free fast path in ``entry.py`` (same code,
``recall_run``); this typer command provides ``--help`` and the same behaviour otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..kinds import type_help
from .app import app
from .output import emit_json, fail, interrupted, usage

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]


@app.command()
def recall(
    words: Annotated[list[str] | None, typer.Argument(
        metavar="QUERY", help="What to search for: words, quoted or not (`s3 recall flaky pytest`); FTS syntax "
                              "is not needed.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many results (1-1000).")] = 10,
    type_: Annotated[list[str] | None, typer.Option(
        "--type", "-t", help=f"Only these item types (repeatable): {type_help()}.")] = None,
    project: Annotated[str | None, typer.Option(
        "--project", help="Only items of this project, plus global ones (project null).")] = None,
    as_of: Annotated[str | None, typer.Option(
        "--as-of", metavar="DATE",
        help="Event time: what was true or valid on DATE (YYYY-MM-DD or ISO). Validity windows, "
             "recency and the prospective penalty are judged then; events after DATE are left out.")] = None,
    known_at: Annotated[str | None, typer.Option(
        "--known-at", metavar="DATE",
        help="Record time: only what had been recorded by DATE. Combine with --as-of.")] = None,
    queries: Annotated[Path | None, typer.Option(
        "--queries", metavar="FILE",
        help="Batch mode: JSONL lines {id, query, limit?, as_of?, known_at?} ('-' = stdin); one "
             "{id, results} line per query, in order.")] = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Show why each result ranked (matched terms and their weights, keyword and "
                          "semantic parts, boosts, absolute relevance) and whether the prompt hook would "
                          "inject it (its own gate, for a prompt typed in --project or the current directory).")
    ] = False,
    team: Annotated[bool, typer.Option("--team", help="Also search the team database (s3 team init).")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Search memory: keyword tier (BM25 over FTS5) fused with the semantic tier when it is warm.

    JSON output: {"query", "results": [{"id", "type", "text", "score", "relevance", "source_ids",
    "timestamp", "event_time", "project", ...}]}; with --explain also "terms", "hook" and each
    result's "explain". ``score`` ranks (relative to this query's hits); ``relevance`` (0..1) is
    absolute: what the prompt hook's gate judges.
    """
    from .recall_run import join_words, run_recall

    query = join_words(words)
    if explain and queries is not None:
        usage("--explain takes one QUERY, not --queries")
    if team and query is not None:
        from .cmd_team import team_recall

        return team_recall(query, limit=limit, types=type_ or None, project=project, json_out=json_out)
    rc = run_recall(query, limit=limit, types=type_ or None, project=project, as_of=as_of, known_at=known_at,
                    queries=queries, json_out=json_out, explain=explain)
    if rc:
        raise typer.Exit(rc)


def _progress(label: str) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn(f"[bold]{label}[/bold] {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), transient=True, disable=not sys.stderr.isatty(),
                    console=_stderr_console())


class _TenthLines:
    """Progress for a non-terminal stderr (logs, pipes): one line at each tenth of a big job (10,000+ steps)."""

    def __init__(self, what: str) -> None:
        self.what, self.shown = what, 0
        self.on = not sys.stderr.isatty()

    def __call__(self, done: int, total: int, label: str) -> None:
        tenth = done * 10 // total if self.on and total >= 10_000 else 0
        if tenth > self.shown:
            self.shown = tenth
            sys.stderr.write(f"{self.what}: {tenth * 10}% ({label})\n")
            sys.stderr.flush()


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


@app.command()
def index(
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild index.db from the files (episodes, "
                                          "rules, memory/*.json, conversations).")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Show what the memory index holds; with --rebuild, rebuild it from the files first."""
    from .. import paths
    from ..index import rebuild as rb

    home = paths.sophia_home()
    result: dict[str, Any] = {}
    seen = [0, 0]  # sources done, total (for the message on Ctrl-C)
    try:
        if rebuild:
            with _progress("rebuilding") as prog:
                task = prog.add_task("", total=rb.count_sources(home))

                def cb(done: int, total: int, label: str) -> None:
                    seen[:] = [done, total]
                    prog.update(task, completed=done, total=total, description=label)

                result["rebuild"] = rb.rebuild(home, progress=cb)
            from ..memory import claude_code, team_repo

            claude_code.refresh_quietly(home)  # Claude Code's own files (read only) into the new index
            team_repo.refresh_quietly(home)  # and the team's files of the repositories (read only)
        result.update(rb.stats(home))
    except KeyboardInterrupt:
        interrupted(f"rebuild stopped after {seen[0]} of {seen[1]} sources, index.db is unchanged",
                    "run `s3 index --rebuild` again to rebuild it")
    except Exception as exc:  # sqlite3.DatabaseError and friends
        fail(f"index: {exc}", hint="run `s3 doctor --repair` to set a broken index.db aside and rebuild it")
    if json_out:
        emit_json(result)
        return
    if "rebuild" in result:
        r = result["rebuild"]
        typer.echo(f"Rebuilt {result['db']}: {r['items']} items, {r['vectors_kept']} vectors kept.")
        for s in r["skipped"]:
            typer.echo(f"  skipped {s}")
    types = ", ".join(f"{k} {v}" for k, v in sorted(result["by_type"].items())) or "empty"
    typer.echo(f"{result['db']}: {result['items']} items ({types}); {result['links']} links; "
               f"{result['vectors']} vectors, {result['needs_embedding']} items awaiting embedding; "
               f"{result['bytes'] // 1024} KiB")


@app.command()
def ingest(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The conversation file.")],
    fmt: Annotated[str | None, typer.Option(
        "--format", "-f", metavar="FORMAT",
        help="Force a format: locomo (one sample or a list) or jsonl (lines {id, session, speaker, text, "
             "timestamp}). Default: detected from the file.")] = None,
    source: Annotated[str | None, typer.Option(
        "--source", help="Name of the conversation (jsonl; default: the file name).")] = None,
    project: Annotated[str | None, typer.Option("--project", help="Tag the turns with this project.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Ingest a conversation: keep its turns (redacted) under memory/conversations/ and index them.

    Turns are grouped into MemCells (session breaks, time gaps, 50-message cap, topic shifts).
    Re-ingesting the same conversation is idempotent, so an interrupted ingest is finished by
    running it again.
    """
    from ..ingest.core import ingest_file
    from ..ingest.formats import FORMATS, IngestError, IngestInterrupted

    if fmt is not None and fmt not in FORMATS:
        usage(f"--format must be locomo or jsonl, not {fmt!r}", hint="or leave it out: the format is detected")
    if file.is_dir():
        usage(f"{file} is a folder, not a conversation file (give one file per conversation)")
    if not file.is_file():
        usage(f"{file}: no such file")
    try:
        with _progress("ingesting") as prog:
            task = prog.add_task("", total=None)

            lines = _TenthLines("s3 ingest")

            def cb(done: int, total: int, label: str) -> None:
                prog.update(task, completed=done, total=total, description=label)
                lines(done, total, label)

            summary = ingest_file(file, fmt, progress=cb, source=source, project=project)
    except IngestInterrupted as exc:
        interrupted(str(exc), "run the same command again to finish (ingest is idempotent)")
    except KeyboardInterrupt:
        interrupted("nothing imported yet", "run the same command again")
    except IngestError as exc:
        usage(str(exc))
    except Exception as exc:  # sqlite / lock errors: one line, never a traceback
        fail(f"ingest failed: {exc}")
    if json_out:
        emit_json(summary)
        return
    how = "detected" if summary.get("format_detected") else "given"
    for c in summary["conversations"]:
        typer.echo(f"{c['source']}: {c['turns']} turns -> {c['file']}")
    typer.echo(f"Indexed {summary['indexed']} new or changed turns in {summary['memcells']} MemCells "
               f"(format {summary['format']}, {how})."
               + (" Embedding requested." if summary.get("embedding") else ""))
