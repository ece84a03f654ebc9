"""Stop and SessionEnd: turn the session into an episode. ``python -I -S launch.py session_end``.

Stop fires after EVERY assistant turn: each run upserts the session's one episode (stable
id, idempotent), reading only what the transcript gained since the last run. SessionEnd
finalises it (``end_trigger: session_end``), rotates old buffers, launches the after-session
learning detached (:mod:`sophia.hooks.after_session`: zero-token lessons, and the digest job when
learning is on) and, if the user opted in, a detached reflection; it also deletes the session's record of
the memories injected into it (:mod:`sophia.hooks.shown`). Nothing here waits on anything slow.

Per-session state lives next to the buffer: ``buffers/<session>.state.json`` (transcript
offset, episode id, what was already counted).
"""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

from sophia import paths
from sophia.atomic import deferred_sync, read_json, sync_files
from sophia.errors import SophiaError
from sophia.hooks import episode as episode_mod
from sophia.hooks import transcript as transcript_mod
from sophia.hooks.project import git_info, project_of
from sophia.hooks.runtime import later, load_config, log, read_payload, run, safe_session
from sophia.locking import locked
from sophia.timeutil import iso

ROTATE_AFTER_DAYS = 14
SEARCHED = ("goal_summary", "goal", "error_analysis", "heuristics", "keywords", "errors", "outcome", "trivial",
            "project", "git_branch", "agent")
MAX_BUFFER_BYTES = 16 * 1024 * 1024


def buffer_path(home: Path, sid: str) -> Path:
    return paths.buffers_dir(home) / f"{sid}.jsonl"


def state_file(home: Path, sid: str) -> Path:
    return paths.buffers_dir(home) / f"{sid}.state.json"


