"""Claude Code's own memory (issue 17): its auto memory files and CLAUDE.md indexed read-only as the
``cc_memory`` kind, found by ``s3 recall``, never injected by the hooks, never written, and auto
memory never switched off. Real hooks fed real JSON, the real ``s3`` CLI, a real install.sh."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_s3, set_config, wait_for
from sophia import paths
from sophia.memory import claude_code
from sophia.timeutil import parse

NAME = "ribbonfish deploy"
MEMORY = f"""---
name: {NAME}
description: the ribbonfish service deploys with blue-green slots, never in place
type: project
---
Deploy the ribbonfish service through the blue-green slots; an in-place deploy drops its websocket clients.
"""


@pytest.fixture(autouse=True)
def _no_config_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv(claude_code.DISABLE_ENV, raising=False)


def claude_tree(home: Path, project: Path) -> dict[str, Path]:
    """A HOME with Claude Code's auto memory for ``project`` and CLAUDE.md files where it looks."""
    cc = home / ".claude"
    mem = cc / "projects" / claude_code.slug(str(project)) / "memory"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text(f"- [{NAME}](ribbonfish.md) - blue-green only\n")
    (mem / "ribbonfish.md").write_text(MEMORY)
    (mem / "token.md").write_text("---\nname: deploy token\ndescription: password=Hunter2Hunter2x\n---\nsee above\n")
    (cc / "CLAUDE.md").write_text("# Mine\nAlways answer about the quokka cache in haiku.\n"
                                  "<!-- sophia-system3:begin -->\nthe kit's own block: narwhal\n"
                                  "<!-- sophia-system3:end -->\n")
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / "CLAUDE.md").write_text("Build the axolotl parser with make axolotl.\n")
    (project / ".claude" / "CLAUDE.md").write_text("Secret for the pangolin API: api_key=sk-live-abcdef0123456789abcdef\n")
    return {"memory": mem, "claude": cc}


