"""SessionStart: what Claude should know before the first prompt. ``python -I -S launch.py session_start``.

Prints ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}``
with, in this order and within ``context.session_start_max_tokens`` (about 4 characters a
token): the identity goal and terminal creed, the user's stable profile (a line or two), the
heuristics (semantic rules) most relevant to this project, foresight of this project still valid today,
the last few episodes of THIS project that say something (not trivial, more than a bare first prompt:
what came of it, a lesson, the files), each as the prompt hook renders it (``context.episode_lines``),
the project's playbook and error -> fix procedures learned from its commands, and this project's open
knowledge gaps; first, one line when digest jobs are parked.

Nothing of another project appears. What has no project appears only when it is global: the identity,
the creed, the user's profile, a rule without a project (a heuristic is a general lesson unless it names
its project; the prompt hook treats rules the same way), a gap marked global (``sophia.gaps``).
Foresight without a project of its own takes the project of the episode it was drawn from, else it is
not shown here. The ids shown start the session's record of what its context holds
(:mod:`sophia.hooks.shown`), whatever the ``source`` (startup, resume, clear, compact).

Claude Code's own memory (``cc_memory``) is never part of it; when its files changed, a detached refresh
started after the answer re-indexes them, and so does one the project's team memory (``<project>/.sophia/team``) when its folder
changed. Reads only small files: the capped episode index (1000 entries), the few episode files shown,
the rules, ``memory/foresight.json``, the self model, the user model.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from sophia import gaps, kinds, paths
from sophia.hooks import shown
from sophia.hooks.context import ago, episode_lines, fit, memory_items, one_line, read_json_quiet, stems
from sophia.hooks.project import project_of
from sophia.hooks.runtime import emit_context, later, load_config, read_payload, run, safe_session
from sophia.timeutil import parse

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

MAX_RULES = 8
MAX_EPISODES = 3
OLDER_CHARS = 90  # what an older episode's one line says after its id, age and outcome
SCAN_EPISODES = 12  # the newest entries of the project looked at for episodes that say something
MAX_FORESIGHT = 5
MAX_GAPS = 5
MAX_LESSON_CHARS = 1200


def _age_days(value: Any, now: datetime) -> float | None:
    d = parse(value) if isinstance(value, str) else None
    return None if d is None else max(0.0, (now - d).total_seconds() / 86400)


def index_entries(index: Any) -> list[dict[str, Any]]:
    entries = index.get("entries") if isinstance(index, dict) else None
    return [e for e in entries if isinstance(e, dict) and e.get("id")] if isinstance(entries, list) else []


def project_episodes(index: Any, project: str | None) -> list[dict[str, Any]]:
    return [e for e in index_entries(index) if e.get("project") == project] if project else []


def rank_rules(rules: Any, keywords: set[str], project: str | None, now: datetime) -> list[dict[str, Any]]:
    if not isinstance(rules, list):
        return []
    scored = []
    for i, r in enumerate(rules):
        if not isinstance(r, dict) or not r.get("rule_content"):
            continue
        if r.get("retired") or r.get("status") in ("retired", "rejected"):
            continue
        if r.get("project") and r.get("project") != project:
            continue  # another project's rule (a rule without one is global)
        try:
            conf = float(r.get("confidence", 0.8))
        except (TypeError, ValueError):
            conf = 0.5
        words = stems(f"{r.get('trigger_concept', '')} {r.get('rule_content', '')}")
        match = len(words & keywords)
        age = _age_days(r.get("last_validated") or r.get("created_at"), now)
        recency = 0.0 if age is None else 1.0 / (1.0 + age / 30.0)
        score = 2.0 * match + conf + 0.5 * recency + (1.0 if r.get("project") == project and project else 0.0)
        scored.append((score, -i, r))
    scored.sort(key=lambda x: (x[0], x[1]), reverse=True)
    return [r for _, _, r in scored[:MAX_RULES]]


def item_project(item: dict[str, Any], episode_projects: dict[str, Any]) -> str | None:
    """An item's project: its own, else that of the episode it was drawn from (its first known source)."""
    if item.get("project"):
        return str(item["project"])
    sources = item.get("source_ids")
    if not isinstance(sources, list):
        return None
    return next((str(episode_projects[s]) for s in sources if isinstance(s, str) and episode_projects.get(s)), None)


