"""UserPromptSubmit: inject the few memories relevant to this prompt. ``python -I -S launch.py prompt_context``.

Recalls through the memory index (``sophia.index.search.recall``); when the index package or
its database is missing, falls back to keyword overlap over the episode index and the
semantic rules. The gate (:func:`select`) judges each item's absolute ``relevance`` (0..1, not
relative to the other hits: the share of the prompt's idf mass it matches, or its raw cosine):
nothing is injected unless the best eligible item reaches ``context.prompt_context_min_score``;
then items reaching half of it (a strong hit's neighbours) follow, best ranked first, at most
``context.prompt_context_max_items``. ``s3 recall --explain`` asks :func:`choose`, this very gate.
Project scoping: an item of another project (of any kind: an episode, a rule with a project of its own)
is never shown; items of the current project come first; what has no project (a rule without one,
profile facts) is global. Ingested
conversations (``s3 ingest``: benchmark data, other people's chats) are not shown unless
``context.include_ingested`` is true (the registry's ``injected`` flag, :mod:`sophia.kinds`). The
current session's own episode is skipped. A memory already in the session's context (shown at
SessionStart or at an earlier prompt since the last compaction: :mod:`sophia.hooks.shown`) counts for the
gate but is not injected again: the session is given what a fresh one would be, less what its context
holds, so a prompt whose relevant memories are all there already gets nothing. Prints NOTHING when
nothing is relevant.
"""

from __future__ import annotations

import os
from pathlib import Path

from sophia import kinds, paths
from sophia.hooks import shown as shown_record
from sophia.hooks.context import overlap, read_json_quiet, render_items, stems
from sophia.hooks.project import project_of
from sophia.hooks.runtime import emit_context, load_config, log, read_payload, run, safe_session

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

MIN_PROMPT_CHARS = 8
QUERY_CHARS = 1000


def fallback_recall(home: Path, query: str, limit: int, project: str | None = None) -> list[dict[str, Any]]:
    """Keyword overlap over the episode index and the rules (score: share of query words matched).

    Like the index's project filter: episodes of another project are not candidates."""
    q = stems(query)
    if not q:
        return []
    out: list[dict[str, Any]] = []
    index = read_json_quiet(paths.episode_index_path(home))
    for e in (index.get("entries") if isinstance(index, dict) else None) or []:
        if not isinstance(e, dict) or not e.get("id"):
            continue
        if project and e.get("project") and e.get("project") != project:
            continue
        kws = [k for k in e.get("keywords") or [] if isinstance(k, str)]
        text = f"{e.get('goal_summary') or ''} {' '.join(kws)}"
        n = overlap(q, text)
        if n:
            out.append({"id": e["id"], "type": "episode", "text": text, "project": e.get("project"),
                        "timestamp": e.get("timestamp"), "score": n / len(q), "relevance": n / len(q),
                        "meta": {"outcome": e.get("outcome"), "session_id": e.get("session_id"),
                                 "goal_summary": e.get("goal_summary"), "trivial": e.get("trivial")}})
    rules = read_json_quiet(paths.rules_path(home))
    for r in rules if isinstance(rules, list) else []:
        if not isinstance(r, dict) or not r.get("rule_content"):
            continue
        text = f"{r.get('trigger_concept') or ''}: {r.get('rule_content')}"
        n = overlap(q, text)
        if n:
            out.append({"id": r.get("id") or "rule", "type": "rule", "text": str(r.get("rule_content")),
                        "project": r.get("project"), "timestamp": r.get("created_at"), "score": n / len(q),
                        "relevance": n / len(q), "meta": {}})
    out.sort(key=lambda it: it["score"], reverse=True)
    return out[:limit]


def recall_items(home: Path, query: str, project: str | None, limit: int,
                 types: list[str] | None = None) -> tuple[list[dict[str, Any]], str]:
    """``types``: only these kinds (None: all). Ingested conversations are left out by the caller
    unless ``context.include_ingested`` is on."""
    if paths.index_db_path(home).is_file():
        try:
            from sophia.index import search

            return list(search.recall(query, limit=limit, types=types, project=project, home=home)), "index"
        except Exception as exc:  # noqa: BLE001 - recall must not break the prompt
            log(f"prompt_context: recall failed, keyword fallback: {type(exc).__name__}: {exc}", home)
    return fallback_recall(home, query, limit, project), "fallback"


def context_types(ctx: dict[str, Any]) -> list[str]:
    """The kinds a coding session is shown: the registry's injected ones, plus ingested
    conversations (``s3 ingest``) only when the user opted in with ``context.include_ingested``; never
    Claude Code's own memory (``cc_memory``: Claude Code loads it itself)."""
    return kinds.injected_types(bool(ctx["include_ingested"]))


def _session_of(item: dict[str, Any]) -> str | None:
    meta: dict[str, Any] = item["meta"] if isinstance(item.get("meta"), dict) else {}
    sid = meta.get("session_id")
    return sid if isinstance(sid, str) else None


