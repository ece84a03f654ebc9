"""``s3 backfill``: episodes and zero-token lessons from the sessions Claude Code (or Codex) already keeps.

A new user has months of sessions under ``~/.claude/projects/<project>/<session>.jsonl``. Each is taken
as if it had just ended, by the code the hooks run (nothing here builds an episode or reads a command
itself): :func:`sophia.hooks.session_end.process` with ``past=True`` builds, redacts and indexes the
episode (its times the transcript's), :func:`learners.learn_transcript` stores the error -> fix
procedures, counts the playbook commands and recurring failures, and a digest job is queued only when
learning is on, the project has not opted out, and today's caps leave room for it (the jobs already
run or waiting today count against ``learning_daily_max_jobs``): a backfill never queues more than a
day's digests. The newest sessions go first, so the digests and an interrupted run cover the recent ones.

What was done is kept in ``learning/backfill.json`` (per transcript: size, mtime, state, what it
gave), written atomically after each transcript, so a second run does nothing new, a run stopped by
Ctrl-C resumes where it stopped, and a transcript that grew since is read again (every step is
idempotent: the episode is upserted by session, the learners count sessions as sets, the queue keeps
one job per session). A session the hooks already saw (its state or episode exists and backfill has
no record of it) is left to them. Subagent transcripts (``agent-*.jsonl``, ``<session>/subagents/``)
are part of their session, never sessions of their own. ``--agent codex`` reads Codex's session files
(``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) the same way: the readers take them as they are
(``sophia.codex_rollout``) and the episodes record ``agent: codex``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import read_json, write_json_atomic
from ..errors import StateFileError
from ..locking import locked, try_flock

# It lives with the hooks (as the after-session runner does): it runs their SessionEnd code.

HEAD_LINES = 200  # lines read from a transcript's start to find its session id and working directory
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class Transcript:
    path: Path
    size: int
    mtime: float
    session: str = ""
    cwd: str | None = None
    agent: str = "claude_code"  # the client that wrote it (the episode records it)


@dataclass
class Options:
    since: float | None = None  # only transcripts written at or after this time (epoch seconds)
    project: str | None = None  # only sessions whose working directory is this folder or below it
    dry_run: bool = False
    digest: bool = True  # queue digests (within the caps) when learning is on
    start_worker: bool = True
    progress: Any = None  # called with (0, total, None), then after each transcript with (done, total, path)
    agent: str = "claude_code"  # whose sessions: claude_code (~/.claude/projects) or codex (~/.codex/sessions)


@dataclass
class Report:
    root: str
    found: int = 0
    todo: int = 0
    processed: int = 0
    unchanged: int = 0
    known: int = 0
    episodes: int = 0
    fixes: int = 0
    procedures_added: int = 0
    gaps_added: int = 0
    digests_queued: int = 0
    digests_skipped: dict[str, int] = field(default_factory=dict)
    bad_lines: dict[str, int] = field(default_factory=dict)
    failed: list[dict[str, str]] = field(default_factory=list)
    would_process: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    worker: int | None = None

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def projects_dir() -> Path:
    """Where Claude Code keeps its session transcripts."""
    return Path.home() / ".claude" / "projects"


def codex_sessions_dir() -> Path:
    """Where Codex keeps its session files (rollouts): ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``."""
    base = os.environ.get("CODEX_HOME")
    return (Path(base) if base else Path.home() / ".codex") / "sessions"


def record_path(home: Path) -> Path:
    return home / "learning" / "backfill.json"


def lock_path(home: Path) -> Path:
    from .. import paths

    return paths.run_dir(home) / "backfill.lock"


# ---------------------------------------------------------------- which transcripts


def head(path: Path) -> tuple[str | None, str | None]:
    """(session id, working directory) from the first lines that name them."""
    sid = cwd = None
    try:
        with open(path, "rb") as fh:
            for n, raw in enumerate(fh):
                if n >= HEAD_LINES or (sid and cwd):
                    break
                try:
                    obj = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("payload"), dict):  # Codex: session_meta
                    obj = {"sessionId": obj["payload"].get("id"), "cwd": obj["payload"].get("cwd")}
                if isinstance(obj, dict):
                    sid = sid or (obj.get("sessionId") if isinstance(obj.get("sessionId"), str) else None)
                    cwd = cwd or (obj.get("cwd") if isinstance(obj.get("cwd"), str) else None)
    except OSError:
        pass
    return sid, cwd


def session_of(path: Path, sid_in_file: str | None) -> str:
    """The file's own name when it holds a session UUID (the id the hooks are given; a resumed session
    starts with its parent's lines and id), else the id in the file, else the file name."""
    m = _UUID.search(path.stem)
    return m.group(0) if m else (sid_in_file or path.stem)


