"""The zero-token learners' procedures: their evidence, their confidence, and what SessionStart shows.
Standard library only.

A procedure (an error -> fix, a playbook command) lives in ``memory/procedures.json`` (indexed: the
prompt hook and ``s3 recall`` find it) with, in its ``meta``:

- ``evidence``: where it was proven, newest last (session, the call ids, the result lines that proved it);
- ``successes`` / ``failures``: its later runs as the evidence judged them, each call counted once;
- ``confidence``: ``(successes + 1) / (successes + failures + 2)`` (one success, the one that taught it,
  gives 0.67); ``status``: ``active``, ``demoted`` (it failed at least as often as it worked: kept,
  said to be unreliable, never shown at SessionStart) or ``retired`` (at least :data:`RETIRE_FAILURES`
  failures, more than its successes: out of the recall index, kept in the file as a record).

:func:`reverify` moves them from a later session's commands; :func:`edit` is the user's change (the viewer's:
a status they choose stands as ``user_status`` over the one the runs give); :func:`session_lines` is
SessionStart's view.
"""

from __future__ import annotations

from pathlib import Path

from ..atomic import read_json
from ..errors import SophiaError
from ..kinds import one_line

TYPE_CHECKING = False  # SessionStart imports this module for session_lines: no typing, no redact there
if TYPE_CHECKING:
    from typing import Any

    from .commands import Command

CLASS_ORDER = ("test", "build", "lint", "run", "setup")
STATUSES = ("active", "demoted", "retired")
RETIRE_FAILURES = 3
KEEP_EVIDENCE = 5
KEEP_CALLS = 50  # call ids already counted, per procedure
UNRELIABLE = "unreliable: "


def confidence(successes: int, failures: int) -> float:
    return round((successes + 1) / (successes + failures + 2), 3)


def status(successes: int, failures: int) -> str:
    if failures >= RETIRE_FAILURES and failures > successes:
        return "retired"
    return "demoted" if failures and failures >= successes else "active"


def evidence_record(session: str, calls: dict[str, Any], proof: list[str], at: str) -> dict[str, Any]:
    return {"session": session, "calls": calls, "proof": proof, "at": at}


def fix_item(fix: dict[str, Any], project: str, source: str, session: str, at: str) -> dict[str, Any]:
    from ..memory.files import make_item
    from ..memory.text import content_id

    after = f" (after {'; '.join(f'`{s}`' for s in fix['steps'])})" if fix["steps"] else ""
    text = f"when `{fix['failed']}` fails with `{fix['error']}`, `{fix['fix']}` worked{after}"
    calls = [c for c in [*fix["calls"]["failed"], fix["calls"]["fixed"]] if c]
    return make_item(content_id("proc_", "fix", project, fix["key"], fix["class"]), "procedure", one_line(text, 600),
                     project=project, timestamp=at, source_ids=[source],
                     meta={"name": one_line(f"fix: {fix['failed']}", 160), "category": "error_fix",
                           "procedure_steps": [*fix["steps"], fix["fix"]], "error": fix["error"],
                           "failed": fix["failed"], "key": fix["key"], "sessions": 1, "learner": "zero_token",
                           "evidence": [evidence_record(session, fix["calls"], fix["proof"], at)],
                           "counted_calls": calls, "successes": 1, "failures": 0,
                           "confidence": confidence(1, 0), "status": "active"})


def playbook_item(rec: dict[str, Any], project: str, source: str, at: str) -> dict[str, Any]:
    from ..memory.files import make_item
    from ..memory.text import content_id

    cmd, cls = rec["command"], rec["class"]
    proofs = [evidence_record(s, {"ok": c}, rec.get("proofs", {}).get(c, []), at)
              for s, c in zip(rec["sessions"], rec.get("calls") or [], strict=False)][-KEEP_EVIDENCE:]
    n = len(set(rec.get("calls") or []))
    return make_item(content_id("proc_", "playbook", project, cmd), "procedure",
                     f"project playbook ({cls}): `{cmd}`", project=project, timestamp=at, source_ids=[source],
                     meta={"name": f"playbook {cls}", "category": "playbook", "class": cls,
                           "procedure_steps": [cmd], "sessions": len(rec["sessions"]), "learner": "zero_token",
                           "evidence": proofs, "counted_calls": list(rec.get("calls") or []),
                           "successes": n, "failures": 0, "confidence": confidence(n, 0), "status": "active"})


def store(home: Path, new: list[dict[str, Any]]) -> list[str]:
    """Add or refresh procedures in ``memory/procedures.json`` and the recall index; the ids added.
    A procedure learned again keeps its record and gains the new evidence (each call counted once)."""
    from ..memory.files import update_items

    added, touched = [], []
    with update_items("procedures", home) as items:
        by_id = {i.get("id"): i for i in items}
        for item in new:
            old = by_id.get(item["id"])
            if old is None:
                items.append(item)
                by_id[item["id"]] = item
                added.append(item["id"])
                touched.append(item)
            elif _merge(old, item):
                touched.append(old)
    _reindex(home, touched)
    return added


