"""What every Python hook needs: the payload, the config, a safe way to fail. Stdlib only.

A hook must never break the session: :func:`run` catches everything, writes one line to
``logs/hooks.log`` and at most one line to stderr, and exits 0.

Work nobody waits for (SessionEnd's fsyncs, starting its learners) goes through :func:`later`: the
resident hook runner does it once the hook's answer is out; anywhere else it is done at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from .. import config_defaults, paths

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

MAX_PAYLOAD = 32 * 1024 * 1024
LEARNER_NICE = 19  # the detached learners' CPU priority: the lowest (os.setpriority)

# what waits until the answer is out, while the resident hook runner answers (``deferred``); None elsewhere
_later: list[tuple[Callable[..., object], tuple[Any, ...]]] | None = None


def guarded() -> bool:
    """True inside a run started by a hook (reflection): every hook then does nothing."""
    return os.environ.get("SOPHIA_HOOK_GUARD") == "1"


def read_payload(stream: Any = None) -> dict[str, Any]:
    """The hook's JSON input (one object on stdin). Anything else -> ``{}``."""
    src = stream if stream is not None else sys.stdin.buffer
    raw = src.read(MAX_PAYLOAD)
    if not raw or not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def safe_session(value: Any) -> str | None:
    """A session id as a file name: only ASCII letters, digits, ``_`` and ``-`` of its first 128
    characters (None when nothing is left)."""
    if not isinstance(value, str):
        return None
    sid = "".join(c for c in value[:128] if c.isascii() and (c.isalnum() or c in "_-"))
    return sid or None


def load_config(home: Path | None = None) -> dict[str, Any]:
    """config.json with every key of ``config_defaults`` present and valid. A missing file means
    the defaults; a bad value (or a file that does not parse) means that key's default plus one
    line in ``logs/hooks.log``: a hook never fails over its config (``s3 doctor`` names the error)."""
    cfg, problems = config_defaults.load(paths.config_path(home))
    if problems:
        log("config.json: " + "; ".join(problems) + " (the hooks use the defaults there; see `s3 doctor`)", home)
    return cfg


def log(message: str, home: Path | None = None, name: str = "hooks.log") -> None:
    """Append one line to ``logs/<name>`` (best effort, never raises)."""
    try:
        from ..atomic import append_line
        from ..redact import redact
        from ..timeutil import iso

        append_line(paths.logs_dir(home) / name, f"{iso()} {redact(message)[:2000]}")
    except Exception:  # noqa: BLE001 - logging must never fail a hook
        pass


def later(fn: Callable[..., object], *args: Any) -> None:
    """``fn(*args)`` once the hook's answer is out: in the resident hook runner, after it sent the answer
    (the user's client waits for none of it); in a one-shot hook or any other caller, now."""
    if _later is None:
        fn(*args)
    else:
        _later.append((fn, args))


@contextlib.contextmanager
def deferred() -> Iterator[list[tuple[Callable[..., object], tuple[Any, ...]]]]:
    """Inside, :func:`later` keeps what it is given in the list yielded, for :func:`run_later`."""
    global _later
    outer, _later = _later, []
    try:
        yield _later
    finally:
        _later = outer


def run_later(work: list[tuple[Callable[..., object], tuple[Any, ...]]], name: str) -> None:
    """Do what :func:`later` kept, in order; a failure is one line in ``logs/hooks.log``."""
    for fn, args in work:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - the answer is out; nothing may fail the session now
            log(f"{name}: after the answer: {type(exc).__name__}: {exc}")


def background(pid: int | None) -> int | None:
    """Give a detached learner just started (and what it starts) the lowest CPU priority: it must not
    compete with what the user waits for. Where that is refused it runs as it is. Returns ``pid``."""
    if pid:
        try:
            os.setpriority(os.PRIO_PROCESS, pid, LEARNER_NICE)
        except (OSError, AttributeError):
            pass
    return pid


def emit_context(event: str, text: str) -> None:
    """Print the additionalContext JSON for SessionStart / UserPromptSubmit."""
    out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    sys.stdout.write(json.dumps(out, ensure_ascii=False))
    sys.stdout.flush()


TIME_LIMIT_S = 20.0  # past the longest timeout hooks.json gives Claude Code (10 s): a hook never spins on


def _time_limit(seconds: float) -> None:
    """Raise TimeoutError in this process after ``seconds`` (a fork's child does not inherit it)."""
    import signal

    def on_alarm(_sig: int, _frame: Any) -> None:
        raise TimeoutError(f"ran past its {seconds:g} s time limit")

    try:
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    except (ValueError, OSError, AttributeError):
        pass


def run(name: str, main: Callable[[], None]) -> None:
    """Run a hook's ``main``; any failure (a time-out included) -> one log line, one stderr line, exit 0."""
    if guarded():
        sys.exit(0)
    _time_limit(float(os.environ.get("SOPHIA_HOOK_TIME_LIMIT") or TIME_LIMIT_S))
    try:
        main()
    except SystemExit as exc:
        if exc.code not in (None, 0):
            sys.exit(0)
        raise
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the session
        msg = f"{name}: {type(exc).__name__}: {exc}".replace("\n", " ")[:300]
        log(msg)
        try:
            sys.stderr.write(f"sophia {msg}\n")
        except Exception:  # noqa: BLE001
            pass
    sys.exit(0)

