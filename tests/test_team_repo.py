"""Team memory that lives in the repository (issue 31), with real git: one bare repository, two clones
(A and B), two state homes, the real ``s3`` CLI and the real hooks fed real JSON.

The issue's bars: a rule shared and pushed in A is, after a pull in B, found by ``s3 recall`` and injected
into B's prompt context through the real hook; an edit in B pushed back changes it in A; a file removed
upstream is forgotten; a planted secret is refused at share time; an agent's Write into the folder is
asked. Then the pieces: the file format, the refresh (the hooks' one stat, the CLI's every file, a
rebuilt index), what ``share`` refuses and keeps, ``suggest``, ``s3 forget``, ``s3 status`` and the viewer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB, ROOT, wait_for
from sophia.memory import team_repo

RULE = "Run the integration tests of the quokka service with `make itest`, never `pytest -k integration`"
EDITED = "Run the integration tests of the quokka service with `make itest-all`; `make itest` skips the slow ones"
PROMPT = "how do I run the quokka service integration tests?"


# ---------------------------------------------------------------- two teammates, one repository


class Mate:
    """One teammate: a clone of the shared repository and a state home of their own."""

    def __init__(self, root: Path, name: str, origin: Path) -> None:
        self.name, self.home = name, root / f"home-{name}"
        self.home.mkdir()
        self.clone = root / f"clone-{name}"
        git(root, "clone", "-q", str(origin), str(self.clone))
        git(self.clone, "config", "user.name", name)
        git(self.clone, "config", "user.email", f"{name.lower()}@example.com")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
        self.env.update(HOME=str(self.home), SOPHIA_HOME=str(self.home / ".sophia"), PYTHONPATH=str(LIB),
                        SOPHIA_PYTHON=os.path.realpath(sys.executable), SOPHIA_RECALL_SEMANTIC="0",
                        SOPHIA_TEAM_SYNC="0", SOPHIA_GUARDIAN_RESIDENT="0")
        self.s3("init")

    @property
    def sophia(self) -> Path:
        return self.home / ".sophia"

    def s3(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        r = subprocess.run([sys.executable, "-m", "sophia.cli.entry", *args], cwd=self.clone, env=self.env,
                           capture_output=True, text=True, timeout=120)
        if ok:
            assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r

    def git(self, *args: str) -> str:
        return git(self.clone, *args)

    def recall(self, query: str, *extra: str) -> list[dict[str, Any]]:
        return json.loads(self.s3("recall", query, "--json", *extra).stdout)["results"]

    def hook(self, script: str, payload: dict[str, Any]) -> str:
        r = subprocess.run(["bash", str(ROOT / "hooks" / script)], input=json.dumps(payload), cwd=self.clone,
                           env=self.env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and not r.stderr, (r.stdout, r.stderr)
        return r.stdout

    def prompt(self, text: str, session: str) -> str:
        """What the real UserPromptSubmit hook injects for ``text`` ('' when nothing)."""
        out = self.hook("prompt_context.sh", {"session_id": session, "hook_event_name": "UserPromptSubmit",
                                              "prompt": text, "cwd": str(self.clone)})
        return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""


def git(cwd: Path, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                       env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"})
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


@pytest.fixture
def team(tmp_path: Path) -> tuple[Mate, Mate]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", "-b", "main", str(seed))
    (seed / "README.md").write_text("# quokka\n")
    git(seed, "add", "README.md")
    git(seed, "-c", "user.name=seed", "-c", "user.email=s@example.com", "commit", "-qm", "start")
    git(seed, "push", "-q", str(origin), "main")
    return Mate(tmp_path, "Alice", origin), Mate(tmp_path, "Bob", origin)


def age(*paths: Path, seconds: float = 60) -> None:
    """Stamps older than team_repo.RACY_NS (a stamp that recent is looked at again anyway)."""
    t = time.time() - seconds
    for p in paths:
        os.utime(p, (t, t))


def learn(m: Mate, text: str, domain: str = "testing") -> str:
    return json.loads(m.s3("learn", text, "--domain", domain, "--json").stdout)["rule"]["id"]


def team_hits(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["type"] == "team"]


def test_the_issue_bars_with_two_clones_of_one_bare_repository(team: tuple[Mate, Mate]) -> None:
    a, b = team
    rid = learn(a, RULE)
    out = a.s3("team", "init", "--repo", "--share", rid).stdout
    assert "wrote .sophia/team/" in out
    shared = a.clone / ".sophia" / "team" / f"{rid}.md"
    front, body = team_repo.parse(shared.read_text())
    assert front["id"] == rid and front["kind"] == "rule" and front["trigger"] == "testing"
    assert front["learned_by"] == "Alice" and front["confidence"] == "0.8" and body.strip() == RULE
    a.git("add", ".sophia/team")
    a.git("commit", "-qm", "team: the quokka test rule")
    a.git("push", "-q", "origin", "main")

    # B pulls: the real prompt hook (no s3 command ran in B since) re-indexes the folder and injects it
    b.git("pull", "-q", "--ff-only")
    injected = b.prompt(PROMPT, "b-1")
    assert "make itest" in injected and "team rule, from Alice" in injected, injected
    hits = team_hits(b.recall("quokka integration tests"))
    assert len(hits) == 1 and "`make itest`, never" in hits[0]["text"]
    assert hits[0]["project"] == str(b.clone) and hits[0]["meta"]["learned_by"] == "Alice"
    assert hits[0]["meta"]["file"] == f".sophia/team/{rid}.md"
    tid = hits[0]["id"]

    # B edits the file, pushes; A pulls: the same item, the new text, in recall and in A's prompt context.
    # A's record is fresh first (stamps older than the racy window), so only the pull can move it: git
    # replaces the file it updates, and the hook's one stat of the folder sees that.
    age(shared, shared.parent)
    a.s3("list", "team")
    assert not team_repo.changed(a.sophia, str(a.clone))
    shared_b = b.clone / ".sophia" / "team" / f"{rid}.md"
    shared_b.write_text(shared_b.read_text().replace(RULE, EDITED))
    b.git("commit", "-qam", "team: itest-all")
    b.git("push", "-q", "origin", "main")
    a.git("pull", "-q", "--ff-only")
    assert team_repo.changed(a.sophia, str(a.clone))
    injected = a.prompt(PROMPT, "a-1")
    assert "make itest-all" in injected and "team rule, from Alice" in injected, injected
    hits = team_hits(a.recall("quokka integration tests"))
    assert [h["text"] for h in hits] == [f"testing: {EDITED}"]

    # B removes it upstream; A pulls: forgotten by the prompt hook and by recall
    b.git("rm", "-q", f".sophia/team/{rid}.md")
    b.git("commit", "-qm", "team: drop the rule")
    b.git("push", "-q", "origin", "main")
    a.git("pull", "-q", "--ff-only")
    assert "team rule" not in a.prompt(PROMPT, "a-2")
    assert team_hits(a.recall("quokka integration tests")) == []
    assert json.loads(a.s3("list", "team", "--json").stdout) == []
    assert team_hits(b.recall("quokka integration tests", "--type", "team")) == []  # B's own clone, too
    assert tid not in b.s3("list", "team").stdout

    # a planted secret is refused at share time: nothing is written
    rules = json.loads((a.sophia / "semantic_rules.json").read_text())
    rules.append({"id": "rule_planted00001", "trigger_concept": "deploy", "source": "manual", "confidence": 0.9,
                  "rule_content": "deploy with the key AKIAIOSFODNN7REALKEY then restart", "source_episodes": [],
                  "created_at": "2026-01-02T03:04:05Z", "validation_count": 0, "last_validated": None})
    (a.sophia / "semantic_rules.json").write_text(json.dumps(rules))
    before = sorted(p.name for p in (a.clone / ".sophia" / "team").iterdir())
    r = a.s3("team", "share", rid, "rule_planted00001", ok=False)
    assert r.returncode == 1 and "looks like a secret" in r.stderr and "nothing was written" in r.stderr
    assert sorted(p.name for p in (a.clone / ".sophia" / "team").iterdir()) == before

    # an agent's Write into the folder is asked (the real guardian hook); its twin elsewhere is not
    def guard(path: str) -> str:
        out = b.hook("guardian_tier1.sh", {"session_id": "b-1", "cwd": str(b.clone), "hook_event_name": "PreToolUse",
                                           "tool_name": "Write", "tool_input": {"file_path": path, "content": "x\n"},
                                           "tool_use_id": "t1"})
        return json.loads(out)["hookSpecificOutput"]["permissionDecision"] if out.strip() else "allow"

    assert guard(str(b.clone / ".sophia" / "team" / "rule_mine.md")) == "ask"
    assert guard(str(b.clone / "docs" / "team" / "rule_mine.md")) == "allow"


# ---------------------------------------------------------------- the file format


def test_render_and_parse_round_trip_what_teammates_write() -> None:
    front = {"id": "rule_1", "kind": "rule", "trigger": "deploy: blue/green", "learned_by": "Zoë O'Neil",
             "learned_at": "2026-03-02T10:00:00Z", "confidence": 0.85, "absent": None,
             "evidence": ["source: reflection", "validated 2 times, last 2026-03-01", '"quoted" # not a comment']}
    text = team_repo.render(front, "Use the `blue` slot first.\n\n---\nNot front matter.")
    got, body = team_repo.parse(text)
    assert got == {"id": "rule_1", "kind": "rule", "trigger": "deploy: blue/green", "learned_by": "Zoë O'Neil",
                   "learned_at": "2026-03-02T10:00:00Z", "confidence": "0.85",
                   "evidence": ["source: reflection", "validated 2 times, last 2026-03-01", '"quoted" # not a comment']}
    assert body == "Use the `blue` slot first.\n\n---\nNot front matter.\n"
    # what a person may type by hand: single quotes, an inline list, comments, no front matter at all
    hand = "---\nkind: procedure\n# a note\nlearned_by: 'Bob'\nevidence: [one, two]\n---\nStep one.\n"
    assert team_repo.parse(hand) == ({"kind": "procedure", "learned_by": "Bob", "evidence": ["one", "two"]},
                                     "Step one.\n")
    assert team_repo.parse("Just a note.\n") == ({}, "Just a note.\n")


def test_a_file_is_one_item_redacted_with_its_origin(tmp_path: Path) -> None:
    folder = tmp_path / ".sophia" / "team"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# Team memory\n")
    (folder / "fact_x.md").write_text("---\nkind: fact\nlearned_by: Carol\nconfidence: 2\n---\n"
                                      "The staging db password=Hunter2Hunter2x is rotated monthly.\n")
    (folder / "empty.md").write_text("---\nkind: rule\n---\n\n")
    items = {it["meta"]["file"]: it for it in team_repo.items(tmp_path / "nohome", [str(tmp_path)])}
    assert list(items) == [".sophia/team/fact_x.md"]  # not the README, not an empty body
    it = items[".sophia/team/fact_x.md"]
    assert it["type"] == "team" and it["project"] == str(tmp_path) and it["id"].startswith("team_")
    assert "Hunter2Hunter2x" not in json.dumps(it) and "[REDACTED]" in it["text"]
    assert it["meta"]["shared_kind"] == "fact" and it["meta"]["learned_by"] == "Carol"
    assert "confidence" not in it["meta"]  # 2 is no confidence


def test_only_the_repositorys_own_files_are_read(tmp_path: Path) -> None:
    """A link in a cloned repository never makes the kit read (and inject) a file from elsewhere."""
    elsewhere = tmp_path / "private"
    elsewhere.mkdir()
    (elsewhere / "notes.md").write_text("my bank PIN hint is the cat's birthday\n")
    project = tmp_path / "proj"
    folder = project / ".sophia" / "team"
    folder.mkdir(parents=True)
    (folder / "rule_ok.md").write_text("---\nkind: rule\n---\nthe repository's own rule\n")
    (folder / "rule_link.md").symlink_to(elsewhere / "notes.md")
    os.mkfifo(folder / "rule_fifo.md")  # would block a plain open()
    texts = [it["text"] for it in team_repo.items(tmp_path / "nohome", [str(project)])]
    assert texts == ["the repository's own rule"]
    assert team_repo.file_item(str(folder / "rule_link.md"), str(project)) is None
    # the whole folder a link out of the repository: nothing of it is read
    other = tmp_path / "other"
    (other / ".sophia").mkdir(parents=True)
    (other / ".sophia" / "team").symlink_to(elsewhere)
    assert team_repo.team_files(str(other)) == [] and team_repo.items(tmp_path / "nohome", [str(other)]) == []
    # a project reached through a link of its own is still itself
    (tmp_path / "alias").symlink_to(project)
    assert team_repo.team_files(str(tmp_path / "alias")) == ["rule_ok.md"]


# ---------------------------------------------------------------- refresh


def _item(project: Path, name: str, body: str) -> Path:
    p = project / ".sophia" / "team" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"---\nkind: rule\nlearned_by: Dana\n---\n{body}\n")
    return p


def _indexed(home: Path) -> dict[str, str]:
    from sophia.index import db

    conn = db.connect(home)
    try:
        return {r[0]: r[1] for r in conn.execute("SELECT id, text FROM items WHERE type = 'team'")}
    finally:
        conn.close()


def test_the_hooks_look_at_the_folder_the_cli_at_every_file(sophia_home: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(team_repo, "RACY_NS", 0)  # the files below are written within the same second
    sophia_home.mkdir(parents=True)
    project = tmp_path / "proj"
    p = _item(project, "rule_a.md", "the narwhal build needs `make narwhal`")
    assert team_repo.changed(sophia_home, str(project))
    assert team_repo.refresh_if_changed(sophia_home, str(project))
    assert list(_indexed(sophia_home).values()) == ["the narwhal build needs `make narwhal`"]
    assert not team_repo.changed(sophia_home, str(project))
    assert not team_repo.refresh_if_changed(sophia_home, str(project))
    # an edit in place leaves the folder as it was: the hooks' look misses it, the CLI's finds it
    ino = p.stat().st_ino
    with open(p, "r+") as fh:
        fh.seek(0, 2)
        fh.write("and `make narwhal-check` after it\n")
    assert p.stat().st_ino == ino and not team_repo.changed(sophia_home, str(project))
    team_repo.refresh_all(sophia_home)
    assert "narwhal-check" in next(iter(_indexed(sophia_home).values()))
    # a file replaced (what git does on a pull), then deleted: the folder's stat sees both
    q = _item(project, "rule_b.md", "the walrus service deploys from the `release` branch")
    assert team_repo.changed(sophia_home, str(project))
    team_repo.refresh_if_changed(sophia_home, str(project))
    assert len(_indexed(sophia_home)) == 2
    q.unlink()
    team_repo.refresh_if_changed(sophia_home, str(project))
    assert len(_indexed(sophia_home)) == 1
    # the whole folder gone: every item and the project's record go
    p.unlink()
    p.parent.rmdir()
    team_repo.refresh_if_changed(sophia_home, str(project))
    assert _indexed(sophia_home) == {} and team_repo.counts(sophia_home) == {}
    # a payload's cwd with a NUL in it is no project (os.stat raises ValueError, not OSError)
    assert not team_repo.changed(sophia_home, f"{project}\x00x")
    assert not team_repo.refresh_if_changed(sophia_home, f"{project}\x00x")


def test_the_kits_own_state_home_is_no_team_folder(tmp_path: Path) -> None:
    """A session in the home folder (no repository): ``~/.sophia/team`` keeps a team database's settings."""
    home = tmp_path / ".sophia"
    (home / "team").mkdir(parents=True)
    (home / "team" / "notes.md").write_text("---\nkind: rule\n---\nnot a team item\n")
    for project in (str(tmp_path), f"{tmp_path}/"):
        assert not team_repo.changed(home, project)
        assert team_repo.refresh(home, project) == {"changed": False, "indexed": 0, "removed": 0}
        assert team_repo.items(home, [project]) == [] and team_repo.counts(home) == {}


