"""The digest's input: a Claude Code transcript condensed to what a reader needs. Standard library only.

Real transcripts run to 0.5-1.3 MB (hundreds of thousands of tokens): sending them whole to the digest
model is the token burn users complain of. ``condense`` keeps, redacted through ``sophia.redact``:

- a header (session, project, branch, client version, times, counts);
- the compact summary when the session was compacted (or the one a PostCompact payload carried);
- the timeline: the user's prompts, each tool call with its outcome (``ok``, or ``ERROR`` and the
  error's first line), short assistant notes;
- the files touched (modified, then read), and the final assistant message;

within a budget of ``budget_tokens`` (default 6,000). Tokens are *estimated* as characters / 4
(``CHARS_PER_TOKEN``), so the output never exceeds ``budget_tokens * 4`` characters. When the timeline
does not fit, the first prompt and the last event stay, then the errors and prompts, then the other
events nearest the start and the end, then assistant notes where room is left; a marker says how many
prompts and calls were left out where (a left-out note has none). Same transcript,
same budget: same text (no clock, no randomness, no dict-order dependence beyond the file's).

Lines are read with the line-level reader the hooks use (``sophia.transcript_entries``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..evidence import plain
from ..redact import redact, redact_head
from ..transcript_entries import (
    KNOWN_TYPES,
    blocks,
    call_record,
    clean_prompt,
    compact_summary,
    entries,
    judge_result,
    parse_line,
    tool_calls,
    tool_results,
)

BUDGET_TOKENS = 6000
CHARS_PER_TOKEN = 4  # the estimate used everywhere here: tokens ~= characters / 4
MAX_READ = 64 * 1024 * 1024  # a bigger file: its first 8 MiB and its last 32 MiB
HEAD_READ = 8 * 1024 * 1024
TAIL_READ = 32 * 1024 * 1024
PROMPT_CHARS = 1200
COMMAND_CHARS = 240
ERROR_CHARS = 240
NOTE_CHARS = 240
SUMMARY_SHARE = 0.25  # of the budget, at most, for the compact summary
FINAL_SHARE = 0.10  # for the final message
FILES_SHARE = 0.08  # for the files touched
MARKER = "  [... {} prompts and tool calls left out ...]"
MARKER_CHARS = len(MARKER.format(99999)) + 1
FILE_WRITERS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})

_TAGS = re.compile(r"</?tool_use_error>")
_WORDY = re.compile(r"\w")  # a line of rules or box-drawing says nothing
_BARE_ERROR = re.compile(r"(?:Error: )?(?:Exit code \d+|Error)\s*:?", re.I)
_ARG_KEYS = ("command", "file_path", "notebook_path", "path", "pattern", "url", "query", "description",
             "subagent_type", "skill", "prompt")


def estimate_tokens(chars: int) -> int:
    """Tokens estimated from characters (``CHARS_PER_TOKEN`` a token, rounded up)."""
    return -(-chars // CHARS_PER_TOKEN)


@dataclass
class Event:
    kind: str  # prompt | call | note
    text: str
    error: bool = False


@dataclass
class Session:
    """What a transcript says, folded line by line (everything already redacted)."""

    meta: dict[str, str] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    pending: dict[str, tuple[Event, dict[str, Any]]] = field(default_factory=dict)
    files: dict[str, dict[str, int]] = field(default_factory=dict)
    final: str | None = None
    compact: str | None = None
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("prompts", "calls", "errors", "compactions", "boundaries", "sidechain_lines", "bad_lines"), 0))


def _one_line(text: str, limit: int) -> str:
    return " ".join(redact_head(text, limit * 2).split())[:limit]


def _first_lines(text: str) -> str:
    """An error's first line with words in it; when that line only says "Exit code N" or "Error", the next one too."""
    lines = [ln.strip() for ln in _TAGS.sub("", plain(text)).splitlines() if _WORDY.search(ln)]
    if not lines:
        return "(no message)"
    if len(lines) > 1 and _BARE_ERROR.fullmatch(lines[0]):
        return f"{lines[0]} | {lines[1]}"
    return lines[0]


def describe_call(tool: str, inp: dict[str, Any]) -> str:
    """``Tool what``: the command, the file, the pattern... (redacted, one line)."""
    for key in _ARG_KEYS:
        value = inp.get(key)
        if isinstance(value, str) and value.strip():
            return f"{tool} {_one_line(value, COMMAND_CHARS)}"
    if tool == "TodoWrite" and isinstance(inp.get("todos"), list):
        return f"TodoWrite ({len(inp['todos'])} items)"
    return tool


