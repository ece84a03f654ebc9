"""Team memory in the repository: what ``s3 team share``, ``s3 team suggest`` and ``s3 team init --repo``
write and propose. The user's commands: an agent that tries them, or writes into the folder, is asked
about by the guardian.

``share`` writes each chosen rule, procedure (the zero-token learners' playbook commands and error ->
fix procedures included) or fact of this project as one Markdown file, ``<project>/.sophia/team/<id>.md``,
in the format of :mod:`sophia.memory.team_repo` (front matter: id, kind, who learned it and when, its
evidence, its confidence; the text as the body): one file per item, so a merge rarely conflicts, and the
team reviews it in a pull request like code. Every item is checked first, then written: one that looks
like a secret (the scanner of the Postgres sync, :func:`sophia.team.collect.looks_secret`) refuses the
whole share and nothing is written. A file already there that says something else (a teammate's edit) is
kept unless ``replace``.

``suggest`` lists what is worth sharing and is not shared yet: this project's items (and rules without a
project) that are sure (confidence at least :data:`MIN_CONFIDENCE`) and proven more than once (a rule
validated again, a procedure that worked in :data:`MIN_USES` runs or sessions). Nothing is shared that
the user did not choose.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import kinds, paths
from ..errors import BadInput
from ..memory import team_repo
from .collect import SecretRefused, looks_secret

SHARED_KINDS = ("rule", "procedure", "fact")
MIN_CONFIDENCE = 0.7
MIN_USES = 2
MAX_EVIDENCE = 5
FILE_MODE, DIR_MODE = 0o644, 0o755  # the repository's files and folders, read by every teammate's tools
README_TEXT = """# Team memory

What this project's agents learned and the team chose to keep, one Markdown file per item, read by
every teammate's Sophia System 3 kit working in this repository: recalled and injected into Claude
Code sessions like its own memory, marked as coming from the team.

