"""SQLite vector search: memvault's exact float32 store against sqlite-vec (ADR 0025).

Both engines hold the same chunks (random unit vectors, 256 dimensions, in two accounts of
``--chunks`` each) and answer the same queries: the 10 nearest chunks of one account and
one model. Figures: p50/p99 of a search with the account's matrix in memory, the first
search after a write (the matrix read again), and the time to store the chunks.

    .venv/bin/python bench/vectors.py [--chunks 10000 100000] [--sqlite-vec-python PY]

memvault's adapter runs in this interpreter. sqlite-vec is a loadable extension: it runs
in a subprocess of ``--sqlite-vec-python`` (default: this one), which needs numpy,
sqlite-vec 0.1.9 and a sqlite3 module built with extension loading (pyenv's builds often
are not; Debian's python3 is).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 256
QUERIES = 100
LIMIT = 10
MODEL = "bench-model"


def unit_rows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, DIM)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def timed(fn, queries: np.ndarray) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for q in queries:
        started = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - started) * 1000)
    return out


# ---------------------------------------------------------------------- memvault's store
def run_memvault(n: int) -> dict[str, float]:
    import common  # noqa: F401  (sys.path: the repo root first)
    from memvault.adapters.sqlite.db import Database
    from memvault.adapters.sqlite.vectors import SqliteVectorIndex
    from memvault.ports import ChunkVector

    with tempfile.TemporaryDirectory() as tmp:
        index = SqliteVectorIndex(Database(Path(tmp) / "v.sqlite3"))
        started = time.perf_counter()
        for account, seed in (("a", 1), ("b", 2)):
            rows = unit_rows(n, seed)
            per_note = 5
            for note in range(n // per_note):
                chunks = [
                    ChunkVector(
                        note_id=f"n{note}",
                        path=f"f{note % 10}/n{note}.md",
                        chunk_index=i,
                        heading="",
                        offset=i * 100,
                        length=100,
                        text="x" * 100,
                        tags=("t",) if note % 2 else (),
                        vector=rows[note * per_note + i].tolist(),
                        model=MODEL,
                        updated_at=0.0,
                    )
                    for i in range(per_note)
                ]
                index.upsert_chunks(account, f"f{note % 10}/n{note}.md", chunks)
        store_s = time.perf_counter() - started
        queries = unit_rows(QUERIES, 3)

        def search(q: np.ndarray, **kw: object) -> None:
            index.nearest("a", q.tolist(), model=MODEL, limit=LIMIT, **kw)  # type: ignore[arg-type]

        cold = timed(search, queries[:1])[0]
        warm = timed(search, queries)
        folder = timed(lambda q: search(q, folder="f3/"), queries)
        # The first search after a write reads the account's matrix again.
        after_write = []
        for q in queries[:10]:
            index.delete_notes("a", ["f0/n0.md"])
            after_write.extend(timed(search, q[None, :]))
        # Matmul alone over the same matrix: the floor of exact search.
        matrix = index._matrix("a", MODEL)
        assert matrix is not None
        floor = timed(lambda q: np.argpartition(-(matrix.vectors @ q), LIMIT)[:LIMIT], queries)
    return {
        "store_s": store_s,
        "cold_ms": cold,
        "p50_ms": pct(warm, 50),
        "p99_ms": pct(warm, 99),
        "folder_p50_ms": pct(folder, 50),
        "after_write_p50_ms": pct(after_write, 50),
        "matmul_p50_ms": pct(floor, 50),
    }


# ---------------------------------------------------------------------- sqlite-vec
def run_sqlite_vec(n: int) -> dict[str, float]:
    import sqlite_vec

    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "v.sqlite3", isolation_level=None)
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(
            "CREATE VIRTUAL TABLE chunks USING vec0(account_id text partition key,"
            f" model text, folder text, embedding float[{DIM}] distance_metric=cosine)"
        )
        started = time.perf_counter()
        rowid = 0
        for account, seed in (("a", 1), ("b", 2)):
            rows = unit_rows(n, seed)
            conn.execute("BEGIN")
            for i, row in enumerate(rows):
                rowid += 1
                conn.execute(
                    "INSERT INTO chunks (rowid, account_id, model, folder, embedding)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (rowid, account, MODEL, f"f{(i // 5) % 10}/", row.tobytes()),
                )
            conn.execute("COMMIT")
        store_s = time.perf_counter() - started
        queries = unit_rows(QUERIES, 3)
        sql = (
            "SELECT rowid, distance FROM chunks WHERE embedding MATCH ? AND k = ?"
            " AND account_id = ? AND model = ?"
        )

        def search(q: np.ndarray) -> None:
            conn.execute(sql, (q.tobytes(), LIMIT, "a", MODEL)).fetchall()

        def in_folder(q: np.ndarray) -> None:
            conn.execute(
                sql + " AND folder = ?", (q.tobytes(), LIMIT, "a", MODEL, "f3/")
            ).fetchall()

        cold = timed(search, queries[:1])[0]
        warm = timed(search, queries)
        folder = timed(in_folder, queries)
        after_write = []
        for q in queries[:10]:
            rowid += 1
            conn.execute(
                "INSERT INTO chunks (rowid, account_id, model, folder, embedding)"
                " VALUES (?, 'a', ?, 'f0/', ?)",
                (rowid, MODEL, q.tobytes()),
            )
            after_write.extend(timed(search, q[None, :]))
    return {
        "store_s": store_s,
        "cold_ms": cold,
        "p50_ms": pct(warm, 50),
        "p99_ms": pct(warm, 99),
        "folder_p50_ms": pct(folder, 50),
        "after_write_p50_ms": pct(after_write, 50),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--sqlite-vec-python", default=sys.executable)
    parser.add_argument("--engine", choices=["memvault", "sqlite-vec"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:  # one engine, one size, as JSON (the subprocess side)
        run = run_memvault if args.engine == "memvault" else run_sqlite_vec
        print(json.dumps(run(args.chunks[0])))
        return
    print(f"{DIM} dimensions, 2 accounts, {QUERIES} queries, k = {LIMIT}")
    print(
        "| chunks per account | engine | p50 | p99 | in a folder p50 | after a write p50 |"
        " first search | store all | matmul alone p50 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n in args.chunks:
        results: dict[str, dict[str, float] | str] = {"memvault": run_memvault(n)}
        done = subprocess.run(
            [args.sqlite_vec_python, __file__, "--engine", "sqlite-vec", "--chunks", str(n)],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            results["sqlite-vec 0.1.9"] = json.loads(done.stdout)
        else:
            results["sqlite-vec 0.1.9"] = done.stderr.strip().splitlines()[-1]
        for engine, r in results.items():
            if isinstance(r, str):
                print(f"| {n:,} | {engine} | not run: {r} |")
                continue
            floor = f"{r['matmul_p50_ms']:.2f} ms" if "matmul_p50_ms" in r else "-"
            print(
                f"| {n:,} | {engine} | {r['p50_ms']:.2f} ms | {r['p99_ms']:.2f} ms |"
                f" {r['folder_p50_ms']:.2f} ms | {r['after_write_p50_ms']:.2f} ms |"
                f" {r['cold_ms']:.1f} ms | {r['store_s']:.1f} s | {floor} |"
            )
        mv, sv = results["memvault"], results["sqlite-vec 0.1.9"]
        if isinstance(mv, dict) and isinstance(sv, dict):
            print(
                f"| {n:,} | ratio sqlite-vec / memvault | {sv['p50_ms'] / mv['p50_ms']:.1f}x |"
                f" | {sv['folder_p50_ms'] / mv['folder_p50_ms']:.1f}x |"
                f" {sv['after_write_p50_ms'] / mv['after_write_p50_ms']:.2f}x | | | |"
            )


if __name__ == "__main__":
    main()
