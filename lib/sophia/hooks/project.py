"""Which project a session belongs to, and its git branch and commit. Stdlib only, no subprocess.

The project is the git work tree root containing ``cwd`` (found by walking up for ``.git``),
else ``cwd`` itself. Branch and commit are read from the files git keeps (``HEAD``, loose
refs, ``packed-refs``); a ``.git`` *file* (worktree or submodule) is followed to its gitdir,
and a worktree's ``commondir`` to the shared refs.
"""

from __future__ import annotations

import os
from pathlib import Path

_MAX_UP = 64


def git_root(cwd: str | os.PathLike[str] | None) -> Path | None:
    if not cwd:
        return None
    try:
        p = Path(cwd).resolve()
    except (OSError, RuntimeError):
        return None
    for _ in range(_MAX_UP):
        if (p / ".git").exists():
            return p
        if p.parent == p:
            return None
        p = p.parent
    return None


def project_of(cwd: str | os.PathLike[str] | None) -> str | None:
    """The git root containing ``cwd``, else ``cwd`` (absolute). ``None`` when unknown."""
    root = git_root(cwd)
    if root is not None:
        return str(root)
    if not cwd:
        return None
    try:
        return str(Path(cwd).resolve())
    except (OSError, RuntimeError):
        return str(cwd)


def _read(p: Path, limit: int = 4096) -> str | None:
    try:
        with open(p, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def _git_dir(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_dir():
        return dot
    text = _read(dot)
    if text and text.startswith("gitdir:"):
        target = Path(text[len("gitdir:"):].strip())
        if not target.is_absolute():
            target = (root / target).resolve()
        return target if target.is_dir() else None
    return None


def _resolve_ref(git_dir: Path, common: Path, ref: str) -> str | None:
    for base in (git_dir, common):
        text = _read(base / ref, 256)
        if text:
            sha = text.strip()
            if _is_sha(sha):
                return sha
    packed = _read(common / "packed-refs", 4 * 1024 * 1024)
    if packed:
        for line in packed.splitlines():
            if line.endswith(" " + ref):
                sha = line.split(" ", 1)[0]
                if _is_sha(sha):
                    return sha
    return None


def _is_sha(s: str) -> bool:
    return len(s) in (40, 64) and all(c in "0123456789abcdef" for c in s)


def git_info(root: str | os.PathLike[str] | None) -> tuple[str | None, str | None]:
    """(branch, commit) of the work tree at ``root``; ``(None, None)`` when not a repo.

    A detached HEAD gives branch ``None`` and its commit; an unborn branch its name and ``None``.
    """
    if not root:
        return None, None
    git_dir = _git_dir(Path(root))
    if git_dir is None:
        return None, None
    common = git_dir
    cd = _read(git_dir / "commondir", 1024)
    if cd and cd.strip():
        c = Path(cd.strip())
        common = c if c.is_absolute() else (git_dir / c).resolve()
    head = _read(git_dir / "HEAD", 1024)
    if not head:
        return None, None
    head = head.strip()
    if head.startswith("ref:"):
        ref = head[4:].strip()
        branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref
        return branch, _resolve_ref(git_dir, common, ref)
    return None, head if _is_sha(head) else None
