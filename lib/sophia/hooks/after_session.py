"""What a finished session teaches, run detached after SessionEnd. Standard library only.

The SessionEnd hook only *launches* this file (``python -I -S after_session.py JOB_JSON``: one
``posix_spawn`` in its own session, output to ``logs/learning.log``, at the lowest CPU priority; the
resident hook runner once the hook's answer is out) and returns. Here, with no budget to keep:

1. the zero-token learners (:func:`learners.learn_transcript`: error -> fix procedures, the project
   playbook, recurring failures), always: they cost no tokens; and the user model's preferences, goals
   and knowledge levels derived afresh from what the digests stored (:func:`memory.user_model.refresh`);
2. when ``learning_enabled`` is true, the session is not trivial and its project has not opted out
   (a ``.sophia-no-learning`` file in the project root, or ``learning_exclude_projects``), one digest
   job (:func:`queue.enqueue`; it releases the hold a compaction put on the session's job);
3. when ``learning_enabled`` is true, the daily consolidation job if it is due
   (:func:`learning.schedule.maybe_enqueue_consolidation`); with ``guardian.tier3_enabled``, the audits
   of high-risk asks logged since the last pull (:func:`learning.audits.sync`);
4. if 2 or 3 queued a job and no worker runs, the worker (:func:`queue.ensure_worker`) with a
   Python that can import pydantic (``$SOPHIA_PYTHON``, the kit's venv, this interpreter); without
   one the jobs stay pending and one line says why. The hook starts this file under its own ``-I -S``
interpreter; it goes on in that Python (``exec``) once it has found it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

if __name__ == "__main__":  # run as a file under -I -S: find the package next to us
    sys.path.insert(0, __file__.rsplit("/", 3)[0])

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OPT_OUT_FILE = ".sophia-no-learning"
LOG_NAME = "learning.log"
RESOLVED_ENV = "SOPHIA_LEARNING_PYTHON"  # set once the runner runs in the Python it chose


def launch(home: Path, job: dict[str, Any]) -> int | None:
    """Start this file detached on ``job`` (session, transcript, project, cwd, episode, trivial); its pid.
    ``posix_spawn`` with ``setsid``: no ``subprocess`` import on the hook's path. It runs, and what it
    starts (the worker) runs, at the lowest CPU priority (:func:`runtime.background`)."""
    from .. import paths
    from .runtime import background

    logs = paths.logs_dir(home)
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = dict(os.environ, SOPHIA_HOME=str(home))
    out = str(logs / LOG_NAME)
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
               (os.POSIX_SPAWN_DUP2, 1, 2)]
    return background(os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", __file__, json.dumps(job)], env,
                                     file_actions=actions, setsid=True))


def opted_out(project: str | None, cfg: dict[str, Any]) -> str | None:
    """Why ``project`` is never digested (None: it may be)."""
    if not project:
        return "no project"
    if os.path.exists(os.path.join(project, OPT_OUT_FILE)):
        return f"{OPT_OUT_FILE} in the project"
    norm = os.path.normpath(project)
    if any(os.path.normpath(p) == norm for p in cfg.get("learning_exclude_projects") or []):
        return "listed in learning_exclude_projects"
    return None


def digest_skip(cfg: dict[str, Any], job: dict[str, Any]) -> str | None:
    """Why this session gets no digest job (None: it gets one)."""
    if not cfg.get("learning_enabled"):
        return "learning_enabled is false"
    if job.get("trivial"):
        return "trivial session"
    return opted_out(job.get("project"), cfg)


def worker_python(home: Path) -> str | None:
    """A Python that can run the worker (it imports pydantic): ``$SOPHIA_PYTHON``, the kit's venv,
    this interpreter; None when none can."""
    import subprocess

    seen: set[str] = set()
    for cand in (os.environ.get("SOPHIA_PYTHON") or "", str(home / "venv" / "bin" / "python"), sys.executable):
        if not cand or cand in seen or not os.access(cand, os.X_OK):
            continue
        seen.add(cand)
        try:
            # -I and the home as cwd: a pydantic.py in the user's project (the hook's cwd) is never run
            ok = subprocess.run([cand, "-I", "-c", "import pydantic"], stdin=subprocess.DEVNULL, cwd=str(home),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            return cand
    return None


def learn(home: Path, job: dict[str, Any]) -> dict[str, Any]:
    """The zero-token learners on the session's transcript (else its action buffer)."""
    from ..learning import learners
    from .session_end import buffer_path, read_buffer_file

    sid = str(job["session"])
    actions = read_buffer_file(buffer_path(home, sid))
    return learners.learn_transcript(home, sid, job.get("transcript") or None, project=job.get("project"),
                                     actions=actions, source_id=job.get("episode") or None)


