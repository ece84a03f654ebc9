"""s3 export / import: the memory out to a file or folder, and a JSON export merged back
(:mod:`sophia.memory.portable`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import emit_json, interrupted, usage

FORMATS = ("json", "markdown")


def _default_output(fmt: str, project: str | None) -> Path:
    from ..timeutil import iso

    stamp = iso()[:10]
    name = f"sophia-export-{Path(project).name}-{stamp}" if project else f"sophia-export-{stamp}"
    return Path(name + (".json" if fmt == "json" else ""))


@app.command()
def export(
    fmt: Annotated[str, typer.Option("--format", "-f", help="json: one file `s3 import` reads back; markdown: a "
                                     "folder a person can read and version (one file per kind).")] = "json",
    project: Annotated[str | None, typer.Option("--project", help="Only this project's memories (its path, as "
                                                "`s3 recall` shows it); default: the whole memory.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="The file (json) or folder (markdown) to "
                                                "write; default sophia-export-DATE[.json] here.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Write the whole memory (or one project's): episodes, rules, facts, foresight, ... and ingested
    conversations, as stored (already redacted). Not Claude Code's own memory, the self model or config."""
    from ..memory import portable

    if fmt not in FORMATS:
        usage(f"unknown --format {fmt!r} (one of {', '.join(FORMATS)})")
    folder = bool(project) and Path(str(project)).is_dir()
    if folder:  # `--project .`: the git root, as the hooks record it
        from ..hooks.project import project_of

        project = project_of(project)
    doc = portable.collect(project=project)
    if project and not folder and not sum(portable.counts(doc).values()):
        from .projects import unknown

        usage(unknown(project, "memory"))  # neither a folder nor a recorded project (cli/projects.py)
    out = output or _default_output(fmt, project)
    if fmt == "json":
        portable.export_json(doc, out)
        files = [out]
    else:
        files = portable.export_markdown(doc, out)
    counts = portable.counts(doc)
    if json_out:
        emit_json({"format": fmt, "output": str(out), "project": project, "counts": counts,
                   "files": [str(f) for f in files]})
        return
    typer.echo(f"Exported {sum(counts.values())} memories "
               f"({', '.join(f'{k} {v}' for k, v in counts.items() if v) or 'none'}) to {out}")


def _stderr_progress(done: int, total: int, label: str) -> None:
    sys.stderr.write(f"s3 import: {done}/{total} ({label})\n")
    sys.stderr.flush()


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A file `s3 export --format json` wrote.")],
    json_out: JsonOpt = False,
) -> None:
    """Merge a JSON export into this memory: same ids, no duplicates. An identical item is skipped; one
    whose id exists with other content keeps yours and is recorded as a conflict (`s3 list conflicts`).
    Secrets are redacted on the way in. A bad file writes nothing. Progress on stderr for big files."""
    from ..memory import portable

    try:
        out: dict[str, Any] = portable.import_file(file, progress=_stderr_progress)
    except KeyboardInterrupt:
        interrupted("the import stopped part way (each store it finished is written whole)",
                    "run the same `s3 import` again: what is already there is skipped")
    if json_out:
        emit_json(out)
        return
    added = ", ".join(f"{k} {v}" for k, v in out["added"].items()) or "nothing new"
    typer.echo(f"Imported {file}: added {added}; {out['skipped']} already here; {out['conflicts']} conflicts"
               + (" (kept yours; see `s3 list conflicts`)" if out["conflicts"] else ""))
