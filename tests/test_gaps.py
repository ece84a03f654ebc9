"""Knowledge gaps as records (issue 27): each with its project, source, key and open/closed state. What
SessionStart shows (the real hook), the API the learners add and close gaps with, the migration of old
string gaps, and the listings that still show every gap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_s3
from sophia import gaps, paths
from sophia.memory import gaps as gap_api
from sophia.state import init_tree


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree(sophia_home)
    return sophia_home


def stored(home: Path) -> list[dict[str, Any]]:
    return list(json.loads(paths.self_model_path(home).read_text())["knowledge_gaps"])


def write_gaps(home: Path, values: list[Any]) -> None:
    sm = json.loads(paths.self_model_path(home).read_text())
    sm["knowledge_gaps"] = values
    paths.self_model_path(home).write_text(json.dumps(sm))


def session_start(env: dict[str, str], cwd: Path | str, sid: str = "s1", source: str = "startup") -> str:
    payload = {"session_id": sid, "cwd": str(cwd), "hook_event_name": "SessionStart", "source": source}
    r = subprocess.run(["bash", str(ROOT / "hooks" / "session_start.sh")], input=json.dumps(payload),
                       env={**env, "SOPHIA_PYTHON": sys.executable}, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    return str(json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]) if r.stdout.strip() else ""


def projects(tmp_path: Path) -> tuple[Path, Path]:
    here, there = tmp_path / "work" / "api", tmp_path / "work" / "site"
    here.mkdir(parents=True)
    there.mkdir(parents=True)
    return here, there


# ---------------------------------------------------------------- SessionStart, through the real hook


def test_session_start_shows_this_projects_open_gaps_and_the_global_ones(s3_env: dict[str, str], home: Path,
                                                                        tmp_path: Path) -> None:
    here, there = projects(tmp_path)
    write_gaps(home, [
        gaps.record("how the api's migrations are ordered", project=str(here), source="reflection"),
        gaps.record("why the site's CDN purge is slow", project=str(there), source="reflection"),
        gaps.record("how git rebase --onto works", is_global=True),
        dict(gaps.record("the api's flaky login test", project=str(here)), closed_at="2026-01-01T00:00:00Z",
             closed_by="proc_abc"),
        "an old string gap of no known project",
    ])
    text = session_start(s3_env, here)
    section = text[text.index("## Open knowledge gaps"):]
    assert "how the api's migrations are ordered" in section and "how git rebase --onto works" in section
    assert "CDN purge" not in text  # another project's: never
    assert "flaky login test" not in text  # closed
    assert "old string gap" not in text  # unscoped: listed by s3 status, not shown here
    ids = {g["text"]: g["id"] for g in gaps.records(stored(home))}
    assert f"- [{ids['how git rebase --onto works']}] how git rebase --onto works" in section
    other = session_start(s3_env, there, sid="s2")
    assert "CDN purge" in other and "migrations are ordered" not in other and "rebase --onto" in other


def test_every_gap_is_still_listed(s3_env: dict[str, str], home: Path, tmp_path: Path) -> None:
    here, there = projects(tmp_path)
    write_gaps(home, [gaps.record("api gap", project=str(here)), gaps.record("site gap", project=str(there)),
                      dict(gaps.record("closed gap", project=str(here)), closed_at="2026-01-01T00:00:00Z",
                           closed_by="proc_abc"),
                      "old gap"])
    listed = json.loads(run_s3(["list", "gaps", "--json"], s3_env).stdout)
    assert [g["text"] for g in listed] == ["api gap", "site gap", "closed gap", "old gap"]
    text = run_s3(["list", "gaps"], s3_env).stdout
    assert f"api gap (project {here})" in text and "old gap (no project)" in text
    assert "closed gap" in text and "closed 2026-01-01 by proc_abc" in text
    status = run_s3(["status"], s3_env)
    assert status.returncode == 0, status.stderr
    assert "site gap" in status.stdout and "old gap (no project)" in status.stdout
    assert "1 closed" in status.stdout and "closed gap" not in status.stdout


# ---------------------------------------------------------------- the API the learners use


def test_close_gaps_closes_a_projects_gap_by_key_and_nothing_else(home: Path, tmp_path: Path,
                                                                 s3_env: dict[str, str]) -> None:
    here, there = projects(tmp_path)
    key = gaps.failure_key("docker compose up", "no such file")
    added = gap_api.add_gaps(home, [
        gaps.record("recurring failure in api: `docker compose up` fails", project=str(here), key=key,
                    source="learner", source_ids=["s1", "s2"]),
        gaps.record("recurring failure in site: `docker compose up` fails", project=str(there), key=key,
                    source="learner"),
        gaps.record("recurring failure in api: `make` fails", project=str(here),
                    key=gaps.failure_key("make", "exit 2"), source="learner")])
    assert len(added) == 3
    assert gap_api.add_gaps(home, [gaps.record("recurring failure in api: `docker compose up` fails (3 sessions)",
                                               project=str(here), key=key, source="learner")]) == []  # same key
    assert "docker compose up" in session_start(s3_env, here)
    closed = gap_api.close_gaps(home, str(here), [key], by="proc_fix1")
    by_project = {(g["project"], g["key"]): g for g in stored(home)}
    mine = by_project[(str(here), key)]
    assert closed == [mine["id"]] and mine["closed_by"] == "proc_fix1" and mine["closed_at"]
    assert by_project[(str(there), key)]["closed_at"] is None  # the same key in another project stays open
    assert by_project[(str(here), gaps.failure_key("make", "exit 2"))]["closed_at"] is None
    assert gap_api.close_gaps(home, str(here), [key], by="proc_fix2") == []  # already closed
    text = session_start(s3_env, here)
    assert "docker compose up" not in text and "`make` fails" in text
    # the failure comes back: the same gap is open again (not a second one)
    assert gap_api.add_gaps(home, [gaps.record("again", project=str(here), key=key, source="learner")]) == \
        [mine["text"]]
    again = [g for g in stored(home) if g["key"] == key and g["project"] == str(here)]
    assert len(again) == 1 and again[0]["closed_at"] is None and again[0]["closed_by"] is None


def test_at_most_max_gaps_are_kept_closed_ones_going_first(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gap_api, "MAX_GAPS", 4)
    gap_api.add_gaps(home, [gaps.record(f"gap number {i} about topic {i}", project="/p", key=f"k{i}")
                            for i in range(4)])
    gap_api.close_gaps(home, "/p", ["k2"], by="proc_x")
    gap_api.add_gaps(home, [gaps.record("gap number 9 about topic 9", project="/p", key="k9")])
    assert [g["key"] for g in stored(home)] == ["k0", "k1", "k3", "k9"]
    gap_api.add_gaps(home, [gaps.record("gap number 10 about topic 10", project="/p", key="k10")])
    assert [g["key"] for g in stored(home)] == ["k1", "k3", "k9", "k10"]  # then the oldest open one


def test_a_string_gap_reads_as_an_unscoped_record() -> None:
    from sophia.models import SelfModel

    sm = SelfModel.model_validate({"knowledge_gaps": ["Rust lifetimes", {"text": "Go generics", "is_global": True}]})
    assert [(g.text, g.project, g.is_global, g.source) for g in sm.knowledge_gaps] == \
        [("Rust lifetimes", None, False, "unknown"), ("Go generics", None, True, "unknown")]
    assert sm.knowledge_gaps[0].id == gaps.gap_id(None, "rust  LIFETIMES") and sm.knowledge_gaps[1].id.startswith("gap_")
    assert not gaps.shown_in(gaps.record("Rust lifetimes"), "/p") and gaps.shown_in(gaps.record("x", is_global=True), None)
    with pytest.raises(ValueError):
        SelfModel.model_validate({"knowledge_gaps": [12]})


def test_the_learners_counts_file_is_the_one_paths_names(home: Path) -> None:
    from sophia.learning import learners

    assert learners.state_path(home) == paths.command_counts_path(home)


# ---------------------------------------------------------------- the migration of old string gaps


def _old_home(s3_env: dict[str, str], home: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A 1.2.0 tree: string gaps, and the learners' counts of three projects (two share a name)."""
    api, site = projects(tmp_path)
    other_api = tmp_path / "elsewhere" / "api"
    cfg = json.loads(paths.config_path(home).read_text())
    cfg["schema_version"] = "1.2.0"
    paths.config_path(home).write_text(json.dumps(cfg))

    def failure(command: str, error: str, gap: bool = True) -> dict[str, Any]:
        return {"key": command.split()[0], "command": command, "error": error, "class": error.split(":")[0],
                "sessions": ["a", "b"], **({"gap": True} if gap else {})}

    counts = {"projects": {
        str(site): {"commands": {}, "failures": {"npm\x1fError": failure("npm run build", "Error: out of memory")}},
        str(api): {"commands": {}, "failures": {"pytest\x1fE": failure("pytest -x", "E: fixture db")}},
        str(other_api): {"commands": {}, "failures": {"cargo\x1ferror": failure("cargo build", "error: linker")}},
    }}
    p = paths.command_counts_path(home)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(counts))
    write_gaps(home, [
        "recurring failure in site: `npm run build` fails with `Error: out of memory` (2 sessions)",
        "recurring failure in api: `pytest -x` fails with `E: fixture db` (2 sessions)",  # two "api": the key tells
        "recurring failure in api: `go vet` fails with `vet: bad` (2 sessions)",  # two "api", no match: unscoped
        "recurring failure in gone: `x` fails with `y` (2 sessions)",  # no such project any more
        "Kubernetes pod networking",  # reflection's: no project to be found
    ])
    return api, site, other_api


