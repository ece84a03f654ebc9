"""What one line of a Claude Code transcript holds, read defensively. Standard library only.
A line of a Codex session file is read as the Claude Code entries it stands for (:func:`entries`).

The transcript (JSONL at a hook's ``transcript_path``, or a file under ``~/.claude/projects``) is an
internal format that changes between client versions, so these readers keep only what they recognise
and never raise on odd input. Two readers build on them: the hooks' incremental reader
(``lib/sophia/hooks/transcript.py``, every Stop) and the digest's condenser
(``lib/sophia/learning/condense.py``, a whole file). Both take their tool calls from here, paired by
``tool_use_id`` into actions shaped as the PostToolUse buffer's lines (``hooks/log_action.sh``), so a
session with no buffer still yields the same kind of actions.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

from . import codex_rollout, evidence

KNOWN_TYPES = frozenset({
    "user", "assistant", "summary", "system", "attachment", "queue-operation", "last-prompt",
    "file-history-snapshot", "progress", "custom-title", "tag",
})
FILE_KEYS = ("file_path", "notebook_path")
RESULT_HEAD, RESULT_TAIL = 2000, 4000  # what is kept of a long tool result to judge it

_NOT_PROMPT_PREFIXES = (
    "<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
    "<local-command-stderr>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
    "<bash-stderr>", "caveat:", "[request interrupted", "this session is being continued from a previous",
    "<user-prompt-submit-hook>", "<task-notification>",
)
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
_EXIT = re.compile(r"(?:Error: )?Exit code (\d{1,3})\b")
# the buffer's rule for a Bash summary (hooks/log_action.sh): at most three words, each on a strict
# whitelist, stopping at the first that is not, so a token, an assignment or a URL cannot get through
_FIRST_WORD = re.compile(r"[a-z][a-z0-9._+-]{0,23}")
_NEXT_WORD = re.compile(r"[a-z][a-z-]{0,15}")
_NAME = re.compile(r"[A-Za-z0-9_:-]{1,64}")
_CD = re.compile(r"\s*cd\s+[^;&|]*(?:&&|;)")  # `cd DIR && make`: summarised by `make`, as the buffer does


def parse_line(raw: bytes | str) -> dict[str, Any] | None:
    """One line as a dict, or ``None`` when it is not a JSON object."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """A parsed line as Claude Code entries: itself, or what a line of a Codex session file stands for
    (:mod:`sophia.codex_rollout`), so every reader takes both clients' files."""
    if codex_rollout.is_rollout_line(obj):
        return codex_rollout.entries(obj)
    return [obj]


def clean_prompt(text: str) -> str | None:
    """The user's own words, or ``None`` for command echoes, caveats, reminders, interruptions."""
    if not isinstance(text, str):
        return None
    t = _REMINDER.sub("", text).strip()
    if not t:
        return None
    low = t[:80].lower()
    if low.startswith(_NOT_PROMPT_PREFIXES):
        return None
    return t


def block_text(content: Any) -> str:
    """The text of a message's content: a string, or the ``text`` blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def blocks(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The content blocks of a user or assistant entry (a plain string reads as one text block)."""
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def compact_summary(obj: dict[str, Any]) -> str | None:
    """The summary a compaction left (a user entry marked ``isCompactSummary``), else ``None``."""
    if obj.get("type") != "user" or obj.get("isCompactSummary") is not True:
        return None
    text = block_text((obj.get("message") or {}).get("content") if isinstance(obj.get("message"), dict) else None)
    return text.strip() or None


