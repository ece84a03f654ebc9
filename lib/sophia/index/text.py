"""Text analysis for the keyword tier: tokenizer, English stopwords and the Snowball (Porter2)
English stemmer. Standard library only (hooks import it).

Items are indexed as pre-stemmed text (``terms``) in an FTS5 table with the plain ``unicode61``
tokenizer, so the same analysis runs at index and at query time, and the Python side can
compute its own BM25 with tuned parameters over the candidates FTS5 returns.

Scripts written without spaces between words (Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer,
Myanmar) become overlapping character bigrams ("数据库" -> "数据", "据库"; a lone character stays a
unigram), the usual CJK approach of search engines, so a prompt written entirely in Chinese or
Japanese finds the memory written in it. ``ANALYZER_VERSION`` names this analysis; the index
re-analyses stored items when it changes (``index.db`` migration ``m004_cjk_bigrams``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Word characters without the underscore: matches what FTS5's unicode61 treats as token characters
# closely enough (letters and digits), so the stored terms re-tokenize to the same tokens.
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

# English stopwords: the NLTK list (179 words; the bm25s baseline used a 33-word list, and dropping
# question words such as "what", "when", "did" is worth ~3.6 points R@10 on the LoCoMo dev split).
_STOPWORDS_TEXT = """
a about above after again against ain all am an and any are aren aren't as at be because been before
being below between both but by can couldn couldn't d did didn didn't do does doesn doesn't doing don
don't down during each few for from further had hadn hadn't has hasn hasn't have haven haven't having he
her here hers herself him himself his how i if in into is isn isn't it it's its itself just ll m ma me
mightn mightn't more most mustn mustn't my myself needn needn't no nor not now o of off on once only or
other our ours ourselves out over own re s same shan shan't she she's should should've shouldn shouldn't
so some such t than that that'll the their theirs them themselves then there these they this those
through to too under until up ve very was wasn wasn't we were weren weren't what when where which while
who whom why will with won won't wouldn wouldn't y you you'd you'll you're you've your yours yourself
yourselves
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

# Words a prompt uses to talk about the work rather than name it ("like last time", "please help", "get
# the file"): indexed and ranked like any word, but the relevance gate (search.coverage) counts them only
# when an item has them. ``FILLER`` holds their stems (defined after the stemmer, at the end).
_FILLER_TEXT = """
also could done file files get got help last let like make need please something still thing things time use
used using want way would yes
"""

# Words that carry no topic in a coding prompt: any project's prompt may use them, so they say what to do
# or how it went, not what about. Three classes: what is done to code (fix, add, change, run, check...),
# how it went (error, fail, issue, problem, bug, wrong, work as in "it doesn't work") and what every
# project has (code, test, build, line, command, function...). The list: the words of these classes that
# the 288 prompts of twelve projects in shared/data/transcripts use in two or more projects (code, run and
# new in eight, fix, add and change in six), with their other forms. Ranked like any word; the relevance
# gate (search.coverage) counts them beside a topic word, never alone: on a small store they are rare,
# hence heavy, and "fix the failing pnpm build" lifted three unrelated error -> fix procedures on "fix"
# and "fail" alone. ``GENERIC`` holds their stems (defined after the stemmer, at the end).
_GENERIC_TEXT = """
actually add build built bug change check code command continue create current delete error fail failure
find fix function go good handle implement issue keep line look move new ok okay output problem project
remove repo result review right run script see set show start step sure test try update verify work
write wrong
"""


ANALYZER_VERSION = 2  # 2: bigrams for scripts without spaces

# Scripts written without spaces between words: Thai, Lao, Myanmar, Hangul Jamo, Khmer, CJK radicals to
# Yi (kana, Han, bopomofo...), Hangul syllables, CJK compatibility ideographs, half-width kana, Han ext.
_UNSPACED = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1100, 0x11FF), (0x1780, 0x17FF), (0x2E80, 0xA4CF),
             (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF66, 0xFFDC), (0x20000, 0x3FFFF))


@lru_cache(maxsize=1)
def _unspaced_run() -> re.Pattern[str]:
    """Runs of unspaced characters (compiled on first use: ~3 ms, which an ASCII-only hook never pays)."""
    return re.compile("([" + "".join(f"{chr(a)}-{chr(b)}" for a, b in _UNSPACED) + "]+)")


def unspaced(c: str) -> bool:
    o = ord(c)
    return any(a <= o <= b for a, b in _UNSPACED)


