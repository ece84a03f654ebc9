"""Push and pull: idempotent, a transaction per batch, the ledger written after each commit.

Push: the shared rows whose version (or merged confidence) the ledger does not have yet, and a
tombstone for each id the ledger knows that is gone from this machine, are upserted on
(team, id, version) under the team's advisory lock; then each touched id's heads, active version
(the newest edit among the heads: the recency rule) and conflict record are recomputed.
Pull: the active version of each id whose version differs from the ledger's is applied locally
(``sophia.team.apply``); a pull never deletes what was not shared.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ..timeutil import iso
from . import collect, ledger

BATCH = 1000  # rows per transaction
PULL_BATCH = 10000  # rows applied per rewrite of the local files
LEDGER_EVERY = 5.0  # seconds between ledger writes during a long push (and once at its end)

_INSERT = """
INSERT INTO sophia.memories AS m (team_id, id, version, parents, kind, project, text, body, deleted, confidence,
    validations, origin_machine, origin_user, edited_at, event_time, embedding)
VALUES (%(team)s, %(id)s, %(version)s, %(parents)s, %(kind)s, %(project)s, %(text)s, %(body)s, %(deleted)s,
    %(confidence)s, %(validations)s, %(machine)s, %(user)s, %(edited_at)s, %(event_time)s, %(embedding)s)
ON CONFLICT (team_id, id, version) DO UPDATE SET
    confidence = GREATEST(m.confidence, EXCLUDED.confidence),
    validations = GREATEST(m.validations, EXCLUDED.validations),
    embedding = COALESCE(m.embedding, EXCLUDED.embedding)
"""

_HEADS = """
WITH v AS (
  SELECT m.id, m.version, m.edited_at,
         NOT EXISTS (SELECT 1 FROM sophia.memories c WHERE c.team_id = m.team_id AND c.id = m.id
                     AND c.version <> m.version AND m.version = ANY (c.parents)) AS head
  FROM sophia.memories m WHERE m.team_id = %(team)s AND m.id = ANY (%(ids)s)
), w AS (
  SELECT DISTINCT ON (id) id, version FROM v WHERE head ORDER BY id, edited_at DESC, version DESC
)
UPDATE sophia.memories m SET is_head = v.head, active = (w.version IS NOT NULL)
FROM v LEFT JOIN w ON w.id = v.id AND w.version = v.version
WHERE m.team_id = %(team)s AND m.id = v.id AND m.version = v.version
  AND (m.is_head IS DISTINCT FROM v.head OR m.active IS DISTINCT FROM (w.version IS NOT NULL))
"""

_CONFLICTS = """
INSERT INTO sophia.conflicts AS c (team_id, id, versions, kept_version)
SELECT team_id, id, array_agg(version ORDER BY version), max(version) FILTER (WHERE active)
FROM sophia.memories WHERE team_id = %(team)s AND id = ANY (%(ids)s) AND is_head
GROUP BY team_id, id HAVING count(*) > 1
ON CONFLICT (team_id, id) WHERE closed_at IS NULL DO UPDATE SET
    versions = ARRAY(SELECT DISTINCT v FROM unnest(c.versions || EXCLUDED.versions) v ORDER BY v),
    kept_version = EXCLUDED.kept_version
"""

_CLOSE = """
UPDATE sophia.conflicts c SET closed_at = now()
WHERE c.team_id = %(team)s AND c.id = ANY (%(ids)s) AND c.closed_at IS NULL
  AND (SELECT count(*) FROM sophia.memories m WHERE m.team_id = c.team_id AND m.id = c.id AND m.is_head) <= 1
"""


def _vectors(home: Path, ids: list[str]) -> dict[str, list[float]]:
    """The local index's vectors of ``ids`` (the embedding service wrote them), when of the team's size."""
    import sqlite3
    from array import array

    from ..index.db import read_only
    from .schema import EMBED_DIM

    out: dict[str, list[float]] = {}
    try:
        conn = read_only(home, timeout=1.0)
        if conn is None:
            return out
        try:
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                q = f"SELECT item_id, dim, vec FROM vectors WHERE item_id IN ({','.join('?' * len(chunk))})"
                for iid, dim, blob in conn.execute(q, chunk):
                    if dim == EMBED_DIM:
                        out[iid] = array("f", blob).tolist()
        finally:
            conn.close()
    except sqlite3.Error:
        pass
    return out


def plan_push(home: Path, cfg: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows to upsert, the ledger). Raises SecretRefused before anything is sent."""
    book = ledger.load(home, cfg["team"])
    local = collect.local_rows(home, cfg)
    rows = collect.shared_rows(local, cfg)
    collect.refuse_secrets(rows)
    known = book["items"]
    todo = []
    for r in rows:
        k = known.get(r["id"])
        if k and k.get("version") == r["version"] and (r["confidence"] or 0) <= (k.get("confidence") or 0):
            continue
        r["parents"] = [v for v in (k or {}).get("heads") or [] if v != r["version"]]
        todo.append(r)
    ids = {r["id"] for r in local}
    for iid, k in known.items():
        if not k.get("deleted") and not collect.exists_locally(home, str(k.get("kind")), iid, ids):
            todo.append({"id": iid, "kind": k.get("kind"), "text": "", "body": {}, "project": None,
                         "event_time": None, "version": f"del-{k.get('version')}", "deleted": True,
                         "confidence": None, "validations": None, "parents": list(k.get("heads") or [])})
    return todo, book


