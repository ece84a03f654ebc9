"""What the zero-token learners may teach. Standard library only (the guardian is imported when asked).

A lesson is advice the next session acts on, so two kinds of command are never taught as a fix or a
playbook command, whatever their evidence:

- **damage**: a command the guardian would stop (ask or deny), or one that forces past a safety check:
  ``--force`` and its kin, ``-f`` on a delete or on git, ``reset --hard``, ``rm -r`` (the user's data
  comes first; a check that refused is a check to respect, not to get past);
- **one-off values**: a fix tied to an issue or PR number, a temp path, a commit hash or a generated id
  would not help another session.

The tables are data: a program and the flags that force it.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RULES_VERSION = 1  # raise when what may be taught changes: stored procedures are judged again (procedures.sweep)

# long options that force past a check, for any program
FORCE_LONG = re.compile(r"^--(?:force(?:-[a-z-]+)?|no-verify|hard|unsafe[a-z-]*|skip-(?:checks|verify|hooks)|"
                        r"allow-unrelated-histories|overwrite|delete-branch)$")
# programs whose short -f (alone or in a bundle: -rf, -fd) forces a delete or an overwrite of history
FORCE_SHORT_F = frozenset(["rm", "git", "docker", "podman", "kubectl", "helm", "npm", "pnpm", "yarn", "brew", "apt",
                           "apt-get", "zfs", "lvremove", "wipefs", "mkfs"])
# (program, subcommand) pairs that discard work whatever their flags
DISCARDING = frozenset([("git", "clean"), ("docker", "prune"), ("git", "filter-branch")])
# what a build makes, so a recursive delete of it loses nothing of the user's
GENERATED = frozenset(["node_modules", "build", "dist", "target", "out", ".venv", "venv", "__pycache__", ".cache",
                       ".next", ".nuxt", ".turbo", ".parcel-cache", "coverage", ".pytest_cache", ".mypy_cache",
                       ".ruff_cache", ".tox", ".gradle", "bin", "obj", "DerivedData", ".eggs", "pkg"])
_GIT_DELETE_BRANCH = re.compile(r"^-[a-zA-Z]*D[a-zA-Z]*$")

_ONE_OFF = re.compile(
    r"(?:^|[\s=:'\"(])(?:/tmp/|/var/folders/|/private/var/|\$TMPDIR|\$\{TMPDIR|%TEMP%|C:\\\\Windows\\\\Temp)"
    r"|(?:^|\s)#\d{2,}\b|\b(?:pull|pulls|issues|merge_requests)/\d+\b"
    r"|\b(?:pr|issue|mr|run)\s+(?:view|checks|diff|merge|checkout|comment|close|reopen|edit|review|rerun|watch)\s+\d+\b"
    r"|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
    r"|\bmktemp\b", re.I)
_HEX = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")


def forcing(words: list[str]) -> str | None:
    """The flag or subcommand in one command's words that forces past a safety check, or None."""
    if not words:
        return None
    prog = words[0].rsplit("/", 1)[-1].lower().removesuffix(".exe")
    args = words[1:]
    sub = next((a for a in args if not a.startswith("-")), "")
    if prog == "rm" and any(re.match(r"^-[a-zA-Z]*[rR]", a) or a == "--recursive" for a in args):
        made = [a for a in args if not a.startswith("-")]
        return None if made and all(_generated(a) for a in made) else "rm -r"
    if (prog, sub) in DISCARDING:
        return f"{prog} {sub}"
    for a in args:
        if FORCE_LONG.match(a.split("=", 1)[0]):
            return a.split("=", 1)[0]
        if prog in FORCE_SHORT_F and re.match(r"^-[a-zA-Z]*f[a-zA-Z]*$", a) and not a.startswith("--"):
            return f"{prog} {a}"
        if prog == "git" and sub == "branch" and _GIT_DELETE_BRANCH.match(a):
            return "git branch -D"
        if prog == "git" and sub == "push" and a.startswith("+"):
            return "git push +refspec"
    return None


def _generated(path: str) -> bool:
    """A path a build or a package manager makes (``node_modules``, ``dist``, ``*.egg-info``...)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name in GENERATED or name.endswith(".egg-info") or bool(re.match(r"^\.?(?:tmp|temp)[\w.-]*$", name))


def guardian_stops(command: str, cwd: str | None) -> str | None:
    """The guardian's reason when it would ask or deny this command (None: it allows it)."""
    import os

    from ..guardian.analyze import analyze_tool

    try:
        decision = analyze_tool("Bash", {"command": command}, cwd, dict(os.environ))
    except Exception:  # noqa: BLE001 - an analyzer failure never blocks learning; it teaches nothing then
        return "the guardian could not judge it"
    top = decision.top
    return top.reason() if decision.level != "allow" and top is not None else None


def damage(segments: list[list[str]], raw: str, cwd: str | None) -> str | None:
    """Why a command must not be taught (it forces past a check, or the guardian would stop it), or None."""
    for seg in segments:
        why = forcing(seg)
        if why:
            return f"forces past a safety check ({why})"
    stop = guardian_stops(raw, cwd)
    return f"the guardian would stop it: {stop}" if stop else None


def one_off(text: str) -> str | None:
    """The one-off value a command is tied to (a temp path, an issue or PR number, a hash, an id), or None."""
    m = _ONE_OFF.search(text) or _HEX.search(text)
    return m.group(0).strip(" =:'\"(") if m else None


def refusal(fix: dict[str, Any]) -> str | None:
    """Why a learned error -> fix entry is not taught, from its commands (see :func:`damage`, :func:`one_off`)."""
    return fix.get("damage") or (f"tied to a one-off value ({fix['one_off']})" if fix.get("one_off") else None)
