"""``semantic_rules.json``: add with near-duplicate merging (seed 13.3) and confidence decay (13.4)."""

from __future__ import annotations

import contextlib

from .. import paths
from ..atomic import read_json, write_json_atomic
from ..errors import BadInput, StateFileError
from ..kinds import MAX_DOMAIN_CHARS, MAX_RULE_CHARS
from ..locking import locked

TYPE_CHECKING = False  # typing, uuid and hashlib (.text) cost ms that s3 list rules need not pay: used where needed
if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime
    from pathlib import Path
    from typing import Any

MERGE_BOOST = 0.05
MAX_DIGESTS = 20


class RuleTooLong(BadInput):
    hint = "a rule is a sentence or two: keep the lesson, or split it into several rules"


def check_rule_text(content: str, trigger: str) -> None:
    """Raises RuleTooLong when the rule or its domain is over its cap."""
    for what, text, cap in (("rule", content, MAX_RULE_CHARS), ("domain", trigger, MAX_DOMAIN_CHARS)):
        if len(text) > cap:
            raise RuleTooLong(f"{what} too long ({len(text):,} characters; at most {cap:,} characters)")

# Writers queue behind each other (8 concurrent `s3 learn` on 2 busy cores wait > 5 s).
WRITE_TIMEOUT = 30.0


def load_rules(home: Path | None = None) -> list[dict[str, Any]]:
    p = paths.rules_path(home)
    data = read_json(p, default=[])
    if not isinstance(data, list):
        raise StateFileError(p, "expected a JSON array of semantic rules")
    return [r for r in data if isinstance(r, dict)]


@contextlib.contextmanager
def update_rules(home: Path | None = None) -> Iterator[list[dict[str, Any]]]:
    p = paths.rules_path(home)
    with locked(p, timeout=WRITE_TIMEOUT):
        import copy

        rules = load_rules(home)
        before = copy.deepcopy(rules)
        yield rules
        if rules != before:
            from ..state import last_good_path

            write_json_atomic(p, rules, keep_last=last_good_path(p, home))
            _drop_kept_lists(home)


def _drop_kept_lists(home: Path | None) -> None:
    """What ``s3 list rules`` kept of the rules before (``cli/list_cache.py``): stale now, and a rule forgotten
    here must not stay on disk there."""
    import os

    for json_out in (False, True):
        with contextlib.suppress(OSError):
            os.unlink(paths.list_output_path("rules", json_out, home))


def find_similar(rules: list[dict[str, Any]], trigger: str, content: str) -> dict[str, Any] | None:
    from .text import near_duplicate, normalise

    for r in rules:
        same_trigger = normalise(str(r.get("trigger_concept", ""))) == normalise(trigger)
        threshold = 0.8 if same_trigger else 0.9
        if near_duplicate(str(r.get("rule_content", "")), content, threshold):
            return r
    return None


def add_or_merge(rules: list[dict[str, Any]], *, trigger: str, content: str, confidence: float,
                 source: str, source_episodes: list[str], digest: str | None,
                 at: datetime | None = None) -> tuple[str, dict[str, Any]]:
    """Returns ("added" | "merged" | "unchanged", rule). ``digest`` makes a repeat a no-op."""
    from ..timeutil import iso, now  # datetime: not for s3 list rules

    check_rule_text(content, trigger)
    stamp = iso(at or now())
    existing = find_similar(rules, trigger, content)
    if existing is not None:
        seen = list(existing.get("validated_by") or [])
        if digest and (digest in seen or existing.get("origin_digest") == digest):
            return "unchanged", existing
        existing["validation_count"] = int(existing.get("validation_count") or 0) + 1
        new_conf = min(1.0, max(float(existing.get("confidence") or 0.0), confidence) + MERGE_BOOST)
        existing["confidence"] = round(new_conf, 4)
        existing["base_confidence"] = existing["confidence"]
        existing["last_validated"] = stamp
        existing["source_episodes"] = sorted(set(existing.get("source_episodes") or []) | set(source_episodes))
        if digest:
            existing["validated_by"] = (seen + [digest])[-MAX_DIGESTS:]
        return "merged", existing
    from uuid import uuid4

    rule = {
        "id": f"rule_{uuid4().hex[:12]}",
        "trigger_concept": trigger,
        "rule_content": content,
        "source": source,
        "source_episodes": list(source_episodes),
        "confidence": round(confidence, 4),
        "last_validated": None,
        "validation_count": 0,
        "created_at": stamp,
    }
    if digest:
        rule["origin_digest"] = digest
    rules.append(rule)
    return "added", rule


def decayed_confidence(rule: dict[str, Any], at: datetime | None = None) -> float:
    """Seed 13.4: 5% per month without validation. A function of time (idempotent), from the
    confidence the rule had when it was last validated (``base_confidence``)."""
    from ..timeutil import now, parse

    t = at or now()
    ref = parse(rule.get("last_validated")) or parse(rule.get("created_at"))
    base = float(rule.get("base_confidence", rule.get("confidence") or 0.0))
    if ref is None:
        return base
    days = (t - ref).days
    if days <= 30:
        return base
    return round(base * (0.95 ** (days / 30)), 4)


def apply_decay(rules: list[dict[str, Any]], at: datetime | None = None) -> list[dict[str, Any]]:
    changed = []
    for r in rules:
        new = decayed_confidence(r, at)
        cur = float(r.get("confidence") or 0.0)
        if abs(new - cur) > 1e-9:
            r.setdefault("base_confidence", cur)
            changed.append({"id": r["id"], "before": cur, "after": new})
            r["confidence"] = new
    return changed
