"""Retrieval quality on conversation memory (LoCoMo dev split): printed, never asserted.

    .venv/bin/python bench/retrieval.py                 # every mode, both layouts
    .venv/bin/python bench/retrieval.py --json out.json

Reads ``../shared/data/locomo-dev/`` (``$MEMVAULT_SHARED_DATA`` for another place) at run
time: its README says what it is. Exits 2 when it is absent.

Writes the 128 session notes into memvault on SQLite (the local embedder, vectors
indexed on each write), in two layouts: one vault per conversation, and all five
conversations in one vault. For each of the 997 questions and each mode (keyword,
semantic, hybrid) it measures

- **search**: ``VaultService.search_outcome`` with the folder filter on the question's
  conversation (``prefix``), limit 10;
- **the recall path**: the notes ``RecallService.recall`` puts in the block for the
  question as the last user message (5 notes, 2,000 tokens, no folder: the vault as the
  gateway sees it); "search order" is the same without recall's second stage
  (``rerank_pool=0``: the search's first 5, as before ADR 0051);

and reports recall@5 (the share of the question's ground-truth notes in the first 5) and
MRR (reciprocal rank of the first ground-truth note in the first 10), overall and per
LoCoMo category, next to a plain BM25 baseline computed in the same run (bm25s,
PyStemmer English stemming, English stop words, one index per conversation over the
note files: the README's reference).

The fusion comparison: the two halves of a hybrid search (keyword hits, nearest chunks)
are read once per question and fused offline by ``domain.fusion.fuse`` with reciprocal
rank fusion and with the score blend at a few keyword weights, so the choice is made on
the same inputs. Questions whose search text is refused (empty) are counted as misses.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import common
from common import log
from memvault.container import Services, build_services
from memvault.domain.fusion import (
    ChunkMatch,
    Fusion,
    KeywordHit,
    SearchMode,
    cut,
    fuse,
)
from memvault.domain.models import SearchQuery
from memvault.services.context import Caller
from memvault.services.recall import RecallService
from memvault.settings import Settings

MODES = (SearchMode.KEYWORD, SearchMode.SEMANTIC, SearchMode.HYBRID)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# The figures are also reported for two parts: these conversations' questions, and the
# others'. recall's second stage (domain.rerank, ADR 0051) was explored on all five
# before this split was fixed, so the second part is not a clean held-out result; ADR
# 0051 gives the one choice made on the first part alone.
TUNING_PART = {"locomo/c00/", "locomo/c01/", "locomo/c02/"}
ONE_VAULT = "one-vault"
PER_CONVERSATION = "per-conversation"


def data_dir() -> Path:
    base = os.environ.get("MEMVAULT_SHARED_DATA") or str(common.ROOT.parent / "shared" / "data")
    return Path(base) / "locomo-dev"


@dataclass
class Scores:
    """recall@5 and MRR per question, with the question's category."""

    rows: list[tuple[int, float, float]] = field(default_factory=list)
    conversations: list[str] = field(default_factory=list)  # each row's, for the splits
    # (question id, ranked paths) of each question that lost recall@5, for --misses
    misses: list[tuple[str, list[str]]] = field(default_factory=list)

    def add(
        self, category: int, ranked: Sequence[str], truth: Sequence[str], question: str = ""
    ) -> None:
        wanted = set(truth)
        recall5 = len(set(ranked[:5]) & wanted) / len(wanted)
        mrr = next((1.0 / (i + 1) for i, p in enumerate(ranked[:10]) if p in wanted), 0.0)
        self.rows.append((category, recall5, mrr))
        self.conversations.append(next(iter(wanted)).rsplit("/", 1)[0] + "/")
        if recall5 < 1.0:
            self.misses.append((question, list(ranked[:5])))

    def part(self, conversations: set[str]) -> tuple[float, float]:
        """recall@5 and MRR over the questions of these conversations only."""
        mine = [r for r, c in zip(self.rows, self.conversations, strict=True) if c in conversations]
        return _mean(r[1] for r in mine), _mean(r[2] for r in mine)

    def overall(self) -> tuple[float, float]:
        return _mean(r[1] for r in self.rows), _mean(r[2] for r in self.rows)

    def by_category(self) -> dict[int, tuple[float, float]]:
        out: dict[int, tuple[float, float]] = {}
        for cat in sorted({r[0] for r in self.rows}):
            mine = [r for r in self.rows if r[0] == cat]
            out[cat] = (_mean(r[1] for r in mine), _mean(r[2] for r in mine))
        return out


def _mean(values: object) -> float:
    items = list(values)  # type: ignore[call-overload]
    return statistics.fmean(items) if items else 0.0


def load(data: Path) -> tuple[dict[str, str], list[dict[str, object]]]:
    notes: dict[str, str] = {}
    with zipfile.ZipFile(data / "locomo-dev.zip") as archive:
        for name in archive.namelist():
            if name.endswith(".md"):
                notes[name] = archive.read(name).decode("utf-8")
    questions = json.loads((data / "queries.json").read_text("utf-8"))
    return notes, questions


