"""What the installed UserPromptSubmit hook injects on LoCoMo: hits on answerable questions, silence on the rest.

    python bench/locomo_inject.py [--sample 40] [--kit /tmp/base-15] [--python PY] [--json]

For every conversation of the LoCoMo dev split, a fresh home holds that conversation alone as one
project's memory (``s3 init``; ``context.include_ingested`` on; ``s3 ingest FILE --format locomo
--project DIR``), all through the kit's own CLI. Then questions are sent as prompts through the kit's
real hook (``hooks/prompt_context.sh`` fed the UserPromptSubmit JSON payload, ``cwd`` = that project):

- its own questions (with evidence): a **hit** when an evidence turn is in the injected
  additionalContext (its text, whitespace-folded, or its item id);
- questions of the other conversations (which nothing stored can answer): **abstention** when
  nothing at all is injected.

Prints hit %, abstention %, the median characters injected (over the prompts that got something, and
over all own questions), and the hook's wall time (median / p90 ms per call). ``--sample N`` draws
N own and N foreign questions per conversation (seeded, the same draw for every kit); 0 = all.
``--kit DIR`` (repeatable) measures another checkout in the same run (``git clone /work/main
/tmp/base-15`` for "before"); the first kit is this checkout unless ``--no-self``. Keyword tier only
(``SOPHIA_RECALL_SEMANTIC=0``): no embedding service is started.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data/locomo/locomo_dev.json")
_EVID = re.compile(r"D:?(\d+):(\d+)")


def norm_dia(s: str) -> str | None:
    m = _EVID.fullmatch(s.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def fold(s: str) -> str:
    return " ".join(s.split()).lower()


def turns_of(sample: dict[str, Any]) -> dict[str, str]:
    """dia_id -> the turn's own text (without the speaker prefix the item adds)."""
    out: dict[str, str] = {}
    conv = sample["conversation"]
    for key, val in conv.items():
        if re.fullmatch(r"session_\d+", key) and isinstance(val, list):
            for t in val:
                out[str(t["dia_id"])] = str(t.get("text") or "")
    return out


def evidence(qa: dict[str, Any], known: set[str]) -> list[str]:
    out: list[str] = []
    for ev in qa.get("evidence") or []:
        for part in re.split(r"[;,\s]+", str(ev)):
            d = norm_dia(part) if part else None
            if d and d in known and d not in out:
                out.append(d)
    return out


def questions(data: list[dict[str, Any]], sample: int, seed: int) -> list[dict[str, Any]]:
    """Per conversation: its own questions with evidence and a draw of the others' questions."""
    rnd = random.Random(seed)
    plan = []
    for si, s in enumerate(data):
        known = set(turns_of(s))
        own = [(q["question"], evidence(q, known)) for q in s["qa"]]
        own = [(q, e) for q, e in own if e]
        foreign = [q["question"] for sj, o in enumerate(data) if sj != si for q in o["qa"]]
        if sample:
            own = rnd.sample(own, min(sample, len(own)))
            foreign = rnd.sample(foreign, min(sample, len(foreign)))
        plan.append({"sample": s, "own": own, "foreign": foreign})
    return plan


