"""The guardian on real projects' own scripts: what it says of running them (harmless twins at scale).

    python bench/guardian_scripts.py GIT_DIR [GIT_DIR ...] [--list] [--max-calls N]

Each GIT_DIR (a bare clone or a ``.git`` folder) is exported at HEAD into a temp folder (only the files a
script runner reads: package.json, Makefiles, justfiles, Taskfiles, *.sh, the files under scripts/,
bin/, tools/, hack/, and the executables at the top: gradlew, mvnw, configure ...), then every way an agent would run them is judged by the analyzer in-process, with
the project as cwd and CLAUDE_PROJECT_DIR: ``npm run <script>`` for each package.json script (and a bare
``npm install``), ``make <target>`` for each Makefile target (and ``make``), ``just <recipe>``,
``task <task>``, ``bash <file>`` for each .sh file, ``./<file>`` for each file that starts with ``#!``,
``python <file>`` / ``node <file>`` for .py/.js files under scripts/. Prints how many calls were asked or
denied, by rule, and with ``--list`` each one with its reason, so each can be checked: a real project's
``clean`` target should pass; a release script that force-pushes should not.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from sophia.guardian import recipes  # noqa: E402
from sophia.guardian.analyze import analyze_tool  # noqa: E402

_WANTED = re.compile(r"(?:^|/)(?:package\.json|GNUmakefile|[Mm]akefile|[^/]*\.mk|[Jj]ustfile|\.justfile|"
                     r"[Tt]askfile(?:\.dist)?\.ya?ml|[^/]*\.(?:sh|bash))$|^(?:scripts|bin|tools|hack)/[^/]+$")
_SKIP = re.compile(r"(?:^|/)(?:node_modules|vendor|third_party|fixtures?|testdata|__fixtures__)/")


def export(git_dir: Path, dest: Path) -> tuple[str, list[str]]:
    """Export HEAD's script files into ``dest``; (commit, the exported relative paths). Blobs missing from
    a partial clone are skipped."""
    git = ["git", f"--git-dir={git_dir}"]
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    tree = subprocess.run([*git, "ls-tree", "-r", "-l", "HEAD"], capture_output=True, text=True, check=True).stdout
    wanted = []
    for line in tree.splitlines():
        meta, name = line.split("\t", 1)
        mode, kind, sha, size = meta.split()
        runnable = _WANTED.search(name) or mode == "100755" and "/" not in name
        if kind == "blob" and runnable and not _SKIP.search(name) and size.isdigit() and int(size) <= 256 * 1024:
            wanted.append((name, sha, mode))
    names = []
    for name, sha, mode in wanted:
        blob = subprocess.run([*git, "cat-file", "blob", sha], capture_output=True)
        if blob.returncode != 0:
            continue
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob.stdout)
        if mode == "100755":
            path.chmod(0o755)
        names.append(name)
    return commit, names


def calls(root: Path, names: list[str]) -> list[tuple[str, str]]:
    """(cwd, command) pairs: every way an agent would run these files."""
    out: list[tuple[str, str]] = []
    for name in names:
        path = root / name
        folder, base = str(path.parent), path.name
        text = path.read_text(errors="replace")
        if base == "package.json":
            out += _package_calls(folder, text)
        elif base in ("GNUmakefile", "makefile", "Makefile"):
            mk = recipes.parse_makefile(text, folder)
            out += [(folder, "make")] + [(folder, f"make {t}") for t in mk.rules if not t.startswith(".")
                                         and "%" not in t and "$" not in t]
        elif base.lower() in ("justfile", ".justfile"):
            out += [(folder, "just")] + [(folder, f"just {r}") for r in recipes.parse_justfile(text, folder).recipes]
        elif base.lower().startswith("taskfile"):
            tf = recipes.parse_taskfile(text, folder)
            out += [(folder, f"task {t}") for t in (tf.tasks if tf else {})]
        out += _file_calls(root, name, text)
    return out


def _package_calls(folder: str, text: str) -> list[tuple[str, str]]:
    try:
        scripts = json.loads(text).get("scripts") or {}
    except (ValueError, AttributeError):
        return []
    return [(folder, "npm install")] + [(folder, f"npm run {s}") for s in scripts if isinstance(s, str)]


def _file_calls(root: Path, name: str, text: str) -> list[tuple[str, str]]:
    out = []
    if name.endswith((".sh", ".bash")):
        out.append((str(root), f"bash {name}"))
    if text.startswith("#!"):
        out.append((str(root), f"./{name}"))
    elif name.endswith(".py") and name.startswith("scripts/"):
        out.append((str(root), f"python {name}"))
    elif name.endswith((".js", ".mjs")) and name.startswith("scripts/"):
        out.append((str(root), f"node {name}"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("git_dirs", nargs="+", type=Path)
    ap.add_argument("--list", action="store_true", help="print every asked or denied call with its reason")
    ap.add_argument("--max-calls", type=int, default=400, help="calls judged per repository at most")
    a = ap.parse_args()
    totals: collections.Counter[str] = collections.Counter()
    rules: collections.Counter[str] = collections.Counter()
    times: list[float] = []
    for git_dir in a.git_dirs:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "project"
            root.mkdir()
            commit, names = export(git_dir, root)
            todo = calls(root, names)[:a.max_calls]
            stopped = 0
            for cwd, cmd in todo:
                env = {"HOME": "/home/dev", "CLAUDE_PROJECT_DIR": str(root)}
                t = time.process_time()
                d = analyze_tool("Bash", {"command": cmd}, cwd, env)
                times.append(time.process_time() - t)
                totals[d.level] += 1
                if d.level != "allow" and d.top:
                    stopped += 1
                    rules[d.top.rule] += 1
                    if a.list:
                        where = cwd.replace(str(root), "") or "/"
                        print(f"  {d.level:5} [{where}] {cmd}\n        {d.top.reason().replace(str(root), '<p>')}")
            print(f"{git_dir} @ {commit[:12]}: {len(names)} files, {len(todo)} calls, {stopped} asked or denied")
    times.sort()
    n = sum(totals.values())
    print(f"\n{n} calls: allow {totals['allow']}, ask {totals['ask']}, deny {totals['deny']} "
          f"({(totals['ask'] + totals['deny']) / max(n, 1):.1%} stopped); by rule: {dict(rules)}")
    if times:
        print(f"analysis CPU per call: median {times[len(times) // 2] * 1000:.2f} ms, p95 "
              f"{times[int(len(times) * 0.95)] * 1000:.2f} ms, max {times[-1] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
