"""Team memory under stress: row-level security between two roles, 8 concurrent pushes, SIGKILL in
the middle of a push, a stopped server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import psycopg
import pytest

from sophia.team import config, run, schema

from .helpers import ROOT, learn, s3, s3_json
from .pg import ADMIN_PASSWORD


def _admin(url: str) -> Any:
    return psycopg.connect(url, password=ADMIN_PASSWORD, autocommit=True)


def _joined(ms: list[Any]) -> list[Any]:
    for m in ms:
        p = s3(m, "team", "init", m.cfg["url"], "--team", m.team, "--json")
        assert p.returncode == 0, p.stderr
        m.cfg = config.load(m.home) | {"machine": m.name}
    return ms


def test_row_level_security_keeps_each_role_to_its_own_team(team_db: str, machines: Any) -> None:
    from .conftest import Machine

    with _admin(team_db) as c:
        schema.migrate(c)
        for role, team in (("alice", "red"), ("bob", "blue")):
            c.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{role}-pw'")
            schema.add_member(c, team, role)
    base = team_db.replace("postgres@", "{}@")
    a = Machine(machines(1)[0].home.parent.parent / "alice" / ".sophia", "a", base.format("alice"), "alice-pw", "red")
    b = Machine(a.home.parent.parent / "bob" / ".sophia", "b", base.format("bob"), "bob-pw", "blue")
    for m in (a, b):
        p = s3(m, "team", "init", m.cfg["url"], "--team", m.team)
        assert p.returncode == 0, p.stderr
    rule = learn(a.home, "Red team: blue-green deploys only on Fridays", "Deploy")
    assert s3_json(a, "team", "push")["push"]["pushed"] == 1
    assert s3_json(b, "team", "pull")["pull"]["pulled"] == 0
    assert s3_json(b, "recall", "--team", "deploys Fridays")["results"] == []
    with psycopg.connect(b.cfg["url"], password="bob-pw", autocommit=True) as bob:
        assert bob.execute("SELECT count(*) FROM sophia.memories").fetchone()[0] == 0
        assert bob.execute("UPDATE sophia.memories SET text = 'x' WHERE team_id = 'red'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            bob.execute("INSERT INTO sophia.memories (team_id, id, version, kind, text, body, origin_machine, "
                        "origin_user, edited_at) VALUES ('red', 'rule_x', 'v', 'rule', 't', '{}', 'm', 'u', now())")
    with psycopg.connect(a.cfg["url"], password="alice-pw", autocommit=True) as alice:
        assert [r[0] for r in alice.execute("SELECT id FROM sophia.memories")] == [rule["id"]]
    p = s3(b, "team", "init", b.cfg["url"], "--team", "red")  # bob may not join red on his own
    assert p.returncode == 1 and "not a member of team 'red'" in p.stderr
    b.cfg["team"] = "red"  # a config edited by hand to another team: the database refuses the rows
    b.write_config()
    learn(b.home, "Blue team: canary first", "Deploy")
    p = s3(b, "team", "push")
    assert p.returncode == 1 and "row-level security" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_eight_concurrent_pushes_converge_with_nothing_lost(machines: Any) -> None:
    from sophia.memory.rules import load_rules, update_rules

    ms = _joined(machines(8))
    for n, m in enumerate(ms):
        for k in range(15):
            learn(m.home, f"Machine {n} lesson {k}: keep build step {n * 100 + k} cached", f"Build{n}")
        with update_rules(m.home) as rules:  # the same id edited on all eight
            rules.append({"id": "rule_common00001", "trigger_concept": "Shared", "confidence": 0.5,
                          "rule_content": f"The shared rule as machine {n} wrote it", "source": "manual"})
    ids = set().union(*({r["id"] for r in load_rules(m.home)} for m in ms))
    assert len(ids) > 8 * 10
    procs = [subprocess.Popen([sys.executable, "-m", "sophia.cli.entry", "team", "push", "--json"],
                              env=m.env() | {"PYTHONPATH": str(ROOT / "lib")}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for m in ms]
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    with _admin(ms[0].cfg["url"]) as c:
        assert {r[0] for r in c.execute("SELECT DISTINCT id FROM sophia.memories")} == ids
        assert c.execute("SELECT count(*) FROM sophia.memories WHERE id = 'rule_common00001'").fetchone()[0] == 8
        assert c.execute("SELECT count(*) FROM sophia.memories WHERE active").fetchone()[0] == len(ids)
        versions = c.execute("SELECT versions FROM sophia.conflicts").fetchall()
        assert len(versions) == 1 and len(versions[0][0]) == 8
    for m in ms:
        run.sync(m.home, m.cfg, push=False)
    sets = [sorted((r["id"], r["rule_content"]) for r in load_rules(m.home)) for m in ms]
    assert all(s == sets[0] for s in sets) and {i for i, _ in sets[0]} == ids


def test_sigkill_during_a_push_then_a_retry_loses_nothing_and_duplicates_nothing(machines: Any) -> None:
    from sophia.memory.rules import update_rules

    m, = _joined(machines(1))
    total = 12000
    with update_rules(m.home) as rules:
        rules.extend({"id": f"rule_bulk{n:07d}", "trigger_concept": "Bulk", "confidence": 0.5, "source": "manual",
                      "rule_content": f"bulk lesson number {n}"} for n in range(total))
    p = subprocess.Popen([sys.executable, "-m", "sophia.cli.entry", "team", "push"],
                         env=m.env() | {"PYTHONPATH": str(ROOT / "lib")}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    seen = 0
    with _admin(m.cfg["url"]) as c:
        deadline = time.monotonic() + 120
        while seen == 0 and time.monotonic() < deadline and p.poll() is None:
            seen = c.execute("SELECT count(*) FROM sophia.memories").fetchone()[0]
            time.sleep(0.01)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        at_kill = c.execute("SELECT count(*) FROM sophia.memories").fetchone()[0]
        assert 0 < at_kill < total, f"the kill should land mid-push ({at_kill} of {total} rows)"
        assert s3(m, "team", "push").returncode == 0
        assert s3(m, "team", "push").returncode == 0  # and once more: nothing new
        n, ids = c.execute("SELECT count(*), count(DISTINCT id) FROM sophia.memories").fetchone()
    assert n == ids == total
    book = json.loads(config.ledger_path(m.home).read_text())
    assert len(book["items"]) == total


def test_with_the_server_stopped_hooks_and_local_recall_work_and_sync_resumes(machines: Any, pg_server: Any) -> None:
    a, b = _joined(machines(2))
    rule = learn(a.home, "Vacuum the staging database weekly", "Postgres")
    pg_server.stop()
    try:
        st = s3_json(a, "team", "status")
        assert st["online"] is False and st["error"]
        assert "offline" in s3(a, "team", "status").stdout
        assert [r["id"] for r in s3_json(a, "recall", "vacuum staging")["results"]] == [rule["id"]]
        push = s3(a, "team", "push")
        assert push.returncode == 1 and "offline" in push.stderr and "Traceback" not in push.stderr
        env = a.env() | {"SOPHIA_TEAM_SYNC": "1"}
        t0 = time.monotonic()
        hook = subprocess.run(["bash", str(ROOT / "hooks" / "session_start.sh")], env=env, timeout=60,
                              input=json.dumps({"hook_event_name": "SessionStart", "cwd": str(a.home)}),
                              capture_output=True, text=True)
        assert hook.returncode == 0 and time.monotonic() - t0 < 10, hook.stderr
        log = a.home / "logs" / "team.log"
        deadline = time.monotonic() + 30
        while not (log.exists() and "team sync (session start)" in log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "OperationalError" in log.read_text() or "TeamOffline" in log.read_text()
    finally:
        pg_server.start()
    assert s3_json(a, "team", "push")["push"]["pushed"] == 1
    assert s3_json(b, "team", "pull")["pull"]["applied"] == 1


def test_the_hook_path_never_imports_psycopg() -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import sophia.hooks.session_start, sophia.team.launch, "
            "sophia.learning.worker; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('psycopg', 'pgvector', 'numpy')))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(ROOT / "lib")], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_leave_forgets_the_team_and_keeps_local_memory(machines: Any) -> None:
    a, = _joined(machines(1))
    rule = learn(a.home, "Tag releases with a signed tag", "Git")
    s3_json(a, "team", "push")
    assert s3_json(a, "team", "leave")["left"] == "alpha"
    assert config.load(a.home) is None and not config.team_dir(a.home).exists()
    assert rule["id"] in (a.home / "semantic_rules.json").read_text()
    after = s3(a, "team", "status")
    assert after.returncode == 0 and after.stdout.startswith("no team"), after.stderr
    assert s3(a, "team", "push").returncode == 2  # nothing to push to: bad input
