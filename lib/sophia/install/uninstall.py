"""Remove Sophia System 3: exactly what the install recorded in $SOPHIA_HOME/install-manifest.json.

One implementation for ``./uninstall.sh`` (which runs this file as ``python -I -S``, from the checkout
or, when that is gone, from the installed kit) and ``s3 uninstall``. Standard library only.

Per install target (``~/.claude``, or ``DIR/.claude`` for ``--project DIR``): our hook entries in
settings.json (backed up first; a settings.json the install created goes when nothing else is in it),
the System 3 block of CLAUDE.md (the user's bytes and mode put back; see :mod:`claude_md`) and its
lock file, the ``s3-*`` skills and agents, then the folders the install created that are now empty.
With the last target gone: the launcher (when still ours), the kit, the venv the install created and
the folders created for the launcher. ``$SOPHIA_HOME`` (the memory) stays unless ``--purge``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: find the package beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sophia import paths  # noqa: E402
from sophia.install import claude_md, codex, manifest, mcp_config, settings_merge  # noqa: E402

PROG = "uninstall.sh"
LAUNCHER_TAG = "# sophia-system3 launcher"


class Refused(Exception):
    """The uninstall cannot go ahead (exit code in ``code``); nothing was removed."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Report:
    """What was (or, dry run, would be) done: printed as it happens unless ``quiet``."""

    dry_run: bool
    quiet: bool = False
    actions: list[dict[str, Any]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        self.messages.append(text)
        if not self.quiet:
            print(f"==> {text}", flush=True)

    def warn(self, text: str) -> None:
        self.messages.append(f"warning: {text}")
        print(f"{PROG}: warning: {text}", file=sys.stderr, flush=True)

    def act(self, action: str, path: str, detail: str = "") -> None:
        """One change: ``remove``, ``rmdir``, ``edit``, ``delete``."""
        self.actions.append({"action": action, "path": path, "detail": detail})
        if self.quiet:
            return
        verb = {"remove": "remove", "rmdir": "remove the empty folder", "edit": "edit", "delete": "delete"}[action]
        past = {"remove": "removed", "rmdir": "removed the empty folder", "edit": "edited",
                "delete": "deleted"}[action]
        line = f"would {verb} {path}" if self.dry_run else f"{past} {path}"
        print(f"    {line}{f' ({detail})' if detail else ''}", flush=True)


@dataclass
class Options:
    sophia_home: Path
    claude_dir: Path
    purge: bool = False
    yes: bool = False
    dry_run: bool = False
    codex_only: bool = False


def default_options(project: str | None = None, **kw: Any) -> Options:
    home = os.environ.get("HOME")
    if not home:
        raise Refused("HOME is not set")
    sophia_home = paths.sophia_home().absolute()  # SOPHIA_HOME > the kit's or venv's marker > ~/.sophia
    if project:
        proj = Path(project)
        if not proj.is_dir():
            raise Refused(f"--project: {project} is not a directory")
        claude_dir = proj.resolve() / ".claude"
    else:
        claude_dir = Path(home) / ".claude"
    return Options(sophia_home=sophia_home, claude_dir=claude_dir, **kw)


# ---------------------------------------------------------------------------------------------
# the parts


def _remove(report: Report, p: str | None) -> None:
    """Delete a path the manifest names (absolute, never /), if it is there."""
    if not p or not os.path.isabs(p) or os.path.normpath(p) == "/":
        return
    path = Path(p)
    if not (path.exists() or path.is_symlink()):
        return
    report.act("remove", p)
    if report.dry_run:
        return
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _settings(report: Report, target: dict[str, Any], kit: str) -> None:
    path = Path(target["settings"])
    if not path.is_file():
        return
    try:
        res = settings_merge.remove_ours(path, kit, frozenset(target.get("hook_commands", [])),
                                         delete_if_empty=bool(target.get("settings_created")),
                                         dry_run=report.dry_run)
    except (settings_merge.SettingsError, OSError, ValueError) as exc:
        report.warn(f"left {path} as it is ({exc}); remove the Sophia hook entries by hand")
        return
    n = res["removed"]
    if res["deleted"]:
        report.act("delete", str(path), f"it held only our {n} hook entries; the install created it")
    elif res["changed"]:
        report.act("edit", str(path), f"{n} Sophia hook entr{'y' if n == 1 else 'ies'} out; your keys and "
                   f"hooks kept{'; old file backed up to ' + res['backup'] if res['backup'] else ''}")


def _mcp(report: Report, target: dict[str, Any]) -> None:
    """Our MCP server's entry, when it is still the one the install wrote (its file goes when the install
    created it and nothing else is in it)."""
    rec = target.get("mcp") or {}
    if not rec.get("file") or not rec.get("command"):
        return
    path = Path(rec["file"])
    try:
        res = mcp_config.remove(path, rec.get("name") or mcp_config.NAME, rec["command"],
                                delete_if_empty=bool(rec.get("created")), dry_run=report.dry_run)
    except (mcp_config.ConfigError, OSError) as exc:
        report.warn(f"left {path} as it is ({exc}); remove the sophia-memory MCP server by hand")
        return
    if res["deleted"]:
        report.act("delete", str(path), "it held only our MCP server; the install created it")
    elif res["changed"]:
        report.act("edit", str(path), "the sophia-memory MCP server out, everything else kept")


def _claude_md_path(target: dict[str, Any]) -> Path:
    return Path((target.get("claude_md") or {}).get("path") or Path(target["claude_dir"]) / "CLAUDE.md")


def _claude_md(report: Report, target: dict[str, Any]) -> None:
    record = target.get("claude_md") or {}
    path = _claude_md_path(target)
    step = claude_md.plan(path, record)
    if step is None:
        return
    if step["action"] == "delete":
        report.act("delete", str(path), "it held only the System 3 block")
    elif step["action"] == "strip":
        mode = f"; mode {step['mode']:o} restored" if step["mode"] is not None else ""
        report.act("edit", str(path), f"the System 3 block out, your text kept as it was{mode}")
    lock = step.get("lock") or (step["path"] if step["action"] == "lock" else None)
    if lock:
        report.act("remove", lock)
    if not report.dry_run:
        claude_md.clean(step)


def _rmdirs(report: Report, dirs: list[str]) -> None:
    """Remove each folder that is now empty, deepest first (a folder with anything in it stays)."""
    for d in sorted(set(dirs), key=lambda x: x.count(os.sep), reverse=True):
        path = Path(d)
        if not path.is_dir() or path.is_symlink():
            continue
        # what was removed just before counts as gone (a dry run has only noted it)
        gone = {a["path"] for a in report.actions if a["action"] in ("remove", "rmdir", "delete")}
        if any(str(x) not in gone for x in path.iterdir()):
            continue
        report.act("rmdir", d)
        if not report.dry_run:
            try:
                path.rmdir()
            except OSError:
                report.actions.pop()


def _target(report: Report, target: dict[str, Any], kit: str) -> None:
    _settings(report, target, kit)
    _mcp(report, target)
    _claude_md(report, target)
    for p in [*target.get("dirs", []), *target.get("files", [])]:
        _remove(report, p)
    _rmdirs(report, target.get("created_dirs", []))


def _launcher(report: Report, launcher: str | None) -> None:
    if not launcher:
        return
    path = Path(launcher)
    if path.is_file() and not path.is_symlink():
        try:
            ours = any(line.startswith(LAUNCHER_TAG) for line in path.read_text(errors="replace").splitlines()[:3])
        except OSError:
            ours = False
        if not ours:
            report.warn(f"{launcher} is no longer ours; left alone")
            return
    _remove(report, launcher)


def _identity_file(report: Report, home: Path, done: list[Path]) -> None:
    """The CLAUDE.md ``s3 refresh-identity`` last wrote, when no target covered it (a --project install
    writes ~/.claude/CLAUDE.md; --output elsewhere): its block goes too, nothing else is known of it."""
    try:
        written = json.loads(paths.identity_record_path(home).read_text(encoding="utf-8")).get("path")
    except (OSError, ValueError, AttributeError):
        return
    if isinstance(written, str) and os.path.isabs(written) and \
            os.path.realpath(written) not in {os.path.realpath(d) for d in done}:
        _claude_md(report, {"claude_dir": str(Path(written).parent), "claude_md": {"path": written}})


def _codex(report: Report, data: dict[str, Any]) -> None:
    """What ``install.sh --codex`` added to Codex (the manifest's ``codex`` record), exactly that."""
    record = data.get("codex")
    if not isinstance(record, dict):
        return
    kit = data.get("kit_dir") or ""
    try:
        for action, path, detail in codex.remove(record, kit, dry_run=report.dry_run):
            report.act(action, path, detail)
    except (codex.CodexError, OSError, ValueError) as exc:
        report.warn(f"left Codex's files as they are ({exc}); remove the Sophia hooks from "
                    f"{record.get('hooks_json')} and the block from {record.get('config_toml')} by hand")


def _shared(report: Report, data: dict[str, Any]) -> None:
    _codex(report, data)
    _launcher(report, data.get("launcher"))
    _remove(report, data.get("kit_dir"))
    venv = data.get("venv") or {}
    if venv.get("created"):
        _remove(report, venv.get("path"))
    _rmdirs(report, data.get("created_dirs") or [])


# ---------------------------------------------------------------------------------------------
# the whole


def _confirm_purge(opts: Options) -> None:
    if not opts.purge or not opts.sophia_home.is_dir() or opts.yes or opts.dry_run:
        return
    if not sys.stdin.isatty():
        raise Refused(f"--purge deletes all memory in {opts.sophia_home}; run with --yes to confirm "
                      "(no terminal to ask on)")
    answer = input(f"Delete ALL Sophia memory in {opts.sophia_home} (episodes, rules, models)? "
                   "This cannot be undone. [y/N] ")
    if not answer.lower().startswith("y"):
        raise Refused("cancelled; nothing was removed")


def _select(data: dict[str, Any], opts: Options) -> list[dict[str, Any]]:
    if opts.purge:
        return list(data["targets"])
    t = manifest.find_target(data, str(opts.claude_dir))
    return [t] if t else []


def run(opts: Options, report: Report) -> int:
    """Uninstall as ``opts`` says; returns the exit code (raises :class:`Refused` before any change)."""
    _confirm_purge(opts)
    path = opts.sophia_home / "install-manifest.json"
    if not path.is_file():
        if opts.purge and opts.sophia_home.is_dir():
            report.say(f"no install manifest; purging {opts.sophia_home}")
            _remove(report, str(opts.sophia_home))
        else:
            report.say(f"nothing to uninstall: {path} not found")
        return 0
    try:
        data = manifest.load(path)
    except ValueError as exc:
        raise Refused(str(exc)) from exc
    if opts.codex_only:
        return _codex_only(report, path, data)
    targets = _select(data, opts)
    if not targets:
        report.say(f"no install recorded for {opts.claude_dir} in {path} (installed with --project DIR?)")
        return 0
    report.say(f"removing Sophia System 3 from {', '.join(t['claude_dir'] for t in targets)}")
    kit = data.get("kit_dir") or str(opts.sophia_home / "kit")
    for t in targets:
        _target(report, t, kit)
    remaining = [t for t in data["targets"] if all(t is not x for x in targets)]
    if not report.dry_run:
        if remaining:
            manifest.save(path, {**data, "targets": remaining})
        else:
            path.unlink(missing_ok=True)
    if not remaining:
        _identity_file(report, opts.sophia_home, [_claude_md_path(t) for t in targets])
        _shared(report, data)
    return _finish(opts, report)


def _finish(opts: Options, report: Report) -> int:
    """The memory: purged (``--purge``) or kept, said either way."""
    if opts.purge:
        _remove(report, str(opts.sophia_home))
        report.say(f"purged {opts.sophia_home}")
    elif opts.sophia_home.is_dir():
        report.say(f"kept your memory in {opts.sophia_home} (to delete it too: rm -rf {opts.sophia_home})")
    if report.dry_run:
        report.say("dry run: nothing was changed")
    report.say("done")
    return 0


def _codex_only(report: Report, path: Path, data: dict[str, Any]) -> int:
    """``--codex``: take the kit out of Codex and nothing else (Claude Code's install stays)."""
    if not data.get("codex"):
        report.say(f"nothing to remove from Codex: {path} records no Codex install")
        return 0
    report.say("removing Sophia System 3 from Codex")
    _codex(report, data)
    if not report.dry_run:
        manifest.save(path, {k: v for k, v in data.items() if k != "codex"})
    report.say("dry run: nothing was changed" if report.dry_run else "done")
    return 0


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    p = argparse.ArgumentParser(prog="uninstall.sh", description=__doc__.split("\n\n")[0])
    p.add_argument("-y", "--yes", action="store_true", help="no questions")
    p.add_argument("--purge", action="store_true",
                   help="also delete $SOPHIA_HOME (all memory), after removing every install it lists; asks "
                        "first unless --yes; refused without --yes when stdin is not a terminal")
    p.add_argument("--project", metavar="DIR", help="remove the install made with `install.sh --project DIR`")
    p.add_argument("-n", "--dry-run", action="store_true", help="print what would be removed, change nothing")
    p.add_argument("--codex", action="store_true", help="remove only what `install.sh --codex` added to Codex")
    p.add_argument("--json", action="store_true", help="print what was done as one JSON object")
    return p.parse_args(argv), p


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    global PROG
    PROG = prog or PROG
    args, _ = parse(argv)
    report = Report(dry_run=args.dry_run, quiet=args.json)
    try:
        opts = default_options(args.project, purge=args.purge, yes=args.yes, dry_run=args.dry_run,
                               codex_only=args.codex)
        code = run(opts, report)
    except Refused as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code
    except OSError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"dry_run": report.dry_run, "actions": report.actions, "messages": report.messages}))
    return code


if __name__ == "__main__":
    sys.exit(main())
