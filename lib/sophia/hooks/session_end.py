"""Stop and SessionEnd: turn the session into an episode. ``python -I -S session_end.py``.

Stop fires after EVERY assistant turn: each run upserts the session's one episode (stable
id, idempotent), reading only what the transcript gained since the last run. SessionEnd
finalises it (``end_trigger: session_end``), rotates old buffers and, if the user opted in,
launches a detached reflection. Nothing here waits on anything slow.

Per-session state lives next to the buffer: ``buffers/<session>.state.json`` (transcript
offset, episode id, what was already counted).
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))))

import json
import os
import re
import time
import zlib
from pathlib import Path
from typing import Any

from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.errors import SophiaError
from sophia.hooks import episode as episode_mod
from sophia.hooks import transcript as transcript_mod
from sophia.hooks.project import git_info, project_of
from sophia.hooks.runtime import load_config, log, read_payload, run
from sophia.locking import locked
from sophia.timeutil import iso

ROTATE_AFTER_DAYS = 14
SEARCHED = ("goal_summary", "goal", "error_analysis", "heuristics", "keywords", "errors", "outcome", "trivial",
            "project", "git_branch")
MAX_BUFFER_BYTES = 16 * 1024 * 1024
_SID = re.compile(r"[^A-Za-z0-9_-]")


def safe_session(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    sid = _SID.sub("", value[:128])
    return sid or None


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
    from sophia.index import db, store  # lazily: only when the episode changed
    from sophia.kinds import episode_item

    conn = db.connect(home)
    try:
        store.upsert_items(conn, [episode_item(ep)])
    finally:
        conn.close()
    return "indexed"


def rotate_buffers(home: Path, now: float | None = None, days: int = ROTATE_AFTER_DAYS) -> int:
    """Delete buffers and session states untouched for ``days`` (their episodes stay)."""
    limit = (now or time.time()) - days * 86400
    removed = 0
    try:
        entries = list(os.scandir(paths.buffers_dir(home)))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.endswith((".jsonl", ".state.json", ".state.json.lock")):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < limit:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def process(payload: dict[str, Any], home: Path | None = None) -> dict[str, Any]:
    """Do the work for one Stop / SessionEnd payload. Returns a small report (for tests/logs)."""
    event = payload.get("hook_event_name")
    if event not in ("Stop", "SessionEnd"):
        return {"skipped": f"event {event!r}"}
    if event == "Stop" and payload.get("stop_hook_active") is True:
        return {"skipped": "stop_hook_active"}
    sid = safe_session(payload.get("session_id"))
    if not sid:
        return {"skipped": "no session_id"}
    home = home or paths.sophia_home()
    final = event == "SessionEnd"
    cfg = load_config(home)
    report: dict[str, Any] = {"session": sid, "event": event}
    sp = state_file(home, sid)
    episode: dict[str, Any] | None = None
    new_episode = False
    with locked(sp, timeout=1.0):
        state = _load_state(sp)
        transcript_path = payload.get("transcript_path") if isinstance(payload.get("transcript_path"), str) else None
        tstate, new_prompts = transcript_mod.update(state.get("transcript"), transcript_path, final=final)
        state["transcript"] = tstate
        buffer = read_buffer_file(buffer_path(home, sid))
        now = iso()
        new_session = not state.get("session_counted")
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else tstate.get("cwd")
        if "project" not in state:
            state["project"] = project_of(cwd)
        project = state.get("project")

        episode_id = state.get("episode_id")
        if not episode_id and buffer:
            found = _find_episode_id(home, sid)
            if found:
                prior = _existing_episode(home, found)
                state["carry"] = _carry(prior) if prior else {}
                episode_id = found
            else:
                times = [t for t in (tstate.get("first_ts"), buffer[0].get("ts")) if isinstance(t, str) and t]
                episode_id = episode_mod.episode_id(sid, min(times) if times else now)
            state["episode_id"] = episode_id

        if episode_id and buffer:
            from sophia.episode_store import episode_path, index_entry, upsert_index_entries

            new_episode = not episode_path(episode_id, home).exists()
            branch, commit = git_info(project) if project else (None, None)
            extra: dict[str, Any] = {}
            if final and isinstance(payload.get("reason"), str):
                extra["end_reason"] = payload["reason"][:40]
            episode = episode_mod.build_episode(
                session_id=sid, episode_id=episode_id, buffer=buffer, transcript=tstate, now=now,
                end_trigger="session_end" if final else "stop_hook",
                last_message=payload.get("last_assistant_message") if isinstance(
                    payload.get("last_assistant_message"), str) else None,
                project=project, git_branch=branch, git_commit=commit, carry=state.get("carry"), extra=extra,
            )
            if state.get("ended_at"):  # a late Stop after SessionEnd keeps the final trigger
                episode["end_trigger"] = "session_end"
            # Stop fires after every turn: write only what changed. The episode file whenever its
            # content changed; the capped index.json (a 1000-entry rewrite) when the entry is new or
            # its summary changed (tool_call_count and timestamp are refreshed at SessionEnd).
            ep_sig = _signature(episode, ("ended_at", "timestamp"))
            entry = index_entry(episode)
            entry_sig = _signature(entry, ("timestamp", "tool_call_count"))
            changed = new_episode or final or ep_sig != state.get("episode_sig")
            if changed:
                write_json_atomic(episode_path(episode_id, home), episode)
                state["episode_sig"] = ep_sig
            if new_episode or final or entry_sig != state.get("entry_sig"):
                upsert_index_entries([entry], home)
                state["entry_sig"] = entry_sig
            report["episode"] = episode_id
            report["outcome"] = episode["outcome"]
            report["written"] = changed
            # The recall index (SQLite) only when what it searches or shows changed; always at the end.
            search_sig = _signature({k: episode.get(k) for k in SEARCHED}, ())
            if new_episode or final or search_sig != state.get("search_sig"):
                state["search_sig"] = search_sig
            else:
                episode = None

        from sophia.hooks import stats

        stats.update_self_model(home, new_session=new_session, new_episode=new_episode, stamp=final, now=now)
        state["session_counted"] = True
        topics = list(episode.get("keywords") or []) if episode else []
        if new_prompts or topics:
            stats.update_user_model(home, stats.safe_user_id(cfg), prompts=new_prompts, topics=topics, now=now)
        if final:
            state["ended_at"] = now
        _write_state(sp, state)

    if episode is not None:
        try:
            report["index"] = index_episode(home, episode)
        except Exception as exc:  # noqa: BLE001 - the index is derived; a rebuild repairs it
            report["index"] = f"failed: {type(exc).__name__}: {exc}"
            log(f"session_end: indexing {episode['id']} failed: {type(exc).__name__}: {exc}", home)
    if final:
        report["rotated"] = rotate_buffers(home)
        if episode is not None:
            from sophia.hooks import reflection

            ids = reflection.episodes_to_reflect(home, cfg, episode)
            if ids:
                pid = reflection.launch(home, ids)
                report["reflection"] = pid
                if pid:
                    log(f"session_end: reflection launched for {ids} (pid {pid})", home)
    return report


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
