"""The viewer's guard: an ASGI middleware in front of every route.

In this order, for each HTTP request:
1. the Host header must name this server on a loopback name (127.0.0.1, localhost, [::1]) with its
   port, or the host given with ``--host``: anything else is 403 (a DNS-rebinding page cannot read
   the viewer through a name it controls);
2. the access token: the ``s3ui`` cookie, or ``?token=`` on a GET, which sets the cookie (HttpOnly,
   SameSite=Strict) and redirects to the same path without the token; neither is 401;
3. a POST must carry the CSRF token in its form (``csrf``) and, when the browser sends an Origin,
   come from this origin: else 403.
Every response gets a strict Content-Security-Policy (no script at all), no-store, a same-origin referrer policy and
``X-Frame-Options: DENY``; no CORS header is ever sent.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "s3ui"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
MAX_FORM_BYTES = 64 * 1024
HEADERS = [
    (b"content-security-policy", b"default-src 'none'; style-src 'self'; img-src 'self' data:; "
                                 b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make a form POST's Origin "null"
    (b"cache-control", b"no-store"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def new_token() -> str:
    return secrets.token_urlsafe(32)


def csrf_for(token: str) -> str:
    """The forms' CSRF token: derived from the access token, so a page without the cookie cannot know it."""
    return hmac.new(token.encode(), b"s3ui-csrf", hashlib.sha256).hexdigest()[:40]


def allowed_hosts(port: int, extra_host: str | None = None) -> frozenset[str]:
    names = list(LOOPBACK) + ([f"[{extra_host}]" if ":" in extra_host else extra_host] if extra_host else [])
    return frozenset(f"{n}:{port}".lower() for n in names)


def _header(scope: Scope, name: bytes) -> str:
    for k, v in scope.get("headers") or []:
        if k == name:
            return str(v.decode("latin-1"))
    return ""


def _cookie_token(scope: Scope) -> str:
    raw = _header(scope, b"cookie")
    if not raw:
        return ""
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header is no token
        return ""
    return jar[COOKIE].value if COOKIE in jar else ""


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *HEADERS, *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None when it is over MAX_FORM_BYTES."""
    chunks, size = [], 0
    while True:
        msg = await receive()
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            return None
        chunks.append(chunk)
        if not msg.get("more_body"):
            return b"".join(chunks)


class Guard:
    """Wraps the app: host, token, CSRF checks and the security headers (see the module docstring)."""

    def __init__(self, app: ASGIApp, token: str, hosts: frozenset[str]) -> None:
        self.app, self.token, self.hosts = app, token, hosts
        self.csrf = csrf_for(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets: the connection is refused
        host = _header(scope, b"host").lower()
        if host not in self.hosts:
            await _plain(send, 403, "403 Forbidden: this viewer answers only on its loopback address")
            return
        if not hmac.compare_digest(_cookie_token(scope).encode(), self.token.encode()):
            await self._token_in_url(scope, send)
            return
        if scope["method"] == "POST":
            replay = await self._checked_post(scope, receive, send, host)
            if replay is None:
                return
            receive = replay
        await self.app(scope, receive, self._with_headers(send))

    async def _token_in_url(self, scope: Scope, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("token") or [""])[0]
        if scope["method"] != "GET" or not hmac.compare_digest(given.encode(), self.token.encode()):
            await _plain(send, 401, "401 Unauthorized: open the URL `s3 ui` printed (it carries the access token)")
            return
        rest = {k: v for k, v in query.items() if k != "token"}
        target = scope.get("path", "/") + (f"?{urlencode(rest, doseq=True)}" if rest else "")
        cookie = f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
        await _plain(send, 303, "303 See Other", [(b"location", target.encode()), (b"set-cookie", cookie.encode())])

    async def _checked_post(self, scope: Scope, receive: Receive, send: Send, host: str) -> Receive | None:
        """The POST's receive (its body replayed) when its CSRF token and origin are right; else None (403 sent)."""
        origin = _header(scope, b"origin").lower()
        if origin and origin != f"http://{host}":
            await _plain(send, 403, "403 Forbidden: cross-origin POST")
            return None
        body = await _read_body(receive)
        if body is None:
            await _plain(send, 413, "413 Payload Too Large")
            return None
        form = parse_qs(body.decode("utf-8", "replace"))
        if not hmac.compare_digest((form.get("csrf") or [""])[0].encode(), self.csrf.encode()):
            await _plain(send, 403, "403 Forbidden: missing or wrong CSRF token (reload the page and try again)")
            return None
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def wrapped(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                msg = dict(msg)
                drop = {k for k, _ in HEADERS} | {b"access-control-allow-origin"}
                msg["headers"] = [(k, v) for k, v in msg.get("headers", []) if k.lower() not in drop] + HEADERS
            await send(msg)

        return wrapped