- `s3 team suggest` lists what is worth sharing; `s3 team share ID...` writes the chosen items here.
- Review them in pull requests like code. To change an item, edit its file; to forget it, delete it.
- The front matter says what it is (`kind`), who learned it and when, its evidence and confidence.
- Agents do not write here: the guardian asks before one does.
"""


def who(project: str) -> str:
    """Who shares: the repository's ``git config user.name``, else the login name."""
    import subprocess

    try:
        out = subprocess.run(["git", "-C", project, "config", "user.name"], capture_output=True, text=True,
                             timeout=5, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out or os.environ.get("USER") or "unknown"


# ---------------------------------------------------------------- the local items


def _rules(home: Path) -> list[dict[str, Any]]:
    from ..memory.rules import load_rules

    return load_rules(home)


def _memory(home: Path, kind: str) -> list[dict[str, Any]]:
    from ..memory.files import load_items

    k = kinds.get(kind)
    return load_items(k.plural, home) if k is not None else []


def local_item(home: Path, iid: str) -> tuple[str, dict[str, Any]]:
    """(kind, stored object) of one of this home's memories; BadInput when it cannot be shared."""
    kind = kinds.for_id(iid)
    if kind is not None and kind.name == team_repo.KIND:
        raise BadInput(f"{iid} is already team memory (edit its file in {paths.TEAM_FOLDER}/)")
    if kind is None or kind.name not in SHARED_KINDS:
        what = f"a {kind.name}" if kind is not None else "no memory of this home"
        raise BadInput(f"{iid} is {what}: only rules, procedures (playbook commands included) and facts "
                       "are shared (see `s3 team suggest`)")
    found = _rules(home) if kind.name == "rule" else _memory(home, kind.name)
    for obj in found:
        if obj.get("id") == iid:
            return kind.name, obj
    raise BadInput(f"no {kind.name} with id {iid!r} (see `s3 list {kind.plural}` or `s3 team suggest`)")


def _refusal(kind: str, obj: dict[str, Any], project: str) -> str:
    """Why this item is not this project's to share ("" when it is)."""
    owner = obj.get("project")
    if owner and owner != project:
        return f"it belongs to {owner}, not to this repository ({project})"
    if kind == "fact" and not owner:
        return "a fact without a project is about you, not about this project"
    status = (obj.get("meta") or {}).get("status")
    if kind == "procedure" and status in ("demoted", "retired"):
        return f"it is {status} (it failed as often as it worked)"
    return ""


# ---------------------------------------------------------------- one item -> one file


def _rule_evidence(r: dict[str, Any]) -> list[str]:
    out = [f"source: {r['source']}"] if r.get("source") else []
    n = int(r.get("validation_count") or 0)
    if n:
        out.append(f"validated {n} time{'s' * (n != 1)}" + (f", last {str(r['last_validated'])[:10]}"
                                                              if r.get("last_validated") else ""))
    out += [f"episode {e}" for e in (r.get("source_episodes") or [])[:MAX_EVIDENCE]]
    return out


def _procedure_evidence(p: dict[str, Any]) -> list[str]:
    meta = p.get("meta") or {}
    out = []
    for e in (meta.get("evidence") or [])[-MAX_EVIDENCE:]:
        if isinstance(e, dict):
            proof = "; ".join(str(x) for x in e.get("proof") or [])
            when = str(e.get("at") or "")[:10]
            out.append(kinds.one_line(f"{when} session {str(e.get('session') or '?')[:8]}"
                                      + (f": {proof}" if proof else ""), 200))
    if meta.get("learner") == "zero_token":
        s, f = int(meta.get("successes") or 1), int(meta.get("failures") or 0)
        out.append(f"worked in {s} of {s + f} runs")
    return out or [f"source {s}" for s in (p.get("source_ids") or [])[:MAX_EVIDENCE]]


def _fact_evidence(f: dict[str, Any]) -> list[str]:
    meta = f.get("meta") or {}
    srcs = [*([meta["parent_episode_id"]] if meta.get("parent_episode_id") else []), *(f.get("source_ids") or [])]
    return [f"episode {s}" if str(s).startswith("ep_") else f"source {s}" for s in dict.fromkeys(srcs)][:MAX_EVIDENCE]


def confidence(kind: str, obj: dict[str, Any]) -> float | None:
    """The item's confidence now (a rule's decays without validation)."""
    if kind == "rule":
        from ..memory.rules import decayed_confidence

        return round(decayed_confidence(obj), 2)
    c = (obj.get("meta") or {}).get("confidence")
    return round(float(c), 2) if isinstance(c, int | float) else None


def entry(kind: str, obj: dict[str, Any], by: str, at: str) -> tuple[dict[str, Any], str]:
    """(front matter, body) of an item's team file."""
    meta = obj.get("meta") or {}
    if kind == "rule":
        body, learned, evidence = str(obj.get("rule_content") or ""), obj.get("created_at"), _rule_evidence(obj)
    elif kind == "procedure":
        body, learned, evidence = str(obj.get("text") or ""), obj.get("timestamp"), _procedure_evidence(obj)
    else:
        body, learned, evidence = str(obj.get("text") or ""), obj.get("timestamp"), _fact_evidence(obj)
    front = {"id": obj["id"], "kind": kind, "category": meta.get("category") if kind == "procedure" else None,
             "trigger": (obj.get("trigger_concept") or None) if kind == "rule" else None,
             "learned_by": by, "learned_at": learned, "shared_at": at, "confidence": confidence(kind, obj),
             "evidence": evidence}
    return front, body


def file_name(iid: str) -> str:
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in iid)[:100]
    return f"{safe}.md"


def _same(old: str, new: str) -> bool:
    """The same item, whenever it was shared (``shared_at`` left out)."""
    (fo, bo), (fn, bn) = team_repo.parse(old), team_repo.parse(new)
    fo.pop("shared_at", None)
    fn.pop("shared_at", None)
    return fo == fn and bo.strip() == bn.strip()


# ---------------------------------------------------------------- share


def plan(home: Path, project: str, ids: list[str], by: str) -> list[dict[str, Any]]:
    """Each chosen item's file, checked: BadInput for one that is not this project's, SecretRefused
    for one that looks like a secret (before anything is written)."""
    from ..timeutil import iso

    at = iso()
    out = []
    for iid in dict.fromkeys(ids):
        kind, obj = local_item(home, iid)
        why = _refusal(kind, obj, project)
        if why:
            raise BadInput(f"{iid} is not shared: {why}")
        front, body = entry(kind, obj, by, at)
        if not body.strip():
            raise BadInput(f"{iid} is not shared: it says nothing")
        text = team_repo.render(front, body)
        if looks_secret(text):
            raise SecretRefused(f"share refused: {kind} {iid} holds what looks like a secret; nothing was written "
                                f"(remove the secret with `s3 forget {iid}` or an edit, then share again)")
        out.append({"id": iid, "kind": kind, "text": text,
                    "path": os.path.join(paths.team_folder(project), file_name(iid))})
    return out


