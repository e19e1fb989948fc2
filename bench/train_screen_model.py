"""Train the write screen's third stage (``injection_model``, ADR 0046) from the repo's files.

    .venv/bin/python bench/train_screen_model.py          # cross-validate, train, write
    .venv/bin/python bench/train_screen_model.py --check  # do the weights match the inputs?

Training data, all in the repository: the original attack sets 6, 7 and 8 and every
benign set of ``tests/data/screening`` except the held-out sets 9 and 10 (never read
here), plus every eighth phrasing of the generated override set
(``tests/support/screening_corpora.py``). Nothing from ``../shared/data``.

Model: logistic regression over the n-grams of
:mod:`bench.screen_model` (n-grams seen in at least two training texts),
full-batch Adam with L2, numpy only, no randomness: the same inputs give the same file.
Positives are whole attack texts; negatives are whole benign texts and each of their
sentences and sentence pairs (the windows the stage scores). Classes weigh the same.

Validation: leave one training set out at a time (the attack sets with their benign
sets, each benign-only set alone), train on the rest and score the set left out; the
threshold is the one at which at most 0.5% of those out-of-fold benign texts are refused,
and the figures per fold at that threshold are printed. The final model is trained on
everything, keeps the weights over 1e-3 rounded to 4 decimals, and is written with the
threshold, the figures and a SHA-256 of the inputs to
``bench/data/screen_model.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT), str(ROOT / "layers/core"), *sys.path]

from bench.screen_model import (  # noqa: E402
    SMOOTH,
    LinearModel,
    grams,
    max_score,
    prepare,
    segments,
)

from tests.support import screening_corpora as corpora  # noqa: E402
from tests.support.screening_corpora import Sample  # noqa: E402

OUT = ROOT / "bench/data/screen_model.json"
DATA = ROOT / "tests/data/screening"
ATTACK_SETS = ("heldout6", "heldout7", "heldout8")
BENIGN_SETS = (
    "dev",
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
)
GENERATED_EVERY = 8
FEATURES_VERSION = "ngrams-2: words 1-2, chars 3-5, sentence windows, sqrt(n + 32)"
L2 = 1e-7
STEPS = 1000
RATE = 0.05
BENIGN_TARGET = 0.005
KEEP = 1e-3


def _text(s: Sample) -> tuple[str, bool]:
    if s.field == "path":
        return s.text.removesuffix(".md").replace("/", "\n"), False
    return s.text, True


def inputs_sha256() -> str:
    """A digest of everything the weights are derived from."""
    h = hashlib.sha256(FEATURES_VERSION.encode())
    h.update(f"{L2} {STEPS} {RATE} {BENIGN_TARGET} {KEEP} {GENERATED_EVERY}".encode())
    for name in [f"{a}_attacks" for a in ATTACK_SETS] + [f"{b}_benign" for b in BENIGN_SETS]:
        h.update(name.encode())
        h.update((DATA / f"{name}.jsonl").read_bytes())
    for s in generated():
        h.update(s.text.encode())
    h.update((ROOT / "bench/screen_model.py").read_bytes())
    h.update((ROOT / "layers/core/memvault/domain/screening_normalise.py").read_bytes())
    return h.hexdigest()


def generated() -> list[Sample]:
    return corpora.generated_overrides()[::GENERATED_EVERY]


def groups() -> dict[str, tuple[list[Sample], list[Sample]]]:
    """Each fold's attacks and benign notes."""
    out: dict[str, tuple[list[Sample], list[Sample]]] = {}
    for b in BENIGN_SETS:
        attacks = corpora.load(f"{b}_attacks") if b in ATTACK_SETS else []
        out[b] = (attacks, corpora.load(f"{b}_benign"))
    out["generated"] = (generated(), [])
    return out


Item = tuple[Counter[tuple[bool, str]], int]


def _items(s: Sample, *, windows: bool) -> list[Item]:
    text, code = _text(s)
    segs = segments(prepare(text, code_is_mention=code))
    per = []
    for seg in segs:
        c: Counter[tuple[bool, str]] = Counter(grams(seg))
        per.append(c)
    if not per:
        return []
    whole: Counter[tuple[bool, str]] = Counter()
    for c in per:
        whole.update(c)
    items = [(whole, sum(whole.values()))]
    if windows and len(per) > 1:
        for i, c in enumerate(per):
            items.append((c, sum(c.values())))
            if i:
                pair = per[i - 1] + c
                items.append((pair, sum(pair.values())))
    return items


