"""The Python half of the PreToolUse hook: read the payload, decide, log, answer.

Protocol (Claude Code 2.1): the answer is JSON on stdout with exit 0:
``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"|"ask",
"permissionDecisionReason": "..."}}``; an allowed call gets no output at all. This module never
exits non-zero and never prints a traceback: an internal error or a time-out (3 s) becomes ``ask``.
"""

from __future__ import annotations

import json
import os
import sys

from .. import paths

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from typing import Any

PREFIX = "Sophia guardian: "
PENDING_LOG: list[tuple[str, dict[str, Any]]] = []  # written after the answer is out (see write_log)
TIMEOUT_S = 3.0


def decide(payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """The guardian's verdict on one PreToolUse payload (before the mode is applied)."""
    from .analyze import analyze_tool
    from .config import load

    settings = load(paths.home_str(env))
    raw_tool = payload.get("tool_name")
    tool: str = raw_tool if isinstance(raw_tool, str) else ""
    raw_in = payload.get("tool_input")
    tin: dict[str, Any] = raw_in if isinstance(raw_in, dict) else {}
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else env.get("PWD")
    subject = _subject(tool, tin)
    out: dict[str, Any] = {"tool": tool, "subject": subject, "mode": settings.mode, "notes": settings.notes}
    for pat in settings.deny:
        if subject and pat.search(subject):
            out.update(decision="deny", rule="config_deny",
                       reason=f"this matches the guardian.deny pattern {pat.pattern!r} in your Sophia config.")
            return out
    for pat in settings.allow:
        if subject and pat.search(subject):
            out.update(decision="allow", rule="config_allow", reason=f"allowed by guardian.allow {pat.pattern!r}")
            return out
    d = analyze_tool(tool, tin, cwd, env, settings.mcp_allow, settings.mcp_deny)
    top = d.top
    out.update(decision=d.level, rule=top.rule if top else "", reason=top.reason() if top else "")
    if d.findings and len(d.findings) > 1:
        out["also"] = [f.reason() for f in d.findings if f is not top][:3]
    return out


def _subject(tool: str, tin: dict[str, Any]) -> str:
    """What guardian.allow / guardian.deny patterns match: the command, the path, the URL or query, or
    an MCP tool's name."""
    if tool.startswith("mcp__"):
        return tool
    for key in ("command", "file_path", "notebook_path", "path", "url", "query", "pattern"):
        v = tin.get(key)
        if isinstance(v, str) and v:
            return v
    return ""


def emit(decision: str, reason: str, note: str = "") -> str:
    obj: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                                  "permissionDecisionReason": (PREFIX + reason)[:2000]}}
    if note:
        obj["systemMessage"] = note[:2000]
    return json.dumps(obj, ensure_ascii=False)


def _note_once(home: str, notes: list[str]) -> str:
    if not notes:
        return ""
    path = os.path.join(home, "logs", "guardian_notes.txt")
    try:
        with open(path, encoding="utf-8") as fh:
            seen = fh.read()
    except OSError:
        seen = ""
    fresh = [n for n in notes if n not in seen]
    if not fresh:
        return ""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, ("\n".join(fresh) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass
    return "Sophia guardian: " + "; ".join(fresh)


def run(raw: bytes, env: dict[str, str]) -> str:
    """Decide for a raw stdin payload; returns what to print (may be empty)."""
    if env.get("SOPHIA_GUARDIAN_TESTING") == "1":
        fault = env.get("SOPHIA_GUARDIAN_FAULT", "")
        if fault == "crash":
            raise RuntimeError("injected fault")
        if fault == "hang":
            import time

            time.sleep(30)
        if fault == "exit":
            os._exit(3)
        if fault == "garbage":
            return "this is not JSON"
    try:
        payload = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return emit("ask", "the tool call could not be read (malformed hook input), so it was not checked; "
                    "review it yourself.")
    if not isinstance(payload, dict):
        return emit("ask", "the tool call could not be read (unexpected hook input); review it yourself.")
    home = paths.home_str(env)
    res = decide(payload, env)
    note = _note_once(home, res.get("notes") or [])
    decision = res["decision"]
    mode = res["mode"]
    if decision == "allow" or mode == "off":
        return json.dumps({"systemMessage": note}) if note else ""
    from .grants import granted, subject_sha

    entry = {"decision": decision, "mode": mode, "tool": res["tool"], "rule": res["rule"], "reason": res["reason"],
             "command": res["subject"], "cwd": payload.get("cwd"), "session_id": payload.get("session_id"),
             "subject_sha": subject_sha(res["tool"], res["subject"])}
    grant = granted(home, res["tool"], res["subject"])
    if grant:
        PENDING_LOG.append((home, dict(entry, decision="allowed_once", would_have=decision)))
        msg = f"Sophia guardian: allowed by the user's s3 guardian allow-once (until {grant.get('until_iso')})."
        return json.dumps({"systemMessage": (note + " " if note else "") + msg})  # Claude Code's own rules still apply
    PENDING_LOG.append((home, entry))
    if mode == "warn":
        msg = f"Sophia guardian (warn mode) would have {'denied' if decision == 'deny' else 'asked about'} this: " \
              f"{res['reason']}"
        return json.dumps({"systemMessage": (note + " " if note else "") + msg})
    return emit(decision, res["reason"], note)


def _alarm(_sig: int, _frame: object) -> None:
    raise TimeoutError("guardian analysis timed out")


def answer(raw: bytes | None, env: dict[str, str]) -> str:
    """run() under the time limit, with every failure turned into an ``ask``: what the hook prints.
    ``raw`` None reads the payload from stdin (within the time limit). Shared by the one-shot process
    (main) and the resident analyzer (resident.py), so both answer alike."""
    try:
        import signal

        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, float(env.get("SOPHIA_GUARDIAN_TIMEOUT") or TIMEOUT_S))
    except (ValueError, OSError, AttributeError):
        pass
    try:
        out = run(sys.stdin.buffer.read() if raw is None else raw, env)
    except TimeoutError:
        out = emit("ask", "the safety analysis of this call timed out, so it was not checked; review it yourself.")
    except Exception as exc:
        out = emit("ask", f"the safety analyzer failed ({type(exc).__name__}), so this call was not checked; "
                   "review it yourself.")
    finally:
        try:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
        except (ValueError, OSError, AttributeError):
            pass
    return out


