"""Regexes compiled on first use: most hook runs need only a few of them, and compiling them all
at import costs more than the analysis itself."""

from __future__ import annotations

import re


class LazyRe:
    __slots__ = ("_pat", "_flags", "_re")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pat = pattern
        self._flags = flags
        self._re: re.Pattern[str] | None = None

    def _get(self) -> re.Pattern[str]:
        if self._re is None:
            self._re = re.compile(self._pat, self._flags)
        return self._re

    def match(self, s: str) -> re.Match[str] | None:
        return self._get().match(s)

    def search(self, s: str) -> re.Match[str] | None:
        return self._get().search(s)

    def fullmatch(self, s: str) -> re.Match[str] | None:
        return self._get().fullmatch(s)

    def finditer(self, s: str):  # noqa: ANN201
        return self._get().finditer(s)

    def sub(self, repl, s: str) -> str:  # noqa: ANN001
        return self._get().sub(repl, s)

    def split(self, s: str) -> list[str]:
        return self._get().split(s)
