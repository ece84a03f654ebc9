"""s3 team: team memory. In the repository (``init --repo``, ``share``, ``suggest``: one Markdown file per
item under ``<project>/.sophia/team/``, reviewed like code) and through PostgreSQL + pgvector (``init URL``,
``status``, ``push``, ``pull``, ``sync``, ``leave``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from .app import app
from .cmd_core import JsonOpt
from .output import USAGE, emit_json, fail

team_app = typer.Typer(
    name="team",
    help="Team memory: chosen items kept in the repository (.sophia/team/, reviewed like code), or a "
         "shared replica in PostgreSQL with pgvector (local files stay the source of truth).",
    no_args_is_help=True,
)
app.add_typer(team_app, name="team")


def _home() -> Path:
    from .. import paths

    return paths.sophia_home()


JOIN = "`s3 team init postgresql://USER@HOST/DB --team NAME`"
REPO = "the team memory kept in this repository (`s3 team init --repo`) needs none: `s3 status` counts it"


def _cfg(home: Path) -> dict[str, Any]:
    from ..team import config

    cfg = config.load(home)
    if cfg is None:
        fail("team sync is not configured", USAGE, hint=f"run {JOIN}; {REPO}")
    return cfg


def _driver() -> None:
    from ..team.db import missing_driver

    why = missing_driver()
    if why:
        fail(why)


def _offline(exc: Exception) -> NoReturn:
    fail(f"the team database is offline: {exc}", hint="local memory works as before; `s3 team push` later")


def _write_config(home: Path, team: dict[str, Any] | None) -> None:
    from .. import paths
    from ..atomic import read_json, write_json_atomic
    from ..locking import locked

    p = paths.config_path(home)
    with locked(p, timeout=30):
        cfg = read_json(p, default={}) or {}
        if team is None:
            cfg.pop("team", None)
        else:
            cfg["team"] = team
        write_json_atomic(p, cfg)


def _save_password(home: Path, pw: str) -> None:
    from ..atomic import write_bytes_atomic
    from ..team import config

    os.makedirs(config.team_dir(home), mode=0o700, exist_ok=True)
    write_bytes_atomic(config.password_file(home), (pw + "\n").encode())
    os.chmod(config.password_file(home), 0o600)


def _join(conn: Any, team: str, url: str) -> list[str]:
    """Migrate when needed and possible, register the team and this role; the migrations applied."""
    import psycopg

    from ..team import config, schema

    try:
        applied = schema.migrate(conn)
    except psycopg.errors.InsufficientPrivilege as exc:
        if schema.applied(conn) and schema.LATEST in schema.applied(conn):
            applied = []
        else:
            fail(f"the team schema is missing or old and this role may not create it ({exc.diag.message_primary})",
                 hint="run `s3 team init` once with the database owner's role")
    if not schema.is_member(conn, team):
        try:
            schema.add_member(conn, team, config.user_of(url) or conn.info.user)
        except psycopg.errors.InsufficientPrivilege:
            fail(f"this role is not a member of team {team!r}", hint="ask the database owner to add it")
    return applied


@team_app.command("init")
def init(
    url: Annotated[str | None, typer.Argument(help="postgresql://USER@HOST[:PORT]/DB, without a password.")] = None,
    repo: Annotated[bool, typer.Option(
        "--repo", help="Keep team memory in this repository instead: create .sophia/team/ (no server).")] = False,
    share_ids: Annotated[list[str] | None, typer.Option(
        "--share", metavar="ID", help="With --repo: also share this item (repeatable; see `s3 team suggest`).")] = None,
    team: Annotated[str, typer.Option("--team", help="The team's name (its rows are isolated from other teams).")] = "default",
    password_stdin: Annotated[bool, typer.Option(
        "--password-stdin", help="Read the password from stdin and keep it in `<home>/team/password` (0600).")] = False,
    share_episodes: Annotated[list[str] | None, typer.Option(
        "--share-episodes", metavar="PROJECT", help="Also share this project's episodes (repeatable).")] = None,
    private: Annotated[list[str] | None, typer.Option(
        "--private", metavar="PROJECT", help="Never share anything of this project (repeatable).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Connect this machine to a team database (create or upgrade its schema, join the team), or with
    --repo keep team memory in this repository's .sophia/team/ folder."""
    import socket

    from ..team import config, db

    if repo:
        _init_repo(url, share_ids or [], json_out)
        return
    if url is None or share_ids:
        fail("give a database URL (postgresql://USER@HOST/DB), or --repo" + (" with --share" if share_ids else ""),
             USAGE, hint="`s3 team init --repo` keeps team memory in this repository, no server needed")
    home = _home()
    try:
        config.check_url(url)
    except config.TeamConfigError as exc:
        fail(str(exc), USAGE)
    _driver()
    if password_stdin:
        _save_password(home, typer.get_text_stream("stdin").readline().rstrip("\n"))
    section = {"url": url, "team": team, "machine": socket.gethostname(),
               "user": os.environ.get("USER") or "unknown", "share_episodes": list(share_episodes or []),
               "private_projects": list(private or [])}
    try:
        with db.connect(section, home, vectors=False) as conn:
            applied = _join(conn, team, url)
    except db.TeamOffline as exc:
        _offline(exc)
    _write_config(home, section)
    doc = {"team": team, "url": url, "migrations_applied": applied, "config": str(config.team_dir(home))}
    if json_out:
        emit_json(doc)
        return
    typer.echo(f"Joined team {team!r} at {url}" + (f" (applied {', '.join(applied)})" if applied else "") + ".")
    typer.echo("Sync runs in the background at session start and after each digest; `s3 team push` now.")


