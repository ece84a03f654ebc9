"""The seal on a headless digest stage and on the detached reflection (``hooks/reflect_runner.py``): what
the run may read and run, in the client and in our hook. Stdlib.

A run's model reads an untrusted session (or its episodes), so it is treated as prompt-injected: it gets
what the kit hands it (the prompt) and, for the runs that need it, ``s3 recall`` / ``s3 list`` through
Bash, and nothing else. Two locks, each enough alone (tests/e2e/test_sealed_digest_e2e.py tries each
alone with the real client):

- the client's own (Claude Code 2.1.197, from its ``--help`` and its code, each tried against it):
  ``--tools`` sets the built-in tools that exist in the run (``""``: none; else ``Bash`` only: no Read,
  Glob, Grep, WebFetch, Agent ...: a call to one is "No such tool available"); ``--allowedTools
  "Bash(s3 recall:*)"`` refuses any other command, compound ones (``;``, ``&&``, ``$(...)``, redirections)
  included, but not ``s3 recall --queries FILE``; ``--setting-sources ""`` loads none of the user's,
  project's or local settings (else their ``permissions.allow`` would widen the run, their
  ``disableAllHooks`` would switch our hook off, and their MCP servers and CLAUDE.md would load), only
  ours (``--settings``) and an administrator's managed policy, which nothing skips; ``--strict-mcp-config``
  with an empty ``--mcp-config`` keeps out every MCP server but the flag's (none), claude.ai's connectors
  too, which a logged-in client fetches whatever the setting sources; ``--permission-mode dontAsk``
  (refuse without asking) is braces on the belt: ``-p`` refuses what it would ask anyway;
- our PreToolUse hook on every tool (``matcher "*"``, :mod:`.seal_gate`), which denies all but an exact
  ``s3 recall ...`` / ``s3 list ...`` with listed options, fails closed, and never answers "allow" (which
  would bypass the client's rules).

The run's settings also switch Claude Code's auto memory off (it would read and write
``~/.claude/projects/<cwd>/memory``) and carry over from the user's settings only how to reach and log in
to the model (:data:`CARRIED`). The run's folder is a fresh empty one (``headless.run``), never the
user's project: Claude Code lets a run read its own folder's transcripts under ``~/.claude/projects``
without asking, so a run in the project could ``cat`` the session's raw transcript past the client's
rules. No ``--add-dir`` is given.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

GATE = Path(__file__).with_name("seal_gate.py")
NO_MCP = json.dumps({"mcpServers": {}})
# the user's settings keys that say how the client reaches and authenticates to the model; nothing else
# of theirs reaches a sealed run
CARRIED = ("env", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "gcpAuthRefresh",
           "forceLoginMethod", "forceLoginOrgUUID")
HOOK_TIMEOUT = 30  # seconds; the gate takes milliseconds


def gate_command(s3: Sequence[str], python: str | None = None) -> str:
    """The hook's shell command: the gate with the stage's subcommands; any exit but 0 becomes 2 (deny)."""
    return shlex.join([python or sys.executable, "-I", "-S", str(GATE), *s3]) + " || exit 2"


def settings(s3: Sequence[str], python: str | None = None) -> dict[str, Any]:
    """The run's ``--settings``: the gate on every tool call, no auto memory, the user's way in to the model."""
    out = {k: v for k, v in user_settings().items() if k in CARRIED}
    out.update(autoMemoryEnabled=False, hooks={"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": gate_command(s3, python), "timeout": HOOK_TIMEOUT}]}]})
    return out


def client_args(s3: Sequence[str]) -> list[str]:
    """The client's own restrictions for a stage that may run ``s3 <each of s3>`` (none: no tool at all)."""
    out = ["--tools", "Bash" if s3 else "", "--permission-mode", "dontAsk",
           "--strict-mcp-config", "--mcp-config", NO_MCP, "--setting-sources", ""]
    if s3:
        out += ["--allowedTools", ",".join(f"Bash(s3 {c}:*)" for c in s3)]
    return out


def args(s3: Sequence[str], python: str | None = None) -> list[str]:
    """Both locks: the client's restrictions and our hook."""
    return client_args(s3) + ["--settings", json.dumps(settings(s3, python))]


def user_settings() -> dict[str, Any]:
    """The user's Claude Code settings (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``); {} when unreadable."""
    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    try:
        data = json.loads((base / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def s3_on_path(home: Path, s3: str | None = None) -> str | None:
    """A sealed run's ``s3 recall`` / ``s3 list`` reach, through Bash, whichever ``s3`` comes first on PATH,
    and a detached process's PATH may not hold the launcher (``~/.local/bin``): put the kit's own first on
    this process's PATH, which its runs inherit. That is ``s3`` when it names a program called ``s3`` (the
    one that applies the run's answer), else the one beside this Python (the kit's venv), else the home's
    venv's. Returns its folder (None: none found, PATH unchanged)."""
    named = [Path(s3).absolute().parent] if s3 and Path(s3).name == "s3" else []
    for d in (*named, Path(sys.executable).parent, home / "venv" / "bin"):
        if os.access(d / "s3", os.X_OK):
            os.environ["PATH"] = os.pathsep.join(x for x in (str(d), os.environ.get("PATH")) if x)
            return str(d)
    return None
