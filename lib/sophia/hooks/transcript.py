"""Read a Claude Code transcript defensively and incrementally. Stdlib only.

The transcript (JSONL at ``transcript_path``) is an internal format that changes between
versions, so this reader keeps only what it recognises and never raises on odd input:
unknown line types are counted and skipped, a line that is not JSON is counted and
skipped, a truncated last line waits for the next call (or is tried once at the end of
the session), a missing or unreadable file leaves the state as it was with a note.

Stop fires after every assistant turn, so the reader is incremental: the state (a plain
dict, persisted by the caller) remembers the byte offset already read. A huge backlog is
read head and tail only (the goal sits at the start, the outcome at the end).
"""

from __future__ import annotations

import json
import os
from typing import Any

from .. import codex_rollout
from ..redact import redact_head
from ..transcript_entries import (
    KNOWN_TYPES,
    call_record,
    clean_prompt,
    judge_result,
    tool_calls,
    tool_results,
)
from ..transcript_entries import action as _action
from ..transcript_entries import block_text as _block_text

MAX_READ = 8 * 1024 * 1024  # more new bytes than this: read the head and the tail only
HEAD_READ = 1024 * 1024
TAIL_READ = 4 * 1024 * 1024
KEEP_PROMPTS = 10
KEEP_FIRST_PROMPTS = 3  # the session's task is often not its first prompt ("load claude.md")
KEEP_TEXTS = 5
KEEP_ERRORS = 50
PROMPT_CHARS = 4000
TEXT_CHARS = 2000
KEEP_ACTIONS_HEAD = 50  # actions derived from tool calls: the first 50 and the last 150, as an episode keeps
KEEP_ACTIONS_TAIL = 150
KEEP_PENDING = 64  # tool calls still waiting for their result
KEEP_VERDICTS = 200  # judged outcomes that differ from the client's status, by call id
CHECKS = ("test", "build", "lint")  # the playbook classes whose run verifies the work
PROOF_CHARS = 160


def new_state(path: str | None = None) -> dict[str, Any]:
    return {
        "path": path, "offset": 0, "first_prompt": None, "prompts_total": 0, "recent_prompts": [],
        "assistant_texts": [], "tool_errors": {}, "tool_uses": 0, "first_ts": None, "last_ts": None,
        "git_branch": None, "cwd": None, "sidechain_lines": 0, "compactions": 0, "summaries": [],
        "unknown_types": 0, "bad_lines": 0, "skipped_bytes": 0, "note": None,
        "actions": [], "actions_total": 0, "pending_calls": {}, "verdicts": {},
        "interrupts": 0, "tail": None, "first_prompts": [],  # tail: what the main chain last held (prompt/interrupt/text/call/result)
        "last_check": None,  # the last test/build/lint run: id, check, command, outcome, proof (redacted)
        "client": None,  # "codex" once a line of a Codex session file was read
    }


def _push(lst: list[Any], item: Any, keep: int) -> None:
    lst.append(item)
    del lst[:-keep]


def _stamp(st: dict[str, Any], ts: Any) -> None:
    if not isinstance(ts, str) or not ts:
        return
    if st["first_ts"] is None or ts < st["first_ts"]:
        st["first_ts"] = ts
    if st["last_ts"] is None or ts > st["last_ts"]:
        st["last_ts"] = ts


def _user(st: dict[str, Any], obj: dict[str, Any], new_prompts: list[str]) -> None:
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    texts = _user_texts(st, content)
    if not texts or obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isVisibleInTranscriptOnly"):
        return
    prompt = clean_prompt("\n".join(texts))
    if prompt is None:
        if texts[0].lstrip().startswith("[Request interrupted"):
            st["interrupts"] += 1
            st["tail"] = "interrupt"
        return
    prompt = redact_head(prompt, PROMPT_CHARS)  # state files live on disk: redact at capture
    st["prompts_total"] += 1
    st["tail"] = "prompt"
    if st["first_prompt"] is None:
        st["first_prompt"] = prompt
    if len(st["first_prompts"]) < KEEP_FIRST_PROMPTS:
        st["first_prompts"].append(prompt)
    _push(st["recent_prompts"], prompt, KEEP_PROMPTS)
    new_prompts.append(prompt)


