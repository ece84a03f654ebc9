"""``s3 recall``'s two timelines: ``--as-of`` (event / validity time: what was true then) and
``--known-at`` (record time: what had been recorded by then), alone and combined, through the
real CLI (fast path, typer and batch mode) over memories written by ``s3 apply``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.conftest import run_s3

from sophia.index import db, store
from sophia.index.search import search

TODAY = datetime.now(UTC)
YESTERDAY = (TODAY - timedelta(days=1)).strftime("%Y-%m-%d")
# two days on: a date-only end is its midnight, and a run that crosses midnight after import must still be inside
TOMORROW = (TODAY + timedelta(days=2)).strftime("%Y-%m-%d")


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


@pytest.fixture
def applied(s3_env: dict[str, str]) -> dict[str, str]:
    """Applied today (record time = now): a 2020 foresight window, a past fact, a current foresight."""
    assert run_s3(["init"], s3_env).returncode == 0
    ext = {
        "foresight": [
            {"description": "User feeds the walrus at the zoo every morning", "evidence": "said so",
             "start_time": "2020-01-01", "end_time": "2020-01-08", "confidence": 0.8},
            {"description": "User is rehearsing the narwhal play", "evidence": "said so",
             "start_time": YESTERDAY, "end_time": TOMORROW, "confidence": 0.8}],
        "atomic_facts": [{"fact": "The user photographed a walrus in Tromso", "event_time": "2023-05-08"}],
    }
    r = run_s3(["apply", "extraction", "-"], s3_env, input=json.dumps(ext))
    assert r.returncode == 0, r.stderr
    return s3_env


def _ids(env: dict[str, str], *args: str) -> list[str]:
    r = run_s3(["recall", *args, "--json"], env)
    assert r.returncode == 0, r.stderr
    return [x["text"] for x in json.loads(r.stdout)["results"]]


WALRUS_ZOO = "User feeds the walrus at the zoo every morning"
WALRUS_FACT = "The user photographed a walrus in Tromso"
NARWHAL = "User is rehearsing the narwhal play"


def test_as_of_finds_a_foresight_recorded_today_inside_its_past_window(applied: dict[str, str]) -> None:
    assert WALRUS_ZOO in _ids(applied, "walrus", "--as-of", "2020-01-03")  # the example
    assert WALRUS_ZOO not in _ids(applied, "walrus", "--as-of", "2020-01-10")  # window over
    assert WALRUS_ZOO not in _ids(applied, "walrus")  # now: window over


def test_as_of_is_the_event_timeline(applied: dict[str, str]) -> None:
    """A fact recorded today about 2023 is found as of 2023, and not before it happened."""
    assert WALRUS_FACT in _ids(applied, "walrus", "--as-of", "2023-05-10")
    assert WALRUS_FACT not in _ids(applied, "walrus", "--as-of", "2023-05-01")
    assert WALRUS_FACT in _ids(applied, "walrus")


def test_known_at_is_the_record_timeline(applied: dict[str, str]) -> None:
    assert NARWHAL in _ids(applied, "narwhal")
    assert NARWHAL not in _ids(applied, "narwhal", "--known-at", YESTERDAY)  # recorded today
    assert NARWHAL in _ids(applied, "narwhal", "--known-at", TOMORROW)
    assert WALRUS_FACT not in _ids(applied, "walrus", "--known-at", YESTERDAY)
    got = _ids(applied, "walrus", "--known-at=" + TOMORROW)
    assert WALRUS_FACT in got and WALRUS_ZOO not in got  # known, but its window is over now


def test_both_timelines_combined(applied: dict[str, str]) -> None:
    assert WALRUS_ZOO in _ids(applied, "walrus", "--as-of", "2020-01-03", "--known-at", TOMORROW)
    assert _ids(applied, "walrus", "--as-of", "2020-01-03", "--known-at", YESTERDAY) == []
    got = _ids(applied, "walrus", "--as-of", "2023-06-01", "--known-at", TOMORROW)
    assert WALRUS_FACT in got and WALRUS_ZOO not in got


def test_batch_mode_takes_both(applied: dict[str, str], tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps(x) for x in [
        {"id": "a", "query": "walrus zoo", "as_of": "2020-01-03"},
        {"id": "b", "query": "walrus zoo", "as_of": "2020-01-03", "known_at": YESTERDAY},
        {"id": "c", "query": "narwhal", "known_at": YESTERDAY},
        {"id": "d", "query": "narwhal", "known_at": "not a date"},
        {"id": "e", "query": "narwhal"},
    ]) + "\n")
    r = run_s3(["recall", "--queries", str(q), "--json"], applied)
    assert r.returncode == 0, r.stderr
    lines = {x["id"]: x for x in map(json.loads, r.stdout.splitlines())}
    assert [x["text"] for x in lines["a"]["results"]][:1] == [WALRUS_ZOO]
    assert lines["b"]["results"] == [] and lines["c"]["results"] == []
    assert "--known-at" in lines["d"]["error"]
    assert NARWHAL in [x["text"] for x in lines["e"]["results"]]
    # the command's --known-at applies to every line without its own
    r = run_s3(["recall", "--queries", str(q), "--json", "--known-at", YESTERDAY], applied)
    lines = {x["id"]: x for x in map(json.loads, r.stdout.splitlines())}
    assert lines["e"]["results"] == []


def test_typer_path_takes_both(applied: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from sophia.cli.app import app

    monkeypatch.setenv("SOPHIA_HOME", applied["SOPHIA_HOME"])
    res = CliRunner().invoke(app, ["recall", "walrus", "--json", "--as-of", "2020-01-03", "--known-at", TOMORROW])
    assert res.exit_code == 0, res.output
    assert WALRUS_ZOO in [x["text"] for x in json.loads(res.stdout)["results"]]
    res = CliRunner().invoke(app, ["recall", "walrus", "--as-of", "2020-01-03", "--known-at", YESTERDAY])
    assert "No memories match" in res.stdout


def test_bad_known_at_names_the_option(applied: dict[str, str]) -> None:
    r = run_s3(["recall", "walrus", "--known-at", "soonish"], applied)
    assert r.returncode == 2 and "--known-at" in r.stderr and "Traceback" not in r.stderr


def test_prospective_fact_is_kept_before_its_event(sophia_home: Path) -> None:
    """A plan recorded before its date is part of what was true then (the event filter spares it)."""
    conn = db.connect(sophia_home)
    store.upsert_items(conn, [
        {"id": "f_plan", "type": "fact", "text": "The user will sit the walrus exam", "temporality": "prospective",
         "event_time": "2026-03-20T00:00:00Z", "timestamp": "2026-02-01T00:00:00Z"},
        {"id": "f_done", "type": "fact", "text": "The user passed the walrus quiz", "temporality": "historical",
         "event_time": "2026-03-25T00:00:00Z", "timestamp": "2026-03-26T00:00:00Z"}])
    hits = [h["id"] for h in search(conn, "walrus", as_of="2026-03-01", use_semantic=False)]
    assert hits == ["f_plan"]
    hits = [h["id"] for h in search(conn, "walrus", as_of="2026-03-01", known_at="2026-01-01", use_semantic=False)]
    assert hits == []
    conn.close()
