"""The resident guardian analyzer: the PreToolUse analyzer kept loaded, answering the bash hook over
loopback TCP, so a flagged call costs a connect and a few reads instead of starting Python (~35 ms).

    python3 -I -S lib/sophia/guardian/resident.py [--home DIR] [--lib TEXT] [--idle S] [--check S]

Started detached by SessionStart and, when none answers, by the guardian hook (which then falls back
to ``run.py`` for that call). Standard library only, like ``run.py``.

- One per state home, its key file and lock in ``run/guardian/`` (:mod:`sophia.resident`, which the
  hook runner's resident shares).
- One request per connection, in one write: NUL-terminated fields, ``S3G1 <request secret>`` (wrong:
  the connection is closed, nothing answered), then (``=value``, or empty when unset) HOME, TMPDIR, PWD,
  CLAUDE_PROJECT_DIR, CLAUDE_PLUGIN_ROOT, SOPHIA_HOME, SOPHIA_GUARDIAN_TESTING,
  SOPHIA_GUARDIAN_SYNC_LOG, SOPHIA_GUARDIAN_TIMEOUT (the environment the analyzer reads), then the payload.
  The answer: ``<answer secret> <its byte count, 8 digits>\\n``, then exactly what ``run.py`` prints
  (``hook.answer``: the same decide/run code, the same time limit). The hook takes it only whole (that
  many bytes: this process did not die mid-answer) and with the answer secret (no other user's process on
  the port can forge it);
  it writes only once ``kill -0 <pid>`` says this process, of the same user, is alive, so the payload
  does not go to whoever took the port of a daemon that died.
- The deny/ask log is written by ``hook.write_log`` in this process, after the answer is sent (before
  it with SOPHIA_GUARDIAN_SYNC_LOG=1, as run.py does).
- Config: ``decide`` reads ``config.json`` on every call (a fraction of a millisecond), so a change
  applies to the next call. Code: when a loaded module of the kit changes or disappears, exits (the
  next hook call starts the new code).
- Exits when idle for ``--idle`` seconds (30 min), when the state home, the key file or this file is
  gone, or on SIGTERM; checked every ``--check`` seconds (5) while it waits, never a busy loop.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # started as a file (python -I -S .../resident.py): run the package's module
    import importlib

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    sys.exit(importlib.import_module("sophia.guardian.resident").entry())

from .. import resident as base  # noqa: E402

KIND = "guardian"
MAGIC = b"S3G1 "
FIELDS = ("HOME", "TMPDIR", "PWD", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "SOPHIA_HOME",
          "SOPHIA_GUARDIAN_TESTING", "SOPHIA_GUARDIAN_SYNC_LOG", "SOPHIA_GUARDIAN_TIMEOUT")
WARM = ("ls -la | grep x 2>&1", "rm -rf build/ && git push --force origin main", "curl -s \"$URL\" | jq '.a'",
        "find . -name '*.py' -exec sed -i 's/a/b/' {} +", "python -c 'import os; os.remove(\"x\")'")

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket


def state_dir(home: str) -> str:
    return base.state_dir(home, KIND)


class Resident(base.Resident):
    magic = MAGIC

    def __init__(self, home: str, lib: str, idle: float, check: float) -> None:
        super().__init__(home, KIND, lib, idle, check)

    def one(self, conn: socket.socket) -> None:
        """One request: the secret, the fields and payload, the answer, then the log."""
        from .. import paths
        from . import hook

        parts = self.open_request(conn, len(FIELDS) + 1)
        if parts is None:
            return
        env = {k: v[1:].decode("utf-8", "surrogateescape") for k, v in zip(FIELDS, parts, strict=False) if v[:1] == b"="}
        env["SOPHIA_HOME"] = paths.home_str(env)  # as hook.main resolves it
        sync = env.get("SOPHIA_GUARDIAN_SYNC_LOG") == "1"
        out = hook.answer(parts[-1], env)
        if sync and hook.PENDING_LOG:  # SOPHIA_GUARDIAN_SYNC_LOG: the log and its audit before the answer
            hook.write_log(detach=False)
        try:
            body = out.encode("utf-8")
            conn.sendall(head(self.ans, body) + body)
        except OSError:
            pass
        if hook.PENDING_LOG:
            conn.close()
            hook.write_log(detach=False, resident=True)


def head(secret: bytes, body: bytes) -> bytes:
    """What comes before an answer: the answer secret, its byte count in 8 digits, a newline (fixed width:
    the hook reads it, then the answer, each with one ``read -N``)."""
    return b"%s %08d\n" % (secret, len(body))


def _warm(home: str) -> None:
    """Import the analyzer and compile its lazy patterns before the first real call (no log)."""
    from .hook import decide

    for cmd in WARM:
        decide({"tool_name": "Bash", "tool_input": {"command": cmd}, "cwd": "/home/dev/p"},
               {"HOME": "/home/dev", "SOPHIA_HOME": home})


def main(argv: list[str]) -> int:
    from .. import paths

    a = base.args(argv)
    home = a.get("home") or paths.home_str()
    lib = a.get("lib") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.isdir(home):
        return 0
    base.detach()
    if base.take_lock(home, KIND) is None:
        return 0  # one is running already
    r = Resident(home, lib, float(a.get("idle") or 1800), float(a.get("check") or 5))
    base.run(r, lambda: _warm(home), os.path.abspath(__file__))
    return 0


def entry() -> int:
    try:
        return main(sys.argv[1:])
    except BaseException:  # noqa: BLE001 - a daemon of convenience: any failure just ends it, quietly
        return 0
