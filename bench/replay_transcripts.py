"""Real Claude Code sessions replayed through the real hooks into one home: the episodes they build and
what the context hooks inject.

    PYTHONPATH=lib python bench/replay_transcripts.py [--dir ../shared/data/transcripts] [--show N]

Each transcript is replayed line by line into a growing copy, as Claude Code writes it: SessionStart at
the start; for every prompt the user typed, first Stop (the previous turn ended), then UserPromptSubmit
(``hooks/prompt_context.sh``) with that prompt; for every tool result, PostToolUse or PostToolUseFailure
(``hooks/log_action.sh``) with the call's input and result; at the end, Stop when the last turn ended
(its last message is the assistant's and calls no tool: Claude Code fires Stop at the end of every
assistant turn, so the session's end never finds a turn unrecorded; a session cut mid-turn gets none),
then SessionEnd. All sessions go into
one fresh SOPHIA_HOME in file order, so later sessions can be given memories of earlier ones; with
``--again`` each session is then replayed once more under a new id in its own project (a returning
session: what SessionStart and the prompts are given from the first pass). Prints, per
session, the episode (validated against the ``Episode`` model: goal, outcome, calls, errors, files) and
the share of prompts that got something injected and how much; with ``--show N`` the first N
injections of each session, to judge by hand.

What is injected is also judged item by item, by the ``- [id]`` each memory's line starts with: the
characters of SessionStart about another project (an item whose stored project is another one, or a
learner's "recurring failure in <name>" gap of another project), and, for each returning session, the
items a prompt was given that were already in its context (shown at SessionStart or at an earlier prompt
of the same session), with the characters of their lines.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib"
sys.path.insert(0, str(LIB))

from sophia.transcript_entries import block_text, blocks, clean_prompt, parse_line, tool_calls  # noqa: E402

SHARED = next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared"))
               if (p / "data/transcripts").is_dir()), ROOT.parent / "shared")


def hook(name: str, payload: dict[str, Any], env: dict[str, str]) -> str:
    """Run hooks/<name>.sh with the payload; return the additionalContext it injected ('' for none)."""
    r = subprocess.run(["bash", str(ROOT / "hooks" / f"{name}.sh")], input=json.dumps(payload).encode(),
                       capture_output=True, env=env, timeout=60, check=False)
    if r.returncode not in (0, 2):
        raise SystemExit(f"{name} exited {r.returncode}: {r.stderr.decode()[:300]}")
    if not r.stdout.strip():
        return ""
    try:
        return str(json.loads(r.stdout)["hookSpecificOutput"].get("additionalContext") or "")
    except (ValueError, KeyError, TypeError):
        return ""


def user_prompt(obj: dict[str, Any]) -> str | None:
    """The words the user typed in this entry, or None (tool results, meta lines, sidechains)."""
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isSidechain") or obj.get("isCompactSummary"):
        return None
    if any(b.get("type") == "tool_result" for b in blocks(obj)):
        return None
    return clean_prompt(block_text((obj.get("message") or {}).get("content")))


def tool_events(obj: dict[str, Any], calls: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """PostToolUse / PostToolUseFailure payload parts for the tool results in a user entry."""
    out = []
    for b in blocks(obj):
        if b.get("type") != "tool_result" or b.get("tool_use_id") not in calls:
            continue
        call = calls.pop(b["tool_use_id"])
        failed = b.get("is_error") is True
        text = block_text(b.get("content"))
        out.append({"hook_event_name": "PostToolUseFailure" if failed else "PostToolUse",
                    "tool_name": call["tool"], "tool_input": call["input"], "tool_use_id": call["id"],
                    **({"error": text[:2000]} if failed else {"tool_response": {"stdout": text[:2000]}})})
    return out


def replay(path: Path, env: dict[str, str], show: int, again: bool = False, guard: bool = False) -> dict[str, Any]:
    """One session through the hooks (``guard``: the guardian's PreToolUse too, before each tool call)."""
    lines = path.read_bytes().splitlines(keepends=True)
    sid = next((o["sessionId"] for o in map(parse_line, lines) if o and isinstance(o.get("sessionId"), str)),
               path.stem)
    sid = f"again-{sid}" if again else sid  # a new id (an episode id keeps the first 12 characters)
    cwd = next((o["cwd"] for o in map(parse_line, lines) if o and isinstance(o.get("cwd"), str)), "/")
    live = Path(env["REPLAY_DIR"]) / f"{sid}.jsonl"
    base = {"session_id": sid, "transcript_path": str(live), "cwd": cwd}
    live.write_bytes(b"")
    start = hook("session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}, env)
    calls: dict[str, dict[str, Any]] = {}
    prompts, injected, texts = 0, [], []
    samples: list[tuple[str, str]] = []
    t0 = time.perf_counter()
    turn_ended = False
    with live.open("ab") as fh:
        for raw in lines:
            obj = parse_line(raw) or {}
            if obj.get("type") in ("user", "assistant") and not obj.get("isSidechain"):
                turn_ended = obj["type"] == "assistant" and not tool_calls(obj)
            prompt = user_prompt(obj)
            if prompt:
                fh.flush()
                hook("session_end", {**base, "hook_event_name": "Stop", "stop_hook_active": False}, env)
                text = hook("prompt_context", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}, env)
                prompts += 1
                injected.append(len(text))
                texts.append(text)
                if text and len(samples) < show:
                    samples.append((prompt[:100], text))
            fh.write(raw)
            if obj.get("type") == "assistant" and not obj.get("isSidechain"):
                for c in tool_calls(obj):
                    calls[c["id"]] = c
                    if guard:
                        fh.flush()
                        hook("guardian_tier1", {**base, "hook_event_name": "PreToolUse", "tool_name": c["tool"],
                                                "tool_input": c["input"], "tool_use_id": c["id"]}, env)
            for ev in tool_events(obj, calls) if obj.get("type") == "user" else ():
                fh.flush()
                hook("log_action", {**base, **ev}, env)
    if turn_ended:
        hook("session_end", {**base, "hook_event_name": "Stop", "stop_hook_active": False}, env)
    hook("session_end", {**base, "hook_event_name": "SessionEnd", "reason": "other"}, env)
    return {"file": path.name[:60], "session": sid, "prompts": prompts, "injected": injected,
            "session_start_chars": len(start), "session_start": start, "samples": samples, "texts": texts,
            "cwd": cwd, "seconds": time.perf_counter() - t0}


ITEM_LINE = re.compile(r"^- \[([^\]\s]+)\]")
GAP_OF = re.compile(r"recurring failure in ([^:]+):")


def item_blocks(text: str) -> list[tuple[str | None, str, str]]:
    """(id or None, text, section title) of each ``- `` line of an injection with the indented lines under it."""
    out: list[tuple[str | None, str, str]] = []
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line
        elif line.startswith("  ") and out:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line, section)
        elif line.startswith("- "):
            m = ITEM_LINE.match(line)
            out.append((m.group(1) if m else None, line, section))
    return out


