"""The s3 CLI's core commands as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_s3


def test_help_everywhere(s3_env: dict[str, str]) -> None:
    top = run_s3(["-h"], s3_env)
    assert top.returncode == 0 and "init" in top.stdout and "status" in top.stdout
    for cmd in ["init", "status", "doctor", "version"]:
        r = run_s3([cmd, "--help"], s3_env)
        assert r.returncode == 0, (cmd, r.stderr)
        assert "--json" in r.stdout


def test_init_status_json_has_creed(s3_env: dict[str, str], sophia_home: Path) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    r = run_s3(["status", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert len(data["self_model"]["terminal_creed"]) == 5
    assert data["episodes"]["total"] == 0
    assert data["claude_md"]["stale"] is True


def test_status_names_corrupt_file(s3_env: dict[str, str], sophia_home: Path) -> None:
    run_s3(["init"], s3_env)
    (sophia_home / "self_model.json").write_text("[1, 2")
    r = run_s3(["status"], s3_env)
    assert r.returncode == 1
    assert "self_model.json" in r.stderr and "doctor --repair" in r.stderr
    assert "Traceback" not in r.stderr
    r = run_s3(["doctor", "--json"], s3_env)
    assert r.returncode == 1
    assert json.loads(r.stdout)["problems"][0]["path"].endswith("self_model.json")
    r = run_s3(["doctor", "--repair"], s3_env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert run_s3(["status", "--json"], s3_env).returncode == 0


def test_status_before_init_says_what_to_do(s3_env: dict[str, str]) -> None:
    r = run_s3(["status"], s3_env)
    assert r.returncode == 1 and "s3 init" in r.stderr


def test_version_json(s3_env: dict[str, str]) -> None:
    r = run_s3(["version", "--json"], s3_env)
    assert json.loads(r.stdout)["version"]


# ---- one exit-code rule for every command (README "Exit codes"): 2 bad input, 1 failed, 130 Ctrl-C

def _usage_cases(tmp: Path) -> list[tuple[list[str], str | None]]:
    bad_json = tmp / "bad.json"
    bad_json.write_text("{broken")
    return [
        (["nonexistent-command"], None), (["init", "--bogus"], None), (["list", "bogus"], None),
        (["list"], None), (["recall", "x", "--type", "bogus"], None), (["recall", "x", "--as-of", "soonish"], None),
        (["recall", "x", "--known-at", "soonish"], None), (["recall", "x", "--limit", "0"], None),
        (["recall", ""], None), (["recall"], None), (["recall", "x", "--bogus"], None),
        (["recall", "--queries", str(tmp / "missing.jsonl")], None), (["ingest", str(tmp / "missing.json")], None),
        (["ingest", str(bad_json)], None), (["ingest", str(bad_json), "--format", "csv"], None),
        (["apply", "extraction", str(tmp / "missing.json")], None), (["apply", "bogus", "-"], "{}"),
        (["apply", "extraction", "-"], "not json"), (["forget", "no_such_memory"], None),
        (["bench", "locomo", str(tmp / "missing.json")], None), (["bench", "locomo", str(bad_json), "--k", "x"], None),
        (["bench", "locomo", str(bad_json)], None), (["guardian", "check"], "not json"),
        (["guardian", "check"], "[1]"), (["guardian", "apply", str(bad_json)], None), (["reflect"], None),
        (["consolidate"], None), (["embed", "start", "--timeout", "soon"], None),
    ]


@pytest.mark.usefixtures("inited")
def test_bad_input_exits_2_everywhere(s3_env: dict[str, str], tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    env = {**s3_env, "SOPHIA_RECALL_SEMANTIC": "0"}
    cases = _usage_cases(tmp_path)
    with ThreadPoolExecutor(max_workers=3) as pool:  # each refuses its input before it would write anything
        runs = list(pool.map(lambda case: run_s3(case[0], env, input=case[1]), cases))
    wrong = [(args, r.returncode, r.stderr[-200:]) for (args, _), r in zip(cases, runs, strict=True)
             if r.returncode != 2 or "Traceback" in r.stderr or not r.stderr.strip()]
    assert not wrong, wrong


def test_failed_operations_exit_1(s3_env: dict[str, str], sophia_home: Path) -> None:
    assert run_s3(["status"], s3_env).returncode == 1  # no state yet
    assert run_s3(["init"], s3_env).returncode == 0
    (sophia_home / "index.db").write_bytes(b"this is not a database" * 100)
    for args in (["index"], ["recall", "anything"]):
        r = run_s3(args, {**s3_env, "SOPHIA_RECALL_SEMANTIC": "0"})
        assert r.returncode == 1 and "Traceback" not in r.stderr, (args, r.returncode, r.stderr)
    (sophia_home / "self_model.json").write_text("[1, 2")
    for args in (["status"], ["doctor"]):
        assert run_s3(args, s3_env).returncode == 1, args


@pytest.mark.parametrize(("command", "decision", "code"), [
    ("ls -la", "allow", 0), ("git push --force origin feature/x", "ask", 3), ("rm -rf /", "deny", 4)])
def test_guardian_check_exit_code_is_the_decision(s3_env: dict[str, str], command: str, decision: str,
                                                  code: int) -> None:
    for extra in ([], ["--json"]):
        r = run_s3(["guardian", "check", "-c", command, *extra], s3_env)
        assert r.returncode == code, (command, extra, r.stdout, r.stderr)
        assert (json.loads(r.stdout)["decision"] if extra else r.stdout.split(":")[0].strip().lower()) == decision


# ---- every command's --help renders cleanly (issue 13.11: `{file}`, `<bool>`, cut lines)

def _all_commands() -> list[list[str]]:
    import typer.main

    from sophia.cli.app import app

    def walk(cmd: object, path: list[str]) -> list[list[str]]:
        out = [path]
        for name, sub in sorted((getattr(cmd, "commands", None) or {}).items()):
            out += walk(sub, [*path, name])
        return out

    return walk(typer.main.get_command(app), [])


def _cut_lines(text: str, width: int) -> list[str]:
    """Prose lines that end although the next line's first word would have fitted on them."""
    bad = []
    lines = [ln.rstrip() for ln in text.splitlines()]
    for cur, nxt in zip(lines, lines[1:], strict=False):
        if not cur.strip() or not nxt.strip() or cur.lstrip()[:1] in "│╭╰" or nxt.lstrip()[:1] in "│╭╰":
            continue
        if len(cur) + 1 + len(nxt.split()[0]) <= width - 2:
            bad.append(cur)
    return bad


