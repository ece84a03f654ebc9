"""The resident hook runner (lib/sophia/hooks/resident.py) through the real bash hooks: a one-shot hook stays
on as the resident of its state home, the next hooks are answered by it exactly as a one-shot run answers,
and whatever goes wrong with it (a decline, a dead or silent resident, a wrong secret) never costs the hook
its answer or runs its work twice."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_s3, wait_for

HOOKS = ROOT / "hooks"
LIB_AS_HOOK_NAMES_IT = f"{HOOKS}/../lib"  # hooks/lib/env.sh: SOPHIA_LIB=$SOPHIA_HOOK_DIR/../lib
PROMPT = "how did we fix the flaky postgres migration test with the advisory lock?"


def key_file(home: Path) -> Path:
    return home / "run" / "hooks" / "resident"


def hook(name: str, payload: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(HOOKS / f"{name}.sh")], input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=60)


def context(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""


def no_python(env: dict[str, str], tmp: Path) -> dict[str, str]:
    """The hook's environment with no Python to run one-shot: only the resident can answer."""
    bindir = tmp / "bash-only-bin"
    if not bindir.exists():
        bindir.mkdir()
        (bindir / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    out = {k: v for k, v in env.items() if k != "SOPHIA_PYTHON"}
    out["PATH"] = str(bindir)
    return out


def resident_pid(home: Path) -> int:
    assert wait_for(lambda: key_file(home).exists(), 30), "no resident came up"
    return int(key_file(home).read_text().splitlines()[4])


def stop(home: Path) -> None:
    try:
        pid = int(key_file(home).read_text().splitlines()[4])
        if pid != os.getpid():  # a fake's key file names this process
            os.kill(pid, signal.SIGTERM)
    except (OSError, IndexError, ValueError):
        pass


@pytest.fixture
def home(sophia_home: Path, s3_env: dict[str, str]) -> Iterator[Path]:
    assert run_s3(["init"], s3_env).returncode == 0
    learned = run_s3(["learn", "Flaky postgres migration tests: take an advisory lock before migrating",
                      "--domain", "postgres"], s3_env)
    assert learned.returncode == 0, learned.stderr
    yield sophia_home
    stop(sophia_home)


@pytest.fixture
def env(home: Path, tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
    out.update(HOME=str(home.parent), SOPHIA_HOME=str(home), SOPHIA_PYTHON=os.path.realpath(sys.executable),
               SOPHIA_RECALL_SEMANTIC="0")
    (tmp_path / "proj").mkdir()
    return out


def prompt(sid: str, tmp_path: Path, text: str = PROMPT) -> dict[str, Any]:
    return {"session_id": sid, "cwd": str(tmp_path / "proj"), "hook_event_name": "UserPromptSubmit", "prompt": text}


def test_a_one_shot_hook_stays_on_and_answers_the_next_ones(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    first = hook("prompt_context", prompt("s1", tmp_path), env)
    assert first.returncode == 0 and first.stderr == ""
    assert "advisory lock" in context(first.stdout)
    pid = resident_pid(home)
    lines = key_file(home).read_text().splitlines()
    assert lines[3] == LIB_AS_HOOK_NAMES_IT and len(lines[1]) == len(lines[2]) == 64 and lines[1] != lines[2]
    assert (key_file(home).stat().st_mode & 0o777) == 0o600 and (key_file(home).parent.stat().st_mode & 0o777) == 0o700
    # no Python left to start: only the resident can answer, and it answers as the one-shot run did
    second = hook("prompt_context", prompt("s2", tmp_path), no_python(env, tmp_path))
    assert second.returncode == 0 and second.stderr == "" and second.stdout == first.stdout
    assert resident_pid(home) == pid
    # the session's record of what it was shown was written by the resident: the same prompt again is silent
    assert hook("prompt_context", prompt("s2", tmp_path), no_python(env, tmp_path)).stdout == ""


def test_every_python_hook_answers_as_one_shot(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    """The same payloads, each in a session of its own, one-shot (SOPHIA_HOOK_RESIDENT=0) and through the
    resident: the same output, the same files written."""
    project = tmp_path / "proj"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "cwd": str(project), "timestamp": "2026-11-20T10:00:00Z",
                                      "message": {"role": "user", "content": "fix the flaky postgres migration test"}})
                          + "\n")
    one_shot = dict(env, SOPHIA_HOOK_RESIDENT="0")
    hook("prompt_context", prompt("warm", tmp_path), env)  # starts the resident
    resident_pid(home)
    for name, event, extra in (("session_start", "SessionStart", {"source": "startup"}),
                               ("prompt_context", "UserPromptSubmit", {"prompt": PROMPT}),
                               ("session_end", "Stop", {"stop_hook_active": False}),
                               ("compact", "PreCompact", {"trigger": "auto"}),
                               ("session_end", "SessionEnd", {"reason": "other"})):
        runs = []
        for sid, e in ((f"{event}-a", one_shot), (f"{event}-b", no_python(env, tmp_path))):
            data = {"session_id": sid, "cwd": str(project), "transcript_path": str(transcript),
                    "hook_event_name": event, **extra}
            r = hook(name, data, e)
            assert r.returncode == 0 and r.stderr == "", (name, r.stderr)
            runs.append(r.stdout.replace(sid, "SID"))
        assert runs[0] == runs[1], name
    eps = {json.loads(p.read_text())["session_id"]: json.loads(p.read_text())
           for p in (home / "episodes").glob("ep_*.json")}
    a, b = eps["Stop-a"], eps["Stop-b"]
    for k in ("goal", "outcome", "project", "tool_call_count", "keywords"):
        assert a[k] == b[k], k


def test_environment_folder_and_streams_are_the_hooks_and_come_back(home: Path, env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    """In process: a request runs in the hook's environment and folder, on its payload; the resident's own
    come back after it."""
    from sophia.hooks import resident

    before_env, before_cwd, before_out = dict(os.environ), os.getcwd(), sys.stdout
    code, out, err, _work = resident.answer("prompt_context", str(tmp_path / "proj"), env,
                                            json.dumps(prompt("inproc", tmp_path)).encode())
    assert code == 0 and err == b"" and "advisory lock" in context(out.decode())
    assert dict(os.environ) == before_env and sys.stdout is before_out
    assert os.getcwd() == "/"  # a resident waits in / (the test's own folder comes back below)
    os.chdir(before_cwd)
    r = resident.HookResident(str(home), LIB_AS_HOOK_NAMES_IT)
    assert r.declined("prompt_context", str(tmp_path), env) == ""
    assert r.declined("guardian_tier1", str(tmp_path), env)
    assert r.declined("prompt_context", str(tmp_path), dict(env, SOPHIA_HOME=str(tmp_path / "other")))
    assert r.declined("prompt_context", str(tmp_path), dict(env, LD_PRELOAD="/nonexistent.so"))
    assert r.declined("prompt_context", str(tmp_path / "gone"), env)


class Fake:
    """A listener named by the hooks' key file: ``answer(request bytes) -> bytes | None`` (None: say nothing)."""

    def __init__(self, home: Path, answer: Any, secret: str = "r" * 64) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.answer, self.requests = answer, []  # type: ignore[var-annotated]
        key_file(home).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        key_file(home).write_text(f"{self.sock.getsockname()[1]}\n{'q' * 64}\n{secret}\n{LIB_AS_HOOK_NAMES_IT}\n"
                                  f"{os.getpid()}\n")
        key_file(home).chmod(0o600)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                conn.settimeout(5)
                try:
                    while data.count(b"\0") < 5 or data.count(b"\0") < 5 + int(data.split(b"\0")[3]):
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                except (OSError, ValueError):
                    pass
                self.requests.append(data)
                reply = self.answer(data)
                if reply is None:
                    time.sleep(6)
                else:
                    conn.sendall(reply)

    def close(self) -> None:
        self.sock.close()


def test_what_goes_wrong_with_the_resident_never_costs_the_answer(home: Path, env: dict[str, str],
                                                                  tmp_path: Path) -> None:
    from sophia.resident import take_lock

    data = prompt("fake", tmp_path)
    want = context(hook("prompt_context", data, dict(env, SOPHIA_HOOK_RESIDENT="0")).stdout)
    assert "advisory lock" in want and not key_file(home).exists()  # switched off: none started
    lock = take_lock(str(home), "hooks")  # a one-shot run that would stay on finds one running: it exits
    assert lock is not None
    cases = {
        "declined": lambda req: b"r" * 64 + b" --- 00000000 00000005\nnope!",  # the hook runs one-shot instead
        "closed": lambda req: b"",  # died mid-request: one-shot
        "forged": lambda req: b"f" * 64 + b" 000 00000002 00000000\n{}",  # not its answer secret: one-shot
        "old-head": lambda req: b"r" * 64 + b" 0 2 0\n{}",  # a head of another shape: one-shot
        "cut-short": lambda req: b"r" * 64 + b" 000 00000009 00000000\n{}",  # less than its count: one-shot
    }
    for why, answer in cases.items():
        fake = Fake(home, answer)
        try:
            r = hook("prompt_context", dict(data, session_id=f"fake-{why}"), env)
            assert r.returncode == 0 and r.stderr == "" and context(r.stdout) == want, why
            assert len(fake.requests) == 1 and b"S3H1 " + b"q" * 64 in fake.requests[0], why
            req = fake.requests[0].split(b"\0")
            assert req[1] == b"prompt_context" and f"SOPHIA_HOME={home}".encode() in req
        finally:
            fake.close()
            key_file(home).unlink()
    answered = Fake(home, lambda req: b"r" * 64 + b" 000 00000007 00000004\n{\"a\":1}oops")
    try:
        r = hook("prompt_context", dict(data, session_id="fake-ok"), no_python(env, tmp_path))
        assert (r.returncode, r.stdout, r.stderr) == (0, '{"a":1}', "oops")
    finally:
        answered.close()
        key_file(home).unlink()
    silent = Fake(home, lambda req: None)  # reached, then never answers: one line, no second run
    try:
        t = time.monotonic()
        r = hook("prompt_context", dict(data, session_id="fake-silent"), env)
        assert r.returncode == 0 and r.stdout == "" and "did not answer in time" in r.stderr
        assert time.monotonic() - t < 5.5 and len(silent.requests) == 1
    finally:
        silent.close()
        key_file(home).unlink()
        os.close(lock)


def test_a_staying_hook_keeps_no_descriptor_of_its_starter(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    """Claude Code reads a hook's output to its end: the process that stays on must not hold it (nor any
    other descriptor the hook was given)."""
    r, w = os.pipe()
    try:
        proc = subprocess.Popen(["bash", str(HOOKS / "prompt_context.sh")], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, pass_fds=(w,))
        out, _ = proc.communicate(json.dumps(prompt("fd", tmp_path)).encode(), timeout=60)  # EOF: no one holds it
        assert "advisory lock" in out.decode()
        os.close(w)
        w = -1
        pid = resident_pid(home)
        import select

        ready, _, _ = select.select([r], [], [], 10)
        assert ready and os.read(r, 1) == b""
        assert os.getsid(pid) == pid  # its own session
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_it_goes_with_its_home_and_reaps_what_the_hooks_start(home: Path, env: dict[str, str],
                                                                tmp_path: Path) -> None:
    hook("prompt_context", prompt("s", tmp_path), env)
    pid = resident_pid(home)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "cwd": str(tmp_path / "proj"), "timestamp": "2026-11-20T10:00:00Z",
                                      "message": {"role": "user", "content": "fix the flaky postgres test now"}})
                          + "\n")
    end = {"session_id": "s", "cwd": str(tmp_path / "proj"), "transcript_path": str(transcript),
           "hook_event_name": "SessionEnd", "reason": "other"}
    assert hook("session_end", end, no_python(env, tmp_path)).returncode == 0  # starts the learners, detached
    log = home / "logs" / "learning.log"
    assert wait_for(lambda: log.exists() and "learn" in log.read_text(), 60)

    def children() -> list[str]:
        """The states of the resident's children (Z: ended, not reaped)."""
        out = []
        for e in os.listdir("/proc"):
            try:
                st = Path(f"/proc/{e}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(st[1]) == pid:
                out.append(st[0])
        return out

    assert wait_for(lambda: "Z" in children() or not children(), 60)  # the learners ended
    assert wait_for(lambda: not children(), 15)  # and were reaped
    shutil.rmtree(home)
    assert wait_for(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text(), 20)


def test_a_copied_home_gets_a_resident_of_its_own(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    """A state home copied with its run/ folder names the original's resident, which declines it: the hook
    answers one-shot and stays on as the copy's own resident."""
    hook("prompt_context", prompt("orig", tmp_path), env)
    pid = resident_pid(home)
    copy = tmp_path / "copy" / ".sophia"
    shutil.copytree(home, copy)
    assert key_file(copy).read_text() == key_file(home).read_text()
    cenv = dict(env, SOPHIA_HOME=str(copy), HOME=str(copy.parent))
    try:
        r = hook("prompt_context", prompt("copy", tmp_path), cenv)
        assert r.returncode == 0 and "advisory lock" in context(r.stdout)
        assert wait_for(lambda: key_file(copy).exists() and key_file(copy).read_text() != key_file(home).read_text(), 30)
        assert resident_pid(copy) != pid
        second = hook("prompt_context", prompt("copy2", tmp_path), no_python(cenv, tmp_path))
        assert "advisory lock" in context(second.stdout)  # answered by the copy's resident
    finally:
        stop(copy)