def _params(r: dict[str, Any], cfg: dict[str, Any], vecs: dict[str, list[float]], stamp: Any) -> dict[str, Any]:
    import numpy as np

    vec = vecs.get(r["id"])
    return {"team": cfg["team"], "id": r["id"], "version": r["version"], "parents": r.get("parents") or [],
            "kind": r["kind"], "project": r.get("project"), "text": r["text"],
            "body": json.dumps(r["body"], ensure_ascii=False, default=str), "deleted": bool(r.get("deleted")),
            "confidence": r.get("confidence"), "validations": r.get("validations"), "machine": cfg["machine"],
            "user": cfg["user"], "edited_at": stamp, "event_time": _time(r.get("event_time")),
            "embedding": np.array(vec, dtype=np.float32) if vec else None}


def _time(value: Any) -> str | None:
    from ..timeutil import parse

    t = parse(value) if isinstance(value, str) and value else None
    return iso(t) if t else None


def push_batch(conn: Any, rows: list[dict[str, Any]], cfg: dict[str, Any], vecs: dict[str, list[float]]) -> None:
    """One transaction: upsert the rows, then recompute heads, the active version and conflicts.
    ``edited_at`` (the recency rule's clock) is the server's clock once the team's lock is held: one clock
    for every machine, in the order the pushes commit, so a machine whose clock runs ahead does not win
    every fork it takes part in."""
    ids = sorted({r["id"] for r in rows})
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("sophia-team:" + cfg["team"],))
        stamp = cur.execute("SELECT clock_timestamp()").fetchone()[0]
        cur.executemany(_INSERT, [_params(r, cfg, vecs, stamp) for r in rows])
        cur.execute(_HEADS, {"team": cfg["team"], "ids": ids})
        cur.execute(_CONFLICTS, {"team": cfg["team"], "ids": ids})
        cur.execute(_CLOSE, {"team": cfg["team"], "ids": ids})


def _after_push(rows: list[dict[str, Any]], book: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for r in rows:
        prev = book["items"].get(r["id"]) or {}
        conf = max(r.get("confidence") or 0.0, prev.get("confidence") or 0.0) if r["kind"] == "rule" else None
        out[r["id"]] = {"version": r["version"], "kind": r["kind"], "heads": [r["version"]],
                        "confidence": conf, "deleted": bool(r.get("deleted"))}
        if r["kind"] == "guardian":  # a pulled tombstone names no pattern: the ledger remembers it
            out[r["id"]]["body"] = r["body"] or prev.get("body")
    return out


def push(conn: Any, home: Path, cfg: dict[str, Any], batch: int = BATCH) -> dict[str, Any]:
    rows, book = plan_push(home, cfg)
    vecs = _vectors(home, [r["id"] for r in rows if not r.get("deleted")])
    sent = tombstones = 0
    done: dict[str, dict[str, Any]] = {}
    flushed = time.monotonic()
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        push_batch(conn, chunk, cfg, vecs)
        entries = _after_push(chunk, book)
        done.update(entries)
        book["items"].update(entries)
        sent += len(chunk)
        tombstones += sum(1 for r in chunk if r.get("deleted"))
        if time.monotonic() - flushed > LEDGER_EVERY or i + batch >= len(rows):
            # after the commits: a crash before this write only repeats upserts the server already has
            ledger.record(home, cfg["team"], done)
            done, flushed = {}, time.monotonic()
    return {"pushed": sent, "tombstones": tombstones}


_ACTIVE = """
SELECT a.id, a.version, a.kind, a.deleted, a.confidence,
       (SELECT array_agg(h.version ORDER BY h.version) FROM sophia.memories h
        WHERE h.team_id = a.team_id AND h.id = a.id AND h.is_head) AS heads
FROM sophia.memories a WHERE a.team_id = %s AND a.active
"""


def plan_pull(conn: Any, book: dict[str, Any], team: str) -> list[tuple[str, str, list[str]]]:
    """(id, version, heads) of the active versions this machine has not applied yet."""
    known = book["items"]
    want = []
    for iid, version, _kind, deleted, conf, heads in conn.execute(_ACTIVE, (team,)):
        k = known.get(iid)
        if k is None and deleted:
            continue
        if k and k.get("version") == version and (conf or 0) <= (k.get("confidence") or 0):
            if sorted(k.get("heads") or []) != sorted(heads or []):
                want.append((iid, version, heads or []))
            continue
        want.append((iid, version, heads or []))
    return want


def pull(conn: Any, home: Path, cfg: dict[str, Any], batch: int = PULL_BATCH) -> dict[str, Any]:
    from . import apply

    team = cfg["team"]
    book = ledger.load(home, team)
    want = plan_pull(conn, book, team)
    summary = {"pulled": 0, "applied": 0, "deleted": 0, "kept_local": 0, "conflicts": 0}
    for i in range(0, len(want), batch):
        chunk = want[i:i + batch]
        heads = {iid: h for iid, _, h in chunk}
        rows = conn.execute(
            "SELECT id, version, kind, body, deleted, confidence, validations FROM sophia.memories "
            "WHERE team_id = %s AND (id, version) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            (team, [c[0] for c in chunk], [c[1] for c in chunk])).fetchall()
        entries = apply.apply_rows(home, rows, book, heads, summary)
        ledger.record(home, team, entries)
        book["items"].update(entries)
        summary["pulled"] += len(rows)
    summary["conflicts"] = apply.log_conflicts(conn, home, team)
    return summary


def status_counts(conn: Any, team: str) -> dict[str, Any]:
    row = conn.execute("SELECT count(*) FILTER (WHERE active AND NOT deleted), count(*), "
                       "count(DISTINCT origin_machine) FROM sophia.memories WHERE team_id = %s", (team,)).fetchone()
    n_conf = conn.execute("SELECT count(*) FROM sophia.conflicts WHERE team_id = %s", (team,)).fetchone()[0]
    return {"items": row[0], "versions": row[1], "machines": row[2], "conflicts": n_conf}