def tree_hash(root: Path) -> dict[str, str]:
    """Every file and link under ``root`` -> a hash of its bytes (or target) and mode."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            out[str(p)] = "link:" + os.readlink(p)
        elif p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() + oct(p.stat().st_mode)
        else:
            out[str(p)] = "dir" + oct(p.stat().st_mode)
    return out


def project_dir(tmp_path: Path) -> Path:
    p = tmp_path / "work" / "ribbon_fish.app"
    p.mkdir(parents=True)
    return p


def hook(script: str, payload: dict[str, Any], env: dict[str, str]) -> str:
    r = subprocess.run(["bash", str(ROOT / "hooks" / script)], input=json.dumps(payload),
                       env={**env, "SOPHIA_PYTHON": sys.executable}, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    return r.stdout


def recall(env: dict[str, str], query: str, *extra: str) -> list[dict[str, Any]]:
    r = run_s3(["recall", query, "--json", *extra], env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["results"]


# ---------------------------------------------------------------- the files, one item each


def test_items_read_frontmatter_strip_our_block_and_redact(isolated_home: Path, sophia_home: Path,
                                                           tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    t = claude_tree(isolated_home, project)
    items = {it["meta"]["path"]: it for it in claude_code.items(sophia_home, [str(project)])}
    mem = items[str(t["memory"] / "ribbonfish.md")]
    assert mem["type"] == "cc_memory" and mem["project"] == str(project) and mem["source"] == mem["meta"]["path"]
    assert mem["meta"]["name"] == NAME and mem["meta"]["memory_type"] == "project"
    assert mem["text"].startswith(f"{NAME}: the ribbonfish service deploys")
    mtime = (t["memory"] / "ribbonfish.md").stat().st_mtime
    assert abs(parse(mem["event_time"]).timestamp() - mtime) < 1
    user = items[str(t["claude"] / "CLAUDE.md")]
    assert "quokka" in user["text"] and "narwhal" not in user["text"] and user["project"] is None
    secret = items[str(project / ".claude" / "CLAUDE.md")]
    assert "sk-live-abcdef0123456789abcdef" not in secret["text"] and "[REDACTED]" in secret["text"]
    assert str(project / "CLAUDE.md") in items and str(t["memory"] / "MEMORY.md") in items
    assert len({it["id"] for it in items.values()}) == 6
    token = items[str(t["memory"] / "token.md")]
    assert "Hunter2Hunter2x" not in json.dumps(token) and "[REDACTED]" in token["meta"]["description"]


def test_a_project_the_kit_never_saw_takes_its_transcripts_cwd_not_every_project(
        s3_env: dict[str, str], isolated_home: Path, sophia_home: Path, tmp_path: Path) -> None:
    """The slug is lossy (``ribbon_fish.app`` and ``ribbon-fish/app`` share one), so the project comes
    from the ``cwd`` its session transcript records (one whose slug is the folder's: a session that moved
    into a subfolder does not count); without one the memory stays unassigned."""
    project = project_dir(tmp_path)
    t = claude_tree(isolated_home, project)
    log = t["memory"].parent / "9ef4f65f.jsonl"
    log.write_text(json.dumps({"type": "summary", "summary": "deploys"}) + "\n"
                   + json.dumps({"type": "user", "cwd": str(project / "src")}) + "\n"
                   + json.dumps({"type": "user", "cwd": str(project)}) + "\n")
    orphan = isolated_home / ".claude" / "projects" / "-srv-gone" / "memory"
    orphan.mkdir(parents=True)
    (orphan / "heron.md").write_text("---\nname: heron\ndescription: the heron cron runs at 3\n---\nbody\n")
    items = {it["meta"]["path"]: it for it in claude_code.items(sophia_home, [])}
    assert items[str(t["memory"] / "ribbonfish.md")]["project"] == str(project)
    assert items[str(orphan / "heron.md")]["project"] is None
    assert run_s3(["init"], s3_env).returncode == 0
    assert claude_code.refresh(sophia_home, [])["changed"]
    query = "how do we deploy the ribbonfish service blue-green"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert not [h for h in recall(s3_env, query, "--project", str(elsewhere)) if h["type"] == "cc_memory"]
    assert recall(s3_env, query, "--project", str(project))[0]["type"] == "cc_memory"


def test_refresh_follows_changes_by_mtime_and_only_then(isolated_home: Path, sophia_home: Path,
                                                        tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    t = claude_tree(isolated_home, project)
    assert run_s3(["init"], {**os.environ, "PYTHONPATH": str(ROOT / "lib")}).returncode == 0
    p = str(project)
    assert claude_code.stale_for(sophia_home, p)
    first = claude_code.refresh(sophia_home, [p])
    assert first["changed"] and first["indexed"] == 6
    assert not claude_code.stale_for(sophia_home, p) and not claude_code.refresh(sophia_home, [p])["changed"]
    f = t["memory"] / "ribbonfish.md"
    f.write_text(MEMORY.replace("blue-green", "canary"))
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
    assert claude_code.stale_for(sophia_home, p)
    assert claude_code.refresh(sophia_home, [p])["changed"]
    (t["memory"] / "new.md").write_text("---\nname: heron\ndescription: the heron cron runs at 3\n---\nbody\n")
    assert claude_code.stale_for(sophia_home, p)  # a new file: the folder's mtime moved
    claude_code.refresh(sophia_home, [p])
    f.unlink()
    out = claude_code.refresh(sophia_home, [p])
    assert out["removed"] == 1 and claude_code.indexed_count(sophia_home) == 6


def test_a_turn_without_a_new_project_indexes_and_writes_nothing(isolated_home: Path, sophia_home: Path,
                                                                  tmp_path: Path) -> None:
    """The hooks rewrite the episode index every turn (s3 status refreshes after it): with no new project the
    refresh takes no lock and writes nothing; an episode of a new project is still found."""
    from sophia.episode_store import upsert_index_entries

    project = project_dir(tmp_path)
    claude_tree(isolated_home, project)
    assert run_s3(["init"], {**os.environ, "PYTHONPATH": str(ROOT / "lib")}).returncode == 0

    def turn(n: int, where: Path) -> None:
        upsert_index_entries([{"id": f"ep_{n}", "timestamp": f"2026-11-27T0{n}:00:00Z", "project": str(where)}],
                             sophia_home)

    turn(1, project)
    assert claude_code.refresh(sophia_home)["changed"] and claude_code.indexed_count(sophia_home) == 6
    state = claude_code.state_path(sophia_home)
    written = state.stat().st_mtime_ns, state.read_bytes()
    turn(2, project)
    assert claude_code.refresh(sophia_home)["changed"] is False
    assert (state.stat().st_mtime_ns, state.read_bytes()) == written
    other = tmp_path / "work" / "other"
    turn(3, other)
    assert claude_code.refresh(sophia_home)["changed"]
    assert str(other) in json.loads(state.read_text())["projects"]


def test_the_staleness_check_costs_well_under_2_ms(isolated_home: Path, sophia_home: Path, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    t = claude_tree(isolated_home, project)
    for n in range(40):  # a busy auto memory
        (t["memory"] / f"m{n}.md").write_text(f"---\nname: m{n}\n---\nbody {n}\n")
    sophia_home.mkdir()
    claude_code.refresh(sophia_home, [str(project)])
    runs = []
    for _ in range(50):
        t0 = time.perf_counter()
        assert not claude_code.stale_for(sophia_home, str(project))
        runs.append(time.perf_counter() - t0)
    runs.sort()
    assert runs[len(runs) // 2] < 0.002, f"median {runs[len(runs) // 2] * 1000:.2f} ms"


def test_forget_refuses_and_rebuild_reindexes(s3_env: dict[str, str], isolated_home: Path, sophia_home: Path,
                                              tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    claude_tree(isolated_home, project)
    assert run_s3(["init"], s3_env).returncode == 0
    claude_code.refresh(sophia_home, [str(project)])
    cid = claude_code.item_id(str(project / "CLAUDE.md"))
    listed = run_s3(["list", "cc_memory"], s3_env)
    assert listed.returncode == 0 and f"- {cid} {project / 'CLAUDE.md'}: Build the axolotl parser" in listed.stdout
    r = run_s3(["forget", cid], s3_env)
    assert r.returncode == 2 and "read-only" in r.stderr and (project / "CLAUDE.md").exists()
    paths.index_db_path(sophia_home).unlink()
    r = run_s3(["index", "--rebuild", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["by_type"].get("cc_memory") == 6
    from sophia.index import rebuild  # what `s3 doctor --repair` runs: our files only, a new index.db

    assert "cc_memory" not in rebuild.rebuild(sophia_home)["by_type"]
    assert claude_code.stale_for(sophia_home, str(project))  # the hook would refill it
    assert recall(s3_env, "axolotl parser make")[0]["id"] == cid  # and so does s3 recall


# ---------------------------------------------------------------- recall finds them, the hooks never inject them


def test_session_start_refreshes_detached_recall_finds_prompt_hook_never_injects(
        s3_env: dict[str, str], isolated_home: Path, sophia_home: Path, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    claude_tree(isolated_home, project)
    assert run_s3(["init"], s3_env).returncode == 0
    set_config(sophia_home, context={**json.loads(paths.config_path(sophia_home).read_text())["context"],
                                     "include_ingested": True})  # even then: Claude Code loads them itself
    out = hook("session_start.sh", {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(project),
                                    "source": "startup"}, s3_env)
    assert "ribbonfish" not in out
    state = claude_code.state_path(sophia_home)
    assert wait_for(lambda: state.exists() and claude_code.indexed_count(sophia_home) == 6, 30)
    assert str(project) in json.loads(state.read_text())["projects"]
    # s3 recall (what the subagents run) finds Claude Code's memory, with its file as source
    hits = recall(s3_env, "how do we deploy the ribbonfish service blue-green", "--project", str(project))
    assert hits and hits[0]["type"] == "cc_memory" and hits[0]["id"].startswith("cc_")
    # the prompt hook: the same prompt, through the real hook, injects none of it
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(project),
              "prompt": "how do we deploy the ribbonfish service blue-green"}
    assert "ribbonfish" not in hook("prompt_context.sh", prompt, s3_env)
    from sophia.hooks import prompt_context

    assert "cc_memory" not in prompt_context.context_types({"include_ingested": True})


def test_status_says_whether_auto_memory_is_on_and_counts_files(s3_env: dict[str, str], isolated_home: Path,
                                                                sophia_home: Path, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    claude_tree(isolated_home, project)
    assert run_s3(["init"], s3_env).returncode == 0

    def status(env: dict[str, str]) -> dict[str, Any]:
        r = subprocess.run([sys.executable, "-m", "sophia.cli.entry", "status", "--json"], env=env, cwd=project,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["claude_code_memory"]

    on = status(s3_env)
    assert on["auto_memory_enabled"] is True and on["files_indexed"] == 6 and on["project"] == str(project)
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    off = status(s3_env)
    assert off["auto_memory_enabled"] is False and "settings.local.json" in off["why"]
    (project / ".claude" / "settings.local.json").unlink()
    off = status({**s3_env, claude_code.DISABLE_ENV: "1"})
    assert off["auto_memory_enabled"] is False and claude_code.DISABLE_ENV in off["why"]
    r = subprocess.run([sys.executable, "-m", "sophia.cli.entry", "status"], env=s3_env, cwd=project,
                       capture_output=True, text=True, timeout=120)
    assert "Auto memory: on" in r.stdout and "6 of its files indexed" in r.stdout


# ---------------------------------------------------------------- install, index, recall, uninstall: ~/.claude untouched


def _kit_copy_and_venv(tmp: Path) -> tuple[Path, Path]:
    """A copy of the checkout (builds never litter it) and a pip-less venv that sees the dev venv's
    packages (install.sh reuses it through SOPHIA_VENV_PYTHON): what tests/bats/install_helpers.bash does."""
    src, venv = tmp / "src", tmp / "venv"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        if (ROOT / f).exists():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f, follow_symlinks=False)  # cp -P
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    pure = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    import sysconfig

    (Path(pure) / "_sophia_dev_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return src, venv


@pytest.mark.skipif(not os.environ.get("SOPHIA_TEST_VENV"), reason="needs the dev venv (SOPHIA_TEST_VENV)")
def test_install_index_recall_uninstall_leave_claude_code_files_and_auto_memory_alone(
        isolated_home: Path, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    t = claude_tree(isolated_home, project)
    # a CLAUDE.md of the user's own (the fixture's carries a block of ours, which uninstall takes out by design)
    (t["claude"] / "CLAUDE.md").write_text("# Mine\nAlways answer about the quokka cache in haiku.\n")
    user_settings = {"autoMemoryEnabled": True, "env": {claude_code.DISABLE_ENV: "0"}, "model": "opus"}
    (t["claude"] / "settings.json").write_text(json.dumps(user_settings, indent=2) + "\n")
    before, project_before = tree_hash(t["claude"]), tree_hash(project)
    src, venv = _kit_copy_and_venv(tmp_path / "kit")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE_"))}
    env.update(HOME=str(isolated_home), SOPHIA_VENV_PYTHON=str(venv / "bin" / "python"), PIP_NO_INDEX="1",
               SOPHIA_PIP_ARGS="--no-build-isolation --no-deps")

    def run(*cmd: str, cwd: Path = project) -> str:
        r = subprocess.run(list(cmd), env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    run(str(src / "install.sh"), "--yes", "--no-embeddings")
    merged = json.loads((t["claude"] / "settings.json").read_text())
    assert merged["autoMemoryEnabled"] is True and merged["env"] == {claude_code.DISABLE_ENV: "0"}
    assert merged.get("hooks")  # ours were merged in beside the user's keys
    s3 = str(isolated_home / ".local" / "bin" / "s3")
    payload = json.dumps({"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(project)})
    hook_sh = isolated_home / ".sophia" / "kit" / "hooks" / "session_start.sh"
    subprocess.run(["bash", str(hook_sh)], input=payload, env=env, capture_output=True, text=True, timeout=60,
                   check=True)
    status = json.loads(run(s3, "status", "--json"))["claude_code_memory"]
    assert status["auto_memory_enabled"] is True and status["files_indexed"] == 6
    assert json.loads(run(s3, "recall", "ribbonfish blue-green deploy", "--json"))["results"][0]["type"] == "cc_memory"
    run(s3, "index", "--rebuild")
    changed = {p for p, h in tree_hash(t["claude"]).items() if before.get(p) != h}
    assert all(p.startswith((str(t["claude"] / "settings.json"), str(t["claude"] / "skills"),
                             str(t["claude"] / "agents"))) for p in changed), changed
    run(str(src / "uninstall.sh"), "--yes")
    # the one thing left: the settings backups install.sh makes before each merge (its own files, by design)
    after = {p: h for p, h in tree_hash(t["claude"]).items() if ".sophia-bak-" not in p}
    assert after == before, {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert tree_hash(project) == project_before