def _fold(text: str) -> str:
    """Lowercase, compatibility forms unified (full-width Ａ -> a) and diacritics stripped (é -> e), so
    'Café' and 'cafe' match; marks on unspaced scripts are kept (が stays が, Hangul stays whole)."""
    t = text.lower()
    if t.isascii():
        return t
    out = []
    keep_marks = False
    for c in unicodedata.normalize("NFD", unicodedata.normalize("NFKC", t)):
        if unicodedata.combining(c):
            if keep_marks:
                out.append(c)
            continue
        keep_marks = ord(c) >= 0x2E80 and unspaced(c)  # kana, Han; Thai & co. lose their marks (as FTS5 does)
        out.append(c)
    return unicodedata.normalize("NFC", "".join(out))


def _split(word: str) -> list[str]:
    """One word token: unspaced runs as character bigrams (a lone character as itself), the rest as is."""
    if word.isascii() or not any(unspaced(c) for c in word):
        return [word] if len(word) >= 2 else []
    out: list[str] = []
    for n, part in enumerate(_unspaced_run().split(word)):
        if n % 2 == 0:  # between runs: letters and digits of spaced scripts
            if len(part) >= 2:
                out.append(part)
        elif len(part) == 1:
            out.append(part)
        else:
            out.extend(part[i:i + 2] for i in range(len(part) - 1))
    return out


def tokens(text: str) -> list[str]:
    """Lowercased word tokens of two or more characters, unspaced scripts as bigrams (no stemming,
    stopwords kept)."""
    out: list[str] = []
    for w in _TOKEN.findall(_fold(text)):
        out.extend(_split(w))
    return out