def _merge(old: dict[str, Any], item: dict[str, Any]) -> bool:
    """Fold a re-learned item's sources and evidence into the stored one; True when it changed. Its runs
    were already counted by :func:`reverify`."""
    meta, new = old.setdefault("meta", {}), item["meta"]
    before = repr((old.get("source_ids"), meta))
    old["source_ids"] = sorted(set(old.get("source_ids") or []) | set(item["source_ids"]))
    counted = list(meta.get("counted_calls") or [])
    fresh = [c for c in new.get("counted_calls") or [] if c not in counted]
    if fresh or not counted:
        meta["evidence"] = [*(meta.get("evidence") or []), *(new.get("evidence") or [])][-KEEP_EVIDENCE:]
        meta["counted_calls"] = (counted + fresh)[-KEEP_CALLS:]
    meta["sessions"] = max(int(meta.get("sessions") or 1), len(old["source_ids"]), int(new.get("sessions") or 1))
    _rate(old)
    return repr((old.get("source_ids"), meta)) != before


def _rate(item: dict[str, Any]) -> None:
    """Confidence and status from the counts (a status the user chose stands); a demoted item says so in
    its text."""
    meta = item.setdefault("meta", {})
    s, f = int(meta.get("successes") or 1), int(meta.get("failures") or 0)
    meta["successes"], meta["failures"] = s, f
    chosen = meta.get("user_status") if meta.get("user_status") in STATUSES else None
    meta["confidence"], meta["status"] = confidence(s, f), chosen or status(s, f)
    text = str(item.get("text") or "").removeprefix(UNRELIABLE).split(" [failed ", 1)[0]
    item["text"] = f"{UNRELIABLE}{text} [failed {f} of {s + f} runs]" if meta["status"] != "active" else text


def _reindex(home: Path, items: list[dict[str, Any]]) -> None:
    from ..memory import indexing

    indexing.upsert([i for i in items if (i.get("meta") or {}).get("status") != "retired"], home)
    gone = [i["id"] for i in items if (i.get("meta") or {}).get("status") == "retired"]
    if gone:
        indexing.delete(gone, home)


def _runs(proc: dict[str, Any], cmds: list[Command], project: str) -> list[Command]:
    """The session's runs of what a procedure tells to run (its fix, or its playbook command)."""
    meta = proc.get("meta") or {}
    want = (meta.get("procedure_steps") or [""])[-1]
    whole = meta.get("category") != "playbook"
    return [c for c in cmds if c.edit is None and not c.heartbeat and c.cid
            and (c.ok or c.failed) and c.display(project, whole=whole) == want]


def reverify(home: Path, project: str, cmds: list[Command]) -> dict[str, list[str]]:
    """A later session's runs of the project's procedures move their confidence: each call that ran one
    counts once (a success or a failure, by its evidence). Returns the ids demoted and retired."""
    from ..memory.files import update_items

    moved: list[dict[str, Any]] = []
    with update_items("procedures", home) as items:
        for proc in items:
            meta = proc.get("meta") or {}
            if proc.get("project") != project or meta.get("learner") != "zero_token" or meta.get("status") == "retired":
                continue
            counted = list(meta.get("counted_calls") or [])
            runs = [c for c in _runs(proc, cmds, project) if c.cid not in counted]
            if not runs:
                continue
            meta["successes"] = int(meta.get("successes") or 1) + sum(c.ok for c in runs)
            meta["failures"] = int(meta.get("failures") or 0) + sum(c.failed for c in runs)
            meta["counted_calls"] = (counted + [c.cid for c in runs])[-KEEP_CALLS:]
            _rate(proc)
            moved.append(proc)
    _reindex(home, moved)
    return {k: [p["id"] for p in moved if p["meta"]["status"] == k] for k in ("demoted", "retired")}


