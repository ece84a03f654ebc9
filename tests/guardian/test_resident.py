"""The resident analyzer (lib/sophia/guardian/resident.py) through the real bash hook and real daemons.

A hook run that must be answered by the daemon gets an environment with no Python at all (PATH
without one, no SOPHIA_PYTHON): a fall back to the one-shot analyzer then answers "python3 was not
found", so these tests cannot pass on the fallback by accident.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import HOOK, PROJECT, ROOT, payload, read_log, run_hook

RESIDENT = ROOT / "lib" / "sophia" / "guardian" / "resident.py"
LIB_AS_HOOK_NAMES_IT = f"{HOOK.parent}/../lib"  # hooks/lib/env.sh: SOPHIA_LIB=$SOPHIA_HOOK_DIR/../lib
RISKY = payload(command="rm -rf ~")
CASES = [Path(__file__).with_name(n) for n in ("corpus.jsonl", "holdout.jsonl", "holdout_blind.jsonl")]


def key_file(home: Path) -> Path:
    return home / "run" / "guardian" / "resident"


def start(home: Path, *args: str, resident: Path = RESIDENT, lib: str = LIB_AS_HOOK_NAMES_IT,
          wait: bool = True) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([os.path.realpath(sys.executable), "-I", "-S", str(resident), "--home", str(home),
                             "--lib", lib, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while wait and not key_file(home).exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    proc.wait(10)


def no_python(env: dict[str, str], tmp: Path) -> dict[str, str]:
    """The hook's environment with no Python to fall back to."""
    bindir = tmp / "bash-only-bin"
    if not bindir.exists():
        bindir.mkdir()
        bash = shutil.which("bash")
        assert bash
        (bindir / "bash").symlink_to(bash)
    out = {k: v for k, v in env.items() if k != "SOPHIA_PYTHON"}
    out["PATH"] = str(bindir)
    return out


def exited(proc: subprocess.Popen[bytes], within: float) -> bool:
    try:
        proc.wait(within)
    except subprocess.TimeoutExpired:
        return False
    return True


