"""What the digests cost: one line per headless run in ``digests/ledger.jsonl``, and the daily caps.

Each line: when (``at``, the local ``day``), which job and stage, whether it worked (and why not), the
cost in USD (``total_cost_usd`` of the run's JSON result), its tokens and their ``usage`` breakdown. A
killed run reports nothing, so it is not in the ledger (its cost is not known). The caps are
``learning_daily_max_jobs`` (distinct jobs that ran today) and ``learning_daily_max_usd`` (today's
total); a day is the user's local calendar day.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..atomic import append_line
from ..timeutil import iso
from .queue import digests_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .headless import Outcome

CAP_REACHED = "daily cap reached"


def ledger_path(home: Path) -> Path:
    return digests_dir(home) / "ledger.jsonl"


def day(at: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(at))


def record(home: Path, job_id: str, stage: str, out: Outcome) -> dict[str, Any]:
    entry = {"at": iso(), "day": day(), "job": job_id, "stage": stage, "ok": out.ok, "reason": out.reason,
             "cost_usd": round(out.cost_usd, 6), "tokens": out.tokens(), "usage": out.usage,
             "seconds": round(out.seconds, 2)}
    append_line(ledger_path(home), json.dumps(entry, ensure_ascii=False, default=str))
    return entry


def entries(home: Path, on_day: str | None = None) -> list[dict[str, Any]]:
    """The ledger's lines (of one day when ``on_day`` is given); a damaged line is skipped."""
    try:
        lines = ledger_path(home).read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict) and (on_day is None or e.get("day") == on_day):
            out.append(e)
    return out


def today(home: Path, on_day: str | None = None) -> dict[str, Any]:
    """Today's totals: distinct jobs run, headless runs, USD, tokens."""
    es = entries(home, on_day or day())
    return {"day": on_day or day(), "jobs": len({e.get("job") for e in es}), "runs": len(es),
            "cost_usd": round(sum(float(e.get("cost_usd") or 0) for e in es), 6),
            "tokens": sum(int(e.get("tokens") or 0) for e in es)}


def cap_reason(home: Path, cfg: dict[str, Any], job_id: str = "") -> str | None:
    """Why no further job may run today (None: the caps allow one). The job already counted today
    (a second stage, a retry) is never stopped by the job cap, only by the USD cap."""
    t = today(home)
    max_jobs, max_usd = cfg.get("learning_daily_max_jobs", 20), cfg.get("learning_daily_max_usd", 0.5)
    ran = {e.get("job") for e in entries(home, t["day"])}
    if t["jobs"] >= max_jobs and job_id not in ran:
        return f"{CAP_REACHED}: {t['jobs']} jobs today (learning_daily_max_jobs = {max_jobs})"
    if t["cost_usd"] >= max_usd:
        return f"{CAP_REACHED}: ${t['cost_usd']:.2f} spent today (learning_daily_max_usd = ${max_usd:.2f})"
    return None


def next_day(now: float | None = None) -> float:
    """When the next local day starts (the caps count per local calendar day)."""
    t = time.localtime(now)
    return time.mktime((t.tm_year, t.tm_mon, t.tm_mday + 1, 0, 0, 0, 0, 0, -1))


def deferral(home: Path, cfg: dict[str, Any], job_id: str = "", now: float | None = None) -> dict[str, Any] | None:
    """Why a pending job waits for the daily caps and from when it may run: ``cap`` (the reason),
    ``runs_after`` (ISO, UTC; None while a cap is 0) and ``text`` (one line). None: the caps let it run."""
    cap = cap_reason(home, cfg, job_id)
    if cap is None:
        return None
    detail = cap.removeprefix(f"{CAP_REACHED}: ")
    if not cfg.get("learning_daily_max_jobs", 20) or not cfg.get("learning_daily_max_usd", 0.5):
        return {"cap": cap, "runs_after": None,
                "text": f"waiting for the daily cap: {detail}; none runs while a cap is 0"}
    at = next_day(now)
    from datetime import UTC, datetime

    return {"cap": cap, "runs_after": iso(datetime.fromtimestamp(at, UTC)),
            "text": f"waiting for the daily cap: {detail}; runs after "
                    f"{time.strftime('%Y-%m-%d %H:%M %Z', time.localtime(at))}, at the next session's end or "
                    "`s3 digest run`"}


def summary(home: Path, enabled: bool, cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``s3 status`` shows: the switch, the queue's counts, today's spend (with ``cfg``: against the
    caps, and why no job may run today when a cap is reached)."""
    from .queue import counts

    out = {"enabled": enabled, **counts(home), "today": today(home)}
    if cfg is not None:
        out["caps"] = {"jobs": cfg.get("learning_daily_max_jobs", 20), "usd": cfg.get("learning_daily_max_usd", 0.5)}
        out["stopped"] = cap_reason(home, cfg)
    return out


def summary_line(s: dict[str, Any]) -> str:
    t, caps = s["today"], s.get("caps")
    limits = f" (caps {caps['jobs']} jobs, ${caps['usd']:.2f} a day)" if caps else ""
    stopped = f"; no more today: {s['stopped']}" if s.get("stopped") else ""
    return (f"Digests: learning {'on' if s['enabled'] else 'off'}; {s['pending']} pending, {s['done']} done, "
            f"{s['parked']} parked; today {t['jobs']} jobs, ${t['cost_usd']:.2f}{limits}{stopped}")
