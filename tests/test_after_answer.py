"""What waits until a hook's answer is out: SessionEnd's fsyncs (``atomic.deferred_sync``) and its learners'
start (``runtime.later``), done by the resident hook runner after it sent the answer, and the learners' low
CPU priority (``runtime.background``). Real files, a real session's payloads, real child processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sophia import atomic, paths
from sophia.hooks import after_session, resident, runtime

FIX = Path(__file__).parent / "fixtures" / "lifecycle"


class Fsyncs:
    """Records the file each ``os.fsync`` is given (by /proc/self/fd; a write's temp file by the name it is
    renamed to), then fsyncs it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real = os.fsync

        def fsync(fd: int) -> None:
            folder, name = os.path.split(os.readlink(f"/proc/self/fd/{fd}"))
            if name.startswith(".") and name.endswith(".tmp"):  # .NAME.<pid>.<hex>.tmp
                name = name[1:].rsplit(".", 3)[0]
            self.paths.append(os.path.join(folder, name))
            real(fd)

        monkeypatch.setattr(os, "fsync", fsync)


def test_deferred_sync_puts_off_a_replace_not_a_new_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = tmp_path / "old.json", tmp_path / "sub" / "new.json"
    atomic.write_json_atomic(old, {"v": 1})
    seen = Fsyncs(monkeypatch)
    with atomic.deferred_sync() as later:
        atomic.write_json_atomic(old, {"v": 2}, keep_last=tmp_path / "old.bak")  # the backup is new
        atomic.write_json_atomic(new, {"v": 1})
        atomic.write_json_atomic(old, {"v": 3}, durable=False)  # never fsynced, so nothing put off
    assert later == [str(old)]
    assert json.loads(old.read_text()) == {"v": 3} and not list(tmp_path.glob(".*.tmp"))
    # the new files (and their folders) were fsynced at once; the replaced one was not
    assert seen.paths == [str(tmp_path / "old.bak"), str(tmp_path), str(new), str(new.parent)]
    seen.paths.clear()
    atomic.sync_files(later + [str(tmp_path / "gone.json")])  # a file gone since is skipped
    assert seen.paths == [str(old), str(tmp_path)]
    seen.paths.clear()
    atomic.write_json_atomic(old, {"v": 4})  # outside: at once again
    assert seen.paths == [str(old), str(tmp_path)]


def test_later_runs_now_outside_the_resident_and_after_inside(sophia_home: Path) -> None:
    done: list[str] = []
    runtime.later(done.append, "now")
    assert done == ["now"]
    with runtime.deferred() as work:
        runtime.later(done.append, "after")
        assert done == ["now"]
    runtime.later(done.append, "now again")  # the resident's scope ended
    assert done == ["now", "now again"]

    def boom() -> None:
        raise OSError("disk gone")

    runtime.run_later([(boom, ()), *work], "session_end")  # a failure is one log line; the rest still runs
    assert done[-1] == "after"
    assert "session_end: after the answer: OSError: disk gone" in (sophia_home / "logs" / "hooks.log").read_text()


def test_background_gives_a_learner_the_lowest_priority() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert os.getpriority(os.PRIO_PROCESS, child.pid) == os.getpriority(os.PRIO_PROCESS, 0)
        assert runtime.background(child.pid) == child.pid
        assert os.getpriority(os.PRIO_PROCESS, child.pid) == runtime.LEARNER_NICE
    finally:
        child.communicate(b"")
    assert runtime.background(None) is None
    # a process that is gone: nothing raised
    runtime.background(child.pid)


def test_after_session_launch_starts_the_learners_in_the_background(sophia_home: Path, tmp_path: Path) -> None:
    from sophia.state import init_tree

    init_tree()
    pid = after_session.launch(sophia_home, {"session": "nope", "transcript": "", "project": None, "cwd": "",
                                             "episode": None, "trivial": True})
    assert pid
    try:
        assert os.getpriority(os.PRIO_PROCESS, pid) == runtime.LEARNER_NICE  # a zombie still answers
    finally:
        os.waitpid(pid, 0)


