"""Team memory through a real PostgreSQL + pgvector: machines as separate SOPHIA_HOMEs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sophia.team import config, run, schema

from .helpers import all_text, learn, s3, s3_json


def _sync(m: Any, push: bool = True, pull: bool = True) -> dict[str, Any]:
    return run.sync(m.home, m.cfg, push=push, pull=pull)


def _rules(home: Path) -> dict[str, dict[str, Any]]:
    from sophia.memory.rules import load_rules

    return {r["id"]: r for r in load_rules(home)}


def _joined(machines: Any, n: int) -> list[Any]:
    ms = machines(n)
    for m in ms:
        p = s3(m, "team", "init", m.cfg["url"], "--team", m.team, "--json")
        assert p.returncode == 0, p.stderr
        m.cfg = config.load(m.home) | {"machine": m.name}
    return ms


def test_a_url_with_a_password_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with pytest.raises(config.TeamConfigError, match="carries a password"):
        config.check_url("postgresql://alice:hunter2@db.example/team")
    assert config.check_url("postgresql://alice@db.example:5432/team")
    from .conftest import Machine

    m = Machine(tmp_path / "h", "m", "x", "pw")
    p = s3(m, "team", "init", "postgresql://alice:hunter2@127.0.0.1/team")
    assert p.returncode == 2 and "carries a password" in p.stderr and "Traceback" not in p.stderr
    assert not (m.home / "config.json").exists() or "hunter2" not in (m.home / "config.json").read_text()


def test_a_password_file_readable_by_others_is_refused(sophia_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.PASSWORD_ENV, raising=False)
    f = config.password_file(sophia_home)
    f.parent.mkdir(parents=True)
    f.write_text("pw\n")
    f.chmod(0o644)
    with pytest.raises(config.TeamConfigError, match="readable by others"):
        config.password(sophia_home)
    f.chmod(0o600)
    assert config.password(sophia_home) == "pw"


def test_migrations_are_ordered_recorded_and_applied_once(team_db: str, pg_server: Any) -> None:
    import psycopg

    from .pg import ADMIN_PASSWORD

    with psycopg.connect(team_db, password=ADMIN_PASSWORD, autocommit=True) as c:
        assert schema.migrate(c) == [n for n, _ in schema.MIGRATIONS]
        assert schema.migrate(c) == []
        assert schema.applied(c) == sorted(n for n, _ in schema.MIGRATIONS)
        idx = {r[0]: r[1] for r in c.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'sophia'")}
        assert "hnsw" in idx["memories_embedding"] and "gin" in idx["memories_tsv"]


def test_a_rule_learned_on_one_machine_is_recalled_on_the_other(machines: Any) -> None:
    a, b = _joined(machines, 2)
    rule = learn(a.home, "Run alembic upgrade head before the integration tests", "Databases")
    assert s3_json(a, "team", "push")["push"]["pushed"] == 1
    team_hit = s3_json(b, "recall", "--team", "alembic integration")["results"]
    assert [r["id"] for r in team_hit] == [rule["id"]] and team_hit[0]["team"] == "alpha"
    assert s3_json(b, "team", "pull")["pull"]["applied"] == 1
    local = s3_json(b, "recall", "alembic integration")["results"]
    assert [r["id"] for r in local] == [rule["id"]]
    assert _rules(b.home)[rule["id"]]["rule_content"] == rule["rule_content"]
    st = s3_json(b, "team", "status")
    assert st["online"] and st["items"] == 1 and st["last_sync"]["ok"]


def test_confidence_is_merged_not_overwritten(machines: Any) -> None:
    from sophia.memory.rules import update_rules

    a, b = _joined(machines, 2)
    rule = learn(a.home, "Pin the docker base image by digest", "Docker", confidence=0.5)
    _sync(a), _sync(b)
    with update_rules(b.home) as rules:
        rules[0]["confidence"] = 0.9  # validated on b
    with update_rules(a.home) as rules:
        rules[0]["confidence"] = 0.4  # decayed on a
    _sync(b), _sync(a), _sync(b)
    assert _rules(a.home)[rule["id"]]["confidence"] == pytest.approx(0.9)
    assert _rules(b.home)[rule["id"]]["confidence"] == pytest.approx(0.9)


def _forked(machines: Any, text_a: str, text_b: str) -> tuple[Any, Any, dict[str, Any]]:
    """Two machines that share a rule, then each edit it (not yet pushed): a fork in the making."""
    from sophia.memory.rules import update_rules

    a, b = _joined(machines, 2)
    rule = learn(a.home, "Use ruff for linting", "Python")
    _sync(a), _sync(b)
    for m, text in ((a, text_a), (b, text_b)):
        with update_rules(m.home) as rules:
            rules[0]["rule_content"] = text
    return a, b, rule


def test_the_same_id_edited_on_two_machines_leaves_a_conflict_record_and_the_newer_edit_wins(machines: Any) -> None:
    from sophia.memory.conflicts import load_records
    from sophia.memory.rules import update_rules

    a, b, rule = _forked(machines, "Use ruff for linting and formatting", "Use ruff and mypy before each commit")
    _sync(a, pull=False)
    _sync(b)  # b's edit is the newer one: it is active
    _sync(a)
    assert _rules(a.home)[rule["id"]]["rule_content"] == "Use ruff and mypy before each commit"
    recs = [r for r in load_records(a.home) if r.get("kept_id") == rule["id"]]
    assert len(recs) == 1 and recs[0]["resolution"] == "recency" and len(recs[0]["superseded_versions"]) == 1
    with update_rules(a.home) as rules:  # an edit after seeing both versions closes the fork
        rules[0]["rule_content"] = "Use ruff, then mypy"
    _sync(a), _sync(b)
    assert _rules(b.home)[rule["id"]]["rule_content"] == "Use ruff, then mypy"


def test_the_recency_rule_keeps_the_servers_clock_so_a_machine_running_a_day_ahead_does_not_win(
        machines: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import timedelta

    from sophia import timeutil

    a, b, rule = _forked(machines, "Use black for formatting", "Use ruff format for formatting")
    real_now = timeutil.now
    with monkeypatch.context() as mp:  # a's clock runs a day ahead while it pushes its edit
        mp.setattr(timeutil, "now", lambda: real_now() + timedelta(days=1))
        _sync(a, pull=False)
    _sync(b)  # b pushes later: b's edit is the newer one
    _sync(a)
    assert _rules(a.home)[rule["id"]]["rule_content"] == "Use ruff format for formatting"
    assert _rules(b.home)[rule["id"]]["rule_content"] == "Use ruff format for formatting"


def test_deletes_travel_as_tombstones_and_a_pull_keeps_what_was_never_shared(machines: Any) -> None:
    from sophia.memory.rules import update_rules

    a, b = _joined(machines, 2)
    shared = learn(a.home, "Never force-push to main", "Git")
    _sync(a), _sync(b)
    b.cfg["private_projects"] = ["/secret/project"]
    mine = learn(b.home, "Local only: a rule learned after the last sync", "Notes")
    with update_rules(a.home) as rules:
        rules[:] = []
    assert _sync(a)["push"]["tombstones"] == 1
    out = _sync(b, push=False)
    assert out["pull"]["deleted"] == 1
    assert shared["id"] not in _rules(b.home) and mine["id"] in _rules(b.home)
    assert mine["id"] not in _rules(a.home)  # not pushed yet
    _sync(b), _sync(a, push=False)
    assert mine["id"] in _rules(a.home)


def test_guardian_patterns_and_project_facts_are_shared_private_projects_are_not(machines: Any) -> None:
    from sophia.kinds import make_item
    from sophia.memory.files import update_items

    a, b = _joined(machines, 2)
    a.cfg["private_projects"] = ["/work/private"]
    (a.home / "config.json").write_text(json.dumps(
        json.loads((a.home / "config.json").read_text()) | {"guardian": {"deny": ["terraform destroy"], "allow": []}}))
    with update_items("facts", a.home) as items:
        items.append(make_item("fact_shared00001", "fact", "The API serves on port 8080", project="/work/api"))
        items.append(make_item("fact_private0001", "fact", "The private box is called zeus", project="/work/private"))
        items.append(make_item("fact_user0000001", "fact", "The user likes tea"))
    _sync(a), _sync(b)
    cfg_b = json.loads((b.home / "config.json").read_text())
    assert cfg_b["guardian"]["deny"] == ["terraform destroy"]
    from sophia.memory.files import load_items

    assert [i["id"] for i in load_items("facts", b.home)] == ["fact_shared00001"]
    s = s3(b, "guardian", "check", "-c", "terraform destroy -auto-approve")
    assert s.returncode == 4, s.stdout + s.stderr  # the pulled deny pattern decides on b


def test_a_planted_secret_never_reaches_the_database(machines: Any, pg_server: Any) -> None:
    a, = _joined(machines, 1)
    learn(a.home, "Deploys read the token from the vault", "Deploy")
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    learn(a.home, f"Use GITHUB_TOKEN={token} for the release job", "Release")
    p = s3(a, "team", "push")
    assert p.returncode == 1 and "looks like a secret" in p.stderr and "nothing was uploaded" in p.stderr
    import psycopg

    from .pg import ADMIN_PASSWORD

    with psycopg.connect(a.cfg["url"], password=ADMIN_PASSWORD, autocommit=True) as c:
        text = all_text(c)
    assert token not in text and "A1b2C3d4" not in text
    assert "vault" not in text  # refused whole: not even the clean rule went up


def test_team_recall_finds_by_meaning_through_pgvector(machines: Any) -> None:
    """A rule's local vector (what the embedding service wrote to index.db) is pushed with it; a query
    vector near it finds it through the HNSW index even with no word in common."""
    import sqlite3
    from array import array

    from sophia.index.db import connect
    from sophia.team import db, recall

    a, = _joined(machines, 1)
    rule = learn(a.home, "Rotate the signing keys every quarter", "Security")
    other = learn(a.home, "Prefer small pull requests", "Review")
    dim = schema.EMBED_DIM
    vec = [0.0] * dim
    vec[5] = 1.0
    far = [0.0] * dim
    far[9] = 1.0
    conn = connect(a.home)
    try:
        for iid, v in ((rule["id"], vec), (other["id"], far)):
            conn.execute("INSERT OR REPLACE INTO vectors (item_id, content_hash, model, dim, vec) VALUES (?,?,?,?,?)",
                         (iid, "h", "m", dim, sqlite3.Binary(array("f", v).tobytes())))
    finally:
        conn.close()
    _sync(a)
    with db.connect(a.cfg, a.home) as pg:
        hits = recall.team_results(pg, "alpha", "cryptography hygiene", limit=5, vector=vec)
    assert [h["id"] for h in hits][:1] == [rule["id"]] and hits[0]["relevance"] == 1.0


def test_episodes_are_shared_only_for_projects_opted_in(machines: Any) -> None:
    from sophia.episode_store import read_index, upsert_episode

    a, b = _joined(machines, 2)
    a.cfg["share_episodes"] = ["/work/shared-app"]
    for eid, project in (("ep_shared0001", "/work/shared-app"), ("ep_mine000001", "/work/other")):
        upsert_episode({"id": eid, "project": project, "goal_summary": f"fix the flaky login test in {project}",
                        "outcome": "SUCCESS", "timestamp": "2026-02-01T10:00:00Z", "actions": []}, a.home)
    _sync(a), _sync(b)
    assert [e["id"] for e in read_index(b.home)["entries"]] == ["ep_shared0001"]
    assert [r["id"] for r in s3_json(b, "recall", "flaky login")["results"]] == ["ep_shared0001"]
    a.cfg["share_episodes"] = []  # opting out later shares nothing more and deletes nothing anywhere
    assert _sync(a)["push"] == {"pushed": 0, "tombstones": 0}
