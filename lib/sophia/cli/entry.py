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


def main() -> None:
    if sys.argv[1:2] == ["recall"]:
        _fast_recall(sys.argv[2:])
    from ..errors import SophiaError

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


if __name__ == "__main__":
    main()
