"""The digest worker: ``python -m sophia.learning.worker [--once]``. One per home; drains the queue, exits idle.

Holds ``run/digest-worker.lock`` (a flock: the kernel drops it when the worker dies) for its whole life;
a second worker finds it held and exits at once. On start it puts back in ``pending/`` whatever a
killed worker left in ``running/``, and queues the tier-3 audits of asks the guardian logged since the
last pull (:func:`.audits.sync`). Per job, the stages of its kind run in order, each one:

1. a guarded headless ``claude -p --model <learning_model>`` with the stage's prompt
   (``prompts/<stage>.md``: ``extract`` then ``reflect`` for a session, ``consolidate``; ``$name`` fields
   filled by :func:`prompt_fields`, among them the condensed, redacted session, never the raw
   transcript) under the seal (:mod:`.seal`: no tool at all, or only ``s3 recall`` / ``s3 list`` through
   Bash for the stages that ask memory: the kit's ``s3`` is put first on PATH; in a fresh empty folder);
   its cost goes to the ledger;
2. the JSON it answered, bound to the session's episode where it left it out, is saved to
   ``digests/results/<job>.<stage>.json`` before anything is applied;
3. that file is applied through ``s3 apply``'s code (``memory.apply.apply_result``), idempotent through
   its ledger, and the stage is recorded in the job.

So a SIGKILL at any instant costs at most one rerun of the stage in flight and never applies a stage
twice: a saved result is applied again (a no-op if it was) instead of asking the model anew. An idle
worker looks once more for a due job after letting go of its lock (:func:`drain`: no lost wake-up).

A failure (see ``headless``) puts the job back in ``pending/`` after a backoff (1 min, 10 min, 1 h), then
parks it with its reason. The daily caps stop the worker before a job (or a stage) and leave the job
pending with the reason "daily cap reached".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import string
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .. import config_defaults, paths
from ..atomic import read_json, write_json_atomic
from ..errors import SophiaError
from ..locking import try_flock
from . import headless, ledger, queue, seal

BACKOFFS = (60.0, 600.0, 3600.0)  # wait after failed attempt 1, 2, 3; the attempt after the last one parks
PROMPT_DIR = queue.PROMPT_DIR  # the stage prompts (SOPHIA_DIGEST_PROMPTS names another folder)
MAX_WAIT = 120.0  # an idle worker waits this long at most for a job whose retry is due soon
IDLE = "idle: no job is due"


class Stage:
    """A stage: its prompt's name, what applies its answer, the ``s3`` subcommands it may run (none: no tool)."""

    __slots__ = ("name", "apply_kind", "s3")

    def __init__(self, name: str, apply_kind: str, s3: tuple[str, ...] = ()) -> None:
        self.name, self.apply_kind, self.s3 = name, apply_kind, s3


_STAGE = {s.name: s for s in (
    Stage("extract", "extraction"),  # the condensed session is in the prompt
    Stage("reflect", "reflection", ("recall", "list")),  # compares with past episodes and kept rules
    Stage("consolidate", "consolidation", ("list",)),  # the clusters are in the prompt; it lists kept rules
    Stage("audit", "guardian"),  # a tier-3 audit: the call is in the prompt, it runs nothing
)}
STAGES: dict[str, tuple[Stage, ...]] = {kind: tuple(_STAGE[n] for n in names)
                                        for kind, names in queue.STAGES_OF.items()}


class Settings:
    """How this worker runs; the defaults are the detached worker's."""

    def __init__(self, home: Path, *, prompt_dir: Path = PROMPT_DIR, backoffs: tuple[float, ...] = BACKOFFS,
                 max_wait: float = MAX_WAIT, once: bool = False, respect_switch: bool = True,
                 say: Callable[[str], None] | None = None) -> None:
        self.home, self.prompt_dir, self.backoffs, self.max_wait = home, prompt_dir, backoffs, max_wait
        self.once, self.respect_switch = once, respect_switch
        self.say = say or (lambda msg: _log(home, msg))


class Failed(Exception):
    """A stage failed; the message is the job's reason."""


class Stop(Exception):
    """The worker must stop before this job (a cap, no prompts); the job stays pending with the reason."""


def _log(home: Path, msg: str) -> None:
    from ..atomic import append_line
    from ..redact import redact
    from ..timeutil import iso

    with contextlib.suppress(SophiaError):
        append_line(paths.logs_dir(home) / "digest.log", f"{iso()} {redact(msg)[:2000]}")


