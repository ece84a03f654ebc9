"""Learning that costs no tokens: lessons read from a session's own commands. Standard library only.

Three learners, run on one session at a time (SessionEnd's detached slow path, ``s3 backfill``), on
commands judged by their evidence (:mod:`sophia.evidence` through :mod:`.commands`: a masked, unknown,
cancelled or refused call is neither a success nor a failure):

- **error -> fix**: a command that failed, then a variant of it (same command key: same program and
  purpose) whose output proves it worked, later in the same session, becomes a procedure: "when `X`
  fails with `E`, `Y` worked" (with the state changing commands and file edits in between as its
  steps). A heartbeat (``ls``, ``git status``...) or inline code (``python -c``) never makes a pair.
  A fix that forces past a safety check or that the guardian would stop, or one tied to a one-off value
  (a temp path, a PR number), is not taught (:mod:`.teachable`).
- **the project playbook**: the build, test, lint, run and setup commands (classified by verb:
  ``pytest``, ``npm test``, ``cargo test``, ``go test``, ``make test`` -> test...) whose success was
  verified in at least ``PLAYBOOK_SESSIONS`` sessions of the project, by distinct calls (a resumed
  transcript repeats the same calls), become procedures of category ``playbook``.
- **recurring failures**: the same command key failing with the same error class in at least
  ``GAP_SESSIONS`` sessions of a project, and never fixed, becomes a knowledge gap.

Every procedure keeps its evidence (session, call ids, the result lines that proved it) and a
confidence that later sessions move (:mod:`.procedures`: a fix that works again gains, one that fails
loses, is demoted, and after repeated failures retired).

Input: the transcript (full commands and outputs, read here and never stored whole) or, when there is
none, the action buffer's lines (the first 3 whitelisted words of a command and its exit code: nothing
there proves a success). What is stored is redacted and one short line. The cross-session counts live
in ``learning/commands.json`` (sets of session ids: learning the same session twice adds nothing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..atomic import read_json, write_json_atomic
from ..errors import SophiaError
from ..kinds import one_line
from ..locking import locked
from . import teachable
from .commands import (
    CMD_CHARS,
    Command,
    classify,
    commands_from_actions,
    commands_from_transcript,
    error_class,
    redact,
    targets,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PLAYBOOK_SESSIONS = 2  # a command must be verified in this many sessions (by distinct calls) of a project
GAP_SESSIONS = 2  # the same failure in this many sessions becomes a knowledge gap
MIN_COMMANDS = 2  # a session with fewer non-heartbeat commands teaches nothing
FIX_WINDOW = 12  # a fix must come within this many commands of its failure
MAX_STEPS = 3  # intervening steps kept in a fix
KEEP_SESSIONS = 20  # session ids kept per counted command
KEEP_ENTRIES = 300  # counted commands / failures kept per project
PROOF_CHARS = 160


# ---------------------------------------------------------------- one session's lessons


def _proof(c: Command) -> list[str]:
    return [one_line(redact(ln), PROOF_CHARS) for ln in c.evidence.proof]


def _fix_entry(fails: list[Command], steps: list[Command], ok: Command, project: str | None) -> dict[str, Any]:
    fail = fails[-1]
    error = fail.error or "an error"
    root = fail.display(project) == ok.display(project)  # only a cd to the project root differs: show it
    entry = {"key": fail.key, "failed": _shown(fail, project, root), "error": error, "class": error_class(error),
             "fix": _shown(ok, project, root), "steps": [s.display(project) for s in steps[-MAX_STEPS:]],
             "calls": {"failed": [f.cid for f in fails if f.cid], "fixed": ok.cid}, "proof": _proof(ok)}
    doers = [c for c in (*steps, ok) if c.edit is None and c.note is None]
    entry["damage"] = next((why for c in doers if (why := teachable.damage(c.segs, c.raw, project))), None)
    entry["one_off"] = teachable.one_off(f"{entry['failed']} {entry['fix']}")
    return entry


# what the normalised display leaves out but a lesson may turn on: a time-limit wrapper (`timeout 60 x`)
# or a job sent to the background (`x & PID=$!; sleep 9; kill $PID`)
_UNSHOWN = re.compile(r"(?:^|[;&|(]\s*)g?timeout\s|(?<![&>|])&(?![&>\d])")


def _shown(c: Command, project: str | None, root: bool) -> str:
    """A fix's command as a lesson shows it: normalised, or as typed (redacted) when the normalised form
    would hide what made it differ."""
    return one_line(redact(c.raw), CMD_CHARS) if _UNSHOWN.search(c.raw) else c.display(project, root=root)


def find_fixes(cmds: list[Command], project: str | None = None) -> list[dict[str, Any]]:
    """Each failure followed, within ``FIX_WINDOW`` commands of its chain, by a proven success with the
    same key that differs from it (or comes after other changes): one fix per key and error class.
    An entry that must not be taught carries why (``damage``, ``one_off``: :func:`teachable.refusal`)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    # (chain, key) -> (position of the last failure, the failures since the last success, changes since)
    pending: dict[tuple[str, str], tuple[int, list[Command], list[Command]]] = {}
    i = 0
    for c in cmds:
        if c.heartbeat:
            continue
        i += 1
        slot = (c.chain, c.key or "")
        if c.failed and c.key:
            before = pending.get(slot, (0, [], []))[1]
            pending[slot] = (i, [*before, c], [])
            continue
        if slot in pending and c.key and c.ok and _still_warns(pending[slot][1][-1], c, project):
            pending[slot] = (i, *pending[slot][1:])  # it still warns about the failure: not over yet
        elif slot in pending and c.key and c.ok and not c.evidence.doubt:
            at, fails, steps = pending.pop(slot)
            sig = (fails[-1].key or "", error_class(fails[-1].error or ""))
            if i - at <= FIX_WINDOW and sig not in seen and _same_intent(fails[-1], c, steps, project):
                seen.add(sig)
                out.append(_fix_entry(fails, steps, c, project))
        for other, (_, _, since) in pending.items():
            if other[0] == c.chain and other != slot:
                since.append(c)
    return out


