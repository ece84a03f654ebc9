"""Tier 3: with ``guardian.tier3_enabled`` a high-risk ask also queues an s3-guardian audit, which the digest
worker runs (headless claude, the s3-guardian contract) and logs; ``s3 status`` shows the verdicts.

Through the real bash hook fed real PreToolUse payloads; the worker is the one the hook's detached child
starts. The `claude` it runs here is a scripted test double on SOPHIA_CLAUDE_BIN (tests/e2e/test_tier3_e2e.py
runs the real client against the scripted model server).
"""

from __future__ import annotations

import ast
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB, ROOT, run_s3, wait_for
from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.guardian import dispatch, grants, tier3
from sophia.learning import audits, ledger, queue
from sophia.state import init_tree

from .conftest import PROJECT, hook_env, payload, read_log, run_hook

HIGH = "git push --force origin feature/payments"  # git_destructive: an ask (a force-push to main is denied)
LOW = "shutdown -r now"  # power: an ask, not a high-risk family
FAKE_AUDIT = """#!{python}
# Test double for `claude -p ... --output-format json` answering a tier-3 audit.
import json, os, sys
with open(os.path.join(os.environ["FAKE_DIR"], "log"), "a") as f:
    f.write(json.dumps({{"args": sys.argv[1:], "guard": os.environ.get("SOPHIA_HOOK_GUARD")}}) + "\\n")
prompt = sys.argv[2]
bad = "git push --force origin feature/payments" in prompt
answer = {{"passed": not bad, "reason": "rewrites a shared branch's history" if bad else "",
          "risk_level": "high" if bad else "low", "concerns": ["others pull feature/payments"] if bad else [],
          "creed_violations": [], "recommendation": "use --force-with-lease" if bad else None}}
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": json.dumps(answer),
                  "total_cost_usd": 0.004, "usage": {{"input_tokens": 900, "output_tokens": 80}}}}))
"""


def set_tier3(home: Path, on: bool, **top: Any) -> None:
    cfg = read_json(paths.config_path(home))
    cfg["guardian"]["tier3_enabled"] = on
    cfg.update(top)
    write_json_atomic(paths.config_path(home), cfg)


@pytest.fixture
def home(sophia_home: Path, tmp_path: Path) -> Path:
    init_tree(sophia_home)
    set_tier3(sophia_home, True, embedding_provider="none")
    fake_dir = tmp_path / "fake"
    fake_dir.mkdir()
    (fake_dir / "claude").write_text(FAKE_AUDIT.format(python=sys.executable))
    (fake_dir / "claude").chmod(0o755)
    return sophia_home


def env(home: Path, sync: bool = False) -> dict[str, str]:
    fake = home.parents[1] / "fake"
    extra = {"SOPHIA_CLAUDE_BIN": str(fake / "claude"), "FAKE_DIR": str(fake)}
    if sync:  # the log (and the queueing) written before the hook exits: no wait, no race
        extra["SOPHIA_GUARDIAN_SYNC_LOG"] = "1"
    return hook_env(home, **extra)


def ask(home: Path, command: str, sync: bool = False) -> None:
    r = run_hook(payload(command=command), env(home, sync))
    assert r.rc == 0 and r.decision == "ask", (command, r)


def audit_jobs(home: Path) -> list[dict[str, Any]]:
    return [j for j in queue.jobs(home) if j.get("kind") == "guardian"]


def settle(home: Path) -> None:
    """The one worker a hook started has stopped (nothing the test started outlives it)."""
    log = paths.logs_dir(home) / "digest.log"
    assert wait_for(lambda: log.exists() and "digest worker stops" in log.read_text()
                    and not queue.worker_running(home), 30)


