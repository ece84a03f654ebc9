"""The zero-token learners on the real transcripts: per transcript, the error -> fix pairs found, the
playbook commands (what a second session of the same project would promote) and the read time.

    python bench/zero_token_learners.py [TRANSCRIPT_DIR]   (default: ../shared/data/transcripts)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from sophia.learning import learners, procedures  # noqa: E402

DEFAULT = ROOT.parent.parent / "shared" / "data" / "transcripts"


def report(path: Path) -> None:
    t0 = time.perf_counter()
    cmds, cwd = learners.commands_from_transcript(path)
    lessons = learners.analyse(cmds, cwd)
    ms = (time.perf_counter() - t0) * 1000
    failed = sum(1 for c in cmds if not c.ok)
    print(f"## {path.name[:70]}")
    print(f"   {len(cmds)} commands, {failed} failed, project {cwd}, {ms:.0f} ms")
    for f in lessons["fixes"]:
        steps = f" after {f['steps']}" if f["steps"] else ""
        print(f"   fix   [{f['key']}] `{f['failed'][:70]}` -> `{f['fix'][:70]}`{steps}")
        print(f"         error: {f['error'][:90]}")
    for p in sorted(lessons["playbook"], key=lambda p: procedures.CLASS_ORDER.index(p["class"])):
        print(f"   book  {p['class']:5} `{p['command'][:90]}`")
    print(f"   failures (gap candidates): {len(lessons['failures'])}")


def main() -> None:
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not where.is_dir() and Path("/work/shared/data/transcripts").is_dir():
        where = Path("/work/shared/data/transcripts")
    files = sorted(where.glob("*.jsonl")) if where.is_dir() else []
    if not files:
        print(f"no transcripts in {where}: skipped")
        return
    for f in files:
        report(f)


if __name__ == "__main__":
    main()
