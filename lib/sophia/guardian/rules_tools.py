"""Tools other than the shell and file writes: reading credentials, secrets sent to the web, MCP tools.

- Read / Grep / Glob of a private key or a credential store (``~/.ssh/id_*``, ``~/.aws/credentials``,
  ``~/.kube/config``, ``.netrc``, password stores, keyrings and keychains, browser profiles, the
  machine's TLS keys; :mod:`.credentials` says which) asks, and so does a shell command that prints one
  (``cat``, ``head``, ``grep``: dispatch.READERS); project files, ``.env.example``, certificates, public
  keys and ssh's own config do not.
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

from . import credentials, targets
from .lazyre import LazyRe
from .shell import UNKNOWN

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from typing import Any

    from .analyze import Analyzer, Call

READ_TOOLS = ("Read", "Grep", "Glob")
WEB_TOOLS = ("WebFetch", "WebSearch")
# credential stores, key names and extensions: :mod:`.credentials` (re-exported for the prefilter and tests)
HOME_CREDENTIALS, KEY_NAMES, KEY_EXTS = credentials.HOME_CREDENTIALS, credentials.KEY_NAMES, credentials.KEY_EXTS
# MCP: words in a tool name or argument that destroy something or send it out
_VERBS = ("delete", "drop", "destroy", "purge", "truncate", "remove", "force", "merge", "send", "email", "post",
          "publish", "pay", "payment", "transfer", "deploy", "wipe", "erase", "revoke", "kill", "terminate")
_STEMS = frozenset({"delete", "drop", "destroy", "purge", "truncate", "remove", "wipe", "erase"})  # deleteAll ...
_ARG_VERB = LazyRe(r"\b(?:drop\s+(?:table|database|schema|index|collection)|delete\s+from|truncate\s+table|"
                   r"rm\s+-[a-z]*r|force[-_ ]push)\b", re.I)
_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])")
_QUERY_VALUE = re.compile(r"[?&;][^=&#\s]*=([^&#\s]+)")


# (bash ERE) a key file named ``id_<name>`` with no extension (``id_github``): its content decides
ID_KEY_ERE = r"(^|/)id_[A-Za-z0-9_-]*([^A-Za-z0-9_./-]|$)"


def prefilter_words(shell: bool = False) -> list[str]:
    """What the bash prefilter looks for in a Read/Grep/Glob path (the first folder of every credential
    store) or, with ``shell``, in a command (the store's whole path: a command that prints it must reach
    the analyzer, one that names ``vite.config.ts`` need not); every key file name and extension and the
    machine's own secrets either way (tests/guardian/test_prefilter.py holds them equal)."""
    stores = set(HOME_CREDENTIALS) if shell else {c.split("/", 1)[0] for c in HOME_CREDENTIALS}
    words = stores | set(KEY_NAMES) | {"." + e for e in KEY_EXTS} | set(credentials.SYSTEM_CREDENTIALS)
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
    return credentials.why_secret(a.ctx.home, p) if p else None


_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag"})
_PATTERN_OPTS = frozenset({"-e", "--regexp", "-f", "--file"})
# a grep pattern that looks for a secret (or matches every line)
_SECRET_PATTERN = LazyRe(r"(?i)token|auth|pass|secret|key|cred|private|begin|session|cookie|bearer|^[.^$*]*$")


def shell_read(a: Analyzer, call: Call) -> None:
    """``cat ~/.ssh/id_rsa``, ``head ~/.kube/config``, ``grep -r token ~/.aws``: a shell command that
    prints a credential (dispatch.READERS) asks, as a Read of it does (sending it anywhere is denied by
    the exfiltration rules). What a grep keeps is what it matches: ``grep registry ~/.npmrc``, ``cat
    ~/.npmrc | grep -i mcp`` show only lines that do not name a secret."""
    pattern, paths = _grep_operands(call.args) if call.name in _GREPS else (None, _operands(call.args))
    if pattern is not None and not _shows_secret(call.args, pattern):
        return
    paths += [a.expand(r.target)[0] for r in call.cmd.redirs if r.op == "<" and r.target is not None]
    for p in paths:
        why = credential(a, p) if p and UNKNOWN not in p else None
        if why and not _filtered_after(a, call):
            a.add("ask", "credential_read", f"`{call.show()}` prints {why}",
                  "Ask the user whether this secret is really needed; never copy it anywhere.")
            return