def train(attacks: Sequence[Sample], benign: Sequence[Sample]) -> LinearModel:
    pos = [it for s in attacks for it in _items(s, windows=False)]
    neg = [it for s in benign for it in _items(s, windows=True)]
    df: Counter[tuple[bool, str]] = Counter()
    for s in (*attacks, *benign):
        text, code = _text(s)
        seen = {g for seg in segments(prepare(text, code_is_mention=code)) for g in grams(seg)}
        df.update(seen)
    vocab = {g: i for i, g in enumerate(sorted(g for g, n in df.items() if n >= 2))}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    items = pos + neg
    for r, (c, n) in enumerate(items):
        scale = 1.0 / math.sqrt(n + SMOOTH)
        for g, k in c.items():
            j = vocab.get(g)
            if j is not None:
                rows.append(r)
                cols.append(j)
                vals.append(k * scale)
    y = np.array([1.0] * len(pos) + [0.0] * len(neg))
    sw = np.where(y == 1, 0.5 / max(1, len(pos)), 0.5 / max(1, len(neg)))
    w, b = _fit(
        np.array(rows, dtype=np.int64),
        np.array(cols, dtype=np.int64),
        np.array(vals, dtype=np.float64),
        y,
        sw,
        len(vocab),
    )
    inverse = sorted(vocab, key=vocab.__getitem__)
    char: dict[str, float] = {}
    word: dict[str, float] = {}
    for j in np.flatnonzero(np.abs(w) > KEEP).tolist():
        is_char, gram = inverse[j]
        (char if is_char else word)[gram] = round(float(w[j]), 4)
    return LinearModel(char=char, word=word, bias=round(b, 4), threshold=0.0)


def _fit(
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    vals: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    sw: npt.NDArray[np.float64],
    dim: int,
) -> tuple[npt.NDArray[np.float64], float]:
    w = np.zeros(dim)
    b = 0.0
    m = np.zeros(dim)
    v = np.zeros(dim)
    mb = vb = 0.0
    n = len(y)
    for t in range(1, STEPS + 1):
        z = np.bincount(rows, weights=w[cols] * vals, minlength=n) + b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        resid = (p - y) * sw
        g = np.bincount(cols, weights=vals * resid[rows], minlength=dim) + L2 * w
        gb = float(resid.sum())
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        mb = 0.9 * mb + 0.1 * gb
        vb = 0.999 * vb + 0.001 * gb * gb
        mh = m / (1 - 0.9**t)
        vh = v / (1 - 0.999**t)
        w -= RATE * mh / (np.sqrt(vh) + 1e-8)
        b -= RATE * (mb / (1 - 0.9**t)) / (math.sqrt(vb / (1 - 0.999**t)) + 1e-8)
    return w, b


def _scores(model: LinearModel, samples: Sequence[Sample]) -> list[float]:
    out = []
    for s in samples:
        text, code = _text(s)
        out.append(max_score(model, text, code_is_mention=code))
    return out


def threshold_for(benign_scores: Sequence[float], target: float) -> float:
    """The lowest threshold refusing at most ``target`` of ``benign_scores``."""
    ranked = sorted(benign_scores, reverse=True)
    allowed = int(target * len(ranked))
    # refuse score >= t: put t just above the (allowed+1)-th highest score
    return round(ranked[allowed] + 1e-4, 4) if allowed < len(ranked) else ranked[-1]


def cross_validate() -> tuple[float, list[dict[str, object]]]:
    folds = groups()
    oof: dict[str, tuple[list[float], list[float]]] = {}
    for name, (atk, ben) in folds.items():
        rest_a = [s for k, (a, _) in folds.items() if k != name for s in a]
        rest_b = [s for k, (_, b) in folds.items() if k != name for s in b]
        model = train(rest_a, rest_b)
        oof[name] = (_scores(model, atk), _scores(model, ben))
        print(f"  fold {name}: trained on the rest", flush=True)
    all_benign = [x for _, b in oof.values() for x in b]
    t = threshold_for(all_benign, BENIGN_TARGET)
    figures: list[dict[str, object]] = []
    for name, (a, b) in oof.items():
        row = {
            "left_out": name,
            "attacks_refused": sum(x >= t for x in a),
            "attacks": len(a),
            "benign_refused": sum(x >= t for x in b),
            "benign": len(b),
        }
        figures.append(row)
    return t, figures


def write(model: LinearModel, threshold: float, figures: list[dict[str, object]]) -> None:
    doc = {
        "about": "memvault write screen, stage injection_model (ADR 0046); made by "
        "bench/train_screen_model.py from the repository's training sets; do not edit",
        "features": FEATURES_VERSION,
        "inputs_sha256": inputs_sha256(),
        "bias": model.bias,
        "threshold": threshold,
        "cross_validation": figures,
        "word": dict(sorted(model.word.items())),
        "char": dict(sorted(model.char.items())),
    }
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare the inputs' hash")
    args = parser.parse_args(argv)
    if args.check:
        recorded = json.loads(OUT.read_text("utf-8"))["inputs_sha256"]
        ok = recorded == inputs_sha256()
        print("weights match their inputs" if ok else "weights are stale: run the script")
        return 0 if ok else 1
    print("cross-validation (leave one training set out):", flush=True)
    t, figures = cross_validate()
    print(f"threshold {t:.4f} (at most {BENIGN_TARGET:.1%} of out-of-fold benign texts)")
    for r in figures:
        a, na, b, nb = r["attacks_refused"], r["attacks"], r["benign_refused"], r["benign"]
        print(f"  left out {r['left_out']:<10} attacks {a}/{na}   benign {b}/{nb}")
    groups_ = groups()
    model = train(
        [s for a, _ in groups_.values() for s in a], [s for _, b in groups_.values() for s in b]
    )
    write(model, t, figures)
    size = OUT.stat().st_size
    print(
        f"wrote {OUT.relative_to(ROOT)}: {size / 1024:.0f} KB, {len(model.char)} char and "
        f"{len(model.word)} word n-grams"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