def _meta(s: Session, obj: dict[str, Any]) -> None:
    ts = obj.get("timestamp")
    if isinstance(ts, str) and ts:
        s.meta.setdefault("first_ts", ts)
        s.meta["last_ts"] = max(ts, s.meta.get("last_ts", ts))
    for key, name in (("sessionId", "session"), ("cwd", "project"), ("gitBranch", "branch"),
                      ("version", "client")):
        value = obj.get(key)
        if isinstance(value, str) and value and name not in s.meta:
            s.meta[name] = _one_line(value, 200)


def _user(s: Session, obj: dict[str, Any]) -> None:
    summary = compact_summary(obj)
    if summary:
        s.compact = summary
        s.counts["compactions"] += 1
        return
    for result in tool_results(obj):
        pending = s.pending.pop(result["id"], None)
        if pending is not None:
            _judged(s, *pending, result)
    if obj.get("isMeta") or obj.get("isVisibleInTranscriptOnly"):
        return
    texts = [b["text"] for b in blocks(obj) if b.get("type") == "text" and isinstance(b.get("text"), str)]
    prompt = clean_prompt("\n".join(texts)) if texts else None
    if prompt:
        s.counts["prompts"] += 1
        s.events.append(Event("prompt", f"USER: {_one_line(prompt, PROMPT_CHARS)}"))


def _judged(s: Session, ev: Event, record: dict[str, Any], result: dict[str, Any]) -> None:
    """A call's result as the one command-evidence classifier judges it (``sophia.evidence``): a masked
    failure is an error, a cancelled or refused call is not."""
    verdict = judge_result(record, result)
    if verdict.failed:
        ev.error = True
        what = "; ".join(verdict.proof) if verdict.proof and not result["error"] else _first_lines(result["text"])
        ev.text += f" -> ERROR: {_one_line(redact_head(what, 4000), ERROR_CHARS)}"
        s.counts["errors"] += 1
    elif verdict.ok:
        ev.text += " -> ok"
    else:
        ev.text += f" -> {verdict.verdict} ({_one_line(verdict.reason, ERROR_CHARS)})"


def _assistant(s: Session, obj: dict[str, Any]) -> None:
    for b in blocks(obj):
        text = b.get("text")
        if b.get("type") == "text" and isinstance(text, str) and text.strip():
            s.final = text.strip()
            s.events.append(Event("note", f"  (assistant) {_one_line(text, NOTE_CHARS)}"))
    for call in tool_calls(obj):
        s.counts["calls"] += 1
        ev = Event("call", f"  {describe_call(call['tool'], call['input'])}")
        s.pending[call["id"]] = (ev, call_record(call))
        s.events.append(ev)
        path = next((call["input"][k] for k in ("file_path", "notebook_path")
                     if isinstance(call["input"].get(k), str)), None)
        if path and (call["tool"] in FILE_WRITERS or call["tool"] == "Read"):
            uses = s.files.setdefault(_one_line(path, 300), {})
            uses[call["tool"]] = uses.get(call["tool"], 0) + 1


def feed(s: Session, raw: bytes | str) -> None:
    """Fold one transcript line into the session (never raises on odd input); a line of a Codex session
    file as the Claude Code entries it stands for."""
    obj = parse_line(raw)
    if obj is None:
        s.counts["bad_lines"] += 1
        return
    for entry in entries(obj):
        _feed_entry(s, entry)


def _feed_entry(s: Session, obj: dict[str, Any]) -> None:
    if obj.get("type") not in KNOWN_TYPES:
        return
    _meta(s, obj)
    if obj.get("type") == "system" and obj.get("subtype") == "compact_boundary":
        s.counts["boundaries"] += 1
    if obj.get("type") not in ("user", "assistant"):
        return
    if obj.get("isSidechain") is True:
        s.counts["sidechain_lines"] += 1
    elif obj["type"] == "user":
        _user(s, obj)
    else:
        _assistant(s, obj)


def _lines(path: str | os.PathLike[str]) -> list[bytes]:
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size <= MAX_READ:
            return fh.read().splitlines()
        head = fh.read(HEAD_READ).splitlines()[:-1]
        fh.seek(size - TAIL_READ)
        return head + fh.read().splitlines()[1:]


def read_session(path: str | os.PathLike[str]) -> Session:
    """The transcript at ``path`` folded into a ``Session`` (``OSError`` when it cannot be read)."""
    s = Session()
    for line in _lines(path):
        if line.strip():
            feed(s, line)
    return s


# ---------------------------------------------------------------- rendering within the budget


def _priority(events: list[Event]) -> list[int]:
    """Event indexes, most wanted first: the first prompt and the last event, then errors and prompts,
    then calls, then notes; within a rank, nearest the start or the end first."""
    n = len(events)
    first_prompt = next((i for i, e in enumerate(events) if e.kind == "prompt"), 0)

    def key(i: int) -> tuple[int, int, int]:
        e = events[i]
        rank = 0 if i in (first_prompt, n - 1) else 1 if e.error or e.kind == "prompt" else 2 if e.kind == "call" else 3
        return rank, min(i, n - 1 - i), i

    return sorted(range(n), key=key)


