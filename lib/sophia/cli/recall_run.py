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


def _print_text(query: str, results: list[dict[str, Any]], out: TextIO) -> None:
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


def run_recall(query: str | None, *, limit: int = 10, types: list[str] | None = None,
               project: str | None = None, as_of: str | None = None, known_at: str | None = None,
               queries: Path | None = None, json_out: bool = False, home: Path | None = None,
               out: TextIO | None = None) -> int:
    """Run one query or a batch file; return the exit status."""
    from ..index import semantic

    # ask the semantic tier first: the service embeds the query while we import and score keywords
    pending = None
    if queries is None and query and 1 <= limit <= 1000 and len(query) <= 4000:
        pending = semantic.start(query, max(semantic.SEMANTIC_K, limit), home, types)
    from ..index.db import ITEM_TYPES, connect_for_read
    from ..index.search import DEFAULT_KNOBS, QueryError, check_query, parse_as_of, search

    out = out or sys.stdout
    if types:
        bad = [t for t in types if t not in ITEM_TYPES]
        if bad:
            return _err(f"unknown --type {', '.join(bad)} (one of {', '.join(sorted(ITEM_TYPES))})")
    if limit < 1 or limit > 1000:
        return _err("--limit must be between 1 and 1000")
    if queries is None and query is None:
        return _err("give a QUERY or --queries FILE (see `s3 recall --help`)")
    if queries is not None and query is not None:
        return _err("give either a QUERY or --queries FILE, not both")
    try:
        parse_as_of(as_of)
        parse_as_of(known_at, "--known-at")
    except QueryError as exc:
        return _err(str(exc))
    try:
        conn = connect_for_read(home)
    except Exception as exc:  # sqlite3.Error, OSError: a broken index
        return _err(f"cannot open the index ({exc}); run `s3 doctor --repair` or `s3 index --rebuild`", 1)
    try:
        if queries is not None:
            return _batch(conn, queries, limit=limit, types=types, project=project, as_of=as_of,
                          known_at=known_at, home=home, out=out)
        assert query is not None
        try:
            terms = check_query(query)
        except QueryError as exc:
            return _err(str(exc))
        note = ""
        if conn is None:
            results: list[dict[str, Any]] = []
            note = "the index is empty (nothing ingested or recorded yet)"
        elif not terms:
            results = []
            note = NO_TERMS
        else:
            results = search(conn, query, limit=limit, types=types, project=project, as_of=as_of, home=home,
                             knobs=DEFAULT_KNOBS, semantic_hits=pending, known_at=known_at)
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
    finally:
        if conn is not None:
            conn.close()


def _batch(conn: Any, queries: Path, *, limit: int, types: list[str] | None, project: str | None,
           as_of: str | None, known_at: str | None, home: Path | None, out: TextIO) -> int:
    """JSONL ``{"id", "query", "limit"?, "as_of"?, "known_at"?, "types"?, "project"?}`` -> one result
    line each; a line's own values override the command's options."""
    from ..index.search import DEFAULT_KNOBS, QueryError, search

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
                                     known_at=obj.get("known_at") or known_at, home=home, knobs=DEFAULT_KNOBS)
                out.write(_dump({"id": qid, "results": results}) + "\n")
            except (QueryError, ValueError, TypeError) as exc:
                out.write(_dump({"id": qid, "results": [], "error": f"line {ln}: {exc}"}) + "\n")
    out.flush()
    return 0


_VALUED = ("--project", "--as-of", "--known-at", "--queries")


def fast_main(argv: list[str]) -> int | None:
    """Parse ``s3 recall`` arguments without typer; None = let typer handle it (help, odd input)."""
    if any(a in ("-h", "--help") for a in argv):
        return None
    query: str | None = None
    opts: dict[str, Any] = {"types": []}
    it = iter(argv)
    try:
        for a in it:
            if a == "--json":
                opts["json_out"] = True
            elif a in ("--limit", "-n"):
                opts["limit"] = int(next(it))
            elif a.startswith("--limit="):
                opts["limit"] = int(a.split("=", 1)[1])
            elif a in ("--type", "-t"):
                opts["types"].append(next(it))
            elif a.startswith("--type="):
                opts["types"].append(a.split("=", 1)[1])
            elif a in _VALUED:
                opts[a[2:].replace("-", "_")] = next(it)
            elif a.startswith(tuple(f"{v}=" for v in _VALUED)):
                k, v = a[2:].split("=", 1)
                opts[k.replace("-", "_")] = v
            elif a == "--":
                rest = list(it)
                if len(rest) != 1 or query is not None:
                    return None
                query = rest[0]
            elif a.startswith("-") and len(a) > 1:
                return None
            elif query is None:
                query = a
            else:
                return None
    except (StopIteration, ValueError):
        return None
    return run_recall(query, limit=opts.get("limit", 10), types=opts["types"] or None,
                      project=opts.get("project"), as_of=opts.get("as_of"), known_at=opts.get("known_at"),
                      queries=Path(opts["queries"]) if opts.get("queries") else None,
                      json_out=bool(opts.get("json_out")))
