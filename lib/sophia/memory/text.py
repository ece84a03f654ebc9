"""Cheap text signals (standard library): tokens, content ids, similarity, negation."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter

_WORD = re.compile(r"[a-z0-9][a-z0-9'_\-]*")
STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "by", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "i", "you", "he", "she", "we", "they", "me", "my", "your", "our", "their", "his", "her", "them", "us", "do", "does", "did", "so", "if", "then", "than", "into", "about", "over", "after", "before", "when", "while", "can", "could", "should", "would", "will", "just", "also", "very", "there", "here", "what", "which", "who", "whom", "how", "why", "all", "any", "some", "each"]  # noqa: SIM905
)
NEGATIONS = frozenset(
    ["not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "can't", "won't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "shouldn't", "wouldn't", "couldn't", "without", "stopped", "quit", "dislikes", "hates", "avoid", "avoids"]  # noqa: SIM905
)


def tokens(text: str) -> list[str]:
    return _WORD.findall((text or "").lower().replace("\u2019", "'"))


def stem(word: str) -> str:
    for suf in ("ing", "ed", "es", "s"):
        if len(word) > len(suf) + 2 and word.endswith(suf):
            return word[: -len(suf)]
    return word


def content_terms(text: str) -> list[str]:
    """Tokens without stopwords or negations, lightly stemmed."""
    return [stem(t) for t in tokens(text) if t not in STOPWORDS and t not in NEGATIONS]


def negated(text: str) -> bool:
    return sum(1 for t in tokens(text) if t in NEGATIONS or t.endswith("n't")) % 2 == 1


def normalise(text: str) -> str:
    return " ".join(tokens(text))


def content_id(prefix: str, *parts: object) -> str:
    h = hashlib.sha256("\x1f".join(normalise(str(p)) if isinstance(p, str) else str(p) for p in parts)
                       .encode("utf-8")).hexdigest()
    return f"{prefix}{h[:12]}"


def jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def term_counts(text: str) -> Counter[str]:
    return Counter(content_terms(text))


def tf_cosine(a: dict[str, float] | Counter[str], b: dict[str, float] | Counter[str]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(v * b.get(k, 0.0) for k, v in a.items())
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


def vec_cosine(a: list[float], b: list[float]) -> float:
    if not a or not b or len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def near_duplicate(a: str, b: str, threshold: float = 0.8) -> bool:
    """Same meaning, lexically: content-term Jaccard >= threshold and the same negation parity."""
    if normalise(a) == normalise(b):
        return True
    if negated(a) != negated(b):
        return False
    return jaccard(set(content_terms(a)), set(content_terms(b))) >= threshold