def main() -> int:
    env = dict(os.environ)
    env["SOPHIA_HOME"] = paths.home_str(env)  # resolved once: the config, the log and the analyzer's zones agree
    out = answer(None, env)
    if out:
        sys.stdout.write(out + "\n")
    sys.stdout.flush()
    if PENDING_LOG:
        write_log(detach=env.get("SOPHIA_GUARDIAN_SYNC_LOG") != "1")
    return 0


def write_log(detach: bool, *, resident: bool = False) -> None:
    """Append the pending deny/ask records. Redaction compiles many regexes (~12 ms), so by default
    the answer goes out first and a detached child (own session, stdio on /dev/null) writes the log:
    the hook returns without waiting for it. If fork fails, the log is written in-process. When an ask
    was marked for a tier-3 audit, the writer then wakes :data:`AUDITS`: a detached writer becomes it;
    an in-process one (``SOPHIA_GUARDIAN_SYNC_LOG``) waits for it; the ``resident`` analyzer starts it
    and goes on (it must never become it)."""
    if detach:
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid > 0:
            return
        if pid == 0:
            try:
                os.setsid()
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):  # the hook's stdout pipe must close when the hook exits
                    os.dup2(null, fd)
                home = _write_pending()
                if home:
                    _become_audits(home)
            finally:
                os._exit(0)
    home = _write_pending()
    if home:  # never after a failed fork (that hook must not wait)
        _spawn_audits(home, wait=not resident)


# The entry point that turns the log's marked asks into audit jobs and starts the digest worker: the
# learning side pulls them (sophia.learning.audits); the guardian only names the file it execs.
AUDITS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hooks", "guardian_audit.py")


def _become_audits(home: str) -> None:
    """Become ``python -I -S AUDITS`` (its output on /dev/null: the answer is out already). Any failure is
    silent: the worker's start and the next session end pull the same log lines."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execve(sys.executable, [sys.executable, "-I", "-S", AUDITS], dict(os.environ, SOPHIA_HOME=home))
    except OSError:
        pass


def _spawn_audits(home: str, wait: bool) -> None:
    """Run AUDITS in a child of this process: waited for (``wait``), or left to run on its own (a
    grandchild: nothing for this process to reap)."""
    try:
        pid = os.fork()
    except OSError:
        return
    if pid == 0:
        try:
            os.setsid()
            if wait or os.fork() == 0:
                _become_audits(home)
        finally:
            os._exit(0)
    try:
        os.waitpid(pid, 0)  # the audit itself (wait) or the child that only forked it
    except OSError:
        pass


def _write_pending() -> str | None:
    """Log the pending records; the home of one marked for a tier-3 audit (None: none was)."""
    from .log import record

    marked = None
    for home, entry in PENDING_LOG:
        try:
            if record(home, entry):
                marked = home
        except Exception:  # noqa: BLE001 - the log is best effort; the decision already stands
            pass
    PENDING_LOG.clear()
    return marked
