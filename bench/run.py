"""memvault benchmarks: figures printed side by side with their targets, never asserted.

    .venv/bin/python bench/run.py                          # 1k and 10k notes, ~2-4 min
    .venv/bin/python bench/run.py --quick                  # 1k only, fewer repetitions
    .venv/bin/python bench/run.py --sizes 1000,10000,100000  # + 100k (~500 MB of markdown;
                                                           #   allow 15+ min and ~3 GB RSS)
    .venv/bin/python bench/run.py --sizes 10000 --profile   # + cProfile of import and writes

For each size a synthetic vault (bench/synth.py: seeded, ~5 kB notes, so 10k notes are
~50 MB) is zipped and loaded through the real service path (TransferService.import_zip),
then measured on an embedded SQLite backend in a temporary data dir:

- search p50/p99 through VaultService.search (budget charge included; budgets are made
  huge so they never refuse) and through the SearchIndex alone (also with its term counts
  dropped before each search, as the first search after a write finds them), next to the
  raw FTS5 query ``SELECT rowid FROM search_fts_<n> WHERE search_fts_<n> MATCH ? ORDER BY
  bm25(search_fts_<n>) LIMIT 10`` on the account's table, run on the same connection with
  the same OR-of-terms over the same columns; runs are interleaved query by query so all
  see the same cache state;
- single-note write p50/p99 (VaultService.write of a new note, and of an update);
- import and export throughput, and a re-import of the export (every note unchanged);
- peak RSS of the process that did all of the above.

Each size runs in its own child process, so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common import log, percentile_nearest_rank
from memvault.container import Services, build_services
from memvault.domain import markdown
from memvault.domain import query as query_terms
from memvault.domain.models import Limits, SearchQuery
from memvault.services import parsing
from memvault.services.context import Caller, Surface
from memvault.settings import Settings
from synth import VaultGenerator

ACCOUNT = "local"
SEED = 1
SEARCH_LIMIT = 10
# On the account's own FTS5 table (adapters/sqlite/search.py: one per account).
RAW_SQL = "SELECT rowid FROM {t} WHERE {t} MATCH ? ORDER BY bm25({t}) LIMIT 10"
TARGET_SEARCH_RATIO = 1.5  # our search ≤ 1.5x the raw query, at 10k notes
TARGET_IMPORT_SECONDS = 10.0  # a 10k-note, ~50 MB zip


# ---------------------------------------------------------------------- helpers
def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


class Phases:
    """Wall time spent in chosen methods, by wrapping them on the instances (bench only).

    Targets are dotted paths from a root object; one that does not resolve (the code
    moved) is skipped, so the bench keeps running while services are refactored.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, root: object, target: str, label: str) -> bool:
        *parents, name = target.split(".")
        obj: Any = root
        for part in parents:
            obj = getattr(obj, part, None)
            if obj is None:
                return False
        inner = getattr(obj, name, None)
        if inner is None or getattr(inner, "_bench_wrapped", False):
            return False

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - start

        timed._bench_wrapped = True  # type: ignore[attr-defined]
        setattr(obj, name, timed)
        return True

    def reset(self) -> dict[str, float]:
        out = dict(self.seconds)
        self.seconds.clear()
        return out


# (target from the Services bundle or a module, label): nested rows are indented.
PHASES = [
    ("transfer._plan", "read zip + parse notes (_plan)"),
    # A big import parses in worker processes while the zip is read: this is the wait
    # for them after the last entry (a small one parses here, in this process); the
    # parse_note rows below count this process only.
    ("parsing.BulkParser.results", "  parse: wait for workers"),
    ("markdown.parse_note", "  markdown.parse_note"),
    ("markdown._load_frontmatter", "    YAML frontmatter"),
    ("vault.budgets.charge", "budget charge"),
    ("vault.store.commit", "store.commit"),
    ("vault.indexing.after_commit", "index follow-up (after commit)"),
    ("vault._after_commit", "index follow-up (after commit)"),
    ("vault.links.inbound_counts_all", "  inbound_counts_all"),
    ("vault.inbound_counts_all", "  inbound_counts_all"),
    ("vault.index.upsert", "  index.upsert"),
    ("vault.index.set_inbound", "  index.set_inbound"),
]


@contextmanager
def profiled(enabled: bool, title: str) -> Iterator[None]:
    if not enabled:
        yield
        return
    prof = cProfile.Profile()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        out = io.StringIO()
        stats = pstats.Stats(prof, stream=out).strip_dirs()
        stats.sort_stats("cumulative").print_stats(30)
        stats.sort_stats("tottime").print_stats(20)
        log(f"\n===== cProfile: {title} =====\n{out.getvalue()}")