def _same_intent(fail: Command, ok: Command, steps: list[Command], project: str | None) -> bool:
    """A success fixes a failure of the same key when it acts on the same things (a flag, the place or
    an edit in between changed) or on more or fewer of them; ``npm info a`` -> ``npm info b`` is another
    purpose, and the same command again with nothing changed in between is a retry, not a fix."""
    a, b = targets(fail), targets(ok)
    if a and b and not a & b:
        return False
    return bool(steps) or " ".join(ok.raw.split()) != " ".join(fail.raw.split())


_PLAIN = frozenset(["warning", "could", "error", "failed", "with", "from", "that", "this", "have", "will", "line",
                    "file", "users", "home", "not", "found", "unable"])


def _still_warns(fail: Command, ok: Command, project: str | None) -> bool:
    """The success still warns about what the failure was about (two distinctive words of its error line
    in one warning line; the project's own folder names are no topic): the work is not shown done."""
    if not ok.evidence.warnings:
        return False
    err = _topic(" ".join([fail.error or "", *fail.evidence.proof])) - _topic(project or "")
    return any(len(err & _topic(w)) >= 2 for w in ok.evidence.warnings)


def _topic(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9]{3,}", text.lower()) if w not in _PLAIN}


def _playbook(useful: list[Command], project: str | None) -> dict[str, dict[str, Any]]:
    """The session's proven project commands by their display: class, call id, proof (damage left out)."""
    book: dict[str, dict[str, Any]] = {}
    for c in useful:
        cls = classify(c.main) if c.ok else None
        shown = c.display(project, whole=False) if cls else ""
        if cls and shown not in book and not teachable.damage([c.main], shown, project):
            book[shown] = {"class": cls, "command": shown, "call": c.cid, "proof": _proof(c)}
    return book


