"""s3 apply KIND FILE|-: check a subagent's result and turn it into lasting memory."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import console, emit_json, fail


def _read_input(source: str) -> Any:
    from pathlib import Path

    if source == "-":
        raw = sys.stdin.read()
        name = "stdin"
    else:
        p = Path(source).expanduser()
        if not p.is_file():
            fail(f"{source}: no such file", code=2)
        raw = p.read_text(encoding="utf-8", errors="replace")
        name = str(p)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        fail(f"{name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", code=2)
    except RecursionError:
        fail(f"{name}: JSON nested too deeply", code=2)


@app.command()
def apply(
    kind: Annotated[str, typer.Argument(help="reflection | consolidation | memory | extraction | guardian")],
    source: Annotated[str, typer.Argument(help="the result file (bare result or AgentResult envelope), or - for stdin")],
    json_out: JsonOpt = False,
) -> None:
    """Validate a subagent result and apply it: rules, capabilities, gaps, facts, foresight, profile...

    Accepts the bare result or its AgentResult envelope. An invalid result exits 2 naming the field
    and changes nothing. Applying the same result twice changes nothing the second time.
    """
    from ..contracts import ContractError
    from ..memory.apply import apply_result

    data = _read_input(source)
    try:
        summary = apply_result(kind, data)
    except ContractError as exc:
        fail(f"invalid {kind} result: {exc}", code=2, hint="nothing was changed; fix the field and apply again")
    if json_out:
        emit_json(summary)
        return
    _render(summary)


def _pct(x: float) -> str:
    return f"{round(x * 100)}%"


def _render(s: dict[str, Any]) -> None:
    c = console()
    if s.get("already_applied"):
        c.print(f"Already applied on {s.get('applied_at')} (digest {s['digest'][:12]}): nothing changed.")
        return
    ch = s["changes"]
    render = _RENDERERS.get(s["kind"])
    if render is None:
        c.print(json.dumps(s, indent=2, default=str))
    else:
        render(c, ch)
    if ch.get("facts_now_historical"):
        c.print(f"\n{len(ch['facts_now_historical'])} prospective facts are now historical (their time passed).")


def _render_reflection(c: Any, ch: dict[str, Any]) -> None:
    c.print("## Reflection Complete\n")
    eps = ch.get("episodes_analyzed") or []
    c.print(f"### Episodes Analyzed: {len(eps)}")
    for e in eps:
        c.print(f"- {e['id']}: {e.get('goal_summary') or '(no goal)'} [{e.get('outcome') or 'UNKNOWN'}]")
    _render_rules(c, ch, "Heuristics Extracted")
    c.print("\n### Capability Updates")
    for cu in ch.get("capability_updates") or []:
        b, a = cu["before"]["proficiency"], cu["after"]["proficiency"]
        c.print(f"- {cu['domain']}: proficiency {_pct(b)} → {_pct(a)} ({'+' if a >= b else ''}{_pct(a - b)})")
    if not ch.get("capability_updates"):
        c.print("- none")
    c.print("\n### Knowledge Gaps Identified")
    for g in ch.get("knowledge_gaps_added") or ["none new"]:
        c.print(f"- {g}")
    if ch.get("suggested_goals_added"):
        c.print("\n### Suggested Goals")
        for g in ch["suggested_goals_added"]:
            c.print(f"- {g}")


def _render_consolidation(c: Any, ch: dict[str, Any]) -> None:
    c.print("## Consolidation Complete\n")
    c.print(f"### Clusters Found: {ch.get('clusters_found', 0)}")
    _render_rules(c, ch, "Rules Created")
    c.print(f"\n### Episodes Consolidated: {len(ch.get('episodes_consolidated') or [])}")
    for e in ch.get("episodes_consolidated") or []:
        c.print(f"- {e}")
    if ch.get("rules_decayed"):
        c.print(f"\n### Confidence Decay: {len(ch['rules_decayed'])} rules not validated for 30+ days")
    if ch.get("skipped_reason"):
        c.print(f"\nSkipped: {ch['skipped_reason']}")


def _render_memory(c: Any, ch: dict[str, Any]) -> None:
    c.print(f"## Memory Use Recorded: \"{ch['query']}\"\n")
    c.print(f"- used: {', '.join(ch['used']) or 'none'}")
    c.print(f"- verified: {', '.join(ch['verified']) or 'none'}")
    if ch.get("rejected"):
        c.print(f"- rejected by verification: {', '.join(ch['rejected'])}")
    if ch.get("unknown"):
        c.print(f"- unknown ids (skipped): {', '.join(ch['unknown'])}")


def _render_extraction(c: Any, ch: dict[str, Any]) -> None:
    from ..kinds import extracted

    c.print("## Memories Extracted\n")
    prof = ch.get("profile") or {}
    rows = [(k.label or k.plural, ch.get(k.added_key)) for k in extracted()]
    rows += [("Profile facts (new)", prof.get("added")), ("Profile facts (confirmed)", prof.get("confirmed")),
             ("Profile facts promoted to stable", prof.get("promoted"))]
    for label, ids in rows:
        c.print(f"- {label}: {len(ids or [])}")
    c.print(f"- Links stored (both ends): {ch.get('links_added', 0)}")
    if ch.get("scene_id"):
        c.print(f"- Scene: {ch['scene_id']}")
    for rec in ch.get("conflicts") or []:
        c.print(f"- Conflict ({rec['signal']}): kept \"{rec['kept_text']}\", superseded "
                f"\"{rec['superseded_text']}\"")


_RENDERERS: dict[str, Callable[[Any, dict[str, Any]], None]] = {
    "reflection": _render_reflection, "consolidation": _render_consolidation, "memory": _render_memory,
    "extraction": _render_extraction,
}


def _render_rules(c: Any, ch: dict[str, Any], title: str) -> None:
    added, merged = ch.get("rules_added") or [], ch.get("rules_merged") or []
    c.print(f"\n### {title}: {len(added)}" + (f" (+{len(merged)} merged into existing rules)" if merged else ""))
    for i, r in enumerate(added + merged, 1):
        c.print(f"\n{i}. **{r['trigger_concept']}**\n   \"{r['rule_content']}\"\n   Confidence: {r['confidence']:.2f}"
                + (f" (validated {r['validation_count']}x)" if r.get("validation_count") else ""))
