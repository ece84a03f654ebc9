"""Conflict detection inside a scene (EverMemOS 3.3) with cheap lexical signals.

Signals: (1) negation: the same content terms (Jaccard >= 0.6) with opposite negation parity
("User drinks coffee" / "User does not drink coffee"); (2) same subject, same functional
predicate, different value ("User lives in Paris" / "User lives in Berlin", "The user's
favourite editor is vim" / "... is emacs"). Resolution by recency: the older memory is kept,
marked superseded (``meta.superseded_by``; ``valid_until`` = when the newer one took effect, so
``--as-of`` still finds it), and a ConflictRecord is appended to ``memory/conflicts.jsonl``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .. import paths
from ..atomic import append_line
from ..timeutil import iso, parse
from .text import content_id, content_terms, jaccard, negated, normalise

_FUNCTIONAL = (
    r"lives in|lived in|is living in|moved to|relocated to|is based in|works at|works for|worked at|"
    r"is employed at|is married to|is dating|drives|studies at|is studying at"
)
_CANON = {"lived in": "lives in", "is living in": "lives in", "moved to": "lives in", "relocated to": "lives in",
          "is based in": "lives in", "worked at": "works at", "works for": "works at", "is employed at": "works at",
          "is studying at": "studies at"}
_PRED = re.compile(rf"^(?P<subj>.+?)\s+(?P<pred>{_FUNCTIONAL}|is|are|was|were)\s+(?P<val>.+)$")


def _triple(text: str) -> tuple[str, str, str] | None:
    m = _PRED.match(normalise(text))
    if not m:
        return None
    subj, pred, val = m.group("subj"), m.group("pred"), m.group("val")
    if pred in ("is", "are", "was", "were"):
        # only attribute-like subjects ("user's favourite editor", "the deadline"): a one-word
        # subject ("alice is ...") describes many things at once
        if len(subj.split()) < 2:
            return None
        pred = "is"
    return subj.removeprefix("the "), _CANON.get(pred, pred), val


def signal(new_text: str, old_text: str) -> str | None:
    if normalise(new_text) == normalise(old_text):
        return None
    a, b = set(content_terms(new_text)), set(content_terms(old_text))
    if negated(new_text) != negated(old_text) and jaccard(a, b) >= 0.6:
        return "negation"
    ta, tb = _triple(new_text), _triple(old_text)
    if ta and tb and ta[0] == tb[0] and ta[1] == tb[1] and negated(new_text) == negated(old_text):
        va, vb = set(content_terms(ta[2])), set(content_terms(tb[2]))
        if va and vb and jaccard(va, vb) < 0.5:
            return "same_subject_different_value"
    return None


def _when(item: dict[str, Any]) -> str:
    return str(item.get("event_time") or item.get("timestamp") or "")


def detect_and_resolve(new: dict[str, Any], existing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check ``new`` against active items of its scene; mark losers superseded (in place).
    Returns ConflictRecords."""
    records: list[dict[str, Any]] = []
    scene = new.get("scene_id")
    if not scene:
        return records
    for old in existing:
        if old is new or old.get("id") == new.get("id") or old.get("scene_id") != scene:
            continue
        if (old.get("meta") or {}).get("superseded_by"):
            continue
        sig = signal(str(new.get("text", "")), str(old.get("text", "")))
        if not sig:
            continue
        t_new, t_old = parse(_when(new)), parse(_when(old))
        newer, older = (new, old) if (t_old is None or (t_new is not None and t_new >= t_old)) else (old, new)
        om = older.setdefault("meta", {})
        om["superseded_by"] = newer["id"]
        om["superseded_at"] = iso()
        took_effect = _when(newer) or iso()
        if not older.get("valid_until") or str(older["valid_until"]) > took_effect:
            older["valid_until"] = took_effect
        records.append({
            "id": content_id("conflict_", older["id"], newer["id"]),
            "detected_at": iso(),
            "scene_id": scene,
            "signal": sig,
            "resolution": "recency",
            "kept_id": newer["id"],
            "superseded_id": older["id"],
            "kept_text": newer.get("text"),
            "superseded_text": older.get("text"),
        })
    return records


def conflicts_path(home: Path | None = None) -> Path:
    return paths.memory_dir(home) / "conflicts.jsonl"


def load_records(home: Path | None = None) -> list[dict[str, Any]]:
    p = conflicts_path(home)
    out = []
    if p.exists():
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
    return out


def log_records(records: list[dict[str, Any]], home: Path | None = None) -> None:
    if not records:
        return
    known = {r.get("id") for r in load_records(home)}
    for rec in records:
        if rec["id"] not in known:
            append_line(conflicts_path(home), json.dumps(rec, ensure_ascii=False))