def _gap_change(chosen: list[bool], i: int) -> int:
    """How the number of left-out runs changes when event ``i`` is kept."""
    left = i > 0 and not chosen[i - 1]
    right = i < len(chosen) - 1 and not chosen[i + 1]
    return 1 if left and right else -1 if not (left or right) else 0


def select(events: list[Event], budget: int) -> list[bool]:
    """Which events the timeline keeps within ``budget`` characters, the gap markers included.

    A marker stands for the prompts and calls left out between two kept lines; a left-out assistant
    note needs none (notes only fill what room is left)."""
    chosen = [False] * len(events)
    core = [i for i, e in enumerate(events) if e.kind != "note"]
    where = {i: j for j, i in enumerate(core)}
    core_chosen = [False] * len(core)
    used = MARKER_CHARS if core else 0
    for i in _priority(events):
        gaps = _gap_change(core_chosen, where[i]) if i in where else 0
        cost = len(events[i].text) + 1 + MARKER_CHARS * gaps
        if used + cost <= budget:
            chosen[i] = True
            used += cost
            if i in where:
                core_chosen[where[i]] = True
    return chosen


def timeline(events: list[Event], budget: int) -> str:
    """The kept events in order, a marker for each run left out; no line over a quarter of the budget."""
    cap = max(60, budget // 4)
    events = [e if len(e.text) <= cap else Event(e.kind, e.text[: cap - 4] + " ...", e.error) for e in events]
    chosen = select(events, budget)
    out: list[str] = []
    skipped = 0
    for ev, keep in zip(events, chosen, strict=True):
        if not keep:
            skipped += ev.kind != "note"
            continue
        if skipped:
            out.append(MARKER.format(skipped))
            skipped = 0
        out.append(ev.text)
    if skipped:
        out.append(MARKER.format(skipped))
    return "\n".join(out)


def _files(s: Session, budget: int) -> str:
    written = [(p, u) for p, u in s.files.items() if set(u) & FILE_WRITERS]
    read = [(p, u) for p, u in s.files.items() if not set(u) & FILE_WRITERS]
    out: list[str] = []
    used = 0
    for path, uses in written + read:
        line = f"- {path} ({', '.join(f'{t} {n}' for t, n in sorted(uses.items()))})"
        if used + len(line) + 1 > budget - MARKER_CHARS:
            out.append(f"- ... {len(s.files) - len(out)} more")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def _header(s: Session, budget_tokens: int) -> str:
    m, c = s.meta, s.counts
    where = " | ".join(f"{k} {m[k]}" for k in ("session", "project", "branch", "client") if k in m)
    when = f"{m.get('first_ts', '?')} -> {m.get('last_ts', '?')}"
    return (f"# Session digest input (condensed, redacted; budget {budget_tokens} tokens est. as chars/4)\n"
            f"{where}\n{when}\nprompts {c['prompts']} | tool calls {c['calls']} ({c['errors']} failed) | "
            f"compactions {max(c['compactions'], c['boundaries'])} | files touched {len(s.files)} | "
            f"subagent lines {c['sidechain_lines']}")


def _cut(text: str, limit: int) -> str:
    text = redact_head(text.strip(), limit + 64)
    return text if len(text) <= limit else text[: max(0, limit - 14)].rstrip() + " [... cut ...]"


def render(s: Session, budget_tokens: int = BUDGET_TOKENS, compact: str | None = None) -> str:
    """The digest input for a folded session, at most ``budget_tokens * CHARS_PER_TOKEN`` characters."""
    limit = budget_tokens * CHARS_PER_TOKEN
    parts = [_header(s, budget_tokens)]
    summary = compact or s.compact
    if summary:
        parts.append("## Compact summary\n" + _cut(summary, int(limit * SUMMARY_SHARE)))
    if s.files:
        parts.append("## Files touched\n" + _files(s, int(limit * FILES_SHARE)))
    tail = ["## Final message\n" + _cut(s.final, int(limit * FINAL_SHARE))] if s.final else []
    fixed = sum(len(p) + 2 for p in parts + tail) + len("## Timeline\n")
    parts.append("## Timeline\n" + timeline(s.events, max(0, limit - fixed)))
    text = redact("\n\n".join(parts + tail))
    return text if len(text) <= limit else text[: max(0, limit - 14)] + " [... cut ...]"


def condense(path: str | os.PathLike[str], budget_tokens: int = BUDGET_TOKENS, compact: str | None = None) -> str:
    """The redacted digest input of the transcript at ``path`` (``compact``: a PostCompact payload's summary)."""
    return render(read_session(path), budget_tokens, compact)