RELATED = 0.5  # once the best item passes the gate, items of at least this share of the threshold follow


def _number(v: Any) -> float | None:
    try:
        return float(v or 0.0)
    except (TypeError, ValueError):
        return None


def _eligible(it: Any, project: str | None, session_id: str | None) -> bool:
    if not isinstance(it, dict) or not it.get("id"):
        return False
    if it.get("project") and it.get("project") != project:
        return False  # another project's memory: never shown
    return not (session_id and _session_of(it) == session_id)


def select(items: list[dict[str, Any]], query: str, *, project: str | None, session_id: str | None,
           min_score: float, max_items: int, shown: Collection[str] = ()) -> list[dict[str, Any]]:
    """The gate: [] unless the best eligible item's absolute ``relevance`` reaches ``min_score``; then
    the eligible items with relevance >= ``RELATED * min_score``, this project's first, by rank, less
    those whose id is in ``shown`` (already in the session's context: they count for the gate, are not
    given again). (``query`` is kept for callers; relevance already says how much of it an item matches.)"""
    keep = []
    best = 0.0
    for it in items:
        if not _eligible(it, project, session_id):
            continue
        score, rel = _number(it.get("score")), _number(it.get("relevance", it.get("score")))
        if score is None or rel is None:
            continue
        best = max(best, rel)
        if rel >= RELATED * min_score and it["id"] not in shown:
            same = bool(project) and it.get("project") == project
            keep.append((score * (1.2 if same else 1.0), it))
    if best < min_score or best <= 0.0:
        return []
    keep.sort(key=lambda x: x[0], reverse=True)
    return [it for _, it in keep[:max_items]]


TITLE = "Sophia memory (cite an id if you rely on it):"


def render(items: list[dict[str, Any]], min_score: float = 0.0) -> str:
    """What is injected: :func:`sophia.hooks.context.render_items` (one line each, lessons first, a budget
    that grows with each item's score above ``min_score``)."""
    return render_items(items, floor=min_score, title=TITLE)


def too_short(prompt: str) -> bool:
    """Fewer than MIN_PROMPT_CHARS characters (a CJK character counts as two: it is about a word)."""
    s = prompt.strip()
    return len(s) + sum(1 for c in s if "\u2e80" <= c <= "\ud7af") < MIN_PROMPT_CHARS


def refresh_team(home: Path, project: str | None) -> None:
    """The project's team memory (``<project>/.sophia/team``, :mod:`sophia.memory.team_repo`): when one
    ``stat`` says its folder changed (a pull), it is re-indexed now, so this very prompt recalls it."""
    try:
        from sophia.memory import team_repo

        team_repo.refresh_if_changed(home, project)
    except Exception as exc:  # noqa: BLE001 - a lock held too long, an unreadable index: recall goes on
        log(f"prompt_context: team memory not refreshed: {type(exc).__name__}: {exc}", home)


def choose(home: Path, ctx: dict[str, Any], prompt: str, project: str | None, session_id: str | None,
           shown: Collection[str] | None = None) -> list[dict[str, Any]]:
    """What the hook injects for this prompt (``ctx``: the config's ``context`` table): recall, then the
    gate. ``shown``: the ids already in the session's context (None: read from its record)."""
    max_items, min_score = ctx["prompt_context_max_items"], ctx["prompt_context_min_score"]
    if not ctx["prompt_context_enabled"] or max_items == 0 or too_short(prompt) or prompt.lstrip().startswith("/"):
        return []
    if shown is None:
        shown = shown_record.load(home, safe_session(session_id))
    query = prompt.strip()[:QUERY_CHARS]
    refresh_team(home, project)
    # the items already shown come back too: ask for more (at most twice as many) so new ones still fill max_items
    limit = max_items * 4 + min(len(shown), max_items * 4)
    items, _source = recall_items(home, query, project, limit, context_types(ctx))
    return select(items, query, project=project, session_id=session_id, min_score=min_score, max_items=max_items,
                  shown=shown)


def main() -> None:
    payload = read_payload()
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or too_short(prompt) or prompt.lstrip().startswith("/"):
        return
    home = paths.sophia_home()
    if not home.is_dir():
        return
    # load_config checked the context values against config_defaults (a bad value is already its default)
    ctx = load_config(home)["context"]
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.environ.get("CLAUDE_PROJECT_DIR")
    sid = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    record = safe_session(sid)
    chosen = choose(home, ctx, prompt, project_of(cwd), sid, shown_record.load(home, record))
    text = render(chosen, ctx["prompt_context_min_score"]) if chosen else ""
    if text:
        emit_context("UserPromptSubmit", text)
        shown_record.add(home, record, shown_record.ids_in(text))


def cli() -> None:
    run("prompt_context", main)


if __name__ == "__main__":
    cli()
