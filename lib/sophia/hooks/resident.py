"""The resident hook runner: the Python hooks (SessionStart, UserPromptSubmit, Stop, SessionEnd, PreCompact,
PostCompact) answered by a process that already has their modules loaded, reached by the bash hook over
loopback TCP (``sophia_hook`` in ``hooks/lib/common.sh``, bash builtins only): a hook then costs bash, one
connection and its own work, instead of starting Python and importing its modules (40-100 ms a hook, more on
a busy machine).

How one comes to run: a hook that finds none runs its module one-shot (``launch.py NAME --serve LIB``);
once that has answered, the process forks (:func:`stay`): it returns the hook's exit, and the child detaches
(its own session, stdio on /dev/null, no other descriptor), takes ``run/hooks/lock`` (else one runs: it
exits), imports the other hooks' modules and serves. No second interpreter starts.

The key file and lock (``run/hooks/``), the secrets, the checks on the hook's side and when it exits (30
minutes idle, its home, key file or code changed or gone, SIGTERM) are the residents' own
(:mod:`sophia.resident`, shared with the guardian's).

A request, after ``S3H1 <request secret>``: the hook's name, its working folder, the number of environment
entries, the entries (``NAME=value``: every variable the bash hook exports, so the module sees the
environment a one-shot run would), the payload. For the request the process takes that environment and
folder, its stdin is the payload and its stdout and stderr are captured; the module's ``cli()`` runs as in a
one-shot run (the same time limit, the same one line on failure). The answer: ``<answer secret> <exit
code> <stdout bytes> <stderr bytes>\\n`` in fixed widths (:func:`head`), stdout, stderr. It declines (exit
code ``---``: the hook then runs one-shot) a hook it does not run, or another state home, folder or loader environment than its own.
Requests are served one at a time; what a hook put off until its answer is out (``runtime.later``:
SessionEnd's fsyncs, starting its learners) is done right after the answer is sent, in the request's
environment; the detached children the hooks start are reaped when they end (checked after each request
and every few seconds).
"""

from __future__ import annotations

import contextlib
import os
import sys

from .. import resident as base

KIND = "hooks"
MAGIC = b"S3H1 "
IDLE_S = 1800.0
CHECK_S = 5.0
MAX_ENV = 4096
# what the loader reads at process start: a request that sets these differently runs one-shot
LOADER = ("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT")

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Iterator
    from typing import Any


def hook_names() -> tuple[str, ...]:
    from .launch import HOOKS

    return HOOKS


class HookResident(base.Resident):
    magic = MAGIC

    def __init__(self, home: str, lib: str, idle: float = IDLE_S, check: float = CHECK_S) -> None:
        super().__init__(home, KIND, lib, idle, check)
        self.loader = {k: os.environ.get(k) for k in LOADER}

    def one(self, conn: socket.socket) -> None:
        req = read_request(conn, self.magic + self.req)
        if req is None:
            return
        name, pwd, env, payload = req
        why = self.declined(name, pwd, env)
        work: list[Any] = []
        if why:
            code, out, err = None, b"", why.encode()
        else:
            code, out, err, work = answer(name, pwd, env, payload)
        try:
            conn.sendall(head(self.ans, code, out, err) + out + err)
        except OSError:
            pass
        if work:  # what the hook put off until its answer was out (runtime.later), in its environment
            conn.close()
            from . import runtime

            with _in_request(env, pwd, strict=False):
                runtime.run_later(work, name)

    def tick(self) -> None:
        reap()

    def declined(self, name: str, pwd: str, env: dict[str, str]) -> str:
        """Why this request must run one-shot ('' when this process runs it)."""
        from .. import paths

        if name not in hook_names():
            return f"no hook {name!r}"
        if os.path.realpath(paths.home_str(env)) != os.path.realpath(self.home):
            return "another state home"
        if any(env.get(k) != v for k, v in self.loader.items()):
            return "another loader environment"
        if not pwd.startswith("/") or not os.path.isdir(pwd):
            return "no working folder"
        return ""


def head(secret: bytes, code: int | None, out: bytes, err: bytes) -> bytes:
    """What comes before an answer, fixed width (the hook reads it with one ``read -N``): the answer secret,
    the exit code in 3 digits (``---``: declined), the byte counts of stdout and stderr in 8 digits each."""
    return b"%s %s %08d %08d\n" % (secret, b"---" if code is None else b"%03d" % (code % 256), len(out), len(err))


