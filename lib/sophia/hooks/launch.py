"""Start a hook module from its cached bytecode: ``python -I -S launch.py session_end [--serve LIB]``.

A file run as a script is compiled from source on every run (tens of ms for a big module on a
busy machine); an imported module loads its ``.pyc``. So the hook scripts run this tiny file,
which imports the named hook module and calls its ``cli()``. With ``--serve LIB`` (the hook found no
resident hook runner for its state home), the process then stays on as that resident, its modules
loaded (``sophia.hooks.resident.stay``); ``LIB`` is the kit's lib folder as the hook names it.
"""

import sys

HOOKS = ("session_end", "session_start", "prompt_context", "compact")

if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 3)[0])
    name = sys.argv[1] if len(sys.argv) > 1 else ""
    serve = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--serve" else None
    if name in HOOKS:
        try:
            __import__(f"sophia.hooks.{name}", fromlist=["cli"]).cli()
        finally:
            if serve:
                from sophia.hooks.resident import stay

                stay(name, serve)
