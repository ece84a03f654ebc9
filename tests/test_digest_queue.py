"""The digest queue and its worker: durable jobs, one worker, exactly-once effects, named failures, caps.

The `claude` here is a test double (a script on SOPHIA_CLAUDE_BIN that answers like `claude -p
--output-format json`): what is under test is the queue, the worker and the ledger, not the model.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB, set_config, wait_for
from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.learning import headless, ledger, queue, seal, worker
from sophia.state import init_tree

FAKE = """#!{python}
# Test double for `claude -p ... --output-format json`. FAKE_MODE: ok | login | sleep_first | garbage
import json, os, sys, time
d = os.environ["FAKE_DIR"]
calls = os.path.join(d, "calls")
n = (int(open(calls).read()) if os.path.exists(calls) else 0) + 1
open(calls, "w").write(str(n))
with open(os.path.join(d, "log"), "a") as f:
    f.write(json.dumps({{"n": n, "pid": os.getpid(), "ppid": os.getppid(), "guard": os.environ.get("SOPHIA_HOOK_GUARD"),
                        "args": sys.argv[1:], "start": time.time(), "cwd": os.getcwd()}}) + "\\n")
mode = os.environ.get("FAKE_MODE", "ok")
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
if mode == "sleep_first" and n == 1:
    open(os.path.join(d, "sleeping.tmp"), "w").write(str(os.getpid()))
    os.replace(os.path.join(d, "sleeping.tmp"), os.path.join(d, "sleeping"))  # whole, or not there yet
    time.sleep(120)
if mode == "login":
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": True, "total_cost_usd": 0,
                      "result": "Invalid API key \\u00b7 Please run /login"}}))
    sys.exit(1)
if mode == "garbage":
    print("this is not json")
    sys.exit(0)
prompt = sys.argv[2]
if "STAGE=extract" in prompt or "Stage 1 of 2" in prompt:  # the test prompts, or the kit's own
    answer = {{"atomic_facts": [{{"fact": f"fake fact from call {{n}}"}}]}}
else:
    answer = {{"heuristics": [{{"trigger_concept": "testing", "rule_content": f"run the tests first (call {{n}})"}}]}}
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": json.dumps(answer),
                  "total_cost_usd": 0.0123, "usage": {{"input_tokens": 1000, "output_tokens": 200}}}}))
"""


def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scripted `claude` (FAKE) on SOPHIA_CLAUDE_BIN and two stage prompts; returns the prompts folder."""
    fake_dir = tmp_path / "fake"
    fake_dir.mkdir()
    fake = fake_dir / "claude"
    fake.write_text(FAKE.format(python=sys.executable))
    fake.chmod(0o755)
    monkeypatch.setenv("SOPHIA_CLAUDE_BIN", str(fake))
    monkeypatch.setenv("FAKE_DIR", str(fake_dir))
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "extract.md").write_text("STAGE=extract session $session_id transcript $transcript")
    (prompts / "reflect.md").write_text("STAGE=reflect session $session_id")
    return prompts