def test_a_change_in_the_same_clock_tick_is_looked_at_again(sophia_home: Path, tmp_path: Path) -> None:
    """A stamp newer than RACY_NS may hide a later change made in the same tick: it is not trusted."""
    sophia_home.mkdir(parents=True)
    project = tmp_path / "proj"
    _item(project, "rule_a.md", "the okapi tests run with `make okapi`")
    team_repo.refresh(sophia_home, str(project))
    assert team_repo.changed(sophia_home, str(project))  # just written: looked at again
    age(project / ".sophia" / "team" / "rule_a.md", project / ".sophia" / "team", seconds=10)
    team_repo.refresh(sophia_home, str(project))
    assert not team_repo.changed(sophia_home, str(project))


def test_a_rebuilt_index_is_refilled(team: tuple[Mate, Mate]) -> None:
    a, _ = team
    _item(a.clone, "rule_a.md", "the capybara cache is warmed with `make warm`")
    assert team_hits(a.recall("capybara cache warmed"))
    a.s3("index", "--rebuild")
    assert team_hits(a.recall("capybara cache warmed", "--type", "team"))
    # and by the prompt hook alone, when something else replaced index.db
    (a.sophia / "index.db").unlink()
    for extra in ("-wal", "-shm"):
        (a.sophia / f"index.db{extra}").unlink(missing_ok=True)
    assert "make warm" in a.prompt("how is the capybara cache warmed?", "s-9")


