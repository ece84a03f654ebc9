"""Tokenizer, stopwords and the Snowball English stemmer."""

from __future__ import annotations

from pathlib import Path

import pytest

from sophia.index.text import analyze, stem, tokens

# Reference outputs of the Snowball English stemmer (snowballstem.org vocabulary samples).
SNOWBALL = {
    "consign": "consign", "consigned": "consign", "consigning": "consign", "consignment": "consign",
    "consolation": "consol", "generously": "generous", "knightly": "knight", "painting": "paint",
    "paintings": "paint", "hiking": "hike", "hopping": "hop", "hoping": "hope", "happily": "happili",
    "relational": "relat", "conditional": "condit", "university": "universiti", "skies": "sky",
    "dying": "die", "news": "news", "cries": "cri", "ties": "tie", "caresses": "caress", "ponies": "poni",
    "added": "add", "organization": "organiz", "communication": "communic", "running": "run",
    "adoption": "adopt", "agreed": "agre", "feed": "feed", "luxuriating": "luxuri",
}


@pytest.mark.parametrize(("word", "expected"), sorted(SNOWBALL.items()))
def test_snowball_reference_words(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_matches_pystemmer_on_a_vocabulary() -> None:
    import Stemmer  # PyStemmer, a dev dependency: the C Snowball stemmer the own port must agree with
    st = Stemmer.Stemmer("english")
    words = set(tokens(Path(__file__).read_text(encoding="utf-8")))
    words |= {"meetings", "caroline", "melanie", "pottery", "camping", "adopted", "adoption", "transgender",
              "counseling", "psychology", "volunteering", "painted", "sunrise", "marathon", "beautifully"}
    mismatches = [(w, stem(w), st.stemWord(w)) for w in sorted(words) if w.isalpha() and stem(w) != st.stemWord(w)]
    assert mismatches == []


def test_analyze_drops_stopwords_folds_case_and_accents() -> None:
    assert analyze("What did Caroline paint in the Café?") == ["carolin", "paint", "cafe"]
    assert analyze('"AND( * OR') == []
    assert tokens("snake_case x a1") == ["snake", "case", "a1"]