@pytest.mark.parametrize("width", [80, 120])
def test_every_help_renders_without_artefacts(width: int) -> None:
    import re

    from typer.testing import CliRunner

    from sophia.cli.app import app

    commands = _all_commands()
    assert len(commands) > 20
    problems = []
    for path in commands:
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width), "TERM": "dumb"})
        text = res.stdout
        name = " ".join(path) or "s3"
        if res.exit_code != 0 or "Usage:" not in text:
            problems.append((name, "no help", res.exit_code))
            continue
        usage_line = next(ln for ln in text.splitlines() if "Usage:" in ln)
        if "{" in usage_line:
            problems.append((name, "braces in usage", usage_line.strip()))
        for typ in re.findall(r"<(?:bool|str|int|float|path|list\[\w+\])>", text):
            problems.append((name, "python type shown", typ))
        problems += [(name, "line cut short", ln.strip()) for ln in _cut_lines(text, width)]
    assert not problems, problems


def _help_words(text: str) -> list[str]:
    """The words of a help text as a reader should see them: markdown's code marks and bold stars dropped,
    trailing punctuation stripped."""
    import re

    parts = re.split(r"(`+[^`]*`+)", text)  # bold stars outside code spans only: `a/**/b` keeps its stars
    plain = "".join(p.strip("`") if p.startswith("`") else p.replace("**", "") for p in parts)
    return [w for w in (t.strip(".,;:()") for t in plain.split()) if len(w) > 1 and re.search(r"[\w~/*<>]", w)]


def test_help_keeps_every_character_of_its_text() -> None:
    """Issue 32: markdown ate `*/*` and `<home>` (`projects//.jsonl`, `/team/password`). Every word of every
    command's and option's help is in the rendered --help, character for character."""
    import typer.main
    from typer.testing import CliRunner

    from sophia.cli.app import app

    def walk(cmd: Any, path: list[str]) -> list[tuple[list[str], Any]]:
        out = [(path, cmd)]
        for name, sub in sorted((getattr(cmd, "commands", None) or {}).items()):
            out += walk(sub, [*path, name])
        return out

    lost = []
    for path, cmd in walk(typer.main.get_command(app), []):
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300", "TERM": "dumb"})
        shown = " ".join(res.stdout.replace("│", " ").split())
        texts = [cmd.help or ""] + [p.help or "" for p in cmd.params if not getattr(p, "hidden", False)
                                    and getattr(p, "help", None)]
        lost += [(" ".join(path), w) for t in texts for w in _help_words(t) if w not in shown]
    assert not lost, lost
    backfill = CliRunner().invoke(app, ["backfill", "--help"], env={"COLUMNS": "300", "TERM": "dumb"}).stdout
    assert "~/.claude/projects/*/*.jsonl" in backfill