def tool_calls(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant entry's tool calls: ``{"id", "tool", "input"}`` each."""
    out = []
    for b in blocks(obj):
        if b.get("type") == "tool_use" and isinstance(b.get("name"), str) and isinstance(b.get("id"), str):
            inp = b.get("input")
            out.append({"id": b["id"], "tool": b["name"][:100], "input": inp if isinstance(inp, dict) else {}})
    return out


def tool_results(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """A user entry's tool results: ``{"id", "error", "text", "interrupted"}`` each (``error``: the client
    reported the call failed; ``text``: what it answered, its head and tail when long: enough for
    :func:`sophia.evidence.judge`)."""
    extra = obj.get("toolUseResult")
    interrupted = isinstance(extra, dict) and extra.get("interrupted") is True
    out = []
    for b in blocks(obj):
        if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
            out.append({"id": b["tool_use_id"], "error": b.get("is_error") is True or interrupted,
                        "interrupted": interrupted, "text": result_text(b.get("content"))})
    return out


def result_text(content: Any, head: int = RESULT_HEAD, tail: int = RESULT_TAIL) -> str:
    """A tool result's text: all of it, or its first ``head`` and last ``tail`` characters (errors sit at the
    start, a test runner's summary at the end)."""
    if isinstance(content, list):
        text = "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    else:
        text = content if isinstance(content, str) else ""
    return text if len(text) <= head + tail else f"{text[:head]}\n...\n{text[-tail:]}"


def bash_summary(command: str) -> str:
    """The first words of a command that pass the buffer's whitelist (see ``hooks/log_action.sh``)."""
    words: list[str] = []
    command = command[:512]
    for _ in range(3):
        m = _CD.match(command)
        if m is None:
            break
        command = command[m.end():]
    for w in command.split():
        if len(words) == 3:
            break
        if not words:
            w = w.rsplit("/", 1)[-1]
        if not (_NEXT_WORD if words else _FIRST_WORD).fullmatch(w):
            break
        words.append(w)
    return " ".join(words)


def call_fields(tool: str, inp: dict[str, Any]) -> dict[str, str]:
    """``summary`` and ``file`` of a call, as the buffer writes them."""
    out: dict[str, str] = {}
    if tool == "Bash" and isinstance(inp.get("command"), str):
        out["summary"] = bash_summary(inp["command"])
    elif tool in ("Write", "Edit", "MultiEdit", "Read", "NotebookEdit"):
        f = next((inp[k] for k in FILE_KEYS if isinstance(inp.get(k), str)), "")
        if 0 < len(f) <= 1024:
            out["file"] = f
    elif tool in ("Agent", "Task") and _NAME.fullmatch(str(inp.get("subagent_type", ""))):
        out["summary"] = f"agent {inp['subagent_type']}"
    elif tool == "Skill":
        name = inp.get("skill", inp.get("command"))
        if isinstance(name, str) and _NAME.fullmatch(name):
            out["summary"] = f"skill {name}"
    return {k: v for k, v in out.items() if v}


def call_record(call: dict[str, Any]) -> dict[str, Any]:
    """What an action keeps of a tool call (never its input: a Write holds a whole file).

    ``args_hash`` is a CRC-32 of the input's canonical JSON (the buffer's is ``cksum`` of the raw text):
    equal within one source, not across the two. A Bash call also keeps its :func:`evidence.shape`
    (program names and flags only), to judge its result."""
    rec: dict[str, Any] = {"id": call["id"], "tool": call["tool"], **call_fields(call["tool"], call["input"])}
    if call["input"]:
        canon = json.dumps(call["input"], sort_keys=True, ensure_ascii=False, default=str)
        rec["args_hash"] = str(zlib.crc32(canon.encode("utf-8", "replace")))
    if call["tool"] == "Bash" and isinstance(call["input"].get("command"), str):
        rec["shape"] = evidence.shape(call["input"]["command"],
                                      background=call["input"].get("run_in_background") is True)
    return rec


# the outcome an action records for each verdict: the buffer's ok/error, plus unknown and skipped
ACTION_OUTCOME = {evidence.OK: "ok", evidence.FAILED: "error", evidence.UNKNOWN: "unknown",
                  evidence.CANCELLED: "skipped", evidence.DENIED: "skipped", evidence.INTERRUPTED: "skipped"}


def judge_result(record: dict[str, Any], result: dict[str, Any]) -> evidence.Evidence:
    """The evidence on a paired call: a Bash call's by its shape and output, any other tool's by the
    client's status (a cancelled, denied or interrupted call of any tool never ran)."""
    text, error, cut = result.get("text") or "", bool(result["error"]), bool(result.get("interrupted"))
    if record.get("tool") == "Bash":
        return evidence.judge(record.get("shape") or {}, text, is_error=error, interrupted=cut)
    stopped = evidence.not_run(text, cut)
    if stopped:
        return evidence.Evidence(stopped, "never ran")
    return evidence.Evidence(evidence.FAILED if error else evidence.OK, "the client's status")


def action(record: dict[str, Any], result: dict[str, Any], ts: Any, session: Any = None,
           ev: evidence.Evidence | None = None) -> dict[str, Any]:
    """One buffer-shaped action (the keys ``hooks/log_action.sh`` writes) from a call's record and result;
    ``outcome`` is the judged one (:data:`ACTION_OUTCOME`; ``ev``: the evidence when already judged),
    ``verdict`` says which when it is not plain."""
    failed = bool(result["error"])
    ev = ev or judge_result(record, result)
    act: dict[str, Any] = {"ts": ts if isinstance(ts, str) else None,
                           "session": session if isinstance(session, str) else None, "tool": record["tool"],
                           "event": "PostToolUseFailure" if failed else "PostToolUse",
                           "outcome": ACTION_OUTCOME[ev.verdict], "id": record["id"]}
    if ev.verdict not in (evidence.OK, evidence.FAILED):
        act["verdict"] = ev.verdict
    if record["tool"] == "Bash":
        m = _EXIT.match(result["text"].lstrip()) if failed else None
        act["exit"] = int(m.group(1)) if m else (None if failed else 0)
    for key in ("summary", "file", "args_hash"):
        act[key] = record.get(key)
    return {k: v for k, v in act.items() if v is not None}