def edit(home: Path, pid: str, text: str, chosen: str) -> dict[str, Any]:
    """The user's change (the viewer's edit): a fix's line (what SessionStart and recall show) or a playbook's
    command, and its status. A status other than the one its runs give is kept as the user's choice
    (``user_status``) until they change it again; the confidence stays what the runs say (a digest's
    procedure keeps the digest's). Under the store's
    lock; re-indexed (a retired one leaves the index). Raises ``BadInput``."""
    from ..errors import BadInput
    from ..kinds import MAX_RULE_CHARS
    from ..memory.files import update_items
    from ..redact import redact
    from ..timeutil import iso

    clean = " ".join(redact(text).split())
    if chosen not in STATUSES:
        raise BadInput(f"status must be one of {', '.join(STATUSES)}, not {chosen[:40]!r}")
    if not clean or len(clean) > MAX_RULE_CHARS:
        raise BadInput(f"the procedure's text must be 1 to {MAX_RULE_CHARS:,} characters")
    with update_items("procedures", home) as items:
        proc = next((i for i in items if i.get("id") == pid), None)
        if proc is None:
            raise BadInput(f"no procedure {pid!r}")
        meta = proc.setdefault("meta", {})
        if meta.get("category") == "playbook":
            meta["procedure_steps"] = [clean]
            proc["text"] = f"project playbook ({meta.get('class') or 'run'}): `{clean}`"
        else:
            proc["text"] = clean
        ours = meta.get("learner") == "zero_token"  # a digest's procedure has no runs: its confidence is the digest's
        runs = status(int(meta.get("successes") or 1), int(meta.get("failures") or 0)) if ours else "active"
        if chosen == runs:
            meta.pop("user_status", None)
        else:
            meta["user_status"] = chosen
        meta["edited_at"] = iso()
        if ours:
            _rate(proc)
        else:
            meta["status"] = chosen
        out = dict(proc)
    _reindex(home, [out])
    return out


def sweep(home: Path) -> list[str]:
    """Procedures learned before the rules of :mod:`.teachable` (or under older ones) that those rules
    refuse now (a forced fix, a command the guardian stops, a one-off value) are retired, once per
    version of the rules (``learning/taught.json``). Returns the ids retired."""
    from ..atomic import write_json_atomic
    from ..memory.files import update_items
    from . import teachable
    from .commands import segments

    marker = home / "learning" / "taught.json"
    try:
        done = read_json(marker, default={}) or {}
    except (SophiaError, OSError, ValueError):
        done = {}
    if isinstance(done, dict) and done.get("rules") == teachable.RULES_VERSION:
        return []
    retired: list[dict[str, Any]] = []
    with update_items("procedures", home) as items:
        for proc in items:
            meta = proc.get("meta") or {}
            if meta.get("learner") != "zero_token" or meta.get("status") == "retired":
                continue
            steps = [s for s in meta.get("procedure_steps") or [] if isinstance(s, str) and not s.startswith("edit ")]
            why = next((w for s in steps if (w := teachable.damage(segments(s), s, proc.get("project")))), None)
            why = why or teachable.one_off(" ".join([*steps, str(meta.get("failed") or "")]))
            if why:
                meta["status"], meta["retired_why"] = "retired", why
                meta.pop("user_status", None)  # safety first: a choice to keep it does not outlive the rule
                retired.append(proc)
    _reindex(home, retired)
    write_json_atomic(marker, {"rules": teachable.RULES_VERSION})
    return [p["id"] for p in retired]


# ---------------------------------------------------------------- SessionStart


def session_lines(home: Path, project: str | None, max_chars: int = 1200) -> list[str]:
    """The project's playbook (one line) then its error -> fix procedures (surest and most repeated
    first), within ``max_chars`` characters in all; demoted and retired ones are left out. Never
    raises: an unreadable store gives no lines."""
    if not project:
        return []
    from .. import paths

    try:  # memory/procedures.json, read as memory.files.load_items does (without its imports)
        data = read_json(paths.memory_dir(home) / "procedures.json", default=None)
    except (SophiaError, OSError, ValueError):
        return []
    raw = data.get("items") if isinstance(data, dict) else None
    items = [i for i in raw if isinstance(i, dict) and i.get("project") == project] if isinstance(raw, list) else []
    meta = [(i, i.get("meta") or {}) for i in items]
    meta = [(i, m) for i, m in meta if isinstance(m, dict) and m.get("status", "active") == "active"]
    return _fit(_playbook_line(meta, max_chars) + _fix_lines(meta), max_chars)


def _playbook_line(meta: list[tuple[dict[str, Any], dict[str, Any]]], max_chars: int) -> list[str]:
    book = sorted((m for _, m in meta if m.get("category") == "playbook"),
                  key=lambda m: (CLASS_ORDER.index(m.get("class")) if m.get("class") in CLASS_ORDER else 9,
                                 -int(m.get("sessions") or 0)))
    if not book:
        return []
    cmds = "; ".join(f"{m.get('class')} `{(m.get('procedure_steps') or [''])[0]}`" for m in book[:8])
    return [one_line(f"- Playbook: {cmds}", min(600, max_chars - 1))]


def _fix_lines(meta: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[str]:
    fixes = sorted((i for i, m in meta if m.get("category") == "error_fix"),
                   key=lambda i: (float((i.get("meta") or {}).get("confidence") or 0.6),
                                  int((i.get("meta") or {}).get("sessions") or 1), str(i.get("timestamp") or "")),
                   reverse=True)
    return [f"- [{i.get('id')}] {one_line(i.get('text'), 300)}" for i in fixes]


def _fit(lines: list[str], max_chars: int) -> list[str]:
    out, used = [], 0
    for ln in lines:
        if used + len(ln) + 1 > max_chars:
            continue
        out.append(ln)
        used += len(ln) + 1
    return out