def test_every_high_risk_rule_is_one_the_guardian_emits() -> None:
    """The set sits beside the rule table; a name no rule family uses would audit nothing. A family names
    its rule in ``a.add(level, "<rule>", ...)`` or in its ``RULE = "<rule>"`` (rules_self, the table-driven
    rules_remote)."""
    emitted = set()
    for p in (LIB / "sophia" / "guardian").glob("rules_*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add"
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
                emitted.add(node.args[1].value)
            if (isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["RULE"]
                    and isinstance(node.value, ast.Constant)):
                emitted.add(node.value.value)
    emitted.add("disk")  # rules_fs.judge_write names it through a variable
    assert set(dispatch.HIGH_RISK) <= emitted, set(dispatch.HIGH_RISK) - emitted
    assert {"git_destructive", "rm_recursive", "sql_destructive", "credential_read", "self_protect"} <= set(
        dispatch.HIGH_RISK)
    assert "power" not in dispatch.HIGH_RISK and "chmod_chown" not in dispatch.HIGH_RISK


def test_a_high_risk_ask_through_the_hook_queues_one_audit_even_when_asked_twice(home: Path) -> None:
    set_tier3(home, True, learning_daily_max_jobs=0)  # the worker the hook starts stops at the cap at once
    t0 = time.monotonic()
    ask(home, HIGH)
    assert time.monotonic() - t0 < 10  # the answer does not wait for the queue (it is written after)
    assert wait_for(lambda: len(audit_jobs(home)) == 1, 20), queue.jobs(home)
    ask(home, HIGH, sync=True)
    assert len(read_log(paths.logs_dir(home) / "guardian_blocks.jsonl", 2)) == 2
    (job,) = audit_jobs(home)
    sha = grants.subject_sha("Bash", HIGH)
    assert job["id"] == audits.job_id(sha) and job["state"] == "pending"
    assert job["call"]["command"] == HIGH and job["call"]["rule"] == "git_destructive"
    assert job["call"]["cwd"] == PROJECT and job["call"]["family"] == "vcs history rewrite"
    settle(home)
    assert ledger.CAP_REACHED in queue.jobs(home)[0]["reason"]  # it counts against the daily caps


def test_with_the_setting_off_an_ask_queues_nothing(home: Path) -> None:
    set_tier3(home, False, learning_daily_max_jobs=0)
    ask(home, HIGH, sync=True)
    assert read_log(paths.logs_dir(home) / "guardian_blocks.jsonl")  # logged as ever
    assert audit_jobs(home) == []
    set_tier3(home, True, learning_daily_max_jobs=0)
    ask(home, HIGH, sync=True)
    assert len(audit_jobs(home)) == 1  # the same call, the switch on: queued
    settle(home)


def test_a_low_risk_ask_queues_nothing(home: Path) -> None:
    set_tier3(home, True, learning_daily_max_jobs=0)
    ask(home, LOW, sync=True)
    assert audit_jobs(home) == []
    ask(home, HIGH, sync=True)
    assert [j["call"]["command"] for j in audit_jobs(home)] == [HIGH]
    settle(home)


def test_the_worker_logs_the_verdict_and_s3_status_shows_it(home: Path, s3_env: dict[str, str]) -> None:
    """Learning stays off: the tier-3 switch alone lets the worker run audits, on learning_model, with
    no tool (sealed); the verdict is validated and logged with the call, and counted in the ledger."""
    set_tier3(home, True, learning_model="claude-haiku-4-5")
    ask(home, HIGH)
    log = paths.logs_dir(home) / "guardian_audits.jsonl"
    assert wait_for(log.exists, 60), (paths.logs_dir(home) / "digest.log").read_text()
    settle(home)
    (entry,) = [json.loads(x) for x in log.read_text().splitlines()]
    assert entry["audit"]["passed"] is False and entry["audit"]["risk_level"] == "high"
    assert entry["task_id"] == audits.job_id(grants.subject_sha("Bash", HIGH)) and entry["call"]["command"] == HIGH
    assert [j["state"] for j in audit_jobs(home)] == ["done"]
    (run,) = [json.loads(x) for x in (home.parents[1] / "fake" / "log").read_text().splitlines()]
    args = run["args"]
    assert args[args.index("--model") + 1] == "claude-haiku-4-5" and run["guard"] == "1"
    assert args[args.index("--tools") + 1] == "" and "--allowedTools" not in args  # no tool at all: the seal
    assert HIGH in args[1] and "Terminal creed" in args[1] and PROJECT in args[1]
    assert [e["stage"] for e in ledger.entries(home)] == ["audit"]

    r = run_s3(["status", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)["guardian_audits"]
    assert s["enabled"] is True and s["count"] == 1 and s["failed"] == 1 and s["queued"] == 0
    assert s["recent"][0]["verdict"] == "fail" and s["recent"][0]["risk_level"] == "high"
    assert s["recent"][0]["command"] == HIGH
    r = run_s3(["status"], s3_env)
    assert "Guardian audits (tier 3): on; 1 logged (1 failed)" in r.stdout and f"fail (high) {HIGH}" in r.stdout


def test_the_audit_prompt_carries_the_s3_guardian_contract() -> None:
    """prompts/audit.md is the agent's contract for a headless run: its shared sections are the agent's."""
    agent = (ROOT / "agents" / "s3-guardian.md").read_text()
    prompt = (queue.PROMPT_DIR / "audit.md").read_text()
    for head in ("## Your responsibilities", "## Terminal creed (MUST NOT VIOLATE)", "## Analysis process"):
        body = agent.split(head + "\n", 1)[1].split("\n## ", 1)[0].strip()
        assert f"{head}\n{body}\n" in prompt, head
    rules = agent.split("Field rules (they are validated):", 1)[1].split("no other fields.", 1)[0]
    assert " ".join(rules.split()) in " ".join(prompt.split())


def test_the_hook_answers_the_same_with_the_setting_on(home: Path) -> None:
    """Advice only: the decision and its reason do not depend on the switch."""
    set_tier3(home, False)
    off = run_hook(payload(command=HIGH), env(home, sync=True))
    set_tier3(home, True, learning_daily_max_jobs=0)
    on = run_hook(payload(command=HIGH), env(home, sync=True))
    assert (off.rc, off.stdout) == (on.rc, on.stdout)
    assert len(audit_jobs(home)) == 1
    settle(home)


def test_the_queue_path_stays_stdlib_only(home: Path) -> None:
    """The detached child logs, and the entry point it becomes queues, with the standard library only
    (no pydantic, typer, numpy imported)."""
    code = ("import sys, json; from pathlib import Path; from sophia.guardian import log; "
            "from sophia.learning import audits; "
            f"log.record({str(home)!r}, {{'decision': 'ask', 'rule': 'git_destructive', 'tool': 'Bash', "
            f"'command': {HIGH!r}, 'subject_sha': 'ab' * 32}}); audits.sync(Path({str(home)!r})); "
            "import sophia.hooks.guardian_audit; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pydantic', 'typer', 'numpy', 'torch', 'rich'))))")
    set_tier3(home, True, learning_daily_max_jobs=0)
    import subprocess

    out = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {str(LIB)!r}); {code}"],
                         capture_output=True, text=True, timeout=60, env=dict(os.environ, SOPHIA_HOME=str(home)))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []
    assert len(audit_jobs(home)) == 1