@pytest.fixture
def home(sophia_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    init_tree()
    set_config(sophia_home, learning_enabled=True, embedding_provider="none")
    fake_claude(tmp_path, monkeypatch)
    return sophia_home


def fake_dir(home: Path) -> Path:
    return home.parents[1] / "fake"


def calls(home: Path) -> list[dict[str, Any]]:
    log = fake_dir(home) / "log"
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def sealed(args: list[str], s3: tuple[str, ...]) -> bool:
    """The run carries the seal for a stage that may run ``s3 <each of s3>`` (and reaches no extra folder)."""
    want = seal.args(s3)
    return "--add-dir" not in args and any(args[i:i + len(want)] == want for i in range(len(args)))


def settings(home: Path, **kw: Any) -> worker.Settings:
    kw.setdefault("backoffs", (0.01, 0.01))
    kw.setdefault("max_wait", 5.0)
    return worker.Settings(home, prompt_dir=home.parents[1] / "prompts", **kw)


def memory_texts(home: Path) -> list[str]:
    """Every fact and rule text now in the state (to count how often a stage's effect landed)."""
    facts = read_json(paths.memory_dir(home) / "facts.json", default={"items": []})
    rules = read_json(paths.rules_path(home), default=[])
    return [i["text"] for i in facts["items"]] + [r["rule_content"] for r in rules]


def start_worker(home: Path, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(LIB), SOPHIA_HOME=str(home))
    return subprocess.Popen([sys.executable, "-m", "sophia.learning.worker", "--prompt-dir",
                             str(home.parents[1] / "prompts"), "--backoffs", "0.01", *args],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


# ---------------------------------------------------------------- the queue


def test_enqueue_is_idempotent_per_session(home: Path) -> None:
    state, job = queue.enqueue(home, "sess-1", "/t/a.jsonl", "/proj", reason="SessionEnd")
    assert state == "pending" and job["id"] == "session_sess-1"
    state, job = queue.enqueue(home, "sess-1", "/t/b.jsonl", reason="PreCompact")
    assert queue.counts(home) == {"pending": 1, "running": 0, "done": 0, "parked": 0}
    (only,) = queue.jobs(home)
    assert only["transcript"] == "/t/b.jsonl" and only["cwd"] == "/proj" and only["reason"] == "PreCompact"
    queue.enqueue(home, "sess-1", kind="consolidation")  # another kind is another job
    queue.enqueue(home, "../../evil id")  # any session id makes a safe file name
    assert queue.counts(home)["pending"] == 3
    assert all(p.parent == queue.state_dir(home, "pending") for p in queue.state_dir(home, "pending").iterdir())
    queue.move(home, only, "done")
    assert queue.enqueue(home, "sess-1", "/t/c.jsonl")[0] == "done"  # a done session is not digested again
    assert queue.counts(home) == {"pending": 2, "running": 0, "done": 1, "parked": 0}


def test_a_job_runs_both_stages_and_the_ledger_records_its_cost(home: Path) -> None:
    queue.enqueue(home, "sess-1", "/t/a.jsonl", "/proj")
    out = worker.drain(settings(home))
    assert out["done"] == 1 and out["stopped"] == worker.IDLE
    runs = calls(home)
    assert [("STAGE=extract" in c["args"][1]) for c in runs] == [True, False]
    assert all(c["guard"] == "1" for c in runs)
    args = runs[0]["args"]
    assert "--no-session-persistence" in args and args[args.index("--output-format") + 1] == "json"
    assert "/t/a.jsonl" in args[1]
    assert sealed(args, ()) and sealed(runs[1]["args"], ("recall", "list"))  # extract: no tool; reflect: s3 recall/list
    cwds = [Path(c["cwd"]) for c in runs]  # each stage ran in a fresh folder of its own, removed afterwards
    assert cwds[0] != cwds[1] and all(d.name.startswith("sophia-stage-") and not d.exists() for d in cwds)
    texts = memory_texts(home)
    assert "fake fact from call 1" in texts and "run the tests first (call 2)" in texts
    es = ledger.entries(home)
    assert [(e["stage"], e["cost_usd"], e["tokens"], e["ok"]) for e in es] == [
        ("extract", 0.0123, 1200, True), ("reflect", 0.0123, 1200, True)]
    assert ledger.today(home)["cost_usd"] == pytest.approx(0.0246) and ledger.today(home)["jobs"] == 1


def test_two_workers_started_together_one_runs(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SLEEP", "0.3")
    for i in range(3):
        queue.enqueue(home, f"sess-{i}")
    procs = [start_worker(home) for _ in range(2)]
    for p in procs:
        p.wait(timeout=60)
    assert queue.counts(home)["done"] == 3
    runs = calls(home)
    assert len(runs) == 6 and len({c["ppid"] for c in runs}) == 1, "claude was run by more than one worker"
    log = (paths.logs_dir(home) / "digest.log").read_text()
    assert log.count("another digest worker is running") == 1 and "Traceback" not in log


def test_sigkill_mid_job_then_restart_does_the_job_exactly_once(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODE", "sleep_first")
    queue.enqueue(home, "sess-1", "/t/a.jsonl")
    w = start_worker(home)
    sleeping = fake_dir(home) / "sleeping"
    try:
        assert wait_for(sleeping.exists), "the worker never ran claude"
        assert queue.counts(home)["running"] == 1
        os.kill(w.pid, signal.SIGKILL)
        w.wait(timeout=10)
    finally:
        if sleeping.exists():
            os.kill(int(sleeping.read_text()), signal.SIGKILL)  # the orphaned client of the killed worker
    assert queue.counts(home)["running"] == 1 and not queue.worker_running(home)
    w = start_worker(home)
    assert w.wait(timeout=60) == 0
    assert queue.counts(home) == {"pending": 0, "running": 0, "done": 1, "parked": 0}
    texts = memory_texts(home)
    assert [t for t in texts if t.startswith("fake fact")] == ["fake fact from call 2"]
    assert [t for t in texts if t.startswith("run the tests")] == ["run the tests first (call 3)"]
    assert [e["stage"] for e in ledger.entries(home)] == ["extract", "reflect"]  # the killed run reported nothing
    assert "died mid-job" in (paths.logs_dir(home) / "digest.log").read_text()


def test_a_job_enqueued_as_the_worker_goes_idle_is_not_lost(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lost wake-up: the worker has found nothing due and is about to let go of its lock when a hook
    enqueues a job and, seeing the lock held, starts no worker. The job must not wait for the next session."""
    real = worker._wait_for_due
    raced: list[str] = []

    def hook_enqueues_now(st: worker.Settings) -> bool:
        if raced:
            return real(st)
        raced.append(queue.enqueue(home, "late")[1]["id"])
        assert queue.start_worker(home) is None  # what the hook does: the lock is held, no worker starts
        return False  # the worker had already decided it was idle

    monkeypatch.setattr(worker, "_wait_for_due", hook_enqueues_now)
    out = worker.drain(settings(home))
    assert raced == ["session_late"]
    assert queue.counts(home) == {"pending": 0, "running": 0, "done": 1, "parked": 0}, queue.jobs(home)
    assert out["done"] == 1 and out["stopped"] == worker.IDLE


def test_no_worker_starts_without_stage_prompts(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker would only stop at once: none is started, and the job says why it waits."""
    monkeypatch.setenv(queue.PROMPT_DIR_ENV, str(home / "nowhere"))
    queue.enqueue(home, "sess-1")
    assert queue.ensure_worker(home) is None
    (job,) = queue.jobs(home, ("pending",))
    assert job["reason"] == f"no digest prompt for stage extract ({home / 'nowhere' / 'extract.md'})"
    assert not (paths.logs_dir(home) / "digest.log").exists(), "a worker was started"
    monkeypatch.setenv(queue.PROMPT_DIR_ENV, str(home.parents[1] / "prompts"))  # prompts back: it starts
    assert queue.ensure_worker(home)
    assert wait_for(lambda: queue.counts(home)["done"] == 1, 60), (paths.logs_dir(home) / "digest.log").read_text()


def test_a_saved_result_is_applied_after_a_crash_without_asking_the_model_again(home: Path) -> None:
    """Killed between saving a stage's answer and applying it: the answer is applied, the model not rerun."""
    _, job = queue.enqueue(home, "sess-1")
    stage = worker.STAGES["session"][0]
    write_json_atomic(worker.result_path(home, job, stage), {"atomic_facts": [{"fact": "saved before the crash"}]})
    worker.drain(settings(home))
    assert [("STAGE=extract" in c["args"][1]) for c in calls(home)] == [False]  # only the reflect stage ran
    assert "saved before the crash" in memory_texts(home)
    assert queue.counts(home)["done"] == 1


# ---------------------------------------------------------------- failures


def test_a_client_that_is_not_logged_in_parks_the_job_with_the_reason(home: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODE", "login")
    queue.enqueue(home, "sess-1")
    out = worker.drain(settings(home, backoffs=(0.01, 0.02)))
    assert out["parked"] == 1 and out["retry"] == 2 and len(calls(home)) == 3
    (job,) = queue.jobs(home, ("parked",))
    assert job["reason"] == f"{headless.NOT_LOGGED_IN} (gave up after 3 attempts)"
    assert [e["ok"] for e in ledger.entries(home)] == [False] * 3
    assert queue.retry(home, job["id"]) and queue.jobs(home, ("pending",))[0]["attempts"] == 0
    assert queue.drop(home, job["id"]) == "pending" and queue.counts(home)["pending"] == 0


def test_invalid_output_is_a_named_failure(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODE", "garbage")
    queue.enqueue(home, "sess-1")
    worker.drain(settings(home, backoffs=()))
    (job,) = queue.jobs(home, ("parked",))
    assert job["reason"].startswith("invalid output: not the JSON of --output-format json")


def test_an_unforeseen_error_retries_and_parks_never_stays_running(home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception no stage foresaw (a full disk while saving, a bug) is a failure like any other: the job
    is retried and then parked with its reason, never left in running/ to block the queue."""
    def broken(*_a: Any, **_k: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(worker, "_run_stage", broken)
    queue.enqueue(home, "sess-1")
    worker.drain(settings(home, backoffs=()))
    assert queue.jobs(home, ("running",)) == []
    (job,) = queue.jobs(home, ("parked",))
    assert "OSError" in job["reason"] and "No space left" in job["reason"]


def test_no_claude_on_path_is_a_named_failure(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOPHIA_CLAUDE_BIN")
    monkeypatch.setenv("PATH", "/nonexistent")
    queue.enqueue(home, "sess-1")
    worker.drain(settings(home, backoffs=()))
    assert queue.jobs(home, ("parked",))[0]["reason"].startswith(headless.NO_CLAUDE)


@pytest.mark.parametrize(("rc", "stdout", "stderr", "reason"), [
    (1, "", "Error: 429 Too Many Requests", headless.RATE_LIMITED),
    (0, json.dumps({"type": "result", "is_error": True, "result": "Claude AI usage limit reached"}), "",
     headless.RATE_LIMITED),
    (1, "", "Not logged in", headless.NOT_LOGGED_IN),
    (2, "", "boom", "claude exited 2: boom"),
    (0, json.dumps({"type": "result", "subtype": "error_max_turns", "is_error": False, "result": ""}), "",
     "claude run failed (error_max_turns): "),
    (0, json.dumps({"type": "result", "subtype": "success", "result": "{}", "total_cost_usd": 0.5}), "", ""),
])
def test_classify(rc: int, stdout: str, stderr: str, reason: str) -> None:
    out = headless.classify(rc, stdout, stderr)
    assert out.reason == reason and out.ok == (reason == "")


def test_the_answer_may_be_fenced_or_wrapped_in_prose() -> None:
    assert headless.json_answer('Here:\n```json\n{"a": 1}\n```\n') == {"a": 1}
    assert headless.json_answer('Result {"a": {"b": 2}} done') == {"a": {"b": 2}}
    with pytest.raises(ValueError, match="invalid output"):
        headless.json_answer("no json here")


# ---------------------------------------------------------------- caps and the switch


@pytest.mark.parametrize(("key", "value", "says"), [
    ("learning_daily_max_jobs", 1, "1 jobs today (learning_daily_max_jobs = 1)"),
    ("learning_daily_max_usd", 0.02, "$0.02 spent today (learning_daily_max_usd = $0.02)"),
])
def test_the_daily_cap_stops_jobs_and_says_so(home: Path, key: str, value: float, says: str) -> None:
    cfg = read_json(paths.config_path())
    cfg[key] = value
    write_json_atomic(paths.config_path(), cfg)
    queue.enqueue(home, "sess-1")
    queue.enqueue(home, "sess-2")
    out = worker.drain(settings(home))
    assert out["done"] == 1 and out["stopped"] == f"{ledger.CAP_REACHED}: {says}"
    (waiting,) = queue.jobs(home, ("pending",))
    assert waiting["reason"] == out["stopped"] and waiting["attempts"] == 0
    assert len(calls(home)) == 2


@pytest.fixture
def india(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """This process and the commands it runs in a +05:30 zone with no summer time (the caps' day is local)."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    yield "IST-5:30"
    monkeypatch.undo()
    time.tzset()


def test_s3_digest_list_says_when_a_job_the_cap_holds_will_run(home: Path, s3_env: dict[str, str], india: str) -> None:
    """Text and JSON alike: the pending job waits for the daily cap until the next local midnight, and the
    text keeps each job's state in brackets."""
    from conftest import run_s3

    s3_env["TZ"] = india
    set_config(home, learning_daily_max_jobs=1)
    queue.enqueue(home, "sess-1")
    queue.enqueue(home, "sess-2")
    assert worker.drain(settings(home))["stopped"].startswith(ledger.CAP_REACHED)
    data = json.loads(run_s3(["digest", "list", "--json"], s3_env).stdout)
    done, waiting = data["jobs"]
    assert done["state"] == "done" and "deferred" not in done
    d = waiting["deferred"]
    assert d["cap"] == f"{ledger.CAP_REACHED}: 1 jobs today (learning_daily_max_jobs = 1)"
    at = datetime.fromisoformat(d["runs_after"].replace("Z", "+00:00")).astimezone(timezone(timedelta(hours=5, minutes=30)))
    assert (at.hour, at.minute) == (0, 0) and timedelta(0) < at - datetime.now(UTC) <= timedelta(days=1)
    r = run_s3(["digest", "list"], s3_env)
    assert r.returncode == 0, r.stderr
    assert "- [done] session_sess-1 (1 attempts)" in r.stdout
    assert (f"- [pending] session_sess-2 (0 attempts): waiting for the daily cap: 1 jobs today "
            f"(learning_daily_max_jobs = 1); runs after {at:%Y-%m-%d} 00:00 IST, at the next session's end or "
            "`s3 digest run`") in r.stdout.splitlines(), r.stdout
    set_config(home, learning_daily_max_jobs=0)  # a cap of 0 never lifts at midnight
    (waiting,) = [j for j in json.loads(run_s3(["digest", "list", "--json"], s3_env).stdout)["jobs"] if j.get("deferred")]
    assert waiting["deferred"]["runs_after"] is None and "none runs while a cap is 0" in waiting["deferred"]["text"]
    set_config(home, learning_daily_max_jobs=5)  # raised: the job the cap held may run now
    r = run_s3(["digest", "list"], s3_env)
    assert "- [pending] session_sess-2 (0 attempts, next try now): the daily cap held it before and allows it now" in r.stdout


def test_s3_digest_list_text_shows_every_state(home: Path, s3_env: dict[str, str]) -> None:
    """Rich would read "[pending]" as a style tag and print nothing of it."""
    from conftest import run_s3

    for i in range(4):
        queue.enqueue(home, f"s{i}")
    for i, state in ((1, "done"), (2, "parked")):
        (job,) = [j for j in queue.jobs(home) if j["id"] == f"session_s{i}"]
        queue.move(home, job, state, "gave up [bold]twice[/bold]" if state == "parked" else "")
    assert queue.claim(home, kinds=None) is not None  # session_s0 is running
    out = run_s3(["digest", "list"], s3_env).stdout
    for line in ("- [running] session_s0 (1 attempts)", "- [done] session_s1 (0 attempts)",
                 "- [parked] session_s2 (0 attempts): gave up [bold]twice[/bold]",
                 "- [pending] session_s3 (0 attempts, next try now)"):
        assert line in out.splitlines(), out


def test_learning_off_runs_nothing(home: Path) -> None:
    cfg = read_json(paths.config_path())
    cfg["learning_enabled"] = False
    write_json_atomic(paths.config_path(), cfg)
    queue.enqueue(home, "sess-1")
    assert worker.drain(settings(home))["stopped"].startswith("automatic learning is off")
    assert calls(home) == [] and queue.counts(home)["pending"] == 1


def test_missing_prompts_leave_the_job_pending(home: Path) -> None:
    queue.enqueue(home, "sess-1")
    out = worker.drain(worker.Settings(home, prompt_dir=home / "nowhere"))
    assert out["stopped"] == "stopped before a job" and calls(home) == []
    (job,) = queue.jobs(home, ("pending",))
    assert job["reason"].startswith("no digest prompt for stage extract") and job["attempts"] == 0


# ---------------------------------------------------------------- s3 digest, s3 status


def test_s3_digest_commands(home: Path, s3_env: dict[str, str]) -> None:
    from conftest import run_s3

    s3_env["SOPHIA_CLAUDE_BIN"] = os.environ["SOPHIA_CLAUDE_BIN"]
    queue.enqueue(home, "sess-1", "/t/a.jsonl")
    queue.enqueue(home, "sess-2")
    r = run_s3(["digest", "list", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [j["id"] for j in data["jobs"]] == ["session_sess-1", "session_sess-2"]
    assert data["summary"]["pending"] == 2 and data["summary"]["enabled"] is True
    r = run_s3(["digest", "run", "--once", "--prompt-dir", str(home.parents[1] / "prompts")], s3_env)
    assert r.returncode == 0 and "session_sess-1: done" in r.stdout and "ran 1: 1 done" in r.stdout, r.stdout + r.stderr
    r = run_s3(["digest", "drop", "session_sess-2", "--json"], s3_env)
    assert json.loads(r.stdout) == {"dropped": "session_sess-2", "was": "pending"}
    for args in (["digest", "drop", "nope"], ["digest", "retry", "nope"], ["digest", "retry"],
                 ["digest", "retry", "x", "--all"]):
        r = run_s3(args, s3_env)
        assert r.returncode == 2 and r.stderr.startswith("s3: error:") and "Traceback" not in r.stderr, args
    assert json.loads(run_s3(["digest", "retry", "--all", "--json"], s3_env).stdout) == {"retried": []}
    r = run_s3(["status"], s3_env)
    assert r.returncode == 0, r.stderr
    assert "Digests: learning on; 0 pending, 1 done, 0 parked; today 1 jobs, $0.02" in r.stdout
    assert json.loads(run_s3(["status", "--json"], s3_env).stdout)["digests"]["today"]["runs"] == 2


def test_start_worker_detaches_one_worker(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a hook will call: nothing starts while a worker holds the lock; otherwise it returns at once
    (the worker here stops for want of prompts, which leaves the job pending with that reason)."""
    monkeypatch.setenv(queue.PROMPT_DIR_ENV, str(home / "nowhere"))
    queue.enqueue(home, "sess-1")
    with worker.worker_lock(home) as mine:
        assert mine and queue.worker_running(home)
        assert queue.start_worker(home) is None
    t0 = time.monotonic()
    pid = queue.start_worker(home)
    assert pid and time.monotonic() - t0 < 0.5
    os.waitpid(pid, 0)
    (job,) = queue.jobs(home, ("pending",))
    assert job["reason"].startswith("no digest prompt for stage extract")
    assert "digest worker stops: stopped before a job" in (paths.logs_dir(home) / "digest.log").read_text()