def test_a_migrated_home_keeps_its_gaps_scoped_where_it_can_tell(s3_env: dict[str, str], home: Path,
                                                               tmp_path: Path) -> None:
    api, site, _ = _old_home(s3_env, home, tmp_path)
    r = run_s3(["init"], s3_env)
    assert r.returncode == 0, r.stderr
    assert "5 knowledge gaps are now records; 2 took their project" in r.stdout
    assert json.loads(paths.config_path(home).read_text())["schema_version"] == "1.3.0"
    got = stored(home)

    def one(part: str) -> dict[str, Any]:
        (found,) = [g for g in got if part in g["text"]]
        return found

    assert len(got) == 5 and all(g["id"].startswith("gap_") and g["closed_at"] is None for g in got)
    site_gap = one("npm run build")
    assert (site_gap["project"], site_gap["key"], site_gap["source"]) == (str(site), "npm\x1fError", "learner")
    assert (one("pytest -x")["project"], one("pytest -x")["key"]) == (str(api), "pytest\x1fE")
    for unscoped in ("go vet", "in gone", "Kubernetes pod networking"):
        assert one(unscoped)["project"] is None and one(unscoped)["is_global"] is False
    assert one("Kubernetes")["source"] == "unknown" and one("go vet")["source"] == "learner"
    assert list((home / "backups").glob("pre-migration-1.2.0-*"))
    # SessionStart shows each project its own; the unscoped ones only in the listings
    assert "npm run build" in session_start(s3_env, site) and "pytest -x" not in session_start(s3_env, site, "s2")
    text = session_start(s3_env, api, "s3")
    assert "pytest -x" in text and "go vet" not in text and "Kubernetes" not in text
    assert "Kubernetes pod networking" in run_s3(["status"], s3_env).stdout
    # migrating again changes nothing, and the learners can close a migrated gap by its key
    before = stored(home)
    assert run_s3(["init"], s3_env).returncode == 0 and stored(home) == before
    assert gap_api.close_gaps(home, str(api), ["pytest\x1fE"], by="proc_y") == [one("pytest -x")["id"]]