def test_a_secret_in_the_call_never_reaches_the_job_or_the_prompt(home: Path) -> None:
    """The job holds the logged call, redacted: the token is not in the queue, the prompt or the audit log."""
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    cmd = f"git push --force https://{token}@github.com/o/r feature/payments"
    set_tier3(home, True, learning_daily_max_jobs=0)
    ask(home, cmd, sync=True)
    (job,) = audit_jobs(home)
    assert "github.com/o/r feature/payments" in job["call"]["command"]
    assert token not in json.dumps(job) and token not in tier3.audit_input(job)
    tier3.apply(home, job, {"passed": True, "reason": "", "risk_level": "medium", "concerns": [],
                            "creed_violations": [], "recommendation": "use --force-with-lease"})
    assert token not in (paths.logs_dir(home) / "guardian_audits.jsonl").read_text()
    settle(home)


def test_the_seed_switch_is_not_carried_over_by_the_migration(sophia_home: Path) -> None:
    """The seed wrote guardian_tier3_enabled: true and never read it; migrating keeps the audits off."""
    sophia_home.mkdir(parents=True)
    write_json_atomic(paths.config_path(sophia_home), {"schema_version": "1.0.0", "guardian_tier3_enabled": True,
                                                       "embedding_provider": "none"})
    init_tree(sophia_home)
    assert "guardian_tier3_enabled" not in read_json(paths.config_path(sophia_home))
    assert tier3.enabled(str(sophia_home)) is False
    set_tier3(sophia_home, True)
    assert tier3.enabled(str(sophia_home)) is True


