"""Build a session's episode (seed 16.4) from its action buffer, the transcript state and the
hook fields. Pure functions, standard library only; everything returned is redacted.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..evidence import plain
from ..redact import redact, redact_head, redact_obj
from . import outcome
from .words import STOPWORDS

MAX_ACTIONS = 200  # kept in the episode: the first 50 and the last 150
MAX_FILES = 50
MAX_ERRORS = 20
GOAL_CHARS = 2000
SUMMARY_CHARS = 100
RESULT_CHARS = 160
MIN_TASK_WORDS = 3  # a prompt with fewer content words ("load claude.md", "git push") is not the session's task
FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Read"})
ACTION_KEYS = ("ts", "tool", "id", "event", "outcome", "verdict", "exit", "duration_ms", "summary", "file",
               "args_hash")

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+#.-]{2,}")

def read_buffer(lines: Iterable[bytes | str]) -> list[dict[str, Any]]:
    """Parse buffer lines (one JSON object each); bad lines are skipped."""
    out: list[dict[str, Any]] = []
    for raw in lines:
        if not raw or not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and isinstance(obj.get("tool"), str):
            out.append(obj)
    return out


def summarize(goal: str | None, limit: int = SUMMARY_CHARS) -> str:
    if not goal:
        return ""
    line = " ".join(re.sub(r"(?:^|\s)#{1,6}\s", " ", goal).split()).strip("\"'")
    m = re.match(r"(.+?[.!?])(\s|$)", line)
    if m and len(m.group(1)) >= 12:
        line = m.group(1)
    if len(line) > limit:
        cut = line[: limit - 1].rsplit(" ", 1)[0] or line[: limit - 1]
        line = cut.rstrip(",;:") + "…"
    return line


def keywords(goal: str | None, actions: list[dict[str, Any]], files: list[str], limit: int = 12) -> list[str]:
    counts: Counter[str] = Counter()
    order: dict[str, int] = {}

    def add(word: str, weight: int) -> None:
        w = word.lower().strip(".-_#+")
        if len(w) < 3 or w in STOPWORDS or w.isdigit() or "[redacted" in w:
            return
        counts[w] += weight
        order.setdefault(w, len(order))

    for w in _WORD.findall(goal or ""):
        add(w, 3)
    for f in files:
        base = f.rsplit("/", 1)[-1]
        stem = base.rsplit(".", 1)[0] if "." in base[1:] else base
        for part in re.split(r"[^A-Za-z0-9]+", stem):
            add(part, 2)
    for a in actions:
        head = str(a.get("summary") or "").split(" ", 1)[0]
        if head and not head.startswith("["):
            add(head, 1)
    ranked = sorted(counts, key=lambda w: (-counts[w], order[w]))
    return ranked[:limit]


_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_EDGE = re.compile(r"^[^\w(\"'`]+|[^\w)\"'`.!?]+$")  # emoji, markdown marks, ticks and colons at the edges
_INTERJECTION = re.compile(r"^(?:perfect|great|excellent|ok(?:ay)?|good|awesome|alright|all right)\b[!.,:]*\s*", re.I)
_INTENT = re.compile(r"^(?:now,? |next,? |first,? )?(?:let me|let's|i'll|i will|i'm going to)\s+", re.I)

SUCCESS, FAILURE, PARTIAL, UNKNOWN = outcome.SUCCESS, outcome.FAILURE, outcome.PARTIAL, outcome.UNKNOWN
judge_outcome = outcome.judge_outcome


def classify_outcome(actions: list[dict[str, Any]], last_message: str | None,
                     transcript: dict[str, Any] | None = None) -> str:
    """SUCCESS / FAILURE / PARTIAL / UNKNOWN (see ``sophia.hooks.outcome.judge_outcome``)."""
    return judge_outcome(actions, last_message, transcript)[0]


def _compact_action(a: dict[str, Any]) -> dict[str, Any]:
    return {k: a[k] for k in ACTION_KEYS if k in a and a[k] not in (None, "")}


# Each action redacted once in this process (a long-lived hook runner rebuilds the episode of a session
# after every turn, its actions all but the new ones the same): repr of the action -> redacted action.
_REDACTED: dict[str, dict[str, Any]] = {}
_REDACTED_MAX = 20_000


def redact_actions(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``redact_obj(actions)``, which redacts a list element by element: each action's result remembered."""
    out: list[dict[str, Any]] = []
    for a in actions:
        key = repr(a)  # exact for the JSON types an action holds (1, "1" and True differ), and fast
        done = _REDACTED.get(key)
        if done is None:
            if len(_REDACTED) >= _REDACTED_MAX:
                _REDACTED.clear()
            done = _REDACTED[key] = redact_obj(a)
        out.append(dict(done) if isinstance(done, dict) else done)  # a copy: the caller may change it
    return out


