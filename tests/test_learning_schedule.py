"""The automatic consolidation (learning.schedule): one job after ``consolidation_min_episodes`` new
episodes, at most once a day, never while one waits; recorded atomically so two sessions ending
together queue one. Real files, real locks, real processes for the race."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB
from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.episode_store import upsert_index_entries
from sophia.learning import queue, schedule
from sophia.state import init_tree
from sophia.timeutil import iso

DAY = 86400.0
CFG = {"learning_enabled": True, "consolidation_min_episodes": 3}


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree()
    return sophia_home


def episodes(home: Path, n: int, at: float, start: int = 0, **kw: Any) -> None:
    from datetime import UTC, datetime

    upsert_index_entries([{"id": f"ep_{start + i:04d}", "timestamp": iso(datetime.fromtimestamp(at + i, UTC)),
                           "trivial": False, "consolidated": False, **kw} for i in range(n)], home)


def consolidation_jobs(home: Path) -> list[dict[str, Any]]:
    return [j for j in queue.jobs(home) if j.get("kind") == "consolidation"]


def test_queued_once_enough_new_episodes_then_not_again_the_same_day(home: Path) -> None:
    t0 = time.time()
    episodes(home, 2, t0 - 3600)
    episodes(home, 4, t0 - 3600, start=10, trivial=True)  # trivial sessions never count
    line, jid = schedule.maybe_enqueue_consolidation(home, CFG, now=t0)
    assert jid is None and "2 new episodes since the last one (consolidation_min_episodes = 3)" in line
    episodes(home, 1, t0 - 60, start=2)
    line, jid = schedule.maybe_enqueue_consolidation(home, CFG, now=t0)
    assert jid and line == f"consolidation {jid} queued"
    assert [(j["id"], j["state"]) for j in consolidation_jobs(home)] == [(jid, "pending")]
    assert read_json(schedule.state_path(home))["job"] == jid
    queue.move(home, consolidation_jobs(home)[0], "done")
    episodes(home, 5, t0, start=20)
    line, again = schedule.maybe_enqueue_consolidation(home, CFG, now=t0 + 3600)
    assert again is None and "queued 1.0 h ago, at most one a day" in line


def test_the_next_day_counts_only_episodes_since_the_last_one(home: Path) -> None:
    t0 = time.time() - 2 * DAY
    episodes(home, 3, t0 - 600)
    _, first = schedule.maybe_enqueue_consolidation(home, CFG, now=t0)
    assert first
    queue.move(home, consolidation_jobs(home)[0], "done")
    # the same three episodes, still unconsolidated (no cluster came of them), never trigger it again
    line, jid = schedule.maybe_enqueue_consolidation(home, CFG, now=t0 + DAY + 60)
    assert jid is None and "0 new episodes" in line
    episodes(home, 3, t0 + 3600, start=100)
    line, jid = schedule.maybe_enqueue_consolidation(home, CFG, now=t0 + DAY + 60)
    assert jid and jid != first, line
    assert len(consolidation_jobs(home)) == 2


def test_none_while_one_is_pending_even_if_the_record_is_lost(home: Path) -> None:
    t0 = time.time()
    episodes(home, 3, t0 - 600)
    _, jid = schedule.maybe_enqueue_consolidation(home, CFG, now=t0)
    schedule.state_path(home).unlink()
    line, again = schedule.maybe_enqueue_consolidation(home, CFG, now=t0 + 2 * DAY)
    assert again is None and f"{jid} is pending" in line


def test_learning_off_queues_nothing(home: Path) -> None:
    episodes(home, 10, time.time() - 600)
    line, jid = schedule.maybe_enqueue_consolidation(home, dict(CFG, learning_enabled=False))
    assert jid is None and "learning_enabled is false" in line and queue.jobs(home) == []
    assert not schedule.state_path(home).exists()


def test_consolidated_episodes_do_not_count(home: Path) -> None:
    episodes(home, 5, time.time() - 600, consolidated=True)
    _, jid = schedule.maybe_enqueue_consolidation(home, CFG)
    assert jid is None


def test_two_sessions_ending_together_queue_one(home: Path) -> None:
    episodes(home, 3, time.time() - 600)
    code = ("import json, sys; from pathlib import Path; from sophia.learning import schedule; "
            "print(schedule.maybe_enqueue_consolidation(Path(sys.argv[1]), json.loads(sys.argv[2]))[1])")
    env = dict(os.environ, PYTHONPATH=str(LIB))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(home), json.dumps(CFG)], env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert sorted(outs).count("None") == 3, outs
    assert len(consolidation_jobs(home)) == 1


def test_after_session_queues_the_digest_and_the_consolidation(home: Path, tmp_path: Path) -> None:
    """Through the after-session runner's digest step: the session's digest and the consolidation."""
    from sophia.hooks import after_session

    cfg = read_json(paths.config_path(home))
    cfg.update(learning_enabled=True, consolidation_min_episodes=3)
    write_json_atomic(paths.config_path(home), cfg)
    episodes(home, 3, time.time() - 600)
    project = tmp_path / "proj"
    project.mkdir()
    job = {"session": "s-c", "transcript": "", "project": str(project), "cwd": str(project), "episode": None,
           "trivial": False}
    line = after_session.digest(home, cfg, job, None)
    assert line.startswith("digest session_s-c pending; consolidation consolidation_") and "no worker" in line, line
    assert sorted(j["kind"] for j in queue.jobs(home)) == ["consolidation", "session"]
    line = after_session.digest(home, cfg, dict(job, session="s-d"), None)
    assert "no consolidation (the last one was queued 0.0 h ago" in line, line