def test_session_start_refreshes_detached_when_the_folder_changed(team: tuple[Mate, Mate]) -> None:
    a, _ = team
    _item(a.clone, "rule_a.md", "the tapir service logs go to `journalctl -u tapir`")
    a.hook("session_start.sh", {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(a.clone),
                                "source": "startup"})
    assert wait_for(lambda: team_repo.counts(a.sophia).get(str(a.clone)) == 1, 30)
    time.sleep(0.3)  # the detached refresh exits right after writing its record


# ---------------------------------------------------------------- share, suggest, forget, status


def test_share_refuses_what_is_not_this_projects_and_keeps_a_teammates_edit(team: tuple[Mate, Mate],
                                                                          tmp_path: Path) -> None:
    a, _ = team
    rid = learn(a, RULE)
    facts = {"items": [
        {"id": "fact_other00001", "type": "fact", "text": "the other repo deploys on Fridays",
         "project": str(tmp_path / "elsewhere"), "timestamp": "2026-01-01T00:00:00Z", "meta": {}},
        {"id": "fact_mine000001", "type": "fact", "text": "the user prefers tabs", "project": None,
         "timestamp": "2026-01-01T00:00:00Z", "meta": {}}]}
    (a.sophia / "memory").mkdir(exist_ok=True)
    (a.sophia / "memory" / "facts.json").write_text(json.dumps(facts))
    for iid, why in (("fact_other00001", "belongs to"), ("fact_mine000001", "about you"),
                     ("ep_12345678", "only rules, procedures"), ("rule_nothere", "no rule with id")):
        r = a.s3("team", "share", iid, ok=False)
        assert r.returncode == 2 and why in r.stderr, (iid, r.stderr)
    assert not (a.clone / ".sophia").exists()
    assert json.loads(a.s3("team", "share", rid, "--json").stdout)["shared"][0]["status"] == "written"
    assert json.loads(a.s3("team", "share", rid, "--json").stdout)["shared"][0]["status"] == "unchanged"
    f = a.clone / ".sophia" / "team" / f"{rid}.md"
    f.write_text(f.read_text().replace("`make itest`", "`make itest -j4`"))
    r = a.s3("team", "share", rid)
    assert "kept the repository's version" in r.stdout and "--replace" in r.stderr and "-j4" in f.read_text()
    a.s3("team", "share", rid, "--replace")
    assert "-j4" not in f.read_text()
    tid = team_hits(a.recall("quokka integration tests"))[0]["id"]
    r = a.s3("forget", tid, ok=False)
    assert r.returncode == 2 and f".sophia/team/{rid}.md" in r.stderr and "commit" in r.stderr
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    r = subprocess.run([sys.executable, "-m", "sophia.cli.entry", "team", "share", rid], cwd=outside, env=a.env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not in a git repository" in r.stderr
    git(a.home, "init", "-q")  # a home folder kept in git (dotfiles): its .sophia is the kit's state
    r = subprocess.run([sys.executable, "-m", "sophia.cli.entry", "team", "share", rid], cwd=a.home, env=a.env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "the kit's own state home" in r.stderr and not (a.sophia / "team" / f"{rid}.md").exists()
    # a folder that is a link out of the repository is neither written nor read
    f.unlink()
    (a.clone / ".sophia" / "team").rename(tmp_path / "notes")
    (a.clone / ".sophia" / "team").symlink_to(tmp_path / "notes")
    for cmd in (("team", "share", rid), ("team", "init", "--repo")):
        r = a.s3(*cmd, ok=False)
        assert r.returncode == 2 and "a link out of the repository" in r.stderr, (cmd, r.stderr)
    assert not (tmp_path / "notes" / f"{rid}.md").exists()


def _procedure(project: Path, iid: str, text: str, successes: int, failures: int, sessions: int) -> dict[str, Any]:
    from sophia.learning.procedures import confidence, status

    return {"id": iid, "type": "procedure", "text": text, "project": str(project), "timestamp": "2026-02-01T00:00:00Z",
            "source_ids": ["ep_1"], "meta": {
                "category": "playbook", "learner": "zero_token", "successes": successes, "failures": failures,
                "sessions": sessions, "confidence": confidence(successes, failures),
                "status": status(successes, failures),
                "evidence": [{"session": "0123456789ab", "calls": {"ok": "t1"}, "proof": ["12 passed in 3.1s"],
                              "at": "2026-02-01T00:00:00Z"}]}}


def test_suggest_lists_what_is_sure_and_proven_more_than_once(team: tuple[Mate, Mate]) -> None:
    a, _ = team
    procs = [_procedure(a.clone, "proc_proven0001", "project playbook (test): `make itest`", 4, 0, 3),
             _procedure(a.clone, "proc_onceonly01", "project playbook (build): `make build`", 1, 0, 1),
             _procedure(a.clone, "proc_flaky00001", "project playbook (lint): `make lint`", 2, 2, 2)]
    (a.sophia / "memory").mkdir(exist_ok=True)
    (a.sophia / "memory" / "procedures.json").write_text(json.dumps({"items": procs}))
    doc = json.loads(a.s3("team", "suggest", "--json").stdout)
    assert [s["id"] for s in doc["suggestions"]] == ["proc_proven0001"]
    assert doc["suggestions"][0]["confidence"] == 0.83 and doc["suggestions"][0]["uses"] == 4
    a.s3("team", "share", "proc_proven0001")
    front, body = team_repo.parse((a.clone / ".sophia" / "team" / "proc_proven0001.md").read_text())
    assert front["category"] == "playbook" and body.strip() == "project playbook (test): `make itest`"
    assert front["evidence"] == ["2026-02-01 session 01234567: 12 passed in 3.1s", "worked in 4 of 4 runs"]
    assert json.loads(a.s3("team", "suggest", "--json").stdout)["suggestions"] == []  # shared now
    assert a.s3("team", "share", "proc_flaky00001", ok=False).returncode == 2  # demoted: not shared


def test_status_counts_and_the_viewer_shows_the_origin(team: tuple[Mate, Mate]) -> None:
    a, _ = team
    _item(a.clone, "rule_a.md", "the dingo API is versioned in its path")
    doc = json.loads(a.s3("status", "--json").stdout)["team_memory"]
    assert doc["here"] == 1 and doc["project"] == str(a.clone) and doc["folder"] == ".sophia/team"
    assert "1 items shared in this repository's .sophia/team/" in a.s3("status").stdout
    r = a.s3("team", "status")  # the database's status: none here (an answer, not an error), and where this one is counted
    assert r.returncode == 0 and r.stdout.startswith("no team database") and "`s3 status` counts it" in r.stdout
    from starlette.testclient import TestClient

    from sophia.ui.app import build

    app = build(a.sophia, "t" * 43, frozenset({"testserver"}))
    with TestClient(app) as client:
        client.cookies.set("s3ui", "t" * 43)
        page = client.get("/team")
    assert page.status_code == 200
    assert str(a.clone) in page.text and "from Dana" in page.text and ".sophia/team/rule_a.md" in page.text
    assert "the dingo API is versioned in its path" in page.text
