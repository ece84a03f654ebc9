"""One headless Claude Code run that cannot recurse, and what became of it. Stdlib only.

Used by the digest worker and by the detached reflection (``hooks/reflect_runner.py``). The run
gets ``SOPHIA_HOOK_GUARD=1`` (every Sophia hook exits at once when it sees it), bounded ``--max-turns``,
``--no-session-persistence`` and ``--output-format json``, whose single JSON object carries the answer
(``result``), the cost (``total_cost_usd``) and the tokens (``usage``). What it may read and run is the
caller's ``access``: for a digest stage and the detached reflection, the seal (:mod:`.seal`), in a fresh
empty folder.

A failure is named, never silent: :func:`run` returns a :class:`Outcome` whose ``reason`` says
what went wrong in one line (no ``claude`` on PATH, not logged in, rate limited, timed out,
invalid output, an error exit).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ..redact import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

NO_CLAUDE = "no `claude` on PATH (install Claude Code or set SOPHIA_CLAUDE_BIN)"
NOT_LOGGED_IN = "claude is not logged in (run `claude` once and /login)"
RATE_LIMITED = "claude is rate limited or overloaded (will retry later)"
# lower-case fragments of what the client prints (stdout JSON ``result`` or stderr) for each failure
_LOGIN_SIGNS = ("not logged in", "please run /login", "invalid api key", "authentication_error",
                "oauth token has expired", "credit balance is too low")
_RATE_SIGNS = ("rate limit", "rate_limit", "usage limit", "overloaded", " 429", "too many requests")


class Outcome:
    """What a headless run gave. ``ok``: it ran and reported success; ``reason``: why not, one line."""

    __slots__ = ("ok", "reason", "text", "cost_usd", "usage", "returncode", "seconds", "output")

    def __init__(self, ok: bool, reason: str = "", text: str = "", cost_usd: float = 0.0,
                 usage: dict[str, Any] | None = None, returncode: int | None = None, seconds: float = 0.0,
                 output: str = "") -> None:
        self.ok, self.reason, self.text, self.cost_usd = ok, reason, text, cost_usd
        self.usage, self.returncode, self.seconds, self.output = usage or {}, returncode, seconds, output

    def tokens(self) -> int:
        """Input + output tokens, cache reads and writes included."""
        keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        return sum(int(v) for k in keys if isinstance(v := self.usage.get(k), int | float))


def find_claude() -> str | None:
    return os.environ.get("SOPHIA_CLAUDE_BIN") or shutil.which("claude")


def guarded_env(home: Path) -> dict[str, str]:
    """The run's environment: every Sophia hook it might reach exits at once."""
    return dict(os.environ, SOPHIA_HOOK_GUARD="1", SOPHIA_HOME=str(home))


def command(claude: str, prompt: str, *, max_turns: int, access: Sequence[str], model: str | None = None,
            extra: Sequence[str] = ()) -> list[str]:
    cmd = [claude, "-p", prompt,
           "--max-turns", str(max_turns),
           "--no-session-persistence",
           "--output-format", "json",
           *access]
    if model:
        cmd += ["--model", model]
    return cmd + list(extra)


def run(prompt: str, *, home: Path, access: Sequence[str], max_turns: int = 12, timeout: float = 600,
        model: str | None = None, extra: Sequence[str] = ()) -> Outcome:
    """Run ``claude -p PROMPT`` guarded, in a fresh empty private folder (mode 0700) removed afterwards:
    Claude Code lets a run read its own folder's transcripts, so it never runs in a project or the home.
    Never raises for a failure of the run itself."""
    claude = find_claude()
    if not claude:
        return Outcome(False, NO_CLAUDE)
    cmd = command(claude, prompt, max_turns=max_turns, access=access, model=model, extra=extra)
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="sophia-stage-") as where:
            proc = subprocess.run(cmd, cwd=where, env=guarded_env(home), stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(False, f"claude timed out after {timeout:g} s", seconds=time.monotonic() - t0)
    except OSError as exc:
        return Outcome(False, f"cannot run {claude}: {exc.strerror or exc}")
    out = classify(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
    out.seconds = time.monotonic() - t0
    return out


def _one_line(text: str, limit: int = 200) -> str:
    return " ".join(redact(text).split())[:limit]


def classify(returncode: int, stdout: str, stderr: str) -> Outcome:
    """Turn the client's exit code and output into an :class:`Outcome`."""
    data = _result_object(stdout)
    text = str(data.get("result") or "") if data else ""
    cost = data.get("total_cost_usd") if data else None
    usage = data.get("usage") if data and isinstance(data.get("usage"), dict) else {}
    out = Outcome(False, "", text, float(cost) if isinstance(cost, int | float) else 0.0, usage, returncode,
                  output=redact(stdout)[-4000:])
    said = f"{text}\n{stderr}\n{'' if data else stdout}".lower()
    if any(s in said for s in _LOGIN_SIGNS):
        out.reason = NOT_LOGGED_IN
    elif any(s in said for s in _RATE_SIGNS):
        out.reason = RATE_LIMITED
    elif data is None:
        tail = _one_line(stderr or stdout)
        out.reason = (f"claude exited {returncode}: {tail}" if returncode else
                      "invalid output: not the JSON of --output-format json" + (f" ({tail})" if tail else ""))
    elif data.get("is_error") or data.get("subtype", "success") != "success" or returncode:
        out.reason = f"claude run failed ({data.get('subtype') or f'exit {returncode}'}): {_one_line(text)}"
    else:
        out.ok = True
    return out


def _result_object(stdout: str) -> dict[str, Any] | None:
    """The ``type: result`` object of ``--output-format json`` (the last JSON line that is one)."""
    for chunk in [stdout, *reversed(stdout.strip().splitlines())]:
        try:
            data = json.loads(chunk)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def json_answer(text: str) -> Any:
    """The JSON object a model answered with: the whole text, a fenced ```json block, or the outermost
    ``{...}``. Raises ValueError (one line) when there is none."""
    candidates = [text.strip()]
    if "```" in text:
        for block in text.split("```")[1::2]:
            candidates.append(block.removeprefix("json").strip())
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{"): text.rindex("}") + 1])
    for c in candidates:
        try:
            data = json.loads(c)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    raise ValueError("invalid output: the answer holds no JSON object")
