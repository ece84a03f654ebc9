"""Merge Sophia's hook entries into a Claude Code ``settings.json``, or take them out again.

Standard library only and self-contained: install.sh runs it as ``python -I -S settings_merge.py``.

Ours are recognised by their command: its first word is a path under the kit directory (``--kit``),
or it is one of the exact commands recorded by an earlier install (``--forget``). Everything else in
the file (the user's keys, the user's hooks, their order) is kept as it was. A file that is not
valid JSON is refused and never overwritten. Before a changed file replaces the old one, the old one
is copied next to it (``settings.json.sophia-bak-<UTC time>``), and the new text is parsed back and
checked; the replacement is atomic (temp file in the same folder, fsync, rename). A symlinked
settings.json (dotfiles) is written through to its target.

    settings_merge.py merge  --settings PATH --hooks-json hooks/hooks.json --kit DIR [--forget CMD]... [--dry-run]
    settings_merge.py remove --settings PATH --kit DIR [--forget CMD]... [--delete-if-empty] [--dry-run]
    settings_merge.py check  --settings PATH

Prints one JSON object (what changed) on stdout. Exit 0 on success, 2 when the settings file is
refused (not valid JSON, or hooks not in the expected shape), 1 on other errors (one line on stderr).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # s3 status reads the manifest: argparse, copy, tempfile and shutil only where used
    import argparse

PLUGIN_ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"
BACKUP_TAG = ".sophia-bak-"


class SettingsError(Exception):
    """The settings file cannot be used as it is (not JSON, wrong shape). Nothing was written."""


# ---------------------------------------------------------------------------------------------
# reading


def read_object(path: Path, error: type[Exception] = SettingsError) -> dict[str, Any] | None:
    """A JSON object file of the user's (settings, Codex's hooks, an MCP list): None when it is missing,
    ``{}`` when blank; ``error`` with one line saying where when it cannot be read or is not an object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix or move it, then run the installer again (the file was left untouched)"
        ) from exc
    if not isinstance(data, dict):
        raise error(f"{path}: the top level is a {type(data).__name__}, not a JSON object; left untouched")
    return data


def load_settings(path: Path) -> dict[str, Any]:
    """The parsed settings; ``{}`` when the file is missing or blank. Raises SettingsError."""
    data = read_object(path) or {}
    problems = check_structure(data)
    if problems:
        raise SettingsError(f"{path}: {problems[0]}; left untouched")
    return data


def check_structure(settings: Any) -> list[str]:
    """Problems with the shape of ``settings`` (empty list = fine). Checks the ``hooks`` part only."""
    if not isinstance(settings, dict):
        return ["settings is not a JSON object"]
    hooks = settings.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, dict):
        return ['"hooks" is not an object']
    out: list[str] = []
    for event, groups in hooks.items():
        where = f"hooks.{event}"
        if not isinstance(groups, list):
            out.append(f"{where} is not an array")
            continue
        for i, group in enumerate(groups):
            gw = f"{where}[{i}]"
            if not isinstance(group, dict):
                out.append(f"{gw} is not an object")
                continue
            if "matcher" in group and not isinstance(group["matcher"], str):
                out.append(f"{gw}.matcher is not a string")
            inner = group.get("hooks")
            if not isinstance(inner, list):
                out.append(f"{gw}.hooks is missing or not an array")
                continue
            for j, hook in enumerate(inner):
                out += _hook_problems(hook, f"{gw}.hooks[{j}]")
    return out


def _hook_problems(hook: Any, hw: str) -> list[str]:
    if not isinstance(hook, dict) or not isinstance(hook.get("type"), str):
        return [f"{hw} is not an object with a string type"]
    out = []
    if hook["type"] == "command" and not (isinstance(hook.get("command"), str) and hook["command"]):
        out.append(f"{hw}.command is missing or empty")
    timeout = hook.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        out.append(f"{hw}.timeout is not a positive number")
    return out


# ---------------------------------------------------------------------------------------------
# ours


def _norm(path: str) -> str:
    return os.path.normpath(os.path.expanduser(path))


