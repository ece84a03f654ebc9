"""s3 config list / get / set / unset: config.json through the one table of settings (config_defaults)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import emit_json, existing_home, fail, usage

config_app = typer.Typer(name="config", help="Read and change settings (config.json), checked against the "
                         "table of settings: a value a key does not accept is refused.", no_args_is_help=True)
app.add_typer(config_app, name="config")

KeyArg = Annotated[str, typer.Argument(metavar="KEY", help="A setting, e.g. learning_enabled or guardian.mode "
                                       "(`s3 config list` shows them all).")]
FIXED = ("schema_version",)  # written by `s3 init` and the migrations only


def _setting(key: str) -> Any:
    from ..config_defaults import BY_KEY

    s = BY_KEY.get(key)
    if s is None:
        usage(f"unknown setting {key!r} (see `s3 config list`)")
    return s


def _read() -> tuple[Any, dict[str, Any]]:
    """(config path, the raw file as a dict: {} when it is missing)."""
    from .. import paths
    from ..atomic import read_json
    from ..errors import StateFileError

    path = paths.config_path(existing_home())
    try:
        raw = read_json(path, default={})
    except StateFileError as exc:
        fail(str(exc), hint="run `s3 doctor --repair`")
    if not isinstance(raw, dict):
        fail(f"{path} does not hold a JSON object", hint="run `s3 doctor --repair`")
    return path, raw


def _lookup(raw: dict[str, Any], key: str) -> tuple[bool, Any]:
    section, _, name = key.rpartition(".")
    target = raw.get(section) if section else raw
    if isinstance(target, dict) and name in target:
        return True, target[name]
    return False, None


def _rows() -> list[dict[str, Any]]:
    from ..config_defaults import SETTINGS, check

    _, raw = _read()
    resolved, _ = check(raw)
    out = []
    for s in SETTINGS:
        is_set, _ = _lookup(raw, s.key)
        _, value = _lookup(resolved, s.key)
        out.append({"key": s.key, "value": value, "default": s.default, "set": is_set, "accepts": s.describe(),
                    "doc": s.doc})
    return out


@config_app.command("list")
def list_cmd(json_out: JsonOpt = False) -> None:
    """Every setting: its value (a bad one shows the default it falls back to), its default, what it does."""
    rows = _rows()
    if json_out:
        emit_json(rows)
        return
    width = max(len(r["key"]) for r in rows)
    for r in rows:
        note = "" if r["value"] == r["default"] else f"  (default {json.dumps(r['default'])})"
        typer.echo(f"{r['key']:<{width}}  {json.dumps(r['value'])}{note}")


@config_app.command("get")
def get_cmd(key: KeyArg, json_out: JsonOpt = False) -> None:
    """One setting's value (JSON), as the kit reads it."""
    _setting(key)
    row = next(r for r in _rows() if r["key"] == key)
    if json_out:
        emit_json(row)
        return
    typer.echo(json.dumps(row["value"]))


@config_app.command("set", context_settings={"ignore_unknown_options": True})  # VALUE may be -1
def set_cmd(
    key: KeyArg,
    value: Annotated[str, typer.Argument(metavar="VALUE", help="The new value: true/false, a number, a word, or "
                                         "a JSON list such as '[\"^terraform destroy\"]'.")],
    json_out: JsonOpt = False,
) -> None:
    """Set one setting; a value it does not accept is refused (exit 2) and the file is left as it was."""
    from ..config_defaults import check, parse_value

    s = _setting(key)
    if key in FIXED:
        usage(f"{key} is set by `s3 init` and its migrations; it cannot be set by hand")
    new = parse_value(s, value)
    section, _, name = key.rpartition(".")
    _, problems = check({section: {name: new}} if section else {name: new}, only=key)
    if problems:
        usage(problems[0])
    _write(key, new)
    if json_out:
        emit_json({"key": key, "value": new})
        return
    typer.echo(f"{key} = {json.dumps(new)}")


@config_app.command("unset")
def unset_cmd(key: KeyArg, json_out: JsonOpt = False) -> None:
    """Take one setting out of config.json: the default applies again."""
    s = _setting(key)
    if key in FIXED:
        usage(f"{key} is set by `s3 init` and its migrations; it cannot be unset")
    _write(key, None, remove=True)
    if json_out:
        emit_json({"key": key, "value": s.default})
        return
    typer.echo(f"{key} = {json.dumps(s.default)} (the default)")


def _write(key: str, value: Any, remove: bool = False) -> None:
    """Change one key of config.json under its lock, atomically; every other key stays as it is."""
    from ..atomic import read_json, write_json_atomic
    from ..locking import locked

    path, _ = _read()
    section, _, name = key.rpartition(".")
    with locked(path):
        raw = read_json(path, default={})
        target = raw.setdefault(section, {}) if section else raw
        if not isinstance(target, dict):
            fail(f"{path}: {section} is not a JSON object", hint="run `s3 doctor --repair`")
        if remove:
            target.pop(name, None)
        else:
            target[name] = value
        write_json_atomic(path, raw)