def _user_texts(st: dict[str, Any], content: Any) -> list[str]:
    """The text of a user message; its failed tool results go to ``tool_errors`` on the way."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    if not isinstance(content, list):
        return texts
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result" and block.get("is_error") is True:
            _tool_error(st, block)
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return texts


def _tool_error(st: dict[str, Any], block: dict[str, Any]) -> None:
    """Keep a failed tool result (redacted, the last KEEP_ERRORS) under its tool_use_id."""
    tid = block.get("tool_use_id")
    if isinstance(tid, str) and tid:
        _keep_error(st, tid, _block_text(block.get("content")))


def _keep_error(st: dict[str, Any], tid: str, err: str) -> None:
    errors = st["tool_errors"]
    errors[tid] = redact_head(err, 500)
    while len(errors) > KEEP_ERRORS:
        errors.pop(next(iter(errors)))


def _assistant(st: dict[str, Any], obj: dict[str, Any]) -> None:
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            _push(st["assistant_texts"], redact_head(block["text"].strip(), TEXT_CHARS), KEEP_TEXTS)
            st["tail"] = "text"
        elif block.get("type") == "tool_use":
            st["tool_uses"] += 1


def feed_line(st: dict[str, Any], raw: bytes | str, new_prompts: list[str]) -> None:
    """Fold one transcript line into the state (never raises on bad input); a line of a Codex session
    file is folded in as the Claude Code entries it stands for."""
    obj = _parsed(st, raw)
    if obj is None:
        return
    if codex_rollout.is_rollout_line(obj):
        st["client"] = "codex"
        for entry in codex_rollout.entries(obj):
            _feed_entry(st, entry, new_prompts)
        return
    if obj.get("type") not in KNOWN_TYPES:
        st["unknown_types"] += 1
        return
    _feed_entry(st, obj, new_prompts)


def _feed_entry(st: dict[str, Any], obj: dict[str, Any], new_prompts: list[str]) -> None:
    kind = obj["type"]
    _context(st, obj)
    if kind in ("summary", "system"):
        _compaction(st, kind, obj)
    elif kind not in ("user", "assistant"):
        return
    elif obj.get("isSidechain") is True:
        st["sidechain_lines"] += 1
    elif kind == "user":
        _user(st, obj, new_prompts)
        _track_actions(st, obj)
    else:
        _assistant(st, obj)
        _track_actions(st, obj)


def _parsed(st: dict[str, Any], raw: bytes | str) -> dict[str, Any] | None:
    """The line as a JSON object; None (counted as bad) otherwise."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        st["bad_lines"] += 1
        return None
    if not isinstance(obj, dict):
        st["bad_lines"] += 1
        return None
    return obj


def _context(st: dict[str, Any], obj: dict[str, Any]) -> None:
    """Timestamps, the git branch (the latest) and the working directory (the first)."""
    _stamp(st, obj.get("timestamp"))
    if isinstance(obj.get("gitBranch"), str) and obj["gitBranch"]:
        st["git_branch"] = obj["gitBranch"]
    if isinstance(obj.get("cwd"), str) and obj["cwd"] and not st["cwd"]:
        st["cwd"] = obj["cwd"]


def _compaction(st: dict[str, Any], kind: str, obj: dict[str, Any]) -> None:
    """A summary line or a compact_boundary system line: the context was compacted."""
    if kind == "summary":
        st["compactions"] += 1
        if isinstance(obj.get("summary"), str):
            _push(st["summaries"], redact_head(obj["summary"], 500), 3)
    elif obj.get("subtype") == "compact_boundary":
        st["compactions"] += 1


def _track_actions(st: dict[str, Any], obj: dict[str, Any]) -> None:
    """Pair tool calls with their results into buffer-shaped actions (the episode's when there is no buffer)."""
    pending = st["pending_calls"]
    for call in tool_calls(obj) if obj.get("type") == "assistant" else ():
        pending[call["id"]] = rec = call_record(call)
        shape = rec.get("shape")  # a shell call's; one that only reads runs no check
        check = check_run(call["input"].get("command")) if shape and not shape.get("reader") else None
        if check:
            rec["check"], rec["check_command"] = check
        st["tail"] = "call"
        while len(pending) > KEEP_PENDING:
            pending.pop(next(iter(pending)))
    for result in tool_results(obj) if obj.get("type") == "user" else ():
        call = pending.pop(result["id"], None)
        if call is None:
            continue
        st["tail"] = "result"
        acts = st["actions"]
        ev = judge_result(call, result)
        act = _action(call, result, obj.get("timestamp"), obj.get("sessionId"), ev)
        acts.append(act)
        _judged(st, act, bool(result["error"]), ev.proof)
        if call.get("check") and act["outcome"] != "skipped":
            st["last_check"] = {"id": act["id"], "check": call["check"], "command": call.get("check_command"),
                                "outcome": act["outcome"], "proof": [redact_head(p, PROOF_CHARS) for p in ev.proof]}
        st["actions_total"] += 1
        if len(acts) > KEEP_ACTIONS_HEAD + KEEP_ACTIONS_TAIL:
            del acts[KEEP_ACTIONS_HEAD]