class Kit:
    """One checkout: its CLI (``python -m sophia.cli.entry`` with its lib) and its hook script."""

    def __init__(self, root: Path, python: str) -> None:
        self.root, self.python = root.resolve(), python
        self.label = f"{self.root} ({self._commit()})"

    def _commit(self) -> str:
        r = subprocess.run(["git", "-C", str(self.root), "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True, check=False)
        return r.stdout.strip() or "?"

    def env(self, tmp: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
        env.update(HOME=str(tmp), SOPHIA_HOME=str(tmp / ".sophia"), PYTHONPATH=str(self.root / "lib"),
                   SOPHIA_RECALL_SEMANTIC="0", SOPHIA_PYTHON=self.python)
        return env

    def s3(self, env: dict[str, str], *args: str) -> None:
        subprocess.run([self.python, "-m", "sophia.cli.entry", *args], env=env, check=True, capture_output=True,
                       timeout=600)

    def prompt(self, env: dict[str, str], cwd: Path, text: str) -> tuple[str, float]:
        """(injected additionalContext or '', wall ms) for one prompt through the real hook."""
        payload = {"session_id": "bench-inject", "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
                   "hook_event_name": "UserPromptSubmit", "prompt": text}
        t0 = time.perf_counter()
        r = subprocess.run(["bash", str(self.root / "hooks" / "prompt_context.sh")], input=json.dumps(payload).encode(),
                           capture_output=True, env=env, cwd=cwd, timeout=60, check=False)
        ms = (time.perf_counter() - t0) * 1000
        if r.returncode != 0 or r.stderr.strip():
            raise SystemExit(f"hook failed ({r.returncode}): {r.stderr.decode()[:300]}")
        if not r.stdout.strip():
            return "", ms
        return str(json.loads(r.stdout)["hookSpecificOutput"].get("additionalContext") or ""), ms


def make_home(kit: Kit, tmp: Path, sample: dict[str, Any]) -> tuple[dict[str, str], Path, dict[str, str]]:
    """A home holding this conversation alone as one project's memory; returns (env, project, dia->item id)."""
    env = kit.env(tmp)
    project = (tmp / "project").resolve()
    project.mkdir(parents=True)
    kit.s3(env, "init")
    cfg_path = tmp / ".sophia" / "config.json"
    cfg = json.loads(cfg_path.read_text()) if cfg_path.exists() else {}
    cfg.setdefault("context", {})["include_ingested"] = True
    cfg_path.write_text(json.dumps(cfg, indent=2))
    src = tmp / f"{sample['sample_id']}.json"
    src.write_text(json.dumps(sample))
    kit.s3(env, "ingest", str(src), "--format", "locomo", "--project", str(project))
    ids: dict[str, str] = {}
    db = tmp / ".sophia" / "index.db"
    with sqlite3.connect(db) as conn:
        for iid, src_ids in conn.execute("SELECT id, source_ids FROM items WHERE type = 'turn'"):
            for d in json.loads(src_ids or "[]"):
                ids[norm_dia(str(d)) or str(d)] = iid
    return env, project, ids


def is_hit(injected: str, ev: list[str], turns: dict[str, str], ids: dict[str, str]) -> bool:
    got = fold(injected)
    for d in ev:
        head = fold(turns.get(d, ""))[:50]
        if (head and head in got) or (d in ids and f"[{ids[d]}]" in injected):
            return True
    return False


def run_kit(kit: Kit, plan: list[dict[str, Any]], tmp_root: Path) -> dict[str, Any]:
    own_hits, own_chars, foreign_silent, given_chars, ms = [], [], [], [], []
    for n, p in enumerate(plan):
        tmp = Path(tempfile.mkdtemp(prefix=f"c{n}-", dir=tmp_root))
        env, project, ids = make_home(kit, tmp, p["sample"])
        turns = turns_of(p["sample"])
        for q, ev in p["own"]:
            text, t = kit.prompt(env, project, q)
            ms.append(t)
            own_hits.append(is_hit(text, ev, turns, ids))
            own_chars.append(len(text))
            if text:
                given_chars.append(len(text))
        for q in p["foreign"]:
            text, t = kit.prompt(env, project, q)
            ms.append(t)
            foreign_silent.append(not text)
            if text:
                given_chars.append(len(text))
        print(f"  {p['sample']['sample_id']}: hit {pct(own_hits[-len(p['own']):])} "
              f"abstain {pct(foreign_silent[-len(p['foreign']):])}", file=sys.stderr, flush=True)
    ms.sort()
    return {
        "kit": kit.label, "own": len(own_hits), "foreign": len(foreign_silent),
        "hit_pct": round(100 * sum(own_hits) / max(len(own_hits), 1), 1),
        "abstain_pct": round(100 * sum(foreign_silent) / max(len(foreign_silent), 1), 1),
        "median_chars_injected": statistics.median(given_chars) if given_chars else 0,
        "median_chars_own": statistics.median(own_chars) if own_chars else 0,
        "hook_ms_median": round(statistics.median(ms), 1) if ms else 0.0,
        "hook_ms_p90": round(ms[int(0.9 * (len(ms) - 1))], 1) if ms else 0.0,
    }


def pct(xs: list[bool]) -> str:
    return f"{100 * sum(xs) / max(len(xs), 1):.1f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sample", type=int, default=40, help="own and foreign questions per conversation (0: all)")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--kit", type=Path, action="append", default=[], help="another checkout to measure too")
    ap.add_argument("--no-self", action="store_true", help="measure only the --kit checkouts")
    ap.add_argument("--python", default=os.environ.get("SOPHIA_PYTHON") or sys.executable)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    data = json.loads(a.data.read_text())
    plan = questions(data if isinstance(data, list) else [data], a.sample, a.seed)
    kits = ([] if a.no_self else [ROOT]) + a.kit
    results = []
    for root in kits:
        kit = Kit(root, a.python)
        print(f"# {kit.label}", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(prefix="s3-inject-") as t:
            results.append(run_kit(kit, plan, Path(t)))
    if a.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"LoCoMo dev, {len(plan)} conversations, sample {a.sample or 'all'} own + {a.sample or 'all'} foreign "
          f"questions each (seed {a.seed}); bars: hit >= 60 %, abstention >= 90 %, median injected <= 600 chars")
    print("| kit | own q | foreign q | hit % | abstention % | median chars (when injected) | "
          "median chars (own q) | hook ms median / p90 |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for r in results:
        print(f"| {r['kit']} | {r['own']} | {r['foreign']} | {r['hit_pct']} | {r['abstain_pct']} | "
              f"{r['median_chars_injected']} | {r['median_chars_own']} | {r['hook_ms_median']} / {r['hook_ms_p90']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
