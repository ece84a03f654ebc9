"""``s3 recall`` without typer: the implementation both the typer command and the fast path in
``entry.py`` call. Standard library only (no typer, rich or pydantic), so a whole ``s3 recall``
process stays within a few times a bare ``python -c pass``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

NO_TERMS = "no searchable words in the query (only stopwords or punctuation)"


def _err(msg: str, code: int = 2) -> int:
    """One line on stderr; exit 2 (bad input) unless told otherwise (cli/output.py's codes)."""
    sys.stderr.write(f"s3: error: {msg}\n")
    return code


def _dump(obj: Any, indent: int | None = None) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str, indent=indent)


def _print_text(query: str, results: list[dict[str, Any]], out: TextIO, why: list[str] | None = None) -> None:
    if not results:
        out.write(f"No memories match {query!r}.\n")
        return
    for n, r in enumerate(results, 1):
        text = " ".join(str(r["text"]).split())
        if len(text) > 240:
            text = text[:237] + "..."
        when = r.get("event_time") or r.get("timestamp") or ""
        extra = f"  {when[:10]}" if when else ""
        proj = f"  [{r['project']}]" if r.get("project") else ""
        out.write(f"{n:>2}. {r['type']:<9} {r['score']:.3f}  {r['id']}{extra}{proj}\n    {text}\n")
        if why:
            out.write(why[n - 1] + "\n")


def run_recall(query: str | None, *, limit: int = 10, types: list[str] | None = None,
               project: str | None = None, as_of: str | None = None, known_at: str | None = None,
               queries: Path | None = None, json_out: bool = False, home: Path | None = None,
               out: TextIO | None = None, explain: bool = False) -> int:
    """Run one query or a batch file; return the exit status."""
    from ..index import semantic

    # ask the semantic tier first: the service embeds the query while we import and score keywords
    pending = None
    if queries is None and query and 1 <= limit <= 1000 and len(query) <= 4000:
        pending = semantic.start(query, max(semantic.SEMANTIC_K, limit), home, types)
    from .. import paths
    from ..index.db import connect_for_read
    from ..memory import team_repo
    from ..memory.claude_code import refresh_quietly

    refresh_quietly(home or paths.sophia_home())  # Claude Code's own files, when they changed
    team_repo.refresh_quietly(home or paths.sophia_home(), here_projects())  # the team's files in the repository
    out = out or sys.stdout
    problem = _bad_arguments(query, queries, limit, types, as_of, known_at)
    if explain and queries is not None:
        problem = "--explain takes one QUERY, not --queries"
    if problem:
        return _err(problem)
    try:
        conn = connect_for_read(home)
    except Exception as exc:  # sqlite3.Error, OSError: a broken index
        return _err(f"cannot open the index ({exc}); run `s3 doctor --repair` or `s3 index --rebuild`", 1)
    try:
        if project:
            project = _project(conn, project)
            if project is None:
                return 2
        if queries is not None:
            return _batch(conn, queries, limit=limit, types=types, project=project, as_of=as_of,
                          known_at=known_at, home=home, out=out)
        assert query is not None
        if explain:
            return _explained(conn, query, json_out, out, limit=limit, types=types, project=project,
                              as_of=as_of, home=home, semantic_hits=pending, known_at=known_at)
        return _one(conn, query, json_out, out, limit=limit, types=types, project=project, as_of=as_of,
                    home=home, semantic_hits=pending, known_at=known_at)
    finally:
        if conn is not None:
            conn.close()


def here_projects() -> list[str]:
    """The project of the current folder (its team memory is refreshed before a recall)."""
    import os

    from ..hooks.project import project_of

    project = project_of(os.getcwd())
    return [project] if project else []


def _project(conn: Any, given: str) -> str | None:
    """``--project`` as a recorded project (cli/projects.py); None, said on stderr, when it names none."""
    from .projects import resolve, unknown

    def recorded(p: str) -> bool:
        return conn is not None and conn.execute("SELECT 1 FROM items WHERE project = ? LIMIT 1",
                                                 (p,)).fetchone() is not None

    found = resolve(given, recorded)
    if found is None:
        _err(unknown(given, "memory"))
    return found


def _bad_arguments(query: str | None, queries: Path | None, limit: int, types: list[str] | None,
                   as_of: str | None, known_at: str | None) -> str:
    """What is wrong with the arguments ("" when nothing is)."""
    from ..index.search import QueryError, parse_as_of
    from ..kinds import item_types

    known = item_types()
    bad = [t for t in types or [] if t not in known]
    if bad:
        return f"unknown --type {', '.join(bad)} (one of {', '.join(sorted(known))})"
    if limit < 1 or limit > 1000:
        return "--limit must be between 1 and 1000"
    if queries is None and query is None:
        return "give a QUERY or --queries FILE (see `s3 recall --help`)"
    if queries is not None and query is not None:
        return "give either a QUERY or --queries FILE, not both"
    try:
        parse_as_of(as_of)
        parse_as_of(known_at, "--known-at")
    except QueryError as exc:
        return str(exc)
    return ""