def share(home: Path, project: str, ids: list[str], by: str, replace: bool = False) -> list[dict[str, Any]]:
    """Write the chosen items' files (every item checked first: :func:`plan`). Each result says
    ``written``, ``unchanged`` (the same item is there) or ``kept`` (the file there says something else:
    a teammate's edit, or this item changed since; ``replace`` writes this one)."""
    from ..atomic import write_bytes_atomic

    planned = plan(home, project, ids, by)
    if planned:
        make_folder(project)
    out = []
    for p in planned:
        try:
            old = Path(p["path"]).read_text(encoding="utf-8")
        except OSError:
            old = None
        status = "written"
        if old is not None and _same(old, p["text"]):
            status = "unchanged"
        elif old is not None and not replace:
            status = "kept"
        if status == "written":
            write_bytes_atomic(p["path"], p["text"].encode("utf-8"))
            os.chmod(p["path"], FILE_MODE)
        out.append({"id": p["id"], "kind": p["kind"], "file": os.path.relpath(p["path"], project), "status": status})
    return out


def make_folder(project: str) -> bool:
    """Create ``<project>/.sophia/team/`` (readable by all, as a checkout makes it); True when it was not there."""
    folder = paths.team_folder(project)
    if os.path.lexists(folder) and not team_repo.own_folder(project):
        raise BadInput(f"{paths.TEAM_FOLDER} in {project} is a link out of the repository: team memory is "
                       "written only into the repository's own folder (no team item of it is read either)")
    if os.path.isdir(folder):
        return False
    for d in (os.path.dirname(folder), folder):
        if not os.path.isdir(d):
            os.mkdir(d)
            os.chmod(d, DIR_MODE)
    return True


def init_repo(project: str) -> dict[str, Any]:
    """Create ``<project>/.sophia/team/`` with its README (kept when there)."""
    folder = paths.team_folder(project)
    readme = os.path.join(folder, team_repo.README)
    created = make_folder(project)
    if not os.path.exists(readme):
        from ..atomic import write_bytes_atomic

        write_bytes_atomic(readme, README_TEXT.encode("utf-8"))
        os.chmod(readme, FILE_MODE)
    return {"folder": os.path.relpath(folder, project), "created": created}


# ---------------------------------------------------------------- suggest


def _uses(kind: str, obj: dict[str, Any]) -> int:
    """How often the item proved itself: a rule's learnings and validations, a procedure's good runs or
    sessions, a fact's sources."""
    meta = obj.get("meta") or {}
    if kind == "rule":
        return max(1 + int(obj.get("validation_count") or 0), len(obj.get("source_episodes") or []))
    if kind == "procedure":
        return max(int(meta.get("successes") or 0), int(meta.get("sessions") or 0))
    parent = {meta["parent_episode_id"]} if meta.get("parent_episode_id") else set()
    return len(set(obj.get("source_ids") or []) | parent)


def _candidates(home: Path) -> list[tuple[str, dict[str, Any]]]:
    return [("rule", r) for r in _rules(home)] + [(k, o) for k in ("procedure", "fact") for o in _memory(home, k)]


def suggest(home: Path, project: str, limit: int = 20) -> dict[str, Any]:
    """What is worth sharing and not shared yet, surest and most used first."""
    shared = {n[:-3] for n in team_repo.team_files(project)}
    found: list[dict[str, Any]] = []
    for kind, obj in _candidates(home):
        iid = str(obj.get("id") or "")
        if not iid or file_name(iid)[:-3] in shared or _refusal(kind, obj, project):
            continue
        conf, uses = confidence(kind, obj), _uses(kind, obj)
        if conf is None or conf < MIN_CONFIDENCE or uses < MIN_USES:
            continue
        text = obj.get("rule_content") if kind == "rule" else obj.get("text")
        found.append({"id": iid, "kind": kind, "confidence": conf, "uses": uses,
                      "global": not obj.get("project"), "text": kinds.one_line(text, 200)})
    found.sort(key=lambda c: (-c["confidence"], -c["uses"], c["id"]))
    return {"project": project, "already_shared": len(shared), "suggestions": found[:limit]}
