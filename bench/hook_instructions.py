"""Instructions each Python hook executes, this checkout against another (a baseline kit), counted by
valgrind's callgrind: repeatable whatever else the machine is doing, unlike wall time.

    PYTHONPATH=lib python bench/hook_instructions.py --baseline-kit /path/to/older/checkout [--episodes 2000]

Builds one synthetic home (bench/hook_speed.py's, with this checkout's code), primes it (buffer, one Stop),
then runs each hook once per kit under callgrind with the same payload and the same interpreter
(``python -I -S lib/sophia/hooks/launch.py HOOK``, as the bash hooks start it). Prints the counts and
their ratio (this / baseline). Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lib")]

from bench import hook_speed as hs  # noqa: E402

CASES = [("prompt_context", "prompt_relevant"), ("prompt_context", "prompt_irrelevant"),
         ("session_start", "SessionStart"), ("session_end", "Stop"), ("session_end", "SessionEnd")]


def instructions(kit: Path, hook: str, payload: bytes, env: dict[str, str], py: str) -> int:
    out = Path(tempfile.mktemp(prefix="callgrind-"))
    try:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", py, "-I", "-S",
                        str(kit / "lib/sophia/hooks/launch.py"), hook], input=payload, env=env,
                       capture_output=True, check=False)
        m = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
        if not m:
            raise SystemExit(f"callgrind wrote no total for {kit} {hook}")
        return int(m.group(1))
    finally:
        out.unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-kit", type=Path, required=True, help="another checkout of the kit")
    ap.add_argument("--episodes", type=int, default=2000)
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        print("valgrind is not installed (apt-get install valgrind); nothing measured")
        return 0
    base = Path(tempfile.mkdtemp(prefix="sophia-hookinstr-"))
    try:
        info = hs.make_home(base, args.episodes)
        pl = hs.payloads(base, info["projects"][3])
        py = hs.real_python()
        env = dict(os.environ, HOME=str(base), SOPHIA_HOME=str(info["home"]), SOPHIA_PYTHON=py)
        env.pop("SOPHIA_HOOK_GUARD", None)
        for _ in range(5):
            hs.timed([str(ROOT / "hooks/log_action.sh")], pl["PostToolUse"], env)
        hs.timed([str(ROOT / "hooks/session_end.sh")], pl["Stop"], env)
        print(f"{args.episodes} episodes; baseline kit {args.baseline_kit}\n")
        print("| hook | baseline M instructions | this M instructions | this / baseline |")
        print("|---|---:|---:|---:|")
        for hook, key in CASES:
            old = instructions(args.baseline_kit.resolve(), hook, pl[key], env, py)
            new = instructions(ROOT, hook, pl[key], env, py)
            print(f"| {hook} ({key}) | {old / 1e6:.1f} | {new / 1e6:.1f} | {new / old:.3f} |", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