def raw_match(text: str) -> str | None:
    """The adapter's OR-of-terms over the same columns, without the tenant clause."""
    terms = query_terms.search_terms(text)
    if not terms:
        return None
    quoted = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    return "{path title tags body} : (" + quoted + ")"


# ---------------------------------------------------------------------- one size
def bench_size(size: int, *, quick: bool, profile: bool) -> dict[str, Any]:
    res: dict[str, Any] = {"size": size}
    gen = VaultGenerator(size, seed=SEED)
    with tempfile.TemporaryDirectory(prefix="memvault-bench-") as tmp:
        tmpdir = Path(tmp)
        zip_path = tmpdir / "vault.zip"
        start = time.perf_counter()
        notes, md_bytes = gen.write_zip(zip_path)
        res["gen_seconds"] = time.perf_counter() - start
        res["md_mb"] = md_bytes / 1e6
        res["zip_mb"] = zip_path.stat().st_size / 1e6
        log(
            f"[{size}] generated {notes} notes, {res['md_mb']:.1f} MB markdown,"
            f" {res['zip_mb']:.1f} MB zip in {res['gen_seconds']:.1f} s"
        )

        settings = Settings(
            backend="sqlite",
            data_dir=tmpdir / "data",
            budget_per_minute=1e12,
            budget_burst=1e12,
        )
        svc = build_services(settings, clock=time.time)
        svc.accounts.create_account(
            "bench", account_id=ACCOUNT, limits=Limits(max_notes=10**8, max_bytes=10**13)
        )
        caller = Caller(account_id=ACCOUNT, surface=Surface.REST)
        phases = Phases()
        roots = {"markdown": markdown, "parsing": parsing}
        for target, label in PHASES:
            head, _, rest = target.partition(".")
            root = roots.get(head)
            if root is not None:
                phases.wrap(root, rest, label)
            else:
                phases.wrap(svc, target, label)

        # ------------------------------------------------------------ import
        with profiled(profile, f"import of {size} notes"), zip_path.open("rb") as fh:
            start, cpu = time.perf_counter(), time.process_time()
            report = svc.transfer.import_zip(caller, fh)
            res["import_seconds"] = time.perf_counter() - start
            res["import_cpu_seconds"] = time.process_time() - cpu
        assert report.created == size, report
        res["import_phases"] = phases.reset()
        log(f"[{size}] imported in {res['import_seconds']:.2f} s {res['import_phases']}")
        db_file = settings.sqlite_path
        res["db_mb"] = sum(p.stat().st_size for p in db_file.parent.glob(db_file.name + "*")) / 1e6

        # ------------------------------------------------------------ search
        res.update(bench_search(svc, caller, gen, size=size, quick=quick))

        # ------------------------------------------------------------ writes
        res.update(bench_writes(svc, caller, gen, phases, size=size, quick=quick, profile=profile))

        # ------------------------------------------------------------ export, re-import
        out_path = tmpdir / "export.zip"
        with out_path.open("wb") as out:
            start = time.perf_counter()
            exported = svc.transfer.export_zip(caller, out)
            res["export_seconds"] = time.perf_counter() - start
        res["export_notes"] = exported
        res["export_mb"] = (
            sum(n.markdown.encode("utf-8").__len__() for n in svc.vault.store.iter_notes(ACCOUNT))
            / 1e6
        )
        log(f"[{size}] exported {exported} notes in {res['export_seconds']:.2f} s")
        with out_path.open("rb") as fh:
            start = time.perf_counter()
            again = svc.transfer.import_zip(caller, fh)
            res["reimport_seconds"] = time.perf_counter() - start
        assert again.unchanged == exported and again.created == again.updated == 0, again
        phases.reset()
        res["peak_rss_mb"] = peak_rss_mb()
    return res