def digest(home: Path, cfg: dict[str, Any], job: dict[str, Any], python: str | None) -> str:
    """Enqueue the session's digest (and the consolidation when it is due) and make sure a worker runs;
    what happened, in a few words."""
    from ..learning import queue

    line, queued = _enqueue_digest(home, cfg, job)
    if cfg.get("learning_enabled"):
        more, cid = consolidate(home, cfg)
        line, queued = f"{line}; {more}", queued or cid
    more, aid = pull_audits(home)
    line, queued = (f"{line}; {more}", queued or aid) if more else (line, queued)
    if not queued:
        return line
    if python is None:
        return f"{line}; no worker: no Python with pydantic to run it (run install.sh)"
    held = queue.held_for_prompts(home)
    if held:
        return f"{line}; no worker: {held}"
    pid = queue.ensure_worker(home, python)
    return f"{line}; " + (f"worker started (pid {pid})" if pid else "a worker runs")


def _enqueue_digest(home: Path, cfg: dict[str, Any], job: dict[str, Any]) -> tuple[str, str | None]:
    from ..learning import queue

    skip = digest_skip(cfg, job)
    if skip:
        return f"no digest ({skip})", None
    state, queued = queue.enqueue(home, str(job["session"]), transcript=job.get("transcript") or "",
                                  cwd=job.get("cwd") or "", reason="session_end", episode=job.get("episode") or "")
    if state != "pending":
        return f"digest {queued['id']} already {state}", None
    return f"digest {queued['id']} pending", queued["id"]


def pull_audits(home: Path) -> tuple[str, str | None]:
    """The tier-3 audits of asks the guardian logged since the last pull (one whose hook child was lost):
    what was queued, in a few words ("" when nothing was), and a new job's id."""
    from ..learning import audits

    try:
        new = audits.sync(home)
    except Exception as exc:  # noqa: BLE001 - the session's own digest is queued already
        return f"guardian audits not pulled: {type(exc).__name__}: {exc}", None
    return (f"{len(new)} guardian audit(s) queued", new[0]) if new else ("", None)


def consolidate(home: Path, cfg: dict[str, Any]) -> tuple[str, str | None]:
    """The daily consolidation, when enough new episodes wait (:mod:`learning.schedule`)."""
    from ..learning import schedule

    try:
        return schedule.maybe_enqueue_consolidation(home, cfg)
    except Exception as exc:  # noqa: BLE001 - the session's own digest is queued already
        return f"consolidation check failed: {type(exc).__name__}: {exc}", None


def run(home: Path, job: dict[str, Any], python: str | None) -> str:
    from .runtime import load_config

    cfg = load_config(home)
    try:
        report = learn(home, job)
        line = (f"learned: {report.get('commands', 0)} commands, {report.get('fixes', 0)} fixes, "
                f"{len(report.get('procedures_added') or [])} procedures, {len(report.get('gaps_added') or [])} gaps")
    except Exception as exc:  # noqa: BLE001 - the digest below must still be queued
        line = f"learners failed: {type(exc).__name__}: {exc}"
    return f"{line}; {learn_user(home, cfg)}; {digest(home, cfg, job, python)}"


def learn_user(home: Path, cfg: dict[str, Any]) -> str:
    """Fold what the digests done so far learned about the user into the user model."""
    from ..memory import user_model
    from .stats import safe_user_id

    try:
        return "user model " + ("updated" if user_model.refresh(home, safe_user_id(cfg)) else "unchanged")
    except Exception as exc:  # noqa: BLE001 - one line; the digest must still be queued
        return f"user model not updated: {type(exc).__name__}: {exc}"


def _reexec(home: Path, arg: str) -> None:
    """Under ``-I -S`` (the hook's interpreter) pydantic is out of reach and the learners' stores need
    it: go on in a Python that has it, as the package's module (from the home, never the project)."""
    try:
        import pydantic  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get(RESOLVED_ENV):
        return
    py = worker_python(home)
    if py is None:
        os.environ[RESOLVED_ENV] = "-"
        return
    lib = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=lib, SOPHIA_HOME=str(home))
    env[RESOLVED_ENV] = py
    os.chdir(home)
    os.execve(py, [py, "-P", "-m", "sophia.hooks.after_session", arg], env)


def main(argv: list[str]) -> int:
    from .. import paths
    from ..redact import redact
    from ..timeutil import iso

    home, job = paths.sophia_home(), {}
    try:
        job = json.loads(argv[0])
        _reexec(home, argv[0])
        resolved = os.environ.get(RESOLVED_ENV)
        line = run(home, job, None if resolved == "-" else resolved or sys.executable)
    except Exception as exc:  # noqa: BLE001 - detached: one line, never a traceback
        line = f"failed: {type(exc).__name__}: {exc}"
    print(redact(f"{iso()} session {job.get('session', '?')}: {line}")[:2000], flush=True)
    return 0


if __name__ == "__main__":  # as the package's module, so that its relative imports resolve
    from sophia.hooks.after_session import main as _main

    sys.exit(_main(sys.argv[1:]))
