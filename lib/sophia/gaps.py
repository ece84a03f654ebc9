"""Knowledge gaps: what one is, and where it is shown. Standard library only (SessionStart and the
state migration read it; ``models.KnowledgeGap`` is the same record for pydantic).

A gap is something the agent found it does not know (reflection's ``knowledge_gaps_identified``) or
keeps failing at (the zero-token learners' recurring failures). The self-model keeps each as a record::

    {"id": "gap_<12 hex>", "text": "...", "project": "/abs/project" or null, "is_global": false,
     "key": "<command key>\\x1f<error class>" or null, "source": "reflection" | "learner" | "unknown",
     "source_ids": [...], "opened_at": ISO or null, "closed_at": ISO or null, "closed_by": id or null}

- ``project``: where it was found. A gap about no project in particular has none and is then marked
  ``is_global``; a gap with neither (an old string gap whose project could not be told) is *unscoped*:
  listed by ``s3 status`` and the viewer, never shown at SessionStart (:func:`shown_in`).
- ``key``: what a learner closes it by (:func:`failure_key`: the same key ``learning/commands.json``
  counts a failure under).
- open until ``closed_at`` is set (``closed_by``: the procedure whose fix closed it, or who did).

Adding and closing gaps (under the self-model's lock) is ``sophia.memory.gaps``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

SOURCES = ("reflection", "learner", "unknown")


def failure_key(command_key: str, error_class: str) -> str:
    """A recurring failure's key: its command key and error class (``learners.analyse``)."""
    return f"{command_key}\x1f{error_class}"


def gap_id(project: str | None, basis: str) -> str:
    """The same gap gets the same id: its project and its key, else its text (case and spacing aside)."""
    import hashlib  # a few ms: only where an id is made, not on SessionStart's read of stored records

    norm = " ".join(basis.lower().split())
    return "gap_" + hashlib.sha256(f"{project or ''}\x1e{norm}".encode()).hexdigest()[:12]


def record(text: str, *, project: str | None = None, key: str | None = None, source: str = "unknown",
           source_ids: Iterable[str] = (), is_global: bool = False, opened_at: str | None = None) -> dict[str, Any]:
    """A new, open gap."""
    text = " ".join(str(text).split())
    return {"id": gap_id(project, key or text), "text": text, "project": project or None,
            "is_global": bool(is_global and not project), "key": key, "source": source,
            "source_ids": [str(s) for s in source_ids], "opened_at": opened_at, "closed_at": None,
            "closed_by": None}


def from_value(value: Any) -> dict[str, Any] | None:
    """A stored gap as a record: a record as it is (its id filled in when missing), an old string gap
    as an unscoped record (``source`` unknown); None for anything else."""
    if isinstance(value, str):
        return record(value) if value.strip() else None
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        return None
    if value.get("id"):
        return value
    return dict(value, id=gap_id(value.get("project"), str(value.get("key") or value["text"])))


def is_open(gap: dict[str, Any]) -> bool:
    return not gap.get("closed_at")


def shown_in(gap: dict[str, Any], project: str | None) -> bool:
    """Whether SessionStart in ``project`` shows ``gap``: open, and of this project or marked global."""
    if not is_open(gap):
        return False
    if gap.get("project"):
        return bool(project) and gap["project"] == project
    return gap.get("is_global") is True


def records(values: Any) -> list[dict[str, Any]]:
    """The self-model's ``knowledge_gaps`` (records or old strings) as records, unreadable ones left out."""
    return [g for g in map(from_value, values if isinstance(values, list) else []) if g]


def shown_for(values: Any, project: str | None) -> list[dict[str, Any]]:
    """The gaps (``knowledge_gaps`` as stored) shown in ``project``, oldest first (:func:`shown_in`)."""
    return [g for g in records(values) if shown_in(g, project)]


def line(gap: dict[str, Any]) -> str:
    """One line for a listing (``s3 status``, ``s3 list gaps``, the viewer): id, text, where, closed."""
    where = f"project {gap['project']}" if gap.get("project") else ("global" if gap.get("is_global") else "no project")
    closed = ""
    if not is_open(gap):
        closed = f"; closed {str(gap.get('closed_at'))[:10]}" + (f" by {gap['closed_by']}" if gap.get("closed_by") else "")
    return f"[{gap.get('id')}] {' '.join(str(gap.get('text') or '').split())} ({where}{closed})"
