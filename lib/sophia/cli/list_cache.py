"""What the last ``s3 list rules`` printed, kept so that the next one need not decode and render the rules again
(issue 30: 10,000 rules are a 3 MB file whose decoding alone took longer than the rest of the command).

The output (its text, or with ``--json`` its JSON) is kept in ``run/`` (``paths.list_output_path``) under a key:
the stamp of the rules file and the stamps of the modules that make the output (``CODE``). A later list whose
key is the same prints the kept output; any other key (the file replaced by a writer or edited by hand, the kit
upgraded or edited) lists from the file as before and keeps that output instead. Nothing is kept while the file
is within ``file_stamp.RACY_NS`` of its last change, nor an output rich would print otherwise (see
``plain.print_lines``), and the rules' writer removes what is kept (``memory.rules.update_rules``, under the
rules' lock, which the keeping takes too): a forgotten rule does not stay on disk here. Standard library only.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import paths
from ..file_stamp import racy, stamp

LIB = Path(__file__).resolve().parents[1]
# the modules whose code makes the output: the kind's line, plain text and JSON, this command, the rules' loader
CODE = ("kinds.py", "cli/plain.py", "cli/fast_cmds.py", "cli/list_cache.py", "memory/rules.py")
VERSION = 1


def key(source: Path) -> str | None:
    """The key of ``source``'s output now (one line), or None when a file it depends on is missing."""
    stamps = [stamp(source), *(stamp(LIB / c) for c in CODE)]
    if None in stamps:
        return None
    return json.dumps([VERSION, str(source), stamps])


def read(home: Path, word: str, json_out: bool, want: str) -> str | None:
    """The output kept for ``s3 list word``, when it was kept under the key ``want``; else None."""
    try:
        with open(paths.list_output_path(word, json_out, home), encoding="utf-8") as f:
            if f.readline() != want + "\n":
                return None
            return f.read()
    except (OSError, ValueError):  # none kept, unreadable, not UTF-8: list from the file
        return None


def keep(home: Path, word: str, json_out: bool, made_under: str, source: Path, text: str) -> None:
    """Keep ``text``, made from ``source`` while its key was ``made_under``, unless the file changed meanwhile or
    too recently to be told from a change in the same clock tick. Done under the source's write lock, taken
    without waiting (a writer holding it removes what is kept when it is done: nothing is kept then), so a
    writer's removal never comes before a keeping of the file it replaced. Never raises: a list never fails
    on its cache."""
    import os

    from ..atomic import write_bytes_atomic
    from ..locking import lock_path_for, try_flock

    try:
        fd = try_flock(lock_path_for(source))
        if fd is None:
            return
        try:
            if key(source) == made_under and not racy([stamp(source)]):
                write_bytes_atomic(paths.list_output_path(word, json_out, home),
                                   (made_under + "\n" + text).encode("utf-8"), durable=False)
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - a read-only or full home: the next list reads the file again
        return
