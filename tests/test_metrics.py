"""Growth metrics: steps per episode, failure rate, success and repeated errors per project, task and week,
and the trend `s3 status` shows. The episodes are real ones: synthetic transcripts written as Claude Code
writes them, turned into episodes by `s3 backfill` (the SessionEnd code)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import run_s3, set_config
from sophia import paths
from sophia.atomic import write_json_atomic
from sophia.hooks import backfill as bf
from sophia.learning import metrics
from sophia.state import init_tree

DAY = 86400.0


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree()
    set_config(sophia_home, embedding_provider="none")
    return sophia_home


def session(root: Path, cwd: Path, n: int, *, days_ago: float, steps: int, failures: int, goal: str,
            error: str = "E   ModuleNotFoundError: No module named 'widgets'") -> None:
    """A session ``days_ago`` days back: ``steps`` Bash calls, the first ``failures`` of them failing."""
    start = datetime.fromtimestamp(time.time() - days_ago * DAY, UTC)
    sid = f"{n:08d}-1111-4222-8333-444455556666"

    def at(s: int) -> str:
        return datetime.fromtimestamp(start.timestamp() + s, UTC).isoformat().replace("+00:00", "Z")

    lines: list[dict[str, Any]] = [{"type": "user", "cwd": str(cwd), "sessionId": sid, "timestamp": at(0),
                                    "message": {"role": "user", "content": goal}}]
    for i in range(steps):
        failed = i < failures
        lines.append({"type": "assistant", "cwd": str(cwd), "sessionId": sid, "timestamp": at(2 * i + 1),
                      "message": {"content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                               "input": {"command": f"pytest -q tests/test_{i}.py"}}]}})
        lines.append({"type": "user", "cwd": str(cwd), "sessionId": sid, "timestamp": at(2 * i + 2),
                      "message": {"content": [{"type": "tool_result", "tool_use_id": f"t{i}", "is_error": failed,
                                               "content": f"Exit code 1\n{error}" if failed else "1 passed"}]}})
    lines.append({"type": "assistant", "cwd": str(cwd), "sessionId": sid, "timestamp": at(2 * steps + 1),
                  "message": {"content": [{"type": "text", "text": "Done: the tests pass."}]}})
    folder = root / str(cwd).replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def project(tmp_path: Path, name: str) -> Path:
    p = tmp_path / "src" / name
    (p / ".git").mkdir(parents=True)
    return p


def backfill(home: Path, root: Path) -> None:
    r = bf.run(home, root, bf.Options(start_worker=False))
    assert r.failed == [] and r.processed > 0


@pytest.fixture
def growing(home: Path, tmp_path: Path) -> Path:
    """Six sessions 5-7 weeks ago (12 steps, 3 failing), six in the last 4 weeks (6 steps, 1 failing), all
    the same recurring task of one project; one unrelated session in another project."""
    root, shop, blog = tmp_path / "projects", project(tmp_path, "shop"), project(tmp_path, "blog")
    for n in range(6):
        session(root, shop, n, days_ago=48 - n, steps=12, failures=3, goal="fix the checkout widgets tests")
        session(root, shop, 10 + n, days_ago=20 - n, steps=6, failures=1, goal="fix the checkout widgets tests")
    session(root, blog, 99, days_ago=3, steps=4, failures=0, goal="write the release notes post")
    backfill(home, root)
    return shop


def test_the_trend_compares_the_last_four_weeks_with_the_four_before(home: Path, growing: Path) -> None:
    tr = metrics.status_trend(home)
    assert tr is not None
    assert tr["before"] == {"episodes": 6, "steps_per_episode": 12.0, "failure_rate": 0.25, "success_rate": 1.0,
                            "repeated_errors": 5}  # the same error in each session after the first
    assert tr["recent"] == {"episodes": 7, "steps_per_episode": round((6 * 6 + 4) / 7, 1),
                            "failure_rate": round(6 / 40, 3), "success_rate": 1.0, "repeated_errors": 6}
    assert metrics.trend_line(tr) == ("last 4 weeks vs the 4 before: 12.0 -> 5.7 steps per episode, failure rate "
                                      "25% -> 15%, success 100% -> 100%, 6 repeated errors (7 episodes)")


def test_series_per_project_task_and_week(home: Path, growing: Path) -> None:
    data = metrics.series(home)
    assert data["episodes"] == 13
    shop, blog = data["projects"]
    assert (shop["project"], shop["episodes"], blog["episodes"]) == (str(growing), 12, 1)
    weeks = shop["weeks"]
    assert sum(w["episodes"] for w in weeks) == 12 and weeks == sorted(weeks, key=lambda w: w["week"])
    assert weeks[0]["steps_per_episode"] == 12.0 and weeks[-1]["steps_per_episode"] == 6.0
    (task,) = shop["clusters"]  # one recurring task; the blog's single session is no cluster
    # the task's three most shared keywords, the same every run (ties keep keyword order, not set order)
    assert task["episodes"] == 12 and "checkout" in task["terms"] and len(task["terms"]) == 3
    assert set(task["terms"]) <= {"fix", "checkout", "widgets", "tests", "test", "pytest", "modulenotfounderror"}
    assert blog["clusters"] == [] and blog["repeated_errors"] == 0
    only = metrics.series(home, str(growing))
    assert [p["project"] for p in only["projects"]] == [str(growing)]


def test_clusters_split_unrelated_tasks(home: Path, tmp_path: Path) -> None:
    root, shop = tmp_path / "projects", project(tmp_path, "shop")
    for n in range(3):
        session(root, shop, n, days_ago=10 - n, steps=3, failures=0, goal="fix the checkout widgets tests")
        session(root, shop, 10 + n, days_ago=9.5 - n, steps=3, failures=0, goal="translate invoice emails german")
    backfill(home, root)
    (p,) = metrics.series(home)["projects"]
    tasks = sorted(tuple(sorted(c["terms"])) for c in p["clusters"])
    assert len(tasks) == 2 and all(c["episodes"] == 3 for c in p["clusters"]), tasks


def test_a_repeated_error_is_one_an_earlier_episode_of_the_project_met(home: Path, tmp_path: Path) -> None:
    root, shop, blog = tmp_path / "projects", project(tmp_path, "shop"), project(tmp_path, "blog")
    session(root, shop, 1, days_ago=5, steps=3, failures=1, goal="build it")
    session(root, blog, 2, days_ago=4, steps=3, failures=1, goal="build it")  # another project: not a repeat
    session(root, shop, 3, days_ago=3, steps=3, failures=1, goal="build it", error="PermissionError: denied")
    session(root, shop, 4, days_ago=2, steps=3, failures=1, goal="build it")
    backfill(home, root)
    rs = metrics.rows(home)
    metrics.mark_repeats(rs)
    assert [r["repeated"] for r in rs] == [0, 0, 0, 1]


def test_too_little_data_says_nothing(home: Path, tmp_path: Path, s3_env: dict[str, str]) -> None:
    root, shop = tmp_path / "projects", project(tmp_path, "shop")
    for n in range(4):
        session(root, shop, n, days_ago=40 - n, steps=5, failures=1, goal="fix the tests")
        session(root, shop, 10 + n, days_ago=10 - n, steps=3, failures=0, goal="fix the tests")
    backfill(home, root)
    assert metrics.status_trend(home) is None
    r = run_s3(["status"], s3_env)
    assert r.returncode == 0 and "Growth" not in r.stdout, r.stderr
    assert json.loads(run_s3(["status", "--json"], s3_env).stdout)["growth"] is None
    out = run_s3(["metrics"], s3_env).stdout
    assert out.startswith("Trend: not enough episodes yet") and str(shop) in out


def test_status_and_metrics_show_it(home: Path, growing: Path, s3_env: dict[str, str]) -> None:
    r = run_s3(["status"], s3_env)
    assert r.returncode == 0, r.stderr
    assert ("- Growth: last 4 weeks vs the 4 before: 12.0 -> 5.7 steps per episode, failure rate 25% -> 15%"
            in r.stdout), r.stdout
    assert "today 0 jobs, $0.00 (caps 20 jobs, $0.50 a day)" in r.stdout
    st = json.loads(run_s3(["status", "--json"], s3_env).stdout)
    assert st["growth"]["recent"]["episodes"] == 7
    assert st["digests"]["caps"] == {"jobs": 20, "usd": 0.5} and st["digests"]["stopped"] is None
    m = json.loads(run_s3(["metrics", "--json", "--project", str(growing)], s3_env).stdout)
    assert [p["project"] for p in m["projects"]] == [str(growing)] and m["trend"]["before"]["episodes"] == 6
    text = run_s3(["metrics"], s3_env).stdout
    assert "task \"" in text and "12.0 -> 6.0 steps" in text


def test_status_says_when_the_daily_cap_stopped_digests(home: Path, s3_env: dict[str, str]) -> None:
    from sophia.learning import ledger

    entry = {"day": ledger.day(), "job": "j1", "stage": "extract", "ok": True, "cost_usd": 0.75}
    ledger.ledger_path(home).parent.mkdir(parents=True, exist_ok=True)
    ledger.ledger_path(home).write_text(json.dumps(entry) + "\n")
    r = run_s3(["status"], s3_env)
    assert "today 1 jobs, $0.75 (caps 20 jobs, $0.50 a day); no more today: daily cap reached: $0.75 spent" in r.stdout


def test_the_cache_reads_only_changed_episodes(home: Path, growing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = metrics.rows(home)
    assert metrics.cache_path(home).is_file()
    reads: list[str] = []
    real = metrics.read_json
    monkeypatch.setattr(metrics, "read_json", lambda p, default=None: (reads.append(str(p)), real(p, default))[1])
    assert metrics.rows(home) == first and reads == [str(metrics.cache_path(home))]
    ep_file = next(paths.episodes_dir(home).glob("ep_*.json"))
    ep = real(ep_file)
    ep["outcome"] = "FAILURE"
    write_json_atomic(ep_file, ep)
    reads.clear()
    again = metrics.rows(home)
    assert reads == [str(metrics.cache_path(home)), str(ep_file)]
    assert [r for r in again if r["id"] == ep["id"]][0]["outcome"] == "FAILURE"
    metrics.cache_path(home).write_text("{broken")  # a cache: rebuilt, never an error
    assert metrics.rows(home) == again


def test_a_project_with_no_episode_says_where_they_are_and_a_typo_is_bad_input(home: Path, growing: Path,
                                                                              tmp_path: Path,
                                                                              s3_env: dict[str, str]) -> None:
    """Issue 32: `s3 metrics --project /nope` said there were no episodes at all (there were, elsewhere)."""
    r = run_s3(["metrics", "--project", str(tmp_path / "nope")], s3_env)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert "--project" in r.stderr and "no such folder" in r.stderr
    idle = project(tmp_path, "idle")
    r = run_s3(["metrics", "--project", str(idle)], s3_env)
    assert r.returncode == 0 and r.stdout.startswith(f"No episodes of {idle} to measure yet; 13 episodes in other")
    r = run_s3(["metrics", "--project", str(growing / "sub")], s3_env)  # not a folder: bad input
    assert r.returncode == 2
    (growing / "sub").mkdir()
    m = json.loads(run_s3(["metrics", "--project", str(growing / "sub"), "--json"], s3_env).stdout)
    assert [p["project"] for p in m["projects"]] == [str(growing)]  # a folder inside the project: the project
