"""The durable digest queue: one JSON file per job under ``digests/<state>/``. Stdlib only (hooks enqueue).

States are directories: ``pending`` (waiting, maybe until ``next_try_at``), ``running`` (claimed by the
worker, by an atomic rename), ``done`` and ``parked`` (failed too often, with its reason). A job file is
written atomically (``sophia.atomic``) and every move happens under ``digests/queue.lock``, so a crash
at any instant leaves each job in exactly one state. A job left in ``running/`` by a killed worker goes
back to ``pending/`` when the next worker starts (:func:`recover`).

One job per session and kind: the id is derived from them, so a second SessionEnd or PreCompact for the
same session updates the pending job (transcript, cwd, reason) and never adds another.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from .. import paths
from ..atomic import read_json, write_json_atomic
from ..errors import StateFileError
from ..locking import flock_held, locked
from ..timeutil import iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STATES = ("pending", "running", "done", "parked")
# The stages each kind of job runs, in order; each needs ``<prompt dir>/<stage>.md`` (the worker's STAGES
# say how each one runs).
STAGES_OF: dict[str, tuple[str, ...]] = {"session": ("extract", "reflect"), "consolidation": ("consolidate",),
                                         "guardian": ("audit",)}  # guardian: a tier-3 audit (guardian/tier3.py)
KINDS = tuple(STAGES_OF)
PROMPT_DIR = Path(__file__).with_name("prompts")  # the stage prompts shipped with the kit
PROMPT_DIR_ENV = "SOPHIA_DIGEST_PROMPTS"  # another prompt folder (own prompts, tests)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def digests_dir(home: Path | None = None) -> Path:
    return (home or paths.sophia_home()) / "digests"


def state_dir(home: Path, state: str) -> Path:
    return digests_dir(home) / state


def worker_lock_path(home: Path) -> Path:
    return paths.run_dir(home) / "digest-worker.lock"


def job_id(kind: str, session_id: str) -> str:
    """A file-safe id, the same for the same kind and session."""
    safe = _UNSAFE.sub("_", session_id)[:80]
    if safe != session_id:
        import hashlib  # ~6 ms: only for an id that needed cleaning

        safe += "_" + hashlib.sha256(session_id.encode()).hexdigest()[:8]
    return f"{kind}_{safe}"


def queue_lock(home: Path) -> Any:
    return locked(digests_dir(home) / "queue", timeout=10)


def _path(home: Path, state: str, jid: str) -> Path:
    return state_dir(home, state) / f"{jid}.json"


def find(home: Path, jid: str) -> tuple[str, Path] | None:
    """Which state holds job ``jid`` (None: no such job)."""
    if _UNSAFE.sub("", jid) != jid:
        return None
    for state in STATES:
        p = _path(home, state, jid)
        if p.is_file():
            return state, p
    return None


def read(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise StateFileError(path, "not a digest job (expected a JSON object with an id)")
    return data


def enqueue(home: Path, session_id: str, transcript: str = "", cwd: str = "", kind: str = "session",
            reason: str = "", summary: str = "", episode: str = "", hold: float = 0.0) -> tuple[str, dict[str, Any]]:
    """Queue a digest of ``session_id`` (or update its pending job). Returns (state, job): a job already
    running, done or parked is left as it is. ``episode``: the session's episode id (the digest's
    narrative and lessons attach to it). ``hold`` (seconds): a job queued mid-session (a compaction)
    waits that long, so that the session's end digests it whole; an enqueue without one (SessionEnd)
    makes a held job due at once."""
    if kind not in KINDS:
        raise ValueError(f"unknown digest kind {kind!r} (expected one of {', '.join(KINDS)})")
    if not session_id:
        raise ValueError("a digest job needs a session id")
    jid = job_id(kind, session_id)
    with queue_lock(home):
        found = find(home, jid)
        if found and found[0] != "pending":
            return found[0], read(found[1])
        job = read(found[1]) if found else {
            "id": jid, "kind": kind, "session_id": session_id, "attempts": 0, "next_try_at": 0.0,
            "created_at": iso(), "stages_done": []}
        job.update({k: v for k, v in (("transcript", transcript), ("cwd", cwd), ("summary", summary),
                                      ("episode", episode)) if v})
        job.update(reason=reason or job.get("reason") or "", updated_at=iso())
        if hold > 0 and (not found or job.get("held")):
            job.update(held=True, next_try_at=time.time() + hold)
        elif hold <= 0 and job.pop("held", None):
            job["next_try_at"] = 0.0
        write_json_atomic(_path(home, "pending", jid), job)
    return "pending", job


def add_new(home: Path, job: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Queue ``job`` (pending) unless a job with its id is in any state; returns (state, the job that is
    there). For jobs whose id says what they do once (a tier-3 audit of one exact call)."""
    with queue_lock(home):
        found = find(home, job["id"])
        if found:
            return found[0], read(found[1])
        write_json_atomic(_path(home, "pending", job["id"]), job)
    return "pending", job


