"""The guardian on real agent traffic: what it asks or denies, and what it costs next to bare bash.

    python bench/guardian_real.py [--file ../shared/data/guardian/real_commands_dev.jsonl] [--kit DIR]
                                  [--limit N] [--list] [--resident warm|lazy|off]

Each command of the file (real Bash commands coding agents sent) is fed as a PreToolUse payload to the
real ``hooks/guardian_tier1.sh`` of the kit, with the command's own ``cwd`` and a ``HOME`` that matches
it (``/Users/<name>`` or ``/home/<name>`` when the cwd lies there; with no cwd, the first such home the
command names, else ``/home/dev``, and a project folder under it as the cwd). Right before each hook run, the baseline ``bash -c 'cat >/dev/null'`` is fed the
same payload, so machine noise hits both alike. Prints the decisions (allow / ask / deny, by rule), the
hook's median and p95 wall and CPU time as ratios against the baseline's median, and, with ``--list``,
every asked or denied command. Counts are per distinct command. ``--kit`` measures another checkout.

``--resident`` (default warm): the resident analyzer (lib/sophia/guardian/resident.py) is started in
the temp state home and answering before the first timed call, as after SessionStart; ``lazy``: none
is started, the hook starts it on its first flagged call (that call and those before it answers take the
one-shot path); ``off``: SOPHIA_GUARDIAN_RESIDENT=0, every flagged call starts Python (the fallback).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.guardian_speed import CPU, payload, pct, timed  # noqa: E402

SHARED = next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared"))
               if (p / "data/guardian").is_dir()), ROOT.parent / "shared")
HOME_RE = re.compile(r"^(/Users/[^/]+|/home/[^/]+)")


PATH_HOME_RE = re.compile(r"(/Users/[A-Za-z0-9._-]+|/home/[A-Za-z0-9._-]+)")


def home_and_cwd(cwd: str | None, command: str) -> tuple[str, str]:
    """The HOME that matches the command's paths, and its cwd (a project under that HOME when unknown)."""
    if cwd:
        m = HOME_RE.match(cwd)
        return (m.group(1) if m else "/home/dev"), cwd
    m = PATH_HOME_RE.search(command)
    home = m.group(1) if m else "/home/dev"
    return home, f"{home}/project"


def decision(out: bytes, code: int) -> tuple[str, str]:
    """(allow|ask|deny, reason) from the hook's answer."""
    if code == 2:
        return "deny", "exit 2"
    if not out.strip():
        return "allow", ""
    try:
        spec = json.loads(out)["hookSpecificOutput"]
    except (ValueError, KeyError, TypeError):
        return "unreadable", out[:100].decode("utf-8", "replace")
    return spec.get("permissionDecision", "allow"), spec.get("permissionDecisionReason", "")


