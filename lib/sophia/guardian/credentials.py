"""Whether reading a path discloses a credential: a credential store in a home, the machine's own
secrets, or a private key file anywhere. Used by Read / Grep / Glob (:mod:`.rules_tools`) and by shell
commands that print a file (``cat``, ``head``, ``grep`` ...).

A private key is told from a certificate or a public key by its name (``*.pub``, ``*.crt``,
``cert.pem``, ``fullchain.pem`` are public; ``*.key``, ``privkey.pem``, ``id_ed25519_work``, ``*.p12``
are not) and, where the file exists, by its first bytes: a PEM ``PRIVATE KEY`` block or a PuTTY key
file is private whatever its name, any other PEM block (a certificate, a public key, a request) is not.
At most 4 KB of one regular file is read, never a device, a pipe or anything larger than 1 MB.

Standard library only.
"""

from __future__ import annotations

import os
import re
import stat

from .lazyre import LazyRe

# credential stores under a home (relative paths; a directory covers what is inside)
HOME_CREDENTIALS = (
    ".ssh", ".aws/credentials", ".gnupg", ".password-store", ".local/share/keyrings", "Library/Keychains",
    ".netrc", ".git-credentials", ".docker/config.json", ".kube/config", ".config/gh/hosts.yml", ".pgpass",
    ".vault-token", ".config/gcloud", ".azure", ".npmrc", ".pypirc", ".cargo/credentials",
    ".cargo/credentials.toml", ".mozilla/firefox", ".config/google-chrome", ".config/chromium",
    ".config/BraveSoftware", "Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
    "Library/Cookies", ".thunderbird", ".config/op", ".1password", ".codex/auth.json",
)
# the machine's own secrets: TLS private keys, password hashes
SYSTEM_CREDENTIALS = ("/etc/ssl/private", "/etc/shadow", "/etc/gshadow", "/etc/master.passwd",
                      "/private/etc/master.passwd", "/etc/pki/tls/private")
# anywhere: private key and key-store files (public keys and known_hosts are not secret)
KEY_NAMES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".netrc", ".git-credentials", ".pgpass", "ssh_host_")
KEY_EXTS = ("kdbx", "p12", "pfx", "pkcs12", "keychain", "keychain-db", "jks", "keystore", "ppk", "p8", "key",
            "pem")
# files in a credential store that are public: public keys, known hosts, ssh's own client settings
_PUBLIC = LazyRe(r"(?:\.pub|/known_hosts[^/]*|/authorized_keys2?|/\.ssh/config|/\.ssh/config\.d/[^/]*|\.crt|\.cer|"
                 r"\.csr)$", re.I)
# a private key or key store by its name alone (the last part of the path)
_PRIVATE_NAME = LazyRe(
    r"^(?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:[._-][^/]*)?|ssh_host_\w+_key|\.netrc|\.git-credentials|\.pgpass|"
    r"[^/]*\.(?:kdbx|p12|pfx|pkcs12|keychain|keychain-db|jks|keystore|ppk|p8|key))$", re.I)
# ``id_`` and a name with no extension (``id_github``, ``id_work``): a key when its content says so
_ID_NAME = LazyRe(r"^id_[\w-]+$")
_WILD = LazyRe(r"[*?\[{]")
_HOMES = LazyRe(r"^(?:/home/[^/]+|/Users/[^/]+|/root|/var/root)(?=/|$)")
HEAD_BYTES = 4096
MAX_FILE = 1 << 20


def head(path: str, limit: int = HEAD_BYTES, max_size: int = MAX_FILE) -> bytes | None:
    """The first ``limit`` bytes of the regular file at ``path`` (None: not a regular file of at most
    ``max_size`` bytes, or unreadable). Never opens a device, a pipe or a socket."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_size:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        try:
            return os.read(fd, limit)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None


def key_content(path: str) -> bool | None:
    """True: the file holds a private key; False: it exists and holds a certificate, a public key or
    something that is no key at all (a Keynote deck named ``talk.key``); None: it cannot be told."""
    data = head(path)
    if data is None:
        return None
    if b"PRIVATE KEY" in data or data.startswith(b"PuTTY-User-Key-File"):
        return True
    if b"-----BEGIN " in data or data.startswith((b"ssh-", b"ecdsa-sha2-", b"sk-ssh-", b"sk-ecdsa-")):
        return False
    if data.startswith(b"PK\x03\x04") and path.lower().endswith(".key"):
        return False  # a zip archive: Keynote's file format, not a key
    return None


def _pem_private(base: str) -> bool:
    """A ``.pem`` by its name: a public key (``pubkey.pem``) or a certificate, chain or CA bundle
    (``fullchain.pem``, ``ca.pem``) is public; a key (``privkey.pem``, ``ca-key.pem``) or a name that says
    neither (``server.pem``) may hold a private key."""
    low = base.lower()
    if "pub" in low:
        return False
    if "key" in low or "priv" in low:
        return True
    return not re.search(r"cert|chain|bundle|trust|(?:^|[._-])(?:root)?ca(?:[._-]|$)", low)


def private_key(path: str) -> bool:
    """Whether ``path`` (absolute; maybe a glob pattern) names a private key or a key store. Only a
    file whose name makes it a candidate is opened."""
    base = path.rsplit("/", 1)[-1]
    wild = bool(_WILD.search(base))
    named = bool(_PRIVATE_NAME.match(base))
    pem = base.lower().endswith(".pem")
    ident = wild and base.startswith("id_") or bool(_ID_NAME.match(base))
    if not (named or pem or ident):
        return False
    if not wild:
        content = key_content(path)
        if content is not None:
            return content
    if named:
        return True
    if pem:
        return _pem_private(base)
    return wild


def _store(home: str, rel: str) -> str | None:
    """The credential store of a home that ``rel`` (a path relative to ``home``) lies in or holds."""
    hit = next((c for c in HOME_CREDENTIALS if rel == c or rel.startswith(c + "/")), None)
    if hit:
        return f"{home}/{hit}, a credential store" if rel == hit else f"{home}/{rel}, in {home}/{hit}, a credential store"
    inside = next((c for c in HOME_CREDENTIALS if rel and c.startswith(rel + "/")), None)
    if inside:
        return f"a folder holding {home}/{inside}, a credential store"
    return None


def stored(own_home: str, path: str) -> str | None:
    """Why ``path`` (absolute, normalised; a glob's fixed part) is a credential store or in one: of the
    user's home, of another home on the machine (``/root``, ``/home/<other>``), or of the machine."""
    if any(path == s or path.startswith(s + "/") for s in SYSTEM_CREDENTIALS):
        return f"{path}, where the machine keeps its private keys or password hashes"
    above = next((s for s in SYSTEM_CREDENTIALS if path.count("/") >= 2 and s.startswith(path + "/")), None)
    if above:
        return f"a folder holding {above}, where the machine keeps its private keys"
    m = _HOMES.match(path)
    for home in (own_home, m.group(0) if m else own_home):
        if path.startswith(home + "/"):
            why = _store("~" if home == own_home else home, path[len(home) + 1:])
            if why:
                return why
    return None


def why_secret(own_home: str, path: str) -> str | None:
    """Why reading ``path`` (absolute, normalised, maybe a glob) reaches a credential; None: it does not."""
    if _PUBLIC.search(path):
        return None
    m = _WILD.search(path)
    fixed = path[:m.start()].rstrip("/") if m else path
    why = stored(own_home, fixed or "/")
    if why:
        return why
    if private_key(path):
        return f"{path}, a private key or credential file"
    return None