def item_projects(home: Path) -> dict[str, str | None]:
    """Each memory's project: the recall index's items, and the self-model's gaps that are records."""
    out: dict[str, str | None] = {}
    db = home / "index.db"
    if db.is_file():
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            out.update(conn.execute("SELECT id, project FROM items").fetchall())
        finally:
            conn.close()
    sm = json.loads((home / "self_model.json").read_text()) if (home / "self_model.json").is_file() else {}
    for g in sm.get("knowledge_gaps") or []:
        if isinstance(g, dict) and g.get("id"):
            out[str(g["id"])] = g.get("project")
    return out


def project_name(project: str | None) -> str:
    return (project or "").rstrip("/").rsplit("/", 1)[-1]


def foreign(block: tuple[str | None, str, str], project: str | None, projects: dict[str, str | None]) -> bool:
    """Whether an injected item is about another project than ``project``."""
    item, text, _ = block
    owner = projects.get(item) if item else None
    if owner:
        return project_name(owner) != project_name(project)
    m = GAP_OF.search(text)
    return bool(m and m.group(1).strip() != project_name(project))


def context_report(home: Path, r: dict[str, Any]) -> dict[str, Any]:
    """SessionStart's characters about other projects (gap lines apart), and the prompt-time items that
    were already in the session's context."""
    from sophia.hooks.project import project_of

    projects, project = item_projects(home), project_of(r["cwd"])
    start = item_blocks(r["session_start"])
    gaps = [b for b in start if "knowledge gaps" in b[2]]
    seen = {str(b[0]) for b in start if b[0]}
    n = {"prompt_items": 0, "prompt_repeats": 0, "prompt_chars": 0, "repeat_chars": 0, "injections": 0,
         "with_repeat": 0, "all_repeat": 0}
    for text in r["texts"]:
        blocks = [b for b in item_blocks(text) if b[0]]
        again = [b for b in blocks if b[0] in seen]
        n["injections"] += bool(text)
        n["with_repeat"] += bool(again)
        n["all_repeat"] += bool(blocks) and len(again) == len(blocks)
        n["prompt_items"] += len(blocks)
        n["prompt_repeats"] += len(again)
        n["prompt_chars"] += len(text)
        n["repeat_chars"] += sum(len(b[1]) + 1 for b in again)
        seen |= {str(b[0]) for b in blocks}
    return {"start_foreign": sum(len(b[1]) + 1 for b in start if foreign(b, project, projects)),
            "gap_foreign_chars": sum(len(b[1]) + 1 for b in gaps if foreign(b, project, projects)),
            "gap_lines": len(gaps), "gap_foreign": sum(1 for b in gaps if foreign(b, project, projects)), **n}