@team_app.command("status")
def status(json_out: JsonOpt = False) -> None:
    """Whether the team database is reachable, what it holds, and the last sync."""
    from ..team import config, db, ledger, run, schema, sync

    home = _home()
    cfg = config.load(home)
    if cfg is None:  # a question with an answer, not an error
        if json_out:
            emit_json({"team": None, "online": False})
        else:
            typer.echo(f"no team database: this machine's memory is local only (join one with {JOIN}); {REPO}")
        return
    doc: dict[str, Any] = {"team": cfg["team"], "url": cfg["url"], "online": False,
                           "shared_here": len(ledger.load(home, cfg["team"])["items"]),
                           "last_sync": run.last_status(home)}
    why = db.missing_driver()
    if why:
        doc["error"] = why
    else:
        try:
            with db.connect(cfg, home, timeout=3) as conn:
                doc["online"] = True
                doc["schema"] = schema.applied(conn)
                doc.update(sync.status_counts(conn, cfg["team"]))
        except db.TeamOffline as exc:
            doc["error"] = str(exc)
    if json_out:
        emit_json(doc)
        return
    state = "online" if doc["online"] else "offline"
    typer.echo(f"team {cfg['team']} at {cfg['url']}: {state}")
    if doc["online"]:
        typer.echo(f"  {doc['items']} items ({doc['versions']} versions) from {doc['machines']} machines; "
                   f"{doc['conflicts']} conflicts")
    elif doc.get("error"):
        typer.echo(f"  {doc['error']}")
    last = doc["last_sync"]
    typer.echo(f"  {doc['shared_here']} ids shared here; last sync: "
               + (f"{last.get('at')} ({'ok' if last.get('ok') else last.get('error')})" if last else "never"))


def _sync(push: bool, pull: bool, json_out: bool) -> None:
    from ..team import collect, db, run

    home = _home()
    cfg = _cfg(home)
    _driver()
    import psycopg

    try:
        doc = run.sync(home, cfg, push=push, pull=pull)
    except collect.SecretRefused as exc:
        fail(str(exc))
    except db.TeamOffline as exc:
        _offline(exc)
    except psycopg.Error as exc:  # a refused write (row-level security), a timeout: one line
        fail(f"the team database refused the sync: {' '.join(str(exc).split())[:300]}",
             hint="`s3 team status` shows the team and schema; nothing was lost (each batch is one transaction)")
    if json_out:
        emit_json(doc)
        return
    for what in ("push", "pull"):
        if what in doc:
            typer.echo(f"{what}: " + ", ".join(f"{k} {v}" for k, v in doc[what].items()))


@team_app.command("push")
def push(json_out: JsonOpt = False) -> None:
    """Upload what changed here since the last sync (refused whole if anything looks like a secret)."""
    _sync(True, False, json_out)


@team_app.command("pull")
def pull(json_out: JsonOpt = False) -> None:
    """Apply the team's changes to the local files (never deleting what was not shared)."""
    _sync(False, True, json_out)


@team_app.command("sync")
def sync_cmd(json_out: JsonOpt = False) -> None:
    """Push, then pull."""
    _sync(True, True, json_out)


@team_app.command("leave")
def leave(json_out: JsonOpt = False) -> None:
    """Stop syncing: forget the team settings, ledger and password file; local memory stays as it is."""
    import shutil

    from ..team import config

    home = _home()
    cfg = config.load(home)
    _write_config(home, None)
    shutil.rmtree(config.team_dir(home), ignore_errors=True)
    doc = {"left": cfg["team"] if cfg else None}
    if json_out:
        emit_json(doc)
        return
    typer.echo(f"Left team {doc['left']!r}; local memory is unchanged." if cfg else "No team was configured.")


