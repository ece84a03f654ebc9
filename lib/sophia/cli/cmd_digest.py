"""s3 digest list|run|retry|drop: the background digest queue (sophia.learning)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import console, emit_json, existing_home, fail, usage

digest_app = typer.Typer(
    name="digest",
    help="The digest queue: sessions waiting to be digested in the background, their costs, retries.",
    no_args_is_help=True,
)
app.add_typer(digest_app, name="digest")


def _when(at: float) -> str:
    if not at or at <= time.time():
        return "now"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


@digest_app.command("list")
def list_jobs(json_out: JsonOpt = False) -> None:
    """List every digest job (pending, running, done, parked) with its attempts and reason, and today's
    cost. A pending job the daily caps hold says so and from when it may run (JSON: ``deferred``, with
    ``runs_after`` in UTC)."""
    from ..config_defaults import load
    from ..learning import ledger, queue
    from ..paths import config_path

    home = existing_home()
    jobs = queue.jobs(home)
    cfg = load(config_path(home))[0]
    summary = ledger.summary(home, bool(cfg.get("learning_enabled")), cfg)
    for j in jobs:
        if j["state"] == "pending":
            j["deferred"] = ledger.deferral(home, cfg, j["id"])
    if json_out:
        emit_json({"jobs": jobs, "summary": summary})
        return
    c = console()
    c.print(ledger.summary_line(summary), markup=False)
    for j in jobs:  # markup=False: "[pending]" is text, not a Rich style tag
        c.print(f"- [{j['state']}] {j['id']} ({j.get('attempts', 0)} attempts{_due(j)}){_why(j)}", markup=False)


def _due(job: dict[str, Any]) -> str:
    if job["state"] != "pending" or job.get("deferred"):
        return ""
    return f", next try {_when(float(job.get('next_try_at') or 0))}"


def _why(job: dict[str, Any]) -> str:
    """The job's reason; for a pending job the caps hold, when it may run; a cap reason from an earlier
    day, that it may run now."""
    from ..learning.ledger import CAP_REACHED

    if job.get("deferred"):
        return f": {job['deferred']['text']}"
    reason = str(job.get("reason") or "")
    if job["state"] == "pending" and reason.startswith(CAP_REACHED):
        return ": the daily cap held it before and allows it now (at the next session's end or `s3 digest run`)"
    return f": {reason}" if reason else ""


@digest_app.command("run")
def run(
    once: Annotated[bool, typer.Option("--once", help="Run at most one job.")] = False,
    prompt_dir: Annotated[Path | None, typer.Option("--prompt-dir", hidden=True,
                                                    help="Stage prompts from here (development).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Run the digest worker in the foreground, printing its progress, until the queue is idle.

    Runs even when `learning_enabled` is false (you asked); the daily caps still apply. Exits 1 when
    another worker is running.
    """
    from ..learning import seal, worker

    home = existing_home()
    seal.s3_on_path(home)  # the reflect stage's `s3 recall` runs the kit's own s3, as in the detached worker
    say = (lambda _msg: None) if json_out else (lambda msg: console().print(msg, markup=False))
    st = worker.Settings(home, prompt_dir=prompt_dir or worker.PROMPT_DIR, once=once, respect_switch=False, say=say)
    summary = worker.drain(st)
    if json_out:
        emit_json(summary)
    else:
        console().print(f"ran {summary['ran']}: {summary['done']} done, {summary['retry']} to retry, "
                        f"{summary['parked']} parked; {summary['stopped']}", markup=False)
    if summary["stopped"] == "another digest worker is running":
        raise typer.Exit(1)


@digest_app.command("retry")
def retry(
    job_id: Annotated[str | None, typer.Argument(help="The job to retry (see `s3 digest list`).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Retry every parked job.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Put a parked job (or every one, with --all) back in the queue, due now, its attempts reset."""
    from ..learning import queue

    home = existing_home()
    if bool(job_id) == all_:
        usage("give a job id or --all (not both)")
    ids = [j["id"] for j in queue.jobs(home, ("parked",))] if all_ else [job_id or ""]
    done = [i for i in ids if queue.retry(home, i)]
    if job_id and not done:
        usage(f"no parked or pending job {job_id!r}", hint="see `s3 digest list`")
    if json_out:
        emit_json({"retried": done})
    else:
        console().print(f"{len(done)} job(s) back in the queue" + (f": {', '.join(done)}" if done else ""))


@digest_app.command("drop")
def drop(
    job_id: Annotated[str, typer.Argument(help="The job to delete (see `s3 digest list`).")],
    json_out: JsonOpt = False,
) -> None:
    """Delete a job that is not running (its session is then never digested, unless queued again)."""
    from ..learning import queue

    state = queue.drop(existing_home(), job_id)
    if state is None:
        usage(f"no job {job_id!r}", hint="see `s3 digest list`")
    if state == "running":
        fail(f"{job_id} is running; wait for it or stop the worker first")
    if json_out:
        emit_json({"dropped": job_id, "was": state})
    else:
        console().print(f"dropped {job_id} (was {state})")
