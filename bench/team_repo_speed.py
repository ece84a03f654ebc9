"""What the repository's team memory costs the prompt hook, as ratios against a baseline measured in the
same run (issue 31).

    PYTHONPATH=lib python bench/team_repo_speed.py [--rounds 30] [--episodes 2000] [--files 20]
        [--baseline /path/to/another/checkout]

Builds hook_speed's synthetic home (episodes, 300 rules, the recall index) and a git project whose
``.sophia/team/`` holds ``--files`` team files, then runs ``hooks/prompt_context.sh`` as Claude Code does,
round-robin so machine noise hits all alike:

- in a project without a team folder (what every other project pays: one failed ``stat``);
- in the project with its team folder unchanged since the last refresh (a ``stat`` of the folder and of
  index.db, the small state file);
- in the project right after a pull changed one file (the hook re-reads the folder and re-indexes it);
- the baseline checkout's hook (``--baseline``, e.g. main, which knows no team folder) in the same project;
- both hooks in that project with a prompt nothing matches (the check's own cost, no team item to rank).

Medians of wall and CPU milliseconds; the ratios are against the baseline of the same prompt when given,
else against the hook in a project without a team folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT))

from bench.hook_speed import CPU_MS, make_home, real_python, timed  # noqa: E402
from sophia.memory import team_repo  # noqa: E402

PROMPT = "how did we fix the flaky postgres migration test last time?"  # the team files match it
OTHER = "write a haiku about autumn leaves falling slowly"  # nothing matches: the check's own cost shows
# each row of this checkout's hook -> the baseline's row of the same project and prompt
BASE_OF = {"no folder": "baseline, no folder", "unchanged": "baseline", "after a pull": "baseline",
           "unchanged, no match": "baseline, no match"}


def team_files(project: Path, n: int) -> list[Path]:
    folder = project / ".sophia" / "team"
    folder.mkdir(parents=True)
    out = []
    for i in range(n):
        p = folder / f"rule_{i:04d}.md"
        p.write_text(team_repo.render({"id": f"rule_{i:04d}", "kind": "rule", "trigger": "postgres",
                                       "learned_by": "Alice", "learned_at": "2026-01-01T00:00:00Z",
                                       "confidence": 0.8, "evidence": ["validated 2 times"]},
                                      f"Team lesson {i}: run the postgres migration tests with "
                                      f"`make migrate-test-{i}`."))
        out.append(p)
    return out


def age(paths: list[Path], seconds: float) -> None:
    """Stamps older than the racy window (a change in the same tick is looked at again)."""
    import time

    t = time.time() - seconds
    for p in paths:
        os.utime(p, (t, t))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout whose hook is the baseline")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    base = Path(tempfile.mkdtemp(prefix="sophia-teambench-"))
    try:
        info = make_home(base, args.episodes)
        plain = info["projects"][3]
        project = base / "work" / "teamproj"
        (project / ".git").mkdir(parents=True)
        files = team_files(project, args.files)
        folder = project / ".sophia" / "team"
        env = dict(os.environ, HOME=str(base), SOPHIA_HOME=str(info["home"]), SOPHIA_PYTHON=real_python())
        env.pop("SOPHIA_HOOK_GUARD", None)

        def payload(cwd: str | Path, session: str, prompt: str = PROMPT) -> bytes:
            return json.dumps({"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                               "cwd": str(cwd), "transcript_path": str(base / "t.jsonl")}).encode()

        hook = [str(ROOT / "hooks" / "prompt_context.sh")]
        other = [str(args.baseline / "hooks" / "prompt_context.sh")] if args.baseline else None
        age([*files, folder], 60)
        out = timed(hook, payload(project, "warm"), env)[1]  # the first refresh
        assert b"team rule, from Alice" in out, out[:400]
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in (*BASE_OF, *BASE_OF.values())}
        for r in range(args.rounds):
            age([folder], 60)  # older than the racy window: the record holds
            for name, argv, data in (("no folder", hook, payload(plain, f"a{r}")),
                                     ("baseline, no folder", other, payload(plain, f"g{r}")),
                                     ("unchanged", hook, payload(project, f"b{r}")),
                                     ("baseline", other, payload(project, f"c{r}")),
                                     ("unchanged, no match", hook, payload(project, f"e{r}", OTHER)),
                                     ("baseline, no match", other, payload(project, f"f{r}", OTHER))):
                if argv is None:
                    continue
                ms = timed(argv, data, env)[0]
                runs[name].append((ms, CPU_MS[id(argv)]))
            # a pull replaced one file (a new inode, so the folder changed), outside the racy window
            p = files[r % len(files)]
            text = p.read_text()
            p.unlink()
            p.write_text(text.replace("make migrate-test", f"make migrate-test-r{r}"))
            age([p, folder], 30 + r)
            ms = timed(hook, payload(project, f"d{r}"), env)[0]
            runs["after a pull"].append((ms, CPU_MS[id(hook)]))
            rec = team_repo.read_state(info["home"])["projects"][str(project)]
            assert rec["files"][p.name] == team_repo._stamp(str(p)), "the hook did not re-index the pulled file"
        doc = report(runs)
        doc["in_process"] = micro(info["home"], str(project), plain, folder)
        doc.update(rounds=args.rounds, episodes=args.episodes, files=args.files,
                   baseline=str(args.baseline) if args.baseline else "the hook in a project without a team folder")
        if args.json:
            print(json.dumps(doc, indent=2))
        else:
            m = doc["in_process"]
            print(f"in process: os.stat {m['stat_us']:.1f} us; changed() {m['changed_us']:.1f} us "
                  f"({m['changed_ratio']:.1f}x a stat), {m['changed_no_folder_us']:.1f} us in a project without one; "
                  f"refresh_all() unchanged {m['refresh_all_us']:.0f} us ({m['refresh_all_ratio']:.0f}x a stat)")
            print(f"prompt_context.sh, {args.episodes} episodes indexed, {args.files} team files, "
                  f"{args.rounds} rounds; baseline: {doc['baseline']}")
            for name, row in doc["hooks"].items():
                print(f"  {name:<20} wall {row['wall_ms']:7.1f} ms ({row['wall_ratio']:.2f}x)   "
                      f"cpu {row['cpu_ms']:7.1f} ms ({row['cpu_ratio']:.2f}x)")
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def micro(home: Path, project: str, plain: str, folder: Path, n: int = 3000) -> dict[str, float]:
    """Microseconds per call, in process (medians of 5 batches): the hooks' check, the CLI's refresh when
    nothing changed, and a bare ``os.stat`` of the folder as the baseline."""
    import timeit

    age([*folder.iterdir(), folder], 60)
    team_repo.refresh_all(home, [project])

    def per_call(fn: Any, k: int = n) -> float:
        return statistics.median(timeit.repeat(fn, number=k, repeat=5)) / k * 1e6

    stat = per_call(lambda: os.stat(folder))
    changed = per_call(lambda: team_repo.changed(home, project))
    refresh = per_call(lambda: team_repo.refresh_all(home, [project]), n // 10)
    return {"stat_us": round(stat, 2), "changed_us": round(changed, 1), "changed_ratio": round(changed / stat, 1),
            "changed_no_folder_us": round(per_call(lambda: team_repo.changed(home, plain)), 1),
            "refresh_all_us": round(refresh, 1), "refresh_all_ratio": round(refresh / stat, 1)}


def report(runs: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    """Medians; each ratio against the baseline of the same prompt (the matching one, or no match)."""
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items() if v}
    out = {}
    for k, (w, c) in med.items():
        ref = med.get(BASE_OF.get(k, k)) or med["no folder"]
        out[k] = {"wall_ms": round(w, 1), "cpu_ms": round(c, 1), "wall_ratio": round(w / ref[0], 3),
                  "cpu_ratio": round(c / ref[1], 3)}
    return {"hooks": out}


if __name__ == "__main__":
    raise SystemExit(main())