def analyze(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Tokens -> stopwords removed -> stemmed. Used for documents and queries alike."""
    out = []
    for t in tokens(text):
        if not keep_stopwords and t in STOPWORDS:
            continue
        out.append(t if unspaced(t[0]) else stem(t))
    return out


# ---------------------------------------------------------------- Snowball English (Porter2)

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_LI_ENDING = frozenset("cdeghkmnrt")
_EXCEPTIONS = {
    "skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "idly": "idl",
    "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl",
    "sky": "sky", "news": "news", "howe": "howe", "atlas": "atlas", "cosmos": "cosmos", "bias": "bias",
    "andes": "andes",
}
_EXCEPTIONS_1A = frozenset(
    ("inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed", "evening"))
_STEP2 = (
    ("ization", "ize"), ("ational", "ate"), ("fulness", "ful"), ("ousness", "ous"), ("iveness", "ive"),
    ("tional", "tion"), ("biliti", "ble"), ("lessli", "less"), ("entli", "ent"), ("ation", "ate"),
    ("alism", "al"), ("aliti", "al"), ("ousli", "ous"), ("iviti", "ive"), ("fulli", "ful"), ("enci", "ence"),
    ("anci", "ance"), ("abli", "able"), ("izer", "ize"), ("ator", "ate"), ("alli", "al"), ("bli", "ble"),
    ("ogi", "og"), ("li", ""),
)
_STEP3 = (
    ("ational", "ate"), ("tional", "tion"), ("alize", "al"), ("icate", "ic"), ("iciti", "ic"),
    ("ative", ""), ("ical", "ic"), ("ness", ""), ("ful", ""),
)
_STEP4 = (
    "ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti", "ous", "ive", "ize",
    "ion", "al", "er", "ic",
)


def _regions(word: str) -> tuple[int, int]:
    n = len(word)

    def after_vc(start: int) -> int:
        i = start
        while i < n - 1:
            if word[i] in _VOWELS and word[i + 1] not in _VOWELS:
                return i + 2
            i += 1
        return n

    r1 = None
    for prefix in ("gener", "commun", "arsen", "past", "univers", "later", "emerg", "organ"):
        if word.startswith(prefix):
            r1 = len(prefix)
            break
    if r1 is None:
        r1 = after_vc(0)
    r2 = after_vc(r1)
    return r1, r2


def _short_syllable_at_end(w: str) -> bool:
    n = len(w)
    if n == 2:
        return w[0] in _VOWELS and w[1] not in _VOWELS
    if n >= 3:
        return (w[-3] not in _VOWELS and w[-2] in _VOWELS and w[-1] not in _VOWELS
                and w[-1] not in "wxY")
    return False


def _is_short(w: str, r1: int) -> bool:
    return r1 >= len(w) and _short_syllable_at_end(w)


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball English stemmer (Porter2) for one lowercased token."""
    if len(word) <= 2 or not word.isalpha():
        return word
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    w = word.lstrip("'")
    if not w:
        return word
    w = _mark_consonant_y(w)
    r1, r2 = _regions(w)
    w = _step1a(_step0(w))
    if w in _EXCEPTIONS_1A:
        return w
    w = _step1c(_step1b(w, r1))
    w = _step5(_step4(_step3(_step2(w, r1), r1, r2), r2), r1, r2)
    return w.replace("Y", "y")


def _mark_consonant_y(w: str) -> str:
    """A ``y`` at the start or after a vowel is a consonant: ``Y``."""
    chars = list(w)
    if chars[0] == "y":
        chars[0] = "Y"
    for i in range(1, len(chars)):
        if chars[i] == "y" and chars[i - 1] in _VOWELS:
            chars[i] = "Y"
    return "".join(chars)


def _step0(w: str) -> str:
    """Apostrophe endings: 's' 's '."""
    for suf in ("'s'", "'s", "'"):
        if w.endswith(suf):
            return w[: -len(suf)]
    return w


def _step1a(w: str) -> str:
    """Plurals: sses ied ies s."""
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("ied") or w.endswith("ies"):
        return w[:-2] if len(w) > 4 else w[:-1]
    if w.endswith("us") or w.endswith("ss"):
        return w
    if w.endswith("s") and len(w) >= 2 and _has_vowel(w[:-2]):
        return w[:-1]
    return w


def _step1b(w: str, r1: int) -> str:
    """eed(ly) in R1 becomes ee; ed(ly)/ing(ly) after a vowel go, then the stem is tidied."""
    for suf in ("eedly", "ingly", "edly", "eed", "ing", "ed"):
        if not w.endswith(suf):
            continue
        base = w[: -len(suf)]
        if suf in ("eed", "eedly"):
            return base + "ee" if len(base) >= r1 else w
        if not _has_vowel(base):
            return w
        if base.endswith(("at", "bl", "iz")):
            return base + "e"
        if base.endswith(_DOUBLES) and not (len(base) == 3 and base[0] in "aeo"):
            return base[:-1]
        if _is_short(base, r1):
            return base + "e"
        return base
    return w


def _step1c(w: str) -> str:
    """A final y/Y after a consonant (not the first letter) becomes i."""
    if len(w) > 2 and w[-1] in "yY" and w[-2] not in _VOWELS:
        return w[:-1] + "i"
    return w


def _step2(w: str, r1: int) -> str:
    """The longest of the step-2 suffixes, replaced when it is in R1 (ogi after l, li after a valid ending)."""
    for suf, rep in _STEP2:
        if not w.endswith(suf):
            continue
        if len(w) - len(suf) < r1:
            return w
        if suf == "ogi":
            return w[:-3] + rep if len(w) >= 4 and w[-4] == "l" else w
        if suf == "li":
            return w[:-2] if len(w) >= 3 and w[-3] in _LI_ENDING else w
        return w[: -len(suf)] + rep
    return w


def _step3(w: str, r1: int, r2: int) -> str:
    """The longest of the step-3 suffixes, replaced when it is in R1 (ative only in R2)."""
    for suf, rep in _STEP3:
        if not w.endswith(suf):
            continue
        if len(w) - len(suf) < r1:
            return w
        if suf == "ative":
            return w[:-5] if len(w) - len(suf) >= r2 else w
        return w[: -len(suf)] + rep
    return w


def _step4(w: str, r2: int) -> str:
    """The longest of the step-4 suffixes, removed when it is in R2 (ion only after s or t)."""
    for suf in _STEP4:
        if not w.endswith(suf):
            continue
        if len(w) - len(suf) < r2:
            return w
        if suf == "ion":
            return w[:-3] if len(w) >= 4 and w[-4] in "st" else w
        return w[: -len(suf)]
    return w


def _step5(w: str, r1: int, r2: int) -> str:
    """A final e in R2 (or in R1 after no short syllable) goes; a final ll in R2 becomes l."""
    if w.endswith("e"):
        if len(w) - 1 >= r2 or (len(w) - 1 >= r1 and not _short_syllable_at_end(w[:-1])):
            return w[:-1]
        return w
    if w.endswith("l") and len(w) - 1 >= r2 and len(w) >= 2 and w[-2] == "l":
        return w[:-1]
    return w


FILLER = frozenset(stem(w) for w in _FILLER_TEXT.split())
GENERIC = frozenset(stem(w) for w in _GENERIC_TEXT.split())


def topical(term: str) -> bool:
    """A term that can say what a prompt is about: neither a filler word nor a generic one. (A number is:
    an issue, a port or a version can be all a prompt and a memory share.)"""
    return term not in FILLER and term not in GENERIC
