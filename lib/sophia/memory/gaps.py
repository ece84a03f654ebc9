"""Adding and closing knowledge gaps in the self-model (what a gap record is: :mod:`sophia.gaps`).

- :func:`add` (inside a self-model update) / :func:`add_gaps` (takes the lock): reflection adds what
  a session's digest found missing, the zero-token learners add recurring failures with their project
  and key. A gap already there (same id, or the same text in the same scope) is not added twice; a
  closed one found again is opened again.
- :func:`close` / :func:`close_gaps`: a learned fix closes its project's gaps by key.

At most ``MAX_GAPS`` are kept: past it the oldest closed ones go first, then the oldest open ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import gaps as gap_records
from .. import paths
from ..timeutil import iso, now
from .text import near_duplicate

MAX_GAPS = 100


def _same(a: Any, b: dict[str, Any]) -> bool:
    """``a`` (a stored KnowledgeGap) is the gap ``b`` (a new record): same id, or near-same text in the
    same scope (project, or global, or neither)."""
    if a.id == b["id"]:
        return True
    if (a.project, a.is_global) != (b["project"], b["is_global"]):
        return False
    return not (a.key and b["key"]) and near_duplicate(b["text"], a.text, 0.85)


def add(sm: Any, new: Iterable[dict[str, Any]], at: datetime | None = None) -> list[str]:
    """Add the records ``new`` (:func:`sophia.gaps.record`) to the SelfModel ``sm``; the texts added
    (a closed gap found again counts: it is open again)."""
    from ..models import KnowledgeGap

    t = at or now()
    kept = list(sm.knowledge_gaps)
    added: list[str] = []
    for rec in new:
        if not rec.get("text"):
            continue
        old = next((g for g in kept if _same(g, rec)), None)
        if old is None:
            kept.append(KnowledgeGap.model_validate({**rec, "opened_at": rec.get("opened_at") or iso(t)}))
            added.append(rec["text"])
        elif not old.is_open:
            old.closed_at, old.closed_by, old.opened_at = None, None, t
            added.append(old.text)
    sm.knowledge_gaps = _capped(kept)
    return added


def _capped(kept: list[Any]) -> list[Any]:
    while len(kept) > MAX_GAPS:
        victim = next((g for g in kept if not g.is_open), kept[0])
        kept.remove(victim)
    return kept


def close(sm: Any, project: str, keys: Iterable[str], by: str, at: datetime | None = None) -> list[str]:
    """Close ``project``'s open gaps whose key is one of ``keys``, as closed by ``by``; their ids."""
    wanted = set(keys)
    closed = []
    for g in sm.knowledge_gaps:
        if g.is_open and g.project == project and g.key in wanted:
            g.closed_at, g.closed_by = at or now(), by
            closed.append(g.id)
    return closed


def _update(home: Path, fn: Callable[[Any], list[str]]) -> list[str]:
    """Run ``fn`` on the self-model under its lock; written only when ``fn`` changed something."""
    from ..models import SelfModel
    from ..state import _default_self_model, update_model

    with update_model(paths.self_model_path(home), SelfModel, _default_self_model, home) as sm:
        out = fn(sm)
        if out:
            sm.updated_at = now()
    return out


def add_gaps(home: Path, new: Iterable[dict[str, Any]]) -> list[str]:
    """:func:`add` under the self-model's lock. For the learners: each record made with
    ``sophia.gaps.record(text, project=..., key=sophia.gaps.failure_key(...), source="learner")``."""
    records = list(new)
    return _update(home, lambda sm: add(sm, records)) if records else []


def close_gaps(home: Path, project: str, keys: Iterable[str], by: str) -> list[str]:
    """:func:`close` under the self-model's lock: a fix learned for ``keys`` (``sophia.gaps.failure_key``)
    in ``project`` closes its gaps; ``by`` is the procedure id of the fix. The ids closed."""
    wanted = list(keys)
    if not project or not wanted:
        return []
    return _update(home, lambda sm: close(sm, project, wanted, by))


def open_records(values: Any) -> list[dict[str, Any]]:
    """The open gaps among the self-model's ``knowledge_gaps`` (records or old strings), oldest first."""
    return [g for g in gap_records.records(values) if gap_records.is_open(g)]
