"""The install manifest: what install.sh put where, so uninstall.sh removes exactly that.

Standard library only and self-contained (run as ``python -I -S manifest.py``). The manifest is
``$SOPHIA_HOME/install-manifest.json``::

    {"schema_version": 1, "version": "0.1.0", "source": "/path/to/checkout", "sophia_home": "...",
     "kit_dir": ".../kit", "venv": {"path": ..., "python": ..., "created": true}, "launcher": "~/.local/bin/s3",
     "created_dirs": ["~/.local/bin", ...], "updated_at": "...Z",
     "targets": [{"scope": "user", "claude_dir": "~/.claude", "settings": ".../settings.json",
                  "hook_commands": [...], "files": [...], "dirs": [...], "settings_backups": [...],
                  "created_dirs": ["~/.claude/skills", ...],
                  "claude_md": {"path": ".../CLAUDE.md", "existed": true, "mode": 420, "sha256": "..."},
                  "mcp": {"file": "~/.claude.json", "name": "sophia-memory", "command": ".../mcp_server.sh",
                          "created": false},
                  "installed_at": "...Z"}]}

``created_dirs`` are the folders the first install had to create (the launcher's folder and its
missing parents at the top level; ``skills/``, ``agents/`` and a missing Claude folder per target):
uninstall removes them when they are empty again. ``claude_md`` is the target's CLAUDE.md as the
first install found it (see :mod:`claude_md`), so uninstall can put back its bytes and mode.

One target per Claude configuration folder (``~/.claude`` for the user, ``DIR/.claude`` for
``--project DIR``). The kit, the venv (only when install.sh created it) and the launcher are shared
by all targets and go when the last target goes.

    manifest.py record --manifest M --claude-dir D --scope user ... (see --help)
    manifest.py get    --manifest M (--claude-dir D | --all)     -> lines "kind<TAB>value"
    manifest.py forget --manifest M (--claude-dir D | --all)     -> drops the target(s)
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # s3 status reads the manifest: argparse, tempfile and shutil only where they are used
    import argparse

if not __package__:  # run as a script (python -I -S .../sophia/install/manifest.py): find the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SCHEMA_VERSION = 1


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"schema_version": SCHEMA_VERSION, "targets": []}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable install manifest ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("targets"), list):
        raise ValueError(f"{path}: not an install manifest")
    return data


def save(path: Path, data: dict[str, Any]) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = json.dumps(data, indent=2) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _norm(p: str) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(p)))


def find_target(data: dict[str, Any], claude_dir: str) -> dict[str, Any] | None:
    want = _norm(claude_dir)
    for t in data["targets"]:
        if _norm(t.get("claude_dir", "")) == want:
            return t
    return None


def _union(old: Any, new: list[str] | None) -> list[str]:
    out = [d for d in old if isinstance(d, str)] if isinstance(old, list) else []
    return out + [d for d in new or [] if d not in out]


def _claude_md_snapshot(claude_dir: str) -> dict[str, Any]:
    from sophia.install.claude_md import snapshot

    return snapshot(Path(claude_dir) / "CLAUDE.md")


def record(data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    now = _now()
    data.update({
        "schema_version": SCHEMA_VERSION,
        "version": args.version,
        "source": args.source,
        "sophia_home": args.sophia_home,
        "kit_dir": args.kit,
        "launcher": args.launcher or data.get("launcher"),
        "updated_at": now,
    })
    old_venv = data.get("venv") or {}
    created = args.venv_created == "1" or (old_venv.get("created") and _norm(old_venv.get("path", "")) == _norm(args.venv))
    data["venv"] = {"path": args.venv, "python": args.venv_python, "created": bool(created)}
    data["created_dirs"] = _union(data.get("created_dirs"), args.created_shared_dir)
    old = find_target(data, args.claude_dir)
    backups = list(old.get("settings_backups", [])) if old else []
    backups += [b for b in (args.backup or []) if b and b not in backups]
    target = {
        "scope": args.scope,
        "claude_dir": args.claude_dir,
        "settings": args.settings,
        "settings_created": bool(old.get("settings_created")) if old else args.settings_created == "1",
        "hook_commands": args.command or [],
        "files": args.file or [],
        "dirs": args.dir or [],
        "settings_backups": backups,
        "created_dirs": _union((old or {}).get("created_dirs"), args.created_dir),
        "claude_md": (old or {}).get("claude_md") or _claude_md_snapshot(args.claude_dir),
        "mcp": _mcp(old, args),
        "installed_at": old.get("installed_at", now) if old else now,
        "updated_at": now,
    }
    data["targets"] = [t for t in data["targets"] if t is not old] + [target]
    return data


def _mcp(old: dict[str, Any] | None, args: argparse.Namespace) -> dict[str, Any] | None:
    """Our MCP server's entry (file, name, command) and whether the first install created that file."""
    if not args.mcp_file:
        return (old or {}).get("mcp")
    before = (old or {}).get("mcp") or {}
    created = bool(before.get("created")) if before.get("file") == args.mcp_file else args.mcp_created == "1"
    return {"file": args.mcp_file, "name": "sophia-memory", "command": args.mcp_command, "created": created}


