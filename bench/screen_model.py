"""An experiment, not part of memvault: a linear model over n-grams as the write
screen's third stage (ADR 0046, amended). Measured once on held-out sets 9 and 10 it
raised attacks refused from 56.8% to 77.0% but refused 102 of 128 LoCoMo notes, so it
lives here, beside the bench that measures it, and never in the shipped package.

The rules (ADR 0007) and the cues (ADR 0046) are lexicons; paraphrase defeats them. This
stage scores text with a logistic regression whose features are word uni- and bigrams
and character 3- to 5-grams of the screen's own normalisation
(:mod:`memvault.domain.screening_normalise`: case, homoglyphs, invisible characters,
leetspeak, letter spacing), so ``the guidance you started with is void`` shares
features with ``your original rules no longer count`` that no word list spelled out.

Pure: the weights come in as a :class:`LinearModel` (built by
``bench/train_screen_model.py`` into ``bench/data/screen_model.json``, read once by
:func:`load`; :func:`screen` runs the shipped screen and then this stage). Scoring is
linear in the text: every sentence, every pair of adjacent sentences and the whole
text are scored, and the highest score decides, so an order embedded in a long
ordinary note is scored on its own. A refusal names its top contributing n-grams.

Features (shared by training and scoring through :func:`segments` and
:func:`grams`): code is blanked first (code is a mention, as for the rules), the text
folded, leet digits read as letters, letter-spaced runs joined; then cut into
sentences; in each sentence, words (``\\w+``) and their adjacent pairs, and the
character n-grams of the sentence with single spaces, padded by a space. A window's
value is ``bias + sum(weights of its n-grams, counted) / sqrt(number of its n-grams + 32)``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memvault.domain.screening import ScreeningVerdict, screen_path, screen_text
from memvault.domain.screening_normalise import despaced_view, fold, leet_views

RULE_INJECTION_MODEL: Final = "injection_model"

__all__ = [
    "CHAR_SIZES",
    "SMOOTH",
    "LinearModel",
    "ModelHit",
    "grams",
    "model_check",
    "prepare",
    "segments",
]

CHAR_SIZES: Final = (3, 4, 5)

_FENCE_RE: Final = re.compile(
    r"^[ \t>]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t>]*\1[^\n]*$|\Z)", re.M | re.S
)
_INLINE_RE: Final = re.compile(r"(`+)[^`\n]+?\1")
_SENTENCE_RE: Final = re.compile(
    r"(?<=[.!?;:\u3002\uff01\uff1f\uff1b])\s+|\n+|(?<=[\u3002\uff01\uff1f])"
)
_WORD_RE: Final = re.compile(r"\w+")
_SPACES_RE: Final = re.compile(r"\s+")
#: added to a window's n-gram count before the square root: a two-word heading
#: cannot score like a paragraph (training scales its rows the same way)
SMOOTH: Final = 32


@dataclass(frozen=True, slots=True)
class LinearModel:
    """Weights of the n-grams that matter (the rest weigh 0), the bias and the
    threshold over which a window is refused."""

    char: Mapping[str, float]
    word: Mapping[str, float]
    bias: float
    threshold: float


@dataclass(frozen=True, slots=True)
class ModelHit:
    """A refused window: its score and probability, its text and its top n-grams."""

    score: float
    probability: float
    window: str
    top: tuple[str, ...]


def prepare(text: str, *, code_is_mention: bool = True) -> str:
    """The text the features are read from: code blanked, folded, leet and spaced
    letters read as words."""
    if code_is_mention and ("`" in text or "~~~" in text):
        text = _FENCE_RE.sub("\n", text)
        text = _INLINE_RE.sub(" ", text)
    folded = fold(text)
    views = leet_views(folded)
    if views:
        folded = views[0][0]
    spaced = despaced_view(folded)
    if spaced is not None:
        folded = spaced[0]
    return folded


def segments(prepared: str) -> list[str]:
    """The sentences of a prepared text, spaces collapsed (empty ones dropped)."""
    out = []
    for part in _SENTENCE_RE.split(prepared):
        flat = _SPACES_RE.sub(" ", part).strip()
        if flat:
            out.append(flat)
    return out


def grams(segment: str) -> Iterator[tuple[bool, str]]:
    """Every n-gram of one sentence, ``(is_char, gram)``, repeats included."""
    words = _WORD_RE.findall(segment)
    for i, w in enumerate(words):
        yield False, w
        if i:
            yield False, words[i - 1] + " " + w
    padded = " " + segment + " "
    n = len(padded)
    for size in CHAR_SIZES:
        for i in range(n - size + 1):
            yield True, padded[i : i + size]


def _score_segment(model: LinearModel, segment: str) -> tuple[float, int]:
    """The summed weights of one sentence's n-grams and how many there are."""
    char = model.char
    word = model.word
    total = 0.0
    count = 0
    words = _WORD_RE.findall(segment)
    get = word.get
    prev = ""
    for i, w in enumerate(words):
        total += get(w, 0.0)
        if i:
            total += get(prev + " " + w, 0.0)
        prev = w
    count += 2 * len(words) - 1 if words else 0
    padded = " " + segment + " "
    n = len(padded)
    cget = char.get
    for size in CHAR_SIZES:
        span = n - size + 1
        if span <= 0:
            continue
        count += span
        for i in range(span):
            total += cget(padded[i : i + size], 0.0)
    return total, count