def test_with_learning_off_the_worker_runs_the_audit_and_leaves_the_digests_waiting(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each switch alone: a session digest waits (learning_enabled false) while the audit runs; the worker
    neither claims the digest nor spins on it, it goes idle."""
    from sophia.learning import worker

    set_tier3(home, True, learning_daily_max_jobs=0)
    ask(home, HIGH, sync=True)
    settle(home)
    queue.enqueue(home, "sess-waits", "/t/x.jsonl", "/proj")
    set_tier3(home, True, learning_daily_max_jobs=5, learning_enabled=False)
    fake = home.parents[1] / "fake"
    monkeypatch.setenv("SOPHIA_CLAUDE_BIN", str(fake / "claude"))
    monkeypatch.setenv("FAKE_DIR", str(fake))
    t0 = time.monotonic()
    out = worker.drain(worker.Settings(home, backoffs=(), max_wait=1.0))
    assert out["done"] == 1 and out["stopped"] == worker.IDLE and time.monotonic() - t0 < 30
    assert {j["id"]: j["state"] for j in queue.jobs(home)} == {
        audits.job_id(grants.subject_sha("Bash", HIGH)): "done", "session_sess-waits": "pending"}
    set_tier3(home, False, learning_daily_max_jobs=5, learning_enabled=False)
    assert worker.drain(worker.Settings(home, max_wait=1.0))["stopped"].startswith("automatic learning is off")


def log_ask(home: Path, command: str = HIGH, sha: str = "ab" * 32, rule: str = "git_destructive") -> bool:
    """The guardian's own log write (what the hook's detached child does first), in this process."""
    from sophia.guardian import log

    return log.record(str(home), {"decision": "ask", "rule": rule, "tool": "Bash", "command": command,
                                  "cwd": PROJECT, "subject_sha": sha})


def blocks(home: Path) -> Path:
    return paths.logs_dir(home) / "guardian_blocks.jsonl"


def test_the_guardian_only_marks_the_ask_in_its_log(home: Path) -> None:
    """Logging queues nothing by itself: the line carries the family; the learning side pulls it."""
    set_tier3(home, False)
    assert log_ask(home, sha="cd" * 32) is False
    set_tier3(home, True)
    assert log_ask(home) is True and log_ask(home, LOW, "ef" * 32, rule="power") is False
    lines = [json.loads(x) for x in read_log(blocks(home), 3)]
    assert [e.get(tier3.MARK) for e in lines] == [None, "vcs history rewrite", None]
    assert audit_jobs(home) == []
    assert audits.sync(home) == [audits.job_id("ab" * 32)]
    (job,) = audit_jobs(home)
    assert job["call"]["family"] == "vcs history rewrite" and job["call"]["command"] == HIGH


def test_the_pull_reads_each_line_once_from_its_cursor(home: Path) -> None:
    log_ask(home, sha="01" * 32)
    assert len(audits.sync(home)) == 1
    assert audits.sync(home) == []  # nothing new
    cur = read_json(audits.cursor_path(home))
    assert cur == {"inode": os.stat(blocks(home)).st_ino, "offset": blocks(home).stat().st_size}
    write_json_atomic(audits.cursor_path(home), {"inode": cur["inode"], "offset": 0})
    assert audits.sync(home) == []  # read again (a lost cursor): the job exists, no second one
    log_ask(home, sha="02" * 32)
    with blocks(home).open("ab") as f:  # a line still being written is left for the next pull
        f.write(b'{"decision": "ask", "rule": "git_destructive", "subject_sha": "' + b"03" * 32 + b'", "tier3": "x"')
    assert audits.sync(home) == [audits.job_id("02" * 32)]
    with blocks(home).open("ab") as f:
        f.write(b"}\n")
    assert audits.sync(home) == [audits.job_id("03" * 32)]
    assert len(audit_jobs(home)) == 3


def test_a_new_log_is_read_from_its_start_and_the_switch_off_queues_nothing(home: Path) -> None:
    log_ask(home, sha="01" * 32)
    audits.sync(home)
    blocks(home).rename(blocks(home).with_suffix(".old"))  # set aside: a new file, another inode
    log_ask(home, sha="02" * 32)
    assert audits.sync(home) == [audits.job_id("02" * 32)]
    log_ask(home, sha="03" * 32)
    set_tier3(home, False)  # marked while on, pulled after it was turned off: not audited
    assert audits.sync(home) == []
    set_tier3(home, True)
    assert audits.sync(home) == []  # and not later either: the cursor went past it
    assert read_json(audits.cursor_path(home))["offset"] == blocks(home).stat().st_size


def test_an_ask_whose_hook_child_was_lost_is_queued_by_the_worker_and_at_session_end(home: Path) -> None:
    """The pull runs where learning work starts: the digest worker's start, the after-session runner."""
    from sophia.hooks import after_session
    from sophia.learning import worker

    set_tier3(home, True, learning_daily_max_jobs=0)
    log_ask(home, sha="01" * 32)  # logged, and its child died before it pulled
    out = worker.drain(worker.Settings(home, backoffs=(), max_wait=1.0))
    assert ledger.CAP_REACHED in out["stopped"]
    assert [j["id"] for j in audit_jobs(home)] == [audits.job_id("01" * 32)]
    log_ask(home, sha="02" * 32)
    cfg = read_json(paths.config_path(home))
    line = after_session.digest(home, cfg, {"session": "s1"}, None)
    assert "1 guardian audit(s) queued" in line and "no worker" in line, line
    assert len(audit_jobs(home)) == 2


def test_the_resident_analyzer_queues_the_audit_and_lives_on(home: Path, tmp_path: Path) -> None:
    """A high-risk ask answered by the resident analyzer queues its audit like a one-shot hook, and the
    resident goes on answering (it once exec'ed itself into the audit runner, ending the daemon)."""
    from .test_resident import no_python, start, stop

    set_tier3(home, True, learning_daily_max_jobs=0)
    proc = start(home)
    try:
        e = no_python(env(home), tmp_path)  # only the resident can answer: no Python to fall back to
        r = run_hook(payload(command=HIGH), e)
        assert r.rc == 0 and r.decision == "ask" and "python3 was not found" not in r.stdout, r
        assert wait_for(lambda: len(audit_jobs(home)) == 1, 20), queue.jobs(home)
        time.sleep(0.5)
        assert proc.poll() is None, "the resident analyzer ended"
        again = run_hook(payload(command=HIGH + " "), e)
        assert again.decision == "ask" and "python3 was not found" not in again.stdout, again
    finally:
        stop(proc)
    settle(home)