def check_run(command: Any) -> tuple[str, str] | None:
    """(test, build or lint; the command's key, redacted, as ``npm test``) when a shell command runs the
    project's checks (the playbook's classifier, ``sophia.learning.commands``, on the command it is run
    for), else None."""
    if not isinstance(command, str) or not command.strip():
        return None
    from ..learning import commands  # only for a shell call that is not read-only

    try:
        main = commands.Command(command, True).main
        cls = commands.classify(main) if main else None
        return (cls, redact_head(commands.command_key(main), 80)) if cls in CHECKS else None
    except (ValueError, IndexError):  # a command the classifier cannot take apart is no check
        return None


def _judged(st: dict[str, Any], act: dict[str, Any], client_error: bool, proof: list[str]) -> None:
    """Where the evidence disagrees with the client's status (a masked failure, a cancelled call), keep
    the judged outcome by call id: the episode overlays it on the PostToolUse buffer's; a masked
    failure's proof lines become its error text (redacted)."""
    if act["outcome"] == "error" and not client_error and proof:
        _keep_error(st, act["id"], "; ".join(proof))
    if act["outcome"] != ("error" if client_error else "ok"):
        judged = st["verdicts"]
        judged[act["id"]] = {k: act[k] for k in ("outcome", "verdict") if k in act}
        while len(judged) > KEEP_VERDICTS:
            judged.pop(next(iter(judged)))


def _feed_block(st: dict[str, Any], data: bytes, new_prompts: list[str]) -> None:
    for line in data.split(b"\n"):
        if line.strip():
            feed_line(st, line, new_prompts)


def update(st: dict[str, Any] | None, path: str | None, *, final: bool = False) -> tuple[dict[str, Any], list[str]]:
    """Read what was appended to ``path`` since the last call. Returns (state, new prompts).

    ``final``: also try the last line even without its newline (the session has ended).
    """
    if st is None or not isinstance(st, dict) or st.get("path") != path:
        st = new_state(path)
    else:
        base = new_state(path)
        base.update(st)
        st = base
    new_prompts: list[str] = []
    if not path:
        st["note"] = "no transcript path"
        return st, new_prompts
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        st["note"] = f"transcript unreadable: {exc.strerror or exc}"
        return st, new_prompts
    try:
        size = os.fstat(fd).st_size
        offset = int(st.get("offset") or 0)
        if size < offset:  # rewritten or truncated: start again
            st = new_state(path)
            offset = 0
        _read_appended(st, fd, size, offset, final, new_prompts)
    except OSError as exc:
        st["note"] = f"transcript unreadable: {exc.strerror or exc}"
    finally:
        os.close(fd)
    return st, new_prompts


def _read_appended(st: dict[str, Any], fd: int, size: int, offset: int, final: bool, new_prompts: list[str]) -> None:
    """Fold the bytes from ``offset`` to ``size`` into the state and move the offset past the last
    complete line (past everything when ``final``)."""
    todo = size - offset
    if todo <= 0:
        st["note"] = None
        return
    if todo > MAX_READ:
        chunk, chunk_start = _read_head_and_tail(st, fd, size, offset, todo, new_prompts)
    else:
        chunk, chunk_start = _read_all(fd, offset, todo), offset
    cut = chunk.rfind(b"\n")
    complete, rest = (chunk[:cut], chunk[cut + 1:]) if cut >= 0 else (b"", chunk)
    _feed_block(st, complete, new_prompts)
    consumed = chunk_start + (cut + 1 if cut >= 0 else 0)
    if final and rest.strip():
        feed_line(st, rest, new_prompts)
        consumed = chunk_start + len(chunk)
    st["offset"] = consumed
    st["note"] = None


def _read_all(fd: int, offset: int, todo: int) -> bytes:
    chunk = b""
    while len(chunk) < todo:
        part = os.pread(fd, todo - len(chunk), offset + len(chunk))
        if not part:
            break
        chunk += part
    return chunk


def _read_head_and_tail(st: dict[str, Any], fd: int, size: int, offset: int, todo: int,
                        new_prompts: list[str]) -> tuple[bytes, int]:
    """A huge backlog: fold in its head (only while the first prompt is unknown) and return its tail
    from the first line start, with where that tail starts; the middle is counted as skipped."""
    if st["first_prompt"] is None:
        head = os.pread(fd, HEAD_READ, offset)
        cut = head.rfind(b"\n")
        if cut > 0:
            _feed_block(st, head[:cut], new_prompts)
    tail = os.pread(fd, TAIL_READ, size - TAIL_READ)
    nl = tail.find(b"\n")
    tail = tail[nl + 1:] if nl >= 0 else b""
    st["skipped_bytes"] += todo - len(tail)
    return tail, size - len(tail)