def valid_foresight(items: list[dict[str, Any]], project: str | None, now: datetime,
                    episode_projects: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """This project's foresight valid at ``now``, soonest to expire first."""
    out = []
    for it in items:
        if not project or item_project(it, episode_projects or {}) != project:
            continue
        start, end = parse(it.get("valid_from")), parse(it.get("valid_until"))
        if (start and start > now) or (end and end < now) or not it.get("text"):
            continue
        out.append(it)
    out.sort(key=lambda it: str(it.get("valid_until") or "9999"))
    return out[:MAX_FORESIGHT]


def gap_lines(self_model: dict[str, Any], project: str | None) -> list[str]:
    """The newest open gaps of this project and those marked global (``gaps.shown_in``), one line each."""
    shown_here = gaps.shown_for(self_model.get("knowledge_gaps"), project)[-MAX_GAPS:]
    return [f"- [{g['id']}] {one_line(g.get('text'), 200)}" for g in shown_here]


def parked_digests(home: Path) -> int:
    """How many digest jobs are parked (failed too often): one directory listing."""
    try:
        return sum(1 for e in os.scandir(home / "digests" / "parked") if e.name.endswith(".json"))
    except OSError:
        return 0


def command_lessons(home: Path, project: str | None, max_chars: int) -> list[str]:
    """The project's playbook and error -> fix procedures (the zero-token learners'), a quarter of the cap
    at most. The learners' module is imported only when there are procedures to show."""
    if not project or not paths.memory_dir(home).joinpath("procedures.json").is_file():
        return []
    from sophia.learning.procedures import session_lines

    return session_lines(home, project, max_chars=max(200, min(MAX_LESSON_CHARS, max_chars // 4)))


def _card(home: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """The episode's card (``kinds.episode_card``) from its file; its index entry's goal when unreadable."""
    from sophia.episode_store import episode_path

    try:
        ep = read_json_quiet(episode_path(str(entry["id"]), home))
    except ValueError:  # an unsafe id in the index
        ep = None
    return kinds.episode_card(ep) if isinstance(ep, dict) and ep.get("id") else {"did": entry.get("goal_summary")}


def says_something(card: dict[str, Any]) -> bool:
    """More than a bare first prompt: what came of it, a lesson, why it did not succeed, or its files."""
    return bool(card.get("result") or card.get("lesson") or card.get("why") or card.get("files"))


def recent_episode_lines(home: Path, episodes: list[dict[str, Any]], now: datetime) -> list[str]:
    """The project's newest episodes that say something, each once: the newest in a few lines, the rest in
    one (an episode is one entry for ``fit``: its lines are kept or dropped together)."""
    lines: list[str] = []
    seen: set[str] = set()
    shown = 0
    for e in episodes[:SCAN_EPISODES]:
        if e.get("trivial"):
            continue
        card = _card(home, e)
        key = f"{card.get('did')}|{card.get('result')}".lower()
        if not says_something(card) or key in seen:
            continue
        seen.add(key)
        head = ", ".join(b for b in (f"- [{e['id']}] {ago(e.get('timestamp'), now)}", str(e.get("outcome") or "")) if b)
        lines.append("\n".join(episode_lines(card, head, 3) if not shown else episode_lines(card, head, 1, OLDER_CHARS)))
        shown += 1
        if shown == MAX_EPISODES:
            break
    return lines


def identity_lines(self_model: dict[str, Any]) -> list[str]:
    identity = []
    if self_model.get("identity_goal"):
        identity.append(f"Identity goal: {one_line(self_model['identity_goal'], 300)}")
    creed = [c for c in self_model.get("terminal_creed") or [] if isinstance(c, str)]
    if creed:
        identity.append("Terminal creed (never violate): " + " ".join(one_line(c, 200) for c in creed[:10]))
    return identity


def user_lines(home: Path, cfg: dict[str, Any]) -> list[str]:
    """The stable profile: a line or two from the user model (:mod:`sophia.memory.user_model`)."""
    from sophia.memory.user_model import profile_lines

    return profile_lines(home, cfg.get("current_user") or "default")  # a safe name: load_config checked it


def build_context(home: Path, cfg: dict[str, Any], cwd: str | None, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    project = project_of(cwd)
    max_chars = cfg["context"]["session_start_max_tokens"] * 4  # checked by load_config (>= 100)

    self_model = read_json_quiet(paths.self_model_path(home))
    self_model = self_model if isinstance(self_model, dict) else {}
    index = read_json_quiet(paths.episode_index_path(home))
    episodes = project_episodes(index, project)

    keywords: set[str] = stems(Path(project).name.replace("-", " ").replace("_", " ")) if project else set()
    for e in episodes[:30]:
        keywords |= stems(" ".join(k for k in e.get("keywords") or [] if isinstance(k, str)))

    sections: list[tuple[str, list[str]]] = []
    parked = parked_digests(home)
    if parked:
        sections.append(("## Learning", [f"- {parked} digest{'s' if parked > 1 else ''} parked: run `s3 digest list`"]))
    sections.append(("## Identity", identity_lines(self_model)))
    sections.append(("## The user (learned from past sessions)", user_lines(home, cfg)))

    rules = rank_rules(read_json_quiet(paths.rules_path(home)), keywords, project, now)
    sections.append(("## Heuristics learned (most relevant to this project first)", [
        f"- [{r.get('id', '?')}] {one_line(r.get('rule_content'), 280)}"
        + (f" (when: {one_line(r.get('trigger_concept'), 60)})" if r.get("trigger_concept") else "")
        for r in rules
    ]))

    owners = {str(e["id"]): e.get("project") for e in index_entries(index)}
    foresight = valid_foresight(memory_items(home, "foresight"), project, now, owners)
    sections.append(("## Foresight still valid today", [
        f"- [{f.get('id', '?')}] {one_line(f.get('text'), 250)}"
        + (f" (until {str(f.get('valid_until'))[:10]})" if f.get("valid_until") else "")
        for f in foresight
    ]))

    title = f"## Recent episodes in this project ({project})" if project else "## Recent episodes"
    sections.append((title, recent_episode_lines(home, episodes, now)))

    sections.append(("## What worked in this project before (commands)", command_lessons(home, project, max_chars)))

    sections.append(("## Open knowledge gaps in this project", gap_lines(self_model, project)))

    preamble = ("# Sophia System 3 memory (ids can be cited; `s3 recall QUERY` finds more)\n")
    text = fit(sections, max_chars, preamble)
    return "" if text == preamble.strip() else text


def main() -> None:
    payload = read_payload()
    home = paths.sophia_home()
    if not home.is_dir():
        return
    cfg = load_config(home)
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.environ.get("CLAUDE_PROJECT_DIR")
    text = build_context(home, cfg, cwd) if cfg["context"]["session_start_enabled"] else ""
    if text:
        emit_context("SessionStart", text)
    source = str(payload.get("source") or "startup")[:20]
    shown.start(home, safe_session(payload.get("session_id")), f"SessionStart:{source}", shown.ids_in(text))
    later(start_refreshes, home, project_of(cwd), cfg["context"]["session_start_enabled"])


def start_refreshes(home: Path, project: str | None, claude_memory: bool) -> None:
    """The detached refreshes, started once the answer is out (:func:`runtime.later`: a process starting
    beside the hook's own work would compete with it for the CPU): the team database's sync (nothing when
    none is configured), Claude Code's memory and the project's team folder when they changed."""
    from ..team.launch import kick

    kick(home, "session start")
    if claude_memory:
        refresh_claude_memory(home, project)
    refresh_team_memory(home, project)


def refresh_claude_memory(home: Path, project: str | None) -> int | None:
    """Claude Code's own memory files and CLAUDE.md (never injected here: Claude Code loads them) are
    re-indexed, detached, when they changed since the last refresh: a few ``stat`` calls decide."""
    from sophia.memory import claude_code

    return claude_code.start_refresh(home, project) if claude_code.stale_for(home, project) else None


def refresh_team_memory(home: Path, project: str | None) -> int | None:
    """The project's team memory (``<project>/.sophia/team``) is re-indexed, detached, when one ``stat``
    of its folder says it changed since the last refresh (the prompt hook would do it at the first prompt)."""
    from sophia.memory import team_repo

    return team_repo.start_refresh(home, project) if project and team_repo.changed(home, project) else None


def cli() -> None:
    run("session_start", main)


if __name__ == "__main__":
    cli()