def _one(conn: Any, query: str, json_out: bool, out: TextIO, **params: Any) -> int:
    """Answer one query (``params``: search's keyword arguments) and print it."""
    from ..index.search import CLI_KNOBS, QueryError, check_query, search

    try:
        terms = check_query(query)
    except QueryError as exc:
        return _err(str(exc))
    note = ""
    results: list[dict[str, Any]] = []
    if conn is None:
        note = "the index is empty (nothing ingested or recorded yet)"
    elif not terms:
        note = NO_TERMS
    else:
        results = search(conn, query, knobs=CLI_KNOBS, **params)
    if json_out:
        doc: dict[str, Any] = {"query": query, "results": results}
        if note:
            doc["note"] = note
        out.write(_dump(doc, indent=2) + "\n")
    else:
        if note:
            sys.stderr.write(f"s3: {note}\n")
        _print_text(query, results, out)
    return 0


def _explained(conn: Any, query: str, json_out: bool, out: TextIO, **params: Any) -> int:
    """``--explain``: the results with why each ranked, the query's term weights and the hook's verdict."""
    from ..index.search import CLI_KNOBS, QueryError, check_query, search, term_weights
    from . import recall_explain as rx

    try:
        terms = check_query(query)
    except QueryError as exc:
        return _err(str(exc))
    results = search(conn, query, knobs=CLI_KNOBS, explain=True, **params) if conn is not None and terms else []
    weights = {t: round(w, 3) for t, w in term_weights(conn, terms).items()} if conn is not None else {}
    g = rx.gate(query, params.get("project"), params.get("home"))
    rx.annotate(results, g)
    if json_out:
        out.write(_dump({"query": query, "terms": weights, "hook": {k: v for k, v in g.items() if k != "kinds"},
                         "results": results}, indent=2) + "\n")
        return 0
    rx.print_gate(g, weights, out)
    _print_text(query, results, out, rx.why_lines(results))
    return 0


def _batch(conn: Any, queries: Path, *, limit: int, types: list[str] | None, project: str | None,
           as_of: str | None, known_at: str | None, home: Path | None, out: TextIO) -> int:
    """JSONL ``{"id", "query", "limit"?, "as_of"?, "known_at"?, "types"?, "project"?}`` -> one result
    line each; a line's own values override the command's options."""
    from ..index.search import CLI_KNOBS, QueryError, search

    try:
        fh = sys.stdin if str(queries) == "-" else queries.open(encoding="utf-8")
    except OSError as exc:
        return _err(f"cannot read {queries}: {exc.strerror or exc}")
    with fh:
        for ln, line in enumerate(fh, 1):
            if not line.strip():
                continue
            qid: Any = ln
            try:
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise ValueError("expected a JSON object")
                qid = obj.get("id", ln)
                q = obj.get("query")
                if not isinstance(q, str):
                    raise ValueError("'query' must be a string")
                lim = int(obj.get("limit") or limit)
                if conn is None:
                    results: list[dict[str, Any]] = []
                else:
                    results = search(conn, q, limit=lim, types=obj.get("types") or types,
                                     project=obj.get("project") or project, as_of=obj.get("as_of") or as_of,
                                     known_at=obj.get("known_at") or known_at, home=home, knobs=CLI_KNOBS)
                out.write(_dump({"id": qid, "results": results}) + "\n")
            except (QueryError, ValueError, TypeError) as exc:
                out.write(_dump({"id": qid, "results": [], "error": f"line {ln}: {exc}"}) + "\n")
    out.flush()
    return 0


_ALIASES = {"-n": "--limit", "-t": "--type"}
_VALUED = ("--limit", "--type", "--project", "--as-of", "--known-at", "--queries")


def _split_equals(argv: list[str]) -> list[str]:
    """``--as-of=DATE`` -> ``--as-of DATE`` (never after ``--``: a query may look like an option)."""
    out: list[str] = []
    for n, a in enumerate(argv):
        if a == "--":
            return out + argv[n:]
        name, eq, value = a.partition("=")
        out += [name, value] if eq and name in _VALUED else [a]
    return out


def _parse(argv: list[str]) -> tuple[str | None, dict[str, Any]] | None:
    """(query, options), or None when typer should handle the arguments (errors, odd input)."""
    words: list[str] = []
    opts: dict[str, Any] = {"types": []}
    it = iter(_split_equals(argv))
    for a in it:
        a = _ALIASES.get(a, a)
        if a == "--json":
            opts["json_out"] = True
        elif a == "--explain":
            opts["explain"] = True
        elif a == "--type":
            opts["types"].append(next(it))
        elif a in _VALUED:
            opts[a[2:].replace("-", "_")] = next(it)
        elif a == "--":
            words += list(it)
        elif a.startswith("-") and len(a) > 1:
            return None
        else:
            words.append(a)
    return join_words(words), opts


def join_words(words: list[str] | None) -> str | None:
    """The query the words make (``s3 recall flaky pytest`` = ``s3 recall "flaky pytest"``); None for none."""
    return " ".join(words) if words else None


def fast_main(argv: list[str]) -> int | None:
    """Parse ``s3 recall`` arguments without typer; None = let typer handle it (help, odd input)."""
    if any(a in ("-h", "--help") for a in argv):
        return None
    try:
        parsed = _parse(argv)
        if parsed is None:
            return None
        query, opts = parsed
        limit = int(opts.get("limit", 10))
    except (StopIteration, ValueError):
        return None
    return run_recall(query, limit=limit, types=opts["types"] or None,
                      project=opts.get("project"), as_of=opts.get("as_of"), known_at=opts.get("known_at"),
                      queries=Path(opts["queries"]) if opts.get("queries") else None,
                      json_out=bool(opts.get("json_out")), explain=bool(opts.get("explain")))
