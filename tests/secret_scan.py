"""Scan every byte of every file under a directory for secret values (used by the end-to-end secret tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CORPUS_PATH = Path(__file__).parent / "fixtures" / "secrets.jsonl"
WINDOW = 16


def load_corpus() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS_PATH.read_text("utf-8").splitlines() if line]


def needles(secret: str) -> set[bytes]:
    """The secret as stored raw, JSON-escaped, and (for long ones) every WINDOW-byte piece of it."""
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    out: set[bytes] = set()
    for f in forms:
        b = f.encode("utf-8")
        out.add(b)
        if len(b) >= 2 * WINDOW:
            out.update(b[i:i + WINDOW] for i in range(0, len(b) - WINDOW + 1))
    return out


def scan(root: Path, secrets: list[str]) -> tuple[int, list[str]]:
    """(files scanned, findings 'file: secret...'), reading every file (index.db, -wal, logs, buffers)."""
    table = [(s, needles(s)) for s in secrets]
    findings: list[str] = []
    files = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            if p.is_symlink() or not p.is_file():
                continue
            data = p.read_bytes()
            files += 1
            for s, ns in table:
                if any(n in data for n in ns):
                    findings.append(f"{p.relative_to(root)}: {s[:24]}...")
    return files, findings
