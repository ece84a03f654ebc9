"""Queue the tier-3 audits of the asks just logged, and start the digest worker. Standard library only.

The guardian hook's detached log child becomes this file (``python -I -S guardian_audit.py``, stdio on
/dev/null, ``SOPHIA_HOME`` set) when it logged an ask marked for an audit: the answer is out already, so
nothing here slows or changes it. :func:`sophia.learning.audits.sync` reads the log from its cursor; for
a new job the worker starts in a Python that can import pydantic (:func:`.after_session.worker_python`).
Any failure is one line in ``logs/digest.log``; the worker's start and the next session end pull the
same log lines again.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":  # run as a file under -I -S: find the package next to us
    sys.path.insert(0, __file__.rsplit("/", 3)[0])


def main() -> int:
    from sophia import paths
    from sophia.learning import audits, queue

    home = paths.sophia_home()
    try:
        if audits.sync(home):
            from sophia.hooks.after_session import worker_python

            py = worker_python(home)
            if py is not None:
                queue.start_worker(home, py)
    except Exception as exc:  # noqa: BLE001 - detached: one line, never a traceback
        from sophia.atomic import append_line
        from sophia.redact import redact
        from sophia.timeutil import iso

        try:
            append_line(paths.logs_dir(home) / "digest.log", redact(f"{iso()} guardian audits: {type(exc).__name__}: {exc}"))
        except Exception:  # noqa: BLE001, S110 - nowhere left to say it
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
