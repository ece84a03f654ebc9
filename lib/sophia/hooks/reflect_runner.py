"""Detached reflection run: ``python -I -S reflect_runner.py EPISODE_ID...``. Stdlib only.

Started by the session_end hook (never waited for). Holds ``run/reflection.lock`` for its whole life (one
reflection per home). Its model reads what sessions recorded, which may carry text meant to steer it, so
the run is sealed like the digest's reflect stage (:mod:`sophia.learning.seal`): the kit hands it, in its
prompt (``learning/prompts/reflect_episodes.md``), the episodes (redacted, within a budget) and the kept
heuristics (:mod:`sophia.learning.reflect_input`); it may run only ``s3 recall`` / ``s3 list`` (the kit's
``s3``, first on PATH), in a fresh empty folder, with none of the user's settings, hooks or MCP servers and
the seal's gate on every tool. It cannot recurse (``SOPHIA_HOOK_GUARD=1``, no user hooks), runs bounded
turns and time, and persists no session. It answers with JSON; the runner keeps in ``episodes_analyzed``
only the episodes it handed over, saves the AgentResult envelope (redacted) in ``agent_results/`` and
applies it with ``s3 apply reflection FILE`` (the contract validates it; an invalid one changes nothing);
with no ``s3`` found the result stays there for a later ``s3 apply``. Everything it prints goes to
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
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sophia import paths
from sophia.atomic import write_json_atomic
from sophia.hooks.runtime import load_config, log
from sophia.learning import headless, queue, reflect_input, seal
from sophia.locking import try_flock
from sophia.redact import redact_obj
from sophia.timeutil import iso

KIT_ROOT = Path(__file__).resolve().parents[3]
AGENT = "s3-reflection"
PROMPT = queue.PROMPT_DIR / "reflect_episodes.md"
S3 = ("recall", "list")  # what the run may run: the digest's reflect stage's
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


def build_prompt(home: Path, eps: reflect_input.Episodes) -> str:
    """The run's whole input: the prompt with the episodes and the kept heuristics filled in."""
    left = (f" {len(eps.left_out)} more pending episodes were left out for room: {', '.join(eps.left_out)}."
            if eps.left_out else "")
    return string.Template(PROMPT.read_text(encoding="utf-8")).safe_substitute(
        episode_ids=", ".join(eps.shown), episodes=eps.text, rules=reflect_input.rules(home),
        today=time.strftime("%Y-%m-%d"), left_out=left)


def bind(answer: dict[str, Any], shown: list[str]) -> dict[str, Any]:
    """The answer with ``episodes_analyzed`` kept to the episodes the run was given (all of them when it
    names none of them): no answer attaches lessons to an episode the kit did not hand over."""
    named = answer.get("episodes_analyzed")
    keep = [e for e in named if e in shown] if isinstance(named, list) else []
    return {**answer, "episodes_analyzed": keep or list(shown)}


def envelope(task_id: str, answer: dict[str, Any]) -> dict[str, Any]:
    return {"task_id": task_id, "agent_type": AGENT, "status": "complete", "timestamp": iso(),
            "result": redact_obj(answer), "error": None}


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


def _say(home: Path, msg: str) -> None:
    log(f"reflection: {msg}", home, "reflection.log")


def _reflect(home: Path, episode_ids: list[str]) -> str:
    task_id = f"reflect_{time.strftime('%Y%m%d_%H%M%S', time.gmtime())}_{secrets.token_hex(3)}"
    eps = reflect_input.episodes(home, episode_ids)
    if eps.missing:
        _say(home, f"{task_id} no readable episode file for {eps.missing}")
    if eps.left_out:
        _say(home, f"{task_id} left out for room: {eps.left_out}")
    if not eps.shown:
        return "no episode to reflect on"
    try:
        prompt = build_prompt(home, eps)
    except OSError as exc:
        _say(home, f"{task_id} has no prompt: {exc}")
        return "no prompt"
    s3 = find_s3(home)
    seal.s3_on_path(home, s3)  # the run's `s3 recall` is the kit's, the one that applies its answer
    _say(home, f"{task_id} started for {eps.shown} (pid {os.getpid()})")
    answer = _run(home, task_id, prompt)
    if isinstance(answer, str):
        return answer
    results = paths.agent_results_dir(home)
    results.mkdir(parents=True, exist_ok=True, mode=0o700)
    result = results / f"{task_id}.json"
    write_json_atomic(result, envelope(task_id, bind(answer, eps.shown)))
    if not s3:
        _say(home, f"{task_id} result left in {result} (no s3 CLI found to apply it)")
        return "result left unapplied"
    return _apply(home, task_id, result, s3)


def _run(home: Path, task_id: str, prompt: str) -> dict[str, Any] | str:
    """The sealed run's JSON answer, or why there is none."""
    cfg = load_config(home)
    out = headless.run(prompt, home=home, access=seal.args(S3), max_turns=cfg["reflection_max_turns"],
                       timeout=cfg["reflection_timeout_seconds"],  # checked by load_config; cwd: a fresh folder
                       model=cfg.get("learning_model"))  # the user's settings do not load in a sealed run
    if out.returncode is None:  # it never ran to an exit: no client, cannot start, timed out
        _say(home, f"{task_id} skipped: {out.reason}")
        return out.reason
    _say(home, f"{task_id} claude exit {out.returncode} ({out.seconds:.0f} s, ${out.cost_usd:.4f}): "
               f"{' '.join(out.output.split())[:1500]}")
    if not out.ok:
        return out.reason
    try:
        return dict(headless.json_answer(out.text))
    except ValueError as exc:
        _say(home, f"{task_id} gave no result: {exc}")
        return "no result"


def _apply(home: Path, task_id: str, result: Path, s3: str) -> str:
    try:
        applied = subprocess.run([s3, "apply", "reflection", str(result)], env=headless.guarded_env(home),
                                 stdin=subprocess.DEVNULL, capture_output=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _say(home, f"{task_id} s3 apply failed: {exc}")
        return "s3 apply failed"
    msg = (applied.stdout + applied.stderr).decode("utf-8", "replace")
    _say(home, f"{task_id} s3 apply exit {applied.returncode}: {' '.join(msg.split())[:1000]}")
    return "applied" if applied.returncode == 0 else f"s3 apply exit {applied.returncode}"


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as exc:  # noqa: BLE001 - detached: log, never a traceback
        log(f"reflection: {type(exc).__name__}: {exc}", None, "reflection.log")
        sys.exit(0)
