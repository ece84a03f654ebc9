"""s3 guardian check / apply, and apply_guardian (the function `s3 apply guardian` calls)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import run_s3

from sophia.guardian.audit import AuditError, apply_guardian

AUDIT = {"passed": False, "reason": "Deletes the user's home directory", "risk_level": "high",
         "concerns": ["irreversible data loss"], "creed_violations": ["Prioritize user data safety above task completion"],
         "recommendation": "Delete only build/ inside the project."}


def _envelope(**kw: object) -> dict:
    env = {"task_id": "task-42", "agent_type": "s3-guardian", "status": "complete",
           "timestamp": "2026-01-02T03:04:05Z", "result": AUDIT, "error": None}
    env.update(kw)
    return env


def test_check_command_json(s3_env: dict[str, str]) -> None:
    r = run_s3(["guardian", "check", "--json", "--cwd", "/home/x/proj", "-c", "rm -rf ~"], {**s3_env, "HOME": "/home/x"})
    assert r.returncode == 4, r.stderr  # exit code = decision: 0 allow, 3 ask, 4 deny
    data = json.loads(r.stdout)
    assert data["decision"] == "deny" and data["rule"] == "rm_recursive" and data["effective"] == "deny"
    r = run_s3(["guardian", "check", "-c", "ls -la"], s3_env)
    assert r.returncode == 0 and r.stdout.startswith("ALLOW")


def test_check_takes_the_command_as_words(s3_env: dict[str, str]) -> None:
    """`s3 guardian check rm -rf ~` is judged as `-c 'rm -rf ~'` is: the command's own options are its
    words, not options of s3 (`ls -c x` is `ls` with `-c`); words and -c together are one usage error."""
    env = {**s3_env, "HOME": "/home/x"}
    words = run_s3(["guardian", "check", "--json", "--cwd", "/home/x/proj", "rm", "-rf", "~"], env)
    quoted = run_s3(["guardian", "check", "--json", "--cwd", "/home/x/proj", "-c", "rm -rf ~"], env)
    assert words.returncode == quoted.returncode == 4
    assert json.loads(words.stdout)["reason"] == json.loads(quoted.stdout)["reason"]
    assert run_s3(["guardian", "check", "ls", "-c", "x"], s3_env).returncode == 0
    both = run_s3(["guardian", "check", "-c", "ls", "ls"], s3_env)
    assert both.returncode == 2 and "not both" in both.stderr and len(both.stderr.strip().splitlines()) == 1


def test_check_reads_a_payload_on_stdin_and_honours_patterns(s3_env: dict[str, str], sophia_home: Path) -> None:
    sophia_home.mkdir(parents=True, exist_ok=True)
    (sophia_home / "config.json").write_text(json.dumps({"guardian": {"mode": "warn", "deny": ["terraform apply"]}}))
    p = {"tool_name": "Bash", "tool_input": {"command": "terraform apply -auto-approve"}, "cwd": "/tmp"}
    r = run_s3(["guardian", "check", "--json"], s3_env, input=json.dumps(p))
    data = json.loads(r.stdout)
    assert data["decision"] == "deny" and data["rule"] == "config_deny"
    assert data["mode"] == "warn" and data["effective"] == "allow"
    bad = run_s3(["guardian", "check"], s3_env, input="nope")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr


def test_apply_envelope_logs_once_redacted(s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    f = tmp_path / "task-42.json"
    f.write_text(json.dumps(_envelope(result={**AUDIT, "reason": "uses token ghp_abcdefghijklmnopqrstuvwxyz0123456789"})))
    r1 = run_s3(["guardian", "apply", str(f), "--json"], s3_env)
    assert r1.returncode == 0, r1.stderr
    assert json.loads(r1.stdout)["logged"] is True
    r2 = run_s3(["guardian", "apply", str(f), "--json"], s3_env)
    assert json.loads(r2.stdout)["logged"] is False and json.loads(r2.stdout)["duplicate"] is True
    lines = (sophia_home / "logs" / "guardian_audits.jsonl").read_text().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["task_id"] == "task-42" and entry["audit"]["risk_level"] == "high"
    assert "ghp_" not in lines[0]


def test_apply_bare_audit_from_stdin(s3_env: dict[str, str], sophia_home: Path) -> None:
    r = run_s3(["guardian", "apply", "-"], s3_env, input=json.dumps(AUDIT))
    assert r.returncode == 0 and "failed (risk high)" in r.stdout
    r = run_s3(["guardian", "apply", "-"], s3_env, input=json.dumps(AUDIT))
    assert "already logged" in r.stdout


@pytest.mark.parametrize(("data", "field"), [
    ({**AUDIT, "risk_level": "extreme"}, "risk_level"),
    ({**AUDIT, "passed": "maybe"}, "passed"),
    ({**AUDIT, "surprise": 1}, "surprise"),
    (_envelope(agent_type="s3-memory"), "agent_type"),
    (_envelope(status="done"), "status"),
    (_envelope(result={**AUDIT, "concerns": "one"}), "result.concerns"),
    (_envelope(status="error"), "error"),
    ([1, 2], "top level"),
])
def test_apply_rejects_invalid_input_naming_the_field(s3_env: dict[str, str], tmp_path: Path, data: object,
                                                       field: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(data))
    r = run_s3(["guardian", "apply", str(f)], s3_env)
    assert r.returncode != 0
    assert field in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(AuditError, match=field.replace(".", r"\.")):
        apply_guardian(data)


def test_apply_unreadable_source(s3_env: dict[str, str], tmp_path: Path) -> None:
    r = run_s3(["guardian", "apply", str(tmp_path / "missing.json")], s3_env)
    assert r.returncode != 0 and "cannot read" in r.stderr
    (tmp_path / "x.json").write_text("{")
    r = run_s3(["guardian", "apply", str(tmp_path / "x.json")], s3_env)
    assert r.returncode != 0 and "not valid JSON" in r.stderr


def test_apply_error_envelope_is_logged(sophia_home: Path) -> None:
    res = apply_guardian(_envelope(status="error", result={}, error="model refused"))
    assert res["logged"] and res["status"] == "error" and res["passed"] is None


def test_stats_sums_the_log_per_rule_and_day_and_skips_a_torn_line(tmp_path: Path) -> None:
    """`s3 guardian stats`: what the real hook logged, per decision, rule and day; a torn line is counted."""
    from .conftest import hook_env, payload, read_log, run_hook

    sh = tmp_path / "sh"
    sh.mkdir()
    env = hook_env(sh, SOPHIA_GUARDIAN_SYNC_LOG="1")
    for cmd in ("rm -rf ~", "git push --force origin main", "rm -rf ~/old-stuff", "rm -rf ~/old-stuff"):
        run_hook(payload(command=cmd), env)
    read_log(sh / "logs" / "guardian_blocks.jsonl", 4)
    with open(sh / "logs" / "guardian_blocks.jsonl", "a") as fh:
        fh.write('{"decision": "deny", "ru')
    cli_env = {**env, "SOPHIA_HOME": str(sh), "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "lib")}
    res = run_s3(["guardian", "stats", "--json"], cli_env)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["total"] == 4 and data["unreadable_lines"] == 1
    assert data["by_decision"] == {"deny": 2, "ask": 2}
    assert {(r["rule"], r["decision"]) for r in data["by_rule"]} >= {("rm_recursive", "deny")}
    assert data["top_asked"][0]["count"] == 2 and "old-stuff" in data["top_asked"][0]["command"]
    text = run_s3(["guardian", "stats"], cli_env).stdout
    assert "2 denied, 2 asked" in text and "Most asked:" in text


def test_allow_once_lets_exactly_the_denied_call_through_until_it_expires(tmp_path: Path) -> None:
    """The user grants the call just denied: the same call passes (logged), another one does not, an agent
    cannot grant itself, and an expired grant allows nothing."""
    from sophia.guardian import grants

    from .conftest import hook_env, payload, read_log, run_hook

    sh = tmp_path / "sh"
    sh.mkdir()
    env = hook_env(sh, SOPHIA_GUARDIAN_SYNC_LOG="1")
    cli_env = {**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "lib")}
    log = sh / "logs" / "guardian_blocks.jsonl"
    denied = payload(command="git push --force origin main")
    assert run_s3(["guardian", "allow-once", "--yes"], cli_env).returncode == 1  # nothing blocked yet
    assert run_hook(denied, env).decision == "deny"
    read_log(log, 1)
    res = run_s3(["guardian", "allow-once", "--yes", "--minutes", "5", "--json"], cli_env)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["command"] == "git push --force origin main"
    again = run_hook(denied, env)
    assert again.decision == "allow" and "allow-once" in again.stdout
    assert run_hook(payload(command="git push --force origin release"), env).decision == "deny"
    lines = [json.loads(x) for x in read_log(log, 4)]
    assert [x["decision"] for x in lines][:4] == ["deny", "grant", "allowed_once", "deny"]
    stats = json.loads(run_s3(["guardian", "stats", "--json"], cli_env).stdout)  # the grant is the user's act
    assert stats["by_decision"] == {"deny": 2, "allowed_once": 1} and stats["total"] == 3 and stats["grants"] == 1
    assert sum(sum(v for k, v in d.items() if k != "day") for d in stats["by_day"]) == stats["total"]
    assert "2 denied, 0 asked, 1 let through on your allow-once grant" in run_s3(["guardian", "stats"], cli_env).stdout
    agent = run_hook(payload(command="s3 guardian allow-once --yes"), env)
    assert agent.decision == "deny" and "only the user" in agent.reason
    data = json.loads((sh / "logs" / grants.GRANTS).read_text())
    data["grants"][0]["until"] = 1.0
    (sh / "logs" / grants.GRANTS).write_text(json.dumps(data))
    assert run_hook(denied, env).decision == "deny"
