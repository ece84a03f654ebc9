"""What the kit learns from the real dev sessions, judged against what really happened (issue 27).

    PYTHONPATH=lib python bench/lessons.py [--dir ../shared/data/transcripts] [--show]
    SOPHIA_PYTHON=.venv/bin/python PYTHONPATH=lib python bench/lessons.py --replay [--show]

Without ``--replay`` the zero-token learners are called directly (seconds). With ``--replay`` every
labelled session is replayed through the installed hooks as Claude Code runs them
(``bench/replay_transcripts.py``: SessionStart, a Stop and a UserPromptSubmit per prompt, PostToolUse per
call, SessionEnd and its detached learners), then each once more under a new id (a returning user), and
the report adds: each episode's outcome against the label, SessionStart's characters about other
projects, the prompt-time items already in the session's context, and each hook's median wall time.

The labels (``tests/fixtures/transcripts/labels``, written by reading each session) say which calls
really worked, which error -> fix lessons a reader would keep and which commands are the project's
playbook. Every session is learned in file order into one fresh state home, then each once more under a
new session id in its project (a returning user: a resumed session repeats its calls). Each learned
procedure is judged by its evidence (the call ids it keeps):

- an error -> fix is **false** when a call it names as failed did not fail, or its fix did not work;
  **true and useful** when it is a fix a reader listed as useful; **useless** when true but not
  listed, or listed as not useful; **unsafe** when it is a fix the labels mark destructive;
- a playbook command is **false** when a call it names did not work, **useful** when the reader listed
  the command as the project's, else useless;
- **missed**: a useful, non-destructive fix of the labels that no learned procedure names.

Prints the counts and the share of judged items that are false. ``--show`` lists every item.
The classifier's own agreement with the labelled calls is printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT))
LABELS = ROOT / "tests" / "fixtures" / "transcripts" / "labels"
SHARED = next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared"))
               if (p / "data/transcripts").is_dir()), ROOT.parent / "shared")


def labels() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(LABELS.glob("*.json"))]


def verdict(label: dict[str, Any], call: str | None) -> str | None:
    return (label["commands"].get(call) or {}).get("verdict") if call else None


def _matches(fix_calls: dict[str, Any], label: dict[str, Any]) -> list[dict[str, Any]]:
    failed = set(fix_calls.get("failed") or [])
    return [x for x in label["fixes"] if x["fixed"] == fix_calls.get("fixed") or failed & set(x["failed"])]


def judge_fix(fix_calls: dict[str, Any], label: dict[str, Any]) -> str:
    """false / unsafe / useful / useless for a learned error -> fix by the calls it keeps."""
    ends = [verdict(label, c) for c in fix_calls.get("failed") or []]
    if not ends or any(v != "failed" for v in ends) or verdict(label, fix_calls.get("fixed")) != "ok":
        return "false"
    found = _matches(fix_calls, label)
    if any(x.get("destructive") for x in found):
        return "unsafe"
    return "useful" if any(x.get("useful") for x in found) else "useless"


def judge_playbook(calls: list[str], command: str, label: dict[str, Any], shown: dict[str, str]) -> str:
    """false / useful / useless for a learned playbook command by the calls that proved it in this
    session (``shown``: each labelled playbook call's command as the learner shows it)."""
    mine = [c for c in calls if c in label["commands"]]
    if not mine or any(verdict(label, c) != "ok" for c in mine):
        return "false"
    return "useful" if command in shown.values() else "useless"


def missed(learned: list[dict[str, Any]], label: dict[str, Any]) -> list[dict[str, Any]]:
    """The label's useful, non-destructive fixes that no learned fix names."""
    out = []
    for x in label["fixes"]:
        if not x.get("useful") or x.get("destructive"):
            continue
        if not any(x in _matches(f, label) for f in learned):
            out.append(x)
    return out


def classifier_agreement(where: Path) -> Counter[tuple[str, str]]:
    """(label, classifier) verdict pairs over every labelled call, through the transcript readers."""
    from sophia import transcript_entries as T

    pairs: Counter[tuple[str, str]] = Counter()
    for label in labels():
        pending: dict[str, dict[str, Any]] = {}
        for raw in (where / label["file"]).read_bytes().splitlines():
            obj = T.parse_line(raw) or {}
            if obj.get("type") == "assistant":
                pending.update({c["id"]: T.call_record(c) for c in T.tool_calls(obj)})
            for r in T.tool_results(obj) if obj.get("type") == "user" else ():
                rec = pending.pop(r["id"], None)
                if rec and rec["tool"] == "Bash" and r["id"] in label["commands"]:
                    pairs[(label["commands"][r["id"]]["verdict"], T.judge_result(rec, r).verdict)] += 1
    return pairs


def _shown_playbook(label: dict[str, Any], cmds: list[Any], cwd: str | None) -> dict[str, str]:
    want = {x["id"] for x in label["playbook"]}
    return {c.cid: c.display(cwd, whole=False) for c in cmds if c.cid in want}


def learn_all(home: Path, where: Path) -> dict[str, Any]:
    """Every labelled session learned twice (the second time under a new id); per session, what the
    learners saw. Returns {label file: (label, commands, cwd)}."""
    from sophia.learning import commands as C
    from sophia.learning import learners as L
    from sophia.state import init_tree

    init_tree(home)
    seen: dict[str, Any] = {}
    for again in (False, True):
        for label in labels():
            cmds, cwd = C.commands_from_transcript(where / label["file"])
            sid = ("again-" if again else "") + label["file"][:-6]
            L.learn_session(home, sid, cwd, cmds, source_id=sid)
            seen[label["file"]] = (label, cmds, cwd)
    return seen


def judge_home(home: Path, seen: dict[str, Any]) -> tuple[Counter[str], list[tuple[str, str, str]], list[str]]:
    """Judge every procedure in ``home`` by the label of the session its evidence names."""
    from sophia.memory.files import load_items

    by_call = {c: name for name, (label, _, _) in seen.items() for c in label["commands"]}
    counts: Counter[str] = Counter()
    rows: list[tuple[str, str, str]] = []
    learned: dict[str, list[dict[str, Any]]] = {}
    for item in load_items("procedures", home):
        meta = item.get("meta") or {}
        calls = [c for ev in meta.get("evidence") or [] for c in _calls(ev.get("calls") or {})]
        name = next((by_call[c] for c in calls if c in by_call), None)
        if name is None or meta.get("status") == "retired":
            continue
        label, cmds, cwd = seen[name]
        if meta.get("category") == "error_fix":
            ev = (meta.get("evidence") or [{}])[0].get("calls") or {}
            learned.setdefault(name, []).append(ev)
            what = judge_fix(ev, label)
        else:
            what = judge_playbook(calls, (meta.get("procedure_steps") or [""])[0], label,
                                  _shown_playbook(label, cmds, cwd))
        counts[f"{meta.get('category')} {what}"] += 1
        rows.append((name[:40], what, item["text"][:110]))
    gone = [f"{name[:40]}: {x['lesson'][:100]}" for name, (label, _, _) in seen.items()
            for x in missed(learned.get(name, []), label)]
    counts["missed"] = len(gone)
    counts["useful fixes labelled"] = sum(1 for label, _, _ in seen.values() for x in label["fixes"]
                                          if x.get("useful") and not x.get("destructive"))
    return counts, rows, gone


def _calls(calls: dict[str, Any]) -> list[str]:
    out = []
    for v in calls.values():
        out += v if isinstance(v, list) else [v] if isinstance(v, str) else []
    return out


def report(counts: Counter[str]) -> str:
    judged = sum(v for k, v in counts.items() if k.startswith(("error_fix", "playbook")))
    false = counts["error_fix false"] + counts["playbook false"]
    useful = counts["useful fixes labelled"]
    found = useful - counts["missed"]
    return (f"learned items judged: {judged}; false {false} ({100 * false / max(judged, 1):.1f}%), "
            f"unsafe {counts['error_fix unsafe']}; useful fixes learned {found} of {useful} "
            f"({100 * found / max(useful, 1):.0f}%)")


def _timed_hooks(times: dict[str, list[float]]) -> None:
    """Time every hook the replay runs (wall, seconds), by hook and event."""
    import time

    from bench import replay_transcripts as R

    real = R.hook

    def timed(name: str, payload: dict[str, Any], env: dict[str, str]) -> str:
        t0 = time.perf_counter()
        try:
            return real(name, payload, env)
        finally:
            times.setdefault(payload.get("hook_event_name") or name, []).append(time.perf_counter() - t0)

    R.hook = timed


def _wait_for_learners(home: Path, sessions: int, timeout: float = 300.0) -> int:
    """Wait until the detached after-session runners logged one line per session (or ``timeout``)."""
    import time

    log = home / "logs" / "learning.log"
    deadline = time.monotonic() + timeout
    done = 0
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.is_file() else ""
        done = text.count("learned:") + text.count("learners failed")
        if done >= sessions:
            break
        time.sleep(1)
    return done


def replay_all(where: Path, tmp: Path, times: dict[str, list[float]]) -> tuple[Path, list[dict[str, Any]]]:
    """Every labelled session through the real hooks, then again under new ids; the home and the results."""
    import subprocess

    from bench import replay_transcripts as R

    _timed_hooks(times)
    home = tmp / ".sophia"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
    env.update(HOME=str(tmp), SOPHIA_HOME=str(home), REPLAY_DIR=str(tmp), PYTHONPATH=str(ROOT / "lib"),
               SOPHIA_RECALL_SEMANTIC="0", **({"SOPHIA_PYTHON": os.environ["SOPHIA_PYTHON"]}
                                              if os.environ.get("SOPHIA_PYTHON") else {}))
    subprocess.run([sys.executable, "-m", "sophia.cli.entry", "init"], env=env, check=True, capture_output=True)
    files = [where / lb["file"] for lb in labels()]
    results = [R.replay(f, env, 0) for f in files]
    _wait_for_learners(home, len(files))
    results += [R.replay(f, env, 0, again=True) for f in files]
    _wait_for_learners(home, 2 * len(files))
    return home, results


def outcome_rows(home: Path, results: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(session file, label, judged, why) for every replayed session with a label."""
    from bench import replay_transcripts as R

    by_file = {lb["file"][:60]: lb for lb in labels()}
    rows = []
    for r in results:
        lb = by_file.get(r["file"])
        ep = R.episode_report(home, r["session"])
        if lb and ep:
            rows.append((r["session"][:14] + " " + r["file"][:30], lb["outcome"], str(ep.get("outcome")),
                         str(ep.get("why"))))
    return rows


def _replayed_seen(home: Path, where: Path) -> dict[str, Any]:
    from sophia.learning import commands as C

    return {lb["file"]: (lb, *C.commands_from_transcript(where / lb["file"])) for lb in labels()}


def report_replay(home: Path, where: Path, results: list[dict[str, Any]], times: dict[str, list[float]],
                  show: bool) -> None:
    import statistics

    from bench import replay_transcripts as R

    counts, rows, gone = judge_home(home, _replayed_seen(home, where))
    for k in sorted(counts):
        print(f"{k}: {counts[k]}")
    print(report(counts))
    outs = outcome_rows(home, results)
    right = sum(1 for _, want, got, _ in outs if want == got)
    print(f"outcomes right: {right} of {len(outs)} ({100 * right / max(len(outs), 1):.0f}%)")
    R.print_context_report(home, results)
    for event, ts in sorted(times.items()):
        ts = sorted(ts)
        print(f"hook {event}: {len(ts)} runs, median {1000 * statistics.median(ts):.0f} ms, "
              f"p95 {1000 * ts[int(0.95 * (len(ts) - 1))]:.0f} ms (wall, replay machine)")
    if show:
        for row in sorted(rows):
            print(" | ".join(row))
        for g in gone:
            print(f"missed | {g}")
        for o in outs:
            if o[1] != o[2]:
                print("outcome | " + " | ".join(o))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=SHARED / "data/transcripts")
    ap.add_argument("--show", action="store_true", help="list every learned item with its judgement")
    ap.add_argument("--replay", action="store_true", help="through the installed hooks, twice (slow)")
    a = ap.parse_args()
    if not a.dir.is_dir():
        print(f"no transcripts in {a.dir}: nothing judged")
        return 0
    pairs = classifier_agreement(a.dir)
    agree = sum(v for (x, y), v in pairs.items() if x == y)
    print(f"classifier vs labels: {agree} of {sum(pairs.values())} calls agree")
    for (want, got), n in sorted(pairs.items()):
        print(f"  label {want:11} classifier {got:11} {n}")
    if a.replay:
        times: dict[str, list[float]] = {}
        with tempfile.TemporaryDirectory(prefix="s3-lessons-") as t:
            home, results = replay_all(a.dir, Path(t), times)
            os.environ["SOPHIA_HOME"], os.environ["HOME"] = str(home), t
            report_replay(home, a.dir, results, times, a.show)
        return 0
    with tempfile.TemporaryDirectory(prefix="s3-lessons-") as t:
        os.environ["SOPHIA_HOME"] = str(Path(t) / ".sophia")
        os.environ["HOME"] = t
        home = Path(t) / ".sophia"
        seen = learn_all(home, a.dir)
        counts, rows, gone = judge_home(home, seen)
    for k in sorted(counts):
        print(f"{k}: {counts[k]}")
    print(report(counts))
    if a.show:
        for row in sorted(rows):
            print(" | ".join(row))
        for g in gone:
            print(f"missed | {g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
