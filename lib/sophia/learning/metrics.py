"""Growth, measured from the episodes: fewer steps and fewer failures on recurring tasks (the seed's claim).

Per project, per task cluster and per ISO week (of the episode's start), over non-trivial episodes:

- **steps per episode**: its tool calls (``tool_call_count``);
- **failure rate**: failed calls / calls, over the actions the episode keeps (a call the user rejected or
  interrupted is no failure), and the share of episodes whose outcome is ``SUCCESS``;
- **repeated errors**: an error signature (the tool, a Bash command's program, the error with its
  particulars masked: :func:`learners.error_class`) already seen in an earlier episode of the project.

A **task cluster** is explainable on purpose: in time order, an episode joins the cluster of its project
whose most common keywords share at least ``CLUSTER_SHARED`` with its own first ``TERMS`` keywords (the
goal's words rank first), else it starts one; the cluster is named by its three most common keywords.
Only clusters with two episodes or more (a task that recurred) are reported.

Reading every episode file on each ``s3 status`` would cost ~0.1 ms per episode; one row per episode is
kept in ``learning/metrics.json`` under the file's mtime and size, so status reads the files that changed
only (a cache: lost or corrupt, it is rebuilt). Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections import Counter
from pathlib import Path

from ..atomic import read_json, write_json_atomic
from ..errors import SophiaError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TERMS = 6  # an episode's first keywords that place it in a cluster
CLUSTER_SHARED = 2  # keywords an episode must share with a cluster's most common ones
CLUSTER_TOP = 8
WINDOW_DAYS = 28  # status: the last four weeks against the four before
MIN_EPISODES = 5  # in each window, or status says nothing
CACHE_VERSION = 1
_EXIT = re.compile(r"^exit code \d+\s*", re.I)
_REJECTED = re.compile(r"doesn't want to proceed|tool use was rejected|interrupted by user|request interrupted", re.I)


def cache_path(home: Path) -> Path:
    return home / "learning" / "metrics.json"


# ---------------------------------------------------------------- one episode


def signature(error: str) -> str | None:
    """``"Bash pytest: Exit code 1 ..."`` -> ``"Bash pytest: <error class>"``; None for a rejection. The
    episode's error is one line, already redacted."""
    from .learners import error_class

    head, _, text = error.partition(": ")
    if _REJECTED.search(text):
        return None
    tool, _, what = head.partition(" ")
    word = what.split(" ", 1)[0] if tool == "Bash" else ""  # a file tool's path differs every time
    return f"{tool} {word}".rstrip() + ": " + error_class(_EXIT.sub("", text))


def row(ep: dict[str, Any]) -> dict[str, Any] | None:
    """What the metrics keep of an episode (None: trivial or without a start)."""
    start = ep.get("started_at")
    if ep.get("trivial") or not isinstance(start, str) or not start:
        return None
    actions = [a for a in ep.get("actions") or [] if isinstance(a, dict)]
    errors = [e for e in ep.get("errors") or [] if isinstance(e, str)]
    rejected = sum(1 for e in errors if _REJECTED.search(e))
    sigs = sorted({s for s in (signature(e) for e in errors) if s})
    return {"id": ep.get("id"), "project": ep.get("project") or "", "start": start,
            "steps": int(ep.get("tool_call_count") or len(actions)), "calls": len(actions),
            "failed": max(0, sum(1 for a in actions if a.get("outcome") == "error") - rejected),
            "outcome": ep.get("outcome") or "UNKNOWN", "terms": [str(k) for k in ep.get("keywords") or []][:TERMS],
            "errors": sigs}


def _episode_files(home: Path) -> list[os.DirEntry[str]]:
    from .. import paths

    try:
        return [e for e in os.scandir(paths.episodes_dir(home))
                if e.name.endswith(".json") and not e.name.startswith(("index", "."))]
    except OSError:
        return []


def rows(home: Path) -> list[dict[str, Any]]:
    """A row per non-trivial episode, oldest first; unchanged files are read from the cache."""
    try:
        cache = read_json(cache_path(home), default=None)
    except SophiaError:
        cache = None
    old = cache.get("episodes") if isinstance(cache, dict) and cache.get("version") == CACHE_VERSION else None
    old = old if isinstance(old, dict) else {}
    new: dict[str, Any] = {}
    for entry in _episode_files(home):
        try:
            st = entry.stat()
        except OSError:
            continue
        sig = [st.st_mtime_ns, st.st_size]
        hit = old.get(entry.name)
        if isinstance(hit, dict) and hit.get("sig") == sig:
            new[entry.name] = hit
            continue
        try:
            ep = read_json(entry.path, default=None)
        except SophiaError:
            continue  # s3 doctor names it
        new[entry.name] = {"sig": sig, "row": row(ep) if isinstance(ep, dict) else None}
    if new != old:
        with contextlib.suppress(SophiaError, OSError):  # a cache: status works without it
            write_json_atomic(cache_path(home), {"version": CACHE_VERSION, "episodes": new})
    return sorted((v["row"] for v in new.values() if v.get("row")), key=lambda r: (r["start"], str(r["id"])))


# ---------------------------------------------------------------- clusters, repeats, weeks