def jobs(home: Path, states: tuple[str, ...] = STATES) -> list[dict[str, Any]]:
    """Every job (with its ``state``), oldest first; a file that does not parse is listed as broken."""
    out = []
    for state in states:
        d = state_dir(home, state)
        if not d.is_dir():
            continue
        for p in d.glob("*.json"):
            try:
                job = read(p)
            except StateFileError as exc:
                job = {"id": p.stem, "reason": f"unreadable job file: {exc}", "created_at": ""}
            out.append(dict(job, state=state))
    return sorted(out, key=lambda j: (str(j.get("created_at", "")), j["id"]))


def counts(home: Path) -> dict[str, int]:
    return {s: (sum(1 for _ in state_dir(home, s).glob("*.json")) if state_dir(home, s).is_dir() else 0)
            for s in STATES}


def claim(home: Path, at: float | None = None, kinds: tuple[str, ...] | None = None) -> dict[str, Any] | None:
    """Move the oldest due pending job (of one of ``kinds``, when given) to ``running/`` (one rename) and
    count the attempt."""
    t = time.time() if at is None else at
    with queue_lock(home):
        due = [j for j in jobs(home, ("pending",)) if float(j.get("next_try_at") or 0) <= t and j.get("kind")
               and (kinds is None or j["kind"] in kinds)]
        if not due:
            return None
        job = due[0]
        job.pop("state", None)
        src, dst = _path(home, "pending", job["id"]), _path(home, "running", job["id"])
        dst.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.replace(src, dst)
        job.update(attempts=int(job.get("attempts") or 0) + 1, worker_pid=os.getpid(), claimed_at=iso())
        write_json_atomic(dst, job)
    return job


def move(home: Path, job: dict[str, Any], state: str, reason: str = "", next_try_at: float = 0.0) -> None:
    """Record ``job`` in ``state`` (from wherever it is now): done, parked, or pending again."""
    job = {k: v for k, v in job.items() if k not in ("state", "worker_pid", "claimed_at")}
    job.update(reason=reason, next_try_at=next_try_at, updated_at=iso())
    dst = _path(home, state, job["id"])
    with queue_lock(home):
        old = find(home, job["id"])
        src = old[1] if old else dst
        write_json_atomic(src, job)  # the new content first, in place; then one rename moves it
        if src != dst:
            dst.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.replace(src, dst)


def note(home: Path, jid: str, reason: str) -> None:
    """Say why a pending job waits; nothing else about it changes, and a job no longer pending is left alone."""
    with queue_lock(home):
        p = _path(home, "pending", jid)
        try:
            job = read(p)
        except StateFileError:  # gone (claimed, dropped) or unreadable: nothing to say it on
            return
        if job.get("reason") != reason:
            job.update(reason=reason, updated_at=iso())
            write_json_atomic(p, job)


def save(home: Path, job: dict[str, Any]) -> None:
    """Rewrite a running job (its progress: ``stages_done``)."""
    with queue_lock(home):
        write_json_atomic(_path(home, "running", job["id"]), {k: v for k, v in job.items() if k != "state"})


