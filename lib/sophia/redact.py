"""The one redaction module. Standard library only (imported by hooks).

Every capture path (action buffer, episodes, transcript ingest, agent results, logs,
guardian log) passes text through :func:`redact` (or structures through
:func:`redact_obj`) before anything reaches disk. It removes well-known credential
formats, private-key blocks, passwords in URLs, Authorization headers, values of
variables whose names say TOKEN / SECRET / PASSWORD / API_KEY / PRIVATE / CREDENTIAL,
and whole ``<private>...</private>`` spans.

Every pattern runs in linear time: names are matched whole with possessive quantifiers
(Python 3.11+) and judged by :func:`is_secret_name`, never by nested ``[...]*WORD[...]*``
scans (the first version took 180 s on a 20 KB line of dashes). Quotes may be
backslash-escaped to any depth, so a secret inside a JSON string inside a JSON line
(a transcript, a log) is found as well as in plain text. The tests in
``tests/test_redact.py`` hold a corpus of fake secrets in realistic contexts.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "[REDACTED]"
# Start of a word; a JSON-escaped \n, \r or \t just before counts as a separator (raw JSON lines).
_START = r"(?:(?<![\w.\-])|(?<=\\[nrt]))"

_PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.S | re.I)
_KEY_BLOCK = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)

# Credential formats with a recognisable shape (whole match replaced).
_TOKEN_ALTS = (
    r"|".join(
        [
            r"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}\b",  # AWS access key id
            r"gh[pousr]_[A-Za-z0-9]{30,}+",  # GitHub classic tokens
            r"github_pat_[A-Za-z0-9_]{20,}+",  # GitHub fine-grained
            r"glpat-[A-Za-z0-9_\-]{20,}+",  # GitLab personal access token
            r"gl(?:dt|rt|ptt|ft|imt|agent|cbt|soat)-[A-Za-z0-9_\-]{20,}+",  # other GitLab tokens
            r"xox[abposre]-[A-Za-z0-9\-]{10,}+",  # Slack tokens
            r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]++",  # Slack webhook
            r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}+",  # Stripe keys
            r"whsec_[A-Za-z0-9]{20,}+",  # Stripe webhook secret
            r"sk-ant-[A-Za-z0-9_\-]{20,}+",  # Anthropic
            r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}+",  # OpenAI
            r"eyJ[A-Za-z0-9_\-]{5,}+\.eyJ[A-Za-z0-9_\-]{5,}+\.[A-Za-z0-9_\-]{5,}+",  # JWT
            r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
            r"npm_[A-Za-z0-9]{36}",  # npm token
            r"hf_[A-Za-z0-9]{30,}+",  # Hugging Face
            r"SG\.[A-Za-z0-9_\-]{16,}+\.[A-Za-z0-9_\-]{20,}+",  # SendGrid
            r"dop_v1_[a-f0-9]{64}",  # DigitalOcean
            r"pypi-[A-Za-z0-9_\-]{40,}+",  # PyPI upload token
        ]
    )
)
# \b is fast (the engine skips to the alternatives' first letters); a token right after a JSON-escaped
# \n, \r or \t ("...\\nAKIA...") has no \b before it, so a second pattern catches that case.
_TOKENS = re.compile(rf"\b(?:{_TOKEN_ALTS})")
_TOKENS_ESCAPED = re.compile(rf"(\\[nrt])(?:{_TOKEN_ALTS})")

# scheme://user:password@host -> scheme://user:[REDACTED]@host (user may be empty: redis://:pw@h)
_URL_PASSWORD = re.compile(r"(?<![\w+.\-])([a-zA-Z][a-zA-Z0-9+.\-]*+://[^/\s:@'\"\\]*+):([^@\s/'\"\\]++)@")

# Authorization-style headers: keep the header name, drop the credential (and the rest of the line).
_AUTH_HEADER = re.compile(
    r"(?i)(?:(?<![\w\-])|(?<=\\[nrt]))((?:proxy-)?authorization|cookie|set-cookie)([ \t]*+[:=][ \t]*+)"
    r"(?:(bearer|basic|token|digest|bot|negotiate)[ \t]++)?([^\s\"'\\,;]++[^\"'\\\r\n]*+)"
)
# Key headers: one credential, the rest of the line stays.
_KEY_HEADER = re.compile(
    r"(?i)(?:(?<![\w\-])|(?<=\\[nrt]))(x-api-key|api-key|x-auth-token|private-token)([ \t]*+[:=][ \t]*+)"
    r"(?:(bearer|token)[ \t]++)?([^\s\"'\\,;]++)"
)
# Words that make a name secret; a name is judged whole by is_secret_name().
_SECRET_WORD = re.compile(
    r"token|secret|passw(?:or)?d|passphrase|pwd|api_?key|apikey|private|credentials?|access_?key|auth_?key"
    r"|account_?key|signing_?key|encryption_?key|master_?key|session_?key|signature|auth_?code|(?:^|_)sig(?:_|$)"
)
# A name whose last part is one of these names a property of a secret, not the secret itself.
_BENIGN_LAST = frozenset((
    "count", "counts", "type", "types", "limit", "limits", "usage", "url", "uri", "urls", "endpoint", "file", "files",
    "path", "dir", "name", "names", "length", "len", "size", "ttl", "expiry", "expires", "expiration", "in", "at",
    "id", "ids", "header", "env", "var", "hint", "prompt", "field", "policy", "format", "reset", "required",
    "enabled", "valid", "regex", "pattern", "min", "max", "timeout", "lifetime", "version", "algorithm", "alg",
    "label", "kind", "location", "store", "helper", "manager", "provider", "method", "mode", "source", "budget",
    "rotation",
))
_BENIGN_NAMES = frozenset({"pwd", "oldpwd", "tokenizer", "tokenize", "tokenizers"})
_VALUE_SKIP = frozenset({"null", "none", "true", "false", "undefined", "nil", "''", '""'})

_NAME_CHARS = r"[\w.\-]"
# A quoted value: plain "..."/'...' (with \" escapes) or quoted with backslash-escaped quotes at any depth.
_VQ = (r"(?P<esc>\\++)?+(?P<vq>[\"'])"
       r"(?P<vqv>(?(esc)(?:(?!(?P=esc)(?P=vq))[^\n]){0,4096}+|(?:(?!(?P=vq))[^\\\n]|\\.){0,4096}+))"
       r"(?(esc)(?P=esc))(?P=vq)")
# Values, matched at the position right after a secret name's separator.
_V_EQ = re.compile(rf"{_VQ}|(?P<vu>[^\s\"',;&|)}}\]\\`]++)")  # shell-like: ends at a space
_V_COLON = re.compile(rf"{_VQ}|(?P<vu>[^\s\"',;}}\]\\`#][^\n\"',;}}\]\\`]*+)")  # YAML-like: to the end of line
_V_FLAG = re.compile(rf"{_VQ}|(?P<vu>[^\s\"'\\\-][^\s\"'\\]*+)")
_V_XML = re.compile(r"(?P<vu>[^<\n]{1,4096}+)(?=</)")

# Names followed by a separator. Only the name and the separator are matched: when the name is not
# secret, scanning resumes at its value (which may hold `password=...` itself), so it stays linear.
_NAMED: list[tuple[re.Pattern[str], re.Pattern[str], tuple[str, ...]]] = [
    # "name": value / 'name' => value / \"name\": \"value\" (JSON, YAML, Python/PHP dicts, escaped JSON)
    (re.compile(rf"(?P<kq>\\*+[\"'])(?P<name>{_NAME_CHARS}++)(?P=kq)[ \t]*+(?:=>|:|=)[ \t]*+"), _V_COLON,
     ("\"", "'")),
    # NAME=value / export NAME=value / --name=value / NAME := value / name => value / Header:value
    (re.compile(rf"{_START}(?P<name>[A-Za-z_\-][\w.\-]*+)[ \t]*+(?:=>|:=|\+?=(?!=)|:(?!//|:|[ \t]))[ \t]*+"),
     _V_EQ, ("=", ":")),
    # NAME: value (YAML, headers, prose): an unquoted value runs to the end of the line
    (re.compile(rf"{_START}(?P<name>[A-Za-z_\-][\w.\-]*+)[ \t]*+:[ \t]++"), _V_COLON, (":",)),
    # --name value
    (re.compile(rf"{_START}(?P<name>--?[A-Za-z][\w.\-]*+)[ \t]++"), _V_FLAG, ("-",)),
    # `aws configure set NAME VALUE`, `heroku config:set NAME VALUE`, `gh secret set NAME --body VALUE`
    (re.compile(rf"\b(?:set|config:set|add)[ \t]++(?P<name>{_NAME_CHARS}++)[ \t]++(?:--body[ \t]++)?"), _V_FLAG,
     ("set", "add")),
    # <password>VALUE</password>
    (re.compile(r"<(?P<name>[\w.\-:]++)(?:[ \t][^>\n]{0,200}+)?>"), _V_XML, ("</",)),
]
# YAML: name: NAME\n  value: VALUE ; JSON: "name": "NAME", "value": "VALUE" (Kubernetes env, CI variables)
_Q = r"(?:\\*+[\"'])?+"
_NAME_VALUE = re.compile(
    rf"\b(?:name|key){_Q}[ \t]*+:[ \t]*+(?P<nq>{_Q})(?P<name>{_NAME_CHARS}++)(?P=nq)[ \t]*+"
    rf"(?:,[ \t]*+|(?:\\r)?(?:\\n|\r?\n)[ \t]*+(?:-[ \t]*+)?){_Q}value{_Q}[ \t]*+[:=][ \t]*+"
)
_USER_FLAG = re.compile(rf"{_START}((?:-u|--user|--proxy-user)(?:[ \t]*+=?[ \t]*+)[\"']?+[^\s:\"'\\]*+:)([^\s\"'\\]++)")
_MYSQL_P = re.compile(r"(\b(?:mysql|mysqldump|mariadb|mariadb-dump|mysqladmin|mysqlimport|mysqlshow)\b"
                      r"[^\n|;&]{0,300}?[ \t]-p)([^\s\"'\\]++)")
_LOGIN_P = re.compile(r"(\b(?:(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)\b[^\n|;&]{0,100}?\blogin\b"
                      r"[^\n|;&]{0,300}?[ \t]-p|\bsshpass[ \t]++-p)[ \t]*+)([^\s\"'\\]++)")
_NETRC = re.compile(r"(\b(?:login|user)[ \t]++\S++[ \t]++password[ \t]++)([^\s\\]++)")


# Short strings made of these characters cannot hold a secret any rule finds (no separator, no token).
_PLAIN = re.compile(r"[A-Za-z0-9 .,/()\[\]{}+#%~^*!?|]{0,63}")


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


_NAMES: dict[str, bool] = {}


def is_secret_name(name: str) -> bool:
    """True when a variable / key / flag name says it holds a secret (``DB_PASSWORD``, ``x_token``,
    ``--api-key``, ``accessToken``), False for names of a secret's properties (``token_type``,
    ``max_tokens``, ``password_file``)."""
    known = _NAMES.get(name)
    if known is None:
        if len(_NAMES) >= _SEEN_MAX:
            _NAMES.clear()
        known = _NAMES[name] = _secret_name(name)
    return known


def _secret_name(name: str) -> bool:
    n = _CAMEL.sub("_", name).lower().lstrip("-").replace("-", "_").replace(".", "_")
    if not n or n in _BENIGN_NAMES or not _SECRET_WORD.search(n):
        return False
    parts = [p for p in n.split("_") if p]
    if not parts or parts[-1] in _BENIGN_LAST:
        return False
    # plural "tokens" is a count (max_tokens, inputTokens): secret only if another part says so
    return bool(_SECRET_WORD.search("_".join(p for p in parts if not p.endswith("tokens"))))


def _value_is_placeholder(v: str) -> bool:
    v = v.strip()
    return not v or v.startswith(("$", "[REDACTED", "\\$")) or v.lower() in _VALUE_SKIP or set(v) <= {"*", "x", "X"}


def _value_span(m: re.Match[str]) -> tuple[str, int]:
    if m.group("vu") is not None:
        return m.group("vu"), m.start("vu")
    return m.group("vqv") or "", m.start("vqv")


def _scan(text: str, name_rx: re.Pattern[str], value_rx: re.Pattern[str]) -> str:
    """Mask the value after every secret name ``name_rx`` finds (one linear pass)."""
    parts: list[str] = []
    pos = last = 0
    while True:
        m = name_rx.search(text, pos)
        if m is None:
            break
        vs = m.end()
        pos = vs if vs > m.start() else vs + 1
        if not is_secret_name(m.group("name")):
            continue
        v = value_rx.match(text, vs)
        if v is None:
            continue
        value, a = _value_span(v)
        stripped = value.rstrip()
        if _value_is_placeholder(stripped):
            continue
        parts.append(text[last:a])
        parts.append(MASK)
        last = a + len(stripped)
        pos = max(pos, last)
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def _mask_auth(m: re.Match[str]) -> str:
    if m.group(4).startswith("[REDACTED") or m.group(4).startswith("$"):
        return m.group(0)
    scheme = f"{m.group(3)} " if m.group(3) else ""
    return f"{m.group(1)}{m.group(2)}{scheme}{MASK}"


def _mask_tail(m: re.Match[str]) -> str:
    if m.group(2).startswith(("[REDACTED", "$")):
        return m.group(0)
    return f"{m.group(1)}{MASK}"


# Answers for short texts already redacted by this process: a long-lived one (the resident hook runner)
# redacts the same action lines, paths and prompts on every Stop of a session. Bounded; emptied when full.
_SEEN: dict[str, str] = {}
_SEEN_MAX_CHARS = 512
_SEEN_MAX = 20_000
# and a few long ones: the session's first prompt (its goal), the last message, rebuilt into the episode
# after every turn and redacted with a margin of 4,096 characters
_LONG: dict[str, str] = {}
_LONG_MAX_CHARS = 32_768
_LONG_MAX = 128


def redact(text: str) -> str:
    """Return ``text`` with secrets replaced by ``[REDACTED]`` (``<private>`` spans removed)."""
    if not text or not isinstance(text, str):
        return text
    if len(text) < 64 and "A" not in text and _PLAIN.fullmatch(text):
        return text  # a key, an id, a word: no rule below can match (the all-alnum AWS/Google keys start with A)
    seen, cap = (_SEEN, _SEEN_MAX) if len(text) <= _SEEN_MAX_CHARS else (_LONG, _LONG_MAX)
    if len(text) <= _LONG_MAX_CHARS:
        done = seen.get(text)
        if done is not None:
            return done
    low = text.lower()  # each rule runs only if its trigger is in the text
    out = _mask_options(_mask_named(_mask_shapes(text, low), low), low)
    if len(text) <= _LONG_MAX_CHARS:
        if len(seen) >= cap:
            seen.clear()
        seen[text] = out
    return out


def _mask_shapes(out: str, low: str) -> str:
    """Secrets known by their shape: <private> spans, key blocks, tokens, URL passwords, auth headers."""
    if "<private>" in low:
        out = _PRIVATE_SPAN.sub("", out)
    if "-----begin" in low:
        out = _KEY_BLOCK.sub(MASK, out)
    out = _TOKENS.sub(MASK, out)
    if "\\" in out:
        out = _TOKENS_ESCAPED.sub(rf"\1{MASK}", out)
    if "://" in out:
        out = _URL_PASSWORD.sub(rf"\1:{MASK}@", out)
    if ":" in out or "=" in out:
        out = _AUTH_HEADER.sub(_mask_auth, out)
        out = _KEY_HEADER.sub(_mask_auth, out)
    return out


def _mask_named(out: str, low: str) -> str:
    """Values given to a secret name: ``"name": "X", "value": ...``, ``API_KEY=...``, ``"token": ...``."""
    if "value" in low:
        out = _scan(out, _NAME_VALUE, _V_COLON)
    for name_rx, value_rx, triggers in _NAMED:
        if any(t in out for t in triggers):
            out = _scan(out, name_rx, value_rx)
    return out


def _mask_options(out: str, low: str) -> str:
    """Passwords given on a command line (``-u user:pw``, ``-pSECRET``) or in a .netrc."""
    if "-u" in out or "--user" in out or "--proxy-user" in out:
        out = _USER_FLAG.sub(_mask_tail, out)
    if "-p" in out:
        out = _MYSQL_P.sub(_mask_tail, out)
        out = _LOGIN_P.sub(_mask_tail, out)
    if "password" in low:
        out = _NETRC.sub(_mask_tail, out)
    return out


def redact_head(text: str, limit: int, margin: int = 4096) -> str:
    """The first ``limit`` characters of ``redact(text)``, redacting a margin past the cut first: cutting
    before redacting can split a token so that its shape is no longer recognised (a partial key leaks)."""
    if not isinstance(text, str):
        return text
    return redact(text[: limit + margin])[:limit]


def _mask_all(obj: Any) -> Any:
    """Everything scalar under a secret-named key (``{"credentials": {...}}``)."""
    if isinstance(obj, bool) or obj is None:
        return obj
    if isinstance(obj, (str, int, float)):
        return obj if isinstance(obj, str) and _value_is_placeholder(obj) else MASK
    if isinstance(obj, dict):
        return {redact(k) if isinstance(k, str) else k: _mask_all(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_mask_all(v) for v in obj]
    return obj


def redact_obj(obj: Any) -> Any:
    """Redact every string in a JSON-like structure (keys too); values under secret-named keys are masked
    whole, as is the ``value`` of a ``{"name": "DB_PASSWORD", "value": ...}`` pair."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        pair_name = obj.get("name", obj.get("key"))
        pair_secret = isinstance(pair_name, str) and "value" in obj and is_secret_name(pair_name)
        out: dict[Any, Any] = {}
        for k, v in obj.items():
            key = redact(k) if isinstance(k, str) else k
            secret_key = isinstance(k, str) and is_secret_name(k)
            if (secret_key or (pair_secret and k == "value")) and not isinstance(v, bool) and v is not None:
                out[key] = _mask_all(v)
            else:
                out[key] = redact_obj(v)
        return out
    if isinstance(obj, list):
        return [redact_obj(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_obj(v) for v in obj)
    return obj