def build(tmp: Path, layout: str, notes: dict[str, str]) -> tuple[Services, dict[str, Caller]]:
    """Services with the notes written, and the caller to use per conversation prefix."""
    settings = Settings(
        backend="sqlite",
        data_dir=tmp / layout,
        budget_per_minute=1e9,
        budget_burst=1e9,
        password_hash_cost="low",  # type: ignore[arg-type]
    )
    services = build_services(settings)
    prefixes = sorted({path.rsplit("/", 1)[0] + "/" for path in notes})
    callers: dict[str, Caller] = {}
    for prefix in prefixes:
        account = ONE_VAULT if layout == ONE_VAULT else prefix.strip("/").replace("/", "-")
        if account not in {c.account_id for c in callers.values()}:
            services.accounts.create_account(account, account_id=account)
        callers[prefix] = Caller(account_id=account)
    for path, markdown in sorted(notes.items()):
        prefix = path.rsplit("/", 1)[0] + "/"
        services.vault.write(callers[prefix], path, markdown)
    return services, callers


def bm25_baseline(
    notes: dict[str, str], questions: list[dict[str, object]], *, per_conversation: bool
) -> Scores:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    scores = Scores()
    groups: dict[str, list[str]] = defaultdict(list)
    for path in sorted(notes):
        groups[path.rsplit("/", 1)[0] + "/" if per_conversation else ""].append(path)
    indexes = {}
    for group, paths in groups.items():
        retriever = bm25s.BM25()
        corpus = bm25s.tokenize(
            [notes[p] for p in paths], stopwords="en", stemmer=stemmer, show_progress=False
        )
        retriever.index(corpus, show_progress=False)
        indexes[group] = (retriever, paths)
    for q in questions:
        retriever, paths = indexes[str(q["prefix"]) if per_conversation else ""]
        tokens = bm25s.tokenize(
            [str(q["query"])], stopwords="en", stemmer=stemmer, show_progress=False
        )
        docs, values = retriever.retrieve(tokens, k=min(10, len(paths)), show_progress=False)
        ranked = [paths[d] for d, v in zip(docs[0], values[0], strict=True) if v > 0]
        scores.add(int(q["category"]), ranked, list(q["ground_truth"]))  # type: ignore[call-overload]
    return scores