def recover(home: Path) -> list[str]:
    """Put every ``running/`` job back in ``pending/``. Only the worker calls it, holding the worker lock:
    no other worker can be alive, so whatever is running was left by a dead one."""
    back = []
    for job in jobs(home, ("running",)):
        if not job.get("kind"):
            continue
        move(home, job, "pending", f"recovered: its worker (pid {job.get('worker_pid', '?')}) died mid-job")
        back.append(job["id"])
    return back


def retry(home: Path, jid: str) -> bool:
    """A parked (or waiting) job goes back to pending, due now, its attempts reset."""
    found = find(home, jid)
    if not found or found[0] not in ("parked", "pending"):
        return False
    job = read(found[1])
    job["attempts"] = 0
    move(home, job, "pending", "retry requested")
    return True


def drop(home: Path, jid: str) -> str | None:
    """Delete a job that is not running. Returns the state it was in (None: no such job)."""
    with queue_lock(home):
        found = find(home, jid)
        if not found or found[0] == "running":
            return found[0] if found else None
        found[1].unlink(missing_ok=True)
        return found[0]


def prompt_dir() -> Path:
    return Path(os.environ.get(PROMPT_DIR_ENV) or PROMPT_DIR)


def missing_prompt(kind: str, pdir: Path | None = None) -> str | None:
    """Why jobs of ``kind`` cannot run: the first of their stage prompts that is missing (None: none is)."""
    d = pdir or prompt_dir()
    for stage in STAGES_OF.get(kind, ()):
        p = d / f"{stage}.md"
        if not p.is_file():
            return f"no digest prompt for stage {stage} ({p})"
    return None


def held_for_prompts(home: Path, pdir: Path | None = None) -> str | None:
    """When no pending job has its stage prompts, say so on each and return the reason: starting a worker
    would only see it stop at once. None: some pending job can run (or none waits)."""
    waiting = [j for j in jobs(home, ("pending",)) if j.get("kind")]
    reasons = {j["id"]: missing_prompt(str(j["kind"]), pdir) for j in waiting}
    if not waiting or not all(reasons.values()):
        return None
    for jid, reason in reasons.items():
        note(home, jid, str(reason))
    return next(iter(reasons.values()))


def worker_running(home: Path) -> bool:
    return flock_held(worker_lock_path(home))


def start_worker(home: Path, python: str | None = None) -> int | None:
    """Start ``python -m sophia.learning.worker`` detached (own session, output to ``logs/digest.log``) unless
    one runs; returns its pid. For hooks: never waits. The worker checks the switch and the caps itself."""
    import subprocess
    import sys

    if worker_running(home):
        return None
    logs = paths.logs_dir(home)
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    lib = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, SOPHIA_HOME=str(home), PYTHONPATH=lib)
    env.pop("SOPHIA_HOOK_GUARD", None)  # the worker guards the runs it starts; it is no hook
    out = os.open(logs / "digest.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        proc = subprocess.Popen([python or sys.executable, "-m", "sophia.learning.worker"], cwd=str(home),
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                                start_new_session=True, close_fds=True)
    finally:
        with contextlib.suppress(OSError):
            os.close(out)
    return proc.pid


def start_lock_path(home: Path) -> Path:
    return paths.run_dir(home) / "digest-start.lock"


def ensure_worker(home: Path, python: str | None = None, wait: float = 5.0) -> int | None:
    """Start the worker unless one runs, and wait (at most ``wait`` s) until it holds its lock or has
    exited: several sessions ending together start exactly one. For the detached after-session runner,
    never a hook (it waits). Returns the pid started, None if a worker already ran or none was started
    because the stage prompts are missing (:func:`held_for_prompts` said so on the jobs)."""
    with locked(start_lock_path(home), timeout=max(30.0, 2 * wait)):
        if held_for_prompts(home):
            return None
        pid = start_worker(home, python)
        if pid is None:
            return None
        end = time.monotonic() + wait
        while time.monotonic() < end and not worker_running(home):
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break  # it exited already (switch off, nothing due): the next session starts another
            time.sleep(0.02)
    return pid