def bench_search(
    svc: Services, caller: Caller, gen: VaultGenerator, *, size: int, quick: bool
) -> dict[str, Any]:
    conn = svc.index.db.connection()  # type: ignore[attr-defined]
    table = svc.index.fts_table(ACCOUNT)  # type: ignore[attr-defined]
    raw_sql = RAW_SQL.format(t=table)
    queries = gen.queries()
    prepared = []
    for cls, text in queries:
        match = raw_match(text)
        assert match is not None
        matched = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (match,))
        prepared.append((cls, text, match, matched.fetchone()[0]))

    def ours(text: str) -> None:
        svc.vault.search(caller, text, limit=SEARCH_LIMIT)

    def index_only(text: str) -> None:
        q = SearchQuery(text=text, limit=SEARCH_LIMIT)
        svc.index.search(ACCOUNT, q, now=time.time())

    def index_counting(text: str) -> None:
        # What a search costs when the account's term counts must be counted again (the
        # first search after a write to the account).
        svc.index.doc_counts.clear()  # type: ignore[attr-defined]
        index_only(text)

    def raw(match: str) -> None:
        conn.execute(raw_sql, (match,)).fetchall()

    samples: dict[str, dict[str, list[float]]] = {
        kind: defaultdict(list) for kind in ("ours", "index", "counting", "raw")
    }

    def one_pass(record: bool) -> None:
        for cls, text, match, _ in prepared:
            for kind, fn, arg in (
                ("ours", ours, text),
                ("raw", raw, match),
                ("index", index_only, text),
                ("counting", index_counting, text),
            ):
                start = time.perf_counter()
                fn(arg)
                elapsed = (time.perf_counter() - start) * 1000.0
                if record:
                    samples[kind][cls].append(elapsed)
                    samples[kind]["all"].append(elapsed)

    start = time.perf_counter()
    one_pass(record=False)  # warm the page cache and statement cache
    pass_seconds = time.perf_counter() - start
    budget = 10.0 if quick else 45.0
    reps = max(3, min(10 if quick else 30, int(budget / max(pass_seconds, 1e-3))))
    for _ in range(reps):
        one_pass(record=True)
    log(f"[{size}] search: {reps} passes of {len(prepared)} queries")
    out: dict[str, Any] = {"search_reps": reps, "search_queries": len(prepared)}
    for kind, by_cls in samples.items():
        for cls, values in by_cls.items():
            out[f"search_{kind}_{cls}_p50"] = percentile_nearest_rank(values, 50)
            out[f"search_{kind}_{cls}_p99"] = percentile_nearest_rank(values, 99)
    for cls in {c for c, *_ in prepared}:
        out[f"matched_{cls}"] = statistics.median(m for c, _, _, m in prepared if c == cls)
    out["matched_all"] = statistics.median(m for *_, m in prepared)
    return out


def bench_writes(
    svc: Services,
    caller: Caller,
    gen: VaultGenerator,
    phases: Phases,
    *,
    size: int,
    quick: bool,
    profile: bool,
) -> dict[str, Any]:
    count = 50 if quick else (100 if size >= 100_000 else 200)
    rng = random.Random(f"writes-{SEED}-{size}")
    new_docs = []
    for i in range(count):
        spec = type(gen.notes[0])(f"bench/New note {i}.md", f"New note {i}")
        new_docs.append((spec.path, gen.markdown(rng, spec, gen.note_bytes(rng))))
    updates = []
    for spec in rng.sample(gen.notes, count):
        updates.append((spec.path, gen.markdown(rng, spec, gen.note_bytes(rng))))
    out: dict[str, Any] = {"writes": count}
    phases.reset()
    with profiled(profile, f"{2 * count} single-note writes at {size} notes"):
        for kind, docs in (("new", new_docs), ("update", updates)):
            times = []
            for path, markdown in docs:
                start = time.perf_counter()
                outcome = svc.vault.write(caller, path, markdown)
                times.append((time.perf_counter() - start) * 1000.0)
                assert outcome.changed
            out[f"write_{kind}_p50"] = percentile_nearest_rank(times, 50)
            out[f"write_{kind}_p99"] = percentile_nearest_rank(times, 99)
            out[f"write_{kind}_phases_ms"] = {
                k: v * 1000.0 / count for k, v in phases.reset().items()
            }
    log(
        f"[{size}] writes: new p50 {out['write_new_p50']:.1f} ms, update p50"
        f" {out['write_update_p50']:.1f} ms"
    )
    return out


# ---------------------------------------------------------------------- the table
def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"machine: nproc={usable} ({cpu}), {platform.system()} {platform.release()},"
        f" python {platform.python_version()}, sqlite {sqlite3.sqlite_version}"
    )