def run_hook(hook: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float, str, str]:
    """(wall s, CPU s, level, reason) of one whole hook process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(hook, input=data, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, *decision(proc.stdout, proc.returncode)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", type=Path, default=SHARED / "data/guardian/real_commands_dev.jsonl")
    ap.add_argument("--kit", type=Path, default=ROOT, help="the checkout whose hook is measured")
    ap.add_argument("--limit", type=int, default=0, help="only the first N commands")
    ap.add_argument("--list", action="store_true", help="print every asked or denied command")
    ap.add_argument("--python", default=os.path.realpath(sys.executable))
    ap.add_argument("--resident", choices=("warm", "lazy", "off"), default="warm",
                    help="the resident analyzer: running before the first call (default), started by the hook, or off")
    ap.add_argument("--decisions", action="store_true",
                    help="only count decisions, with the kit's analyzer in this process (fast; no timing)")
    a = ap.parse_args()
    if not a.file.is_file():
        print(f"no {a.file}: nothing measured")
        return 0
    rows = [json.loads(line) for line in a.file.read_text().splitlines() if line.strip()]
    rows = rows[: a.limit] if a.limit else rows
    if a.decisions:
        return decisions_only(a.kit, rows, a.file.name, a.list)
    hook = ["bash", str(a.kit / "hooks" / "guardian_tier1.sh")]
    base = ["bash", "-c", "cat >/dev/null"]
    levels: collections.Counter[str] = collections.Counter()
    flagged: list[tuple[str, str, str, str]] = []
    hw, hc, bw, bc = [], [], [], []
    with tempfile.TemporaryDirectory() as sh:
        env0 = {k: v for k, v in os.environ.items() if not k.startswith(("SOPHIA_", "CLAUDE"))}
        env0.update(SOPHIA_HOME=sh, SOPHIA_PYTHON=a.python)
        if a.resident == "off":
            env0["SOPHIA_GUARDIAN_RESIDENT"] = "0"
        daemon = start_resident(a.kit, sh, a.python, env0) if a.resident == "warm" else None
        d_cpu0 = proc_cpu(daemon.pid) if daemon else 0.0
        for r in rows:
            home, cwd = home_and_cwd(r.get("cwd"), r["command"])
            env = dict(env0, HOME=home, CLAUDE_PROJECT_DIR=cwd)
            data = payload("Bash", {"command": r["command"], "description": "run"}, cwd)
            bw.append(timed(base, data, env))
            bc.append(CPU[-1])
            wall, cpu, level, why = run_hook(hook, data, env)
            hw.append(wall)
            hc.append(cpu)
            levels[level] += 1
            if level != "allow":
                flagged.append((level, r["command"], cwd, why))
        d_cpu = proc_cpu(daemon.pid) - d_cpu0 if daemon else 0.0
        stop_resident(sh, daemon)
    n = len(rows)
    b_med = statistics.median(bw)
    print(f"{n} commands from {a.file.name}; hook {hook[1]}; analyzer python {a.python}; resident {a.resident}")
    for level in ("allow", "ask", "deny", "unreadable"):
        if levels[level]:
            print(f"  {level:10} {levels[level]:6}  {100 * levels[level] / n:.2f}%")
    print(f"  asked or denied: {len(flagged)} = {100 * len(flagged) / n:.2f}% (bar: <= 0.5%)")
    print(f"wall: hook median {statistics.median(hw) * 1e3:.2f} ms, p95 {pct(hw, 0.95) * 1e3:.2f} ms; bare bash median "
          f"{b_med * 1e3:.2f} ms -> median {statistics.median(hw) / b_med:.2f}x (bar 1.5x), "
          f"p95 {pct(hw, 0.95) / b_med:.2f}x (bar 12x)")
    print(f"CPU: hook median {statistics.median(hc) * 1e3:.2f} ms, p95 {pct(hc, 0.95) * 1e3:.2f} ms; bare bash median "
          f"{statistics.median(bc) * 1e3:.2f} ms -> median {statistics.median(hc) / statistics.median(bc):.2f}x")
    if d_cpu:
        print(f"resident analyzer CPU (not a child of the hook, so not in the hook's CPU above): "
              f"{d_cpu / n * 1e3:.2f} ms per call on average")
    print(f"load average at the end "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    rules = collections.Counter(re.sub(r"\s+", " ", why)[:70] for _, _, _, why in flagged)
    print("\nreasons (first 70 characters), most frequent first:")
    for why, k in rules.most_common(15):
        print(f"  {k:4}  {why}")
    if a.list:
        print("\nasked or denied:")
        for level, cmd, cwd, why in flagged:
            print(f"  {level:4} {cmd[:140]!r}  (cwd {cwd})\n       {why[:160]}")
    return 0


def start_resident(kit: Path, sh: str, python: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The resident analyzer of the kit for state home ``sh``, answering (its key file written)."""
    lib = f"{kit / 'hooks'}/../lib"  # as hooks/lib/env.sh names it
    proc = subprocess.Popen([python, "-I", "-S", str(kit / "lib/sophia/guardian/resident.py"), "--home", sh,
                             "--lib", lib], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    key = Path(sh, "run", "guardian", "resident")
    deadline = time.monotonic() + 30
    while not key.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    return proc


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a live process (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_resident(sh: str, proc: subprocess.Popen[bytes] | None) -> None:
    """End the resident analyzer of ``sh`` (the one started here, or the one the hook started)."""
    key = Path(sh, "run", "guardian", "resident")
    pids = [proc.pid] if proc else []
    try:
        pids.append(int(key.read_text().split("\n")[4]))
    except (OSError, IndexError, ValueError):
        pass
    for pid in set(pids):
        try:
            os.kill(pid, 15)
        except OSError:
            pass
    if proc:
        proc.wait(10)


def decisions_only(kit: Path, rows: list[dict], name: str, listing: bool) -> int:
    """The analyzer's decision on every command, in this process (the bash stage only ever allows
    earlier, so the asked and denied are the same as through the hook)."""
    sys.path.insert(0, str(kit / "lib"))
    from sophia.guardian.hook import decide

    levels: collections.Counter[str] = collections.Counter()
    flagged = []
    for r in rows:
        home, cwd = home_and_cwd(r.get("cwd"), r["command"])
        env = {"HOME": home, "SOPHIA_HOME": "/nonexistent/.sophia", "CLAUDE_PROJECT_DIR": cwd}
        res = decide({"tool_name": "Bash", "tool_input": {"command": r["command"]}, "cwd": cwd}, env)
        levels[res["decision"]] += 1
        if res["decision"] != "allow":
            flagged.append((res["decision"], res["rule"], r["command"]))
    n = len(rows)
    print(f"{n} commands from {name}; analyzer of {kit} (decisions only)")
    for level in ("allow", "ask", "deny"):
        print(f"  {level:6} {levels[level]:6}  {100 * levels[level] / n:.2f}%")
    print(f"  asked or denied: {len(flagged)} = {100 * len(flagged) / n:.2f}% (bar: <= 0.5%)")
    for (level, rule), k in collections.Counter((lv, ru) for lv, ru, _ in flagged).most_common():
        print(f"  {k:4}  {level:4} {rule}")
    if listing:
        for level, rule, cmd in flagged:
            print(f"  {level:4} {rule:18} {' '.join(cmd.split())[:140]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
