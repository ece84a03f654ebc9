"""Destructive database statements: SQL (psql, mysql, sqlite3 ...), MongoDB shell code, Redis commands.

Comments and string literals are removed before looking, so ``SELECT 'DROP TABLE x'`` and
``-- DROP TABLE users`` are data, not statements.
"""

from __future__ import annotations

import re

from .lazyre import LazyRe

_COMMENT_LINE = LazyRe(r"(?:--|#)[^\n]*")
_COMMENT_BLOCK = LazyRe(r"/\*.*?(?:\*/|\Z)", re.S)
_STRING = LazyRe(r"'(?:[^']|'')*(?:'|\Z)|\"(?:[^\"\\]|\\.)*(?:\"|\Z)|\$(\w*)\$.*?(?:\$\1\$|\Z)", re.S)
_WS = LazyRe(r"\s+")

_DROP_DENY = LazyRe(
    r"^DROP\s+(?:TEMPORARY\s+)?(?:TABLE|DATABASE|SCHEMA|KEYSPACE|COLLECTION|TABLESPACE|OWNED|USER|ROLE)\b")
_DROP_ASK = LazyRe(r"^DROP\s+\w+")
# objects that hold no rows of their own: dropping one (to re-create it) loses no data
_DROP_NO_DATA = LazyRe(r"^DROP\s+(?:TRIGGER|INDEX|VIEW)\b")
_TRUNCATE = LazyRe(r"^TRUNCATE\b")
_DELETE = LazyRe(r"^DELETE\s+(?:\w+\s+)?FROM\b")
_DELETE_BARE = LazyRe(r"^DELETE\s+(?!FROM)[\w.`\"\[\]]+\s*$")
_UPDATE = LazyRe(r"^UPDATE\s+.+?\bSET\b")
_WHERE = LazyRe(r"\bWHERE\b(.*)$")
_TRIVIAL_WHERE = LazyRe(r"^\s*(?:1\s*=\s*1|TRUE|1|'1'\s*=\s*'1'|1\s*<>\s*0|0\s*=\s*0|NOT\s+FALSE)\s*$")
_ALTER_DROP = LazyRe(r"^ALTER\s+TABLE\b.*\bDROP\b")
_LEADING = LazyRe(r"^(?:(?:BEGIN|START\s+TRANSACTION|EXPLAIN(?!\s+ANALYZE))\s*)+")
_WITH = LazyRe(r"^WITH\b.*?\)\s*(?=(?:DELETE|UPDATE)\b)")


def clean(sql: str) -> str:
    out = _COMMENT_BLOCK.sub(" ", sql)
    out = _STRING.sub("''", out)
    out = _COMMENT_LINE.sub(" ", out)
    return out


def _statements(sql: str) -> list[str]:
    """The statements of ``sql``, comments and strings removed, upper-case, one space between words."""
    body = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("\\"))
    out = []
    for stmt in clean(body).split(";"):
        s = _WS.sub(" ", stmt).strip().upper()
        s = _WITH.sub("", _LEADING.sub("", s).strip()).strip()
        if s:
            out.append(s)
    return out


def sql_findings(sql: str) -> list[tuple[str, str]]:
    """(level, what) for each destructive statement in ``sql``."""
    found: list[tuple[str, str]] = []
    stmts = _statements(sql)
    for i, s in enumerate(stmts):
        if _DROP_DENY.match(s):
            if not _rows_kept(s, stmts[:i], stmts[i + 1:]):
                found.append(("deny", " ".join(s.split()[:3])))
        elif _DROP_ASK.match(s) and not _DROP_NO_DATA.match(s):
            found.append(("ask", " ".join(s.split()[:3])))
        elif _TRUNCATE.match(s):
            found.append(("deny", "TRUNCATE"))
        elif _DELETE.match(s) or _DELETE_BARE.match(s):
            m = _WHERE.search(s)
            if not m or _TRIVIAL_WHERE.match(m.group(1)):
                found.append(("deny", "DELETE without a WHERE clause"))
        elif _UPDATE.match(s):
            m = _WHERE.search(s)
            if (not m or _TRIVIAL_WHERE.match(m.group(1))) and not _fills_blanks(s):
                found.append(("deny", "UPDATE without a WHERE clause"))
        elif _ALTER_DROP.match(s):
            found.append(("ask", "ALTER TABLE ... DROP"))
    return found


