"""The five tools of ``s3 mcp``: their schemas, annotations and handlers, without the MCP SDK.

Each handler is a thin layer over the library call the CLI makes: ``search`` is ``s3 recall``
(``run_recall``: the same semantic start, filters, scoring and argument checks), ``remember`` is
``s3 learn``'s rule path (or a fact, same caps and redaction), ``forget`` is ``s3 forget``. A
handler returns the text the model reads and raises :class:`ToolError` on a bad argument or a failed
call, with one line that says what to change. ``lib/sophia/cli/mcp_server.py`` serves them over stdio.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from contextlib import redirect_stderr
from datetime import datetime
from pathlib import Path
from typing import Any

from ..kinds import MAX_RULE_CHARS, item_types

MAX_IDS = 20
LINE_TEXT = 160  # characters of an item's text on a search or timeline line
GET_TEXT = 4000  # characters of an item's text in get


class ToolError(Exception):
    """A call the server answers with an MCP error result (``isError``) and this one-line message."""


def _project_prop(what: str) -> dict[str, Any]:
    return {"type": "string", "description": what}


def _tool(name: str, title: str, description: str, properties: dict[str, Any], required: list[str], *,
          reads: bool, destructive: bool = False, idempotent: bool | None = None) -> dict[str, Any]:
    """One tool's declaration: a closed object schema and its MCP annotations (a read is idempotent)."""
    return {
        "name": name, "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required,
                        "additionalProperties": False},
        "annotations": {"title": title, "readOnlyHint": reads, "destructiveHint": destructive,
                        "idempotentHint": reads if idempotent is None else idempotent, "openWorldHint": False},
    }


TOOLS: list[dict[str, Any]] = [
    _tool("search", "Search memory", (
        "Search Sophia System 3's memory (lessons, rules, facts, past coding sessions of Claude Code and "
        "Codex, procedures) with the same engine as `s3 recall`. Returns one compact line per hit: id, "
        "kind, age, relevance (0..1, absolute) and the start of its text. Call `get` with ids for the "
        "whole items. Use before a task to find what was learned about it."), {
        "query": {"type": "string", "minLength": 1, "maxLength": 4000,
                  "description": "What to look for, in words (no special syntax)."},
        "project": _project_prop("Only this project's memories plus global ones: the project's "
                                 "absolute path (its git root). Omit to search every project."),
        "kinds": {"type": "array", "items": {"type": "string", "enum": item_types()}, "uniqueItems": True,
                  "description": "Only these kinds of memory."},
        "as_of": {"type": "string", "description": "Event time: what was true on this date "
                                                   "(YYYY-MM-DD or ISO date-time)."},
        "known_at": {"type": "string", "description": "Record time: only what had been recorded by "
                                                      "this date (YYYY-MM-DD or ISO date-time)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
                  "description": "How many hits (1-50)."},
    }, ["query"], reads=True),
    _tool("get", "Get memories", "The whole memory items for ids that `search` or `timeline` returned: text, kind, "
          "project, times, links and details, as JSON.", {
              "ids": {"type": "array", "items": {"type": "string", "minLength": 1},
                      "minItems": 1, "maxItems": MAX_IDS, "description": "Memory ids."}}, ["ids"], reads=True),
    _tool("timeline", "Memory timeline", "What happened around a memory id or a date: the sessions, lessons and "
          "facts recorded within `days` of it, in time order, one compact line each.", {
              "around": {"type": "string", "minLength": 1,
                         "description": "A memory id, or a date (YYYY-MM-DD or ISO date-time)."},
              "project": _project_prop("Only this project's memories plus global ones (its absolute path)."),
              "days": {"type": "number", "exclusiveMinimum": 0, "maximum": 365, "default": 3,
                       "description": "How many days before and after."},
              "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                        "description": "How many items at most."},
          }, ["around"], reads=True),
    _tool("remember", "Remember", (
        "Save a lesson (a rule: how to work, what to avoid) or a fact about a project, so later sessions "
        "of Claude Code and Codex are told it. Validated like `s3 learn`: at most "
        f"{MAX_RULE_CHARS} characters, secrets redacted, a near-duplicate merged instead of added."), {
        "text": {"type": "string", "minLength": 1, "maxLength": MAX_RULE_CHARS,
                 "description": "The lesson or fact, a sentence or two."},
        "kind": {"type": "string", "enum": ["rule", "fact"], "default": "rule",
                 "description": "rule: a lesson or heuristic; fact: something true about the project."},
        "project": _project_prop("The project it belongs to (its absolute path); omitted: the project "
                                 "of the server's working directory; \"global\": every project."),
        "domain": {"type": "string", "maxLength": 80,
                   "description": "For a rule: what it applies to (Docker, pytest...); default: guessed."},
    }, ["text"], reads=False),
    _tool("forget", "Forget", "Delete one memory for good, from its file and from the index (as `s3 forget ID`). "
          "Use only when the user asks or a memory is wrong.",
          {"id": {"type": "string", "minLength": 1, "description": "The memory id."}}, ["id"],
          reads=False, destructive=True),
]


