"""The automatic-learning switch for install.sh: what it costs, whether it is on, turning it on or off.

Standard library only: install.sh runs it as ``python -I -S learning.py``. The caps and the switch's
default come from ``sophia/config_defaults.py`` (loaded by path: one place for every default).

    learning.py caps                                 "<max jobs>\\t<max usd>" (the defaults)
    learning.py describe --config PATH               one line: on or off, and what it costs
    learning.py set --config PATH (--on | --off)     write learning_enabled (atomic, other keys kept)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


config_defaults = _load("sophia_config_defaults", HERE.parent / "config_defaults.py")


def settings(config: Path) -> dict[str, Any]:
    """The config (checked, defaults filled in); a missing or broken file means the defaults."""
    return dict(config_defaults.load(config)[0])


def caps(cfg: dict[str, Any]) -> tuple[int, float]:
    return int(cfg["learning_daily_max_jobs"]), float(cfg["learning_daily_max_usd"])


def describe(config: Path) -> str:
    cfg = settings(config)
    jobs, usd = caps(cfg)
    if cfg["learning_enabled"]:
        return (f"on: finished sessions are digested by your own `claude`, headless; at most {jobs} jobs "
                f"and ${usd:.2f} a day (turn off: `s3 config set learning_enabled false`)")
    return f"off (turn on: `s3 config set learning_enabled true`; it costs tokens, at most {jobs} jobs and ${usd:.2f} a day)"


def set_switch(config: Path, on: bool) -> bool:
    """Write ``learning_enabled``; True when the file changed. Refuses a file that is not a JSON object."""
    write_through = _load("sophia_settings_merge", HERE / "settings_merge.py").write_through
    try:
        raw = json.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raw = {}
    if not isinstance(raw, dict):
        raise ValueError(f"{config} does not hold a JSON object")
    if raw.get("learning_enabled") is on:
        return False
    raw["learning_enabled"] = on
    config.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    mode = config.stat().st_mode & 0o777 if config.exists() else 0o600
    write_through(config, json.dumps(raw, indent=2, ensure_ascii=False) + "\n", mode)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="learning.py", description=__doc__.split("\n")[0])
    ap.add_argument("action", choices=["caps", "describe", "set"])
    ap.add_argument("--config", type=Path)
    onoff = ap.add_mutually_exclusive_group()
    onoff.add_argument("--on", action="store_true")
    onoff.add_argument("--off", action="store_true")
    a = ap.parse_args(argv)
    if a.action != "caps" and not a.config:
        ap.error("--config is required")
    try:
        if a.action == "caps":
            jobs, usd = caps(config_defaults.check({})[0])
            print(f"{jobs}\t{usd:.2f}")
        elif a.action == "describe":
            print(describe(a.config))
        else:
            if not (a.on or a.off):
                ap.error("set needs --on or --off")
            set_switch(a.config, a.on)
    except (OSError, ValueError) as exc:
        print(f"learning: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
