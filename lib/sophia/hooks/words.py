"""Words: stopwords, tokens and a crude stem for keyword matching in hooks. Stdlib only, import-cheap."""

from __future__ import annotations

import re

_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing done down during each few for from further get got had has
have having he her here hers him his how i if in into is it its itself just let lets like make me more most
my need no nor not now of off on once only or other our ours out over own please same she should so some
such than that the their theirs them then there these they this those through to too under until up use
used using very was we were what when where which while who whom why will with would you your yours yes
file files can't don't won't i'm it's that's there's let's want help thing things something way also
last time again still
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_+#-]{1,}")


def stem(word: str) -> str:
    """deploy/deploying/deployment -> deploy; tests -> test; migrate/migration -> migrat."""
    w = word
    if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w[:6]


def tokens(text: str) -> set[str]:
    return {t for t in _TOKEN.findall((text or "").lower()) if len(t) >= 3 and t not in STOPWORDS}


def stems(text: str) -> set[str]:
    return {stem(t) for t in tokens(text)}
