"""Typed errors. Standard library only (imported by hooks)."""

from __future__ import annotations

from pathlib import Path


class SophiaError(Exception):
    """Base class: a message meant for the user, never a traceback."""


class BadInput(SophiaError):
    """What the user gave cannot be taken (an unknown id, an over-long text): exit code 2."""

    exit_code = 2


class StateFileError(SophiaError):
    """A state file exists but cannot be parsed or does not match its schema."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class LockTimeout(SophiaError):
    """A lock could not be taken within its timeout."""

    def __init__(self, path: Path | str, timeout: float, holder: str = "") -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.holder = holder
        who = f" (held by {holder})" if holder else ""
        super().__init__(f"could not lock {self.path} within {timeout:g} s{who}")


class StateWriteError(SophiaError):
    """A state file could not be written (read-only or full disk, permissions)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"cannot write {self.path}: {reason}")
