"""Writers of one organisation at once on DynamoDB: how often their transactions collide.

    .venv/bin/python bench/aws_conflicts.py                 # 16 writers, 5 rounds
    .venv/bin/python bench/aws_conflicts.py --writers 32 --rounds 3 --window 0.01

moto in process with ``TransactionConflicts`` (tests/support/aws.py): each transaction
holds its items for ``--window`` seconds while other requests run, and a write touching a
held item meanwhile is refused as DynamoDB refuses it. Each round, ``--writers`` threads
write distinct new notes of one account at the same moment, straight through the store's
commit (no OpenSearch). It runs once with the quota in one item (``QUOTA_SHARDS`` = 1:
the hot account item every commit used to update) and once with the shards (ADR 0033),
and prints per commit: refused transactions (each one sent again after a jittered
pause), DynamoDB requests, and the wall time of a round. Target: refusals per commit well
below the single item's; every write succeeds either way (retries absorb them), the
figures say what they cost. Figures are moto's with a simulated hold, not AWS's.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

# common first among bench's own: it puts the repo root on sys.path (tests.support).
from common import log
from memvault.adapters.aws import keys, quota
from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.clients import make_client
from memvault.adapters.aws.dynamo import Table
from memvault.adapters.aws.store import DynamoVaultStore
from memvault.domain.models import Account, Limits
from memvault.services.vault import build_put
from tests.support.aws import REGION, TransactionConflicts, create_resources, serial_moto

SHARDS = keys.QUOTA_SHARDS


def run(shards: int, writers: int, rounds: int, window: float) -> dict[str, float]:
    keys.QUOTA_SHARDS = quota.SHARDS = shards
    conflicts = TransactionConflicts(window=window)
    with serial_moto(conflicts=conflicts):
        table_name, bucket = create_resources()
        table = Table(make_client("dynamodb", REGION), table_name)
        store = DynamoVaultStore(table, BodyStore(make_client("s3", REGION), bucket))
        store.create_account(
            Account(id="org", name="org", created_at=0.0, limits=Limits(100_000, 1 << 30))
        )
        walls: list[float] = []
        for r in range(rounds):
            barrier = threading.Barrier(writers)
            failures: list[BaseException] = []

            def write(
                i: int,
                r: int = r,
                barrier: threading.Barrier = barrier,
                failures: list[BaseException] = failures,
            ) -> None:
                barrier.wait()
                try:
                    store.commit("org", [build_put(f"r{r}/w{i}.md", f"note {i}")], now=1.0)
                except BaseException as exc:  # reported below
                    failures.append(exc)

            threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
            requests_before = table.requests
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            walls.append(time.perf_counter() - t0)
            if failures:
                raise SystemExit(f"{len(failures)} writes failed: {failures[0]!r}")
            log(f"shards={shards} round {r}: {table.requests - requests_before} requests")
        commits = writers * rounds
        return {
            "refused per commit": sum(conflicts.refused.values()) / commits,
            "requests per commit": table.requests / commits,
            "round wall ms (median)": statistics.median(walls) * 1000,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--window", type=float, default=0.004, help="a transaction's hold, s")
    parser.add_argument("--shards", type=int, default=SHARDS, help="shards to compare with one")
    args = parser.parse_args()
    one = run(1, args.writers, args.rounds, args.window)
    sharded = run(args.shards, args.writers, args.rounds, args.window)
    print(f"{args.writers} writers x {args.rounds} rounds, hold {args.window * 1000:.0f} ms")
    print(f"{'':<26}{'one item':>12}{f'{args.shards} shards':>12}")
    for name in one:
        print(f"{name:<26}{one[name]:>12.2f}{sharded[name]:>12.2f}")


if __name__ == "__main__":
    main()
