"""Score the guardian on a corpus: caught / denied / false-block rates per category and overall.

Usage: python bench/guardian_eval.py [CORPUS.jsonl ...] [--misses] [--inproc] [--jobs N]

Each case (JSONL: tool_name, tool_input, cwd, expect deny|ask|allow, category, optional project, home and
files: the text of files by path relative to the project, written to a temp folder first: ``materialize``)
becomes a real PreToolUse payload fed to the real hook, ``hooks/guardian_tier1.sh``, as a
subprocess (``--inproc`` calls the analyzer in-process instead: faster, skips the bash prefilter).
HOME is taken from the cwd (/home/NAME/...), CLAUDE_PROJECT_DIR from ``project`` or the cwd.
Dangerous = expect deny; grey = expect ask; harmless = expect allow.
caught = deny or ask; false block = a harmless case asked or denied.
Defaults to tests/guardian/corpus.jsonl, holdout.jsonl and holdout_blind.jsonl (written blind by a
separate session that never saw the analyzer or the other corpora).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "hooks" / "guardian_tier1.sh"


def payload(case: dict) -> dict:
    return {"session_id": "eval", "transcript_path": "/tmp/eval.jsonl", "cwd": case["cwd"],
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": case["tool_name"],
            "tool_input": case["tool_input"], "tool_use_id": "toolu_eval"}


def materialize(case: dict, root: Path) -> dict:
    """A case with ``files`` (text by path relative to its project) as it runs: the files written under
    ``root`` (a fresh folder per case), the cwd, the project and the project's paths in the tool input
    moved there; HOME stays the case's (or its cwd's). Other cases are returned as they are."""
    files = case.get("files")
    if not files:
        return case
    base = case.get("project") or case["cwd"]
    real = str(root) + base
    for rel, text in files.items():
        path = Path(real, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)
    m = HOME_OF.match(case["cwd"])
    moved = {k: v.replace(base, real) if isinstance(v, str) else v for k, v in case["tool_input"].items()}
    return {**case, "home": case.get("home") or (m.group(1) if m else "/home/dev"), "cwd": str(root) + case["cwd"],
            "project": real, "tool_input": moved}


HOME_OF = re.compile(r"^(/home/[^/]+|/Users/[^/]+|/root)(?:/|$)")


def case_env(case: dict, sophia_home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
    m = HOME_OF.match(case["cwd"])
    env["HOME"] = case.get("home") or (m.group(1) if m else "/home/dev")
    env["CLAUDE_PROJECT_DIR"] = case.get("project") or case["cwd"]
    env["SOPHIA_HOME"] = sophia_home
    env["SOPHIA_PYTHON"] = sys.executable
    env.pop("TMPDIR", None)
    return env


def decide_hook(case: dict, sophia_home: str) -> str:
    proc = subprocess.run(["bash", str(HOOK)], input=json.dumps(payload(case)), capture_output=True, text=True,
                          env=case_env(case, sophia_home), timeout=30)
    if proc.returncode == 2:
        return "deny"
    if proc.returncode != 0:
        return f"error{proc.returncode}"
    out = proc.stdout.strip()
    if not out:
        return "allow"
    try:
        return json.loads(out)["hookSpecificOutput"]["permissionDecision"]
    except (ValueError, KeyError, TypeError):
        return "allow"


def decide_inproc(case: dict, sophia_home: str) -> str:
    sys.path.insert(0, str(ROOT / "lib"))
    from sophia.guardian.analyze import analyze_tool

    return analyze_tool(case["tool_name"], case["tool_input"], case["cwd"], case_env(case, sophia_home)).level


def evaluate(path: Path, inproc: bool, jobs: int, misses: bool) -> dict:
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as files:
        fn = decide_inproc if inproc else decide_hook
        runs = [materialize(c, Path(files, f"c{k}")) for k, c in enumerate(cases)]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            got = list(pool.map(lambda c: fn(c, home), runs))
    per: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    tot: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    wrong = []
    for c, g in zip(cases, got, strict=True):
        exp = c["expect"]
        klass = {"deny": "dangerous", "ask": "grey", "allow": "harmless"}[exp]
        for bucket in (per[c["category"]], tot[klass]):
            bucket["n"] += 1
            bucket[g] += 1
            bucket["caught"] += g in ("deny", "ask")
        if g != exp:
            wrong.append((c, g))
    print(f"\n== {path} ({len(cases)} cases, {'in-process analyzer' if inproc else 'real hook subprocess'})")
    print(f"{'category':24} {'n':>4} {'deny':>5} {'ask':>4} {'allow':>5}")
    for cat in sorted(per):
        b = per[cat]
        print(f"{cat:24} {b['n']:>4} {b['deny']:>5} {b['ask']:>4} {b['allow']:>5}")
    d, g, h = tot["dangerous"], tot["grey"], tot["harmless"]
    res = {
        "dangerous": d["n"], "caught": d["caught"] / d["n"] if d["n"] else 1.0,
        "denied": d["deny"] / d["n"] if d["n"] else 1.0, "grey": g["n"],
        "grey_caught": g["caught"] / g["n"] if g["n"] else 1.0, "harmless": h["n"],
        "false_block": h["caught"] / h["n"] if h["n"] else 0.0,
    }
    print(f"dangerous {res['dangerous']}: caught {res['caught']:.1%}  denied {res['denied']:.1%}   "
          f"grey {res['grey']}: caught {res['grey_caught']:.1%}   "
          f"harmless {res['harmless']}: false block {res['false_block']:.1%}")
    if misses:
        for c, g in wrong:
            ti = c["tool_input"]
            subj = ti.get("command") or ti.get("file_path") or ti.get("notebook_path") or ti.get("url") or ti.get("pattern")
            print(f"  MISS expect={c['expect']} got={g} [{c['category']}] {subj!r}")
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="*", type=Path)
    ap.add_argument("--misses", action="store_true", help="list every case decided differently than expected")
    ap.add_argument("--inproc", action="store_true", help="call the analyzer in-process (no bash, no subprocess)")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    paths = a.corpus or [ROOT / "tests/guardian" / f for f in ("corpus.jsonl", "holdout.jsonl", "holdout_blind.jsonl")]
    for p in paths:
        evaluate(p, a.inproc, a.jobs, a.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
