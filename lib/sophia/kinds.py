"""The registry of memory kinds: one table that the store, the index, the CLI and the hooks read.

Standard library only and import-light (the prompt-context hook reads it on every prompt). A
leaf module: it imports nothing of the project at load time, so every layer (index, memory,
ingest, hooks, cli) may depend on it without a cycle.

Per kind: its name (the index item ``type``), the word ``s3 list`` takes (``plural``; for a kind
kept in ``memory/<plural>.json`` also the file stem), where it is stored, its id prefix, the
``s3 apply extraction`` contract field it comes from, the builder that turns one contract entry
into an item, the converter from the stored object to its index item, the line ``s3 list`` prints,
and whether the hooks inject it into a coding session.

Adding a kind (at most 4 files):
1. here: a ``Kind(...)`` entry in ``KINDS`` (store ``"memory"``: kept in ``memory/<plural>.json``)
   with a ``build`` function when ``s3 apply extraction`` creates it;
2. ``lib/sophia/contracts.py``: the entry model and its list field on ``ExtractionResult``
   (named by ``contract_field``);
3. ``agents/s3-extraction.md``: tell the subagent what to return in that field;
4. ``README.md``: the kind in the "Memory kinds" table.
Everything else follows from the table: ``s3 apply`` writes and indexes it, ``s3 list PLURAL``
lists it, ``s3 recall --type NAME`` finds it, ``s3 forget ID`` removes it, ``s3 index --rebuild``
re-reads it, and the prompt-context hook injects it when ``injected``.
``tests/test_kinds.py`` registers a toy kind and walks it through all of these.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from typing import Any

    Item = dict[str, Any]

# The keys of an index item (the memory index contract); per-kind extras stay in the file.
ITEM_KEYS = ("id", "type", "text", "project", "timestamp", "event_time", "source_ids", "valid_from",
             "valid_until", "temporality", "scene_id", "memcell_id", "links", "meta")

# The one cap on what a rule may say, for every path a rule's text enters by (s3 learn, the
# reflection and consolidation contracts): a rule is a sentence or two, and CLAUDE.md carries
# the newest ones into every session.
MAX_RULE_CHARS = 1000
MAX_DOMAIN_CHARS = 80

# The markers around the System 3 block in a CLAUDE.md: sophia.identity_md writes it, and the cc_memory
# kind (sophia.memory.claude_code) leaves it out of a CLAUDE.md it indexes (the rules in it are ours).
CLAUDE_MD_BEGIN = "<!-- sophia-system3:begin -->"
CLAUDE_MD_END = "<!-- sophia-system3:end -->"


def one_line(text: Any, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (an ellipsis marks a cut)."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


# Where a kind's objects live (each store has one loader and one remover in sophia.memory.manage).
# "claude_code": Claude Code's own files, indexed read-only (sophia.memory.claude_code), never ours to change.
# "team": the team's files in a repository (<project>/.sophia/team/*.md), indexed read-only
# (sophia.memory.team_repo): people change them through review.
STORES = ("episodes", "rules", "memory", "conversations", "claude_code", "team")


class Maker:
    """What a ``build`` function gets: ``new(id_parts, text, **fields)`` makes an item of the kind
    (content id from the kind's prefix and ``id_parts``, the extraction's project, time, sources
    and MemCell), plus ``observed`` (when the conversation happened) and ``episode_id``."""

    def __init__(self, kind: Kind, new: Callable[..., Item], observed: datetime, episode_id: str | None):
        self.kind, self.new, self.observed, self.episode_id = kind, new, observed, episode_id


class Kind:
    """One memory kind. A plain class (``dataclasses`` costs ~10 ms of a hook's start)."""

    __slots__ = ("name", "plural", "store", "prefix", "summary", "contract_field", "label", "build",
                 "index_item", "line", "injected", "scoped", "listed", "detect_conflicts")

    def __init__(self, name: str, plural: str, store: str, prefix: str, summary: str, *,
                 contract_field: str | None = None, label: str | None = None,
                 build: Callable[[Any, Maker], Item] | None = None,
                 index_item: Callable[[Item], Item] | None = None, line: Callable[[Item], str] | None = None,
                 injected: bool = True, scoped: bool = False, listed: bool = True,
                 detect_conflicts: bool = False) -> None:
        if store not in STORES:
            raise ValueError(f"kind {name!r}: store must be one of {', '.join(STORES)}")
        self.name, self.plural, self.store, self.prefix, self.summary = name, plural, store, prefix, summary
        self.contract_field, self.label, self.build = contract_field, label, build
        self.index_item = index_item or index_view
        self.line = line or item_line
        self.injected, self.scoped, self.listed = injected, scoped, listed
        self.detect_conflicts = detect_conflicts

    @property
    def file(self) -> str:
        """The kind's file under the state home (for messages and docs)."""
        return {"episodes": "episodes/<id>.json", "rules": "semantic_rules.json",
                "memory": f"memory/{self.plural}.json",
                "conversations": "memory/conversations/<source>.jsonl",
                "claude_code": "Claude Code's own files (read only)",
                "team": "<project>/.sophia/team/<id>.md (read only)"}[self.store]

    @property
    def added_key(self) -> str:
        """Key of the ids ``s3 apply extraction`` added, in its ``changes``."""
        return f"{self.plural}_added"

    def __repr__(self) -> str:
        return f"Kind({self.name!r}, store={self.store!r})"


# ---------------------------------------------------------------- the one item shape


def make_item(id: str, type: str, text: str, **kw: Any) -> Item:
    item: Item = {
        "id": id, "type": type, "text": text, "project": None, "timestamp": None, "event_time": None,
        "source_ids": [], "valid_from": None, "valid_until": None, "temporality": None, "scene_id": None,
        "memcell_id": None, "links": [], "meta": {},
    }
    if "timestamp" not in kw:
        from .timeutil import iso

        item["timestamp"] = iso()
    item.update(kw)
    return item


def index_view(item: Item) -> Item:
    """The standard keys only (per-kind extras such as a scene centroid stay in the file)."""
    out = {k: item.get(k) for k in ITEM_KEYS}
    out["source_ids"] = list(out["source_ids"] or [])
    out["links"] = list(out["links"] or [])
    out["meta"] = dict(out["meta"] or {})
    return out


# ---------------------------------------------------------------- the one converter per stored shape


def episode_item(ep: Item) -> Item:
    """An episode file -> its index item (seed 12.4 fields in ``meta``). The only converter: the
    Stop/SessionEnd hooks, ``s3 apply`` and ``s3 index --rebuild`` all index an episode with it."""
    heur = [str(h) for h in ep.get("heuristics") or []]
    kws = [str(k) for k in ep.get("keywords") or []]
    parts = [ep.get("goal_summary") or "", ep.get("goal") or ""]
    if ep.get("result"):
        parts.append(f"Result: {ep['result']}")
    if ep.get("error_analysis"):
        parts.append(str(ep["error_analysis"]))
    if heur:
        parts.append("Heuristics: " + "; ".join(heur))
    if kws:
        parts.append("Keywords: " + ", ".join(kws))
    if ep.get("errors"):
        parts.append("Errors: " + "; ".join(str(e) for e in ep["errors"][:5]))
    if ep.get("narrative"):  # written by s3 apply extraction
        parts.append(str(ep["narrative"]))
    text = "\n".join(p for p in parts if p).strip() or str(ep.get("id"))
    src = [str(a["id"]) for a in ep.get("actions") or [] if isinstance(a, dict) and a.get("id")]
    return {
        "id": str(ep["id"]), "type": "episode", "text": text, "project": ep.get("project"),
        "timestamp": ep.get("timestamp") or ep.get("ended_at") or ep.get("started_at"),
        "event_time": ep.get("started_at"), "source_ids": src, "links": list(ep.get("links") or []),
        "memcell_id": ep.get("memcell_id"),
        "meta": {"outcome": ep.get("outcome"), "heuristics": heur, "heuristics_count": len(heur),
                 "trivial": bool(ep.get("trivial")), "consolidated": bool(ep.get("consolidated")),
                 "keywords": kws, "session_id": ep.get("session_id"), "git_branch": ep.get("git_branch"),
                 "goal_summary": ep.get("goal_summary"), "tool_call_count": ep.get("tool_call_count"),
                 "agent": ep.get("agent"), "card": episode_card(ep)},
    }


# ---------------------------------------------------------------- what an injected episode says

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# commands that only look around: not worth a line in what the next session is told
LOOK_COMMANDS = frozenset({"ls", "cd", "cat", "echo", "pwd", "head", "tail", "grep", "rg", "find", "which", "sed",
                           "awk", "wc", "mkdir", "chmod", "sleep", "true", "test", "stat", "file", "tree", "sort",
                           "cp", "mv", "rm", "touch", "date", "env", "printf"})


_NOT_PITFALLS = ("doesn't want to proceed", "doesn't want to take this action", "interrupted by user")


def _useful_command(summary: Any) -> bool:
    """A command worth naming: not a look-around one, and more than a bare interpreter (``python3``)."""
    if not isinstance(summary, str) or not summary:
        return False
    words = summary.split()
    return words[0] not in LOOK_COMMANDS and (len(words) > 1 or "." in words[0])


def _error_text(err: Any) -> str:
    """An error line without terminal colours and banner rules ("" for the user's own refusals)."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]|</?[a-z_]{3,30}>", "", str(err or ""))
    text = re.sub(r"[^\w\s'\"().,:;/@=+-]{3,}", " ", text)
    return "" if any(n in text.lower() for n in _NOT_PITFALLS) else one_line(text, 110)


def _top(counts: dict[str, int], n: int) -> list[str]:
    return [k for k, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:n]]


def _tally(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def episode_card(ep: Item) -> Item:
    """What the next session needs of an episode, each part short: ``did`` (the task), ``result`` (what
    the last message says was done), ``why`` (the evidence for an outcome other than SUCCESS),
    ``lesson`` (heuristics or error analysis), ``files`` (edited, most edited first) with ``files_more``,
    ``commands`` (that worked, not the looking-around ones) and ``pitfall`` (the error hit most).
    Empty parts are left out. Pure; the index item keeps it in ``meta.card``."""
    acts = [a for a in ep.get("actions") or [] if isinstance(a, dict)]
    files = _tally(str(a["file"]).rsplit("/", 1)[-1] for a in acts
                   if a.get("tool") in EDIT_TOOLS and isinstance(a.get("file"), str) and a["file"])
    cmds = _tally(str(a["summary"]) for a in acts
                  if a.get("tool") == "Bash" and a.get("outcome", "ok") == "ok" and _useful_command(a.get("summary")))
    errs = _tally(t for t in map(_error_text, ep.get("errors") or []) if t)
    heur = [one_line(h, 200) for h in ep.get("heuristics") or [] if isinstance(h, str) and h.strip()]
    pit = _top(errs, 1)
    card: Item = {
        "did": one_line(ep.get("goal_summary") or ep.get("goal") or "", 120),
        "result": one_line(ep.get("result") or "", 160),
        "why": one_line(ep.get("outcome_reason") or "", 140) if ep.get("outcome") != "SUCCESS" else "",
        "lesson": "; ".join(heur[:2]) or one_line(ep.get("error_analysis") or "", 240),
        "files": _top(files, 3), "files_more": max(0, len(files) - 3), "commands": _top(cmds, 3),
        "pitfall": (pit[0] + (f" (x{errs[pit[0]]})" if errs[pit[0]] > 1 else "")) if pit else "",
    }
    return {k: v for k, v in card.items() if v}


def rule_item(rule: Item) -> Item:
    """A semantic rule -> its index item (the only converter, as for episodes)."""
    text = f"{rule.get('trigger_concept', '')}: {rule.get('rule_content', '')}".strip(": ")
    return {
        "id": str(rule["id"]), "type": "rule", "text": text, "project": rule.get("project"),
        "timestamp": rule.get("created_at"), "source_ids": [str(s) for s in rule.get("source_episodes") or []],
        "links": list(rule.get("links") or []),
        "meta": {"confidence": rule.get("confidence"), "source": rule.get("source"),
                 "validation_count": rule.get("validation_count"), "last_validated": rule.get("last_validated")},
    }


# ---------------------------------------------------------------- list lines


def item_line(it: Item) -> str:
    window = ""
    if it.get("valid_from") or it.get("valid_until"):
        window = f" (valid {it.get('valid_from') or '...'} to {it.get('valid_until') or '...'})"
    when = f" @{it['event_time']}" if it.get("event_time") else ""
    return f"- {it.get('id')} {it.get('text')}{when}{window}"


def _rule_line(it: Item) -> str:
    get = it.get  # s3 list rules makes 10,000 of these
    return f"- {get('id')} [{get('trigger_concept')}] {get('rule_content')} (confidence {float(get('confidence') or 0):.2f})"


def _episode_line(it: Item) -> str:
    return (f"- {it.get('id')} [{it.get('outcome')}] {it.get('goal_summary') or '(no goal)'}"
            + (" (consolidated)" if it.get("consolidated") else ""))


def _memcell_line(it: Item) -> str:
    n = (it.get("meta") or {}).get("turns")
    size = f" ({n} turns)" if n else ""
    text = " ".join(str(it.get("text") or "").split())
    return f"- {it.get('id')}{size} {text[:160] + '...' if len(text) > 160 else text}"


def _cc_line(it: Item) -> str:
    meta = it.get("meta") or {}
    return f"- {it.get('id')} {meta.get('path')}: {one_line(it.get('text'), 120)}"


def _team_line(it: Item) -> str:
    meta = it.get("meta") or {}
    who = f" from {meta['learned_by']}" if meta.get("learned_by") else ""
    return (f"- {it.get('id')} [team {meta.get('shared_kind') or 'note'}{who}] {one_line(it.get('text'), 120)} "
            f"({it.get('project')}/{meta.get('file')})")


# ---------------------------------------------------------------- builders (s3 apply extraction)


def _end_of(f: Any) -> str | None:
    from datetime import timedelta

    from .timeutil import iso, parse

    if f.end_time:
        return iso(parse(f.end_time))
    if f.duration_days is not None:
        start = parse(f.start_time)
        return iso(start + timedelta(days=f.duration_days)) if start else None
    return None


def _build_fact(f: Any, m: Maker) -> Item:
    from .timeutil import iso, parse

    et = parse(f.event_time)
    when = iso(et) if et else None
    temporality = f.temporality or (None if et is None else ("prospective" if et > m.observed else "historical"))
    return m.new((f.fact, when or ""), f.fact, event_time=when, temporality=temporality,
                 meta={"parent_episode_id": m.episode_id})


def _build_foresight(fs: Any, m: Maker) -> Item:
    from .timeutil import iso, parse

    start = iso(parse(fs.start_time))
    return m.new((fs.description, start), fs.description, event_time=start, valid_from=start,
                 valid_until=_end_of(fs), temporality="prospective",
                 meta={"evidence": fs.evidence, "duration_days": fs.duration_days, "confidence": fs.confidence,
                       "parent_episode_id": m.episode_id})


def _build_causal(c: Any, m: Maker) -> Item:
    text = f"{c.cause} -> {c.effect}" + (f" (mechanism: {c.mechanism})" if c.mechanism else "")
    return m.new((c.cause, c.effect), text, meta={"cause": c.cause, "effect": c.effect,
                                                  "mechanism": c.mechanism, "confidence": c.confidence})


def _build_procedure(p: Any, m: Maker) -> Item:
    steps = " -> ".join(p.steps)
    return m.new((p.name, steps), f"{p.name}: {steps}",
                 meta={"name": p.name, "procedure_steps": list(p.steps), "category": "workflow"})


# ---------------------------------------------------------------- the table

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("episode", "episodes", "episodes", "ep_", "coding sessions (goal, actions, errors, outcome)",
         index_item=episode_item, line=_episode_line, scoped=True),
    Kind("rule", "rules", "rules", "rule_", "heuristics learned (s3 learn, reflection, consolidation)",
         index_item=rule_item, line=_rule_line),
    Kind("fact", "facts", "memory", "fact_", "atomic facts with an event time (dual timeline)",
         contract_field="atomic_facts", label="Atomic facts", build=_build_fact, detect_conflicts=True),
    Kind("foresight", "foresight", "memory", "fs_", "expectations valid in a time window",
         contract_field="foresight", label="Foresight", build=_build_foresight),
    Kind("causal", "causal", "memory", "causal_", "cause -> effect links",
         contract_field="causal", label="Causal links", build=_build_causal),
    Kind("procedure", "procedures", "memory", "proc_", "named step sequences",
         contract_field="procedures", label="Procedures", build=_build_procedure),
    Kind("profile", "profile", "memory", "prof_", "what the user is like (stable traits, states, preferences)",
         contract_field="profile"),
    Kind("memcell", "memcells", "memory", "mc_", "narratives of one stretch of conversation (ingested: mc:SOURCE:N)",
         contract_field="episode", line=_memcell_line, scoped=True),
    Kind("scene", "scenes", "memory", "scene_", "clusters of related memories", scoped=True),
    Kind("turn", "turns", "conversations", "turn:", "turns of ingested conversations (s3 ingest)",
         injected=False, scoped=True, listed=False),
    Kind("cc_memory", "cc_memory", "claude_code", "cc_",
         "Claude Code's own auto memory and CLAUDE.md files, indexed read-only (never injected: it loads them itself)",
         line=_cc_line, injected=False),
    Kind("team", "team", "team", "team_",
         "what the team shares in the repository (<project>/.sophia/team/*.md: s3 team share), indexed read-only",
         line=_team_line, scoped=True),
)}


def register(kind: Kind) -> Kind:
    """Add a kind at run time (tests, extensions); the table above is the normal place."""
    if kind.name in KINDS:
        raise ValueError(f"kind {kind.name!r} is already registered")
    KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    KINDS.pop(name, None)


def get(name: str) -> Kind | None:
    return KINDS.get(name)


def item_types() -> list[str]:
    """Every index item type (``s3 recall --type``)."""
    return list(KINDS)


def by_plural(plural: str) -> Kind | None:
    return next((k for k in KINDS.values() if k.plural == plural), None)


def listed() -> list[Kind]:
    return [k for k in KINDS.values() if k.listed]


def in_store(store: str) -> list[Kind]:
    return [k for k in KINDS.values() if k.store == store]


def extracted() -> list[Kind]:
    """Kinds that ``s3 apply extraction`` builds generically, one per entry of their contract field."""
    return [k for k in KINDS.values() if k.build is not None and k.contract_field]


def bulk_types() -> list[str]:
    """The kinds that come in bulk (ingested conversation turns, a million of them after importing chat
    archives): the recall index keeps a second full-text index without them (``m005_notes_fts``), so a
    recall limited to the other kinds (the prompt hook's) never walks their postings."""
    return [k.name for k in in_store("conversations")]


def injected_types(include_ingested: bool = False) -> list[str]:
    """The kinds the hooks inject; ``include_ingested`` adds the ingested conversations' (never
    Claude Code's own memory: it loads that itself)."""
    return [k.name for k in KINDS.values() if k.injected or (include_ingested and k.store == "conversations")]


def scoped_types() -> frozenset[str]:
    """Kinds tied to a project: another project's are never injected."""
    return frozenset(k.name for k in KINDS.values() if k.scoped)


def for_id(item_id: str) -> Kind | None:
    """The kind an id belongs to, by prefix (longest first); None when no prefix matches."""
    if item_id.startswith("mc:"):
        return KINDS.get("memcell")
    best = None
    for k in KINDS.values():
        if item_id.startswith(k.prefix) and (best is None or len(k.prefix) > len(best.prefix)):
            best = k
    return best


# what `s3 list` also takes, besides the listed kinds' plurals (sources: the ingested conversations)
OTHER_LISTS = ("gaps", "conflicts", "sources")


def list_words() -> list[str]:
    return [k.plural for k in listed()] + list(OTHER_LISTS)


def type_help() -> str:
    return ", ".join(KINDS)