_DROPPED = LazyRe(r"^DROP TABLE (?:IF EXISTS )?([\w.`\"\[\]]+(?: ?, ?[\w.`\"\[\]]+)*)")
_COPY = LazyRe(r"^(?:INSERT (?:OR \w+ )?INTO ([\w.]+)|CREATE (?:TEMP(?:ORARY)? )?TABLE ([\w.]+)).*?\bSELECT\b.*?"
               r"\bFROM ([\w.]+)")
_VIRTUAL = LazyRe(r"^CREATE VIRTUAL TABLE (?:IF NOT EXISTS )?([\w.`\"\[\]]+) USING ")
_FILTERED = LazyRe(r"\b(?:WHERE|LIMIT|GROUP BY|DISTINCT|HAVING|OFFSET|TOP)\b")
_SET = LazyRe(r"\bSET\b(.*?)(?:\bWHERE\b|\bFROM\b|\bRETURNING\b|$)")
_KEEP_VALUE = LazyRe(r"^([\w.]+) ?= ?(?:COALESCE|IFNULL|NVL|ISNULL) ?\( ?([\w.]+) ?,")


def _name(x: str) -> str:
    return x.strip().strip("`\"[]")


def _rows_kept(stmt: str, before: list[str], after: list[str]) -> bool:
    """A DROP TABLE whose rows live on: all copied into another table earlier in the same script (the
    rebuild-and-rename migration; a copy with WHERE, LIMIT, GROUP BY or DISTINCT keeps only some), or one the script re-creates as a virtual table (a full-text or
    vector index) and refills from another table."""
    m = _DROPPED.match(stmt)
    if not m:
        return False
    for table in (_name(t) for t in m.group(1).split(",")):
        copied = any((c := _COPY.match(s)) and _name(c.group(3)) == table and not _FILTERED.search(s)
                     and _name(c.group(1) or c.group(2)) != table for s in before)
        refilled = any((v := _VIRTUAL.match(s)) and _name(v.group(1)) == table for s in after) and any(
            (c := _COPY.match(s)) and _name(c.group(1) or c.group(2)) == table and _name(c.group(3)) != table
            for s in after)
        if not (copied or refilled):
            return False
    return True


def _fills_blanks(stmt: str) -> bool:
    """An UPDATE whose every assignment keeps the value there (``col = COALESCE(col, ...)``): it only
    fills in what is missing, so no WHERE clause is needed."""
    m = _SET.search(stmt)
    if not m:
        return False
    parts, depth, cur = [], 0, ""
    for ch in m.group(1):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return all((k := _KEEP_VALUE.match(p.strip())) and _name(k.group(1)) == _name(k.group(2)) for p in parts)


_MONGO_DENY = LazyRe(
    r"dropDatabase\s*\(|\.drop\s*\(\s*\)|\.(?:deleteMany|remove)\s*\(\s*(?:\{\s*\}\s*)?\)|"
    r"\.(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*[,)]|dropAllUsers\s*\(|\.dropIndexes\s*\(")
_MONGO_ASK = LazyRe(r"\.updateMany\s*\(\s*\{\s*\}|\.drop\w*\s*\(")


def mongo_findings(js: str) -> list[tuple[str, str]]:
    code = _COMMENT_BLOCK.sub(" ", js)
    code = re.sub(r"//[^\n]*", " ", code)
    if _MONGO_DENY.search(code):
        return [("deny", "drops or empties a MongoDB database/collection")]
    if _MONGO_ASK.search(code):
        return [("ask", "changes every document of a MongoDB collection")]
    return []


_REDIS_DENY = frozenset({"FLUSHALL", "FLUSHDB"})
_REDIS_ASK = frozenset({"SHUTDOWN", "DEBUG", "SWAPDB"})


def redis_findings(words: list[str]) -> list[tuple[str, str]]:
    for w in words:
        u = w.upper()
        if u in _REDIS_DENY:
            return [("deny", f"{u} erases the Redis data set")]
        if u in _REDIS_ASK:
            return [("ask", f"Redis {u}")]
    return []


def redis_text_findings(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        found += redis_findings(line.split())
    return found
