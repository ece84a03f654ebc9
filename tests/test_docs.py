"""Docs cannot drift: every CLI command has help text and is named in the README's command table."""

from __future__ import annotations

from pathlib import Path

import typer.main

from sophia.cli.app import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _commands() -> dict[str, object]:
    group = typer.main.get_command(app)
    return dict(group.commands)  # type: ignore[attr-defined]


def test_every_command_has_help_and_is_documented() -> None:
    cmds = _commands()
    assert {"init", "status", "doctor", "recall", "learn", "apply", "ingest", "index"} <= set(cmds)
    table = README.split("## The `s3` command", 1)[1].split("\n## ", 1)[0]
    for name, cmd in cmds.items():
        assert (cmd.help or "").strip(), f"s3 {name} has no help text"  # type: ignore[attr-defined]
        assert f"`s3 {name}" in table, f"s3 {name} is missing from the README's command table"
