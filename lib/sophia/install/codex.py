"""The kit beside Codex CLI: its hooks, their trust, the MCP server and the System 3 block. Stdlib only.

``install.sh --codex`` runs ``python -I -S codex.py install ...``; uninstall calls :func:`remove`. What
goes where (facts: /work/shared/docs/codex-protocol.md, checked with codex 0.171.0):

- ``$CODEX_HOME/hooks.json`` (``~/.codex``): the kit's hook table (``hooks/hooks.json``, the one source)
  for the events Codex has, each command ``S3_AGENT=codex "<kit>/hooks/<hook>.sh"`` (the hooks answer in
  Codex's protocol when they see it), appended after the user's own groups (trust keys are positional);
  SessionEnd's time-out at Codex's 3 s cap.
- ``$CODEX_HOME/config.toml``: one marked block with the MCP server (``[mcp_servers.sophia-memory]``) and
  a ``[hooks.state."<hooks.json>:<event>:<group>:<handler>"]`` ``trusted_hash`` per hook: Codex runs a
  user hook only once trusted, and skips an untrusted one without a word. The hash is sha256 over the
  compact, key-sorted JSON of the handler's identity (:func:`trust_hash`); an upgrade rewrites them.
  The new text is parsed back with ``tomllib`` before it replaces the old.
- ``$CODEX_HOME/AGENTS.md``: the System 3 block ``s3 refresh-identity --output`` writes (its markers).

The manifest's ``codex`` record says what was done; :func:`remove` takes out exactly that: our groups
(by command), our block, our AGENTS.md block (the user's text and mode put back), and a file the
install created when nothing else is left in it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: find the package beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sophia.install import claude_md, manifest, settings_merge  # noqa: E402

MCP_NAME = "sophia-memory"
AGENT_PREFIX = "S3_AGENT=codex "
BEGIN = "# >>> sophia-system3 (install.sh --codex writes this block; uninstall removes it)"
END = "# <<< sophia-system3"
# Codex's events and the labels its trust keys use (events it lacks, such as PostToolUseFailure, are left out)
EVENTS = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "SessionStart": "session_start",
          "UserPromptSubmit": "user_prompt_submit", "Stop": "stop", "SessionEnd": "session_end",
          "PreCompact": "pre_compact", "PostCompact": "post_compact"}
SESSION_END_MAX_S = 3  # Codex clamps it (with a warning) anyway
DEFAULT_TIMEOUT = 600


class CodexError(Exception):
    """A Codex file the install cannot change safely: nothing was changed."""


def codex_home() -> Path:
    base = os.environ.get("CODEX_HOME")
    return Path(base) if base else Path.home() / ".codex"


# ---------------------------------------------------------------- the hook table


def our_groups(table: dict[str, Any], kit: str) -> dict[str, list[dict[str, Any]]]:
    """The kit's hook table (hooks/hooks.json's ``hooks``) as Codex groups, commands marked for Codex."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event, groups in table.items():
        if event not in EVENTS:
            continue
        for g in groups:
            handlers = []
            for h in g.get("hooks") or []:
                cmd = str(h["command"]).replace("${CLAUDE_PLUGIN_ROOT}", kit)
                timeout = int(h.get("timeout") or DEFAULT_TIMEOUT)
                if event == "SessionEnd":
                    timeout = min(timeout, SESSION_END_MAX_S)
                handlers.append({"type": "command", "command": AGENT_PREFIX + cmd, "timeout": timeout})
            group: dict[str, Any] = {"hooks": handlers}
            if "matcher" in g:
                group = {"matcher": g["matcher"], **group}
            out.setdefault(event, []).append(group)
    return out


def trust_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """What Codex stores as a trusted hook's ``trusted_hash``."""
    ident: dict[str, Any] = {"event_name": EVENTS[event], "hooks": [{
        "type": "command", "command": handler["command"], "timeout": int(handler.get("timeout") or DEFAULT_TIMEOUT),
        "async": False}]}
    if "matcher" in group:
        ident["matcher"] = group["matcher"]
    data = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


def _ours(handler: Any, commands: set[str], kit: str) -> bool:
    cmd = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(cmd, str) and (cmd in commands or (cmd.startswith(AGENT_PREFIX) and kit in cmd))


