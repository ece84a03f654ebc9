"""Console entry point: runs the typer app and turns expected errors into one-line messages."""

from __future__ import annotations

import sys


def _fast_recall(argv: list[str]) -> None:
    """``s3 recall`` without typer (typer alone costs ~100 ms); ``--help`` still goes to typer."""
    from .recall_run import fast_main

    try:
        rc = fast_main(argv)
    except KeyboardInterrupt:
        print("s3: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    if rc is not None:
        sys.exit(rc)


def _fast_answer(argv: list[str]) -> None:
    """``s3 version``, ``s3 status`` and ``s3 list KIND`` without typer (cli/fast_cmds.py); anything it leaves (``--help``,
    errors) goes on to typer, which says it as it always has."""
    from .fast_cmds import answer

    try:
        rc = answer(argv)
    except BrokenPipeError:
        sys.exit(0)
    if rc is not None:
        sys.exit(rc)


def main() -> None:
    import os

    os.umask(0o077)  # whatever the CLI (or SQLite, or a library) creates is private to the user
    if sys.argv[1:2] == ["recall"]:
        _fast_recall(sys.argv[2:])
    if sys.argv[1:] == ["mcp"]:  # the MCP server starts without typer (cmd_mcp.py is its help)
        from .mcp_server import main as mcp_main

        sys.exit(mcp_main())
    if sys.argv[1:2] in (["version"], ["list"], ["status"]):
        _fast_answer(sys.argv[1:])
    from ..errors import SophiaError

    try:
        from .app import app

        app(prog_name="s3")
    except SophiaError as exc:
        from .output import error_hint

        print(f"s3: error: {exc}", file=sys.stderr)
        hint = error_hint(exc)
        if hint:
            print(f"s3: {hint}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 1))  # 2 for bad input (an unknown id...), else 1
    except KeyboardInterrupt:
        print("s3: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:  # disk full, read-only home, permissions: say what failed, never a traceback
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"s3: error: cannot access{where}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # a bug: one line (SOPHIA_DEBUG=1 shows the traceback)
        import os

        if os.environ.get("SOPHIA_DEBUG"):
            raise
        print(f"s3: error: unexpected {type(exc).__name__}: {str(exc)[:300]} (SOPHIA_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
