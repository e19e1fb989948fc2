"""An experiment, not part of the screen: would a similarity check with the local static
embedding model generalise better than the rules (ADR 0046, "Alternatives considered")?

    .venv/bin/python bench/screen_similarity.py

Nearest neighbours with WordLlama (``adapters/embeddings/local.py``, 256-d, no download):
a text is flagged when its best cosine to a known attack beats its best cosine to a known
benign note by ``margin`` and reaches ``floor``. Known attacks: held-out sets 6-8 (and
the public examples when ../shared/data is there); known benign notes: the benign sets
1-8, the dev set and the project's docs. The two thresholds are chosen on sets 6-8
alone, each set scored against the references without itself (at most 1% of benign
notes flagged), then set 9, which chose nothing, is scored once, alone and as a union
with the screen. Printed, never asserted; CPU time per text is printed too.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != ROOT)]

from memvault.adapters.embeddings.local import shared_local_embedder  # noqa: E402
from memvault.domain.screening import screen_path, screen_text  # noqa: E402
from tests.support import screening_corpora as corpora  # noqa: E402
from tests.support.screening_corpora import Sample  # noqa: E402

TUNE = ("heldout6", "heldout7", "heldout8")
HELD = "heldout9"
BENIGN_REF = ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5")


def _benign(name: str) -> list[Sample]:
    return corpora.load(f"{name}_benign")


def _embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    return shared_local_embedder().embed_array(list(texts))


def _best(
    queries: npt.NDArray[np.float32], refs: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    return np.asarray((queries @ refs.T).max(axis=1), dtype=np.float32)


def _screen_refuses(s: Sample) -> bool:
    return not (screen_path(s.text) if s.field == "path" else screen_text(s.text)).allowed


def main() -> None:
    attack_sets = {n: corpora.load(f"{n}_attacks") for n in (*TUNE, HELD)}
    benign_sets = {n: _benign(n) for n in (*BENIGN_REF, *TUNE, HELD)}
    base_benign = [s.text for n in BENIGN_REF for s in benign_sets[n]] + [
        s.text for s in corpora.project_docs()
    ]
    public = [s.text for s in corpora.injections_dev()]
    t0 = time.process_time()
    vec = {n: _embed([s.text for s in xs]) for n, xs in attack_sets.items()}
    bvec = {n: _embed([s.text for s in xs]) for n, xs in benign_sets.items()}
    base_b = _embed(base_benign)
    pub = _embed(public) if public else np.zeros((0, 256), dtype=np.float32)
    n_texts = sum(len(x) for x in attack_sets.values()) + sum(len(x) for x in benign_sets.values())
    n_texts += len(base_benign) + len(public)
    per_text = (time.process_time() - t0) / n_texts * 1e6

    # scores of each tuning set against the references without itself
    def refs_without(name: str) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        atk = np.vstack([pub, *(vec[n] for n in TUNE if n != name)])
        ben = np.vstack([base_b, *(bvec[n] for n in TUNE if n != name)])
        return atk, ben

    rows_a: list[tuple[float, float]] = []
    rows_b: list[tuple[float, float]] = []
    for name in TUNE:
        atk, ben = refs_without(name)
        for q in (vec[name],):
            rows_a += list(zip(_best(q, atk).tolist(), _best(q, ben).tolist(), strict=True))
        for q in (bvec[name],):
            rows_b += list(zip(_best(q, atk).tolist(), _best(q, ben).tolist(), strict=True))
    best = (0.0, 1.0, 0.0)  # recall, floor, margin
    for floor in np.arange(0.30, 0.96, 0.02):
        for margin in np.arange(-0.10, 0.21, 0.01):
            fp = sum(a >= floor and a - b >= margin for a, b in rows_b) / len(rows_b)
            if fp > 0.01:
                continue
            rec = sum(a >= floor and a - b >= margin for a, b in rows_a) / len(rows_a)
            if rec > best[0]:
                best = (rec, float(floor), float(margin))
    rec, floor, margin = best
    print(f"embedding: {per_text:.0f} us of CPU per text (WordLlama, batched)")
    print(
        f"thresholds chosen on sets 6-8, each against the others: floor {floor:.2f},"
        f" margin {margin:+.2f}: {rec:.1%} of their attacks, <= 1% of their notes"
    )
    atk = np.vstack([pub, *(vec[n] for n in TUNE)])
    ben = np.vstack([base_b, *(bvec[n] for n in TUNE)])
    for kind, samples, q in (
        ("attacks", attack_sets[HELD], vec[HELD]),
        ("benign", benign_sets[HELD], bvec[HELD]),
    ):
        a, b = _best(q, atk), _best(q, ben)
        flagged = [bool(x >= floor and x - y >= margin) for x, y in zip(a, b, strict=True)]
        screened = [_screen_refuses(s) for s in samples]
        union = [f or s for f, s in zip(flagged, screened, strict=True)]
        n = len(samples)
        print(
            f"set 9 {kind:<8} similarity {sum(flagged):4d}/{n} ({sum(flagged) / n:.1%})"
            f"   screen {sum(screened):4d}/{n} ({sum(screened) / n:.1%})"
            f"   either {sum(union):4d}/{n} ({sum(union) / n:.1%})"
        )


if __name__ == "__main__":
    main()
