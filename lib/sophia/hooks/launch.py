"""Start a hook module from its cached bytecode: ``python -I -S launch.py session_end``.

A file run as a script is compiled from source on every run (tens of ms for a big module on a
busy machine); an imported module loads its ``.pyc``. So the hook scripts run this tiny file,
which imports the named hook module and calls its ``cli()``.
"""

import sys

HOOKS = ("session_end", "session_start", "prompt_context", "compact")

if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 3)[0])
    name = sys.argv[1] if len(sys.argv) > 1 else ""
    if name in HOOKS:
        __import__(f"sophia.hooks.{name}", fromlist=["cli"]).cli()
