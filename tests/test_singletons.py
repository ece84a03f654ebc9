"""Background helpers never multiply: one detached reflection per home (pidfile + lock), however many
session ends race to start it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

import procs
from conftest import wait_for
from sophia.state import init_tree


def test_detached_reflection_never_multiplies(sophia_home: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from sophia.episode_store import upsert_episode
    from sophia.hooks import reflection
    init_tree()
    upsert_episode({"id": "ep_race", "session_id": "s1", "goal": "Race"})  # a run starts only for an episode
    calls = tmp_path / "claude_calls"
    fake = tmp_path / "claude"
    fake.write_text(f"#!/usr/bin/env bash\necho $$ >> {calls}\nsleep 2\necho '{{}}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SOPHIA_CLAUDE_BIN", str(fake))

    pids: list[int | None] = []
    barrier = threading.Barrier(8)

    def race() -> None:
        barrier.wait()
        pids.append(reflection.launch(sophia_home, ["ep_race"]))

    threads = [threading.Thread(target=race) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    started = [p for p in pids if p]
    assert started, pids
    assert wait_for(lambda: reflection.running(sophia_home), 10)  # a loaded machine may start it late
    assert reflection.launch(sophia_home, ["ep_again"]) is None  # one is running: nothing new starts
    deadline = time.monotonic() + 30
    while procs.pids_with_home(sophia_home) and time.monotonic() < deadline:
        time.sleep(0.1)
    for p in started:  # reap our children (the runners exited)
        try:
            os.waitpid(p, 0)
        except ChildProcessError:
            pass
    assert procs.pids_with_home(sophia_home) == []
    assert len(calls.read_text().split()) == 1, "more than one reflection ran claude"
    assert not (sophia_home / "run" / "reflection.pid").exists()



def test_embedding_spawn_storm_starts_one_service_and_a_killed_one_blocks_nothing(sophia_home: Path) -> None:
    """Eight hooks asking for recall at once (service cold) start one embedding service, not eight; a
    SIGKILLed service leaves no lock behind: the next one starts at once."""
    import json
    import signal
    import subprocess
    import sys

    from embed_helpers import kill_services, service_pids
    from sophia.embed_client import client, protocol

    sophia_home.mkdir(parents=True, mode=0o700)
    (sophia_home / "config.json").write_text(json.dumps({"embedding_provider": "local",
                                                         "embedding_idle_seconds": 30}))
    try:
        barrier = threading.Barrier(8)
        answers: list[object] = []

        def ask() -> None:
            barrier.wait()
            answers.append(client.search("anything", 3, home=sophia_home, timeout=0.5))

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert answers == [None] * 8  # cold: every caller answered at once, from the keyword tier
        deadline = time.monotonic() + 10
        while not service_pids(sophia_home) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        assert len(service_pids(sophia_home)) == 1, service_pids(sophia_home)

        victim = service_pids(sophia_home)[0]
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while victim in service_pids(sophia_home) and time.monotonic() < deadline:
            time.sleep(0.05)
        env = {**os.environ, "PYTHONPATH": str(Path(client.__file__).resolve().parents[2])}
        with open(protocol.log_path(sophia_home), "a") as logf:
            proc = subprocess.Popen([sys.executable, "-m", "sophia.embed.service", "--home", str(sophia_home)],
                                    env=env, stdout=logf, stderr=logf)
        deadline = time.monotonic() + 20
        log = protocol.log_path(sophia_home)
        while log.read_text().count("starting for") < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert log.read_text().count("starting for") == 2, log.read_text()[-2000:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        kill_services(sophia_home)
