"""``python -m sophia.team.background WHY``: the detached sync a hook or the digest worker starts.

Bounded in time (an alarm ends it after ``LIMIT`` seconds, each statement has its own timeout);
one line in ``logs/team.log`` per run, never a traceback.
"""

from __future__ import annotations

import signal
import sys

LIMIT = 120  # seconds


def _stop(signum: int, frame: object) -> None:
    raise TimeoutError(f"team sync stopped after {LIMIT} s")


def main(argv: list[str]) -> int:
    from .. import paths
    from ..timeutil import iso
    from . import config, run

    home = paths.sophia_home()
    why = argv[0] if argv else "manual"
    cfg = config.load(home)
    if cfg is None:
        return 0
    signal.signal(signal.SIGALRM, _stop)
    signal.alarm(LIMIT)
    try:
        doc = run.sync_once(home, cfg, timeout=5)
        line = "another sync is running" if doc is None else f"ok {doc.get('push')} {doc.get('pull')}"
    except Exception as exc:  # noqa: BLE001 - detached: one line, never a traceback
        line = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    print(f"{iso()} team sync ({why}): {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