def _top(model: LinearModel, window: str, limit: int = 4) -> tuple[str, ...]:
    """The words and word pairs that pushed ``window`` up most: a word's own weight
    plus the character n-grams inside it, a pair's weight plus its two words'."""
    weights: dict[str, float] = {}
    for seg in segments(window):
        words = _WORD_RE.findall(seg)
        own = []
        for w in words:
            value = model.word.get(w, 0.0)
            padded = " " + w + " "
            for size in CHAR_SIZES:
                for i in range(len(padded) - size + 1):
                    value += model.char.get(padded[i : i + size], 0.0)
            own.append(value)
            weights[w] = max(weights.get(w, value), value)
        for i in range(1, len(words)):
            pair = words[i - 1] + " " + words[i]
            value = model.word.get(pair, 0.0)
            if value > 0:
                value += own[i - 1] + own[i]
                weights[pair] = max(weights.get(pair, value), value)
    ranked = sorted(((g, w) for g, w in weights.items() if w > 0), key=lambda kv: (-kv[1], kv[0]))
    picked: list[str] = []
    for g, _ in ranked:
        if any(g in p.split(" ") or p in g.split(" ") for p in picked):
            continue
        picked.append(g)
        if len(picked) == limit:
            break
    return tuple(picked)


def window_scores(model: LinearModel, prepared: str) -> list[tuple[float, str]]:
    """Each sentence's, each adjacent pair's and the whole text's score."""
    segs = segments(prepared)
    parts = [_score_segment(model, s) for s in segs]
    out: list[tuple[float, str]] = []

    def value(total: float, count: int) -> float:
        return model.bias + total / math.sqrt(count + SMOOTH)

    for i, (t, c) in enumerate(parts):
        out.append((value(t, c), segs[i]))
        if i:
            pt, pc = parts[i - 1]
            out.append((value(t + pt, c + pc), segs[i - 1] + " " + segs[i]))
    if len(parts) > 2:
        out.append((value(sum(p[0] for p in parts), sum(p[1] for p in parts)), "\n".join(segs)))
    return out


def max_score(model: LinearModel, text: str, *, code_is_mention: bool = True) -> float:
    """The highest window score of ``text`` (what training chooses the threshold on)."""
    scores = window_scores(model, prepare(text, code_is_mention=code_is_mention))
    return max((s for s, _ in scores), default=model.bias)


def model_check(model: LinearModel, text: str, *, code_is_mention: bool = True) -> ModelHit | None:
    """The highest-scoring window when it is over the model's threshold, else None."""
    scores = window_scores(model, prepare(text, code_is_mention=code_is_mention))
    if not scores:
        return None
    score, window = max(scores, key=lambda sw: sw[0])
    if score < model.threshold:
        return None
    probability = 1.0 / (1.0 + math.exp(-score))
    return ModelHit(score, probability, window, _top(model, window))


WEIGHTS: Final = Path(__file__).resolve().parent / "data" / "screen_model.json"
_PATH_SEPARATORS: Final = re.compile(r"/+")


@functools.cache
def load() -> LinearModel:
    """The weights bench/train_screen_model.py wrote."""
    doc = json.loads(WEIGHTS.read_text("utf-8"))
    return LinearModel(
        char=doc["char"],
        word=doc["word"],
        bias=float(doc["bias"]),
        threshold=float(doc["threshold"]),
    )


def screen(text: str, *, field: str, model: bool = True) -> ScreeningVerdict:
    """The shipped screen's verdict on a body (``field="markdown"``) or a path, then,
    with ``model``, this stage on what the screen let through."""
    shipped = screen_path(text) if field == "path" else screen_text(text)
    if not shipped.allowed or not model:
        return shipped
    if field == "path":
        hit = model_check(
            load(), _PATH_SEPARATORS.sub("\n", text.removesuffix(".md")), code_is_mention=False
        )
    else:
        hit = model_check(load(), text, code_is_mention=True)
    if hit is None:
        return shipped
    top = ", ".join("'" + g[:24] + "'" for g in hit.top)
    reason = f"refused: reads as an injection to the model (p={hit.probability:.2f}; top {top})"
    return ScreeningVerdict(allowed=False, rule=RULE_INJECTION_MODEL, reason=reason)
