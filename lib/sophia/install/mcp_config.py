"""Our MCP server's entry in a JSON file with ``mcpServers``: Claude Code's ``~/.claude.json`` (a user
install, what ``claude mcp add --scope user`` writes) or a project's ``.mcp.json`` (``--project``).

Standard library only, run as ``python -I -S mcp_config.py``. Every other key of the file is kept as it
is (``~/.claude.json`` is Claude Code's own state); the new text is parsed back before it atomically
replaces the old. An entry of that name whose command is not ours is left alone (and said so).

    mcp_config.py add    --file F --name N --command C [--dry-run]   -> {"changed", "created", "skipped"}
    mcp_config.py remove --file F --name N --command C [--delete-if-empty] [--dry-run] -> {"changed", "deleted"}
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: find the package beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sophia.install.settings_merge import read_object, write_through  # noqa: E402

NAME = "sophia-memory"


class ConfigError(Exception):
    """The file cannot be read as a JSON object: nothing is changed."""


def entry(command: str) -> dict[str, Any]:
    """The entry, as ``claude mcp add`` writes a stdio server."""
    return {"type": "stdio", "command": command, "args": [], "env": {}}


def load(path: Path) -> tuple[dict[str, Any], bool]:
    """(the file's object, whether it exists)."""
    data = read_object(path, ConfigError)
    if data is None:
        return {}, False
    if not isinstance(data.get("mcpServers", {}), dict):
        raise ConfigError(f"{path}: expected a JSON object whose mcpServers is an object")
    return data, True


def save(path: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    json.loads(text)  # parsed back before it replaces anything
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    write_through(target, text, target.stat().st_mode & 0o777 if target.exists() else 0o600)


def add(path: Path, name: str, command: str, dry_run: bool = False) -> dict[str, Any]:
    data, existed = load(path)
    servers = data.setdefault("mcpServers", {})
    old = servers.get(name)
    if isinstance(old, dict) and old == entry(command):
        return {"changed": False, "created": False, "skipped": ""}
    if old is not None and not _ours(old, command):
        return {"changed": False, "created": False,
                "skipped": f"{path} already has an MCP server named {name!r} that is not ours; left as it is"}
    servers[name] = entry(command)
    if not dry_run:
        save(path, data)
    return {"changed": True, "created": not existed, "skipped": ""}


def _ours(old: Any, command: str) -> bool:
    """An earlier install's entry: its command is our launcher (the same file name, an older kit path)."""
    cmd = old.get("command") if isinstance(old, dict) else None
    return isinstance(cmd, str) and os.path.basename(cmd) == os.path.basename(command)


def remove(path: Path, name: str, command: str, delete_if_empty: bool = False,
           dry_run: bool = False) -> dict[str, Any]:
    data, existed = load(path)
    servers = data.get("mcpServers") or {}
    old = servers.get(name)
    if not existed or old is None or not (isinstance(old, dict) and old.get("command") == command):
        return {"changed": False, "deleted": False}
    del servers[name]
    if not servers:
        data.pop("mcpServers", None)
    deleted = delete_if_empty and not data
    if not dry_run:
        if deleted:
            path.unlink()
        else:
            save(path, data)
    return {"changed": True, "deleted": deleted}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mcp_config.py", description="Our MCP server entry in an mcpServers file")
    p.add_argument("action", choices=["add", "remove"])
    p.add_argument("--file", required=True)
    p.add_argument("--name", default=NAME)
    p.add_argument("--command", required=True)
    p.add_argument("--delete-if-empty", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    try:
        if args.action == "add":
            out = add(Path(args.file), args.name, args.command, args.dry_run)
        else:
            out = remove(Path(args.file), args.name, args.command, args.delete_if_empty, args.dry_run)
    except (ConfigError, OSError) as exc:
        print(f"mcp_config: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