# ---- issue 32: a newcomer's first hour

@pytest.mark.parametrize(("args", "said"), [
    (["init", "--bogus"], "no such option: --bogus (see `s3 init --help`)"),
    (["bogus"], "no such command 'bogus' (see `s3 --help`)"),
    (["team", "bogus"], "no such command 'bogus' (see `s3 team --help`)"),
    (["list"], "missing argument 'KIND' (see `s3 list --help`)"),
    (["init", "extra"], "got unexpected extra argument(s) (extra) (see `s3 init --help`)"),
    (["recall", "x", "--limit", "many"], "invalid value for '--limit'"),
    (["digest", "retry", "--al"], "no such option: --al"),
])
def test_usage_errors_are_one_line_in_the_style_of_every_other_error(s3_env: dict[str, str], args: list[str],
                                                                      said: str) -> None:
    r = run_s3(args, s3_env)
    assert r.returncode == 2 and r.stdout == "", (args, r.stdout)
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("s3: error: ") and said in r.stderr, r.stderr
    assert "╭" not in r.stderr and "Usage:" not in r.stderr


def test_no_command_still_shows_the_help(s3_env: dict[str, str]) -> None:
    r = run_s3([], s3_env)
    assert "Usage: s3" in r.stdout and "recall" in r.stdout and r.stderr == ""
    r = run_s3(["team"], s3_env)
    assert "Usage: s3 team" in r.stdout and "status" in r.stdout


def test_team_status_without_a_team_says_so(s3_env: dict[str, str]) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    r = run_s3(["team", "status"], s3_env)
    assert r.returncode == 0 and r.stdout.startswith("no team") and "s3 team init" in r.stdout, r.stderr
    assert json.loads(run_s3(["team", "status", "--json"], s3_env).stdout)["team"] is None


def test_status_says_plainly_why_claude_codes_auto_memory_is_on(s3_env: dict[str, str]) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    out = run_s3(["status"], {**s3_env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": ""}).stdout
    line = next(ln for ln in out.splitlines() if "Auto memory" in ln)
    assert line.startswith("- Auto memory: on (Claude Code's default);") and "(on))" not in line, line


def test_doctor_repair_mends_the_bad_key_and_keeps_the_users_other_changes(s3_env: dict[str, str],
                                                                           sophia_home: Path) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    cfg_path = sophia_home / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.update(learning_enabled=True, learning_daily_max_jobs=7)
    cfg["guardian"]["deny"] = ["rm -rf /srv/data"]
    cfg_path.write_text(json.dumps(cfg))
    assert run_s3(["status"], s3_env).returncode == 0  # the last good copy now holds 7 jobs
    cfg.update(learning_daily_max_jobs="lots", learning_daily_max_usd=2.5, current_user="alice")
    cfg["guardian"]["deny"] = ["rm -rf /srv/data", "(unclosed"]
    cfg["context"]["prompt_context_max_items"] = 2
    cfg_path.write_text(json.dumps(cfg))
    assert run_s3(["doctor"], s3_env).returncode == 1
    r = run_s3(["doctor", "--repair"], s3_env)
    assert r.returncode == 0, r.stdout + r.stderr
    after = json.loads(cfg_path.read_text())
    assert after["learning_daily_max_jobs"] in (7, 20)  # the last good value (or the default when none was kept)
    assert (after["learning_enabled"], after["learning_daily_max_usd"], after["current_user"]) == (True, 2.5, "alice")
    assert after["guardian"]["deny"] == ["rm -rf /srv/data"] and after["context"]["prompt_context_max_items"] == 2
    assert "learning_daily_max_jobs" in r.stdout and "every other key kept" in r.stdout
    kept = [p for p in (sophia_home / "quarantine").iterdir() if p.name.endswith("config.json")]
    assert len(kept) == 1 and json.loads(kept[0].read_text())["learning_daily_max_jobs"] == "lots"
    assert run_s3(["doctor"], s3_env).returncode == 0