def measure(
    services: Services,
    callers: dict[str, Caller],
    questions: list[dict[str, object]],
    results: dict[str, Scores],
    layout: str,
    recall_min_scores: Sequence[float | None],
) -> None:
    vault = services.vault
    semantic = vault.hybrid.semantic
    recallers = {m: RecallService(vault, min_score=m) for m in recall_min_scores}
    search_order = RecallService(vault, rerank_pool=0)  # recall before its second stage
    fusions: dict[str, Callable[[list[KeywordHit], list[ChunkMatch]], list[str]]] = {}
    now = vault.clock()

    def fused(fusion: Fusion, weight: float, min_score: float) -> Callable[..., list[str]]:
        def run(keyword: list[KeywordHit], chunks: list[ChunkMatch]) -> list[str]:
            out = fuse(
                keyword,
                chunks,
                mode=SearchMode.HYBRID,
                now=now,
                fusion=fusion,
                keyword_weight=weight,
            )
            return [f.path for f in cut(out, min_score, 10)]

        return run

    fusions["rrf"] = fused(Fusion.RRF, 0.0, 0.0)
    fusions["either"] = fused(Fusion.EITHER, 0.0, 0.0)
    fusions["either min 0.4"] = fused(Fusion.EITHER, 0.0, 0.4)
    for weight in (0.3, 0.5, 0.7):
        fusions[f"blend w={weight}"] = fused(Fusion.BLEND, weight, 0.0)
        fusions[f"blend w={weight} min 0.4"] = fused(Fusion.BLEND, weight, 0.4)
    for n, q in enumerate(questions):
        if n % 200 == 0:
            log(f"  {layout}: question {n}/{len(questions)}")
        caller = callers[str(q["prefix"])]
        category = int(q["category"])  # type: ignore[call-overload]
        truth = list(q["ground_truth"])  # type: ignore[call-overload]
        text = str(q["query"])
        for mode in MODES:
            hits = vault.search_outcome(
                caller, text, folder=str(q["prefix"]), limit=10, mode=mode.value, charge=False
            )
            results[f"{layout} search {mode.value}"].add(
                category, [h.path for h in hits.hits], truth
            )
            for min_score, recaller in recallers.items():
                block = recaller.recall(
                    caller, text, max_notes=5, token_budget=2000, mode=mode.value
                )
                name = f"{layout} recall {mode.value}"
                if min_score is not None:
                    name += f" min {min_score}"
                placed = list(block.paths) if block else []
                results[name].add(category, placed, truth, str(q["id"]))
            block = search_order.recall(
                caller, text, max_notes=5, token_budget=2000, mode=mode.value
            )
            results[f"{layout} recall {mode.value} search order"].add(
                category, list(block.paths) if block else [], truth
            )
        if semantic is not None:
            query = SearchQuery(text=text, folder=str(q["prefix"]), limit=30, snippets=False)
            keyword = [
                KeywordHit(h.path, h.score)
                for h in services.index.search(caller.account_id, query, now=now)
            ]
            chunks = [
                ChunkMatch(c.path, c.chunk_index, c.similarity, c.updated_at)
                for c in semantic.nearest(caller.account_id, query, 60)
            ]
            for name, run in fusions.items():
                results[f"{layout} fusion {name}"].add(category, run(keyword, chunks), truth)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument(
        "--misses",
        type=Path,
        help="write the recall path's (hybrid) misses to this file: per layout, each"
        " question whose recall@5 is below 1 with its ground truth and the notes placed",
    )
    args = parser.parse_args(argv)
    data = data_dir()
    if not (data / "queries.json").exists():
        print(f"no LoCoMo dev data at {data} (set MEMVAULT_SHARED_DATA)", file=sys.stderr)
        return 2
    notes, questions = load(data)
    if args.limit:
        questions = questions[: args.limit]
    results: dict[str, Scores] = defaultdict(Scores)
    started = time.perf_counter()
    results["bm25s per conversation"] = bm25_baseline(notes, questions, per_conversation=True)
    results["bm25s one index"] = bm25_baseline(notes, questions, per_conversation=False)
    with tempfile.TemporaryDirectory(prefix="memvault-retrieval-") as tmp:
        for layout in (PER_CONVERSATION, ONE_VAULT):
            log(f"writing {len(notes)} notes ({layout})")
            services, callers = build(Path(tmp), layout, notes)
            measure(services, callers, questions, results, layout, (None, 0.0))
    elapsed = time.perf_counter() - started
    print(f"LoCoMo dev: {len(questions)} questions, {len(notes)} notes ({elapsed:.0f} s)")
    print("targets: recall path recall@5 >= 0.92 and MRR >= 0.85 (both layouts);")
    print("         keyword search no worse than recall@5 0.876 / MRR 0.794")
    header = f"{'':46} {'R@5':>6} {'MRR':>6}  " + "  ".join(
        f"{CATEGORIES[c][:11]:>13}" for c in CATEGORIES
    )
    print(header)
    for name, scores in results.items():
        recall5, mrr = scores.overall()
        cats = scores.by_category()
        per = "  ".join(
            f"{cats[c][0]:.3f}/{cats[c][1]:.3f}" if c in cats else f"{'-':>13}" for c in CATEGORIES
        )
        print(f"{name:46} {recall5:6.3f} {mrr:6.3f}  {per}")
    conversations = {c for s in results.values() for c in s.conversations}
    held_out = conversations - TUNING_PART
    print(
        f"\nsplit: tuning part {', '.join(sorted(TUNING_PART))}; held out"
        f" {', '.join(sorted(held_out))}"
    )
    print(f"{'':46} {'tuning R@5/MRR':>15} {'held-out R@5/MRR':>17}")
    for name, scores in results.items():
        if " recall " in name or " search keyword" in name or name.startswith("bm25s"):
            a, b = scores.part(TUNING_PART), scores.part(held_out)
            print(f"{name:46} {a[0]:7.3f}/{a[1]:.3f} {b[0]:9.3f}/{b[1]:.3f}")
    print("\nby conversation (recall@5/MRR): each part alone, for a leave-one-out view")
    ordered = sorted(conversations)
    print(f"{'':46} " + " ".join(f"{c.strip('/').rsplit('/', 1)[-1]:>11}" for c in ordered))
    for name, scores in results.items():
        if name.endswith(("recall hybrid", "recall keyword", "search keyword")):
            cells = " ".join("{:.3f}/{:.3f}".format(*scores.part({c})) for c in ordered)
            print(f"{name:46} {cells}")
    if args.misses:
        by_id = {str(q["id"]): q for q in questions}
        lines = []
        for layout in (PER_CONVERSATION, ONE_VAULT):
            for qid, placed in results[f"{layout} recall hybrid"].misses:
                q = by_id[qid]
                lines.append(
                    json.dumps(
                        {
                            "layout": layout,
                            "id": qid,
                            "category": CATEGORIES[int(q["category"])],  # type: ignore[call-overload]
                            "query": q["query"],
                            "ground_truth": q["ground_truth"],
                            "placed": placed,
                        }
                    )
                )
        args.misses.write_text("\n".join(lines) + "\n")
    if args.json:
        payload = {
            name: {"overall": scores.overall(), "by_category": scores.by_category()}
            for name, scores in results.items()
        }
        args.json.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