@contextlib.contextmanager
def worker_lock(home: Path) -> Iterator[bool]:
    """Hold the worker lock if no other worker does; yields whether this process got it."""
    lp = queue.worker_lock_path(home)
    lp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = try_flock(lp)
    if fd is None:
        yield False
        return
    try:
        os.pwrite(fd, f"{os.getpid():<10d}\n".encode(), 0)
        yield True
    finally:
        os.close(fd)


def config(home: Path) -> dict[str, Any]:
    return config_defaults.load(paths.config_path(home))[0]


def drain(st: Settings) -> dict[str, Any]:
    """Run due jobs until the queue is idle (or one job with ``once``). Returns what happened.

    The lost wake-up: a hook that enqueues while this worker, idle, is about to let go of its lock sees
    the lock held and starts no worker. So after letting go, an idle worker looks once more for a due
    job (the hook wrote its job before it looked at the lock) and, if there is one, takes the lock again
    (or leaves the job to the worker that the hook started meanwhile)."""
    summary: dict[str, Any] = {"ran": 0, "done": 0, "retry": 0, "parked": 0, "held": 0, "stopped": ""}
    while True:
        with worker_lock(st.home) as mine:
            if mine:
                for jid in queue.recover(st.home):
                    st.say(f"{jid}: back in pending (its worker died mid-job)")
                _sync_audits(st)
            summary["stopped"] = _loop(st, summary) if mine else "another digest worker is running"
        if not (mine and summary["stopped"] == IDLE and _due(st)):
            break
        st.say("a job came in as the worker went idle: draining again")
    st.say(f"digest worker stops: {summary['stopped']}")
    if summary["done"]:
        from ..team.launch import kick

        kick(st.home, "after digest")  # detached; nothing when team sync is not configured
    return summary


def _sync_audits(st: Settings) -> None:
    """Queue the tier-3 audits of asks logged since the last pull (one whose hook child was lost)."""
    from . import audits

    try:
        for jid in audits.sync(st.home):
            st.say(f"{jid}: queued from the guardian's log")
    except (SophiaError, OSError) as exc:
        st.say(f"guardian audits not pulled: {exc}")


def enabled_kinds(cfg: dict[str, Any]) -> tuple[str, ...]:
    """The kinds of job the config lets run: the digests with ``learning_enabled``, the tier-3 audits with
    ``guardian.tier3_enabled`` (each switch alone; both count against the same daily caps)."""
    out = [k for k in queue.KINDS if k != "guardian"] if cfg.get("learning_enabled") else []
    if (cfg.get("guardian") or {}).get("tier3_enabled"):
        out.append("guardian")
    return tuple(out)


def _kinds(st: Settings, cfg: dict[str, Any] | None = None) -> tuple[str, ...] | None:
    """What this worker may claim (None: any kind, the switches are not consulted)."""
    return enabled_kinds(cfg if cfg is not None else config(st.home)) if st.respect_switch else None


def _pending(home: Path, kinds: tuple[str, ...] | None) -> list[dict[str, Any]]:
    return [j for j in queue.jobs(home, ("pending",)) if j.get("kind") and (kinds is None or j["kind"] in kinds)]


def _due(st: Settings) -> bool:
    now = time.time()
    return any(float(j.get("next_try_at") or 0) <= now for j in _pending(st.home, _kinds(st)))


def _loop(st: Settings, summary: dict[str, Any]) -> str:
    while True:
        cfg = config(st.home)
        kinds = _kinds(st, cfg)
        if kinds == ():
            return "automatic learning is off (learning_enabled is false)"
        cap = ledger.cap_reason(st.home, cfg)
        if cap:
            _note_pending(st.home, cap)
            return cap
        job = queue.claim(st.home, kinds=kinds)
        if job is None:
            if not _wait_for_due(st):
                return IDLE
            continue
        summary["ran"] += 1
        state = run_job(st, job, cfg)
        summary[state] += 1
        if st.once or state == "held":
            return "stopped before a job" if state == "held" else "ran one job (--once)"


def _wait_for_due(st: Settings) -> bool:
    """Sleep until the next pending job it may run is due, if that is soon enough. False: nothing is coming."""
    waits = [float(j.get("next_try_at") or 0) - time.time() for j in _pending(st.home, _kinds(st))]
    if not waits or min(waits) > st.max_wait:
        return False
    time.sleep(max(0.0, min(waits)))
    return True


def _note_pending(home: Path, reason: str) -> None:
    """Say on every pending job why it waits (nothing else about it changes)."""
    for job in queue.jobs(home, ("pending",)):
        if job.get("kind"):
            queue.note(home, job["id"], reason)


