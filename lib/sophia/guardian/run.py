"""Entry point the hook runs as ``python3 -I -S lib/sophia/guardian/run.py`` (stdin: the payload).

Isolated mode puts neither the script's directory nor PYTHONPATH on sys.path, so the library
directory is added here. Any failure, even an import error in a damaged copy, ends as an ``ask``
answer with exit 0 and no traceback.
"""

import os
import sys


def _fallback(why: str) -> int:
    sys.stdout.write('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", '
                     '"permissionDecisionReason": "Sophia guardian: the safety analyzer could not run (' + why +
                     '), so this call was not checked; review it yourself."}}\n')
    return 0


def _main() -> int:
    try:
        lib = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        sys.path.insert(0, lib)
        from sophia.guardian.hook import main

        return main()
    except BaseException as exc:  # noqa: BLE001 - the hook must answer, whatever happened
        return _fallback(type(exc).__name__)


if __name__ == "__main__":
    sys.exit(_main())