def command_path(command: str) -> str | None:
    """The first word of a hook command (quotes removed), or None if it does not parse."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[0] if words else None


def is_ours(hook: Any, kit_dir: str, forget: frozenset[str] = frozenset()) -> bool:
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    command = hook.get("command")
    if not isinstance(command, str):
        return False
    if command in forget:
        return True
    first = command_path(command)
    if not first:
        return False
    kit = _norm(kit_dir)
    return _norm(first).startswith(kit + os.sep)


def hooks_for_kit(plugin_hooks: dict[str, Any], kit_dir: str) -> dict[str, list[dict[str, Any]]]:
    """The plugin's ``hooks/hooks.json`` with ``${CLAUDE_PLUGIN_ROOT}`` replaced by ``kit_dir``.

    Each command's first word (the script) becomes a shell-quoted absolute path under the kit.
    """
    import copy

    hooks = plugin_hooks.get("hooks")
    if not isinstance(hooks, dict) or not hooks:
        raise SettingsError('hooks.json has no "hooks" object')
    kit = _norm(kit_dir)
    out: dict[str, list[dict[str, Any]]] = {}
    for event, groups in hooks.items():
        new_groups = []
        for group in groups:
            new_group = copy.deepcopy(group)
            for hook in new_group["hooks"]:
                if hook.get("type") != "command":
                    continue
                words = shlex.split(hook["command"])
                if not words or not words[0].startswith(PLUGIN_ROOT_VAR + "/"):
                    raise SettingsError(f"hooks.json: command {hook['command']!r} does not start with "
                                        f"{PLUGIN_ROOT_VAR}/")
                words[0] = kit + words[0][len(PLUGIN_ROOT_VAR):]
                hook["command"] = shlex.join(words)
            new_groups.append(new_group)
        out[event] = new_groups
    return out


def commands_of(hooks: dict[str, list[dict[str, Any]]]) -> list[str]:
    seen: list[str] = []
    for groups in hooks.values():
        for group in groups:
            for hook in group.get("hooks", []):
                cmd = hook.get("command")
                if isinstance(cmd, str) and cmd not in seen:
                    seen.append(cmd)
    return seen


# ---------------------------------------------------------------------------------------------
# transforming (pure: return a new dict, never touch the input)


def strip_ours(settings: dict[str, Any], kit_dir: str,
               forget: frozenset[str] = frozenset()) -> tuple[dict[str, Any], int]:
    """``settings`` without our hook entries, and how many were removed.

    A matcher group, an event array or the ``hooks`` object that becomes empty because our entries
    left it is removed; ones the user left empty themselves are kept.
    """
    import copy

    new = copy.deepcopy(settings)
    hooks = new.get("hooks")
    if not isinstance(hooks, dict):
        return new, 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [h for h in inner if not is_ours(h, kit_dir, forget)]
            gone = len(inner) - len(kept)
            removed += gone
            if gone and not kept:
                continue
            group["hooks"] = kept
            kept_groups.append(group)
        if groups and not kept_groups:
            del hooks[event]
        else:
            hooks[event] = kept_groups
    if removed and not hooks:
        del new["hooks"]
    return new, removed


def merge(settings: dict[str, Any], ours: dict[str, list[dict[str, Any]]], kit_dir: str,
          forget: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``settings`` with exactly one copy of our entries (appended after the user's, per event)."""
    import copy

    new, _ = strip_ours(settings, kit_dir, forget)
    hooks = new.setdefault("hooks", {})
    for event, groups in ours.items():
        hooks.setdefault(event, []).extend(copy.deepcopy(groups))
    return new


def verify_merged(new: dict[str, Any], ours: dict[str, list[dict[str, Any]]]) -> None:
    """Our own structural check of a merged settings object; raises SettingsError."""
    problems = check_structure(new)
    if problems:
        raise SettingsError(f"the merged settings would be malformed: {problems[0]}")
    text = json.dumps(new, indent=2)
    if json.loads(text) != new:
        raise SettingsError("the merged settings do not survive a JSON round trip")
    hooks = new.get("hooks", {})
    for event, groups in ours.items():
        have = {h.get("command") for g in hooks.get(event, []) for h in g.get("hooks", [])}
        for cmd in commands_of({event: groups}):
            if cmd not in have:
                raise SettingsError(f"the merged settings lack {event} -> {cmd}")