def print_table(results: list[dict[str, Any]]) -> None:
    sizes = [r["size"] for r in results]
    labels = [f"{s // 1000}k" if s % 1000 == 0 else str(s) for s in sizes]
    rows: list[tuple[str, list[str], str]] = []

    def row(label: str, fmt: Callable[[dict[str, Any]], str], target: str = "") -> None:
        rows.append((label, [fmt(r) for r in results], target))

    def ms(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: f"{r[key]:.2f}"

    def ratio(a: str, b: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: f"{r[a] / r[b]:.2f}x"

    row("vault: markdown MB / zip MB", lambda r: f"{r['md_mb']:.1f} / {r['zip_mb']:.1f}")
    row("vault: SQLite file MB (after import)", lambda r: f"{r['db_mb']:.0f}")
    row("search: matching notes (median/query)", lambda r: f"{r['matched_all']:.0f}")
    row("search: passes x queries", lambda r: f"{r['search_reps']} x {r['search_queries']}")
    for pct in ("p50", "p99"):
        row(f"search {pct} ms: VaultService.search", ms(f"search_ours_all_{pct}"))
        row(f"search {pct} ms: SearchIndex.search only", ms(f"search_index_all_{pct}"))
        row(f"search {pct} ms: same, term counts afresh", ms(f"search_counting_all_{pct}"))
        row(f"search {pct} ms: raw FTS5 bm25 LIMIT 10", ms(f"search_raw_all_{pct}"))
        row(
            f"search {pct} ratio: ours / raw",
            ratio(f"search_ours_all_{pct}", f"search_raw_all_{pct}"),
            f"<= {TARGET_SEARCH_RATIO}x at 10k",
        )
    for cls in ("1-word", "2-3 words", "sentence"):
        row(
            f"  {cls}: p50 ms ours / raw (matches)",
            lambda r, c=cls: (
                f"{r[f'search_ours_{c}_p50']:.2f} / {r[f'search_raw_{c}_p50']:.2f}"
                f" ({r[f'matched_{c}']:.0f})"
            ),
        )
    for kind in ("new", "update"):
        row(
            f"write ({kind} note) p50 / p99 ms",
            lambda r, k=kind: f"{r[f'write_{k}_p50']:.1f} / {r[f'write_{k}_p99']:.1f}",
        )
    row(
        "import: seconds",
        lambda r: f"{r['import_seconds']:.2f}",
        f"< {TARGET_IMPORT_SECONDS:.0f} s at 10k/~50MB",
    )
    row("import: CPU seconds (this process)", lambda r: f"{r['import_cpu_seconds']:.2f}")
    row("import: notes/s", lambda r: f"{r['size'] / r['import_seconds']:,.0f}")
    row("import: MB/s (markdown)", lambda r: f"{r['md_mb'] / r['import_seconds']:.1f}")
    row("re-import of the export (unchanged) s", lambda r: f"{r['reimport_seconds']:.2f}")
    row("export: seconds", lambda r: f"{r['export_seconds']:.2f}")
    row("export: notes/s", lambda r: f"{r['export_notes'] / r['export_seconds']:,.0f}")
    row("export: MB/s (markdown)", lambda r: f"{r['export_mb'] / r['export_seconds']:.1f}")
    row("peak RSS MB (whole size run)", lambda r: f"{r['peak_rss_mb']:.0f}")

    width = max(len(label) for label, _, _ in rows) + 2
    cols = [max(len(lab), *(len(v[i]) for _, v, _ in rows)) + 2 for i, lab in enumerate(labels)]
    header = "metric".ljust(width) + "".join(
        lab.rjust(c) for lab, c in zip(labels, cols, strict=True)
    )
    print(header + "  target")
    print("-" * (len(header) + 24))
    for label, values, target in rows:
        cells = "".join(v.rjust(c) for v, c in zip(values, cols, strict=True))
        print(label.ljust(width) + cells + (f"  {target}" if target else ""))

    print("\nwhere the time goes (wall time inside wrapped methods; indented rows are inside")
    print("the row above; writes are means per write)")
    labels_in_order = list(dict.fromkeys(label for _, label in PHASES))

    def show(title: str, phases: dict[str, float], scale: float) -> None:
        print(f"  {title}")
        for label in labels_in_order:
            if label in phases:
                print(f"      {label:<36}{phases[label] * scale:10.2f} ms")

    for r in results:
        show(f"{r['size']} notes, import ({r['import_seconds']:.2f} s):", r["import_phases"], 1e3)
        for kind in ("new", "update"):
            show(f"{r['size']} notes, write ({kind}):", r[f"write_{kind}_phases_ms"], 1.0)


# ---------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=None, help="comma-separated note counts")
    parser.add_argument("--quick", action="store_true", help="1k notes, fewer repetitions")
    parser.add_argument("--profile", action="store_true", help="cProfile import and writes")
    parser.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child: one size
    args = parser.parse_args()

    if args.one is not None:
        print(json.dumps(bench_size(args.one, quick=args.quick, profile=args.profile)))
        return

    sizes = [int(s) for s in (args.sizes or ("1000" if args.quick else "1000,10000")).split(",")]
    print(machine(), flush=True)
    results = []
    for size in sizes:
        cmd = [sys.executable, __file__, "--one", str(size)]
        cmd += ["--quick"] * args.quick + ["--profile"] * args.profile
        start = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
        results.append(json.loads(done.stdout))
        log(f"[{size}] done in {time.perf_counter() - start:.0f} s")
    print()
    print_table(results)
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
