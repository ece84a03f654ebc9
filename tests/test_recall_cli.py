"""``s3 recall`` / ``s3 index`` as processes: JSON shape, batch mode, bad queries, fast path = typer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import run_s3

from sophia import paths
from sophia.index import db, store


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword tier only: no test here starts an embedding service (fusion is tested with given hits)."""
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


@pytest.fixture
def filled(sophia_home: Path) -> Path:
    conn = db.connect(sophia_home)
    store.upsert_items(conn, [
        {"id": "fact_1", "type": "fact", "text": "Alice adopted a beagle called Rex", "source_ids": ["t1"],
         "timestamp": "2024-01-01T00:00:00Z", "event_time": "2023-12-24T00:00:00Z"},
        {"id": "fact_2", "type": "fact", "text": "Bob plays the cello", "project": "music"},
        {"id": "rule_1", "type": "rule", "text": "walk the beagle before work"},
    ])
    conn.close()
    return sophia_home


def test_json_shape(filled: Path, s3_env: dict[str, str]) -> None:
    r = run_s3(["recall", "beagle Rex", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["query"] == "beagle Rex"
    first = doc["results"][0]
    for key in ("id", "type", "text", "score", "source_ids", "timestamp", "event_time", "project"):
        assert key in first
    assert {x["id"] for x in doc["results"]} == {"fact_1", "rule_1"}
    assert first["id"] == "fact_1" and first["source_ids"] == ["t1"]
    r = run_s3(["recall", "beagle", "--type", "rule", "--json", "-n", "1"], s3_env)
    assert [x["id"] for x in json.loads(r.stdout)["results"]] == ["rule_1"]
    r = run_s3(["recall", "cello", "--project", "music", "--json"], s3_env)
    assert [x["id"] for x in json.loads(r.stdout)["results"]] == ["fact_2"]
    r = run_s3(["recall", "beagle"], s3_env)
    assert "fact_1" in r.stdout and "Alice adopted" in r.stdout


def test_fast_path_matches_typer(filled: Path, s3_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from sophia.cli.app import app

    monkeypatch.setenv("SOPHIA_HOME", str(filled))
    args = ["recall", "beagle walk", "--json", "--limit", "5", "--as-of", "2024-06-01"]
    via_typer = CliRunner().invoke(app, args)
    assert via_typer.exit_code == 0, via_typer.output
    fast = run_s3(args, s3_env)
    assert json.loads(fast.stdout) == json.loads(via_typer.stdout)
    h = run_s3(["recall", "--help"], s3_env)
    assert h.returncode == 0 and "--queries" in h.stdout and "--as-of" in h.stdout


def test_batch_mode_in_order(filled: Path, tmp_path: Path, s3_env: dict[str, str]) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps(x) for x in [
        {"id": "a", "query": "cello"}, {"id": "b", "query": "beagle", "limit": 1},
        {"id": "c", "query": '"AND('}, {"id": "d", "query": ""}, {"id": "e", "query": "beagle", "as_of": "2023-06-01"},
    ]) + "\nnot json\n")
    r = run_s3(["recall", "--queries", str(q), "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["a", "b", "c", "d", "e", 6]
    assert [x["id"] for x in lines[0]["results"]] == ["fact_2"]
    assert len(lines[1]["results"]) == 1
    assert lines[2]["results"] == [] and "error" not in lines[2]
    assert "empty query" in lines[3]["error"]
    assert [x["id"] for x in lines[4]["results"]] == ["rule_1"]  # fact_1 happened later
    assert "error" in lines[5]
    r = run_s3(["recall", "--queries", "-", "--json"], s3_env, input=json.dumps({"id": 1, "query": "cello"}))
    assert json.loads(r.stdout)["results"][0]["id"] == "fact_2"


@pytest.mark.parametrize(("query", "code", "needle"), [
    ('"', 0, "no searchable words"), ("*", 0, "no searchable words"), ("AND(", 0, "no searchable words"),
    ("", 2, "empty query"), ("a" * 10_000, 2, "query too long"),
])
def test_bad_queries_get_a_clear_message(filled: Path, s3_env: dict[str, str], query: str, code: int,
                                         needle: str) -> None:
    r = run_s3(["recall", query], s3_env)
    assert r.returncode == code
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bad_options(filled: Path, s3_env: dict[str, str]) -> None:
    for args, needle in ((["recall", "x", "--type", "nope"], "unknown --type"),
                         (["recall", "x", "--as-of", "yesterday-ish"], "--as-of"),
                         (["recall", "x", "--limit", "0"], "--limit"),
                         (["recall"], "QUERY"),
                         (["recall", "--queries", "/nonexistent.jsonl"], "cannot read")):
        r = run_s3(args, s3_env)
        assert r.returncode != 0 and needle in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_recall_without_an_index(s3_env: dict[str, str], sophia_home: Path) -> None:
    r = run_s3(["recall", "anything", "--json"], s3_env)
    assert r.returncode == 0 and json.loads(r.stdout)["results"] == []
    assert not paths.index_db_path(sophia_home).exists()


def test_index_stats_and_rebuild(filled: Path, s3_env: dict[str, str]) -> None:
    r = run_s3(["index", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    assert st["items"] == 3 and st["by_type"] == {"fact": 2, "rule": 1} and st["needs_embedding"] == 3
    # these items were upserted directly (no files): a rebuild from the files drops them
    r = run_s3(["index", "--rebuild", "--json"], s3_env)
    assert r.returncode == 0 and json.loads(r.stdout)["items"] == 0
    r = run_s3(["index", "--rebuild"], s3_env)
    assert "Rebuilt" in r.stdout


def test_recall_does_not_load_heavy_modules(filled: Path, s3_env: dict[str, str]) -> None:
    import subprocess
    import sys

    code = ("import sys; sys.argv=['s3','recall','beagle','--json']\n"
            "from sophia.cli import entry\n"
            "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
            "bad=[m for m in ('typer','rich','pydantic','numpy','torch') if m in sys.modules]\n"
            "print('HEAVY', bad, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], env=s3_env, capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in r.stderr, r.stderr


def test_unquoted_words_are_the_query_on_both_paths(filled: Path, s3_env: dict[str, str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: `s3 recall beagle Rex` (no quotes, as people type it) is `s3 recall "beagle Rex"`, through the
    fast path and through typer alike, options before, between or after the words."""
    from typer.testing import CliRunner

    from sophia.cli.app import app

    monkeypatch.setenv("SOPHIA_HOME", str(filled))
    quoted = json.loads(run_s3(["recall", "beagle Rex", "--json"], s3_env).stdout)
    assert quoted["results"] and quoted["query"] == "beagle Rex"
    for args in (["recall", "beagle", "Rex", "--json"], ["recall", "--json", "beagle", "Rex"],
                 ["recall", "beagle", "--json", "Rex"], ["recall", "--json", "--", "beagle", "Rex"]):
        fast = run_s3(args, s3_env)
        assert fast.returncode == 0 and json.loads(fast.stdout) == quoted, (args, fast.stderr)
        via_typer = CliRunner().invoke(app, args)
        assert via_typer.exit_code == 0 and json.loads(via_typer.stdout) == quoted, (args, via_typer.output)


def test_a_project_that_names_nothing_is_bad_input(filled: Path, s3_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 32: `--project` with a typo answered "no memories"; it names neither a folder nor a recorded project."""
    r = run_s3(["recall", "cello", "--project", "/no/such/project"], s3_env)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert "--project /no/such/project: no such folder" in r.stderr
    empty = tmp_path / "empty-project"
    empty.mkdir()
    r = run_s3(["recall", "beagle", "--project", str(empty), "--json"], s3_env)  # a real folder: global items only
    assert r.returncode == 0 and {x["id"] for x in json.loads(r.stdout)["results"]} == {"rule_1", "fact_1"}
