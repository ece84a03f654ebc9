"""The team database schema: ordered migrations recorded in ``sophia.schema_migrations`` (like the
local index's ``_migrations``), row-level security per team, pgvector HNSW and full-text GIN indexes.

Tables (schema ``sophia``):

- ``teams`` and ``team_members`` (team_id, role_name): which database roles belong to which team;
- ``memories``: one row per version of a shared item, keyed by (team_id, id, version). ``parents``
  names the versions an edit was based on; a version no other version names is a head; of several
  heads (the same id edited on two machines) the newest edit is ``active`` (the recency rule);
- ``conflicts``: one record per fork of an id (open while it has several heads; every version that was
  a head meanwhile is listed; closed by an edit made after seeing them all).

Row-level security (forced, so the owner obeys it too): a role reads and writes only the rows of teams
in which it, or a role it is a member of, is listed in ``team_members``.
"""

from __future__ import annotations

from typing import Any

EMBED_DIM = 384  # the local semantic tier's model (all-MiniLM-L6-v2)

_MEMBER = ("team_id IN (SELECT m.team_id FROM sophia.team_members m "
           "WHERE pg_has_role(current_user, m.role_name, 'MEMBER'))")

M001_TABLES = f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE sophia.teams (team_id text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE sophia.team_members (
    team_id text NOT NULL REFERENCES sophia.teams ON DELETE CASCADE,
    role_name text NOT NULL,
    PRIMARY KEY (team_id, role_name));
CREATE TABLE sophia.memories (
    team_id text NOT NULL,
    id text NOT NULL,
    version text NOT NULL,
    parents text[] NOT NULL DEFAULT '{{}}',
    kind text NOT NULL,
    project text,
    text text NOT NULL,
    body jsonb NOT NULL,
    deleted boolean NOT NULL DEFAULT false,
    confidence real,
    validations integer,
    origin_machine text NOT NULL,
    origin_user text NOT NULL,
    edited_at timestamptz NOT NULL,
    event_time timestamptz,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    is_head boolean NOT NULL DEFAULT true,
    active boolean NOT NULL DEFAULT false,
    embedding vector({EMBED_DIM}),
    PRIMARY KEY (team_id, id, version));
CREATE TABLE sophia.conflicts (
    team_id text NOT NULL,
    id text NOT NULL,
    versions text[] NOT NULL,
    kept_version text,
    detected_at timestamptz NOT NULL DEFAULT now(),
    closed_at timestamptz,
    PRIMARY KEY (team_id, id, detected_at));
CREATE UNIQUE INDEX conflicts_open ON sophia.conflicts (team_id, id) WHERE closed_at IS NULL;
"""

M002_SEARCH = """
ALTER TABLE sophia.memories ADD COLUMN tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english', text)) STORED;
CREATE INDEX memories_tsv ON sophia.memories USING gin (tsv);
CREATE INDEX memories_embedding ON sophia.memories USING hnsw (embedding vector_cosine_ops);
CREATE INDEX memories_active ON sophia.memories (team_id, active) WHERE active;
"""

M003_SECURITY = f"""
GRANT USAGE ON SCHEMA sophia TO PUBLIC;
GRANT SELECT ON sophia.teams, sophia.team_members, sophia.schema_migrations TO PUBLIC;
GRANT SELECT, INSERT, UPDATE ON sophia.memories, sophia.conflicts TO PUBLIC;
ALTER TABLE sophia.memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE sophia.memories FORCE ROW LEVEL SECURITY;
ALTER TABLE sophia.conflicts ENABLE ROW LEVEL SECURITY;
ALTER TABLE sophia.conflicts FORCE ROW LEVEL SECURITY;
CREATE POLICY team_rows ON sophia.memories USING ({_MEMBER}) WITH CHECK ({_MEMBER});
CREATE POLICY team_rows ON sophia.conflicts USING ({_MEMBER}) WITH CHECK ({_MEMBER});
"""

MIGRATIONS: list[tuple[str, str]] = [("m001_tables", M001_TABLES), ("m002_search", M002_SEARCH),
                                     ("m003_security", M003_SECURITY)]
LATEST = MIGRATIONS[-1][0]


class SchemaBehind(Exception):
    """The schema needs migrations this role may not apply."""


def applied(conn: Any) -> list[str]:
    """Names of the migrations applied ([] when the schema does not exist yet)."""
    row = conn.execute("SELECT to_regclass('sophia.schema_migrations')").fetchone()
    if row is None or row[0] is None:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM sophia.schema_migrations ORDER BY name")]


def migrate(conn: Any) -> list[str]:
    """Apply pending migrations in order, each in its own transaction under an advisory lock (two
    machines running ``s3 team init`` at once apply each one once). Returns the names applied."""
    done_now: list[str] = []
    for name, sql in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('sophia-team-schema'))")
            conn.execute("CREATE SCHEMA IF NOT EXISTS sophia")
            conn.execute("CREATE TABLE IF NOT EXISTS sophia.schema_migrations "
                         "(name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            if conn.execute("SELECT 1 FROM sophia.schema_migrations WHERE name = %s", (name,)).fetchone():
                continue
            conn.execute(sql)
            conn.execute("INSERT INTO sophia.schema_migrations (name) VALUES (%s)", (name,))
        done_now.append(name)
    return done_now


def add_member(conn: Any, team: str, role: str) -> None:
    """Register ``team`` (if new) and make ``role`` a member (needs the schema owner's rights)."""
    with conn.transaction():
        conn.execute("INSERT INTO sophia.teams (team_id) VALUES (%s) ON CONFLICT DO NOTHING", (team,))
        conn.execute("INSERT INTO sophia.team_members (team_id, role_name) VALUES (%s, %s) "
                     "ON CONFLICT DO NOTHING", (team, role))


def is_member(conn: Any, team: str) -> bool:
    row = conn.execute("SELECT EXISTS (SELECT 1 FROM sophia.team_members m WHERE m.team_id = %s "
                       "AND pg_has_role(current_user, m.role_name, 'MEMBER'))", (team,)).fetchone()
    return bool(row and row[0])