def team_recall(query: str, *, limit: int, types: list[str] | None, project: str | None,
                json_out: bool) -> None:
    """``s3 recall --team``: local results merged with the team's (keyword FTS + pgvector, fused alike)."""
    import sys

    from ..index.db import connect_for_read
    from ..index.search import DEFAULT_KNOBS, QueryError, search
    from ..team import db, recall
    from .recall_run import _dump, _print_text

    home = _home()
    cfg = _cfg(home)
    _driver()
    local: list[dict[str, Any]] = []
    conn = connect_for_read(home)
    if conn is not None:
        try:
            local = search(conn, query, limit=limit, types=types, project=project, home=home, knobs=DEFAULT_KNOBS)
        except QueryError as exc:
            fail(str(exc), USAGE)
        finally:
            conn.close()
    note = ""
    team_hits: list[dict[str, Any]] = []
    try:
        with db.connect(cfg, home, timeout=3) as pg:
            team_hits = recall.team_results(pg, cfg["team"], query, limit=limit,
                                            vector=recall.query_vector(query, home))
    except db.TeamOffline as exc:
        note = f"the team database is offline ({exc}); local results only"
    team_hits = [r for r in team_hits if (not types or r["type"] in types)
                 and (not project or r["project"] in (None, project))]
    results = recall.merge(local, team_hits, limit)
    if json_out:
        sys.stdout.write(_dump({"query": query, "results": results, **({"note": note} if note else {})}, 2) + "\n")
        return
    if note:
        typer.echo(f"s3: {note}", err=True)
    _print_text(query, results, sys.stdout)


# ---------------------------------------------------------------- team memory in the repository


def _repository() -> str:
    """The git work tree the current folder is in (its .sophia/team/ holds the team memory)."""
    from .. import paths
    from ..hooks.project import git_root

    root = git_root(os.getcwd())
    if root is None:
        fail(f"{os.getcwd()} is not in a git repository", USAGE,
             hint=f"team memory lives in a repository's {paths.TEAM_FOLDER}/ folder: run this inside one")
    from ..memory import team_repo

    if team_repo.kit_home(_home(), str(root)):
        fail(f"{root}/.sophia is the kit's own state home, not a place for team memory", USAGE,
             hint="share from a project's repository")
    return str(root)


def _shared(home: Path, project: str, ids: list[str], replace: bool) -> list[dict[str, Any]]:
    from ..team import collect, repo

    try:
        return repo.share(home, project, ids, repo.who(project), replace=replace)
    except collect.SecretRefused as exc:
        fail(str(exc))


def _echo_shared(done: list[dict[str, Any]]) -> None:
    words = {"written": "wrote", "unchanged": "unchanged", "kept": "kept the repository's version of"}
    for d in done:
        typer.echo(f"{words[d['status']]} {d['file']} ({d['kind']} {d['id']})")
    if any(d["status"] == "kept" for d in done):
        typer.echo("s3: a kept file says something else (a teammate's edit, or the item changed since): "
                   "`--replace` writes yours", err=True)
    if any(d["status"] == "written" for d in done):
        typer.echo("Review and commit them like code (`git add .sophia/team && git commit`); teammates get them "
                   "with the next pull.")


def _init_repo(url: str | None, ids: list[str], json_out: bool) -> None:
    from ..team import repo

    if url is not None:
        fail("give a database URL or --repo, not both", USAGE)
    project = _repository()
    home = _home()
    doc: dict[str, Any] = repo.init_repo(project)
    doc["shared"] = _shared(home, project, ids, False) if ids else []
    doc["suggestions"] = len(repo.suggest(home, project)["suggestions"]) if home.is_dir() else 0
    if json_out:
        emit_json(doc)
        return
    typer.echo(f"{'Created' if doc['created'] else 'Found'} {doc['folder']}/ in {project}.")
    _echo_shared(doc["shared"])
    typer.echo(f"{doc['suggestions']} items are worth sharing: `s3 team suggest`, then `s3 team share ID...`.")


@team_app.command("share")
def share(
    ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Rules, procedures or facts to share.")],
    replace: Annotated[bool, typer.Option(
        "--replace", help="Overwrite a file that says something else (a teammate's edit is lost).")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Write the chosen items of this project into the repository's .sophia/team/ (one Markdown file each;
    refused whole if any looks like a secret). Review and commit them like code."""
    project = _repository()
    home = _home()
    done = _shared(home, project, ids, replace)
    if json_out:
        emit_json({"project": project, "shared": done})
        return
    _echo_shared(done)


@team_app.command("suggest")
def suggest(
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="At most this many.")] = 20,
    json_out: JsonOpt = False,
) -> None:
    """List what is worth sharing into this repository: sure, proven more than once, not shared yet."""
    from ..team import repo

    project = _repository()
    doc = repo.suggest(_home(), project, limit)
    if json_out:
        emit_json(doc)
        return
    if not doc["suggestions"]:
        typer.echo(f"Nothing new worth sharing ({doc['already_shared']} items already in .sophia/team/).")
        return
    for c in doc["suggestions"]:
        where = " (global)" if c["global"] else ""
        typer.echo(f"- {c['id']} {c['kind']}{where}, confidence {c['confidence']:.2f}, proven {c['uses']}x: "
                   f"{c['text']}")
    typer.echo(f"Share the ones you choose: `s3 team share ID...` ({doc['already_shared']} already shared).")
