"""Output without typer or rich, for the commands ``entry.py`` answers itself: JSON the way every command
prints it, and text lines exactly as ``rich`` would print them (``output.console()``) when rich would print
them unchanged. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

# what rich's console.print reads in a line: an emoji code (":smile:"), a control code it strips or a tab it
# expands, and with markup on a markup tag ("[bold]", "[/]", "[#fff]", "[@click]") or a backslash before a
# bracket (an escape it drops); a line without any of them it prints as it is
_RICH_READS = re.compile(r":\S*:|[\x00-\x09\x0b-\x1f\x7f]")
_RICH_MARKUP = re.compile(r"\[[a-z#/@]|\\\[|:\S*:|[\x00-\x09\x0b-\x1f\x7f]")


def console() -> Any:
    """The rich console every command prints its text through."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def dumps(obj: Any) -> str:
    """What ``--json`` prints (``output.emit_json``)."""
    return json.dumps(obj, ensure_ascii=False, default=str, indent=2) + "\n"


def emit_json(obj: Any) -> None:
    sys.stdout.write(dumps(obj))


def print_lines(lines: list[str], markup: bool = True) -> None:
    """Each line as ``console().print(line, markup=markup)`` prints it: as it is when rich would print it
    unchanged (to a pipe or a terminal alike: the lines carry no style), else through rich."""
    reads = _RICH_MARKUP if markup else _RICH_READS
    out, c = sys.stdout, None
    text = "".join(line + "\n" for line in lines)
    if reads.search(text) is None:  # one search for all: no pattern spans a line break
        out.write(text)
        return
    for line in lines:
        if reads.search(line) is None:
            out.write(line + "\n")
        else:
            c = c or console()
            c.print(line, markup=markup)