def lines_for(data: dict[str, Any], targets: list[dict[str, Any]], all_targets: bool) -> list[str]:
    out = []
    for t in targets:
        out.append(f"target\t{t['claude_dir']}")
        out.append(f"settings\t{t['settings']}")
        if t.get("settings_created"):
            out.append(f"settings_created\t{t['settings']}")
        out += [f"command\t{c}" for c in t.get("hook_commands", [])]
        out += [f"file\t{f}" for f in t.get("files", [])]
        out += [f"dir\t{d}" for d in t.get("dirs", [])]
    remaining = len(data["targets"]) - len(targets)
    out.append(f"remaining\t{remaining}")
    if remaining == 0 or all_targets:
        if data.get("kit_dir"):
            out.append(f"kit\t{data['kit_dir']}")
        venv = data.get("venv") or {}
        if venv.get("created") and venv.get("path"):
            out.append(f"venv\t{venv['path']}")
        if data.get("launcher"):
            out.append(f"launcher\t{data['launcher']}")
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="manifest.py", description="Sophia install manifest")
    p.add_argument("action", choices=["record", "get", "forget"])
    p.add_argument("--manifest", required=True)
    p.add_argument("--claude-dir")
    p.add_argument("--all", action="store_true", help="every target (get, forget)")
    p.add_argument("--scope", choices=["user", "project"], default="user")
    p.add_argument("--settings")
    p.add_argument("--version", default="")
    p.add_argument("--source", default="")
    p.add_argument("--sophia-home", default="")
    p.add_argument("--kit", default="")
    p.add_argument("--venv", default="")
    p.add_argument("--venv-python", default="")
    p.add_argument("--venv-created", choices=["0", "1"], default="0")
    p.add_argument("--launcher", default="")
    p.add_argument("--settings-created", choices=["0", "1"], default="0",
                   help="1 when settings.json did not exist before the first install")
    p.add_argument("--command", action="append")
    p.add_argument("--file", action="append")
    p.add_argument("--dir", action="append")
    p.add_argument("--backup", action="append")
    p.add_argument("--created-dir", action="append", help="a folder the install created for this target")
    p.add_argument("--created-shared-dir", action="append", help="a folder the install created for all targets")
    p.add_argument("--mcp-file", default="", help="the file our MCP server entry was written to")
    p.add_argument("--mcp-command", default="")
    p.add_argument("--mcp-created", choices=["0", "1"], default="0", help="1 when the install created that file")
    args = p.parse_args(argv)
    path = Path(args.manifest)
    try:
        data = load(path)
        if args.action == "record":
            if not (args.claude_dir and args.settings):
                p.error("record needs --claude-dir and --settings")
            save(path, record(data, args))
            return 0
        if args.all:
            targets = list(data["targets"])
        elif args.claude_dir:
            t = find_target(data, args.claude_dir)
            targets = [t] if t else []
        else:
            p.error("give --claude-dir or --all")
        if args.action == "get":
            if path.exists():
                print("\n".join(lines_for(data, targets, args.all)))
            return 0
        # forget
        data["targets"] = [t for t in data["targets"] if all(t is not x for x in targets)]
        if data["targets"]:
            save(path, data)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        return 0
    except (OSError, ValueError) as exc:
        print(f"manifest: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
