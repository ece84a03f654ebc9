"""s3 bench: measured quality (LoCoMo evidence recall)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .output import emit_json, fail, interrupted, usage

bench_app = typer.Typer(help="Benchmarks (quality figures as docs/benchmarks.md defines them).",
                        no_args_is_help=True)
app.add_typer(bench_app, name="bench")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]


@bench_app.command("locomo")
def locomo(
    file: Annotated[Path, typer.Argument(help="A LoCoMo file (one sample or a list).")],
    k: Annotated[str, typer.Option("--k", help="Cut-offs, comma-separated.")] = "5,10,25,50",
    semantic: Annotated[bool, typer.Option("--semantic/--keyword", help="Fuse the semantic tier: starts the "
                                           "embedding service for each temp home and waits until every "
                                           "turn is embedded (slow); --keyword measures the keyword tier "
                                           "alone.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Turn-level evidence recall at k: each sample is ingested into a fresh temp SOPHIA_HOME, every
    question with evidence is asked, and source ids are counted in rank order (deduplicated; an
    item without source ids takes one slot). Prints per category, overall (all and 1-4), ingest
    and query time, and with --semantic the embedding time."""
    from ..evaluation.locomo import run, service_semantic

    try:
        ks = sorted({int(x) for x in k.split(",") if x.strip()})
    except ValueError:
        usage(f"--k: expected comma-separated integers, got {k!r}")
    if not ks or min(ks) < 1:
        usage("--k: give positive cut-offs, e.g. 5,10,25,50")
    if not file.is_file():
        usage(f"{file}: no such file")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err = Console(stderr=True)
    seen = [0, 0]  # questions answered, total (for the message on Ctrl-C)
    try:
        with Progress(TextColumn("[bold]questions[/bold] {task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), transient=True, console=err, disable=not err.is_terminal) as prog:
            task = prog.add_task("", total=None)

            def cb(done: int, total: int, label: str) -> None:
                seen[:] = [done, total]
                prog.update(task, completed=done, total=total, description=label)

            sem = service_semantic() if semantic else None
            result = run(file, ks, progress=cb, semantic=sem)
    except KeyboardInterrupt:
        interrupted(f"{seen[0]} of {seen[1] or '?'} questions answered, no figures kept (the bench works in "
                    "temp homes)", "run it again to measure")
    except RuntimeError as exc:
        fail(str(exc))
    except (ValueError, KeyError, TypeError, OSError) as exc:
        usage(f"{file}: not a LoCoMo file ({exc})")
    if json_out:
        emit_json(result)
        return
    _render(result, ks)


def _render(result: dict[str, Any], ks: list[int]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table("group", "questions", *[f"R@{k}" for k in ks], title="LoCoMo turn-level evidence recall")
    for g, row in result["recall"].items():
        t.add_row(g, str(row["questions"]), *[f"{row[f'R@{k}']:.1f}" for k in ks])
    c = Console()
    c.print(t)
    c.print(f"tiers: {'keyword + semantic' if result.get('semantic') else 'keyword only'}")
    c.print(f"{result['samples']} samples, {result['turns']} turns ingested in {result['ingest_seconds']:.2f} s; "
            f"{result['questions']} questions in {result['query_seconds']:.2f} s "
            f"({result['ms_per_query']:.1f} ms per query)")
    if "embed_seconds" in result:
        c.print(f"embedding: {result['embed_seconds']:.2f} s (service start, warm-up and embedding every turn); "
                f"total {result['ingest_seconds'] + result['embed_seconds'] + result['query_seconds']:.2f} s")
