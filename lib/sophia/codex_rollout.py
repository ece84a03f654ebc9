"""Codex CLI's session files ("rollouts") read as Claude Code transcript entries. Standard library only.

A rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-...-<session id>.jsonl``, a Codex hook's
``transcript_path``) holds one ``{"timestamp", "type", "payload"}`` object a line. :func:`entries`
turns one into the Claude Code entries the kit's transcript readers already know (a user prompt, an
assistant text, a ``tool_use`` block, a ``tool_result`` block, a compaction summary), so the hooks'
incremental reader, the digest's condensed input and the zero-token learners read both clients with
one code path (``sophia.transcript_entries.entries``).

What is read (docs: ``response_item`` lines are common to 0.58, 0.118 and 0.171; unknown types and
``event_msg`` duplicates are skipped):
- ``session_meta`` / ``turn_context``: the working directory, the session id, the git branch;
- ``message``: the user's prompts (not the AGENTS.md, environment and permission wrappers Codex adds,
  nor developer messages: those carry the hooks' own context), the assistant's text;
- ``function_call``: ``exec_command`` (``cmd``), ``shell`` (an argv) and ``shell_command`` as ``Bash``;
  an MCP call (``namespace`` ``mcp__SERVER``) as ``mcp__SERVER__TOOL``; others under their own name;
- ``custom_tool_call`` ``apply_patch``: ``Write`` (a patch that only adds files) or ``Edit``, on the
  first file its ``*** ... File:`` headers name;
- ``function_call_output`` / ``custom_tool_call_output``: the output, failed when the exit code
  (``Process exited with code N``, ``Exit code: N``, 0.58's JSON ``metadata.exit_code``) is not 0 or a
  hook blocked the call; a failure's text starts ``Exit code N`` as Claude Code's does;
- ``compacted``: a summary; ``event_msg`` ``turn_aborted``: the user's interruption.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Entry = dict[str, Any]

TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted", "world_state",
                   "token_usage_record"})
SHELL_TOOLS = frozenset({"exec_command", "shell", "shell_command", "container.exec", "local_shell"})
# what Codex wraps around the user's words in a user message: not a prompt
WRAPPERS = ("<environment_context>", "# agents.md instructions", "<user_instructions>", "<instructions>",
            "<permissions instructions>", "<turn_aborted>", "<user_shell_command>", "<skills_instructions>",
            "<apps_instructions>", "<collaboration_mode>", "<subagent_notification>")
IDE_REQUEST = "## My request for Codex:"
_EXIT = re.compile(r"(?:Process exited with code|Exit code:?) (-?\d{1,3})\b")
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$", re.M)
BLOCKED = "blocked by PreToolUse hook"


def is_rollout_line(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("type") in TYPES and isinstance(obj.get("payload"), dict)


def entries(obj: Entry) -> list[Entry]:
    """The Claude Code entries one rollout line stands for ([] for what the readers do not need)."""
    kind, p, ts = obj["type"], obj["payload"], obj.get("timestamp")
    if kind in ("session_meta", "turn_context"):
        return _context(p, ts)
    if kind == "compacted":
        text = p.get("message")
        return [{"type": "summary", "summary": text, "timestamp": ts}] if isinstance(text, str) and text else []
    if kind == "event_msg":
        if p.get("type") == "turn_aborted":
            return [_msg("user", [{"type": "text", "text": "[Request interrupted by user]"}], ts)]
        return []
    if kind != "response_item":
        return []
    return _ITEMS.get(str(p.get("type")), _nothing)(p, ts)


def _nothing(p: Entry, ts: Any) -> list[Entry]:
    return []


def _msg(role: str, content: list[Entry], ts: Any) -> Entry:
    return {"type": role, "timestamp": ts, "message": {"role": role, "content": content}}


def _context(p: Entry, ts: Any) -> list[Entry]:
    out: Entry = {"type": "system", "subtype": "codex_context", "timestamp": ts}
    if isinstance(p.get("cwd"), str) and p["cwd"]:
        out["cwd"] = p["cwd"]
    sid = p.get("id") if isinstance(p.get("id"), str) else p.get("session_id")
    if isinstance(sid, str) and sid:
        out["sessionId"] = sid
    git = p.get("git")
    if isinstance(git, dict) and isinstance(git.get("branch"), str):
        out["gitBranch"] = git["branch"]
    if isinstance(p.get("cli_version"), str):
        out["version"] = f"codex {p['cli_version']}"
    return [out]


def prompt_text(text: str) -> str | None:
    """The user's own words in a Codex user message; None for the wrappers Codex adds."""
    t = text.strip()
    if not t or t[:40].lower().startswith(WRAPPERS):
        return None
    if IDE_REQUEST in t:  # the IDE extension's "# Context from my IDE setup: ... ## My request for Codex:"
        t = t.split(IDE_REQUEST, 1)[1].strip()
    return t or None


def _message(p: Entry, ts: Any) -> list[Entry]:
    role = p.get("role")
    parts: list[str] = [c["text"] for c in p.get("content") or [] if isinstance(c, dict) and isinstance(c.get("text"), str)]
    if role == "assistant":
        texts = [t for t in parts if t.strip()]
        return [_msg("assistant", [{"type": "text", "text": t} for t in texts], ts)] if texts else []
    if role != "user":
        return []  # developer and system messages: instructions and the hooks' own context
    prompts = [t for t in map(prompt_text, parts) if t]
    return [_msg("user", [{"type": "text", "text": t} for t in prompts], ts)] if prompts else []


