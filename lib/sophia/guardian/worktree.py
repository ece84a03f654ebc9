"""Whether a git working tree has uncommitted changes to tracked files, asked of git itself.

``git reset --hard``, ``git checkout -- .`` or ``git restore <folder>`` lose only uncommitted changes to
tracked files; on a clean tree they lose nothing (the usual "start from a clean slate" of an agent), so the
guardian does not stop them there. ``git worktree remove --force`` loses what another checkout holds,
untracked files too (:func:`has_work`). Asked only for those commands (a ``git status`` costs a few
milliseconds), and only "clean" changes a verdict: any doubt (no such folder, not a repository, a repository
of another owner, git missing or slow) keeps the guardian's answer.

The repository is the agent's, possibly cloned from anywhere: git runs with its fsmonitor and hooks off
(a repository's own config can name programs for those), without optional locks (it never writes the
index beside a running git), and never asks on a terminal.
"""

from __future__ import annotations

import os

TIMEOUT = 1.0  # seconds: a status slower than this is doubt

_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false")


def has_work(path: str) -> bool:
    """Whether the checkout at ``path`` holds anything a forced removal loses: a change to a tracked file
    or an untracked file, by git within ``TIMEOUT`` (doubt counts as yes). No such folder holds nothing
    (git refuses to remove what is not there)."""
    if not os.path.isdir(path):
        return False
    return _status(path, "--untracked-files=normal") != b""


def _status(path: str, untracked: str) -> bytes | None:
    """``git status --porcelain`` of ``path`` (None when git fails or is slow)."""
    import subprocess

    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    try:
        p = subprocess.run(["git", *_SAFE, "-C", path, "status", "--porcelain", untracked,
                            "--ignore-submodules=all"], capture_output=True, timeout=TIMEOUT, env=env,
                           stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def clean(path: str) -> bool:
    """True when git says, within ``TIMEOUT``, that the tree at ``path`` has no change to a tracked
    file, staged or not (untracked files do not count: these commands leave them alone)."""
    if not os.path.isdir(path):
        return False
    return _status(path, "--untracked-files=no") == b""