def strip_groups(doc: dict[str, Any], commands: set[str], kit: str) -> int:
    """Take our groups out of a hooks.json document; how many handlers went."""
    hooks = doc.get("hooks") or {}
    gone = 0
    for event in list(hooks):
        kept = []
        for g in hooks[event] if isinstance(hooks[event], list) else []:
            handlers = g.get("hooks") if isinstance(g, dict) else None
            if isinstance(handlers, list) and handlers and all(_ours(h, commands, kit) for h in handlers):
                gone += len(handlers)
                continue
            kept.append(g)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return gone


def merge_hooks(doc: dict[str, Any], groups: dict[str, list[dict[str, Any]]], kit: str,
                path: Path) -> dict[str, str]:
    """Append our groups after the user's; the trust key -> hash of each of our handlers."""
    strip_groups(doc, set(), kit)
    hooks = doc.setdefault("hooks", {})
    trust: dict[str, str] = {}
    for event, gs in groups.items():
        existing = hooks.setdefault(event, [])
        for g in gs:
            gi = len(existing)
            existing.append(g)
            for hi, h in enumerate(g["hooks"]):
                trust[f"{path}:{EVENTS[event]}:{gi}:{hi}"] = trust_hash(event, g, h)
    return trust


def load_hooks_json(path: Path) -> tuple[dict[str, Any], bool]:
    doc = settings_merge.read_object(path, CodexError)
    if doc is None:
        return {"hooks": {}}, False
    if not isinstance(doc.get("hooks", {}), dict):
        raise CodexError(f"{path}: expected {{\"hooks\": {{EVENT: [...]}}}}")
    return doc, True


# ---------------------------------------------------------------- config.toml


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a TOML basic string for any text a path holds


def block(mcp_command: str | None, trust: dict[str, str]) -> str:
    lines = [BEGIN]
    if mcp_command:
        lines += [f"[mcp_servers.{MCP_NAME}]", f"command = {_toml_str(mcp_command)}", "args = []", ""]
    for key, value in trust.items():
        lines += [f"[hooks.state.{_toml_str(key)}]", f"trusted_hash = {_toml_str(value)}", ""]
    return "\n".join(lines).rstrip("\n") + "\n" + END + "\n"


_BLOCK = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.S)


def strip_block(text: str) -> str:
    """The config without our block (and the blank line added before it)."""
    m = _BLOCK.search(text)
    if not m:
        return text
    head, tail = text[:m.start()], text[m.end():]
    if head.endswith("\n\n") and not tail:
        head = head[:-1]
    return head + tail


def with_block(text: str, new_block: str) -> str:
    base = strip_block(text)
    if not base.strip():
        return new_block
    sep = "" if base.endswith("\n\n") else ("\n" if base.endswith("\n") else "\n\n")
    return base + sep + new_block


def _check_toml(text: str, path: Path, theirs: str, want_mcp: bool, trust: dict[str, str]) -> None:
    import tomllib

    try:
        mine = tomllib.loads(theirs)
    except tomllib.TOMLDecodeError as exc:
        raise CodexError(f"{path} is not valid TOML ({exc}); fix it, then run the install again") from exc
    if want_mcp and MCP_NAME in (mine.get("mcp_servers") or {}):
        raise CodexError(f"{path} already names an MCP server {MCP_NAME!r} of its own")
    taken = set((mine.get("hooks") or {}).get("state") or {}) & set(trust)
    if taken:
        raise CodexError(f"{path} already holds the trust of {len(taken)} hook(s) at our places ({sorted(taken)[0]})")
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CodexError(f"{path}: our block would not parse with the rest ({exc}); nothing was changed") from exc


# ---------------------------------------------------------------- files


def write_text(path: Path, text: str, mode: int = 0o600) -> None:
    """Atomically replace the file behind ``path`` (its mode kept; ``mode`` for a new file)."""
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    settings_merge.write_through(target, text, target.stat().st_mode & 0o777 if target.exists() else mode)


def _read(path: Path) -> tuple[str, bool]:
    try:
        return path.read_text(encoding="utf-8"), True
    except FileNotFoundError:
        return "", False


# ---------------------------------------------------------------- install and remove


