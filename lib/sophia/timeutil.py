"""Time helpers. Standard library only (imported by hooks).

All stored times are ISO 8601 in UTC with a ``Z`` suffix. Naive input is read as UTC.
"""

from __future__ import annotations

from datetime import UTC, date, datetime


def now() -> datetime:
    return datetime.now(UTC)


def iso(dt: datetime | None = None) -> str:
    d = dt or now()
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse(value: str | datetime | date | None) -> datetime | None:
    """Parse an ISO date or date-time (``Z`` or offset or naive). ``None``/invalid -> ``None``."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    s = str(value).strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    try:
        d = datetime.fromisoformat(s)
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=UTC)
