"""``s3 version``, ``s3 status`` and ``s3 list KIND`` without typer, rich or pydantic (issue 30: slash commands and the
subagents run them through Bash on every use; typer alone costs several times a bare ``python -c pass``).

``answer(argv)`` prints what the typer command would and returns its exit status, or returns None having
printed nothing: for ``--help``, an option or argument it does not know, a kind it does not list here,
or an error (the typer path then runs and says it exactly as it always has). Standard library only.
"""

from __future__ import annotations

from .plain import dumps, print_lines, rich_reads

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any


def answer(argv: list[str]) -> int | None:
    """The exit status of ``s3 <argv>`` answered here, or None (nothing printed) for the typer path."""
    words = [a for a in argv if a != "--json"]
    if len(argv) - len(words) > 1 or any(w.startswith("-") for w in words):
        return None  # --help, -h, an unknown option, --json twice: typer says it
    json_out = len(words) < len(argv)
    if words == ["version"]:
        return _version(json_out)
    if words == ["status"]:
        return _status(json_out)
    if len(words) == 2 and words[0] == "list":
        return _list(words[1], json_out)
    return None


def _version(json_out: bool) -> int:
    from .. import __version__

    _write(dumps({"version": __version__}) if json_out else f"s3 (Sophia System 3) {__version__}\n")
    return 0


def _status(json_out: bool) -> int | None:
    """``s3 status`` when each state file is as a status checked it or passes its schema's check now
    (``status_stamp``, ``status_check``); its text
    only where rich prints it plainly (not to a terminal: rich makes the headers bold there)."""
    import os
    import sys

    from .. import paths
    from .status_stamp import cached
    from .status_view import collect, lines

    if not json_out and (sys.stdout.isatty() or os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE")):
        return None
    home = paths.sophia_home()
    known = cached(home) if home.is_dir() else None
    if known is None:
        return None
    try:
        data = collect(home, *known)
    except Exception:  # noqa: BLE001 - an unreadable store: the typer path names it as it always has
        return None
    if json_out:
        _write(dumps(data))
        return 0
    shown = lines(data)
    if any(kind == "table" for kind, _ in shown):
        return None  # the capabilities table: rich draws it
    for kind, text in shown:
        if kind == "h":
            print_lines([text.replace("[bold]", "").replace("[/bold]", "")], markup=False)
        else:
            print_lines([text], markup=kind == "m")
    return 0


def _list(word: str, json_out: bool) -> int | None:
    """``s3 list WORD`` for a kind whose items print as its own lines (rules, episodes, facts...); the rules' output
    as the last list kept it when their file and our code are as they were then (``list_cache``)."""
    from .. import kinds

    kind = kinds.by_plural(word)
    if kind is None or word not in kinds.list_words() or kind.store == "team":
        return None  # gaps, conflicts, sources (pydantic, other lines), team (refreshed first), unknown words
    kept_by: tuple[Any, Any, str] | None = None  # (home, rules file, key) when the output may be kept
    if kind.store == "rules":
        from .. import paths
        from . import list_cache

        home = paths.sophia_home()
        source = paths.rules_path(home)
        made_under = list_cache.key(source)
        if made_under is not None:
            kept = list_cache.read(home, word, json_out, made_under)
            if kept is not None:
                _write(kept)
                return 0
            kept_by = (home, source, made_under)
    try:
        items: list[Any] = _load(word, kind.store)
    except Exception:  # noqa: BLE001 - an unreadable store: the typer path names it as it always has
        return None
    text = _listed(word, kind, items, json_out)
    if text is None:
        return None
    _write(text)
    if kept_by is not None and text:
        from . import list_cache

        list_cache.keep(kept_by[0], word, json_out, kept_by[2], kept_by[1], text)
    return 0


def _listed(word: str, kind: Any, items: list[Any], json_out: bool) -> str | None:
    """The output of ``s3 list WORD``: its JSON, its text when rich would print it as it is, else "" having printed
    it through rich (``plain.print_lines``), or None for the typer path (an item that is no object)."""
    if json_out:
        return dumps(items)
    if not all(isinstance(it, dict) for it in items):
        return None
    head, lines = [f"## {word.capitalize()}: {len(items)}", ""], [kind.line(it) for it in items]
    text = "".join(line + "\n" for line in lines)
    if not rich_reads(head[0]) and not rich_reads(text, markup=False):
        return head[0] + "\n\n" + text
    print_lines(head)
    print_lines(lines, markup=False)
    return ""


def _load(word: str, store: str) -> list[Any]:
    """What ``memory.manage.list_kind`` lists; the rules straight from their module (manage brings sqlite3,
    redaction and the index writers, which a list does not use)."""
    if store == "rules":
        from ..memory.rules import load_rules

        return load_rules()
    from ..memory.manage import list_kind

    return list_kind(word)


def _write(text: str) -> None:
    import sys

    sys.stdout.write(text)