def read_request(conn: socket.socket, secret: bytes) -> tuple[str, str, dict[str, str], bytes] | None:
    """(name, folder, environment, payload) of one request, or None (a wrong secret, a cut request)."""
    import hmac

    conn.settimeout(base.IO_TIMEOUT_S)
    chunks: list[bytes] = []
    size = nuls = 0
    need, count = 4, -1
    while nuls < need:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return None
        chunks.append(chunk)
        size += len(chunk)
        nuls += chunk.count(b"\0")
        if size > base.MAX_REQUEST:
            return None
        if count < 0 and nuls >= 4:
            head = b"".join(chunks).split(b"\0", 4)
            if not hmac.compare_digest(head[0], secret) or not head[3].isdigit() or int(head[3]) > MAX_ENV:
                return None
            count = int(head[3])
            need = 4 + count + 1
    fields = b"".join(chunks).split(b"\0")
    text = [f.decode("utf-8", "surrogateescape") for f in fields[:4 + count]]
    env = dict(e.split("=", 1) for e in text[4:] if "=" in e)
    return text[1], text[2], env, fields[4 + count]


def answer(name: str, pwd: str, env: dict[str, str], payload: bytes) -> tuple[int, bytes, bytes, list[Any]]:
    """Run hook ``name``'s ``cli()`` as a one-shot run would, in ``env`` and ``pwd`` on ``payload``:
    (exit code, stdout, stderr, what it put off until its answer is out: ``runtime.later``). The
    process's own environment, folder and streams come back after."""
    import io
    import signal

    from . import runtime

    saved = (sys.stdin, sys.stdout, sys.stderr, sys.argv)
    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(io.BytesIO(payload), encoding="utf-8"),
               io.TextIOWrapper(out, encoding="utf-8", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True))
    code = 0
    with runtime.deferred() as work, _in_request(env, pwd):
        try:
            sys.stdin, sys.stdout, sys.stderr = streams
            sys.argv = [os.path.join(os.path.dirname(__file__), "launch.py"), name]
            code = _run_cli(name)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)  # the hook's time limit (runtime.run) ends with it
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
    for s in streams:
        s.flush()
    return code, out.getvalue(), err.getvalue(), list(work)


@contextlib.contextmanager
def _in_request(env: dict[str, str], pwd: str, strict: bool = True) -> Iterator[None]:
    """The request's environment and folder (``strict=False``: the root when its folder is gone), then the
    process's own again."""
    saved_env = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        try:
            os.chdir(pwd)
        except OSError:
            if strict:
                raise
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir("/")


def _run_cli(name: str) -> int:
    import importlib

    try:
        importlib.import_module(f"sophia.hooks.{name}").cli()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - cli() catches everything; this is a last resort
        sys.stderr.write(f"sophia {name}: {type(exc).__name__}: {exc}\n"[:400])
    return 0


def reap() -> None:
    """Collect the detached children the hooks started (the after-session learners, a refresh) that have
    exited: a one-shot hook's exit left them to init; this process lives on."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def warm() -> None:
    """Import every hook's modules, and build what they compile lazily, before the first request."""
    import importlib

    for name in hook_names():
        importlib.import_module(f"sophia.hooks.{name}")
    from ..index import db, search, store  # noqa: F401 - the prompt hook's and Stop's recall index
    from ..redact import redact
    from . import outcome

    redact("export API_TOKEN=abc123 and https://u:p@example.com")
    outcome.judge_outcome([], "All tests pass: done.", {})


def stay(name: str, lib: str) -> None:
    """After a one-shot run of hook ``name``: fork; this process goes on to exit with the hook's code, the
    child becomes the resident of this state home (or exits at once when one runs). Never raises."""
    from .. import paths

    try:
        sys.stdout.flush()
        sys.stderr.flush()
        home = paths.home_str()
        if not os.path.isdir(home) or os.fork() != 0:
            return
    except Exception:  # noqa: BLE001 - the hook has answered; staying on is a convenience
        return
    code = 0
    try:
        serve(home, lib)
    except BaseException:  # noqa: BLE001 - a daemon of convenience: any failure just ends it, quietly
        code = 0
    os._exit(code)


def serve(home: str, lib: str, idle: float = IDLE_S, check: float = CHECK_S,
          ready: Callable[[], None] | None = None) -> None:
    """Detach, take the lock (or return: one runs), warm up and serve until a reason to stop."""
    base.detach()
    os.umask(0o077)
    os.chdir("/")
    if base.take_lock(home, KIND) is None:
        return
    from ..index import kept

    kept.keep()  # the index stays open between requests (no checkpoint and fsync at every close)
    resident = HookResident(home, lib, idle, check)
    base.run(resident, ready or warm, os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py"))