def print_context_report(home: Path, results: list[dict[str, Any]]) -> None:
    reports = [(r, context_report(home, r)) for r in results]
    start = sum(r["session_start_chars"] for r in results)
    foreign_chars = sum(c["start_foreign"] for _, c in reports)
    print(f"SessionStart: {foreign_chars} of {start} characters ({100 * foreign_chars / max(start, 1):.0f}%) about "
          f"other projects; knowledge-gap lines {sum(c['gap_lines'] for _, c in reports)}, of other projects "
          f"{sum(c['gap_foreign'] for _, c in reports)} ({sum(c['gap_foreign_chars'] for _, c in reports)} characters)")
    back = [c for r, c in reports if r["session"].startswith("again-")]
    if back:
        t = {k: sum(c[k] for c in back) for k in back[0] if not k.startswith(("start_", "gap_"))}
        print(f"returning, prompt time: {t['injections']} injections, {t['with_repeat']} with an item already in "
              f"context ({t['all_repeat']} only such items); items {t['prompt_items']}, already in context "
              f"{t['prompt_repeats']}; characters {t['prompt_chars']}, of repeated items {t['repeat_chars']}")


def episode_report(home: Path, sid: str) -> dict[str, Any]:
    from sophia.models import Episode

    for p in sorted((home / "episodes").glob("*.json")):
        if p.name.startswith("index"):
            continue
        data = json.loads(p.read_text())
        if data.get("session_id") == sid:
            Episode.model_validate(data)  # raises when the episode is not sound
            return {"id": data["id"], "goal": (data.get("goal_summary") or data.get("goal") or "")[:70],
                    "outcome": data.get("outcome"), "calls": data.get("tool_call_count"),
                    "errors": len(data.get("errors") or []), "files": len(data.get("files_touched") or []),
                    "trivial": data.get("trivial"), "why": data.get("outcome_reason") or ""}
    return {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=SHARED / "data/transcripts")
    ap.add_argument("--show", type=int, default=3, help="injections shown per session")
    ap.add_argument("--again", action="store_true",
                    help="then replay every session once more in its project (a returning session)")
    ap.add_argument("--keep", type=Path, help="copy the replayed home there, to look at it")
    a = ap.parse_args()
    files = sorted(a.dir.glob("*.jsonl")) if a.dir.is_dir() else []
    if not files:
        print(f"no transcripts in {a.dir}: nothing replayed")
        return 0
    with tempfile.TemporaryDirectory(prefix="s3-replay-") as t:
        tmp = Path(t)
        home = tmp / ".sophia"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
        env.update(HOME=str(tmp), SOPHIA_HOME=str(home), REPLAY_DIR=str(tmp), PYTHONPATH=str(LIB),
                   SOPHIA_RECALL_SEMANTIC="0")
        subprocess.run([sys.executable, "-m", "sophia.cli.entry", "init"], env=env, check=True,
                       capture_output=True)
        results = [replay(f, env, a.show) for f in files]
        time.sleep(2)  # the detached after-session runners
        if a.again:  # the same work again in each project: what a returning session is given
            results += [replay(f, env, a.show, again=True) for f in files]
            time.sleep(2)
        print("| session | prompts | got context | chars injected (median / max) | SessionStart chars | "
              "episode: outcome, calls, errors, files | goal |")
        print("|---|--:|--:|--:|--:|---|---|")
        for r in results:
            ep = episode_report(home, r["session"])
            inj = sorted(x for x in r["injected"] if x)
            med = inj[len(inj) // 2] if inj else 0
            print(f"| {r['file'][:40]} | {r['prompts']} | {len(inj)} | {med} / {max(inj, default=0)} | "
                  f"{r['session_start_chars']} | {ep.get('outcome')}, {ep.get('calls')}, {ep.get('errors')}, "
                  f"{ep.get('files')} | {ep.get('goal', '(no episode)')!r} |")
        total = sum(r["prompts"] for r in results)
        got = sum(1 for r in results for x in r["injected"] if x)
        print(f"\n{len(results)} sessions, {total} prompts, {got} got context ({100 * got / max(total, 1):.0f}%)")
        for label, rs in (("first pass", [r for r in results if not r["session"].startswith("again-")]),
                          ("returning", [r for r in results if r["session"].startswith("again-")])):
            sizes = [x for r in rs for x in r["injected"]]
            if sizes:
                given = sorted(x for x in sizes if x)
                print(f"{label}: {len(given)} of {len(sizes)} prompts got context; characters injected per prompt "
                      f"{sum(sizes) / len(sizes):.0f} on average, median {given[len(given) // 2] if given else 0} "
                      f"when something was")
        print_context_report(home, results)
        for r in results:
            ep = episode_report(home, r["session"])
            if ep.get("why"):
                print(f"episode {ep['id']}: {ep['outcome']} ({ep['why']})")
        for r in results if a.again else ():
            if r["session"].startswith("again-"):
                print(f"\n--- SessionStart of {r['file'][:40]} (again):\n{r['session_start'][:1500]}")
        for r in results:
            for prompt, text in r["samples"]:
                print(f"\n--- {r['file'][:40]}: prompt {prompt!r}\n{text[:700]}")
        log = home / "logs" / "hooks.log"
        problems = log.read_text().splitlines() if log.is_file() else []
        print(f"\nhooks.log: {len(problems)} lines" + "".join(f"\n  {x[:200]}" for x in problems[-5:]))
        if a.keep:
            import shutil

            shutil.copytree(home, a.keep, dirs_exist_ok=True)
        subprocess.run([sys.executable, "-m", "sophia.cli.entry", "embed", "stop"], env=env, capture_output=True,
                       check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
