"""The user's guardian settings: ``config.json`` key ``guardian`` (mode, allow, deny, mcp_allow, mcp_deny).

Read with the standard library through ``config_defaults`` (defaults and allowed values live
there). A missing file means defaults; a corrupt file, a bad mode or a bad regex also means
the default for that part, with a note the hook passes on once (it is not fatal: the guardian
keeps guarding; a bad pattern is dropped, the others still apply).
"""

from __future__ import annotations

import os
import re

from .. import config_defaults
from .record import field, record

MODES: tuple[str, ...] = config_defaults.BY_KEY["guardian.mode"].allowed


@record
class GuardianSettings:
    mode: str = config_defaults.BY_KEY["guardian.mode"].default
    allow: list[re.Pattern[str]] = field(default_factory=list)
    deny: list[re.Pattern[str]] = field(default_factory=list)
    mcp_allow: list[str] = field(default_factory=list)
    mcp_deny: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load(sophia_home: str) -> GuardianSettings:
    path = os.path.join(sophia_home, "config.json")
    cfg, problems = config_defaults.load(path, only="guardian")
    g = cfg["guardian"]
    s = GuardianSettings(mode=g["mode"], allow=[re.compile(p) for p in g["allow"]],
                         deny=[re.compile(p) for p in g["deny"]], mcp_allow=g["mcp_allow"], mcp_deny=g["mcp_deny"])
    for p in problems:
        note = p if p.startswith(path) or p.startswith("cannot read") else f"{path}: {p}"
        s.notes.append(note + "; the guardian uses its default there")
    return s
