"""Normalisation for write-screening: one canonical spelling per look-alike text.

Every rule of :mod:`memvault.domain.screening` runs over the output of :func:`fold`,
and the rule patterns themselves are written in (or passed through) the same fold, so
a rule written as ``instrucciones anteriores`` also sees ``ＩＮＳＴＲＵＣＣＩＯＮＥＳ
ａｎｔｅｒｉｏｒｅｓ`` or ``instruccio\u0301nes``. Pure: no I/O, no state.

What :func:`fold` does, in order:

1. Unicode tag characters (U+E0020-E007E, invisible "ASCII smuggling") become the
   ASCII letters they encode, so hidden text is screened like visible text.
2. NFKC: fullwidth and mathematical letters, ligatures, exotic spaces.
3. Invisible characters are removed (zero-width space/joiners, word joiner, BOM, soft
   hyphen, bidi controls, variation selectors, fillers); line breaks become ``\\n``.
4. Diacritics are removed (NFD, combining marks dropped, NFC) and a few letters that do
   not decompose are spelled plainly (``ł`` -> ``l``, ``đ`` -> ``d``, ``ø`` -> ``o``,
   ``ß`` -> ``ss``, dotless ``ı`` -> ``i``). Rules are accent-blind in every language.
5. Cyrillic and Greek letters that look like Latin ones are folded *within a word that
   mixes scripts*, towards the word's majority script: ``іgnоrе`` (Cyrillic і, о, е)
   reads ``ignore``, while Russian words stay Russian, and a Latin ``o`` slipped into
   a Russian word reads Cyrillic again.
6. Lower case.

Two more views exist for the obfuscations that change word shapes; the screen runs its
rules on them only when the folded text shows the obfuscation:

* :func:`leet_views`: in words that mix letters with ``0 1 3 4 5 7 8 9`` (and ``@``,
  ``$``), the digits read as letters (``1gn0r3`` -> ``ignore``). Same length as the folded text.
  ``1`` reads ``i`` in one view and ``l`` in the other (whose changed spans are only
  the words with a ``1``: the others read as in the first view).
* :func:`despaced_view`: runs of single letters (three or more somewhere in the text,
  then two too) split by single spaces,
  dots, dashes, underscores or stars (``i g n o r e``, ``i.g.n.o.r.e``) are joined;
  wider gaps stay word breaks. Returns the joined text and the joined runs (for the
  squashed-phrase rule, which needs no separators at all).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

__all__ = ["despaced_view", "fold", "fold_pair", "fold_pattern", "leet_views"]

_INVISIBLE: Final = (
    0x00AD,  # soft hyphen
    0x034F,  # combining grapheme joiner
    0x061C,  # arabic letter mark
    0x115F,
    0x1160,  # hangul fillers
    0x17B4,
    0x17B5,
    *range(0x180B, 0x180F),  # mongolian variation selectors and vowel separator
    *range(0x200B, 0x2010),  # zero-width space/non-joiner/joiner, LRM, RLM
    *range(0x202A, 0x202F),  # bidi embeddings and overrides
    *range(0x2060, 0x2065),  # word joiner, invisible operators
    *range(0x2066, 0x2070),  # bidi isolates, deprecated format characters
    0x3164,
    *range(0xFE00, 0xFE10),  # variation selectors
    0xFEFF,  # zero-width no-break space / BOM
    0xFFA0,
    *range(0xFFF9, 0xFFFC),  # interlinear annotation controls
    0xE0001,
    0xE007F,  # language tag, cancel tag
    *range(0x1D173, 0x1D17B),  # musical formatting controls
)
_LINE_BREAKS: Final = (0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029)
_TAG_MAP: Final = {cp: cp - 0xE0000 for cp in range(0xE0020, 0xE007F)}
# Letters with no decomposition that still carry a "plain" spelling.
_PLAIN: Final = {
    "\u0142": "l",
    "\u0141": "L",
    "\u0111": "d",
    "\u0110": "D",
    "\u00f8": "o",
    "\u00d8": "O",
    "\u00df": "ss",
    "\u1e9e": "SS",
    "\u0131": "i",
    "\u0127": "h",
    "\u0126": "H",
    "\u0167": "t",
    "\u0166": "T",
    "\u0180": "b",
    "\u01b6": "z",
    "\u0268": "i",
    "\u0269": "i",
    "\u026a": "i",
    "\u0261": "g",
    "\u0251": "a",
    "\u0250": "a",
    "\u0254": "o",
    "\u025b": "e",
}
_BASE_TRANSLATION: Final[dict[int, str | int | None]] = {
    **dict.fromkeys(_INVISIBLE),
    **dict.fromkeys(_LINE_BREAKS, ord("\n")),
    **{ord(k): v for k, v in _PLAIN.items()},
    0x1E9B: "s",
    # apostrophes: one spelling, so "qu’on" reads like "qu'on"
    0x2019: "'",
    0x2018: "'",
    0x02BC: "'",
    0xFF07: "'",
}
_ASCII_TRANSLATION: Final = {k: v for k, v in _BASE_TRANSLATION.items() if k < 0x80}

# Cyrillic and Greek letters (lower case, after NFKC and accent stripping) that render
# like a Latin letter, and the Latin letter they render like.
_CYR_LATIN: Final = {
    "\u0430": "a",
    "\u0432": "b",
    "\u0435": "e",
    "\u043a": "k",
    "\u043c": "m",
    "\u043d": "h",
    "\u043e": "o",
    "\u0440": "p",
    "\u0441": "c",
    "\u0442": "t",
    "\u0443": "y",
    "\u0445": "x",
    "\u0456": "i",
    "\u0458": "j",
    "\u0455": "s",
    "\u0501": "d",
    "\u04bb": "h",
    "\u04cf": "l",
    "\u051b": "q",
    "\u051d": "w",
    "\u0433": "r",
    "\u0438": "u",
    "\u043f": "n",
    "\u044c": "b",
}
_GREEK_LATIN: Final = {
    "\u03bf": "o",
    "\u03b1": "a",
    "\u03b9": "i",
    "\u03bd": "v",
    "\u03c1": "p",
    "\u03c5": "u",
    "\u03ba": "k",
    "\u03c4": "t",
    "\u03c7": "x",
    "\u03b5": "e",
    "\u03b7": "n",
    "\u03c9": "w",
    "\u03b2": "b",
    "\u03b3": "y",
    "\u03bc": "u",
}
_TO_LATIN: Final = str.maketrans({**_CYR_LATIN, **_GREEK_LATIN})
# The reverse, for a Cyrillic word with a Latin look-alike slipped in (one Latin
# letter may stand for only one Cyrillic letter here).
_LATIN_CYR: Final = str.maketrans(
    {
        "a": "\u0430",
        "e": "\u0435",
        "o": "\u043e",
        "p": "\u0440",
        "c": "\u0441",
        "y": "\u0443",
        "x": "\u0445",
        "k": "\u043a",
        "m": "\u043c",
        "t": "\u0442",
        "h": "\u043d",
        "b": "\u0432",
        "i": "\u0456",
    }
)
_MIXED_WORD_RE: Final = re.compile(
    r"(?<![^\W\d_])(?=[^\W\d_]*?[a-z])(?=[^\W\d_]*?[\u0370-\u03ff\u0400-\u052f])[^\W\d_]++"
)
_CYR_OR_GREEK_RE: Final = re.compile(r"[\u0370-\u03ff\u0400-\u052f]")
_LATIN_RE: Final = re.compile(r"[a-z]")


def _fold_mixed_word(m: re.Match[str]) -> str:
    return _fold_mixed_word_text(m.group())


def _fold_mixed_word_text(word: str) -> str:
    latin = len(_LATIN_RE.findall(word))
    if latin * 2 >= len(word):
        return word.translate(_TO_LATIN)
    as_cyrillic = word.translate(_LATIN_CYR)
    if _LATIN_RE.search(as_cyrillic) is not None:
        # a Latin letter without a Cyrillic look-alike ("аrе": the r) makes it a Latin
        # word with look-alikes slipped in, however many
        return word.translate(_TO_LATIN)
    return as_cyrillic


@functools.cache
def _combining_re() -> re.Pattern[str]:
    """Every combining mark (canonical combining class not 0), built once (~10 ms)."""
    # the Basic Multilingual Plane's: those above it (musical notation, a few historic
    # scripts) never carry an attack, and testing them would slow every character down
    marks = [cp for cp in range(0x0300, 0x10000) if unicodedata.combining(chr(cp))]
    return re.compile(_char_class(marks) + "++")


def _strip_marks(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    marks = _combining_re()
    if marks.search(decomposed) is None:
        return text  # no accents, harakat, dakuten...: nothing to drop
    return unicodedata.normalize("NFC", marks.sub("", decomposed))


def _char_class(codepoints: list[int]) -> str:
    """Alternatives of ranges for these code points: the BMP ones in one class (the
    regex engine tests those with a bitmap), the others in another (tested one by one:
    a class that mixes them makes every character pay for the long list)."""
    parts = []
    for plane in (
        [cp for cp in codepoints if cp < 0x10000],
        [cp for cp in codepoints if cp >= 0x10000],
    ):
        ranges: list[tuple[int, int]] = []
        for cp in plane:
            if ranges and cp == ranges[-1][1] + 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
        if ranges:
            parts.append(
                "["
                + "".join(
                    re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                    for a, b in ranges
                )
                + "]"
            )
    return "(?:" + "|".join(parts) + ")"


_APOSTROPHES: Final = ("\u2019", "\u2018", "\u02bc", "\uff07")
# Characters the translation changes, apostrophes aside (those are replaced first):
# most notes hold none, and a search is far cheaper than a translation.
_SPECIAL_RE: Final = re.compile(
    _char_class([cp for cp in sorted(_BASE_TRANSLATION) if chr(cp) not in _APOSTROPHES])
)
_TAG_RE: Final = re.compile("[\U000e0000-\U000e007f]")


def fold_pair(text: str) -> tuple[str, str]:
    """(display, folded): the text before and after lower-casing and look-alike folding.

    Both have the same length whenever lower-casing keeps it (it nearly always does),
    so a span found in the folded text can be shown from the display text, in the
    writer's own capitals.
    """
    text = text.replace("\r\n", "\n")
    if text.isascii():
        if _SPECIAL_RE.search(text) is not None:
            text = text.translate(_ASCII_TRANSLATION)
        return text, text.lower()
    if _TAG_RE.search(text) is not None:
        text = text.translate(_TAG_MAP)
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    text = _strip_marks(text)
    for apostrophe in _APOSTROPHES:
        if apostrophe in text:
            text = text.replace(apostrophe, "'")
    if _SPECIAL_RE.search(text) is not None:
        # a substitution per special character: str.translate with a dict costs ~40 ms a
        # MB on non-ASCII text, however few characters it changes
        text = _SPECIAL_RE.sub(_special_replacement, text)
    folded = text.lower()
    if _CYR_OR_GREEK_RE.search(folded) is not None and _LATIN_RE.search(folded) is not None:
        folded = _fold_mixed_words(folded)
    return text, folded


def _special_replacement(m: re.Match[str]) -> str:
    replacement = _BASE_TRANSLATION[ord(m.group())]
    return (
        ""
        if replacement is None
        else chr(replacement)
        if isinstance(replacement, int)
        else replacement
    )


_LETTER_RE: Final = re.compile(r"[^\W\d_]")
_LETTERS_RE: Final = re.compile(r"[^\W\d_]*+")
_CYR_OR_GREEK_RUN_RE: Final = re.compile(r"[\u0370-\u03ff\u0400-\u052f]++")


def _letters_end(text: str, at: int) -> int:
    m = _LETTERS_RE.match(text, at)  # a star: it always matches
    return at if m is None else m.end()


def _fold_mixed_words(folded: str) -> str:
    """``_MIXED_WORD_RE.sub(_fold_mixed_word, folded)``, visiting only the words that hold
    a Cyrillic or Greek letter (the regex's look-aheads cost ~40 ms a MB everywhere)."""
    pieces: list[str] = []
    pos = 0  # copied up to here
    seen = 0  # words looked at up to here
    size = len(folded)
    backwards = ""
    for run in _CYR_OR_GREEK_RUN_RE.finditer(folded):
        a, b = run.span()
        if a < seen:
            continue  # in the word just looked at
        letter_before = a > 0 and _LETTER_RE.match(folded, a - 1) is not None
        letter_after = b < size and _LETTER_RE.match(folded, b) is not None
        if not letter_before and not letter_after:
            continue  # the word is this run alone: no Latin letter in it
        if letter_before:
            if not backwards:
                backwards = folded[::-1]
            a = size - _letters_end(backwards, size - a)
        if letter_after:
            b = _letters_end(folded, b)
        seen = b
        word = folded[a:b]
        if _LATIN_RE.search(word) is not None:
            pieces.append(folded[pos:a])
            pieces.append(_fold_mixed_word_text(word))
            pos = b
    if not pieces:
        return folded
    pieces.append(folded[pos:])
    return "".join(pieces)


def fold(text: str) -> str:
    """The canonical form every screening rule reads (see the module docstring)."""
    return fold_pair(text)[1]


def fold_pattern(pattern: str) -> str:
    """A rule pattern written in natural spelling, folded as :func:`fold` folds text.

    Accents are dropped and letters lower-cased; regex syntax is left alone (a rule
    written with accents would otherwise never match folded text).
    """
    if pattern.isascii():
        return pattern
    return _strip_marks(unicodedata.normalize("NFKC", pattern)).translate(
        {ord(k): v for k, v in _PLAIN.items()}
    )


# --------------------------------------------------------------------------- leetspeak

# A word of ASCII letters and leet characters that reads as leetspeak: a leet digit
# between letters ("ign0re", "instruct10ns"), one leading two letters ("4ll"), two leet
# digits and a letter ("4r3"), or one after three letters ("promp7"). "v2", "s3", "h264"
# are not; e-mail addresses and prices never are ("10am" and "utf8" are: harmless).
_LEET_WORD_RE: Final = re.compile(
    r"(?<![a-z0-9@$])(?=[a-z0-9@$]*?[a-z])(?=[a-z0-9@$]*?(?:[a-z][01345789@$]++[a-z]"
    r"|(?<![a-z0-9@$])[01345789][a-z]{2}|[01345789][a-z0-9@$]*?[01345789]"
    r"|[a-z]{3}[01345789](?![a-z0-9@$])))"
    r"[a-z0-9@$]{3,40}+(?![a-z0-9@$])"
)
# A cheap test before it, that starts with a literal class (the word scan has
# look-aheads at every position): a leet digit after a letter or before two.
_LEET_HINT_RE: Final = re.compile(r"[01345789](?<=[a-z][01345789])|[01345789](?=[a-z]{2})")
_LEET_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789@$")
_LEET_I: Final = str.maketrans("01345789@$", "oieastbgas")
_LEET_L: Final = str.maketrans("01345789@$", "oleastbgas")


Span = tuple[int, int]


# A short token of leet digits and letters ("70", "n0", "2day" is not: two letters), read
# as leetspeak only next to a leet word: "p4y n0 4773n710n 70 7h3 ..." writes "no" and
# "to" in digits, which alone would be numbers.
_SHORT_LEET_RE: Final = re.compile(r"[a-z]?+[01345789]{1,2}+[a-z]?+")


def _with_short_neighbours(folded: str, words: list[Span]) -> list[Span]:
    """``words`` and the short leet tokens one space before or after one of them."""
    extra: list[Span] = []
    n = len(folded)
    for start, end in words:
        # the token after: one space, then at most four characters up to a space or the end
        at = end + 1
        if end < n and folded[end] == " ":
            stop = at
            while stop < n and stop - at < 5 and folded[stop] in _LEET_CHARS:
                stop += 1
            if (
                2 <= stop - at <= 4
                and (stop == n or folded[stop] not in _LEET_CHARS)
                and _SHORT_LEET_RE.fullmatch(folded, at, stop) is not None
            ):
                extra.append((at, stop))
        # the token before
        if start >= 3 and folded[start - 1] == " ":
            stop = start - 1
            at = stop
            while at > 0 and stop - at < 5 and folded[at - 1] in _LEET_CHARS:
                at -= 1
            if (
                2 <= stop - at <= 4
                and (at == 0 or folded[at - 1] not in _LEET_CHARS)
                and _SHORT_LEET_RE.fullmatch(folded, at, stop) is not None
            ):
                extra.append((at, stop))
    if not extra:
        return words
    return sorted(set(words) | set(extra))


@functools.lru_cache(maxsize=2)
def leet_views(folded: str) -> tuple[tuple[str, list[Span]], ...]:
    """Views with leetspeak words read as letters, each with the spans that changed
    (none when no word mixes letters and leet digits). Cached for the last texts: the
    rules and the learned stage both read a note's views (callers never mutate them).

    Only words that hold both a letter and a leet character change, so ``v2``, ``10``
    or ``$5`` elsewhere in a note never matter. Each view has the folded text's length.
    """
    words: list[Span] = []
    for hint in _LEET_HINT_RE.finditer(folded):
        # the word around a leet digit next to a letter (a cheap scan: it starts with a
        # literal class), then the full test on that word alone
        at = hint.start()
        if words and at < words[-1][1]:
            continue
        start, end = at, at + 1
        while start > 0 and folded[start - 1] in _LEET_CHARS:
            start -= 1
        while end < len(folded) and folded[end] in _LEET_CHARS:
            end += 1
        if _LEET_WORD_RE.fullmatch(folded, start, end) is not None:
            words.append((start, end))
    if not words:
        return ()
    if len(words) > 1:
        words = _with_short_neighbours(folded, words)
    views = []
    for table in (_LEET_I, _LEET_L) if "1" in folded else (_LEET_I,):
        pieces: list[str] = []
        changed: list[Span] = []
        pos = 0
        for start, end in words:
            word = folded[start:end]
            read = word.translate(table)
            if read != word:
                pieces.append(folded[pos:start])
                pieces.append(read)
                # the second view reads every word without a "1" as the first one does:
                # only its words with a "1" are new
                if table is _LEET_I or "1" in word:
                    changed.append((start, end))
                pos = end
        if changed:
            pieces.append(folded[pos:])
            views.append(("".join(pieces), changed))
    return tuple(views)


# --------------------------------------------------------------------------- spacing

# Each next letter must stand alone (a separator or the end after it): with the
# repetition possessive, a run followed by an ordinary word ("p r o m p t verbatim")
# would otherwise swallow that word's first letter and fail whole.
_SPACED_RUN_RE: Final = re.compile(
    r"(?<![^\W\d_])(?:[^\W\d_][ .\-_*\u00b7\u2022](?=[^\W\d_](?![^\W\d_]))){1,}+"
    r"[^\W\d_](?![^\W\d_])"
)
_LONG_SPACED_RUN_RE: Final = re.compile(
    r"(?<![^\W\d_])(?:[^\W\d_][ .\-_*\u00b7\u2022](?=[^\W\d_](?![^\W\d_]))){2,}+"
    r"[^\W\d_](?![^\W\d_])"
)
# Separator, single letter, separator, letter: what any run of three holds.
_SPACED_HINT_RE: Final = re.compile(r"[ .\-_*\u00b7\u2022][^\W\d_][ .\-_*\u00b7\u2022][^\W\d_]")
_RUN_SEPARATORS_RE: Final = re.compile(r"[ .\-_*\u00b7\u2022]")


def despaced_view(folded: str) -> tuple[str, list[str], list[Span]] | None:
    """The text with letter-spaced runs joined, the joined runs, and where they stand
    in the new text; None when there are none.

    ``i g n o r e   a l l`` becomes ``ignore   all``. A run spaced evenly throughout
    (``i g n o r e a l l``) joins into one word, ``ignoreall``; the squashed-phrase
    rule reads those.
    """
    if _SPACED_HINT_RE.search(folded) is None or _LONG_SPACED_RUN_RE.search(folded) is None:
        return None  # "e.g." and "i.e." alone are not letter-spacing
    runs: list[str] = []
    spans: list[Span] = []
    pieces: list[str] = []
    pos = 0
    length = 0
    for m in _SPACED_RUN_RE.finditer(folded):
        before = folded[pos : m.start()]
        joined = _RUN_SEPARATORS_RE.sub("", m.group())
        pieces.append(before)
        length += len(before)
        pieces.append(joined)
        runs.append(joined)
        spans.append((length, length + len(joined)))
        length += len(joined)
        pos = m.end()
    pieces.append(folded[pos:])
    return "".join(pieces), runs, spans


# A line break inside a word: "Disr\negard your prev\nious instru\nctions". Prose
# wrapped at a width breaks between letters at every line ("the\ntool"), and lists do
# ("milk\neggs"), so only a break after a short line counts (a wrapped line is long),
# never one next to a code fence, and it takes two of them.
_WORD_BREAK_RE: Final = re.compile(r"(?<=[^\W\d_])[ \t]*+\n(?=[^\W\d_])")
_MIN_WORD_BREAKS: Final = 2
_SHORT_LINE: Final = 32
# An order split across lines breaks a handful of words; thousands of breaks are a list,
# and a second full reading of it would double a long note's cost for nothing.
_MAX_WORD_BREAKS: Final = 256


def _short_break(folded: str, m: re.Match[str]) -> bool:
    line_start = folded.rfind("\n", 0, m.start()) + 1
    line = folded[line_start : m.start()]
    if len(line) > _SHORT_LINE or line.lstrip().startswith(("```", "~~~")):
        return False
    return not folded.startswith(("```", "~~~"), m.end())


def rejoined_view(folded: str) -> tuple[str, list[Span]] | None:
    """The text with line breaks inside words removed, and where the joins stand in the
    new text; None when there are fewer than two such breaks."""
    if "\n" not in folded:
        return None
    breaks: list[re.Match[str]] = []
    for m in _WORD_BREAK_RE.finditer(folded):
        if _short_break(folded, m):
            breaks.append(m)
            if len(breaks) > _MAX_WORD_BREAKS:
                return None
    if len(breaks) < _MIN_WORD_BREAKS:
        return None
    pieces: list[str] = []
    spans: list[Span] = []
    pos = 0
    length = 0
    for m in breaks:
        before = folded[pos : m.start()]
        pieces.append(before)
        length += len(before)
        spans.append((max(0, length - 1), length + 1))
        pos = m.end()
    pieces.append(folded[pos:])
    return "".join(pieces), spans
