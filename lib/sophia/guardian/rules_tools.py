"""Tools other than the shell and file writes: reading credentials, secrets sent to the web, MCP tools.

- Read / Grep / Glob of a private key or a credential store (``~/.ssh/id_*``, ``~/.aws/credentials``,
  ``.netrc``, password stores, keyrings and keychains, browser profiles) asks; project files,
  ``.env.example`` and public keys do not.
- WebFetch / WebSearch whose URL or query carries a secret (a known token format, a secret-named
  parameter, a long high-entropy value in the query string) is denied: it would leave the machine.
- An MCP tool (``mcp__<server>__<tool>``) asks when its name or its arguments carry a destructive or
  outward verb; ``guardian.mcp_deny`` / ``guardian.mcp_allow`` globs on the tool name decide first.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections import Counter

from . import targets
from .lazyre import LazyRe

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from typing import Any

    from .analyze import Analyzer

READ_TOOLS = ("Read", "Grep", "Glob")
WEB_TOOLS = ("WebFetch", "WebSearch")
# credential stores under HOME (relative paths; a directory covers what is inside)
HOME_CREDENTIALS = (
    ".ssh", ".aws/credentials", ".gnupg", ".password-store", ".local/share/keyrings", "Library/Keychains",
    ".netrc", ".git-credentials", ".docker/config.json", ".kube/config", ".config/gh/hosts.yml", ".pgpass",
    ".vault-token", ".config/gcloud", ".azure", ".npmrc", ".pypirc", ".cargo/credentials",
    ".cargo/credentials.toml", ".mozilla/firefox", ".config/google-chrome", ".config/chromium",
    ".config/BraveSoftware", "Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
    "Library/Cookies", ".thunderbird", ".config/op", ".1password",
)
# anywhere: private key and key-store files (public keys and known_hosts are not secret)
KEY_NAMES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".netrc", ".git-credentials", ".pgpass")
KEY_EXTS = ("kdbx", "p12", "pfx", "keychain", "keychain-db", "jks", "keystore")
_KEY_FILE = LazyRe(r"(?:^|/)(?:(?:" + "|".join(map(re.escape, KEY_NAMES)) + r")(?:_sk)?|[^/]*\.(?:"
                   + "|".join(map(re.escape, KEY_EXTS)) + r"))$")
_PUBLIC = LazyRe(r"(?:\.pub|known_hosts|authorized_keys|/config)$")
_WILD = re.compile(r"[*?\[{]")
# MCP: words in a tool name or argument that destroy something or send it out
_VERBS = ("delete", "drop", "destroy", "purge", "truncate", "remove", "force", "merge", "send", "email", "post",
          "publish", "pay", "payment", "transfer", "deploy", "wipe", "erase", "revoke", "kill", "terminate")
_STEMS = frozenset({"delete", "drop", "destroy", "purge", "truncate", "remove", "wipe", "erase"})  # deleteAll ...
_ARG_VERB = LazyRe(r"\b(?:drop\s+(?:table|database|schema|index|collection)|delete\s+from|truncate\s+table|"
                   r"rm\s+-[a-z]*r|force[-_ ]push)\b", re.I)
_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])")
_QUERY_VALUE = re.compile(r"[?&;][^=&#\s]*=([^&#\s]+)")


def prefilter_words() -> list[str]:
    """What the bash prefilter looks for in a Read/Grep/Glob path: the first folder of every credential
    store, every key file name and extension (tests/guardian/test_prefilter.py holds them equal)."""
    words = {c.split("/", 1)[0] for c in HOME_CREDENTIALS} | set(KEY_NAMES) | {"." + e for e in KEY_EXTS}
    return sorted(words)


def read_paths(tool: str, tool_input: dict[str, Any]) -> list[str]:
    """The paths (or path patterns) a Read / Grep / Glob call looks at."""
    base = tool_input.get("file_path" if tool == "Read" else "path")
    base = base if isinstance(base, str) and base else None
    out = [base] if base else []
    pat = tool_input.get({"Glob": "pattern", "Grep": "glob"}.get(tool, ""))
    if isinstance(pat, str) and pat:
        out.append(pat if pat.startswith(("/", "~")) else f"{(base or '.').rstrip('/')}/{pat}")
    return out


def credential(a: Analyzer, path: str) -> str | None:
    """Why reading ``path`` reaches a credential (None: it does not)."""
    p = targets.resolve(a.ctx, targets.expand_tilde(a.ctx, path))
    if p is None:
        return None
    fixed = _WILD.split(p, 1)[0].rstrip("/") if _WILD.search(p) else p
    rel = targets.home_rel(a.ctx, fixed)
    if rel is not None and not _PUBLIC.search(p):
        hit = next((c for c in HOME_CREDENTIALS if rel == c or rel.startswith(c + "/")), None)
        if hit:
            return f"~/{hit}, a credential store"
        inside = next((c for c in HOME_CREDENTIALS if rel and c.startswith(rel + "/")), None)
        if inside:
            return f"a folder holding ~/{inside}, a credential store"
    if _KEY_FILE.search(p) and not _PUBLIC.search(p):
        return f"{p}, a private key or credential file"
    return None


def reads(a: Analyzer, tool: str, tool_input: dict[str, Any]) -> None:
    for path in read_paths(tool, tool_input):
        why = credential(a, path)
        if why:
            a.add("ask", "credential_read", f"{tool} of {path} reads {why}",
                  "Ask the user whether this secret is really needed; never copy it anywhere.")
            return


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def carries_secret(text: str) -> str | None:
    """What secret ``text`` (a URL or a query) carries: a known token or secret-named value (the
    redactor's own patterns), or a long high-entropy value in a query string. None: nothing."""
    from ..redact import redact

    if redact(text) != text:
        return "a credential (a known token format or a secret-named value)"
    for m in _QUERY_VALUE.finditer(text):
        v = m.group(1)
        if len(v) >= 32 and _entropy(v) >= 4.0 and re.search(r"\d", v) and re.search(r"[A-Za-z]", v):
            return "a long random value in its query string (a key or token)"
    return None


def web(a: Analyzer, tool: str, tool_input: dict[str, Any]) -> None:
    text = " ".join(str(tool_input.get(k) or "") for k in ("url", "query"))
    why = carries_secret(text)
    if why:
        a.add("deny", "secret_exfil", f"{tool} would send {why} to the web",
              "Never put credentials in a URL or a search; ask the user if something needs them.")


def _strings(obj: Any, depth: int = 0) -> list[str]:
    if depth > 6:
        return []
    if isinstance(obj, str):
        return [obj[:4000]]
    if isinstance(obj, dict):
        return [s for k, v in list(obj.items())[:200] for s in [str(k), *_strings(v, depth + 1)]]
    if isinstance(obj, list):
        return [s for v in obj[:200] for s in _strings(v, depth + 1)]
    return []


def mcp_verb(tool: str, tool_input: dict[str, Any]) -> str | None:
    """The destructive or outward word in an MCP tool's name or arguments (None: none)."""
    name = tool.split("__", 2)[-1]
    words = {w.lower() for w in _WORD_SPLIT.split(name) if w}
    hit = next((v for v in _VERBS if v in words or (v in _STEMS and any(w.startswith(v) for w in words))), None)
    if hit:
        return f"its name says {hit!r}"
    if tool_input.get("force") is True:
        return "it is called with force"
    m = next((m for s in _strings(tool_input) if (m := _ARG_VERB.search(s))), None)
    return f"its arguments say {m.group(0)!r}" if m else None


def mcp(a: Analyzer, tool: str, tool_input: dict[str, Any], allow: list[str], deny: list[str]) -> None:
    if any(fnmatch.fnmatchcase(tool, g) for g in deny):
        a.add("deny", "mcp_config_deny", f"{tool} matches guardian.mcp_deny in your Sophia config",
              "Tell the user what you wanted to do with it.")
        return
    if any(fnmatch.fnmatchcase(tool, g) for g in allow):
        return
    why = mcp_verb(tool, tool_input)
    if why:
        a.add("ask", "mcp_outward", f"the MCP tool {tool} may destroy or send something: {why}",
              "Confirm with the user; to trust this tool always, add it to guardian.mcp_allow.")