def _under(cwd: str | None, project: str) -> bool:
    if not cwd:
        return False
    c, p = os.path.normpath(cwd), os.path.normpath(project)
    return c == p or c.startswith(p.rstrip("/") + "/")


def find(root: Path, opts: Options) -> list[Transcript]:
    """The session transcripts under ``root`` that pass the filters, newest first."""
    out = []
    files = root.rglob("rollout-*.jsonl") if opts.agent == "codex" else root.glob("*/*.jsonl")
    for p in files:
        if p.name.startswith("agent-") or not p.is_file():
            continue
        try:
            st = p.stat()
        except OSError:
            continue
        if opts.since is not None and st.st_mtime < opts.since:
            continue
        t = Transcript(p, st.st_size, st.st_mtime, agent=opts.agent)
        sid, t.cwd = head(p)
        t.session = session_of(p, sid)
        if opts.project and not _under(t.cwd, opts.project):
            continue
        out.append(t)
    return sorted(out, key=lambda t: (-t.mtime, str(t.path)))


# ---------------------------------------------------------------- the record of what was done


def load_record(home: Path, notes: list[str]) -> dict[str, Any]:
    """``{path: entry}``; a record that does not parse is set aside (quarantine/) and started again:
    every step is idempotent, so redoing a transcript adds nothing twice."""
    p = record_path(home)
    try:
        data = read_json(p, default=None)
    except StateFileError as exc:
        from ..state import quarantine

        dest = quarantine(p, home)
        notes.append(f"{exc.reason}: set aside as {dest.name}, every transcript is looked at again")
        data = None
    entries = data.get("transcripts") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def save_entry(home: Path, record: dict[str, Any], path: Path, entry: dict[str, Any]) -> None:
    record[str(path)] = entry
    p = record_path(home)
    with locked(p, timeout=30):
        write_json_atomic(p, {"version": 1, "transcripts": record})


def unchanged(entry: Any, t: Transcript) -> bool:
    return (isinstance(entry, dict) and entry.get("state") == "done" and entry.get("size") == t.size
            and entry.get("mtime") == t.mtime)


def known_sessions(home: Path) -> set[str]:
    """Sessions the hooks already made an episode of (the index's entries)."""
    from ..episode_store import read_index

    try:
        entries = read_index(home).get("entries") or []
    except StateFileError:
        return set()
    return {str(e["session_id"]) for e in entries if isinstance(e, dict) and e.get("session_id")}


def seen_by_hooks(home: Path, sid: str, known: set[str]) -> bool:
    from .runtime import safe_session
    from .session_end import state_file

    safe = safe_session(sid)
    return safe is not None and (sid in known or state_file(home, safe).exists())


# ---------------------------------------------------------------- one transcript


def _episode(home: Path, episode_id: str | None) -> dict[str, Any]:
    from ..episode_store import episode_path

    if not episode_id:
        return {}
    data = read_json(episode_path(episode_id, home), default=None)
    return data if isinstance(data, dict) else {}


class Digests:
    """Today's room for digest jobs: the job cap less the jobs run today and those already waiting."""

    def __init__(self, home: Path, cfg: dict[str, Any], wanted: bool) -> None:
        from ..learning import ledger, queue

        self.home, self.cfg, self.wanted = home, cfg, wanted
        waiting = queue.counts(home)["pending"]
        self.room = int(cfg.get("learning_daily_max_jobs", 20)) - ledger.today(home)["jobs"] - waiting
        self.queued = 0

    def offer(self, sid: str, project: str | None, ep: dict[str, Any], t: Transcript) -> str:
        """Queue the session's digest if it may have one; what happened, as a short reason."""
        from ..learning import ledger, queue
        from .after_session import digest_skip

        if not self.wanted:
            return "--no-digest"
        skip = digest_skip(self.cfg, {"trivial": bool(ep.get("trivial")), "project": project})
        if skip:
            return skip
        if queue.find(self.home, queue.job_id("session", sid)):
            return "already queued"
        cap = ledger.cap_reason(self.home, self.cfg)
        if cap or self.room <= 0:
            return cap or f"{ledger.CAP_REACHED}: today's jobs are taken (learning_daily_max_jobs)"
        queue.enqueue(self.home, sid, transcript=str(t.path), cwd=t.cwd or "", reason="backfill")
        self.room -= 1
        self.queued += 1
        return "queued"


