"""The state tree: init, atomic writes, locks, typed errors, doctor, migrations, index cap."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import time
from pathlib import Path

import pytest

from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.episode_store import MAX_INDEX_ENTRIES, archive_path, read_index, upsert_episode
from sophia.errors import LockTimeout, StateFileError
from sophia.locking import locked
from sophia.migrations import CURRENT, migrate
from sophia.models import TERMINAL_CREED, SelfModel
from sophia.state import check_tree, init_tree, load_model, repair_tree, update_model


def test_home_follows_env(sophia_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert paths.sophia_home() == sophia_home
    monkeypatch.delenv("SOPHIA_HOME")
    assert paths.sophia_home() == Path(os.environ["HOME"]) / ".sophia"


def test_init_creates_seed_tree_with_private_modes(sophia_home: Path) -> None:
    created = init_tree()
    for rel in ["config.json", "self_model.json", "user_models/default.json", "episodes/index.json",
                "semantic_rules.json"]:
        assert (sophia_home / rel).is_file(), rel
        assert rel in created
        assert stat.S_IMODE((sophia_home / rel).stat().st_mode) == 0o600
    for d in ["agent_results", "logs", "episodes", "user_models"]:
        assert stat.S_IMODE((sophia_home / d).stat().st_mode) == 0o700
    assert stat.S_IMODE(sophia_home.stat().st_mode) == 0o700
    sm = load_model(paths.self_model_path(), SelfModel)
    assert tuple(sm.terminal_creed) == TERMINAL_CREED


def test_init_is_idempotent_and_keeps_user_edits(sophia_home: Path) -> None:
    init_tree()
    sm = read_json(paths.self_model_path())
    sm["identity_goal"] = "Ship careful code"
    write_json_atomic(paths.self_model_path(), sm)
    assert init_tree() == []
    assert read_json(paths.self_model_path())["identity_goal"] == "Ship careful code"


def test_read_json_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"a": ')
    with pytest.raises(StateFileError) as ei:
        read_json(p)
    assert str(p) in str(ei.value) and "invalid JSON" in str(ei.value)
    p.write_text("")
    with pytest.raises(StateFileError, match="empty"):
        read_json(p)
    p.write_bytes(b"\xff\xfe{}")
    with pytest.raises(StateFileError, match="UTF-8"):
        read_json(p)


def test_schema_mismatch_is_a_typed_error(sophia_home: Path) -> None:
    init_tree()
    write_json_atomic(paths.self_model_path(), {"capabilities": {"x": {"proficiency": 7}}})
    with pytest.raises(StateFileError, match="capabilities.x.proficiency"):
        load_model(paths.self_model_path(), SelfModel)


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    p = tmp_path / "d" / "f.json"
    for i in range(20):
        write_json_atomic(p, {"i": i})
    assert read_json(p) == {"i": 19}
    assert [x.name for x in p.parent.iterdir()] == ["f.json"]
    assert stat.S_IMODE(p.stat().st_mode) == 0o600


def _hold(path: str, seconds: float, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    with locked(path):
        ready.set()
        time.sleep(seconds)


def test_lock_times_out_naming_file_and_holder(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    ready = multiprocessing.Event()
    proc = multiprocessing.Process(target=_hold, args=(str(target), 3, ready))
    proc.start()
    try:
        assert ready.wait(10)
        t0 = time.monotonic()
        with pytest.raises(LockTimeout) as ei, locked(target, timeout=0.3):
            pass
        assert 0.25 < time.monotonic() - t0 < 2
        assert str(target) in str(ei.value) and f"pid {proc.pid}" in str(ei.value)
    finally:
        proc.join()


def test_lock_of_killed_holder_is_free_at_once(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    ready = multiprocessing.Event()
    proc = multiprocessing.Process(target=_hold, args=(str(target), 60, ready))
    proc.start()
    assert ready.wait(10)
    proc.kill()
    proc.join()
    t0 = time.monotonic()
    with locked(target, timeout=5):
        pass
    assert time.monotonic() - t0 < 0.5


def test_update_model_writes_nothing_when_block_fails(sophia_home: Path) -> None:
    init_tree()
    before = paths.self_model_path().read_bytes()
    with pytest.raises(RuntimeError), update_model(paths.self_model_path(), SelfModel) as sm:
        sm.identity_goal = "changed"
        raise RuntimeError("boom")
    assert paths.self_model_path().read_bytes() == before


def test_doctor_quarantines_and_restores_last_good(sophia_home: Path) -> None:
    init_tree()
    with update_model(paths.self_model_path(), SelfModel) as sm:
        sm.identity_goal = "Remember me"
    paths.self_model_path().write_text("{ not json")
    problems = check_tree()
    assert [p.path for p in problems] == [paths.self_model_path()]
    fixed = repair_tree()
    assert "last good copy" in fixed[0].action
    assert load_model(paths.self_model_path(), SelfModel).identity_goal == "Remember me"
    q = list(paths.quarantine_dir().iterdir())
    assert len(q) == 1 and q[0].read_text() == "{ not json"
    assert check_tree() == []


def test_doctor_restores_default_without_good_copy(sophia_home: Path) -> None:
    init_tree()
    (sophia_home / "backups").exists() and __import__("shutil").rmtree(sophia_home / "backups")
    paths.rules_path().write_text('{"oops": 1}')
    fixed = repair_tree()
    assert "default" in fixed[0].action
    assert read_json(paths.rules_path()) == []


def test_migration_from_seed_tree_keeps_backup(sophia_home: Path) -> None:
    sophia_home.mkdir(parents=True)
    seed_cfg = {"schema_version": "1.0.0", "embedding_provider": "none", "embedding_model": "text-embedding-3-small",
                "reflection_trigger": "manual", "guardian_tier3_enabled": True, "consolidation_min_episodes": 5,
                "user_mode": "single", "current_user": "default"}
    write_json_atomic(paths.config_path(), seed_cfg)
    (sophia_home / "episodes").mkdir()
    write_json_atomic(paths.episode_index_path(), {"last_updated": "", "total_episodes": 0, "entries": []})
    init_tree()
    cfg = read_json(paths.config_path())
    assert cfg["schema_version"] == CURRENT
    assert cfg["guardian"]["mode"] == "enforce"
    assert "user_mode" not in cfg and "guardian_tier3_enabled" not in cfg  # 1.2.0: they did nothing
    assert cfg["embedding_model"] == "all-MiniLM-L6-v2" and cfg["embedding_provider"] == "none"
    assert read_json(paths.episode_index_path())["last_updated"] is None
    backups = list((sophia_home / "backups").glob("pre-migration-1.0.0-*"))
    assert backups and read_json(backups[0] / "config.json") == seed_cfg
    assert migrate(sophia_home) == []
    assert check_tree() == []


def _episode(i: int, year: int = 2026) -> dict:
    ts = f"{year}-01-01T00:00:00Z" if year != 2026 else f"2026-06-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
    return {"id": f"ep_{year}_{i:05d}", "session_id": f"s{i}", "started_at": ts, "ended_at": ts, "timestamp": ts,
            "goal_summary": f"task {i}", "outcome": "SUCCESS", "tool_call_count": 3, "keywords": []}


def test_index_is_capped_and_archived_by_year(sophia_home: Path) -> None:
    init_tree()
    for i in range(5):
        upsert_episode(_episode(i, year=2024))
    from sophia.episode_store import index_entry, upsert_index_entries

    upsert_index_entries([index_entry(_episode(i)) for i in range(MAX_INDEX_ENTRIES)])
    idx = read_index()
    assert len(idx["entries"]) == MAX_INDEX_ENTRIES
    assert idx["total_episodes"] == MAX_INDEX_ENTRIES + 5
    archived = read_json(archive_path("2024"))
    assert len(archived["entries"]) == 5
    assert (paths.episodes_dir() / "ep_2024_00001.json").exists()
    # idempotent upsert: same id twice changes nothing
    upsert_episode(_episode(3))
    assert read_index()["total_episodes"] == MAX_INDEX_ENTRIES + 5


def test_concurrent_index_upserts_lose_nothing(sophia_home: Path) -> None:
    init_tree()
    procs = [multiprocessing.Process(target=_upsert_many, args=(w,)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    idx = read_index()
    assert len({e["id"] for e in idx["entries"]}) == 40
    assert idx["total_episodes"] == 40


def _upsert_many(w: int) -> None:
    for i in range(10):
        upsert_episode(_episode(w * 100 + i))


def test_templates_parse(sophia_home: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    for name in ["config.json", "self_model.json"]:
        json.loads((root / "templates" / name).read_text())
    assert "{{TERMINAL_CREED}}" in (root / "templates" / "CLAUDE.md.template").read_text()
