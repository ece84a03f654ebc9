"""A full or read-only disk under SOPHIA_HOME: the CLI says what failed in one line, nothing already stored
is damaged, hooks still exit 0 with at most a one-line note.

Real faults: a 256 KB tmpfs mounted over SOPHIA_HOME inside a private mount namespace (``unshare -m``, so
the mount vanishes with the test), filled to ENOSPC, or remounted read-only (EROFS: root cannot write there,
unlike a chmod'ed directory). Skipped, with the reason, where mounting is impossible (not root, no unshare).
In-process, os-level failures are also injected into the library to check no half-written file or temp
file is ever left behind.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sophia import paths
from sophia.atomic import read_json, write_json_atomic
from sophia.episode_store import upsert_episode
from sophia.errors import StateWriteError
from sophia.state import init_tree

ROOT = Path(__file__).resolve().parents[1]
HOOKS = sorted(p for p in (ROOT / "hooks").glob("*.sh")) if (ROOT / "hooks").is_dir() else []


def _can_mount() -> str:
    if os.geteuid() != 0:
        return "needs root to mount a tmpfs"
    if not shutil.which("unshare") or not shutil.which("mount"):
        return "needs unshare(1) and mount(8)"
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d && rmdir $d"],
                       capture_output=True, text=True)
    return "" if r.returncode == 0 else f"cannot mount a tmpfs here: {r.stderr.strip()[:200]}"


SKIP = _can_mount()

# Runs inside the private mount namespace: mount, break the disk, run the CLI and the hooks, report JSON.
DRIVER = r"""
import json, os, subprocess, sys
mode, home, py, lib, hooks = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
env = dict(os.environ, SOPHIA_HOME=home, PYTHONPATH=lib)
def run(args, inp=None):
    r = subprocess.run(args, env=env, input=inp, capture_output=True, text=True, timeout=120)
    return {"rc": r.returncode, "out": r.stdout[-50000:], "err": r.stderr[-2000:]}
def s3(*a):
    return run([py, "-m", "sophia.cli.entry", *a])
os.makedirs(home, exist_ok=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,nr_inodes=400,mode=0700", "tmpfs", home], check=True)
res = {"init": s3("init")}
def snapshot():
    snap = {}
    for root, _d, files in os.walk(home):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                snap[os.path.relpath(p, home)] = fh.read()
    return snap
if mode == "full":
    os.unlink(os.path.join(home, "self_model.json"))  # init must write it again, on a full disk
    fd = os.open(os.path.join(home, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
else:
    subprocess.run(["mount", "-o", "remount,ro", home], check=True)
    res["status_ro_healthy"] = s3("status", "--json")
    subprocess.run(["mount", "-o", "remount,rw", home], check=True)
    with open(os.path.join(home, "self_model.json"), "w") as fh:
        fh.write("{ broken")
    subprocess.run(["mount", "-o", "remount,ro", home], check=True)
before = snapshot()
res["init_again"] = s3("init")
res["status"] = s3("status", "--json")
res["doctor_repair"] = s3("doctor", "--repair")
res["hooks"] = {}
payload = json.dumps({"session_id": "s-disk", "transcript_path": "/nonexistent.jsonl", "cwd": "/tmp",
                      "hook_event_name": "PostToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "ls -la"}, "tool_response": {"stdout": "ok"}})
for h in hooks:
    res["hooks"][os.path.basename(h)] = run(["bash", h], payload)
after = snapshot()
res["changed"] = sorted(k for k in before if k in after and before[k] != after[k] and not k.endswith(".lock"))
res["unparsable"] = []
for k, v in after.items():
    if k.endswith(".json"):
        try:
            json.loads(v)
        except ValueError:
            res["unparsable"].append(k)
res["tmp_left"] = [k for k in after if k.endswith(".tmp")]
print(json.dumps(res))
"""


def _run_driver(mode: str, tmp_path: Path) -> dict:  # type: ignore[type-arg]
    home = tmp_path / "mnt" / ".sophia"
    r = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", DRIVER, mode, str(home),
                        sys.executable, str(ROOT / "lib"), *map(str, HOOKS)],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, HOME=str(tmp_path), TMPDIR=str(tmp_path)))
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _one_line_failure(res: dict, what: str) -> None:  # type: ignore[type-arg]
    assert res["rc"] == 1, res
    assert "Traceback" not in res["err"] + res["out"], res["err"]
    lines = [ln for ln in res["err"].splitlines() if ln.strip()]
    assert 1 <= len(lines) <= 2 and lines[0].startswith("s3: error:"), res["err"]
    assert what in lines[0], res["err"]


def _hooks_quiet(res: dict) -> None:  # type: ignore[type-arg]
    for name, h in res["hooks"].items():
        assert h["rc"] == 0 or (name.startswith("guardian") and h["rc"] == 2), (name, h)
        assert "Traceback" not in h["err"], (name, h["err"])
        assert len([ln for ln in h["err"].splitlines() if ln.strip()]) <= 1, (name, h["err"])


@pytest.mark.skipif(bool(SKIP), reason=SKIP or "ok")
def test_full_disk(tmp_path: Path) -> None:
    res = _run_driver("full", tmp_path)
    assert res["init"]["rc"] == 0, res["init"]
    _one_line_failure(res["init_again"], "No space left on device")
    assert "self_model.json" in res["init_again"]["err"]
    # the other files are intact and still parse; no temp file is left behind
    assert res["changed"] == [] and res["unparsable"] == [] and res["tmp_left"] == [], res
    _hooks_quiet(res)


@pytest.mark.skipif(bool(SKIP), reason=SKIP or "ok")
def test_read_only_home(tmp_path: Path) -> None:
    res = _run_driver("ro", tmp_path)
    assert res["init"]["rc"] == 0, res["init"]
    assert res["status_ro_healthy"]["rc"] == 0, res["status_ro_healthy"]  # reading still works
    json.loads(res["status_ro_healthy"]["out"])
    _one_line_failure(res["status"], "self_model.json")  # the corrupt file is named
    _one_line_failure(res["doctor_repair"], "Read-only file system")
    assert res["changed"] == [] and res["unparsable"] == ["self_model.json"] and res["tmp_left"] == [], res
    _hooks_quiet(res)


# ---------------------------------------------------------------- in-process fault injection


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO])
@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_failed_write_leaves_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  err: int, where: str) -> None:
    target = tmp_path / "d" / "state.json"
    write_json_atomic(target, {"v": 1})

    def boom(*a: object, **k: object) -> None:
        raise OSError(err, os.strerror(err))

    with monkeypatch.context() as m, pytest.raises(StateWriteError) as ei:  # undo only this patch
        m.setattr(os, where, boom)
        write_json_atomic(target, {"v": 2, "big": "x" * 100_000})
    assert str(target) in str(ei.value) and os.strerror(err) in str(ei.value)
    assert read_json(target) == {"v": 1}
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]


def test_episode_upsert_on_full_disk_raises_typed_error(sophia_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init_tree()
    ep = {"id": "ep_full", "session_id": "s", "started_at": "2025-01-01T00:00:00Z",
          "ended_at": "2025-01-01T00:01:00Z"}
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        if len(data) > 64:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    with monkeypatch.context() as m, pytest.raises(StateWriteError, match="No space left"):
        m.setattr(os, "write", full)
        upsert_episode(ep)
    assert read_json(paths.episode_index_path())["entries"] == []
    assert not any(p.name.endswith(".tmp") for p in paths.episodes_dir().iterdir())