def process_one(home: Path, t: Transcript, digests: Digests) -> dict[str, Any]:
    """Build the episode, learn, maybe queue the digest; the record's entry (without size and mtime)."""
    from ..learning import learners
    from . import session_end
    from .project import project_of

    payload = {"hook_event_name": "SessionEnd", "session_id": t.session, "transcript_path": str(t.path),
               "cwd": t.cwd or "", "reason": "backfill", "agent": t.agent}
    built = session_end.process(payload, home, past=True)
    ep = _episode(home, built.get("episode"))
    project = project_of(t.cwd) if t.cwd else None
    lessons = learners.learn_transcript(home, t.session, t.path, project=project, source_id=ep.get("id"))
    return {"session": t.session, "episode": ep.get("id"), "trivial": bool(ep.get("trivial", True)),
            "bad_lines": int(built.get("bad_lines") or 0), "fixes": int(lessons.get("fixes") or 0),
            "procedures_added": len(lessons.get("procedures_added") or []),
            "gaps_added": len(lessons.get("gaps_added") or []),
            "digest": digests.offer(t.session, project, ep, t) if ep else "no episode"}


def _count(report: Report, t: Transcript, entry: dict[str, Any]) -> None:
    report.processed += 1
    report.episodes += bool(entry.get("episode"))
    report.fixes += entry["fixes"]
    report.procedures_added += entry["procedures_added"]
    report.gaps_added += entry["gaps_added"]
    if entry["bad_lines"]:
        report.bad_lines[str(t.path)] = entry["bad_lines"]
    if entry["digest"] != "queued":
        report.digests_skipped[entry["digest"]] = report.digests_skipped.get(entry["digest"], 0) + 1


def _one(home: Path, record: dict[str, Any], t: Transcript, digests: Digests, report: Report) -> None:
    from ..redact import redact
    from ..timeutil import iso

    stamp = {"size": t.size, "mtime": t.mtime, "session": t.session}
    save_entry(home, record, t.path, {**stamp, "state": "started", "at": iso()})
    try:
        entry = process_one(home, t, digests)
    except Exception as exc:  # noqa: BLE001 - one bad transcript is reported, never fatal
        msg = redact(f"{type(exc).__name__}: {exc}")[:300]
        report.failed.append({"path": str(t.path), "error": msg})
        save_entry(home, record, t.path, {**stamp, "state": "failed", "error": msg, "at": iso()})
        return
    save_entry(home, record, t.path, {**stamp, **entry, "state": "done", "at": iso()})
    _count(report, t, entry)


# ---------------------------------------------------------------- the run


def plan(home: Path, record: dict[str, Any], found: list[Transcript], report: Report) -> list[Transcript]:
    """What is left to do: not done unchanged, not a session the hooks already took."""
    known = known_sessions(home)
    todo = []
    for t in found:
        entry = record.get(str(t.path))
        if unchanged(entry, t):
            report.unchanged += 1
        elif entry is None and seen_by_hooks(home, t.session, known):
            report.known += 1
        else:
            todo.append(t)
    return todo


def run(home: Path, root: Path, opts: Options) -> Report:
    """Backfill every transcript under ``root`` that passes ``opts``. A KeyboardInterrupt propagates
    (what was done is saved); :class:`Busy` when another backfill runs."""
    from ..config_defaults import load
    from ..paths import config_path, run_dir

    report = Report(root=str(root))
    run_dir(home).mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = try_flock(lock_path(home))
    if fd is None:
        raise Busy("another s3 backfill is running")
    try:
        record = load_record(home, report.notes)
        found = find(root, opts) if root.is_dir() else []
        report.found = len(found)
        todo = plan(home, record, found, report)
        report.todo = len(todo)
        if opts.dry_run:
            report.would_process = [str(t.path) for t in todo]
            return report
        cfg = load(config_path(home))[0]
        digests = Digests(home, cfg, opts.digest)
        if opts.progress:
            opts.progress(0, len(todo), None)
        for i, t in enumerate(todo, 1):
            _one(home, record, t, digests, report)
            if opts.progress:
                opts.progress(i, len(todo), t.path)
        report.digests_queued = digests.queued
        if digests.queued and opts.start_worker:
            report.worker = _start_worker(home)
        _warm_metrics(home)
    finally:
        os.close(fd)
    return report


def _warm_metrics(home: Path) -> None:
    """Read the new episodes into the growth metrics' cache now, so the next ``s3 status`` need not."""
    from ..learning import metrics

    with contextlib.suppress(Exception):  # a cache: status builds it itself
        metrics.rows(home)


def _start_worker(home: Path) -> int | None:
    import sys

    from ..learning import queue

    with contextlib.suppress(Exception):  # the jobs stay queued: the next session end starts it
        return queue.ensure_worker(home, sys.executable)
    return None


class Busy(Exception):
    pass


def since_epoch(day: str) -> float:
    """A date (``YYYY-MM-DD``, local midnight) or date-time as epoch seconds; ValueError when it is neither."""
    from datetime import datetime

    d = datetime.fromisoformat(day.strip().replace("Z", "+00:00"))
    return d.timestamp() if d.tzinfo else time.mktime(d.timetuple())
