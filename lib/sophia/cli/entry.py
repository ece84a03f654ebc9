"""Console entry point: runs the typer app and turns expected errors into one-line messages."""

from __future__ import annotations

import sys


def main() -> None:
    import os

    from ..errors import SophiaError

    os.umask(0o077)  # whatever the CLI (or SQLite, or a library) creates is private to the user

    try:
        from .app import app

        app(prog_name="s3")
    except SophiaError as exc:
        print(f"s3: error: {exc}", file=sys.stderr)
        hint = getattr(exc, "hint", "")
        if hint:
            print(f"s3: {hint}", file=sys.stderr)
        sys.exit(1)
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