@pytest.fixture
def daemon(genv: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    proc = start(Path(genv["SOPHIA_HOME"]))
    assert key_file(Path(genv["SOPHIA_HOME"])).exists()
    yield proc
    stop(proc)


def _in_process(data: dict, env: dict[str, str]) -> str:
    """What run.py prints for this payload and environment (hook.answer, as run.py's main calls it)."""
    from sophia.guardian import hook

    e = dict(env, PWD=os.getcwd())
    out = hook.answer(json.dumps(data).encode(), e)
    hook.PENDING_LOG.clear()
    return out


def test_corpora_answered_by_the_daemon_exactly_as_by_run_py(genv: dict[str, str], daemon: object,
                                                            tmp_path: Path) -> None:
    env = no_python(genv, tmp_path)
    seen = {"allow": 0, "ask": 0, "deny": 0}
    for path in CASES:
        for line in path.read_text().splitlines():
            c = json.loads(line)
            data = payload(c["tool_name"], c["tool_input"], c.get("cwd") or PROJECT)
            res = run_hook(data, env)
            assert res.rc == 0 and res.stderr == ""
            assert res.stdout.rstrip("\n") == _in_process(data, env), c
            seen[res.decision] += 1
    assert min(seen.values()) > 50  # every decision was exercised
    assert "python3 was not found" not in (Path(genv["SOPHIA_HOME"]) / "logs" / "guardian_blocks.jsonl").read_text()


def test_key_file_private_and_one_daemon_per_home(genv: dict[str, str], daemon: subprocess.Popen[bytes]) -> None:
    home = Path(genv["SOPHIA_HOME"])
    assert stat.S_IMODE(key_file(home).stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file(home).parent.stat().st_mode) == 0o700
    port, req, ans, lib, pid = key_file(home).read_text().splitlines()
    assert int(pid) == daemon.pid and lib == LIB_AS_HOOK_NAMES_IT and len(req) == len(ans) == 64 and req != ans
    second = start(home, wait=False)
    assert exited(second, 20) and second.returncode == 0
    assert key_file(home).read_text().splitlines()[0] == port and daemon.poll() is None


def test_deny_and_ask_logged_by_the_daemon_like_run_py(genv: dict[str, str], daemon: object, tmp_path: Path) -> None:
    env = no_python(genv, tmp_path)
    res = run_hook(RISKY, env)
    assert res.decision == "deny"
    log = Path(genv["SOPHIA_HOME"]) / "logs" / "guardian_blocks.jsonl"
    rec = json.loads(read_log(log)[0])
    assert rec["decision"] == "deny" and rec["tool"] == "Bash" and rec["session_id"] == "sess-1"
    sync = run_hook(payload(command="git push --force origin main"), dict(env, SOPHIA_GUARDIAN_SYNC_LOG="1"))
    assert sync.decision in ("ask", "deny") and len(log.read_text().splitlines()) == 2  # written before the answer


class FakeResident:
    """A listener on a port named by a key file the test writes: ``answer(request) -> bytes``."""

    def __init__(self, home: Path, answer: object, secret: str = "r" * 64) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.answer = answer
        self.requests: list[bytes] = []
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
                conn.settimeout(5)
                data = b""
                try:
                    while data.count(b"\0") < 11:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    self.requests.append(data)
                    reply = self.answer(data)  # type: ignore[operator]
                    if reply is None:
                        time.sleep(4)
                    else:
                        conn.sendall(reply)
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


ALLOW_JSON = b""
DENY_JSON = b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", ' \
            b'"permissionDecisionReason": "fake"}}'


def answer(secret: bytes, body: bytes) -> bytes:
    return b"%s %08d\n%s" % (secret, len(body), body)


@pytest.mark.parametrize("reply", [
    lambda req: answer(b"x" * 64, ALLOW_JSON),  # another secret: an impostor saying allow
    lambda req: b" 00000000\n" + ALLOW_JSON,  # no secret: an impostor saying allow
    lambda req: b"",  # closes at once
    lambda req: answer(b"r" * 64, DENY_JSON)[:100],  # the right secret, cut short (died mid-answer)
    lambda req: b"r" * 64 + b" 0000001\n" + DENY_JSON,  # a head of the wrong width
    lambda req: b"r" * 64 + b" 000000xy\n" + DENY_JSON,  # a count that is no number
    lambda req: answer(b"r" * 64, b"not json"),  # garbage
    lambda req: None,  # never answers (the hook waits 2 s)
], ids=["wrong-secret", "no-secret", "closed", "cut-short", "narrow-head", "bad-count", "garbage", "silent"])
def test_anything_but_a_whole_answer_of_the_resident_falls_back(genv: dict[str, str], reply: object) -> None:
    fake = FakeResident(Path(genv["SOPHIA_HOME"]), reply)
    try:
        t = time.monotonic()
        res = run_hook(RISKY, genv)
        assert res.rc == 0 and res.stderr == "" and res.decision == "deny"
        assert "fake" not in res.reason and "rm -rf" in res.reason  # the one-shot analyzer's own answer
        assert time.monotonic() - t < 15
        assert fake.requests and fake.requests[0].startswith(b"S3G1 " + b"q" * 64 + b"\0")
    finally:
        fake.close()


def test_no_payload_for_a_port_whose_daemon_died(genv: dict[str, str], tmp_path: Path) -> None:
    """A key file left by a killed daemon names its pid: gone, so nothing is sent to whoever took the port."""
    home = Path(genv["SOPHIA_HOME"])
    fake = FakeResident(home, lambda req: b"")
    dead = subprocess.Popen(["true"])
    dead.wait()
    text = key_file(home).read_text().splitlines()
    key_file(home).write_text("\n".join([*text[:4], str(dead.pid)]) + "\n")
    try:
        res = run_hook(RISKY, genv)
        assert res.decision == "deny" and not fake.requests
    finally:
        fake.close()


def test_daemon_killed_mid_request_falls_back(genv: dict[str, str], daemon: subprocess.Popen[bytes],
                                             tmp_path: Path) -> None:
    os.kill(daemon.pid, signal.SIGSTOP)  # it accepts (the kernel does) but cannot answer
    try:
        t = time.monotonic()
        (tmp_path / "payload.json").write_text(json.dumps(RISKY))
        with (tmp_path / "payload.json").open("rb") as stdin:
            hook = subprocess.Popen(["bash", str(HOOK)], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=genv)
        time.sleep(0.5)
        os.kill(daemon.pid, signal.SIGKILL)
        out, err = hook.communicate(timeout=30)
    finally:
        os.kill(daemon.pid, signal.SIGKILL)
        daemon.wait(10)
    assert hook.returncode == 0 and err == b""
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert time.monotonic() - t < 1.9 + 0.5 + 10  # the reset ends the wait at once; the fallback answers


def test_config_change_applies_to_the_next_call(genv: dict[str, str], daemon: object, tmp_path: Path) -> None:
    env = no_python(genv, tmp_path)
    cmd = payload(command="make deploy-docs | tee out.txt")
    assert run_hook(cmd, env).decision == "allow"
    cfg = Path(genv["SOPHIA_HOME"]) / "config.json"
    cfg.write_text(json.dumps({"guardian": {"deny": ["deploy-docs"]}}))
    res = run_hook(cmd, env)
    assert res.decision == "deny" and "guardian.deny" in res.reason
    cfg.write_text(json.dumps({"guardian": {"mode": "off"}}))
    assert run_hook(RISKY, env).decision == "allow"


def test_exits_when_idle(genv: dict[str, str]) -> None:
    home = Path(genv["SOPHIA_HOME"])
    proc = start(home, "--idle", "1", "--check", "0.2")
    try:
        assert key_file(home).exists()
        assert exited(proc, 15)
        assert not key_file(home).exists()  # it takes its key file with it
    finally:
        stop(proc)


def test_exits_when_its_home_is_deleted(tmp_path: Path) -> None:
    home = tmp_path / "gone" / ".sophia"
    home.mkdir(parents=True)
    proc = start(home, "--check", "0.2")
    try:
        assert proc.poll() is None and key_file(home).exists()
        shutil.rmtree(tmp_path / "gone")
        assert exited(proc, 15)
    finally:
        stop(proc)


def test_exits_when_its_own_file_or_key_file_goes(genv: dict[str, str], tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    shutil.copytree(ROOT / "lib" / "sophia", kit / "lib" / "sophia", ignore=shutil.ignore_patterns("__pycache__"))
    home = Path(genv["SOPHIA_HOME"])
    copy = kit / "lib" / "sophia" / "guardian" / "resident.py"
    proc = start(home, "--check", "0.2", resident=copy)
    try:
        assert proc.poll() is None and key_file(home).exists()
        copy.unlink()
        assert exited(proc, 15)
    finally:
        stop(proc)
    proc = start(home, "--check", "0.2")
    try:
        key_file(home).unlink()
        assert exited(proc, 15)
    finally:
        stop(proc)


def test_hook_starts_one_when_none_answers_and_uses_it(genv: dict[str, str], tmp_path: Path) -> None:
    home = Path(genv["SOPHIA_HOME"])
    assert run_hook(RISKY, genv).decision == "deny"  # the one-shot analyzer, and a daemon started
    deadline = time.monotonic() + 30
    while not key_file(home).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(key_file(home).read_text().splitlines()[4])
    try:
        assert run_hook(RISKY, no_python(genv, tmp_path)).decision == "deny"
    finally:
        os.kill(pid, signal.SIGTERM)


def test_session_start_starts_one(genv: dict[str, str]) -> None:
    home = Path(genv["SOPHIA_HOME"])
    data = json.dumps({"session_id": "s", "cwd": PROJECT, "hook_event_name": "SessionStart", "source": "startup"})
    subprocess.run(["bash", str(ROOT / "hooks" / "session_start.sh")], input=data.encode(), env=genv,
                   capture_output=True, timeout=60, check=True)
    deadline = time.monotonic() + 30
    while not key_file(home).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(key_file(home).read_text().splitlines()[4])
    os.kill(pid, signal.SIGTERM)


def test_switched_off_or_faulted_hook_never_asks_it(genv: dict[str, str]) -> None:
    home = Path(genv["SOPHIA_HOME"])
    fake = FakeResident(home, lambda req: answer(b"r" * 64, ALLOW_JSON))  # an answer the hook would take
    try:
        assert run_hook(RISKY, genv).decision == "allow" and len(fake.requests) == 1  # (it is reached)
        assert run_hook(RISKY, dict(genv, SOPHIA_GUARDIAN_RESIDENT="0")).decision == "deny"
        faulted = run_hook(RISKY, dict(genv, SOPHIA_GUARDIAN_TESTING="1", SOPHIA_GUARDIAN_FAULT="crash"))
        assert faulted.decision == "ask" and "RuntimeError" in faulted.reason
        assert len(fake.requests) == 1
    finally:
        fake.close()


def test_a_started_daemon_keeps_no_descriptor_of_its_starter(genv: dict[str, str]) -> None:
    """A pipe the hook inherited (a test runner's, a hook runner's) must reach its end when the hook
    exits, although the daemon it started lives on."""
    home = Path(genv["SOPHIA_HOME"])
    r, w = os.pipe()
    try:
        subprocess.run(["bash", str(HOOK)], input=json.dumps(RISKY).encode(), env=genv, capture_output=True,
                       pass_fds=(w,), timeout=60, check=True)
        os.close(w)
        w = -1
        deadline = time.monotonic() + 30
        while not key_file(home).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(key_file(home).read_text().splitlines()[4])
        import select

        ready, _, _ = select.select([r], [], [], 10)
        assert ready and os.read(r, 1) == b""  # the end: no one holds the write side
        os.kill(pid, signal.SIGTERM)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
