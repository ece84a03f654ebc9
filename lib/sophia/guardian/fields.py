"""Brace expansion and word splitting: the words one shell word becomes.

Standard library only. The analyzer expands a command word with the characters that can make it
several words marked (an unquoted ``{``, ``,``, ``}``, and the blanks inside the value of an unquoted
``$VAR`` or ``$(...)``); :func:`split` then makes the words bash would: ``/tmp/{a,../home}`` is
``/tmp/a /tmp/../home``, ``{1..3}`` is ``1 2 3``, ``X="-rf /"; rm $X`` passes ``-rf`` and ``/``.
Braces without a comma or a sequence (``{}``, ``@{u}``) stay as they are.
"""

from __future__ import annotations

from .lazyre import LazyRe

OPEN, _COMMA, _CLOSE, BLANK = "\x02", "\x03", "\x04", "\x05"
_OPEN, _BLANK = OPEN, BLANK
_BRACES = str.maketrans({"{": _OPEN, ",": _COMMA, "}": _CLOSE})
_PLAIN = str.maketrans({_OPEN: "{", _COMMA: ",", _CLOSE: "}"})
_BLANKS = str.maketrans({" ": _BLANK, "\t": _BLANK, "\n": _BLANK})
MAX_WORDS = 64
_SEQ = LazyRe(r"^(-?[0-9]+|[A-Za-z])\.\.(-?[0-9]+|[A-Za-z])(?:\.\.(-?[0-9]+))?$")


def mark_braces(text: str) -> str:
    """Unquoted literal text: mark the characters brace expansion reads."""
    return text.translate(_BRACES) if "{" in text else text


def mark_blanks(value: str) -> str:
    """The value of an unquoted expansion: mark the blanks where it splits."""
    return value.translate(_BLANKS)


def split(value: str) -> list[str]:
    """The words a marked value becomes (at least one)."""
    words = _expand(value, 0) if _OPEN in value else [value]
    out: list[str] = []
    for w in words:
        parts = w.split(_BLANK) if _BLANK in w else [w]
        out += [p.translate(_PLAIN) for p in parts if p or len(parts) == 1]
    return out[:MAX_WORDS] or [""]


def _expand(s: str, depth: int) -> list[str]:
    """Brace expansion of the first expandable ``{...}`` (then of the results), left to right."""
    i = s.find(_OPEN)
    while i >= 0 and depth < 8:
        j, commas = _close(s, i)
        if j > 0:
            body = s[i + 1:j]
            alts = _alternatives(body, commas, i)
            if alts is not None:
                out: list[str] = []
                for alt in alts:
                    out += _expand(s[:i] + alt + s[j + 1:], depth + 1)
                    if len(out) >= MAX_WORDS:
                        break
                return out[:MAX_WORDS]
        i = s.find(_OPEN, i + 1)
    return [s]


def _close(s: str, i: int) -> tuple[int, list[int]]:
    """The index of the ``}`` matching the ``{`` at ``i`` (-1 if none) and its top-level commas."""
    depth = 0
    commas: list[int] = []
    for k in range(i, len(s)):
        c = s[k]
        if c == _OPEN:
            depth += 1
        elif c == _CLOSE:
            depth -= 1
            if depth == 0:
                return k, commas
        elif c == _COMMA and depth == 1:
            commas.append(k)
    return -1, commas


def _alternatives(body: str, commas: list[int], start: int) -> list[str] | None:
    """``a,b,c`` or a sequence ``1..5`` / ``a..e`` (None: not a brace expansion)."""
    if commas:
        cuts = [start, *commas, start + len(body) + 1]
        return [body[cuts[k] - start:cuts[k + 1] - start - 1] for k in range(len(cuts) - 1)]
    m = _SEQ.match(body.translate(_PLAIN))
    if not m:
        return None
    a, b, step = m.group(1), m.group(2), abs(int(m.group(3) or 1)) or 1
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
        lo, hi = int(a), int(b)
        rng = range(lo, hi + (1 if hi >= lo else -1), step if hi >= lo else -step)
        return [str(n) for n in list(rng)[:MAX_WORDS]]
    if a.isalpha() and b.isalpha():
        lo, hi = ord(a), ord(b)
        rng = range(lo, hi + (1 if hi >= lo else -1), step if hi >= lo else -step)
        return [chr(n) for n in list(rng)[:MAX_WORDS]]
    return None