def install(home: Path, kit: str, table: dict[str, Any], mcp_command: str | None,
            prior: dict[str, Any] | None = None, dry_run: bool = False) -> dict[str, Any]:
    """Register the hooks (trusted), the MCP server and return the record; the caller writes AGENTS.md."""
    prior = prior or {}
    hooks_path, config_path = home / "hooks.json", home / "config.toml"
    doc, hooks_existed = load_hooks_json(hooks_path)
    strip_groups(doc, set(prior.get("hook_commands") or []), kit)
    trust = merge_hooks(doc, our_groups(table, kit), kit, hooks_path.absolute())
    text, config_existed = _read(config_path)
    theirs = strip_block(text)
    new_text = with_block(text, block(mcp_command, trust))
    _check_toml(new_text, config_path, theirs, bool(mcp_command), trust)
    commands = [h["command"] for gs in (doc.get("hooks") or {}).values() for g in gs for h in g.get("hooks") or []
                if _ours(h, set(), kit)]
    if not dry_run:
        write_text(hooks_path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        write_text(config_path, new_text)
    return {"codex_home": str(home), "hooks_json": str(hooks_path),
            "hooks_json_created": bool(prior.get("hooks_json_created")) if prior else not hooks_existed,
            "config_toml": str(config_path),
            "config_created": bool(prior.get("config_created")) if prior else not config_existed,
            "hook_commands": commands, "trust_keys": sorted(trust), "mcp": bool(mcp_command),
            "agents_md": prior.get("agents_md") or claude_md.snapshot(home / "AGENTS.md")}


def remove(record: dict[str, Any], kit: str, dry_run: bool = False) -> list[tuple[str, str, str]]:
    """Take out what :func:`install` recorded; the changes as (action, path, detail)."""
    done: list[tuple[str, str, str]] = []
    done += _remove_hooks(record, kit, dry_run)
    done += _remove_config(record, dry_run)
    md = record.get("agents_md") or {}
    if md.get("path"):
        step = claude_md.plan(Path(md["path"]), md)
        if step is not None and step["action"] in ("delete", "strip"):
            done.append(("delete" if step["action"] == "delete" else "edit", md["path"], "the System 3 block out"))
        if step is not None and not dry_run:
            claude_md.clean(step)
    return done


def _remove_hooks(record: dict[str, Any], kit: str, dry_run: bool) -> list[tuple[str, str, str]]:
    path = Path(record.get("hooks_json") or "")
    if not record.get("hooks_json") or not path.is_file():
        return []
    doc, _ = load_hooks_json(path)
    gone = strip_groups(doc, set(record.get("hook_commands") or []), kit)
    if not gone:
        return []
    empty = not doc.get("hooks") and set(doc) <= {"hooks"}
    if record.get("hooks_json_created") and empty:
        if not dry_run:
            path.unlink()
        return [("delete", str(path), f"it held only our {gone} hooks; the install created it")]
    if not dry_run:
        write_text(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return [("edit", str(path), f"{gone} Sophia hooks out, yours kept")]


def _remove_config(record: dict[str, Any], dry_run: bool) -> list[tuple[str, str, str]]:
    path = Path(record.get("config_toml") or "")
    text, exists = _read(path) if record.get("config_toml") else ("", False)
    if not exists or BEGIN not in text:
        return []
    new = strip_block(text)
    if record.get("config_created") and not new.strip():
        if not dry_run:
            path.unlink()
        return [("delete", str(path), "it held only our block; the install created it")]
    if not dry_run:
        write_text(path, new)
    return [("edit", str(path), "the MCP server and the hooks' trust out, the rest kept")]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="codex.py", description="The kit's hooks, MCP server and block for Codex")
    p.add_argument("action", choices=["install"])
    p.add_argument("--manifest", required=True)
    p.add_argument("--kit", required=True)
    p.add_argument("--hooks-json", required=True, help="the kit's hook table (hooks/hooks.json)")
    p.add_argument("--codex-home", default="")
    p.add_argument("--mcp-command", default="", help="the MCP server's command (none: no server)")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    home = Path(args.codex_home) if args.codex_home else codex_home()
    try:
        table = json.loads(Path(args.hooks_json).read_text(encoding="utf-8"))["hooks"]
        mpath = Path(args.manifest)
        data = manifest.load(mpath)
        rec = install(home, args.kit, table, args.mcp_command or None, data.get("codex"), args.dry_run)
        if not args.dry_run:
            data["codex"] = rec
            manifest.save(mpath, data)
    except (CodexError, OSError, ValueError, KeyError) as exc:
        print(f"codex: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"hooks": len(rec["hook_commands"]), "hooks_json": rec["hooks_json"],
                      "config_toml": rec["config_toml"], "agents_md": str(home / "AGENTS.md")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
