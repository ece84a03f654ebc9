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
    """What ``--json`` prints (``output.emit_json``: ``json.dumps(obj, ensure_ascii=False, default=str,
    indent=2)``), the same text made faster: with an indent, json encodes in pure Python through generators (10,000
    rules took longer than the rest of ``s3 list rules --json``); here a dict of scalars, or a list of them, goes
    through json's C encoder in one call, and anything else is one join per dict or list."""
    return _indented(obj, "\n") + "\n"


_encode_str = json.encoder.encode_basestring  # ensure_ascii=False: json's own (C) string encoder
_LITERALS = {None: "null", True: "true", False: "false"}
_FLAT = frozenset((str, int, float, bool, type(None)))
_FLAT_OR_EMPTY = _FLAT | {list, dict}  # empty, json writes them as [] and {} at any indent
# json's C encoder with NUL between items: a NUL never stands in its text otherwise (it escapes every control
# character), so each one is where indent=2 breaks the line. Without an indent json uses its C encoder.
_C_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str, check_circular=False, separators=("\0", ": ")).encode


def _indented(o: Any, nl: str) -> str:
    """``o`` as json.dumps(indent=2) writes it at the depth whose line break and indent is ``nl``."""
    t = type(o)
    if t is str:
        return _encode_str(o)
    if (t is dict or t is list) and o and _flat(o.values() if t is dict else o, t is list):
        return _flat_list(o, nl) if t is list else "{" + (nl + "  ") + _C_ENCODE(o)[1:-1].replace(
            "\0", "," + nl + "  ") + nl + "}"
    if t is dict and all(type(k) is str for k in o):
        if not o:
            return "{}"
        inner = nl + "  "
        return "{" + inner + ("," + inner).join(
            [_encode_str(k) + ": " + (_encode_str(v) if type(v) is str else _indented(v, inner))
             for k, v in o.items()]) + nl + "}"
    if t is list:
        if not o:
            return "[]"
        inner = nl + "  "
        return "[" + inner + ("," + inner).join([_indented(v, inner) for v in o]) + nl + "]"
    if t is int:
        return int.__repr__(o)
    if t is float and o - o == 0:  # finite (json writes NaN and the infinities its own way)
        return float.__repr__(o)
    if o is None or t is bool:
        return _LITERALS[o]
    # NaN and the infinities, tuples, subclasses, keys json converts, what default=str makes: json itself,
    # indented deeper (a JSON text holds no raw line break but its own)
    return json.dumps(o, ensure_ascii=False, default=str, indent=2).replace("\n", nl)


def _flat(values: Any, of_dicts: bool) -> bool:
    """Only scalars and empty lists and dicts among ``values``; ``of_dicts``: ``values`` are dicts (none empty)
    whose values are. Counted in C: an empty list or dict is the one value equal to [] or {}."""
    if of_dicts:
        if set(map(type, values)) != {dict} or not all(values):
            return False
        from itertools import chain

        values = chain.from_iterable(map(dict.values, values))
    values = list(values)
    types = list(map(type, values))
    if not set(types) <= _FLAT_OR_EMPTY:
        return False
    return types.count(list) + types.count(dict) == values.count([]) + values.count({})


def _flat_list(items: list[Any], nl: str) -> str:
    """A list of dicts of scalars: one C call, the NULs between two dicts and between two keys made line breaks
    (after a NUL comes a dict's ``{`` between dicts, a key's ``"`` within one)."""
    inner, key = nl + "  ", nl + "    "
    body = _C_ENCODE(items)[2:-2].replace("}\0{", inner + "}," + inner + "{" + key).replace("\0", "," + key)
    return "[" + inner + "{" + key + body + inner + "}" + nl + "]"


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