def _cap_actions(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(actions) <= MAX_ACTIONS:
        return actions
    return actions[:50] + actions[-(MAX_ACTIONS - 50):]


def _error_line(a: dict[str, Any], detail: str | None) -> str:
    what = a.get("summary") or a.get("file") or ""
    head = f"{a.get('tool', '?')}{' ' + what if what else ''}"
    if detail:
        text = " ".join(plain(detail).split())[:300]  # no terminal colour codes in what is kept
    elif a.get("exit") not in (None, 0):
        text = f"exit {a.get('exit')}"
    else:
        text = "failed"
    return f"{head}: {text}"


def episode_id(session_id: str, started_at: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9]", "", session_id)[:12] or "unknown"
    day = re.sub(r"[^0-9]", "", started_at[:10]) or "00000000"
    return f"ep_{day}_{safe}"


def _all_actions(carry: dict[str, Any], buffer: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """An earlier run's actions (its buffer rotated away) then this buffer's; and the tool call count."""
    prior_actions = [a for a in carry.get("actions") or [] if isinstance(a, dict)]
    prior_count = int(carry.get("tool_call_count") or len(prior_actions))
    return prior_actions + [_compact_action(a) for a in buffer], prior_count + len(buffer)


def _last_message(last_message: str | None, transcript: dict[str, Any]) -> str | None:
    last = last_message
    if not last and transcript.get("assistant_texts"):
        last = transcript["assistant_texts"][-1]
    return redact_head(last, 2000) if last else None


def _files_touched(carry: dict[str, Any], buffer: list[dict[str, Any]]) -> list[str]:
    files: list[str] = list(carry.get("files_touched") or [])
    for a in buffer:
        f = a.get("file")
        if isinstance(f, str) and f and a.get("tool") in FILE_TOOLS and f not in files:
            files.append(f)
    return [redact(f) for f in files[:MAX_FILES]]


def _errors(carry: dict[str, Any], buffer: list[dict[str, Any]], tool_errors: dict[Any, Any]) -> list[str]:
    errors: list[str] = list(carry.get("errors") or [])
    for a in buffer:
        if a.get("outcome") == "error" and len(errors) < MAX_ERRORS:
            errors.append(redact(_error_line(a, tool_errors.get(a.get("id")) if a.get("id") else None)))
    return errors


def transcript_actions(transcript: dict[str, Any]) -> list[dict[str, Any]]:
    """The buffer-shaped actions the transcript reader paired from tool calls and their results."""
    return [a for a in transcript.get("actions") or [] if isinstance(a, dict) and isinstance(a.get("tool"), str)]


def judged_buffer(buffer: list[dict[str, Any]], transcript: dict[str, Any]) -> list[dict[str, Any]]:
    """The buffer's actions with the transcript's judged outcome where the evidence disagrees with the
    client's status (``sophia.evidence``: a masked failure is an error, a cancelled call is skipped), and
    the call's ``args_hash`` from the transcript's copy of the call (the PostToolUse hook computes none:
    that took it a process)."""
    judged = transcript.get("verdicts")
    judged = judged if isinstance(judged, dict) else {}
    hashes = {a.get("id"): a["args_hash"] for a in transcript_actions(transcript) if a.get("args_hash")}
    if not judged and not hashes:
        return buffer
    out = []
    for a in buffer:
        extra = judged.get(a.get("id"))
        h = hashes.get(a.get("id")) if "args_hash" not in a else None
        if isinstance(extra, dict) or h:
            a = {**a, **(extra if isinstance(extra, dict) else {}), **({"args_hash": h} if h else {})}
        out.append(a)
    return out


def _action_source(carry: dict[str, Any], buffer: list[dict[str, Any]],
                   transcript: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """(carry, actions, calls not in the list): the buffer's, else the transcript's.

    A session without a buffer (no PostToolUse hook ran: a replay, an older install, a backfill) takes its
    actions from the transcript, which the reader reads whole from its start: an earlier run's carried
    actions are already among them."""
    if buffer:
        return carry, judged_buffer(buffer, transcript), 0
    actions = transcript_actions(transcript)
    if not actions:
        return carry, buffer, 0
    kept = {k: v for k, v in carry.items() if k not in ("actions", "tool_call_count", "files_touched", "errors")}
    return kept, actions, max(0, int(transcript.get("actions_total") or 0) - len(actions))


def build_episode(
    *,
    session_id: str,
    episode_id: str,
    buffer: list[dict[str, Any]],
    transcript: dict[str, Any],
    now: str,
    end_trigger: str,
    last_message: str | None,
    project: str | None,
    git_branch: str | None,
    git_commit: str | None,
    carry: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The episode dict (validates as ``sophia.models.Episode``), redacted.

    ``buffer``: the PostToolUse buffer's actions; when it is empty, the transcript's (``transcript_actions``).
    ``carry``: what an earlier run of the same session already recorded (its buffer was
    rotated away): its actions and counts come first.
    """
    carry, buffer, uncounted = _action_source(carry or {}, buffer, transcript)
    actions_all, tool_call_count = _all_actions(carry, buffer)
    tool_call_count += uncounted
    goal = _goal(carry, transcript)
    task = task_prompt(transcript) or goal
    last = _last_message(last_message, transcript)
    files = _files_touched(carry, buffer)
    outcome_, reason = judge_outcome(actions_all, last, transcript, turn_ended=bool(last_message))
    ep: dict[str, Any] = {
        "id": episode_id,
        "session_id": session_id,
        "started_at": _started_at(carry, transcript, buffer, now),
        "ended_at": now,
        "timestamp": now,
        "end_trigger": end_trigger,
        "goal": goal,
        "goal_summary": summarize(task),
        "result": headline(last),
        "chain_of_thought": [redact_head(t, 500) for t in (transcript.get("assistant_texts") or [])[-3:]],
        "actions": redact_actions(_cap_actions(actions_all)),
        "tool_call_count": tool_call_count,
        "outcome": outcome_,
        "outcome_reason": reason,
        "error_analysis": None,
        "heuristics": list(carry.get("heuristics") or []),
        "keywords": keywords(goal, actions_all, files),
        "embedding": None,
        "trivial": tool_call_count < 2,
        "consolidated": bool(carry.get("consolidated")),
        "project": project,
        "git_branch": git_branch,
        "git_commit": git_commit,
        "files_touched": files,
        "errors": _errors(carry, buffer, transcript.get("tool_errors") or {})[:MAX_ERRORS],
        "last_message": last,
        "prompts_count": int(transcript.get("prompts_total") or 0),
    }
    ep.update(_compaction_counts(transcript))
    if extra:
        ep.update(extra)
    return ep


def _content_words(text: str) -> int:
    return sum(1 for w in _WORD.findall(text) if w.lower().strip(".-_#+") not in STOPWORDS)


def task_prompt(transcript: dict[str, Any]) -> str | None:
    """The session's task: its first prompt with a few content words among the first ones, redacted
    (None when none has: the goal stays the first prompt)."""
    for p in transcript.get("first_prompts") or []:
        if isinstance(p, str) and _content_words(p) >= MIN_TASK_WORDS:
            return redact_head(p, GOAL_CHARS)
    return None


def headline(message: str | None, limit: int = RESULT_CHARS) -> str:
    """What the last assistant message says was done, on one line: its first heading, else its first
    sentences that report something done, else its first sentence; "was about to: ..." when it only
    announces a step (the session stopped there)."""
    text = _FENCED.sub(" ", message or "").replace("**", "").replace("`", "")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("#"):
            head = _EDGE.sub("", ln.lstrip("#"))
            if len(head.split()) >= 2:
                return _cut(head, limit)
    sentences = [_INTERJECTION.sub("", _EDGE.sub("", s)) for s in _SENTENCE.split(" ".join(lines))]
    sentences = [s for s in sentences if len(s.split()) >= 2]
    if not sentences:
        return ""
    start = next((i for i, s in enumerate(sentences) if outcome.reports_done(s) and not _INTENT.match(s)), 0)
    intent = _INTENT.match(sentences[start])
    if intent:
        return _cut("was about to: " + sentences[start][intent.end():], limit)
    out = sentences[start]
    for s in sentences[start + 1:]:
        if len(out) + 1 + len(s) > limit:
            break
        out += " " + s
    return _cut(out, limit)


def _cut(text: str, limit: int) -> str:
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    return (line[: limit - 1].rsplit(" ", 1)[0] or line[: limit - 1]).rstrip(",;:") + "…"


def _goal(carry: dict[str, Any], transcript: dict[str, Any]) -> str | None:
    """The session's first prompt (or the goal an earlier run recorded), redacted."""
    goal = transcript.get("first_prompt") or carry.get("goal")
    return redact_head(goal, GOAL_CHARS) if goal else None


def _started_at(carry: dict[str, Any], transcript: dict[str, Any], buffer: list[dict[str, Any]], now: str) -> str:
    """The earliest start any source knows: an earlier run, the transcript, the action buffer."""
    times = [t for t in (carry.get("started_at"), transcript.get("first_ts"),
                         buffer[0].get("ts") if buffer else None) if isinstance(t, str) and t]
    return min(times) if times else now


def _compaction_counts(transcript: dict[str, Any]) -> dict[str, Any]:
    """Compactions and subagent lines, recorded only when there were any."""
    counts: dict[str, Any] = {}
    if transcript.get("compactions"):
        counts["compactions"] = transcript["compactions"]
    if transcript.get("sidechain_lines"):
        counts["subagent_lines"] = transcript["sidechain_lines"]
    return counts

