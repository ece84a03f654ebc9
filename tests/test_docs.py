"""Docs cannot drift: every CLI command has help text and is named in the README's command table."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from sophia.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()


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


def test_every_path_named_in_the_architecture_page_exists() -> None:
    named = set(re.findall(r"`((?:lib|hooks|tests|bench|scripts|docs)/[\w./-]+)`", ARCHITECTURE))
    assert len(named) >= 30, named  # the page names the modules a reader opens
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert missing == [], f"docs/architecture.md names files that do not exist: {missing}"


def test_the_architecture_page_draws_every_layer_unit() -> None:
    """Each unit of tests/test_layers.py's order appears in the picture or the text."""
    from tests.test_layers import ORDER

    picture = ARCHITECTURE.split("```", 2)[1]
    for unit in ORDER[1:]:
        assert unit.split(".")[0] in picture, f"{unit} is missing from the layer picture"
