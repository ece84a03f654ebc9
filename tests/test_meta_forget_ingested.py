"""Issue 13 item 2 and two item-11 points: what `s3 ingest` brought in can be listed and forgotten
(every id `s3 recall` shows, a whole source), is not injected into coding sessions unless opted in,
`s3 list memcells` counts the ingested MemCells, and `s3 list episodes --json` gives stored episodes."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB, ROOT, copy_home, made_home, run_s3, stop_embedding_services
from metahelp import make_episode, seed_episodes


def _conversation(path: Path, topic: str, n: int = 6) -> Path:
    lines = [{"id": f"D1:{i}", "session": 1, "speaker": "Caroline" if i % 2 else "Mel",
              "text": f"turn {i} about the {topic} and the weekend", "timestamp": f"2023-05-0{1 + i // 3}T10:00:00Z"}
             for i in range(n)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.fixture(scope="module")
def ingested_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A home where ``s3 init`` and ``s3 ingest`` of two conversations ran, with what each ingest reported: made
    once for this file, copied for each test (``ingested``)."""
    root = tmp_path_factory.mktemp("ingested")
    home = made_home(root)
    env = {k: v for k, v in os.environ.items() if k != "SOPHIA_HOOK_GUARD"}
    env.update(HOME=str(root), SOPHIA_HOME=str(home), PYTHONPATH=str(LIB))
    out = {}
    for name, topic in (("conv-a", "walrus sanctuary"), ("conv-b", "zeppelin hangar")):
        r = run_s3(["ingest", str(_conversation(root / f"{name}.jsonl", topic)), "--source", name, "--json"], env)
        assert r.returncode == 0, r.stderr
        out[name] = json.loads(r.stdout)
    yield home, out
    stop_embedding_services(root)