def _args(p: Entry) -> Entry:
    raw = p.get("arguments")
    if isinstance(raw, dict):
        return raw
    try:
        v = json.loads(raw) if isinstance(raw, str) else {}
    except (ValueError, RecursionError):
        v = {}
    return v if isinstance(v, dict) else {}


def shell_command(args: Entry) -> str | None:
    """The command line of a shell call: ``cmd`` (exec_command), ``command`` as a string, or the script of
    an argv such as ``["bash", "-lc", "ls"]`` (other argvs joined)."""
    for key in ("cmd", "command"):
        v = args.get(key)
        if isinstance(v, str):
            return v
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            if len(v) >= 3 and v[-2] in ("-c", "-lc", "-Command", "/c"):
                return v[-1]
            import shlex

            return " ".join(shlex.quote(x) for x in v)
    return None


def _call(p: Entry, ts: Any) -> list[Entry]:
    name, cid = p.get("name"), p.get("call_id")
    if not isinstance(name, str) or not isinstance(cid, str):
        return []
    args = _args(p)
    ns = p.get("namespace")
    if isinstance(ns, str) and ns.startswith("mcp__"):
        tool, inp = f"{ns}__{name}", args
    elif name in SHELL_TOOLS and shell_command(args) is not None:
        tool, inp = "Bash", {"command": shell_command(args)}
    elif name == "apply_patch":
        patch = args.get("input") or args.get("patch")
        return _patch_call(cid, patch if isinstance(patch, str) else "", ts)
    else:
        tool, inp = name, args
    return [_msg("assistant", [{"type": "tool_use", "id": cid, "name": tool, "input": inp}], ts)]


def patch_files(patch: str) -> list[tuple[str, str]]:
    """(operation, path) of each file a patch names: ``Add``, ``Update`` or ``Delete``."""
    return [(m.group(1), m.group(2)) for m in _PATCH_FILE.finditer(patch or "")]


def patch_sections(patch: str) -> list[tuple[str, str, str]]:
    """(operation, path, the lines it adds) for each file a patch changes; a ``*** Move to:`` is one more
    ``Add`` of the new path with the same lines (what the guardian judges)."""
    out: list[tuple[str, str, str]] = []
    for block in re.split(r"^(?=\*\*\* (?:Add|Update|Delete) File: )", patch or "", flags=re.M):
        m = _PATCH_FILE.match(block)
        if not m:
            continue
        added = "\n".join(ln[1:] for ln in block.splitlines()[1:] if ln.startswith("+"))
        out.append((m.group(1), m.group(2), added))
        moved = re.search(r"^\*\*\* Move to: (.+?)\s*$", block, re.M)
        if moved:
            out.append(("Add", moved.group(1), added))
    return out


def _patch_call(cid: str, patch: str, ts: Any) -> list[Entry]:
    files = patch_files(patch)
    tool = "Write" if files and all(op == "Add" for op, _ in files) else "Edit"
    inp: Entry = {"file_path": files[0][1]} if files else {}
    if len(files) > 1:
        inp["other_files"] = [f for _, f in files[1:]]
    return [_msg("assistant", [{"type": "tool_use", "id": cid, "name": tool, "input": inp}], ts)]


def _custom_call(p: Entry, ts: Any) -> list[Entry]:
    cid = p.get("call_id")
    if not isinstance(cid, str):
        return []
    inp = p.get("input")
    if p.get("name") == "apply_patch":
        return _patch_call(cid, inp if isinstance(inp, str) else "", ts)
    return [_msg("assistant", [{"type": "tool_use", "id": cid, "name": str(p.get("name") or "tool"),
                                "input": inp if isinstance(inp, dict) else {"input": inp}}], ts)]


def output_result(output: Any) -> tuple[str, int | None, bool]:
    """(the output's text, its exit code when it says one, whether a hook blocked the call)."""
    code: int | None = None
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False) if output else ""
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict) and "output" in obj:  # 0.58: {"output": ..., "metadata": {"exit_code": N}}
            meta = obj.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
                code = meta["exit_code"]
            text = str(obj.get("output") or "")
    head, sep, body = text.partition("\nOutput:\n")
    if code is None:
        m = _EXIT.search(head if sep else text[:400])
        code = int(m.group(1)) if m else None
    return (body if sep else text), code, BLOCKED in text[:300]


def _output(p: Entry, ts: Any) -> list[Entry]:
    cid = p.get("call_id")
    if not isinstance(cid, str):
        return []
    text, code, blocked = output_result(p.get("output"))
    failed = blocked or (code is not None and code != 0)
    if failed and code is not None and not blocked:
        text = f"Exit code {code}\n{text}"
    return [_msg("user", [{"type": "tool_result", "tool_use_id": cid, "content": text, "is_error": failed}], ts)]


_ITEMS = {"message": _message, "function_call": _call, "custom_tool_call": _custom_call,
          "function_call_output": _output, "custom_tool_call_output": _output}
