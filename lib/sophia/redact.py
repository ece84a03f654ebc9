"""The one redaction module. Standard library only (imported by hooks).

Every capture path (action buffer, episodes, transcript ingest, agent results, logs,
guardian log) passes text through :func:`redact` (or structures through
:func:`redact_obj`) before anything reaches disk. It removes well-known credential
formats, private-key blocks, passwords in URLs, Authorization headers, values of
variables whose names say TOKEN / SECRET / PASSWORD / API_KEY / PRIVATE / CREDENTIAL,
and whole ``<private>...</private>`` spans.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "[REDACTED]"

_PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.S | re.I)
_KEY_BLOCK = re.compile(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)

# Credential formats with a recognisable shape (whole match replaced).
_TOKENS = re.compile(
    r"|".join(
        [
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}\b",  # AWS access key id
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub classic tokens
            r"\bgithub_pat_[A-Za-z0-9_]{20,}",  # GitHub fine-grained
            r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab personal access token
            r"\bgl(?:dt|rt|ptt|ft|imt|agent|cbt|soat)-[A-Za-z0-9_\-]{20,}",  # other GitLab tokens
            r"\bxox[abposre]-[A-Za-z0-9\-]{10,}",  # Slack tokens
            r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",  # Slack webhook
            r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}",  # Stripe keys
            r"\bwhsec_[A-Za-z0-9]{20,}",  # Stripe webhook secret
            r"\bsk-ant-[A-Za-z0-9_\-]{20,}",  # Anthropic
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
            r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}",  # JWT
            r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API key
            r"\bnpm_[A-Za-z0-9]{36}",  # npm token
            r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face
            r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{20,}",  # SendGrid
            r"\bdop_v1_[a-f0-9]{64}",  # DigitalOcean
            r"\bpypi-[A-Za-z0-9_\-]{40,}",  # PyPI upload token
        ]
    )
)

# scheme://user:password@host -> scheme://user:[REDACTED]@host
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@'\"]+):([^@\s/'\"]+)@")

# Authorization-style headers: keep the header name, drop the credential.
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|cookie|set-cookie)(\s*[:=]\s*)"
    r"(?:(bearer|basic|token|digest|bot)\s+)?([^\s\"'\\,;]+(?:[^\"'\\\n]*)?)"
)

_SECRET_WORDS = r"(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PWD|API_?KEY|APIKEY|PRIVATE|CREDENTIALS?|ACCESS_?KEY|AUTH_?KEY|CLIENT_?SECRET|SESSION_?KEY)"
_NAME = rf"[A-Za-z0-9_.\-]*{_SECRET_WORDS}[A-Za-z0-9_.\-]*"

# NAME=value / NAME: value / export NAME=value / --name=value / "name": "value"
_ASSIGN_QUOTED_KEY = re.compile(rf"(?i)([\"']{_NAME}[\"']\s*:\s*)(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s,}}\]]+)")
_ASSIGN = re.compile(
    rf"(?i)((?<![A-Za-z0-9_]){_NAME}\s*(?:=|:(?!//))\s*)(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s\"',;&|)}}\]]+)"
)
_FLAG = re.compile(rf"(?i)(--?{_NAME}(?:=|\s+))(\"[^\"]*\"|'[^']*'|[^\s\"']+)")
_MYSQL_P = re.compile(r"(\b(?:mysql|mysqldump|mariadb|mysqladmin)\b[^\n|;&]*?\s-p)([^\s\"']+)")


def _mask_value(m: re.Match[str]) -> str:
    value = m.group(2)
    if value.strip("\"'").startswith("[REDACTED") or value.startswith("$") or not value.strip("\"'"):
        return m.group(0)
    q = value[0] if value[:1] in "\"'" and len(value) > 1 and value[-1] == value[0] else ""
    return f"{m.group(1)}{q}{MASK}{q}"


def _mask_auth(m: re.Match[str]) -> str:
    scheme = f"{m.group(3)} " if m.group(3) else ""
    return f"{m.group(1)}{m.group(2)}{scheme}{MASK}"


def redact(text: str) -> str:
    """Return ``text`` with secrets replaced by ``[REDACTED]``."""
    if not text:
        return text
    out = _PRIVATE_SPAN.sub("", text)
    out = _KEY_BLOCK.sub(MASK, out)
    out = _TOKENS.sub(MASK, out)
    out = _URL_PASSWORD.sub(rf"\1:{MASK}@", out)
    out = _AUTH_HEADER.sub(_mask_auth, out)
    out = _ASSIGN_QUOTED_KEY.sub(_mask_value, out)
    out = _ASSIGN.sub(_mask_value, out)
    out = _FLAG.sub(_mask_value, out)
    out = _MYSQL_P.sub(rf"\1{MASK}", out)
    return out


_SECRET_KEY = re.compile(rf"(?i)^{_NAME}$")


def redact_obj(obj: Any) -> Any:
    """Redact every string in a JSON-like structure; values under secret-named keys are masked whole."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for k, v in obj.items():
            if isinstance(k, str) and _SECRET_KEY.match(k) and isinstance(v, (str, int, float)) and v not in ("", None):
                out[k] = MASK
            else:
                out[k] = redact_obj(v)
        return out
    if isinstance(obj, list):
        return [redact_obj(v) for v in obj]
    return obj
