"""``s3 recall --explain``: why each result ranked, and whether the prompt hook would inject it.

The verdict comes from the hook's own gate (``sophia.hooks.prompt_context.choose``: the same recall
and the same :func:`~sophia.hooks.prompt_context.select`, with this home's config), run for the
query as if it were a prompt typed in ``--project`` (default: the project of the current directory).
Run inside a Claude Code session (``CLAUDE_CODE_SESSION_ID`` set, as in the commands Claude runs), it
is judged as a prompt of that session: a memory already in its context (``sophia.hooks.shown``) is
said to be skipped as already shown. Standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TextIO

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"  # set by Claude Code in the commands it runs


def gate(query: str, project: str | None, home: Path | None) -> dict[str, Any]:
    """The hook's decision for ``query``: {"project", "min_relevance", "related", "max_items", "injected", "kinds"}."""
    from .. import paths
    from ..hooks import prompt_context as pc
    from ..hooks import shown as shown_record
    from ..hooks.project import project_of
    from ..hooks.runtime import load_config, safe_session

    h = home or paths.sophia_home()
    ctx = load_config(h)["context"]
    where = project or project_of(os.getcwd())
    session = safe_session(os.environ.get(SESSION_ENV))
    shown = shown_record.load(h, session) if h.is_dir() else set()
    chosen = pc.choose(h, ctx, query, where, session, shown) if h.is_dir() else []
    return {"project": where, "min_relevance": ctx["prompt_context_min_score"],
            "related": round(pc.RELATED * ctx["prompt_context_min_score"], 4),
            "max_items": ctx["prompt_context_max_items"], "enabled": bool(ctx["prompt_context_enabled"]),
            "injected": [str(it.get("id")) for it in chosen], "kinds": pc.context_types(ctx),
            "session": session, "already_shown": sorted(shown)}


def verdict(result: dict[str, Any], g: dict[str, Any]) -> str:
    """One phrase: would the hook inject this result, and if not, why not."""
    if result["id"] in g["injected"]:
        return "injected"
    if result["id"] in g.get("already_shown", ()):
        return f"not injected: already shown in session {g['session']} (its context holds it since its start or last compaction)"
    if not g["enabled"] or not g["max_items"]:
        return "not injected: the prompt hook is off (context.prompt_context_enabled / max_items)"
    if g["kinds"] is not None and result.get("type") not in g["kinds"]:
        return f"not injected: {result.get('type')} items are not shown to sessions (context.include_ingested)"
    rel = float(result.get("relevance") or 0.0)
    if not g["injected"]:
        return f"not injected: nothing reaches the gate's {g['min_relevance']} for this prompt"
    if rel < g["related"]:
        return f"not injected: relevance {rel:.2f} < {g['related']}"
    return "not injected: another project's memory, or beyond the first max_items"


def annotate(results: list[dict[str, Any]], g: dict[str, Any]) -> None:
    for r in results:
        r.setdefault("explain", {})["hook"] = verdict(r, g)


def _why_line(r: dict[str, Any]) -> str:
    e = r.get("explain") or {}
    bits = []
    if e.get("matched"):
        bits.append("matched " + ", ".join(f"{t} {w:.2f}" for t, w in e["matched"].items()))
    if "keyword_part" in e:
        from ..index.text import topical

        alone = " (no topic word: generic words never pass alone)" if e.get("matched") and not any(
            topical(t) for t in e["matched"]) else ""
        bits.append(f"keyword {e['keyword_part']:.3f} (bm25 {e['keyword_bm25']:.2f}, covers "
                    f"{e['keyword_relevance']:.2f} of the query{alone})")
    if e.get("semantic_cosine") is not None:
        bits.append(f"semantic +{e['semantic_part']:.3f} (cosine {e['semantic_cosine']:.3f})")
    if e.get("boosts"):
        bits.append(f"boosts {e['boosts']:+.3f}")
    if e.get("expanded_from"):
        x = e["expanded_from"]
        bits.append(f"next to {x['id']} (x{x['factor']})")
    bits.append(f"relevance {float(r.get('relevance') or 0):.2f}: {e.get('hook', '')}")
    return "; ".join(bits)


def print_gate(g: dict[str, Any], terms: dict[str, float], out: TextIO) -> None:
    out.write(f"Query terms (idf): {', '.join(f'{t} {w:.2f}' for t, w in terms.items()) or '-'}\n")
    seen = f"; {len(g['already_shown'])} already shown in session {g['session']}" if g.get("session") else ""
    out.write(f"Prompt hook in {g['project']}: injects {len(g['injected'])} item(s) (gate: best relevance >= "
              f"{g['min_relevance']}, then >= {g['related']}, at most {g['max_items']}{seen})\n")


def why_lines(results: list[dict[str, Any]]) -> list[str]:
    return [f"    why: {_why_line(r)}" for r in results]
