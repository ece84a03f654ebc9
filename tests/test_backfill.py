"""s3 backfill: the sessions already under ~/.claude/projects become episodes and zero-token lessons, once.

Real transcripts (temp copies of ../shared/data/transcripts) and synthetic ones written as Claude Code
writes them, in a real home: the real SessionEnd code builds the episodes, the real learners store the
fixes, the real queue takes the digests (no worker is started: what is under test is what gets queued).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import run_s3, set_config
from secret_scan import load_corpus, scan
from shared_data import looked_in, shared_path
from sophia import paths
from sophia.atomic import read_json
from sophia.hooks import backfill as bf
from sophia.learning import learners, queue
from sophia.state import init_tree

REAL = shared_path("data/transcripts")
DAY = 86400.0


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree()
    set_config(sophia_home, embedding_provider="none")
    return sophia_home


def session(root: Path, cwd: Path, sid: str, *, day: str = "2026-10-01", age_days: float = 1.0,
            prompt: str = "make the tests pass", extra: list[str] | None = None) -> Path:
    """A transcript in root/<escaped cwd>/<sid>.jsonl: `pytest -q` fails, a file is edited, the variant passes."""
    lines: list[dict[str, Any]] = [{"type": "user", "cwd": str(cwd), "sessionId": sid, "timestamp": f"{day}T10:00:00.000Z",
                                    "message": {"role": "user", "content": prompt}}]

    def call(i: int, tool: str, inp: dict[str, Any], result: str, error: bool) -> None:
        lines.append({"type": "assistant", "cwd": str(cwd), "sessionId": sid, "timestamp": f"{day}T10:00:0{i}.000Z",
                      "message": {"role": "assistant", "content": [{"type": "tool_use", "id": f"{sid[:8]}-t{i}", "name": tool,
                                                                    "input": inp}]}})
        lines.append({"type": "user", "cwd": str(cwd), "sessionId": sid, "timestamp": f"{day}T10:00:0{i}.500Z",
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"{sid[:8]}-t{i}",
                                                               "content": result, "is_error": error}]}})

    call(1, "Bash", {"command": "pytest -q"}, "Exit code 1\nE   ModuleNotFoundError: No module named 'widgets'", True)
    call(2, "Edit", {"file_path": f"{cwd}/src/widgets.py", "old_string": "a", "new_string": "b"}, "ok", False)
    call(3, "Bash", {"command": "pytest -q --import-mode=importlib"}, "3 passed in 0.1s", False)
    lines.append({"type": "assistant", "cwd": str(cwd), "sessionId": sid, "timestamp": f"{day}T10:00:09.000Z",
                  "message": {"role": "assistant", "content": [{"type": "text", "text": "The tests pass now."}]}})
    folder = root / str(cwd).replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / f"{sid}.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines) + "".join(x + "\n" for x in extra or []))
    t = time.time() - age_days * DAY
    os.utime(p, (t, t))
    return p


def project(tmp_path: Path, name: str) -> Path:
    p = tmp_path / "src" / name
    (p / ".git").mkdir(parents=True)
    return p


def uuid(n: int) -> str:
    return f"{n:08d}-1111-4222-8333-444455556666"


def episodes(home: Path) -> list[dict[str, Any]]:
    return [read_json(p) for p in sorted(paths.episodes_dir(home).glob("ep_*.json"))]


def fixes(home: Path) -> list[dict[str, Any]]:
    data = read_json(paths.memory_dir(home) / "procedures.json", default={}) or {}
    return [i for i in data.get("items", []) if (i.get("meta") or {}).get("category") == "error_fix"]


def snapshot(home: Path) -> dict[str, bytes]:
    """Every state file but the locks and the index database (its pages move without a change)."""
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock") and not p.name.startswith("index.db")}


def opts(**kw: Any) -> bf.Options:
    return bf.Options(start_worker=False, **kw)


# ---------------------------------------------------------------- real transcripts


def test_real_transcripts_each_build_an_episode_once(home: Path, tmp_path: Path) -> None:
    if not REAL.is_dir():
        pytest.skip(looked_in("data/transcripts"))
    root = tmp_path / "projects"
    files = sorted(REAL.glob("*.jsonl"))
    for i, f in enumerate(files):
        (root / f"-proj-{i % 2}").mkdir(parents=True, exist_ok=True)
        shutil.copy(f, root / f"-proj-{i % 2}" / f.name)
    r = bf.run(home, root, opts())
    assert (r.found, r.processed, r.failed) == (len(files), len(files), [])
    eps = episodes(home)
    assert len(eps) == r.episodes == len(files)
    assert all(e["end_trigger"] == "session_end" and e["tool_call_count"] > 0 for e in eps)
    # the episode's times are the session's, not the backfill's
    assert all(e["ended_at"][:10] != time.strftime("%Y-%m-%d", time.gmtime()) for e in eps)
    assert r.fixes >= 3 and r.procedures_added >= 3  # the real sessions hold fixes (docs/benchmarks.md)
    before = snapshot(home)
    again = bf.run(home, root, opts())
    assert (again.processed, again.unchanged) == (0, len(files))
    assert snapshot(home) == before  # nothing new, nothing rewritten


# ---------------------------------------------------------------- synthetic sessions


def test_a_session_becomes_an_episode_a_fix_and_a_record(home: Path, tmp_path: Path) -> None:
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    session(root, proj, uuid(1), day="2026-09-01")
    r = bf.run(home, root, opts())
    assert (r.processed, r.episodes, r.fixes) == (1, 1, 1)
    (ep,) = episodes(home)
    assert ep["project"] == str(proj) and ep["session_id"] == uuid(1)
    assert ep["started_at"].startswith("2026-09-01T10:00:00") and ep["ended_at"].startswith("2026-09-01T10:00:09")
    (fix,) = fixes(home)
    assert "pytest -q --import-mode=importlib" in fix["text"] and fix["source_ids"] == [ep["id"]]
    rec = read_json(bf.record_path(home))["transcripts"]
    assert [e["state"] for e in rec.values()] == ["done"]


def test_an_interrupted_backfill_resumes_and_learns_each_session_once(home: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    for n in range(4):
        session(root, proj, uuid(n), day=f"2026-09-0{n + 1}", age_days=4 - n)
    real_learn, calls = learners.learn_transcript, []

    def interrupted(*a: Any, **kw: Any) -> dict[str, Any]:
        calls.append(a[1])
        if len(calls) == 2:  # mid-transcript: its episode is written, its lessons not yet
            raise KeyboardInterrupt
        return real_learn(*a, **kw)

    monkeypatch.setattr(learners, "learn_transcript", interrupted)
    with pytest.raises(KeyboardInterrupt):
        bf.run(home, root, opts())
    states = {e["session"]: e["state"] for e in read_json(bf.record_path(home))["transcripts"].values()}
    assert states == {uuid(3): "done", uuid(2): "started"}  # newest first; the second stopped mid-way
    monkeypatch.setattr(learners, "learn_transcript", real_learn)
    r = bf.run(home, root, opts())
    assert (r.processed, r.unchanged, r.known) == (3, 1, 0)  # the interrupted one is redone, not left to the hooks
    assert len(episodes(home)) == 4
    assert len(read_json(paths.episode_index_path(home))["entries"]) == 4
    assert read_json(paths.self_model_path(home))["total_sessions"] == 4
    counted = read_json(learners.state_path(home))["projects"][str(proj)]["commands"]
    assert sorted(next(iter(counted.values()))["sessions"]) == sorted(uuid(n) for n in range(4))
    assert len(fixes(home)) == 1 and len(fixes(home)[0]["source_ids"]) == 4


def test_since_and_project_filters(home: Path, tmp_path: Path) -> None:
    root, shop, blog = tmp_path / "projects", project(tmp_path, "shop"), project(tmp_path, "blog")
    session(root, shop, uuid(1), age_days=30)
    session(root, shop / "api", uuid(2), age_days=2)  # a folder below the project counts as the project
    session(root, blog, uuid(3), age_days=2)
    since = time.strftime("%Y-%m-%d", time.localtime(time.time() - 10 * DAY))
    before = snapshot(home)
    plan = bf.run(home, root, opts(since=bf.since_epoch(since), project=str(shop), dry_run=True))
    assert [Path(p).stem for p in plan.would_process] == [uuid(2)]
    assert snapshot(home) == before
    r = bf.run(home, root, opts(project=str(shop)))
    assert sorted(e["session_id"] for e in episodes(home)) == [uuid(1), uuid(2)] and r.processed == 2


def test_a_corrupt_line_is_skipped_and_reported_and_a_broken_file_is_not_fatal(home: Path, tmp_path: Path,
                                                                              s3_env: dict[str, str]) -> None:
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    bad = session(root, proj, uuid(1), extra=['{"type": "user", "message": {"content": [', "\x00\xff not json"])
    session(root, proj, uuid(2), age_days=2)
    unreadable = root / "-x" / f"{uuid(3)}.jsonl"
    unreadable.parent.mkdir()
    unreadable.write_text("{}\n")
    unreadable.chmod(0)
    r = bf.run(home, root, opts())
    assert r.bad_lines == {str(bad): 2}
    assert r.episodes == 2 and r.failed == []  # the unreadable one has nothing to build from
    res = run_s3(["backfill", "--from", str(root), "--json"], s3_env)
    assert res.returncode == 0, res.stderr


def test_the_cli_reports_and_is_clean_without_a_terminal(home: Path, tmp_path: Path, s3_env: dict[str, str]) -> None:
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    session(root, proj, uuid(1))
    bad = session(root, proj, uuid(2), age_days=2, extra=["not json"])
    r = run_s3(["backfill", "--from", str(root)], s3_env)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines() == [
        "Backfilled 2 of 2 transcripts (0 done already, 0 seen by the hooks): 2 episodes, 2 fixes, 2 procedures "
        "and 0 knowledge gaps added",  # the failure was fixed in each session: no gap
        "Digests: 0 queued; 2 not queued (learning_enabled is false)",
        "Skipped 1 unreadable line in 1 transcript"]
    assert json.loads((bf.record_path(home)).read_text())["transcripts"][str(bad)]["bad_lines"] == 1
    j = json.loads(run_s3(["backfill", "--from", str(root), "--json"], s3_env).stdout)
    assert (j["processed"], j["unchanged"], j["bad_lines"]) == (0, 2, {})
    assert run_s3(["backfill", "--since", "last tuesday"], s3_env).returncode == 2


def test_ctrl_c_exits_130_with_one_line_saying_how_to_resume(home: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from sophia.cli.app import app

    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    for n in range(3):
        session(root, proj, uuid(n), age_days=3 - n)
    real = bf.process_one
    seen: list[str] = []

    def stop(h: Path, t: bf.Transcript, d: bf.Digests) -> dict[str, Any]:
        seen.append(t.session)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return real(h, t, d)

    monkeypatch.setattr(bf, "process_one", stop)
    res = CliRunner().invoke(app, ["backfill", "--from", str(root)])
    assert res.exit_code == 130
    assert res.stderr.strip() == "s3: interrupted: 1 transcripts backfilled, progress saved; resume with `s3 backfill`"
    monkeypatch.setattr(bf, "process_one", real)
    res = CliRunner().invoke(app, ["backfill", "--from", str(root), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["processed"] == 2


def test_sessions_the_hooks_saw_are_left_to_them(home: Path, tmp_path: Path) -> None:
    from sophia.hooks import session_end

    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    seen = session(root, proj, uuid(1))
    session(root, proj, uuid(2), age_days=2)
    session_end.process({"hook_event_name": "Stop", "session_id": uuid(1), "transcript_path": str(seen),
                         "cwd": str(proj)}, home)
    r = bf.run(home, root, opts())
    assert (r.processed, r.known) == (1, 1)


def test_digests_are_queued_only_when_learning_is_on_and_within_todays_caps(home: Path, tmp_path: Path) -> None:
    from sophia.learning import ledger

    root, proj, quiet = tmp_path / "projects", project(tmp_path, "shop"), project(tmp_path, "quiet")
    (quiet / ".sophia-no-learning").touch()
    for n in range(4):
        session(root, proj, uuid(n), age_days=5 - n)
    session(root, quiet, uuid(9), age_days=9)
    r = bf.run(home, root, opts())
    assert r.digests_queued == 0 and queue.counts(home)["pending"] == 0
    set_config(home, learning_enabled=True, learning_daily_max_jobs=3)
    queue.enqueue(home, "earlier-session")  # already waiting: it takes one of today's three
    entry = {"at": "x", "day": ledger.day(), "job": "ran-today", "stage": "extract", "ok": True, "cost_usd": 0.01}
    ledger.ledger_path(home).write_text(json.dumps(entry) + "\n")  # one job already ran today
    for p in root.rglob("*.jsonl"):
        st = p.stat()
        with open(p, "a") as fh:  # every session grew: each is read again
            fh.write("\n")
        os.utime(p, (st.st_mtime + 1, st.st_mtime + 1))
    r = bf.run(home, root, opts())
    assert r.digests_queued == 1  # 3 - 1 ran - 1 waiting
    assert r.digests_skipped == {"daily cap reached: today's jobs are taken (learning_daily_max_jobs)": 3,
                                 ".sophia-no-learning in the project": 1}
    pending = [j for j in queue.jobs(home, ("pending",)) if j["id"] != queue.job_id("session", "earlier-session")]
    assert [j["session_id"] for j in pending] == [uuid(3)]  # the newest session
    assert pending[0]["reason"] == "backfill"


def test_dry_run_changes_nothing(home: Path, tmp_path: Path) -> None:
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    session(root, proj, uuid(1))
    before = snapshot(home)
    r = bf.run(home, root, opts(dry_run=True))
    assert r.todo == 1 and r.processed == 0 and snapshot(home) == before


def test_subagent_transcripts_are_not_sessions(home: Path, tmp_path: Path) -> None:
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    main = session(root, proj, uuid(1))
    (main.parent / "agent-1234.jsonl").write_text(main.read_text())
    (main.parent / uuid(1) / "subagents").mkdir(parents=True)
    (main.parent / uuid(1) / "subagents" / "agent-9.jsonl").write_text(main.read_text())
    assert [t.session for t in bf.find(root, opts())] == [uuid(1)]


def test_no_secret_reaches_disk(home: Path, tmp_path: Path) -> None:
    corpus = load_corpus()
    secrets = [s for e in corpus for s in e["secrets"]]
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    for n, e in enumerate(corpus[:40]):
        session(root, proj, uuid(n), prompt=f"please {e['text']}", age_days=1 + n / 100,
                extra=[json.dumps({"type": "assistant", "cwd": str(proj), "sessionId": uuid(n),
                                   "message": {"content": [{"type": "tool_use", "id": "s1", "name": "Bash",
                                                            "input": {"command": e["text"]}}]}}),
                       json.dumps({"type": "user", "cwd": str(proj), "sessionId": uuid(n),
                                   "message": {"content": [{"type": "tool_result", "tool_use_id": "s1",
                                                            "is_error": True, "content": f"failed: {e['text']}"}]}})])
    r = bf.run(home, root, opts())
    assert r.processed == 40
    files, findings = scan(home, secrets)
    assert files >= 10
    assert findings == [], "secrets reached disk:\n" + "\n".join(findings[:30])


def test_a_folder_or_project_that_does_not_exist_is_bad_input(home: Path, tmp_path: Path,
                                                              s3_env: dict[str, str]) -> None:
    """Issue 32: `--from /nonexistent` said "Backfilled 0 of 0 transcripts" and exited 0."""
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    session(root, proj, uuid(1))
    for args, said in ((["--from", str(tmp_path / "nope")], "no such folder"),
                       (["--from", str(session(root, proj, uuid(2)))], "not a folder"),
                       (["--from", str(root), "--project", str(tmp_path / "typo")], "no such folder, and no session")):
        r = run_s3(["backfill", *args], s3_env)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, (args, r.stderr)
        assert r.stderr.startswith("s3: error: ") and said in r.stderr, r.stderr
    assert episodes(home) == []
    gone = tmp_path / "src" / "deleted"  # a project whose folder is gone still names its sessions
    session(root, gone, uuid(3))
    r = run_s3(["backfill", "--from", str(root), "--project", str(gone), "--json"], s3_env)
    assert r.returncode == 0 and json.loads(r.stdout)["processed"] == 1, r.stderr


def test_the_last_session_is_the_newest_sessions_own_end_not_the_backfills_clock(home: Path, tmp_path: Path,
                                                                                  s3_env: dict[str, str]) -> None:
    root, proj = tmp_path / "projects", project(tmp_path, "shop")
    session(root, proj, uuid(1), day="2026-03-02", age_days=9)
    session(root, proj, uuid(2), day="2026-03-05", age_days=5)
    bf.run(home, root, opts())
    sm = read_json(paths.self_model_path(home))
    assert sm["last_session"].startswith("2026-03-05T10:00:09"), sm["last_session"]
    assert read_json(paths.user_model_path("default", home))["last_interaction"].startswith("2026-03-05T10:00:09")
    session(root, proj, uuid(3), day="2026-01-10", age_days=1)  # an older session read later moves nothing
    bf.run(home, root, opts())
    assert read_json(paths.self_model_path(home))["last_session"].startswith("2026-03-05T10:00:09")
    status = json.loads(run_s3(["status", "--json"], s3_env).stdout)
    assert status["self_model"]["last_session"].startswith("2026-03-05T10:00:09")
