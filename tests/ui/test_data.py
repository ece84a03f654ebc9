"""What the viewer's overview charts: the capability history (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

from sophia.ui import charts, data


def test_capability_history_carries_each_domain_forward_by_day(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "capabilities.jsonl"
    log.parent.mkdir(parents=True)
    rows = [("2026-11-01T10:00:00Z", "python", 0.5), ("2026-11-01T18:00:00Z", "python", 0.55),
            ("2026-11-03T09:00:00Z", "docker", 0.4), ("2026-11-05T09:00:00Z", "python", 0.6)]
    log.write_text("".join(json.dumps({"at": a, "domain": d, "proficiency": p}) + "\n" for a, d, p in rows)
                   + "{torn line\n")
    h = data.capability_history(tmp_path)
    assert h["days"] == ["2026-11-01", "2026-11-03", "2026-11-05"]
    assert h["series"] == {"python": [0.55, 0.55, 0.6], "docker": [None, 0.4, 0.4]}
    svg = str(charts.time_lines(h["days"], h["series"], percent=True, step_days=1, breaks=False))
    assert "<svg" in svg and "python" in svg and "docker" in svg and "100%" in svg
    assert data.capability_history(tmp_path / "none") == {"days": [], "series": {}}