def run_job(st: Settings, job: dict[str, Any], cfg: dict[str, Any]) -> str:
    """Run one claimed job to done, a retry or parked; returns which (or ``held``: stopped before it ran)."""
    st.say(f"{job['id']}: attempt {job['attempts']} ({job['kind']} {job['session_id']})")
    try:
        for stage in STAGES[job["kind"]]:
            if stage.name not in job.setdefault("stages_done", []):
                _run_stage(st, job, stage, cfg)
    except Stop as exc:
        queue.move(st.home, dict(job, attempts=job["attempts"] - 1), "pending", str(exc))
        st.say(f"{job['id']}: stays pending: {exc}")
        return "held"
    except Failed as exc:
        return _failed(st, job, str(exc))
    except Exception as exc:  # noqa: BLE001 - an unforeseen failure retries and parks like any other,
        return _failed(st, job, f"{type(exc).__name__}: {exc}")  # never leaves the job stuck in running/
    queue.move(st.home, job, "done", "")
    st.say(f"{job['id']}: done")
    if job["kind"] == "session":
        _refresh_user(st, cfg)
    return "done"


def _refresh_user(st: Settings, cfg: dict[str, Any]) -> None:
    """The user model learns from the digest just applied now, not one session later."""
    from ..memory import user_model

    try:
        user_model.refresh(st.home, str(cfg.get("current_user") or "default"))
    except Exception as exc:  # noqa: BLE001 - the job is done; the next session's runner refreshes again
        st.say(f"user model not refreshed: {type(exc).__name__}: {exc}")


def _failed(st: Settings, job: dict[str, Any], reason: str) -> str:
    n = int(job["attempts"])
    if n > len(st.backoffs):
        queue.move(st.home, job, "parked", f"{reason} (gave up after {n} attempts)")
        st.say(f"{job['id']}: parked: {reason}")
        return "parked"
    wait = st.backoffs[n - 1]
    queue.move(st.home, job, "pending", reason, time.time() + wait)
    st.say(f"{job['id']}: failed ({reason}); retry in {wait:g} s")
    return "retry"


def result_path(home: Path, job: dict[str, Any], stage: Stage) -> Path:
    return queue.digests_dir(home) / "results" / f"{job['id']}.{stage.name}.json"


def _run_stage(st: Settings, job: dict[str, Any], stage: Stage, cfg: dict[str, Any]) -> None:
    saved = result_path(st.home, job, stage)
    if not saved.is_file():
        prompt = stage_prompt(st, job, stage)
        cap = ledger.cap_reason(st.home, cfg, job["id"])
        if cap:
            raise Stop(cap)
        st.say(f"{job['id']}: stage {stage.name} (headless claude)")
        out = headless.run(prompt, home=st.home, access=seal.args(stage.s3),
                           max_turns=cfg["reflection_max_turns"],  # checked by config_defaults.load
                           timeout=float(cfg["reflection_timeout_seconds"]), model=cfg.get("learning_model"))
        ledger.record(st.home, job["id"], stage.name, out)
        if not out.ok:
            raise Failed(out.reason)
        try:
            answer = headless.json_answer(out.text)
        except ValueError as exc:
            from ..redact import redact

            raise Failed(f"{exc} (it began {' '.join(redact(out.text).split())[:80]!r})") from None
        write_json_atomic(saved, bind_episode(answer, stage, episode_of(st.home, job)))
    _apply(st, job, stage, saved)


def _apply(st: Settings, job: dict[str, Any], stage: Stage, saved: Path) -> None:
    from ..contracts import ContractError
    from ..memory.apply import apply_result

    try:
        if stage.apply_kind == "guardian":  # validated by guardian.audit, logged with the call it audited
            from ..guardian import tier3

            summary = tier3.apply(st.home, job, read_json(saved))
        else:
            summary = apply_result(stage.apply_kind, read_json(saved), st.home)
    except (ContractError, SophiaError) as exc:
        saved.unlink(missing_ok=True)  # a retry asks the model again
        raise Failed(f"invalid output ({stage.name}): {' '.join(str(exc).split())[:300]}") from None
    job["stages_done"].append(stage.name)
    queue.save(st.home, job)
    st.say(f"{job['id']}: stage {stage.name} applied" + (" (already applied)" if summary.get("already_applied") else ""))


def stage_prompt(st: Settings, job: dict[str, Any], stage: Stage) -> str:
    """The stage's prompt with its ``$name`` fields filled in (:func:`prompt_fields`). No prompt file: the
    worker stops (the job waits, it has done nothing wrong)."""
    p = st.prompt_dir / f"{stage.name}.md"
    try:
        text = p.read_text(encoding="utf-8")
    except OSError:
        raise Stop(f"no digest prompt for stage {stage.name} ({p})") from None
    tpl = string.Template(text)
    return tpl.safe_substitute(prompt_fields(st.home, job, set(tpl.get_identifiers())))