# ---------------------------------------------------------------- argument checks


def _str(args: dict[str, Any], key: str, required: bool = False) -> str | None:
    v = args.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v.strip():
        raise ToolError(f"`{key}` must be a non-empty string")
    return v.strip()


def _int(args: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    v = args.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ToolError(f"`{key}` must be a whole number from {lo} to {hi}")
    return v


def _unknown(args: dict[str, Any], name: str) -> None:
    spec = next(t for t in TOOLS if t["name"] == name)
    extra = sorted(set(args) - set(spec["inputSchema"]["properties"]))
    if extra:
        raise ToolError(f"unknown argument {', '.join(extra)} (takes {', '.join(spec['inputSchema']['properties'])})")


def _home() -> Path:
    from .. import paths

    home = paths.sophia_home()
    if not home.is_dir():
        raise ToolError(f"{home} does not exist: run `s3 init` (or the kit's ./install.sh) first")
    return home


def _connect(home: Path) -> Any:
    from ..index.db import connect_for_read

    try:
        return connect_for_read(home)
    except Exception as exc:  # sqlite3.Error, OSError: a broken index
        raise ToolError(f"cannot open the index ({exc}); run `s3 doctor --repair`") from exc


# ---------------------------------------------------------------- lines


def age(when: str | None, now: datetime | None = None) -> str:
    """How long ago, in one short word: 5m, 3h, 2d, 6w, 1y ("?" when unknown)."""
    from ..timeutil import now as utcnow
    from ..timeutil import parse

    t = parse(when)
    if t is None:
        return "?"
    s = max(0.0, ((now or utcnow()) - t).total_seconds())
    for unit, size in (("y", 365 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{int(s // size)}{unit}"
    return "now"


def line(item: dict[str, Any], relevance: float | None = None) -> str:
    """One compact line: id, kind, age, relevance when known, project's last folder, text."""
    from ..kinds import one_line

    when = item.get("event_time") or item.get("timestamp")
    parts = [str(item.get("id")), str(item.get("type")), age(when)]
    if relevance is not None:
        parts.append(f"rel {relevance:.2f}")
    if item.get("project"):
        parts.append(f"[{str(item['project']).rstrip('/').rsplit('/', 1)[-1]}]")
    return " ".join(parts) + " | " + one_line(item.get("text"), LINE_TEXT)


# ---------------------------------------------------------------- handlers


def search(args: dict[str, Any]) -> str:
    """``s3 recall --json`` (run_recall) and compact lines of its results."""
    from .recall_run import run_recall

    _unknown(args, "search")
    query = _str(args, "query", required=True)
    kinds = args.get("kinds")
    if kinds is not None and (not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds)):
        raise ToolError("`kinds` must be a list of kind names")
    limit = _int(args, "limit", 10, 1, 50)
    home = _home()
    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        rc = run_recall(query, limit=limit, types=kinds or None, project=_str(args, "project"),
                        as_of=_str(args, "as_of"), known_at=_str(args, "known_at"), json_out=True, home=home,
                        out=out)
    if rc:
        msg = err.getvalue().strip().splitlines()
        raise ToolError((msg[0] if msg else f"search failed (exit {rc})").removeprefix("s3: error: ")
                        .replace("--as-of", "as_of").replace("--known-at", "known_at").replace("--type", "kinds"))
    doc = json.loads(out.getvalue())
    results = doc.get("results") or []
    if not results:
        note = doc.get("note")
        return f"No memories match {query!r}" + (f" ({note})." if note else ".")
    return "\n".join(line(r, float(r.get("relevance") or 0.0)) for r in results)


def get(args: dict[str, Any]) -> str:
    """The index items of the ids, as JSON (unknown ids named in ``missing``)."""
    from ..index.lookup import get_items

    _unknown(args, "get")
    ids = args.get("ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i.strip() for i in ids):
        raise ToolError("`ids` must be a non-empty list of memory ids")
    if len(ids) > MAX_IDS:
        raise ToolError(f"at most {MAX_IDS} ids at a time")
    conn = _connect(_home())
    found = {} if conn is None else _closing(conn, lambda c: get_items(c, [i.strip() for i in ids]))
    items = []
    for i in ids:
        it = found.get(i.strip())
        if it is not None:
            if len(str(it.get("text") or "")) > GET_TEXT:
                it["text"] = str(it["text"])[:GET_TEXT] + "…"
            items.append(it)
    missing = [i for i in ids if i.strip() not in found]
    if not items:
        raise ToolError(f"no memory with id {', '.join(missing)} (ids come from `search` or `timeline`)")
    doc: dict[str, Any] = {"items": items}
    if missing:
        doc["missing"] = missing
    return json.dumps(doc, ensure_ascii=False, default=str, indent=1)


def _closing(conn: Any, fn: Callable[[Any], Any]) -> Any:
    try:
        return fn(conn)
    finally:
        conn.close()


def _anchor(conn: Any, around: str) -> tuple[datetime, float]:
    """The time ``around`` names, a memory's (its event time, else when it was recorded) or a date's, and the
    slack in days to add to the window (a bare date is its whole day: noon, half a day either side)."""
    from ..index.lookup import get_items, when_of
    from ..index.search import QueryError, parse_as_of
    from ..timeutil import parse

    item = get_items(conn, [around]).get(around) if conn is not None else None
    if item is not None:
        t = parse(when_of(item))
        if t is None:
            raise ToolError(f"{around} has no time to look around")
        return t, 0.0
    try:
        t, _ = parse_as_of(around, "around")
    except QueryError:
        raise ToolError(f"`around` is neither a memory id nor a date: {around!r} (use an id from `search` "
                        "or YYYY-MM-DD)") from None
    return (t.replace(hour=12, minute=0, second=0), 0.5) if len(around.strip()) == 10 else (t, 0.0)


def timeline(args: dict[str, Any]) -> str:
    from ..index.lookup import around as items_around

    _unknown(args, "timeline")
    around = _str(args, "around", required=True)
    assert around is not None
    days = args.get("days", 3)
    if isinstance(days, bool) or not isinstance(days, (int, float)) or not 0 < days <= 365:
        raise ToolError("`days` must be a number above 0 and at most 365")
    limit = _int(args, "limit", 20, 1, 100)
    project = _str(args, "project")
    conn = _connect(_home())
    if conn is None:
        _anchor(None, around)  # a bad date is an error even in an empty home
        return "The memory index is empty (nothing recorded yet)."
    try:
        at, slack = _anchor(conn, around)
        items = items_around(conn, at, days=float(days) + slack, project=project, limit=limit)
    finally:
        conn.close()
    if not items:
        return f"Nothing recorded within {days:g} days of {around}."
    return "\n".join(("> " if it["id"] == around else "") + line(it) for it in items)


def _project(args: dict[str, Any]) -> str | None:
    """The project ``remember`` files under: given, "global" (none), else the working directory's."""
    from ..hooks.project import project_of

    given = _str(args, "project")
    if given is not None:
        if given.lower() == "global":
            return None
        if not os.path.isabs(given):
            raise ToolError("`project` must be an absolute path (the project's folder) or \"global\"")
        return project_of(given)
    return project_of(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())


def remember(args: dict[str, Any]) -> str:
    from ..errors import BadInput
    from ..memory.manage import learn, remember_fact

    _unknown(args, "remember")
    text = _str(args, "text", required=True)
    assert text is not None
    kind = args.get("kind", "rule")
    if kind not in ("rule", "fact"):
        raise ToolError("`kind` must be \"rule\" or \"fact\"")
    project = _project(args)
    home = _home()
    try:
        if kind == "fact":
            out = remember_fact(text, project=project, home=home)
            item_id, saved = out["fact"]["id"], out["fact"]["text"]
        else:
            out = learn(text, _str(args, "domain"), home=home, project=project)
            item_id, saved = out["rule"]["id"], out["rule"]["rule_content"]
    except BadInput as exc:
        raise ToolError(str(exc)) from None
    where = f"project {project}" if project else "every project"
    verb = "merged with the existing" if out["status"] == "merged" else "saved as"
    return f"{verb} {kind} {item_id} ({where}): {saved}"


def forget(args: dict[str, Any]) -> str:
    from ..errors import BadInput
    from ..memory.manage import forget as do_forget

    _unknown(args, "forget")
    mid = _str(args, "id", required=True)
    assert mid is not None
    home = _home()
    try:
        out = do_forget(mid, home)
    except BadInput as exc:
        raise ToolError(str(exc)) from None
    return f"Forgot {out['removed']} (from {out['from']}): {out['text']}"


HANDLERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "search": search, "get": get, "timeline": timeline, "remember": remember, "forget": forget,
}


def call(name: str, args: Any) -> str:
    """Run one tool; ToolError for an unknown tool, bad arguments or an expected failure."""
    from ..errors import SophiaError

    handler = HANDLERS.get(name)
    if handler is None:
        raise ToolError(f"unknown tool {name!r} (one of {', '.join(HANDLERS)})")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ToolError("arguments must be a JSON object")
    try:
        return handler(args)
    except SophiaError as exc:  # a state file that cannot be read, a lock that timed out...
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"cannot access {getattr(exc, 'filename', '') or 'the state'}: {exc.strerror or exc}") from None
