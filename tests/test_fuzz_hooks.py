"""Every hook script, fed garbage: empty input, non-JSON, wrong types, missing fields, 10 MB payloads,
binary, deep nesting, unknown events, hostile paths and broken transcripts (hypothesis + fixed cases).

Each run must exit 0 (the guardian: 0 or 2, its designed decision), print no traceback and at most one
line on stderr (the guardian may explain a block), and write nothing outside SOPHIA_HOME: HOME and
SOPHIA_HOME are temp dirs, TMPDIR points at an empty dir that must stay empty, and HOME outside
.sophia must not change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
HOOKS = sorted((ROOT / "hooks").glob("*.sh"))
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
          "SessionEnd", "PreCompact", "PostCompact", "SubagentStop", "Notification"]
GUARDIAN = "guardian_tier1.sh"
# The events each hook is registered for (hooks/hooks.json); other events are still fed, less often.
HOOK_EVENTS = {"guardian_tier1": ["PreToolUse"], "log_action": ["PostToolUse", "PostToolUseFailure"],
               "session_end": ["Stop", "SessionEnd"], "session_start": ["SessionStart"],
               "prompt_context": ["UserPromptSubmit"], "compact": ["PreCompact", "PostCompact"]}



def _tree_digest(root: Path, skip: Path | None = None) -> dict[str, str]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        if skip is not None and Path(dirpath) == skip.parent:
            dirs[:] = [d for d in dirs if Path(dirpath) / d != skip]
        for f in files:
            p = Path(dirpath) / f
            if skip is not None and skip in p.parents:
                continue
            try:
                out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
            except OSError:
                out[str(p.relative_to(root))] = "?"
    return out


class Sandbox:
    def __init__(self, base: Path) -> None:
        self.home = base / "h"
        self.sophia = self.home / ".sophia"
        self.tmp = base / "tmpdir"
        self.cwd = base / "proj"
        for d in (self.home, self.tmp, self.cwd):
            d.mkdir(parents=True, exist_ok=True)
        (self.home / "notes.txt").write_text("user file")
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                    "SOPHIA_HOME": str(self.sophia), "TMPDIR": str(self.tmp), "LANG": "C.UTF-8",
                    "CLAUDE_PROJECT_DIR": str(self.cwd)}
        if os.environ.get("SOPHIA_TEST_VENV"):
            self.env["SOPHIA_TEST_VENV"] = os.environ["SOPHIA_TEST_VENV"]
        self.before = _tree_digest(self.home, skip=self.sophia)

    def run(self, hook: Path, data: bytes, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["bash", str(hook)], input=data, env=self.env, capture_output=True, timeout=timeout,
                              cwd=self.cwd)

    def check(self, hook: Path, r: subprocess.CompletedProcess[bytes], what: str) -> None:
        err = r.stderr.decode("utf-8", "replace")
        allowed = (0, 2) if hook.name == GUARDIAN else (0,)
        assert r.returncode in allowed, f"{hook.name} exit {r.returncode} on {what}: {err[-500:]}"
        assert "Traceback" not in err and "Traceback" not in r.stdout.decode("utf-8", "replace"), \
            f"{hook.name} traceback on {what}: {err[-1500:]}"
        if hook.name != GUARDIAN or r.returncode == 0:
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert len(lines) <= 1, f"{hook.name} printed {len(lines)} stderr lines on {what}: {err[-800:]}"
        assert list(self.tmp.iterdir()) == [], f"{hook.name} wrote to TMPDIR on {what}: {list(self.tmp.iterdir())}"
        after = _tree_digest(self.home, skip=self.sophia)
        assert after == self.before, f"{hook.name} wrote outside SOPHIA_HOME on {what}: " \
            f"{sorted(set(after.items()) ^ set(self.before.items()))[:5]}"


def _payload(event: str, sb: Sandbox, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"session_id": "fuzz-session", "transcript_path": str(sb.cwd / "t.jsonl"),
                            "cwd": str(sb.cwd), "hook_event_name": event, "permission_mode": "default"}
    base.update(extra)
    return base


def _fixed_cases(sb: Sandbox, hook: Path) -> list[tuple[str, bytes]]:
    own = HOOK_EVENTS.get(hook.stem, EVENTS)
    ev = own[0]
    deep_json = "[" * 100_000 + "]" * 100_000
    big = "y" * (10 * 1024 * 1024)
    transcript = sb.cwd / "t.jsonl"
    transcript.write_bytes(b'{"type": "user", "message": {"role": "user", "content": "hi"}}\n'
                           b'{"type": "assistant", "message": {"role": "assis\n'  # truncated
                           b'\x00\xff\xfe binary line\n'
                           b'{"type": "future-kind", "payload": [1, 2, 3]}\n'
                           b'[]\nnull\n"just a string"\n{"type": "user", "message": null}\n'
                           b'{"type": "user", "message": {"content": [{"type": "tool_result", "content": 5}]}}\n')
    tool = {"tool_name": "Bash", "tool_input": {"command": "ls -la"}, "tool_use_id": "toolu_1"}
    if ev.startswith("Post"):
        tool["tool_response"] = {"stdout": "ok", "stderr": ""}
    big_fields: dict[str, Any] = {
        "UserPromptSubmit": {"prompt": big}, "PreToolUse": {**tool, "tool_input": {"command": "echo " + big}},
        "PostToolUse": {**tool, "tool_response": {"stdout": big, "stderr": ""}},
        "Stop": {"stop_hook_active": False, "last_assistant_message": big},
        "SessionStart": {"source": "startup", "extra": big},
    }
    cases = [
        ("empty input", b""),
        ("whitespace", b"  \n\t "),
        ("not JSON", b"hello, i am not json"),
        ("JSON array", b"[1, 2, 3]"),
        ("JSON null", b"null"),
        ("binary", bytes(range(256)) * 64),
        ("invalid UTF-8 in JSON", f'{{"hook_event_name": "{ev}", "tool_name": "\xff\xfe", "prompt": "\xc3("}}'.encode(
            "latin-1")),
        ("deeply nested JSON", deep_json.encode()),
        ("unknown event", json.dumps(_payload("MadeUpEvent", sb)).encode()),
        ("missing every field", b"{}"),
        ("only the event name", json.dumps({"hook_event_name": ev}).encode()),
        ("wrong types", json.dumps({"session_id": 12, "hook_event_name": ev, "tool_name": None,
                                    "tool_input": "rm -rf /", "tool_response": 3.5, "cwd": False,
                                    "transcript_path": {"a": 1}, "prompt": ["x"], "source": 7,
                                    "stop_hook_active": "yes", "reason": None}).encode()),
        ("path traversal session id", json.dumps(_payload(ev, sb, session_id="../../../outside", **tool)).encode()),
        ("session id with slash and NUL", json.dumps(_payload(ev, sb, session_id="a/b\u0000c", **tool)).encode()),
        ("transcript is a directory", json.dumps(_payload(ev, sb, transcript_path=str(sb.cwd), **tool)).encode()),
        ("transcript missing", json.dumps(_payload(ev, sb, transcript_path="/nonexistent/x.jsonl", **tool)).encode()),
        ("broken transcript", json.dumps(_payload(ev, sb, stop_hook_active=False, last_assistant_message="done",
                                                  reason="other", **tool)).encode()),
        ("deep tool_response", json.dumps(_payload(ev, sb, **{**tool, "tool_response": {
            "nested": json.loads("[" * 500 + "]" * 500)}})).encode()),
        ("10 MB payload", json.dumps(_payload(ev, sb, **big_fields.get(ev, {"reason": "other", "extra": big}))).encode()),
    ]
    for other in own[1:]:
        cases.append((f"{other} with only its name", json.dumps({"hook_event_name": other}).encode()))
    return cases


@pytest.mark.parametrize("hook", HOOKS, ids=[h.name for h in HOOKS])
def test_hook_survives_fixed_garbage(hook: Path, tmp_path: Path) -> None:
    sb = Sandbox(tmp_path)
    for what, data in _fixed_cases(sb, hook):
        r = sb.run(hook, data)
        sb.check(hook, r, what)


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=60)
    return st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c,
                                                                                        max_size=4), max_leaves=12)


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["event", "event", "event", "raw"]))
    if kind == "raw":
        return draw(st.binary(max_size=2000))
    keys = ["session_id", "transcript_path", "cwd", "hook_event_name", "tool_name", "tool_input", "tool_response",
            "prompt", "source", "reason", "stop_hook_active", "last_assistant_message", "tool_use_id", "error"]
    obj: dict[str, Any] = {}
    obj["hook_event_name"] = draw(st.sampled_from(EVENTS) | st.text(max_size=20))
    if draw(st.booleans()):
        obj["hook_event_name"] = draw(st.sampled_from(_OWN))
    for k in draw(st.lists(st.sampled_from(keys), max_size=len(keys), unique=True)):
        if k == "tool_name":
            obj[k] = draw(st.sampled_from(["Bash", "Write", "Edit", "MultiEdit", "Read", "NotebookEdit"]) | _json_values())
        elif k == "tool_input":
            obj[k] = draw(st.fixed_dictionaries({}, optional={
                "command": st.text(max_size=200) | _json_values(), "file_path": st.text(max_size=80) | _json_values(),
                "content": st.text(max_size=200), "old_string": st.text(max_size=40),
                "new_string": st.text(max_size=40)}) | _json_values())
        elif k in ("session_id", "transcript_path", "cwd"):
            obj[k] = draw(st.sampled_from(["../..", "/", "", "a/../../b", "s1", "/dev/null", "~", ".."])
                          | st.text(max_size=40) | _json_values())
        else:
            obj[k] = draw(_json_values())
    return json.dumps(obj).encode()


_OWN = [e for evs in HOOK_EVENTS.values() for e in evs]


@pytest.mark.parametrize("hook", HOOKS, ids=[h.name for h in HOOKS])
def test_hook_survives_random_payloads(hook: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    sb = Sandbox(tmp_path_factory.mktemp(hook.stem))

    @settings(max_examples=int(os.environ.get("SOPHIA_FUZZ_EXAMPLES", "15")), deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck), database=None)
    @given(payloads())
    def run(data: bytes) -> None:
        r = sb.run(hook, data)
        sb.check(hook, r, f"payload {data[:300]!r}")

    run()


_WRITES_TMP = re.compile(r"""(open\(|Path\(|dir=|mkdir\s+(-p\s+)?|>>?\s*|tee\s+(-a\s+)?|mktemp\s+(-\w+\s+)*"""
                         r"""|(cp|mv|touch|install)\s+(\S+\s+)*)["']?/(var/)?tmp\b""")


def test_hook_code_never_writes_to_shared_tmp() -> None:
    """Nothing is written to shared /tmp: no hook or hook-side module opens, creates or redirects into it
    (TMPDIR is honoured; the dynamic checks above run with TMPDIR pointed at a dir that must stay empty).
    Mentions of /tmp as data (the guardian classifying a command's targets) are fine."""
    offenders = []
    files = list((ROOT / "hooks").rglob("*.sh")) + list((ROOT / "lib" / "sophia").rglob("*.py"))
    for p in files:
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if _WRITES_TMP.search(line) and "noqa: tmp" not in line:
                offenders.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert offenders == [], "\n".join(offenders)


def test_every_registered_hook_is_fuzzed() -> None:
    """The fuzz set is the hooks folder: each hook Claude Code runs is in it, so none escapes the fuzzing."""
    assert {h.stem for h in HOOKS} >= set(HOOK_EVENTS), sorted(h.stem for h in HOOKS)


def test_a_hook_that_spins_stops_itself_and_exits_0(tmp_path: Path) -> None:
    """A bug that loops forever in a hook's main (as `context.squeeze` once did) ends at the hook's own
    time limit with one line, exit 0, instead of spinning on after Claude Code gave up on it."""
    import subprocess
    import sys
    import time

    code = "from sophia.hooks.runtime import run\ndef spin():\n    while True:\n        pass\nrun('spin', spin)"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "SOPHIA_HOOK_TIME_LIMIT": "0.5",
           "SOPHIA_HOME": str(tmp_path / ".sophia")}
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and time.monotonic() - t0 < 10
    assert r.stderr.strip().splitlines() == ["sophia spin: TimeoutError: ran past its 0.5 s time limit"], r.stderr
