"""``s3 export`` / ``s3 import`` (issue 17, portability): a state made by the real hooks and ``s3``
commands, exported and imported into a fresh home through the real CLI."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_s3, tool_call_lines

QUERIES = ["widgets module tests", "build python version", "blue green deploy canary", "walrus sanctuary trip"]
SECRET = "sk-live-Zx9Qw8Er7Ty6Ui5Op4As3Df2"


def transcript(tmp_path: Path, project: Path) -> Path:
    lines: list[dict[str, Any]] = [{"type": "user", "cwd": str(project), "sessionId": "s-port",
                                    "timestamp": "2026-11-20T10:00:00.000Z",
                                    "message": {"role": "user", "content": "make the widgets tests pass"}}]
    for i, (tool, inp, result, err) in enumerate([
            ("Bash", {"command": "pytest -q"}, "E   ModuleNotFoundError: No module named 'widgets'", True),
            ("Edit", {"file_path": f"{project}/src/widgets.py", "old_string": "a", "new_string": "b"}, "ok", False),
            ("Bash", {"command": "pytest -q --import-mode=importlib"}, "3 passed in 0.1s", False)], 1):
        lines += tool_call_lines(project, i, tool, inp, result, err)
    lines.append({"type": "assistant", "cwd": str(project), "timestamp": "2026-11-20T10:00:09.000Z",
                  "message": {"role": "assistant", "content": [{"type": "text", "text": "The widgets tests pass now."}]}})
    p = tmp_path / "s-port.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def s3(env: dict[str, str], *args: str, input: str | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
    r = run_s3(list(args), env, input)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def state(s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> Path:
    """A home made by real commands: an episode (the SessionEnd hook), rules, extracted memories, a conversation."""
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / ".git").mkdir()  # a work tree: its root is the project
    s3(s3_env, "init")
    payload = {"session_id": "s-port", "transcript_path": str(transcript(tmp_path, project)), "cwd": str(project),
               "hook_event_name": "SessionEnd", "reason": "other"}
    r = subprocess.run(["bash", str(ROOT / "hooks" / "session_end.sh")], input=json.dumps(payload),
                       env={**s3_env, "SOPHIA_PYTHON": sys.executable}, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert list((sophia_home / "episodes").glob("ep_*.json")), "the hook wrote no episode"
    s3(s3_env, "learn", "Deploy with blue green slots, canary first", "--domain", "deploy")
    s3(s3_env, "learn", "Pin the python version the build uses")
    ep_id = next((sophia_home / "episodes").glob("ep_*.json")).stem
    fixture = (ROOT / "tests/fixtures/contracts/extraction/valid/full.json").read_text()
    extraction = json.loads(fixture.replace('"ep_c1"', json.dumps(ep_id)))  # the fixture names an episode of its own
    s3(s3_env, "apply", "extraction", "-", input=json.dumps(extraction))
    conv = tmp_path / "chat.jsonl"
    conv.write_text("".join(json.dumps({"id": f"D1:{n}", "session": 1, "speaker": "Ann" if n % 2 else "Bo",
                                        "text": t, "timestamp": "2023-05-01T10:00:00Z"}) + "\n"
                            for n, t in enumerate(["The walrus sanctuary trip is in June.", "Bring the camera."])))
    s3(s3_env, "ingest", str(conv), "--source", "chat")
    return project


def fresh_env(s3_env: dict[str, str], tmp_path: Path, name: str) -> dict[str, str]:
    env = {**s3_env, "SOPHIA_HOME": str(tmp_path / name)}
    s3(env, "init")
    return env


def recall_all(env: dict[str, str]) -> list[list[tuple[str, str]]]:
    out = []
    for q in QUERIES:
        res = json.loads(s3(env, "recall", q, "--json", "--limit", "20").stdout)["results"]
        out.append([(r["id"], r["type"]) for r in res])
    return out


def memory_hash(home: Path) -> dict[str, str]:
    """The memory stores (episodes, rules, memory/ and its conversations) -> a hash of each file."""
    files = [home / "semantic_rules.json", *(home / "episodes").rglob("*"), *(home / "memory").rglob("*")]
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(files)
            if p.is_file() and not p.name.endswith(".lock")}


def test_round_trip_into_a_fresh_home_gives_the_same_recall_and_reimport_is_a_no_op(
        state: Path, s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "export.json"
    r = json.loads(s3(s3_env, "export", "--output", str(out), "--json").stdout)
    assert r["counts"]["episodes"] == 1 and r["counts"]["rules"] == 2 and r["counts"]["turns"] == 2
    # ties among expanded neighbours fall to index order: compare with the order a rebuild gives
    s3(s3_env, "index", "--rebuild")
    before = recall_all(s3_env)
    assert all(before), before
    env = fresh_env(s3_env, tmp_path, "other")
    first = json.loads(s3(env, "import", str(out), "--json").stdout)
    assert first["conflicts"] == 0 and first["skipped"] == 0 and sum(first["added"].values()) == first["items"]
    assert recall_all(env) == before
    home2 = Path(env["SOPHIA_HOME"])
    assert memory_hash(home2).keys() >= {k for k in memory_hash(sophia_home) if not k.startswith("memory/conflicts")}
    files = memory_hash(home2)
    again = json.loads(s3(env, "import", str(out), "--json").stdout)
    assert again["added"] == {} and again["conflicts"] == 0 and again["skipped"] == first["items"]
    assert memory_hash(home2) == files and recall_all(env) == before
    r = s3(env, "index", "--rebuild", "--json")
    assert recall_all(env) == before, r.stdout


def test_a_differing_item_with_the_same_id_is_a_conflict_and_yours_is_kept(
        state: Path, s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "export.json"
    s3(s3_env, "export", "-o", str(out))
    doc = json.loads(out.read_text())
    rule = doc["rules"][0]
    mine = rule["rule_content"]
    rule["rule_content"] = "Deploy in place on Fridays"
    out.write_text(json.dumps(doc))
    r = json.loads(s3(s3_env, "import", str(out), "--json").stdout)
    assert r["conflicts"] == 1 and r["conflict_ids"] == [rule["id"]] and r["added"] == {}
    rules = json.loads((sophia_home / "semantic_rules.json").read_text())
    assert next(x for x in rules if x["id"] == rule["id"])["rule_content"] == mine
    conflicts = json.loads(s3(s3_env, "list", "conflicts", "--json").stdout)
    rec = next(c for c in conflicts if c.get("kept_id") == rule["id"])
    assert "Fridays" in rec["superseded_text"] and rec["incoming"]["rule_content"] == "Deploy in place on Fridays"
    s3(s3_env, "import", str(out))  # the same conflict again is not recorded twice
    assert len([c for c in json.loads(s3(s3_env, "list", "conflicts", "--json").stdout)
                if c.get("kept_id") == rule["id"]]) == 1


def test_a_planted_secret_is_redacted_on_disk(state: Path, s3_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "export.json"
    s3(s3_env, "export", "-o", str(out))
    doc = json.loads(out.read_text())
    fact = dict(doc["memory"]["facts"][0], id="fact_planted", text=f"the deploy token is api_key={SECRET}")
    fact["meta"] = {**fact.get("meta", {}), "password": "hunter2hunter2", "note": f"Authorization: Bearer {SECRET}"}
    doc["memory"]["facts"].append(fact)
    out.write_text(json.dumps(doc))
    env = fresh_env(s3_env, tmp_path, "other")
    s3(env, "import", str(out))
    home2 = Path(env["SOPHIA_HOME"])
    blob = b"".join(p.read_bytes() for p in home2.rglob("*") if p.is_file())
    assert SECRET.encode() not in blob and b"hunter2hunter2" not in blob
    facts = json.loads((home2 / "memory" / "facts.json").read_text())["items"]
    assert "[REDACTED]" in next(f for f in facts if f["id"] == "fact_planted")["text"]


def test_a_bad_file_is_refused_in_one_line_and_nothing_is_written(
        s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    s3(s3_env, "init")
    s3(s3_env, "learn", "Deploy with blue green slots, canary first")
    out = tmp_path / "export.json"
    s3(s3_env, "export", "-o", str(out))
    good = json.loads(out.read_text())
    good["rules"].append({"id": "rule_new_one", "trigger_concept": "x", "rule_content": "a new rule"})
    last_bad = dict(good, conversations={"chat": [{"id": "turn:chat:x", "type": "turn", "text": 42}]})
    unsafe = dict(good, episodes=[{"id": "../../etc/passwd", "goal": "x"}])
    not_a_list = dict(good, memory={"facts": {"id": "fact_1"}})
    before = memory_hash(sophia_home)
    for bad in ["not json {", json.dumps({"format": "something-else"}), json.dumps([1, 2]),
                json.dumps(dict(good, version=99)), json.dumps(last_bad), json.dumps(unsafe), json.dumps(not_a_list)]:
        out.write_text(bad)  # each but the first three carries a good new rule: still nothing is written
        r = s3(s3_env, "import", str(out), ok=False)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
        assert memory_hash(sophia_home) == before, bad
    r = s3(s3_env, "import", str(tmp_path / "missing.json"), ok=False)
    assert r.returncode == 2 and "no such file" in r.stderr


def test_markdown_export_one_file_per_kind_and_one_project(state: Path, s3_env: dict[str, str],
                                                           tmp_path: Path) -> None:
    folder = tmp_path / "md"
    s3(s3_env, "export", "--format", "markdown", "-o", str(folder))
    names = {p.name for p in folder.iterdir()}
    assert {"README.md", "episodes.md", "rules.md", "facts.md", "turns.md"} <= names
    doc_out = tmp_path / "all.json"
    doc = json.loads((s3(s3_env, "export", "-o", str(doc_out)), doc_out.read_text())[1])
    for rule in doc["rules"]:
        assert f"## {rule['id']}" in (folder / "rules.md").read_text()
    ep = doc["episodes"][0]
    assert f"## {ep['id']}" in (folder / "episodes.md").read_text() and "widgets" in (folder / "episodes.md").read_text()
    one = tmp_path / "one.json"
    r = json.loads(s3(s3_env, "export", "--project", str(state), "-o", str(one), "--json").stdout)
    assert r["counts"]["episodes"] == 1 and r["counts"]["rules"] == 0 and r["counts"]["turns"] == 0
    r = subprocess.run([sys.executable, "-m", "sophia.cli.entry", "export", "--project", ".", "-o", str(one),
                        "--json"], env=s3_env, cwd=state / "src", capture_output=True, text=True, timeout=120)
    assert json.loads(r.stdout)["project"] == str(state) and json.loads(r.stdout)["counts"]["episodes"] == 1
    assert s3(s3_env, "export", "--format", "yaml", ok=False).returncode == 2
    typo = s3(s3_env, "export", "--project", str(state) + "-typo", "-o", str(tmp_path / "typo.json"), ok=False)
    assert typo.returncode == 2 and "no such folder, and no memory" in typo.stderr  # issue 32: not an empty file
    assert not (tmp_path / "typo.json").exists()


def test_a_big_import_shows_progress_on_stderr(s3_env: dict[str, str], tmp_path: Path) -> None:
    facts = [{"id": f"fact_{n:05d}", "type": "fact", "text": f"fact number {n} about the otter {n % 7}",
              "timestamp": "2026-01-01T00:00:00Z"} for n in range(1200)]
    doc = {"format": "sophia-memory-export", "version": 1, "exported_at": "2026-01-01T00:00:00Z", "project": None,
           "episodes": [], "rules": [], "memory": {"facts": facts}, "conversations": {}}
    f = tmp_path / "big.json"
    f.write_text(json.dumps(doc))
    env = fresh_env(s3_env, tmp_path, "big")
    r = s3(env, "import", str(f))
    assert "s3 import: 500/1200" in r.stderr and "s3 import: 1200/1200" in r.stderr
    assert "added facts 1200" in r.stdout
    assert os.path.getsize(Path(env["SOPHIA_HOME"]) / "memory" / "facts.json") > 0