def prompt_fields(home: Path, job: dict[str, Any], wanted: set[str]) -> dict[str, str]:
    """What a stage prompt may name: ``$session_id``, ``$transcript``, ``$cwd``, ``$summary``, ``$home``,
    ``$job_id``, ``$today``, ``$episode_id`` (the session's episode), and, computed only when named,
    ``$session`` (the condensed session), ``$extracted`` (what stage 1 stored), ``$clusters`` (the
    consolidation's evidence)."""
    fields = {k: str(job.get(k) or "") for k in ("session_id", "transcript", "cwd", "summary")}
    fields.update(home=str(home), job_id=job["id"], today=time.strftime("%Y-%m-%d"),
                  episode_id=episode_of(home, job) or "")
    makers: dict[str, Callable[[], str]] = {
        "session": lambda: condensed_session(job),
        "extracted": lambda: _saved_text(result_path(home, job, _STAGE["extract"])),
        "clusters": lambda: consolidation_evidence(home),
        "audit": lambda: _audit_input(job),
    }
    fields.update({k: make() for k, make in makers.items() if k in wanted})
    return fields


def _audit_input(job: dict[str, Any]) -> str:
    from ..guardian import tier3

    return tier3.audit_input(job)


def episode_of(home: Path, job: dict[str, Any]) -> str | None:
    """The job's session's episode: the one the job names, else the newest the episode index has for it."""
    if job.get("episode"):
        return str(job["episode"])
    from ..episode_store import read_index

    try:
        entries = read_index(home).get("entries") or []
    except SophiaError:
        return None
    return next((str(e["id"]) for e in entries if isinstance(e, dict) and e.get("id")
                 and e.get("session_id") == job.get("session_id")), None)


def condensed_session(job: dict[str, Any]) -> str:
    """The session as the digest reads it: redacted, within ``condense.BUDGET_TOKENS``, never the raw file."""
    from . import condense

    summary = str(job.get("summary") or "") or None
    try:
        return condense.condense(str(job.get("transcript") or ""), compact=summary)
    except OSError as exc:
        if summary:  # the compact summary alone still tells what happened
            return condense.render(condense.Session(), compact=summary)
        raise Failed(f"cannot read the transcript {job.get('transcript') or '(none given)'}: "
                     f"{exc.strerror or exc}") from None


def _saved_text(p: Path) -> str:
    try:
        return p.read_text(encoding="utf-8")
    except OSError:
        return "(nothing: stage 1 stored no result)"


def consolidation_evidence(home: Path) -> str:
    """The unconsolidated episodes clustered (``s3 consolidate --prepare``), without their actions, cut to
    the same budget as a condensed session."""
    import json

    from ..memory.prepare import consolidate_pack
    from . import condense

    pack = consolidate_pack(home)
    for c in pack["clusters"]:
        for b in c["episodes"]:
            b.pop("actions", None)
    text = json.dumps({k: pack[k] for k in ("clustering", "unconsolidated", "clusters", "noise")},
                      ensure_ascii=False, default=str)
    limit = condense.BUDGET_TOKENS * condense.CHARS_PER_TOKEN
    return text if len(text) <= limit else text[:limit] + " [... cut ...]"


def bind_episode(answer: Any, stage: Stage, episode: str | None) -> Any:
    """Name the session's episode where the answer left it out: the extraction's narrative and the
    reflection's lessons attach to it (an answer wrapped in an envelope is left as it is)."""
    if not episode or not isinstance(answer, dict) or "agent_type" in answer:
        return answer
    if stage.apply_kind == "extraction" and not answer.get("episode_id"):
        answer["episode_id"] = episode
    elif stage.apply_kind == "reflection" and answer.get("episodes_analyzed") in (None, [], [""]):
        answer["episodes_analyzed"] = [episode]
    return answer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sophia.learning.worker", description=__doc__.split("\n")[0])
    ap.add_argument("--once", action="store_true", help="run at most one job")
    ap.add_argument("--prompt-dir", type=Path, default=queue.prompt_dir())
    ap.add_argument("--backoffs", default=",".join(f"{b:g}" for b in BACKOFFS), help="seconds, comma-separated")
    ap.add_argument("--max-wait", type=float, default=MAX_WAIT)
    a = ap.parse_args(argv)
    home = paths.sophia_home()
    seal.s3_on_path(home)
    st = Settings(home, prompt_dir=a.prompt_dir, backoffs=tuple(float(x) for x in a.backoffs.split(",") if x),
                  max_wait=a.max_wait, once=a.once)
    try:
        drain(st)
    except Exception as exc:  # noqa: BLE001 - detached: log one line, never a traceback
        _log(home, f"digest worker: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