def mark_repeats(rs: list[dict[str, Any]]) -> None:
    """``repeated``: how many of a row's error signatures an earlier episode of its project had."""
    seen: dict[str, set[str]] = {}
    for r in rs:
        before = seen.setdefault(r["project"], set())
        r["repeated"] = sum(1 for s in r["errors"] if s in before)
        before.update(r["errors"])


def cluster(rs: list[dict[str, Any]]) -> None:
    """``cluster``: the index of the row's task cluster within its project (rows in time order)."""
    by_project: dict[str, list[Counter[str]]] = {}
    for r in rs:
        clusters = by_project.setdefault(r["project"], [])
        terms = set(r["terms"])
        shared = [len(terms & {t for t, _ in c.most_common(CLUSTER_TOP)}) for c in clusters]
        best = max(range(len(shared)), key=lambda i: shared[i], default=-1)
        if best < 0 or shared[best] < CLUSTER_SHARED:
            clusters.append(Counter())
            best = len(clusters) - 1
        clusters[best].update(dict.fromkeys(r["terms"]).keys())  # in keyword order: ties rank the same every run
        r["cluster"] = best
    for r in rs:
        r["cluster_terms"] = [t for t, _ in by_project[r["project"]][r["cluster"]].most_common(3)]


def stats(rs: list[dict[str, Any]]) -> dict[str, Any]:
    calls = sum(r["calls"] for r in rs)
    n = len(rs)
    return {"episodes": n, "steps_per_episode": round(sum(r["steps"] for r in rs) / n, 1) if n else None,
            "failure_rate": round(sum(r["failed"] for r in rs) / calls, 3) if calls else None,
            "success_rate": round(sum(r["outcome"] == "SUCCESS" for r in rs) / n, 3) if n else None,
            "repeated_errors": sum(r.get("repeated", 0) for r in rs)}


def week(start: str) -> str:
    from ..timeutil import parse

    d = parse(start)
    if d is None:
        return "unknown"
    y, w, _ = d.isocalendar()
    return f"{y}-W{w:02d}"


def weekly(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    weeks: dict[str, list[dict[str, Any]]] = {}
    for r in rs:
        weeks.setdefault(week(r["start"]), []).append(r)
    return [{"week": w, **stats(weeks[w])} for w in sorted(weeks)]


def _project_series(project: str, rs: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[int, list[dict[str, Any]]] = {}
    for r in rs:
        groups.setdefault(r["cluster"], []).append(r)
    clusters = [{"task": " ".join(g[0]["cluster_terms"]), "terms": g[0]["cluster_terms"], **stats(g),
                 "weeks": weekly(g)} for g in groups.values() if len(g) >= 2]
    return {"project": project, **stats(rs), "weeks": weekly(rs),
            "clusters": sorted(clusters, key=lambda c: -c["episodes"])}


def series(home: Path, project: str | None = None, now: float | None = None) -> dict[str, Any]:
    """What ``s3 metrics --json`` prints: per project (and its recurring task clusters) per week, and
    the trend ``s3 status`` shows."""
    rs = rows(home)
    mark_repeats(rs)
    cluster(rs)
    if project:
        norm = os.path.normpath(project)
        rs = [r for r in rs if r["project"] and os.path.normpath(r["project"]) == norm]
    by_project: dict[str, list[dict[str, Any]]] = {}
    for r in rs:
        by_project.setdefault(r["project"], []).append(r)
    projects = [_project_series(p, g) for p, g in by_project.items()]
    return {"episodes": len(rs), "trend": trend(rs, now),
            "projects": sorted(projects, key=lambda p: -p["episodes"])}


# ---------------------------------------------------------------- the trend status shows


def trend(rs: list[dict[str, Any]], now: float | None = None) -> dict[str, Any] | None:
    """The last ``WINDOW_DAYS`` against the ``WINDOW_DAYS`` before; None when either has fewer than
    ``MIN_EPISODES`` episodes."""
    from ..timeutil import parse

    t = time.time() if now is None else now
    recent, before = [], []
    for r in rs:
        d = parse(r["start"])
        age = (t - d.timestamp()) / 86400 if d else -1
        if 0 <= age < WINDOW_DAYS:
            recent.append(r)
        elif WINDOW_DAYS <= age < 2 * WINDOW_DAYS:
            before.append(r)
    if len(recent) < MIN_EPISODES or len(before) < MIN_EPISODES:
        return None
    return {"window_days": WINDOW_DAYS, "before": stats(before), "recent": stats(recent)}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{round(x * 100)}%"


def trend_line(tr: dict[str, Any] | None) -> str | None:
    if not tr:
        return None
    b, r = tr["before"], tr["recent"]
    weeks = tr["window_days"] // 7
    return (f"last {weeks} weeks vs the {weeks} before: {b['steps_per_episode']} -> {r['steps_per_episode']} "
            f"steps per episode, failure rate {_pct(b['failure_rate'])} -> {_pct(r['failure_rate'])}, "
            f"success {_pct(b['success_rate'])} -> {_pct(r['success_rate'])}, "
            f"{r['repeated_errors']} repeated errors ({r['episodes']} episodes)")


def status_trend(home: Path, now: float | None = None) -> dict[str, Any] | None:
    """The trend alone (what ``s3 status`` needs): no clusters, no weekly series."""
    rs = rows(home)
    mark_repeats(rs)
    return trend(rs, now)