def analyse(cmds: list[Command], project: str | None = None) -> dict[str, Any]:
    """The lessons of one session: fixes, playbook commands proven to work, failures (by key and class)."""
    useful = [c for c in cmds if not c.heartbeat and c.edit is None and c.note is None]
    if len(useful) < MIN_COMMANDS:
        return {"trivial": True, "fixes": [], "playbook": [], "failures": []}
    failures: dict[tuple[str, str], dict[str, Any]] = {}
    for c in useful:
        if c.failed and c.key:
            err = c.error or "an error"
            failures.setdefault((c.key, error_class(err)), {"key": c.key, "command": c.display(project),
                                                            "error": err, "class": error_class(err)})
    return {"trivial": False, "fixes": find_fixes(cmds, project),
            "playbook": list(_playbook(useful, project).values()), "failures": list(failures.values())}


# ---------------------------------------------------------------- what lasts: counts, procedures, gaps


def state_path(home: Path) -> Path:
    """Cross-session counts: ``{"projects": {project: {"commands": {...}, "failures": {...}}}}``."""
    from .. import paths

    return paths.command_counts_path(home)


def _count(table: dict[str, Any], key: str, entry: dict[str, Any], session: str) -> dict[str, Any]:
    """Add ``session`` to the sessions of ``table[key]`` (a set: counting a session twice adds nothing)."""
    rec = table.setdefault(key, dict(entry, sessions=[]))
    if session not in rec["sessions"]:
        rec["sessions"] = (rec["sessions"] + [session])[-KEEP_SESSIONS:]
    return rec


def _trim(table: dict[str, Any]) -> None:
    if len(table) > KEEP_ENTRIES:
        for k in sorted(table, key=lambda k: len(table[k]["sessions"]))[: len(table) - KEEP_ENTRIES]:
            del table[k]


def _count_session(home: Path, project: str, session: str, lessons: dict[str, Any]) -> tuple[list[dict[str, Any]],
                                                                                            list[dict[str, Any]]]:
    """Count the session's proven playbook commands (with their call ids) and failures; (playbook entries
    now promoted, failures now recurring, never fixed and not yet a gap)."""
    p = state_path(home)
    with locked(p, timeout=30):
        try:
            st = read_json(p, default=None)
        except SophiaError:
            st = None
        st = st if isinstance(st, dict) and isinstance(st.get("projects"), dict) else {"projects": {}}
        before = json.dumps(st, sort_keys=True)
        proj = st["projects"].setdefault(project, {"commands": {}, "failures": {}})
        promoted = [r for r in (_count_command(proj["commands"], e, session) for e in lessons["playbook"]) if r]
        fixed = {(f["key"], f["class"]) for f in lessons["fixes"] if not teachable.refusal(f)}
        recurring = []
        for f in lessons["failures"]:
            rec = _count(proj["failures"], f"{f['key']}\x1f{f['class']}", f, session)
            rec["fixed"] = bool(rec.get("fixed")) or (f["key"], f["class"]) in fixed
            if len(rec["sessions"]) >= GAP_SESSIONS and not rec.get("gap") and not rec["fixed"]:
                rec["gap"] = True
                recurring.append(rec)
        _trim(proj["commands"])
        _trim(proj["failures"])
        if json.dumps(st, sort_keys=True) != before:
            write_json_atomic(p, st)
    return promoted, recurring


def _count_command(table: dict[str, Any], entry: dict[str, Any], session: str) -> dict[str, Any] | None:
    """Count a proven playbook command; the record when it is now verified in ``PLAYBOOK_SESSIONS``
    sessions by as many distinct calls (a resumed or replayed transcript repeats its call ids)."""
    rec = _count(table, entry["command"], {k: entry[k] for k in ("class", "command")}, session)
    calls, proofs = list(rec.get("calls") or []), dict(rec.get("proofs") or {})
    if entry.get("call") and entry["call"] not in calls:
        rec["calls"] = (calls + [entry["call"]])[-KEEP_SESSIONS:]
        proofs[entry["call"]] = entry.get("proof") or []
        rec["proofs"] = {c: proofs[c] for c in rec["calls"] if c in proofs}
    distinct = len(set(rec.get("calls") or []))
    return rec if min(len(rec["sessions"]), distinct) >= PLAYBOOK_SESSIONS else None


