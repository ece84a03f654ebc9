"""A file's stamp (inode, size, mtime in ns) and how old a stamp must be to be trusted.

A derived answer kept beside a file (``s3 status``'s stamp, ``s3 list``'s kept output) stays good while the file
keeps its stamp: every write of a state file replaces it (a new inode) or changes its mtime. File times are
coarse, though: a second write of the same size in the same clock tick would keep the mtime, so a stamp taken
within ``RACY_NS`` of the file's last change is never recorded (as git treats a "racily clean" index entry).
Standard library only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

RACY_NS = 2_000_000_000


def stamp(path: Path | str | int) -> list[int] | None:
    """A file's (or an open file descriptor's) inode, size and mtime in ns; None when it is missing."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def racy(stamps: Iterable[list[int] | None]) -> bool:
    """Whether one of ``stamps`` was changed within ``RACY_NS`` of now (too recent to be recorded)."""
    import time

    recent = time.time_ns() - RACY_NS
    return any(s is not None and s[2] > recent for s in stamps)