def _operands(args: list[str]) -> list[str]:
    return [x for x in args if not x.startswith("-") or x == "-"]


def _grep_operands(args: list[str]) -> tuple[str, list[str]]:
    """(the pattern, the files) of a grep call."""
    for i, x in enumerate(args):
        if x in _PATTERN_OPTS and i + 1 < len(args):
            return ("" if x in ("-f", "--file") else args[i + 1]), _operands(args[:i] + args[i + 2:])
        if x.startswith(("--regexp=", "--file=")):
            return ("" if x.startswith("--file=") else x.split("=", 1)[1]), _operands(args[:i] + args[i + 1:])
    ops = _operands(args)
    return (ops[0] if ops else ""), ops[1:]


def _shows_secret(args: list[str], pattern: str) -> bool:
    """Whether a grep with these options and pattern may print a secret line: not when it prints only
    counts or names (-c, -l, -q) or keeps lines that match a pattern naming no secret."""
    flags = "".join(x[1:] for x in args if x.startswith("-") and not x.startswith("--"))
    if any(f in flags for f in "clq") or any(x in args for x in ("--count", "--files-with-matches", "--quiet")):
        return False
    return "v" in flags or "--invert-match" in args or bool(_SECRET_PATTERN.search(pattern))


def _filtered_after(a: Analyzer, call: Call) -> bool:
    """The output goes straight into a grep that keeps only lines naming no secret."""
    nxt = [c for c in call.script.pipeline_of(call.cmd) if c.stage == call.cmd.stage + 1]
    if not nxt:
        return False
    from .wrappers import strip

    inv = strip([v for w in nxt[0].words for v in a.expand(w)[:1]])
    if inv.name not in _GREPS:
        return False
    pattern, files = _grep_operands(inv.args)
    return not files and not _shows_secret(inv.args, pattern)


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


# Keys that are published for anyone to use (api.nasa.gov's DEMO_KEY, Alpha Vantage's `demo`, OpenWeather's
# and others' documentation samples) and placeholders copied from a page's examples: not secrets.
_PUBLIC_KEYS = frozenset({"demo_key", "demo", "demo-key", "demokey", "test", "testing", "sample", "example",
                          "your_api_key", "your-api-key", "yourapikey", "your_key", "your-key", "your_token",
                          "api_key", "apikey", "token", "key", "secret", "changeme", "placeholder", "public",
                          "anonymous", "guest", "none", "null"})
_PLACEHOLDER_VALUE = LazyRe(r"^(?:<[^<>]*>|\{[^{}]*\}|%7B[^&#]*%7D|\$\{?\w+\}?|x{3,}|\*{3,}|\.{3})$", re.I)
_QUERY_PAIR = LazyRe(r"([?&;][^=&#\s]*=)([^&#\s]*)")


def _public_values_out(text: str) -> str:
    """``text`` without the values of query parameters that hold a published demo key or a placeholder."""
    if "=" not in text:
        return text
    return _QUERY_PAIR.sub(lambda m: m.group(1) if m.group(2).lower() in _PUBLIC_KEYS
                           or _PLACEHOLDER_VALUE.match(m.group(2)) else m.group(0), text)


def carries_secret(text: str) -> str | None:
    """What secret ``text`` (a URL or a query) carries: a known token or secret-named value (the
    redactor's own patterns), or a long high-entropy value in a query string. None: nothing. A published
    demo key or a placeholder (``api_key=DEMO_KEY``, ``token=<TOKEN>``) is nothing."""
    from ..redact import redact

    text = _public_values_out(text)
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