@pytest.fixture
def ingested(s3_env: dict[str, str], ingested_home: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    copy_home(ingested_home[0], s3_env)
    return ingested_home[1]


def _recall(env: dict[str, str], query: str) -> list[dict[str, Any]]:
    r = run_s3(["recall", query, "--json", "--limit", "50"], env)
    assert r.returncode == 0, r.stderr
    return list(json.loads(r.stdout)["results"])


def test_forget_takes_the_turn_ids_recall_shows(ingested: dict[str, Any], s3_env: dict[str, str],
                                                sophia_home: Path) -> None:
    hits = [h for h in _recall(s3_env, "walrus sanctuary") if h["type"] == "turn"]
    tid = hits[0]["id"]
    assert tid.startswith("turn:conv-a:D1:")
    r = run_s3(["forget", tid, "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["removed"] == tid and out["from"] == "memory/conversations/conv-a.jsonl"
    assert tid not in {h["id"] for h in _recall(s3_env, "walrus sanctuary")}
    kept = (sophia_home / "memory" / "conversations" / "conv-a.jsonl").read_text()
    assert f'"{tid}"' not in kept and kept.count("\n") == 5


def test_forget_an_ingested_memcell_and_a_scene(ingested: dict[str, Any], s3_env: dict[str, str]) -> None:
    cells = json.loads(run_s3(["list", "memcells", "--json"], s3_env).stdout)
    cell = next(c for c in cells if c["id"].startswith("mc:conv-b:"))
    r = run_s3(["forget", cell["id"]], s3_env)
    assert r.returncode == 0 and f"{cell['meta']['turns']} turns" in r.stdout, r.stderr
    assert not {h["id"] for h in _recall(s3_env, "zeppelin hangar")} & set(cell["source_ids"])
    ext = {"atomic_facts": [{"fact": "Mel visited the walrus sanctuary"}]}
    assert run_s3(["apply", "extraction", "-"], s3_env, input=json.dumps(ext)).returncode == 0
    [scene] = json.loads(run_s3(["list", "scenes", "--json"], s3_env).stdout)
    assert run_s3(["forget", scene["id"]], s3_env).returncode == 0
    assert json.loads(run_s3(["list", "scenes", "--json"], s3_env).stdout) == []


def test_list_sources_and_forget_a_whole_source(ingested: dict[str, Any], s3_env: dict[str, str],
                                                sophia_home: Path) -> None:
    r = run_s3(["list", "sources", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    srcs = {s["source"]: s for s in json.loads(r.stdout)}
    assert set(srcs) == {"conv-a", "conv-b"} and srcs["conv-a"]["turns"] == 6
    assert srcs["conv-a"]["first"] == "2023-05-01T10:00:00Z" and srcs["conv-a"]["speakers"] == ["Caroline", "Mel"]
    assert "conv-a: 6 turns" in run_s3(["list", "sources"], s3_env).stdout
    r = run_s3(["forget", "--source", "conv-a", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["turns_removed"] == 6 and json.loads(r.stdout)["index_rows_removed"] == 6
    assert not (sophia_home / "memory" / "conversations" / "conv-a.jsonl").exists()
    assert not [h for h in _recall(s3_env, "walrus sanctuary") if h["type"] == "turn"]
    assert [s["source"] for s in json.loads(run_s3(["list", "sources", "--json"], s3_env).stdout)] == ["conv-b"]
    r = run_s3(["forget", "--source", "conv-a"], s3_env)
    assert r.returncode == 2 and "no ingested source 'conv-a'" in r.stderr
    r = run_s3(["forget"], s3_env)
    assert r.returncode == 2 and "either an ID or --source" in r.stderr


def test_forget_an_id_only_the_index_still_holds(ingested: dict[str, Any], s3_env: dict[str, str],
                                                 sophia_home: Path) -> None:
    (sophia_home / "memory" / "conversations" / "conv-b.jsonl").unlink()  # the file went away by hand
    tid = next(h["id"] for h in _recall(s3_env, "zeppelin hangar") if h["type"] == "turn")
    r = run_s3(["forget", tid, "--json"], s3_env)
    assert r.returncode == 0 and json.loads(r.stdout)["from"] == "index.db", r.stderr
    assert tid not in {h["id"] for h in _recall(s3_env, "zeppelin hangar")}


def test_list_memcells_counts_the_ingested_ones(ingested: dict[str, Any], s3_env: dict[str, str]) -> None:
    reported = sum(o["memcells"] for o in ingested.values())
    r = run_s3(["list", "memcells", "--json"], s3_env)
    cells = json.loads(r.stdout)
    assert reported >= 2 and len(cells) == reported
    assert all(c["type"] == "memcell" and c["source_ids"] for c in cells)
    assert f"## Memcells: {reported}" in run_s3(["list", "memcells"], s3_env).stdout


def test_list_episodes_json_gives_the_stored_episodes(s3_env: dict[str, str], sophia_home: Path) -> None:
    run_s3(["init"], s3_env)
    seed_episodes(sophia_home, [
        make_episode("ep_old", "Deploy with Docker", ended="2026-01-01T10:00:00Z", errors=["exit 1"]),
        make_episode("ep_new", "Fix the flaky test", ended="2026-01-05T10:00:00Z")])
    eps = json.loads(run_s3(["list", "episodes", "--json"], s3_env).stdout)
    assert [e["id"] for e in eps] == ["ep_new", "ep_old"]
    assert eps[1]["goal"] == "Deploy with Docker" and eps[1]["errors"] == ["exit 1"]
    assert eps[1]["actions"] == [{"tool": "Bash", "input": "docker ps"}]


# ---------------------------------------------------------------- not injected by default


def _prompt_hook(env: dict[str, str], cwd: Path, prompt: str) -> str:
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s-test", "cwd": str(cwd), "prompt": prompt}
    r = subprocess.run(["bash", str(ROOT / "hooks" / "prompt_context.sh")], input=json.dumps(payload), env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_prompt_context_leaves_ingested_turns_out_unless_opted_in(
        s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    assert run_s3(["init"], s3_env).returncode == 0
    conv = _conversation(tmp_path / "chat.jsonl", "walrus sanctuary")
    r = run_s3(["ingest", str(conv), "--source", "chat", "--project", str(project)], s3_env)
    assert r.returncode == 0, r.stderr
    prompt = "what do we know about the walrus sanctuary weekend?"
    assert "turn:chat:" not in _prompt_hook(s3_env, project, prompt)
    cfg_path = sophia_home / "config.json"
    cfg = json.loads(cfg_path.read_text())
    assert cfg["context"]["include_ingested"] is False  # the template states the default
    cfg["context"]["include_ingested"] = True
    cfg_path.write_text(json.dumps(cfg))
    assert "turn:chat:" in _prompt_hook(s3_env, project, prompt)


def test_the_config_model_knows_the_key() -> None:
    from sophia.models import Config

    assert Config().context.include_ingested is False
    assert Config.model_validate({"context": {"include_ingested": True}}).context.include_ingested is True
