"""What the detached reflection's run reads: the episodes it reflects on and the heuristics already kept,
redacted, within a budget. Standard library only (``hooks/reflect_runner.py`` runs ``python -I -S``).

The run is sealed (:mod:`.seal`): it reads its prompt and ``s3 recall`` / ``s3 list`` answers, nothing
else, so what it needs of the episodes is here. An episode is its record in ``episodes/`` (redacted when
it was written, redacted again here), never its transcript: the task, the outcome and why, the result,
the lesson already kept, the errors, the files, then its tool calls (the first and the last ones when
they do not all fit). The episodes share :data:`EPISODES_CHARS` (a condensed session's budget); each
gets at least :data:`MIN_EPISODE_CHARS`, so when more are pending than fit, the last ones given (the
newest: a pending list grows at its end) are kept and the others left out, by name. The kept heuristics
are the :data:`RULES_SHOWN` newest, one line each, within :data:`RULES_CHARS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..atomic import read_json
from ..episode_store import episode_path
from ..errors import SophiaError
from ..kinds import one_line
from ..redact import redact
from . import condense

EPISODES_CHARS = condense.BUDGET_TOKENS * condense.CHARS_PER_TOKEN
MIN_EPISODE_CHARS = 1500
RULES_SHOWN = 50
RULES_CHARS = 6000
FIELD_CHARS = 400  # one field of an episode (its task, its result ...)
ERRORS_SHOWN = 8
FILES_SHOWN = 10
SEPARATOR = "\n\n"


class Episodes:
    """The episodes' text and which ids it holds (``shown``), which did not fit (``left_out``) and which
    have no readable record (``missing``)."""

    __slots__ = ("text", "shown", "left_out", "missing")

    def __init__(self, text: str, shown: list[str], left_out: list[str], missing: list[str]) -> None:
        self.text, self.shown, self.left_out, self.missing = text, shown, left_out, missing


def episodes(home: Path, ids: list[str], budget: int = EPISODES_CHARS) -> Episodes:
    """The episodes ``ids`` (each once, in the order given) as the run reads them, at most ``budget``
    characters in all."""
    found: list[dict[str, Any]] = []
    missing: list[str] = []
    for eid in dict.fromkeys(ids):
        ep = _read(home, eid)
        if ep is None:
            missing.append(eid)
        else:
            found.append(ep)
    most = max(1, budget // MIN_EPISODE_CHARS)
    kept, left = found[-most:], found[:-most]
    share = (budget - len(SEPARATOR) * max(0, len(kept) - 1)) // max(1, len(kept))
    text = SEPARATOR.join(episode_text(ep, share) for ep in kept)
    return Episodes(text, [str(e["id"]) for e in kept], [str(e["id"]) for e in left], missing)


def _read(home: Path, eid: str) -> dict[str, Any] | None:
    try:
        ep = read_json(episode_path(eid, home), default=None)
    except (ValueError, SophiaError):  # an unsafe id, an unreadable file
        return None
    return ep if isinstance(ep, dict) and ep.get("id") == eid else None


def episode_text(ep: dict[str, Any], limit: int) -> str:
    """One episode in at most ``limit`` characters: what it was and how it ended first, its calls last."""
    lines = [_field(_header(ep), FIELD_CHARS)]
    goal, summary = ep.get("goal"), ep.get("goal_summary")
    for label, value in (("Task", summary or goal), ("First prompt", goal if summary and goal != summary else ""),
                         ("Why this outcome", ep.get("outcome_reason")), ("Result", ep.get("result")),
                         ("Lessons already kept", "; ".join(map(str, ep.get("heuristics") or []))),
                         ("Error analysis already kept", ep.get("error_analysis"))):
        if value:
            lines.append(f"{label}: {_field(value, FIELD_CHARS)}")
    errors = [e for e in ep.get("errors") or [] if e]
    if errors:
        lines.append(f"Errors ({len(errors)}):")
        lines += [f"- {_field(e, 200)}" for e in errors[:ERRORS_SHOWN]]
    files = [str(f) for f in ep.get("files_touched") or [] if f]
    if files:
        more = f" (+{len(files) - FILES_SHOWN} more)" if len(files) > FILES_SHOWN else ""
        lines.append(f"Files touched: {_field(', '.join(files[:FILES_SHOWN]), FIELD_CHARS)}{more}")
    head = "\n".join(lines)
    calls = [action_line(a) for a in ep.get("actions") or [] if isinstance(a, dict)]
    if calls:
        title = f"\nTool calls ({len(calls)} recorded):\n"
        head += title + fit_lines(calls, limit - len(head) - len(title))
    return head if len(head) <= limit else head[: max(0, limit - 14)].rstrip() + " [... cut ...]"


def _header(ep: dict[str, Any]) -> str:
    parts = [f"## {ep['id']}"]
    if ep.get("project"):
        parts.append(f"project {ep['project']}")
    if ep.get("started_at") or ep.get("ended_at"):
        parts.append(f"{ep.get('started_at') or '?'} -> {ep.get('ended_at') or '?'}")
    if isinstance(ep.get("tool_call_count"), int):
        parts.append(f"{ep['tool_call_count']} tool calls")
    parts.append(f"outcome {ep.get('outcome') or 'UNKNOWN'}")
    return " | ".join(parts)


def _field(value: Any, limit: int) -> str:
    return one_line(redact(str(value)), limit)


def action_line(a: dict[str, Any]) -> str:
    """``- Bash error (exit 1): ./deploy.sh``: the tool, its judged outcome, what it ran or touched."""
    outcome = str(a.get("outcome") or "ok")
    if a.get("exit") not in (None, 0):
        outcome += f" (exit {a['exit']})"
    what = a.get("summary") or a.get("file") or ""
    return f"- {a.get('tool') or '?'} {outcome}" + (f": {_field(what, 200)}" if what else "")


def fit_lines(lines: list[str], limit: int) -> str:
    """``lines`` within ``limit`` characters: all of them, or the first and the last ones around a marker
    saying how many were left out."""
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    head: list[str] = []
    tail: list[str] = []
    used = len("- [... 100000 calls left out ...]") + 2
    for i in range(len(lines)):
        line = lines[i // 2] if i % 2 == 0 else lines[-1 - i // 2]
        if used + len(line) + 1 > limit:
            break
        used += len(line) + 1
        (head if i % 2 == 0 else tail).append(line)
    marker = f"- [... {len(lines) - len(head) - len(tail)} calls left out ...]"
    return "\n".join([*head, marker, *reversed(tail)]) if limit >= len(marker) else ""


def rules(home: Path) -> str:
    """The kept heuristics, newest first, one line each (``- rule_id [trigger] text (confidence 0.80)``)."""
    from ..memory.rules import load_rules

    try:
        kept = load_rules(home)
    except SophiaError as exc:
        return f"(the kept heuristics could not be read: {exc}; `s3 list rules --json` lists them)"
    if not kept:
        return "(none kept yet)"
    kept.sort(key=lambda r: str(r.get("created_at") or ""), reverse=True)
    lines = [f"- {r.get('id')} [{_field(r.get('trigger_concept') or '', 80)}] {_field(r.get('rule_content') or '', 300)}"
             f" (confidence {_confidence(r):.2f})" for r in kept[:RULES_SHOWN]]
    out, used = [], 0
    for line in lines:
        if used + len(line) + 1 > RULES_CHARS:
            break
        out.append(line)
        used += len(line) + 1
    if len(out) < len(kept):
        out.append(f"({len(kept) - len(out)} older heuristics not shown: `s3 list rules --json` lists them all)")
    return "\n".join(out)


def _confidence(rule: dict[str, Any]) -> float:
    try:
        return float(rule.get("confidence") or 0)
    except (TypeError, ValueError):
        return 0.0
