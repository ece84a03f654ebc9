"""How ``--help`` names types and arguments: the way click always has, whatever typer renders.

Recent typer releases show every option's Python type (``<bool>`` beside each flag, ``<str>``,
``<path>``) and a required argument as ``{file}`` in the usage line. ``tidy()`` restores the
familiar forms: no type for a flag, ``TEXT`` / ``INTEGER`` / ``PATH`` for a value, ``FILE`` for a
required argument and ``[FILE]`` for an optional one (also in its own row and in errors). Each patch applies only when the typer in
use has the method it replaces, so an older typer (which already renders this way) is left alone.
``tests/test_cli_core.py`` renders every command's help and fails on any of these artefacts.
"""

from __future__ import annotations

import re
from typing import Any

_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH", "bool": "BOOLEAN",
          "datetime": "DATETIME"}
_TYPED = re.compile(r"^<(?:list\[)?(?P<t>[^\]>|]+)\]?>$")


def _click_type(shown: str | None) -> str | None:
    """``<str>`` -> ``TEXT``; a choice ``<a|b>`` -> ``[a|b]``; anything else unchanged."""
    if not shown:
        return shown
    if shown.startswith("<") and "|" in shown:
        return "[" + shown.strip("<>") + "]"
    m = _TYPED.match(shown)
    if not m:
        return shown
    return _NAMES.get(m.group("t"), m.group("t").upper())


def _patch_option(cls: Any) -> None:
    orig = cls.display_type_rich

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None  # a flag takes no value: nothing to show
        if self.metavar is not None:
            return str(self.metavar)
        return _click_type(orig(self, ctx))

    cls.display_type_rich = display_type_rich


def _patch_argument(cls: Any) -> None:
    orig = cls.display_type_rich

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return _click_type(orig(self, ctx))

    def display_name_raw(self: Any) -> str:
        return str(self.metavar) if self.metavar is not None else str(self.name or "").upper()

    def _usage_display_name(self: Any) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")

    cls.display_type_rich = display_type_rich
    if isinstance(getattr(cls, "display_name_raw", None), property):
        cls.display_name_raw = property(display_name_raw)
    cls._usage_display_name = _usage_display_name


def tidy() -> None:
    """Apply the patches once (idempotent)."""
    from typer import core

    if getattr(core, "_sophia_tidy", False):
        return
    opt, arg = getattr(core, "TyperOption", None), getattr(core, "TyperArgument", None)
    if opt is not None and hasattr(opt, "display_type_rich"):
        _patch_option(opt)
    if arg is not None and hasattr(arg, "display_type_rich") and hasattr(arg, "_usage_display_name"):
        _patch_argument(arg)
    core._sophia_tidy = True  # type: ignore[attr-defined]
