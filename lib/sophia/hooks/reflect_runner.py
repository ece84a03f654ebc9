"""Detached reflection run: ``python -I -S reflect_runner.py EPISODE_ID...``. Stdlib only.

Started by the session_end hook (never waited for). Holds ``run/reflection.lock`` for its
whole life (one reflection per home), runs the reflection subagent through a headless
``claude -p`` that cannot recurse (``SOPHIA_HOOK_GUARD=1``, all hooks disabled, bounded
turns, no session persistence), then applies the AgentResult it wrote with
``s3 apply reflection FILE`` when the ``s3`` CLI is available; otherwise the result stays
in ``agent_results/`` for a later ``s3 apply``. Everything it prints goes to
``logs/reflection.log`` (redacted).
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))))

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

from sophia import paths
from sophia.hooks.runtime import load_config, log
from sophia.learning import headless
from sophia.locking import try_flock

KIT_ROOT = Path(__file__).resolve().parents[3]
AGENT = "s3-reflection"
_SAFE = re.compile(r"^ep_[A-Za-z0-9_-]{1,100}$")


def find_s3(home: Path) -> str | None:
    explicit = os.environ.get("SOPHIA_S3")
    if explicit:  # an explicit choice is final, even when it names nothing runnable
        return explicit if os.access(explicit, os.X_OK) else None
    for cand in (str(home / "venv" / "bin" / "s3"),
                 str(KIT_ROOT / ".venv" / "bin" / "s3")):
        if cand and os.access(cand, os.X_OK):
            return cand
    return shutil.which("s3")


def agent_args() -> list[str]:
    """Run as the installed subagent if Claude Code can find it, else carry its prompt along."""
    home_agent = Path.home() / ".claude" / "agents" / f"{AGENT}.md"
    plugin = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if home_agent.is_file() or (plugin and (Path(plugin) / "agents" / f"{AGENT}.md").is_file()):
        return ["--agent", AGENT]
    kit = KIT_ROOT / "agents" / f"{AGENT}.md"
    try:
        text = kit.read_text(encoding="utf-8")
    except OSError:
        return []
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end > 0:
            text = text[end + 4:]
    return ["--append-system-prompt", text.strip()[:20000]] if text.strip() else []


def build_prompt(home: Path, episode_ids: list[str], task_id: str, result: Path) -> str:
    files = ", ".join(str(paths.episodes_dir(home) / f"{e}.json") for e in episode_ids)
    return (
        f"You are the Sophia System 3 reflection subagent ({AGENT}). Reflect on episode(s) "
        f"{', '.join(episode_ids)} (files: {files}; the episode index is {paths.episode_index_path(home)}, "
        f"existing heuristics are in {paths.rules_path(home)}). Extract at most 3 reusable heuristics, "
        f"capability updates and knowledge gaps as your instructions describe. Then write ONE JSON file, "
        f"{result}, holding the AgentResult envelope: "
        f'{{"task_id": "{task_id}", "agent_type": "{AGENT}", "status": "complete", '
        f'"timestamp": "<ISO time>", "result": {{...your reflection...}}, "error": null}}. '
        "Do not modify any other file."
    )


def main(argv: list[str]) -> int:
    home = paths.sophia_home()
    episode_ids = [a for a in argv if _SAFE.match(a)]
    if not episode_ids:
        log("reflection: no valid episode id given", home, "reflection.log")
        return 0
    run = paths.run_dir(home)
    run.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = try_flock(run / "reflection.lock")
    if fd is None:
        log(f"reflection: another reflection is running; skipped {episode_ids}", home, "reflection.log")
        return 0
    pidfile = run / "reflection.pid"
    try:
        pidfile.write_text(f"{os.getpid()}\n", encoding="ascii")
        status = _reflect(home, episode_ids)
        log(f"reflection: finished ({status})", home, "reflection.log")
        return 0
    finally:
        try:
            pidfile.unlink()
        except OSError:
            pass
        os.close(fd)


def _reflect(home: Path, episode_ids: list[str]) -> str:
    cfg = load_config(home)
    task_id = f"reflect_{time.strftime('%Y%m%d_%H%M%S', time.gmtime())}_{secrets.token_hex(3)}"
    results = paths.agent_results_dir(home)
    results.mkdir(parents=True, exist_ok=True, mode=0o700)
    result = results / f"{task_id}.json"
    max_turns, timeout = cfg["reflection_max_turns"], cfg["reflection_timeout_seconds"]  # checked by load_config
    log(f"reflection: {task_id} started for {episode_ids} (pid {os.getpid()})", home, "reflection.log")
    out = headless.run(build_prompt(home, episode_ids, task_id, result), home=home, cwd=home, max_turns=max_turns,
                       timeout=timeout, access=headless.unsealed("Read,Write,Glob,Grep", [str(home)]),
                       extra=agent_args())
    if out.returncode is None:  # it never ran to an exit: no client, cannot start, timed out
        log(f"reflection: {task_id} skipped: {out.reason}", home, "reflection.log")
        return out.reason
    log(f"reflection: {task_id} claude exit {out.returncode}: {' '.join(out.output.split())[:1500]}", home,
        "reflection.log")
    if not result.is_file():
        log(f"reflection: {task_id} wrote no result file", home, "reflection.log")
        return "no result"
    s3 = find_s3(home)
    if not s3:
        log(f"reflection: {task_id} result left in {result} (no s3 CLI found to apply it)", home, "reflection.log")
        return "result left unapplied"
    try:
        applied = subprocess.run([s3, "apply", "reflection", str(result)], env=headless.guarded_env(home), stdin=subprocess.DEVNULL,
                                 capture_output=True, timeout=300, check=False)
        msg = (applied.stdout + applied.stderr).decode("utf-8", "replace")
        log(f"reflection: {task_id} s3 apply exit {applied.returncode}: {' '.join(msg.split())[:1000]}", home,
            "reflection.log")
        return "applied" if applied.returncode == 0 else f"s3 apply exit {applied.returncode}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        log(f"reflection: {task_id} s3 apply failed: {exc}", home, "reflection.log")
        return "s3 apply failed"


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as exc:  # noqa: BLE001 - detached: log, never a traceback
        log(f"reflection: {type(exc).__name__}: {exc}", None, "reflection.log")
        sys.exit(0)
