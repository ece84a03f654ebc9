"""Output without typer or rich, for the commands ``entry.py`` answers itself: JSON the way every command
prints it, and text lines exactly as ``rich`` would print them (``output.console()``) when rich would print
them unchanged. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

# what rich's console.print reads in a line: an emoji code (":smile:"), a control code it strips or a tab it
# expands, and with markup on a markup tag ("[bold]", "[/]", "[#fff]", "[@click]") or a backslash before a
# bracket (an escape it drops); a line without any of them it prints as it is. Each is looked for alone
# (one pattern with all of them costs ten times as much over 10,000 lines). An emoji code is looked for as rich
# does (``rich._emoji_replace``); one whose name is at most two digits (the minutes of a time, "01:57:53") is
# no emoji (none has such a name: "100" and "1234" have more), so a line with a time is printed as it is.
_EMOJI = re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")
_NO_EMOJI = re.compile(r"[0-9]{0,2}")
_TAG = re.compile(r"\[[a-z#/@]")
_CONTROL = bytes([*range(0x0a), *range(0x0b, 0x20), 0x7f])  # a UTF-8 byte below 0x80 is that character


def rich_reads(text: str, markup: bool = True) -> bool:
    """Would ``console().print`` change ``text`` (printed with or without markup)?"""
    raw = text.encode("utf-8", "surrogatepass")  # a lone surrogate is 3 bytes above 0x7f
    if len(raw.translate(None, _CONTROL)) != len(raw):
        return True
    if ":" in text and any(_NO_EMOJI.fullmatch(m[2]) is None for m in _EMOJI.finditer(text)):
        return True
    return markup and ("\\[" in text or _TAG.search(text) is not None)


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
    out, c = sys.stdout, None
    text = "".join(line + "\n" for line in lines)
    if not rich_reads(text, markup):  # one look for all: nothing rich reads spans a line break
        out.write(text)
        return
    for line in lines:
        if not rich_reads(line, markup):
            out.write(line + "\n")
        else:
            c = c or console()
            c.print(line, markup=markup)