# ---------------------------------------------------------------------------------------------
# writing


def _backup(real: Path) -> Path:
    import shutil

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest = real.with_name(real.name + BACKUP_TAG + stamp)
    n = 1
    while dest.exists():
        n += 1
        dest = real.with_name(f"{real.name}{BACKUP_TAG}{stamp}-{n}")
    shutil.copy2(real, dest)
    return dest


def write_settings(path: Path, settings: dict[str, Any]) -> Path | None:
    """Atomically replace ``path`` with ``settings`` (backing up the old file). Returns the backup."""
    real = Path(os.path.realpath(path))
    real.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    if json.loads(text) != settings:  # parse back what will be written
        raise SettingsError("the new settings do not parse back")
    backup = None
    mode = 0o600
    if real.exists():
        mode = real.stat().st_mode & 0o777
        backup = _backup(real)
    write_through(real, text, mode)
    return backup


def write_through(path: Path, text: str, mode: int) -> None:
    """Atomically replace the file behind ``path`` (a symlink is written through) with ``text``, at
    ``mode``: temp file beside it, fsync, rename, fsync of the folder. Line endings are kept as given."""
    import tempfile

    real = Path(os.path.realpath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(real.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


# ---------------------------------------------------------------------------------------------
# command line


def remove_ours(path: Path, kit: str, forget: frozenset[str] = frozenset(), *, delete_if_empty: bool = False,
                dry_run: bool = False) -> dict[str, Any]:
    """Take our hook entries out of ``path``; with ``delete_if_empty`` a file left empty is deleted.

    Returns ``{"settings", "changed", "dry_run", "backup", "commands": [], "removed", "deleted"}``.
    """
    current = load_settings(path)
    new, removed = strip_ours(current, kit, forget)
    problems = check_structure(new)
    if problems:
        raise SettingsError(f"the cleaned settings would be malformed: {problems[0]}")
    changed, backup, deleted = new != current, None, False
    if delete_if_empty and new == {} and path.exists() and not path.is_symlink():
        # The file was created by the install and held nothing but ours: remove it, no backup.
        changed = deleted = True
        if not dry_run:
            path.unlink()
    elif changed and not dry_run:
        backup = write_settings(path, new)
    return {"settings": str(path), "changed": changed, "dry_run": dry_run,
            "backup": str(backup) if backup else None, "commands": [], "removed": removed, "deleted": deleted}


def _run(args: argparse.Namespace) -> dict[str, Any]:
    path = Path(args.settings).expanduser()
    forget = frozenset(args.forget or [])
    if args.action == "remove":
        return remove_ours(path, args.kit, forget, delete_if_empty=args.delete_if_empty, dry_run=args.dry_run)
    current = load_settings(path)
    if args.action == "check":
        return {"settings": str(path), "ok": True}
    plugin = json.loads(Path(args.hooks_json).read_text(encoding="utf-8"))
    ours = hooks_for_kit(plugin, args.kit)
    new = merge(current, ours, args.kit, forget)
    verify_merged(new, ours)
    changed = new != current
    backup = write_settings(path, new) if changed and not args.dry_run else None
    return {"settings": str(path), "changed": changed, "dry_run": args.dry_run,
            "backup": str(backup) if backup else None, "commands": commands_of(ours)}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="settings_merge.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["merge", "remove", "check"])
    parser.add_argument("--settings", required=True, help="the settings.json to update")
    parser.add_argument("--hooks-json", help="the plugin hooks file (merge)")
    parser.add_argument("--kit", help="the installed kit directory that replaces ${CLAUDE_PLUGIN_ROOT}")
    parser.add_argument("--forget", action="append", help="an exact command to treat as ours (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="report, write nothing")
    parser.add_argument("--delete-if-empty", action="store_true",
                        help="remove: delete the file when nothing is left in it (the install created it)")
    args = parser.parse_args(argv)
    if args.action != "check" and not args.kit:
        parser.error("--kit is required")
    if args.action == "merge" and not args.hooks_json:
        parser.error("--hooks-json is required for merge")
    try:
        out = _run(args)
    except SettingsError as exc:
        print(f"settings_merge: refused: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"settings_merge: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
