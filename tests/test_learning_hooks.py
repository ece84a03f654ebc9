"""The learning loop wired into the hooks: the real hooks/session_end.sh and session_start.sh fed real
payloads. SessionEnd launches the after-session learning detached (zero-token lessons always; a
digest job and one worker when learning is on and the project did not opt out); the next
SessionStart shows the project's fixes and a line when digests are parked.

The `claude` the worker runs is the test double of tests/test_digest_queue.py (on SOPHIA_CLAUDE_BIN):
what is under test is the wiring, not the model. Every test waits for the detached work it started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB, ROOT, set_config, tool_call_lines, wait_for
from sophia import paths
from sophia.learning import queue
from sophia.locking import locked
from sophia.state import init_tree
from test_digest_queue import fake_claude


@pytest.fixture
def home(sophia_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    init_tree()
    set_config(sophia_home, embedding_provider="none")
    monkeypatch.setenv("SOPHIA_DIGEST_PROMPTS", str(fake_claude(tmp_path, monkeypatch)))
    return sophia_home


def transcript(tmp_path: Path, project: Path, name: str) -> Path:
    """A session that runs `pytest -q`, sees it fail, edits a file, runs it again and passes."""
    lines: list[dict[str, Any]] = [{"type": "user", "cwd": str(project), "sessionId": name,
                                    "timestamp": "2026-11-20T10:00:00.000Z",
                                    "message": {"role": "user", "content": "make the tests pass"}}]

    def call(i: int, tool: str, inp: dict[str, Any], result: str, error: bool) -> None:
        lines.extend(tool_call_lines(project, i, tool, inp, result, error))

    call(1, "Bash", {"command": "pytest -q"}, "Exit code 1\nE   ModuleNotFoundError: No module named 'widgets'", True)
    call(2, "Edit", {"file_path": f"{project}/src/widgets.py", "old_string": "a", "new_string": "b"}, "ok", False)
    call(3, "Bash", {"command": "pytest -q --import-mode=importlib"}, "3 passed in 0.1s", False)
    lines.append({"type": "assistant", "cwd": str(project), "timestamp": "2026-11-20T10:00:09.000Z",
                  "message": {"role": "assistant", "content": [{"type": "text", "text": "The tests pass now."}]}})
    p = tmp_path / f"{name}.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def hook_env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home.parent), "SOPHIA_HOME": str(home), "SOPHIA_PYTHON": sys.executable}


def run_hook(script: str, payload: dict[str, Any], home: Path) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["bash", str(ROOT / "hooks" / script)], input=json.dumps(payload), env=hook_env(home),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    return r


def end_payload(sid: str, t: Path, project: Path) -> dict[str, Any]:
    return {"session_id": sid, "transcript_path": str(t), "cwd": str(project), "hook_event_name": "SessionEnd",
            "reason": "other"}


def learning_log(home: Path) -> list[str]:
    p = paths.logs_dir(home) / "learning.log"
    return p.read_text().splitlines() if p.exists() else []


def digest_log(home: Path) -> list[str]:
    p = paths.logs_dir(home) / "digest.log"
    return p.read_text().splitlines() if p.exists() else []


def wait_learned(home: Path, n: int) -> list[str]:
    assert wait_for(lambda: len(learning_log(home)) >= n, 60), learning_log(home)
    return learning_log(home)


def wait_worker_gone(home: Path) -> None:
    assert wait_for(lambda: not queue.worker_running(home), 90), digest_log(home)


def project_dir(tmp_path: Path, name: str = "proj") -> Path:
    p = tmp_path / name
    p.mkdir()
    return p


def test_session_end_learns_the_fix_and_the_next_session_start_shows_it(home: Path, tmp_path: Path,
                                                                        s3_env: dict[str, str]) -> None:
    project = project_dir(tmp_path)
    run_hook("session_end.sh", end_payload("s-one", transcript(tmp_path, project, "s-one"), project), home)
    log = wait_learned(home, 1)
    assert "1 fixes, 1 procedures" in log[0] and "no digest (learning_enabled is false)" in log[0], log
    assert not (home / "digests" / "pending").exists() or not list((home / "digests" / "pending").iterdir())

    from conftest import run_s3

    r = run_s3(["recall", "ModuleNotFoundError widgets pytest", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    assert "`pytest -q --import-mode=importlib` worked" in r.stdout and '"category": "error_fix"' in r.stdout, r.stdout

    start = run_hook("session_start.sh", {"session_id": "s-two", "cwd": str(project),
                                           "hook_event_name": "SessionStart", "source": "startup"}, home)
    ctx = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "when `pytest -q` fails with `E ModuleNotFoundError: No module named 'widgets'`, " \
           "`pytest -q --import-mode=importlib` worked (after `edit widgets.py`)" in ctx, ctx
    assert "digests parked" not in ctx


def test_learning_on_two_sessions_ending_together_enqueue_two_jobs_and_start_one_worker(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_config(home, learning_enabled=True)
    monkeypatch.setenv("FAKE_SLEEP", "1")  # each model call takes a second: the worker is alive when both end
    project = project_dir(tmp_path)
    procs = []
    # Both runners reach the worker start at the same instant: the test holds the start lock until
    # both jobs are queued, then lets them race for it.
    with locked(queue.start_lock_path(home), timeout=5):
        for sid in ("s-a", "s-b"):
            payload = end_payload(sid, transcript(tmp_path, project, sid), project)
            procs.append(subprocess.Popen(["bash", str(ROOT / "hooks" / "session_end.sh")], stdin=subprocess.PIPE,
                                          env=hook_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
            procs[-1].stdin.write(json.dumps(payload))  # type: ignore[union-attr]
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0 and not err, err
        assert wait_for(lambda: len(queue.jobs(home, ("pending",))) == 2, 60), queue.jobs(home)
        assert learning_log(home) == []  # both wait on the start lock
    log = wait_learned(home, 2)
    assert all("pending;" in line for line in log), log
    assert wait_for(lambda: any("digest worker stops" in x for x in digest_log(home)), 90), digest_log(home)
    wait_worker_gone(home)
    assert {(j["id"], j["state"]) for j in queue.jobs(home)} == {("session_s-a", "done"), ("session_s-b", "done")}
    assert sum("worker started" in line for line in log) == 1, log
    stops = [x for x in digest_log(home) if "digest worker stops" in x]
    assert len(stops) == 1 and "another digest worker" not in stops[0], digest_log(home)


def test_opted_out_project_enqueues_nothing(home: Path, tmp_path: Path) -> None:
    set_config(home, learning_enabled=True)
    by_file, by_list = project_dir(tmp_path, "by_file"), project_dir(tmp_path, "by_list")
    (by_file / ".sophia-no-learning").write_text("")
    set_config(home, learning_exclude_projects=[str(by_list)])
    for sid, project in (("s-file", by_file), ("s-list", by_list)):
        run_hook("session_end.sh", end_payload(sid, transcript(tmp_path, project, sid), project), home)
    log = wait_learned(home, 2)
    assert any(".sophia-no-learning in the project" in x for x in log), log
    assert any("listed in learning_exclude_projects" in x for x in log), log
    assert all("1 procedures" in x for x in log), log  # the zero-token lessons are still learned
    assert queue.jobs(home) == [] and not queue.worker_running(home) and digest_log(home) == []


def test_learning_off_enqueues_nothing_and_starts_no_worker(home: Path, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    run_hook("session_end.sh", end_payload("s-off", transcript(tmp_path, project, "s-off"), project), home)
    log = wait_learned(home, 1)
    assert "no digest (learning_enabled is false)" in log[0], log
    assert queue.jobs(home) == [] and digest_log(home) == []


def test_the_pydantic_probe_never_runs_code_from_the_project(home: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook runs in the user's project: a pydantic.py there must not be what the probe imports."""
    from sophia.hooks import after_session

    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "ran"
    (project / "pydantic.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("SOPHIA_PYTHON", sys.executable)
    assert after_session.worker_python(home) == sys.executable
    assert not marker.exists()


def test_no_python_with_pydantic_leaves_the_job_pending(home: Path, tmp_path: Path) -> None:
    """The runner launched by a Python without pydantic, with no other one found: one line, job pending."""
    from sophia.hooks import after_session

    set_config(home, learning_enabled=True)
    project = project_dir(tmp_path)
    job = {"session": "s-nopy", "transcript": "", "project": str(project), "cwd": str(project),
           "episode": None, "trivial": False}
    line = after_session.digest(home, {"learning_enabled": True}, job, None)
    assert "pending;" in line and "no worker: no Python with pydantic" in line, line
    assert [j["state"] for j in queue.jobs(home)] == ["pending"] and not queue.worker_running(home)


def test_session_start_says_when_digests_are_parked(home: Path, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    for sid in ("p1", "p2"):
        _, job = queue.enqueue(home, sid)
        queue.move(home, job, "parked", reason="not logged in")
    start = run_hook("session_start.sh", {"session_id": "s", "cwd": str(project), "hook_event_name": "SessionStart",
                                           "source": "startup"}, home)
    ctx = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "2 digests parked: run `s3 digest list`" in ctx, ctx


def test_after_session_runner_runs_from_the_hook_interpreter(home: Path, tmp_path: Path) -> None:
    """Started under -I -S (no pydantic), the runner re-executes itself in a Python that has it."""
    project = project_dir(tmp_path)
    t = transcript(tmp_path, project, "s-x")
    job = {"session": "s-x", "transcript": str(t), "project": str(project), "cwd": str(project),
           "episode": None, "trivial": False}
    env = {**os.environ, "SOPHIA_HOME": str(home), "SOPHIA_PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-I", "-S", str(LIB / "sophia" / "hooks" / "after_session.py"),
                        json.dumps(job)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "1 procedures" in r.stdout, (r.stdout, r.stderr)


def test_learning_on_the_old_reflection_trigger_never_reflects_a_second_time(home: Path, tmp_path: Path) -> None:
    """With learning on, the digest's stage 2 reflects on the session: reflection_trigger launches nothing."""
    from sophia.hooks import reflection

    set_config(home, learning_enabled=True, reflection_trigger="on_session_end")
    project = project_dir(tmp_path)
    r = subprocess.run(["bash", str(ROOT / "hooks" / "session_end.sh")], text=True, capture_output=True,
                       input=json.dumps(end_payload("s-r", transcript(tmp_path, project, "s-r"), project)),
                       env=hook_env(home), timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert "pending;" in wait_learned(home, 1)[0]
    wait_worker_gone(home)
    assert [(j["id"], j["state"]) for j in queue.jobs(home)] == [("session_s-r", "done")]
    assert not (paths.logs_dir(home) / "reflection.log").exists()
    hooks_log = paths.logs_dir(home) / "hooks.log"
    assert "reflection launched" not in (hooks_log.read_text() if hooks_log.exists() else "")
    cfg = {"learning_enabled": True, "reflection_trigger": "after_n_episodes", "reflection_every_n_episodes": 1}
    assert reflection.episodes_to_reflect(home, cfg, {"id": "ep_1", "trivial": False}) == []
    assert reflection.episodes_to_reflect(home, dict(cfg, learning_enabled=False),
                                          {"id": "ep_1", "trivial": False}) == ["ep_1"]
