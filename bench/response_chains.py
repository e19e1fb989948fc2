"""What continuing a Responses answer through a chain link costs (ADR 0045), in process.

    .venv/bin/python bench/response_chains.py            # about ten seconds
    .venv/bin/python bench/response_chains.py --links 10000 --n 2000 --json

The gateway's own step (``gateway.chains.resume``, then the format's ``resumed``) on a
request as it is assembled, timed on the embedded backend's store (SQLite in a temp
file, the organisation holding ``--links`` links, the bound): a request without
``previous_response_id`` (every request that continues nothing), one whose id has no
link (one primary-key read), and one whose id is linked (the read and the rewrite, two
owed outputs); the check every answer with the memory tools makes once its last round
is in (``chain_link``, here with nothing to link: no rounds, nothing owed). Then a put
at the bound (one transaction: the ring slot emptied, the link stored, expired links
deleted), and the DynamoDB requests a lookup and a put make (counted on moto: its
latency says nothing of DynamoDB's). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

# common first among bench's own: it puts the repo root on sys.path (tests.support).
import common  # noqa: F401
from common import log, percentile_rounded
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.response_chains import SqliteResponseChains
from memvault.domain.response_chains import ChainLink, OwedOutput
from memvault.gateway import chains
from memvault.gateway.formats.base import Turn
from memvault.gateway.formats.responses import OpenAIResponses

ACCOUNT = "bench"
STEPS = (
    "no previous id",
    "previous id, no link",
    "previous id, linked",
    "answer, nothing to link",
    "put at the bound",
)
OWED = (OwedOutput("call_a", "wrote facts/Tea.md (version 1)"), OwedOutput("call_b", "not run"))


def _timed(fn: Any, n: int) -> dict[str, float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
    return {"p50_us": statistics.median(samples), "p99_us": percentile_rounded(samples, 99)}


def sqlite_figures(links: int, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="memvault-bench-chains-") as tmp:
        db = Database(Path(tmp) / "memvault.db")
        store = SqliteResponseChains(db, max_links=links)
        now = 1_780_000_000.0
        for i in range(links):
            store.put(ACCOUNT, f"resp_{i}", ChainLink(f"up_{i}", OWED, now + i), expires_at=1e12)
        services: Any = SimpleNamespace(response_chains=store)
        key: Any = SimpleNamespace(account_id=ACCOUNT)
        api = OpenAIResponses()
        fresh = {"model": "m", "input": "hello"}
        missing = {**fresh, "previous_response_id": "resp_nobody_linked"}
        linked = {**fresh, "previous_response_id": f"resp_{links // 2}"}
        assert chains.resume(services, api, key, linked, now=now) is not linked
        out = {
            "links": links,
            "no previous id": _timed(lambda: chains.resume(services, api, key, fresh, now=now), n),
            "previous id, no link": _timed(
                lambda: chains.resume(services, api, key, missing, now=now), n
            ),
            "previous id, linked": _timed(
                lambda: chains.resume(services, api, key, linked, now=now), n
            ),
        }
        last = Turn(raw={"id": "resp_x"})
        out["answer, nothing to link"] = _timed(
            lambda: api.chain_link(fresh, "resp_x", last, [], now), n
        )
        counter = iter(range(links, links + n))

        def put() -> None:
            i = next(counter)
            store.put(ACCOUNT, f"resp_{i}", ChainLink(f"up_{i}", OWED, now + i), expires_at=1e12)

        out["put at the bound"] = _timed(put, n)
        count = db.connection().execute("SELECT COUNT(*) FROM response_chain_links").fetchone()[0]
        out["rows after"] = count
        return out


def dynamo_requests() -> dict[str, int]:
    from memvault.adapters.aws.clients import make_client
    from memvault.adapters.aws.dynamo import Table
    from memvault.adapters.aws.response_chains import DynamoResponseChains
    from tests.support.aws import REGION, create_resources, serial_moto

    with serial_moto():
        table_name, _ = create_resources()
        table = Table(make_client("dynamodb", REGION, None), table_name)
        store = DynamoResponseChains(table, max_links=2)
        for i in range(3):  # the third evicts the first
            store.put(ACCOUNT, f"r{i}", ChainLink("up", OWED, float(i)), expires_at=1e12)
        before = table.requests
        store.put(ACCOUNT, "r3", ChainLink("up", OWED, 3.0), expires_at=1e12)
        put = table.requests - before
        before = table.requests
        store.get(ACCOUNT, "r3", now=0.0)
        return {"put (with an eviction)": put, "lookup": table.requests - before}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--links", type=int, default=10_000)
    parser.add_argument("--n", type=int, default=2_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    log(f"filling {args.links} links")
    out = {"sqlite": sqlite_figures(args.links, args.n), "dynamodb_requests": dynamo_requests()}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    sqlite = out["sqlite"]
    print(f"SQLite, one organisation at its bound of {sqlite['links']} links ({args.n} each):")
    print(f"{'step':<26}{'p50 us':>10}{'p99 us':>10}")
    for name in STEPS:
        row = sqlite[name]
        print(f"{name:<26}{row['p50_us']:>10.1f}{row['p99_us']:>10.1f}")
    print(f"rows after the puts: {sqlite['rows after']} (the bound holds)")
    print("DynamoDB requests:", ", ".join(f"{k} {v}" for k, v in out["dynamodb_requests"].items()))


if __name__ == "__main__":
    main()