def _add_gaps(home: Path, gaps: list[dict[str, Any]]) -> list[str]:
    """The self-model's knowledge gaps (records with project and key), added as reflection adds them."""
    from ..memory.gaps import add_gaps

    return add_gaps(home, gaps)


def _close_gaps(home: Path, project: str, items: list[dict[str, Any]]) -> list[str]:
    """A fix learned for a failure closes the project's gap of that failure (its key: command key and
    error class); the gap records which procedure closed it."""
    from .. import gaps
    from ..memory.gaps import close_gaps

    closed: list[str] = []
    for item in items:
        meta = item.get("meta") or {}
        if meta.get("category") == "error_fix" and meta.get("key"):
            key = gaps.failure_key(meta["key"], error_class(str(meta.get("error") or "")))
            closed += close_gaps(home, project, [key], by=item["id"])
    return closed


def _gap_text(rec: dict[str, Any], project: str) -> dict[str, Any]:
    """A recurring failure as a gap of its project, closed by its key (``gaps.failure_key``)."""
    from .. import gaps

    name = project.rstrip("/").rsplit("/", 1)[-1] or project
    text = one_line(f"recurring failure in {name}: `{rec['command']}` fails with `{rec['error']}` "
                    f"({len(rec['sessions'])} sessions)", 300)
    return gaps.record(text, project=project, key=gaps.failure_key(rec["key"], rec["class"]), source="learner",
                       source_ids=rec["sessions"])


def learn_session(home: Path, session_id: str, project: str | None, cmds: list[Command], *,
                  source_id: str | None = None, at: str | None = None) -> dict[str, Any]:
    """Learn from one session's commands: move the confidence of the project's procedures by their runs
    here, store its fixes that may be taught, count its playbook commands and failures, promote what
    recurs. Idempotent: the same session twice adds nothing."""
    from ..timeutil import iso
    from . import procedures

    lessons = analyse(cmds, project)
    report: dict[str, Any] = {"session": session_id, "commands": len(cmds), "trivial": lessons["trivial"],
                              "fixes": len(lessons["fixes"]), "procedures_added": [], "gaps_added": [],
                              "refused": [{"fix": f["fix"], "why": teachable.refusal(f)}
                                          for f in lessons["fixes"] if teachable.refusal(f)]}
    if lessons["trivial"] or not project:
        return report
    stamp, source = at or iso(), source_id or session_id
    report["retired_by_rules"] = procedures.sweep(home)
    report.update(procedures.reverify(home, project, cmds))
    promoted, recurring = _count_session(home, project, session_id, lessons)
    items = [procedures.fix_item(f, project, source, session_id, stamp)
             for f in lessons["fixes"] if not teachable.refusal(f)]
    items += [procedures.playbook_item(r, project, source, stamp) for r in promoted]
    report["procedures_added"] = procedures.store(home, items)
    report["gaps_closed"] = _close_gaps(home, project, items)
    report["gaps_added"] = _add_gaps(home, [_gap_text(r, project) for r in recurring])
    report["playbook"] = [r["command"] for r in promoted]
    return report


def learn_transcript(home: Path, session_id: str, transcript_path: str | Path | None, *,
                     project: str | None = None, actions: list[dict[str, Any]] | None = None,
                     source_id: str | None = None, at: str | None = None) -> dict[str, Any]:
    """The SessionEnd / backfill entry point: the transcript's commands (full text and errors), else
    the action buffer's; ``project`` defaults to the transcript's working directory."""
    cmds, cwd = commands_from_transcript(transcript_path) if transcript_path else ([], None)
    if not cmds and actions:
        cmds = commands_from_actions(actions)
    return learn_session(home, session_id, project or cwd, cmds, source_id=source_id, at=at)