def read_buffer_file(p: Path) -> list[dict[str, Any]]:
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_BUFFER_BYTES:  # keep the head and the tail
                head = fh.read(MAX_BUFFER_BYTES // 4)
                fh.seek(size - MAX_BUFFER_BYTES // 2)
                data = head[: head.rfind(b"\n") + 1] + fh.read().split(b"\n", 1)[-1]
            else:
                data = fh.read()
    except OSError:
        return []
    return episode_mod.read_buffer(data.split(b"\n"))


def _load_state(p: Path) -> dict[str, Any]:
    try:
        data = read_json(p, default=None)
    except SophiaError:
        data = None
    return data if isinstance(data, dict) else {}


def _existing_episode(home: Path, episode_id: str) -> dict[str, Any] | None:
    try:
        from sophia.episode_store import episode_path

        data = read_json(episode_path(episode_id, home), default=None)
    except (SophiaError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _find_episode_id(home: Path, sid: str) -> str | None:
    """An earlier run of this session whose state file was rotated away: find its episode."""
    try:
        index = read_json(paths.episode_index_path(home), default=None)
    except SophiaError:
        return None
    entries = index.get("entries") if isinstance(index, dict) else None
    for e in entries or []:
        if isinstance(e, dict) and e.get("session_id") == sid and isinstance(e.get("id"), str):
            return str(e["id"])
    return None


def index_episode(home: Path, ep: dict[str, Any]) -> str:
    """Upsert the episode into the recall index: the same item a rebuild makes from the file."""
    from sophia.index import kept, store  # lazily: only when the episode changed
    from sophia.kinds import episode_item

    with kept.use(home) as conn:
        if conn is not None:  # always: not a read, so created when missing
            store.upsert_items(conn, [episode_item(ep)])
    return "indexed"


def rotate_buffers(home: Path, now: float | None = None, days: int = ROTATE_AFTER_DAYS) -> int:
    """Delete buffers and session states untouched for ``days`` (their episodes stay)."""
    from ..atomic import delete_stale

    return delete_stale(paths.buffers_dir(home), (".jsonl", ".state.json", ".state.json.lock"),
                        (now or time.time()) - days * 86400)


def process(payload: dict[str, Any], home: Path | None = None, *, past: bool = False) -> dict[str, Any]:
    """Do the work for one Stop / SessionEnd payload. Returns a small report (for tests/logs).

    ``past``: a session that ended long ago (``s3 backfill``): the episode's end is the transcript's last
    entry, and nothing is launched or rotated (the caller learns from it itself)."""
    sid = safe_session(payload.get("session_id"))
    skipped = _skip_reason(payload, sid)
    if skipped or not sid:
        return {"skipped": skipped}
    run = _Run(payload, home or paths.sophia_home(), sid)
    run.past = past
    cfg = load_config(run.home)
    sp = state_file(run.home, sid)
    with deferred_sync() as written, locked(sp, timeout=1.0):
        new_prompts = _read_session(run, sp)
        episode, new_episode = _update_episode(run)
        _update_models(run, cfg, new_prompts, episode, new_episode)
        _write_state(sp, run.state)
    if written:  # SessionEnd's rewrites are fsynced once its answer is out (a new file was at once)
        later(sync_files, written)
    if episode is not None:
        _index(run, episode)
    run.report["bad_lines"] = int(run.tstate.get("bad_lines") or 0)
    if run.final and not past:
        run.report["rotated"] = rotate_buffers(run.home)
        _forget_shown(run)
        if episode is not None:
            _reflect(run, cfg, episode)
            _learn_after(run, episode)
    return run.report


AGENTS = ("claude_code", "codex")


def agent_of(payload: dict[str, Any]) -> str:
    """Which client ran the session: ``codex`` when the hook was registered for Codex (its command sets
    ``S3_AGENT=codex``) or a backfill says so, else ``claude_code``."""
    named = payload.get("agent")
    if named in AGENTS:
        return str(named)
    return "codex" if os.environ.get("S3_AGENT") == "codex" else "claude_code"


class _Run:
    """One Stop / SessionEnd run: its payload and home, and the session state it holds under the lock."""

    __slots__ = ("payload", "home", "sid", "final", "report", "state", "tstate", "buffer", "project", "now", "past",
                 "agent")

    def __init__(self, payload: dict[str, Any], home: Path, sid: str) -> None:
        self.payload, self.home, self.sid = payload, home, sid
        self.final = payload.get("hook_event_name") == "SessionEnd"
        self.report: dict[str, Any] = {"session": sid, "event": payload.get("hook_event_name")}
        self.state: dict[str, Any] = {}
        self.tstate: dict[str, Any] = {}
        self.buffer: list[dict[str, Any]] = []
        self.project: str | None = None
        self.now = ""
        self.past = False
        self.agent = agent_of(payload)

    def text(self, key: str) -> str | None:
        value = self.payload.get(key)
        return value if isinstance(value, str) else None


def _skip_reason(payload: dict[str, Any], sid: str | None) -> str | None:
    event = payload.get("hook_event_name")
    if event not in ("Stop", "SessionEnd"):
        return f"event {event!r}"
    if event == "Stop" and payload.get("stop_hook_active") is True:
        return "stop_hook_active"
    return None if sid else "no session_id"


def _read_session(run: _Run, sp: Path) -> list[str]:
    """Load the session state, read what the transcript and the buffer gained; the new prompts."""
    run.state = _load_state(sp)
    run.tstate, new_prompts = transcript_mod.update(run.state.get("transcript"), run.text("transcript_path"),
                                                    final=run.final)
    run.state["transcript"] = run.tstate
    if run.tstate.get("client") == "codex":
        run.agent = "codex"
    # Codex's PostToolUse carries no exit code: its own session file is the episode's record of the calls
    run.buffer = [] if run.agent == "codex" else read_buffer_file(buffer_path(run.home, run.sid))
    run.now = iso()
    if "project" not in run.state:
        cwd = run.text("cwd")
        run.state["project"] = project_of(cwd if cwd is not None else run.tstate.get("cwd"))
    run.project = run.state.get("project")
    return new_prompts


def _episode_id(run: _Run) -> str | None:
    """The session's episode id: from its state, else an earlier run's (its state rotated away), else new."""
    episode_id: str | None = run.state.get("episode_id")
    if episode_id or not _has_work(run):
        return episode_id
    found = _find_episode_id(run.home, run.sid)
    if found:
        prior = _existing_episode(run.home, found)
        run.state["carry"] = _carry(prior) if prior else {}
        episode_id = found
    else:
        first_action = run.buffer[0].get("ts") if run.buffer else None
        times = [t for t in (run.tstate.get("first_ts"), first_action) if isinstance(t, str) and t]
        episode_id = episode_mod.episode_id(run.sid, min(times) if times else run.now)
    run.state["episode_id"] = episode_id
    return episode_id


def _has_work(run: _Run) -> bool:
    """Something to make an episode of: buffered tool calls, else the transcript's calls or prompts
    (a session replayed without PostToolUse hooks, a conversation without tool calls)."""
    return bool(run.buffer or run.tstate.get("actions") or run.tstate.get("prompts_total"))


def _update_episode(run: _Run) -> tuple[dict[str, Any] | None, bool]:
    """Build and save the episode; (the episode when the recall index must see it, whether it is new)."""
    episode_id = _episode_id(run)
    if not (episode_id and _has_work(run)):
        return None, False
    from sophia.episode_store import episode_path

    new_episode = not episode_path(episode_id, run.home).exists()
    episode = _build_episode(run, episode_id)
    searchable_changed = _save_episode(run, episode, new_episode)
    return (episode if searchable_changed else None), new_episode


def _build_episode(run: _Run, episode_id: str) -> dict[str, Any]:
    branch, commit = git_info(run.project) if run.project else (None, None)
    extra: dict[str, Any] = {"agent": run.agent}
    reason = run.text("reason")
    if run.final and reason is not None:
        extra["end_reason"] = reason[:40]
    transcript = run.text("transcript_path")
    if transcript and len(transcript) <= 4096:
        extra["transcript_path"] = transcript  # where the whole session can be read again (the viewer links it)
    ended = run.tstate.get("last_ts") if run.past else None
    episode = episode_mod.build_episode(
        session_id=run.sid, episode_id=episode_id, buffer=run.buffer, transcript=run.tstate,
        now=ended if isinstance(ended, str) and ended else run.now,
        end_trigger="session_end" if run.final else "stop_hook", last_message=run.text("last_assistant_message"),
        project=run.project, git_branch=branch, git_commit=commit, carry=run.state.get("carry"), extra=extra,
    )
    if run.state.get("ended_at"):  # a late Stop after SessionEnd keeps the final trigger
        episode["end_trigger"] = "session_end"
    _keep_learned(run, episode)
    return episode


# what a digest, a reflection or consolidation wrote on the episode: a rebuild from the buffer keeps it
LEARNED = ("heuristics", "error_analysis", "narrative", "memcell_id", "reflected", "reflected_at", "links",
           "consolidated")


def _keep_learned(run: _Run, episode: dict[str, Any]) -> None:
    """Carry over what a digest or reflection wrote on the episode file. The file is read only when
    someone else changed it since this hook last wrote it (a stat, not a parse, on most Stops); what it
    taught is kept in the session state for the Stops after that."""
    from sophia.episode_store import episode_path

    try:
        st = os.stat(episode_path(episode["id"], run.home))
        sig: list[int] | None = [st.st_mtime_ns, st.st_size]
    except (OSError, ValueError):
        sig = None
    if sig is not None and sig != run.state.get("episode_stat"):
        prior = _existing_episode(run.home, episode["id"]) or {}
        run.state["learned"] = {k: prior[k] for k in LEARNED if prior.get(k) not in (None, [], "", False)}
    for k, v in (run.state.get("learned") or {}).items():
        if k == "heuristics" and isinstance(v, list):
            episode[k] = list(dict.fromkeys([*v, *(episode.get(k) or [])]))
        else:
            episode[k] = v


def _save_episode(run: _Run, episode: dict[str, Any], new_episode: bool) -> bool:
    """Write only what changed; True when what the recall index searches or shows changed.

    Stop fires after every turn. The episode file is written whenever its content changed; the capped
    index.json (a 1000-entry rewrite) when the entry is new or its summary changed (tool_call_count and
    timestamp are refreshed at SessionEnd); the recall index (SQLite) when its fields changed. A new
    episode and SessionEnd write all three."""
    from sophia.episode_store import index_entry, upsert_index_entries, write_episode

    state, force = run.state, new_episode or run.final
    ep_sig = _signature(episode, ("ended_at", "timestamp"))
    entry = index_entry(episode)
    entry_sig = _signature(entry, ("timestamp", "tool_call_count"))
    changed = force or ep_sig != state.get("episode_sig")
    # a turn's rewrite is not fsynced: the rename over the old file never leaves it torn or empty (ext4 and
    # the others write a file renamed over another first); a new file has no such guard, and the session's
    # end is the record that stays
    durable = run.final
    if changed:
        path = write_episode(episode, run.home, durable=durable or new_episode)
        state["episode_sig"] = ep_sig
        st = os.stat(path)
        state["episode_stat"] = [st.st_mtime_ns, st.st_size]  # our own write: _keep_learned need not read it
    if force or entry_sig != state.get("entry_sig"):
        upsert_index_entries([entry], run.home, durable=durable or not paths.episode_index_path(run.home).exists())
        state["entry_sig"] = entry_sig
    run.report.update(episode=episode["id"], outcome=episode["outcome"], written=changed)
    search_sig = _signature({k: episode.get(k) for k in SEARCHED}, ())
    if force or search_sig != state.get("search_sig"):
        state["search_sig"] = search_sig
        return True
    return False


def _update_models(run: _Run, cfg: dict[str, Any], new_prompts: list[str], episode: dict[str, Any] | None,
                   new_episode: bool) -> None:
    """The self-model's counters and the user model's prompts and topics."""
    from sophia.hooks import stats

    new_session = not run.state.get("session_counted")
    ended = run.tstate.get("last_ts") if run.past else None  # a backfilled session's own end, not our clock
    ended = ended if isinstance(ended, str) and ended else None
    durable = run.final  # a turn's rewrite is not fsynced (see _save_episode); a new file is (stats)
    stats.update_self_model(run.home, new_session=new_session, new_episode=new_episode, stamp=run.final,
                            now=run.now, ended=ended, durable=durable)
    run.state["session_counted"] = True
    topics = list(episode.get("keywords") or []) if episode else []
    if new_prompts or topics:
        stats.update_user_model(run.home, stats.safe_user_id(cfg), prompts=new_prompts, topics=topics, now=run.now,
                                ended=ended, durable=durable)
    if run.final:
        run.state["ended_at"] = run.now


def _index(run: _Run, episode: dict[str, Any]) -> None:
    try:
        run.report["index"] = index_episode(run.home, episode)
    except Exception as exc:  # noqa: BLE001 - the index is derived; a rebuild repairs it
        run.report["index"] = f"failed: {type(exc).__name__}: {exc}"
        log(f"session_end: indexing {episode['id']} failed: {type(exc).__name__}: {exc}", run.home)


def _forget_shown(run: _Run) -> None:
    """The session's record of what its context held goes with it; so do killed sessions' stale ones."""
    from sophia.hooks import shown

    run.report["shown_removed"] = shown.remove(run.home, run.sid)
    run.report["shown_swept"] = shown.sweep(run.home)


def _reflect(run: _Run, cfg: dict[str, Any], episode: dict[str, Any]) -> None:
    """Launch the opted-in reflection, detached, once the answer is out (:func:`runtime.later`)."""
    from sophia.hooks import reflection

    ids = reflection.episodes_to_reflect(run.home, cfg, episode)
    if ids:
        later(_launch_reflection, run, ids)


def _launch_reflection(run: _Run, ids: list[str]) -> None:
    from sophia.hooks import reflection

    pid = reflection.launch(run.home, ids)
    run.report["reflection"] = pid
    if pid:
        log(f"session_end: reflection launched for {ids} (pid {pid})", run.home)


def _learn_after(run: _Run, episode: dict[str, Any]) -> None:
    """Launch the after-session learning detached: the zero-token learners, then (if the user turned
    learning on and the project did not opt out) the digest job and its worker. One spawn, no wait, once
    the answer is out (:func:`runtime.later`)."""
    cwd = run.text("cwd") or run.tstate.get("cwd")
    job = {"session": run.sid, "transcript": run.text("transcript_path") or "", "project": run.project,
           "cwd": cwd if isinstance(cwd, str) else "", "episode": episode.get("id"),
           "trivial": bool(episode.get("trivial"))}
    later(_launch_learning, run, job)


def _launch_learning(run: _Run, job: dict[str, Any]) -> None:
    from sophia.hooks import after_session

    try:
        run.report["learning"] = after_session.launch(run.home, job)
    except (OSError, NotImplementedError) as exc:  # NotImplementedError: no setsid in this posix_spawn
        run.report["learning"] = None
        log(f"session_end: cannot launch the after-session learning: {exc}", run.home)


def _write_state(p: Path, state: dict[str, Any]) -> None:
    """The session state is a cache (rebuilt if lost): atomic rename, but no fsync on every turn."""
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, json.dumps(state, ensure_ascii=False, default=str).encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, p)


def _signature(obj: dict[str, Any], volatile: tuple[str, ...]) -> str:
    data = json.dumps({k: v for k, v in obj.items() if k not in volatile}, sort_keys=True, default=str)
    return f"{zlib.crc32(data.encode('utf-8')):08x}{len(data):x}"


def _carry(prior: dict[str, Any]) -> dict[str, Any]:
    keys = ("actions", "tool_call_count", "files_touched", "errors", "started_at", "goal", "heuristics",
            "consolidated")
    return {k: prior.get(k) for k in keys if k in prior}


def main() -> None:
    payload = read_payload()
    if not payload:
        return
    process(payload)


def cli() -> None:
    run("session_end", main)


if __name__ == "__main__":
    cli()
