"""Concurrency and crash consistency, CI-sized (bench/stress.py runs the long loops).

Writers journal each operation after it returned; afterwards every acknowledged operation must be in
the files and every file must parse. The crash loop SIGKILLs writers at random moments (mid-write,
holding a lock) and checks the tree after every kill.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.stress import run_crash, run_stress  # noqa: E402

from conftest import run_s3  # noqa: E402
from sophia import paths  # noqa: E402
from sophia.errors import LockTimeout  # noqa: E402
from sophia.locking import locked  # noqa: E402
from sophia.state import init_tree  # noqa: E402

PY = sys.executable


@pytest.mark.slow
def test_32_mixed_writers_lose_nothing(tmp_path: Path) -> None:
    report = run_stress(writers=32, ops=6, base=tmp_path)
    assert report.ok(), report.to_json()
    assert report.operations_acked == 32 * 6
    assert report.files_checked >= 10
    assert report.max_lock_wait_s < 5


@pytest.mark.slow
def test_crash_loop_sigkill_never_leaves_a_broken_file(tmp_path: Path) -> None:
    report = run_crash(iterations=8, writers=3, max_alive=0.5, seed=7, base=tmp_path)
    assert report.ok(), report.to_json()
    assert report.iterations == 8 and report.kills >= 8
    assert report.operations_acked > 0
    # a dead holder leaves no lock: the next writer gets every lock at once (well under the 5 s limit)
    assert report.max_lock_wait_s < 1.0


_HOLD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from sophia.locking import locked
with locked(sys.argv[2], timeout=5):
    print("held", flush=True)
    time.sleep(60)
"""


def _holder(target: Path) -> subprocess.Popen[str]:
    """A hook-style holder: python -I -S, so it takes the lock through fcntl, not filelock."""
    proc = subprocess.Popen([PY, "-I", "-S", "-c", _HOLD, str(ROOT / "lib"), str(target)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_hook_holder_killed_frees_the_cli_lock_at_once(tmp_path: Path) -> None:
    target = tmp_path / "self_model.json"
    proc = _holder(target)
    try:
        # the CLI (filelock) and hooks (fcntl) exclude each other
        with pytest.raises(LockTimeout) as ei, locked(target, timeout=0.3):
            pass
        assert str(target) in str(ei.value) and str(proc.pid) in str(ei.value)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        t0 = time.monotonic()
        with locked(target, timeout=5):
            pass
        assert time.monotonic() - t0 < 0.5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def test_live_holder_blocks_no_longer_than_the_limit(tmp_path: Path) -> None:
    target = tmp_path / "rules.json"
    proc = _holder(target)
    try:
        t0 = time.monotonic()
        with pytest.raises(LockTimeout), locked(target, timeout=1.0):
            pass
        waited = time.monotonic() - t0
        assert 0.9 <= waited < 3.0
    finally:
        proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def test_doctor_cleans_up_after_interrupted_writes(sophia_home: Path, s3_env: dict[str, str]) -> None:
    init_tree()
    ed = paths.episodes_dir()
    stale = ed / ".index.json.abc123.tmp"
    stale.write_text('{"half": ')
    old = time.time() - 3600
    os.utime(stale, (old, old))
    fresh = ed / ".index.json.live.tmp"  # a live writer's: too young to touch
    fresh.write_text("{")
    ep = {"id": "ep_orphan", "session_id": "s1", "started_at": "2025-01-01T00:00:00Z",
          "ended_at": "2025-01-01T00:10:00Z", "goal_summary": "written before a SIGKILL"}
    (ed / "ep_orphan.json").write_text(json.dumps(ep))

    r = run_s3(["doctor"], s3_env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "temp file" in r.stdout and "missing from the index" in r.stdout
    r = run_s3(["doctor", "--repair"], s3_env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not stale.exists() and fresh.exists()
    idx = json.loads(paths.episode_index_path().read_text())
    assert "ep_orphan" in [e["id"] for e in idx["entries"]]
    fresh.unlink()
    r = run_s3(["doctor"], s3_env)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_8_processes_x_25_learn_keep_exactly_200_rules(tmp_path: Path) -> None:
    """The CLI's `learn` command, 25 times in each of 8 concurrent processes (invoked in-process after a fork,
    so CI stays fast; bench/stress.py learn runs 200 real `s3 learn` subprocesses)."""
    from bench.stress import run_learn

    res = run_learn(8, 25, real=False, base=tmp_path)
    assert res["failed_calls"] == 0, res
    assert res["rules"] == res["distinct_ids"] == 200, res
    assert res["bad_files"] == [], res


@pytest.mark.slow
def test_concurrent_real_s3_learn_subprocesses(tmp_path: Path) -> None:
    from bench.stress import run_learn

    res = run_learn(8, 2, real=True, base=tmp_path)
    assert res["failed_calls"] == 0 and res["rules"] == res["distinct_ids"] == 16, res
