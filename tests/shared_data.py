"""Where the shared data lives (../shared beside the checkout, ../../shared from a worktree, or
/work/shared on the development machines); tests read it there and never copy it into the project.
A test whose data is absent skips with one line naming where it looked."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLACES = (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared"))


def shared_path(rel: str) -> Path:
    """The first ``<place>/rel`` that exists, else the first place's (absent) path."""
    return next((p / rel for p in PLACES if (p / rel).exists()), PLACES[0] / rel)


def looked_in(rel: str) -> str:
    return "no " + rel + " in " + ", ".join(str(p) for p in PLACES)
