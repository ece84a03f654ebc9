"""Helpers of the team tests: rules written the way `s3 learn` writes them, the s3 CLI in a machine's
home, and a scan of every table of the team database."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def learn(home: Path, content: str, trigger: str = "Testing", confidence: float = 0.6) -> dict[str, Any]:
    from sophia.memory import indexing
    from sophia.memory.rules import add_or_merge, update_rules

    with update_rules(home) as rules:
        _, rule = add_or_merge(rules, trigger=trigger, content=content, confidence=confidence,
                               source="manual", source_episodes=[], digest=None)
        rule = dict(rule)
    indexing.upsert([indexing.rule_item(rule)], home)
    return rule


def s3(machine: Any, *args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = machine.env()
    env["PYTHONPATH"] = str(ROOT / "lib")
    return subprocess.run([sys.executable, "-m", "sophia.cli.entry", *args], env=env, input=input,
                          capture_output=True, text=True, timeout=timeout)


def s3_json(machine: Any, *args: str) -> Any:
    p = s3(machine, *args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def all_text(conn: Any) -> str:
    """Every column of every row of every table in the sophia schema, as text."""
    out = []
    for (table,) in conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'sophia'"):
        for row in conn.execute(f"SELECT t::text FROM sophia.{table} t"):
            out.append(row[0])
    return "\n".join(out)