@pytest.fixture
def session(sophia_home: Path, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A recorded session's Stop and SessionEnd payloads, its transcript in a project folder."""
    from sophia.state import init_tree

    init_tree()
    project = tmp_path / "proj"
    project.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text((FIX / "transcript_basic.jsonl").read_text().replace("@PROJECT@", str(project)))
    text = (FIX / "payloads.jsonl").read_text().replace("@PROJECT@", str(project)).replace("@TRANSCRIPT@",
                                                                                          str(transcript))
    ps = [json.loads(line) for line in text.splitlines() if line.strip()]
    return (next(p for p in ps if p["hook_event_name"] == "Stop"),
            next(p for p in ps if p["hook_event_name"] == "SessionEnd"))


def test_the_resident_answers_session_end_before_its_fsyncs_and_learners(
        sophia_home: Path, session: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In process, as the resident answers: the SessionEnd request returns its answer with the episode and
    models written but no fsync done and no learner started; both are what it hands back for after the answer,
    and doing that fsyncs every file it replaced and starts the learners once."""
    stop, end = session
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
    env.update(SOPHIA_HOME=str(sophia_home), SOPHIA_RECALL_SEMANTIC="0")
    pwd = str(tmp_path / "proj")
    code, _out, _err, work = resident.answer("session_end", pwd, env, json.dumps(stop).encode())
    assert code == 0 and work == []  # a turn puts nothing off
    cwd = os.getcwd()
    launched: list[dict[str, Any]] = []
    monkeypatch.setattr(after_session, "launch", lambda home, job: launched.append(job) or 1)
    seen = Fsyncs(monkeypatch)
    code, out, err, work = resident.answer("session_end", pwd, env, json.dumps(end).encode())
    os.chdir(cwd)
    assert (code, out, err) == (0, b"", b"")
    [episode] = paths.episodes_dir(sophia_home).glob("ep_*.json")
    assert json.loads(episode.read_text())["end_trigger"] == "session_end"  # written, not yet durable
    assert seen.paths == [] and launched == []
    runtime.run_later(work, "session_end")
    os.chdir(cwd)
    assert [j["session"] for j in launched] == [end["session_id"]]
    synced = set(seen.paths)
    backup = sophia_home / "backups" / "last" / "self_model.json"
    for f in (episode, paths.episode_index_path(sophia_home), paths.self_model_path(sophia_home), backup):
        assert str(f) in synced and str(f.parent) in synced, f


def test_the_resident_answers_session_start_before_it_starts_a_refresh(
        sophia_home: Path, session: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A new project's SessionStart starts Claude Code's memory refresh (and asks the team sync), but only once
    its answer is out: a process starting beside the hook would compete with it for the CPU. A one-shot run
    (no resident) starts it at once."""
    from sophia.memory import claude_code
    from sophia.team import launch

    started: list[tuple[str, str | None]] = []
    monkeypatch.setattr(claude_code, "start_refresh", lambda home, project: started.append(("cc", project)) or 1)
    monkeypatch.setattr(launch, "kick", lambda home, why: started.append(("team", why)) or False)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
    env.update(SOPHIA_HOME=str(sophia_home), SOPHIA_RECALL_SEMANTIC="0")
    pwd = str(tmp_path / "proj")
    payload = {"hook_event_name": "SessionStart", "session_id": "s-start", "source": "startup", "cwd": pwd}
    cwd = os.getcwd()
    code, _out, _err, work = resident.answer("session_start", pwd, env, json.dumps(payload).encode())
    os.chdir(cwd)
    assert code == 0 and started == [] and len(work) == 1
    runtime.run_later(work, "session_start")
    assert started == [("team", "session start"), ("cc", pwd)]
    started.clear()
    from sophia.hooks import session_start

    monkeypatch.setattr(runtime, "read_payload", lambda: payload)
    monkeypatch.setattr(session_start, "read_payload", lambda: payload)
    session_start.main()  # one-shot: at once
    assert started == [("team", "session start"), ("cc", pwd)]
