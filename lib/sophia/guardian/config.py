"""The user's guardian settings: ``config.json`` key ``guardian`` (mode, allow, deny).

Read with the standard library. A missing file means defaults; a corrupt file or a bad regex also
means defaults for that part, with a note the hook passes on once (it is not fatal: the guardian
keeps guarding).
"""

from __future__ import annotations

import json
import os
import re

from .record import field, record

MODES = ("enforce", "warn", "off")


@record
class GuardianSettings:
    mode: str = "enforce"
    allow: list[re.Pattern[str]] = field(default_factory=list)
    deny: list[re.Pattern[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load(sophia_home: str) -> GuardianSettings:
    s = GuardianSettings()
    path = os.path.join(sophia_home, "config.json")
    try:
        with open(path, encoding="utf-8") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return s
    except OSError as exc:
        s.notes.append(f"cannot read {path} ({exc.strerror}); using the default guardian settings")
        return s
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        s.notes.append(f"{path} is not valid JSON; using the default guardian settings (run `s3 doctor`)")
        return s
    g = data.get("guardian") if isinstance(data, dict) else None
    if g is None:
        return s
    if not isinstance(g, dict):
        s.notes.append(f"{path}: `guardian` is not an object; using defaults")
        return s
    mode = g.get("mode", "enforce")
    if mode in MODES:
        s.mode = mode
    else:
        s.notes.append(f"{path}: guardian.mode {mode!r} is not one of enforce|warn|off; using enforce")
    for key in ("allow", "deny"):
        pats = g.get(key, [])
        if not isinstance(pats, list):
            s.notes.append(f"{path}: guardian.{key} must be a list of regexes; ignored")
            continue
        for p in pats:
            if not isinstance(p, str):
                s.notes.append(f"{path}: guardian.{key} entry {p!r} is not a string; ignored")
                continue
            try:
                getattr(s, key).append(re.compile(p))
            except re.error as exc:
                s.notes.append(f"{path}: guardian.{key} pattern {p!r} is not a valid regex ({exc}); ignored")
    return s
