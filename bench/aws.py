"""AWS backend bench: storage requests per API operation, and latency on moto + a local node.

    .venv/bin/python bench/aws.py --start-node              # starts/stops its own node
    .venv/bin/python bench/aws.py --opensearch-url http://127.0.0.1:9200
    .venv/bin/python bench/aws.py --start-node --notes 500 --runs 20   # quicker

DynamoDB and S3 are moto, in process (tests/support/aws.py: the table from template.yaml);
OpenSearch is a real local single node (scripts/opensearch/start.sh). The latencies are
therefore moto + local-node figures, NOT AWS figures. What carries over to AWS is the
number of requests each operation makes: on AWS every DynamoDB, S3 and OpenSearch
request is the cost driver. Targets: a note read makes <= 3 storage requests, a write
<= 6, indexing excluded.

A synthetic vault (bench/synth.py) is imported through TransferService.import_zip (the
journaled bulk path of adapters/aws/bulk.py), then each operation runs N times through
the service layer and through the REST API on a real uvicorn server on 127.0.0.1.
Recall (what the gateway does before dispatch for a key with recall on) has no REST call
of its own: it runs through the service layer only, each time for a new message.
Requests are counted on the boto3 clients (botocore ``before-call``: one per API call)
and on the OpenSearch transport, each tagged with the DynamoVaultStore and Table/BodyStore
methods that made it and with the phase it ran in:

- ``auth``: resolving the API key (REST only), ``budget``: the budget charge;
- ``op``: reads the service makes itself, ``commit``: inside store.commit;
- ``index``: inside IndexSync.after_commit, after the commit has returned.

"storage" is every DynamoDB/S3 request outside ``index``; "indexing" is every request
inside it (OpenSearch bulk calls and the storage reads IndexSync makes for link counts);
"search OS" is the OpenSearch requests of the operation itself (a search query).
Budgets are made huge so they never refuse (their UpdateItem is still made and counted).
OpenSearch refresh is the deployed default, ``wait_for`` (``--refresh`` to change it):
each bulk request of a write then waits for the node's next refresh (~1 s).
"""

from __future__ import annotations

import argparse
import inspect
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import httpx

# common first among bench's own: it puts the repo root on sys.path (tests.support).
from common import ROOT, log, percentile_nearest_rank
from memvault.adapters.aws.search import OpenSearchIndex
from memvault.adapters.aws.search import make_client as make_search_client
from memvault.api.app import create_app
from memvault.container import Services, build_services
from memvault.domain.models import VERSIONS_KEPT
from memvault.domain.recall import RecallBlock
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from memvault.services.recall import RecallService
from memvault.services.vault import build_put
from memvault.settings import Settings
from synth import VaultGenerator
from tests.support.aws import REGION, create_resources, serial_moto
from tests.support.opensearch import ENV_VAR as ENV_URL
from tests.support.opensearch import probe
from tests.support.servers import serve_app

SEED = 1
TARGETS = {"read": 3, "write": 6}  # storage requests per operation, indexing excluded
NODE_SCRIPTS = ROOT / "scripts" / "opensearch"
LAYERS = ("service", "rest")
NOT_AWS = (
    "LATENCIES ARE moto (in-process DynamoDB + S3) + A LOCAL SINGLE-NODE OPENSEARCH ON THIS"
    " MACHINE, NOT AWS FIGURES.\nRequest counts are what the same code sends to AWS."
)


# ---------------------------------------------------------------------- the node
def free_node_port(first: int) -> int:
    """The first port from ``first`` that nothing listens on (HTTP only; transport is
    left to OpenSearch's own 9300-9400 search)."""
    for port in range(first, first + 20):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port in {first}-{first + 19} for the OpenSearch node")


@contextmanager
def started_node(port: int) -> Iterator[str]:
    """scripts/opensearch/start.sh on ``port``, stopped (stop.sh) on the way out."""
    env = {
        **os.environ,
        "OPENSEARCH_PORT": str(port),
        "OPENSEARCH_PIDFILE": str(Path(tempfile.gettempdir()) / f"memvault-bench-os-{port}.pid"),
    }
    log(f"starting the OpenSearch node on 127.0.0.1:{port} (scripts/opensearch/start.sh)")
    done = subprocess.run(
        ["bash", str(NODE_SCRIPTS / "start.sh")],
        env=env,
        stdout=sys.stderr,
        stderr=sys.stderr,
        check=False,
    )
    if done.returncode != 0:
        log(f"error: scripts/opensearch/start.sh failed (exit {done.returncode}); see above")
        if done.returncode != 3:  # 3: a prerequisite is missing, nothing was started
            subprocess.run(["bash", str(NODE_SCRIPTS / "stop.sh")], env=env, check=False)
        raise SystemExit(2)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        log("stopping the OpenSearch node (scripts/opensearch/stop.sh)")
        subprocess.run(
            ["bash", str(NODE_SCRIPTS / "stop.sh")],
            env=env,
            stdout=sys.stderr,
            stderr=sys.stderr,
            check=False,
        )


# ---------------------------------------------------------------------- counting
# (phase, DynamoVaultStore method, Table/BodyStore method, request): "-" when none.
Key = tuple[str, str, str, str]


@dataclass
class Sample:
    ms: float
    counts: Counter[Key]


class Meter:
    """Counts every DynamoDB, S3 and OpenSearch request of the services, by phase and by
    the DynamoVaultStore and Table/BodyStore methods that made it (the innermost one of
    each; wrappers on these instances only, nothing else is changed)."""

    WRAPPED_TABLE = (
        "get",
        "batch_get",
        "query",
        "transact",
        "transact_once",
        "batch_write",
        "update",
        "put",
    )
    WRAPPED_BODIES = ("get", "put", "delete_quietly", "delete_versions_quietly")
    # Besides the store's public methods: the steps of a commit worth telling apart.
    WRAPPED_STORE_PRIVATE = (
        "_plan",
        "_plan_move",
        "_tombs_for",
        "_write_links",
        "_delete_trimmed_bodies",
    )

    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.counts: Counter[Key] = Counter()
        self.stacks: dict[str, list[str]] = {"phase": ["op"], "store": ["-"], "method": ["-"]}
        store: Any = svc.store
        self.table, self.bodies = store.table, store.bodies
        self.table.client.meta.events.register("before-call", self._aws("DynamoDB"))
        self.bodies.client.meta.events.register("before-call", self._aws("S3"))
        for name in self.WRAPPED_TABLE:
            self._wrap(self.table, name, "method", f"Table.{name}")
        for name in self.WRAPPED_BODIES:
            self._wrap(self.bodies, name, "method", f"BodyStore.{name}")
        public = [n for n in dir(type(store)) if not n.startswith("_")]
        for name in [*public, *self.WRAPPED_STORE_PRIVATE]:
            if callable(getattr(type(store), name, None)):
                self._wrap(store, name, "store", f"store.{name}")
        self._wrap(svc.accounts, "authenticate", "phase", "auth")
        self._wrap(svc.limiter, "take", "store", "limiter.take")
        self._wrap(svc.limiter, "take", "phase", "budget")
        self._wrap(svc.store, "commit", "phase", "commit")
        self._wrap(svc.vault.indexing, "after_commit", "phase", "index")
        transport: Any = svc.index.client.transport  # type: ignore[attr-defined]
        inner = transport.perform_request
        index_name = svc.settings.opensearch_index

        def perform_request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            path = url.split("?", 1)[0].replace(index_name, "{index}")
            self.counts[(self.stacks["phase"][-1], "-", "-", f"OpenSearch {method} {path}")] += 1
            return inner(method, url, *args, **kwargs)

        transport.perform_request = perform_request

    def _aws(self, service: str) -> Callable[..., None]:
        def count(model: Any = None, **_: Any) -> None:
            phase, store, method = (self.stacks[k][-1] for k in ("phase", "store", "method"))
            self.counts[(phase, store, method, f"{service} {model.name}")] += 1

        return count

    def _wrap(self, obj: Any, name: str, stack_name: str, label: str) -> None:
        inner = getattr(obj, name)
        stack = self.stacks[stack_name]
        if inspect.isgeneratorfunction(inner):

            def wrapped_gen(*args: Any, **kwargs: Any) -> Iterator[Any]:
                gen = inner(*args, **kwargs)
                while True:
                    stack.append(label)  # pages are fetched inside next()
                    try:
                        item = next(gen)
                    except StopIteration:
                        return
                    finally:
                        stack.pop()
                    yield item

            setattr(obj, name, wrapped_gen)
            return

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            stack.append(label)
            try:
                return inner(*args, **kwargs)
            finally:
                stack.pop()

        setattr(obj, name, wrapped)

    @contextmanager
    def measure(self) -> Iterator[Counter[Key]]:
        """The requests made inside the block (the counters are checked against
        Table.requests and BodyStore.requests, which count attempts the same way)."""
        self.counts = Counter()
        ddb, s3 = self.table.requests, self.bodies.requests
        out: Counter[Key] = Counter()
        yield out
        out.update(self.counts)
        seen = split(out)
        if (seen["ddb"], seen["s3"]) != (self.table.requests - ddb, self.bodies.requests - s3):
            log(
                f"warning: counted {seen['ddb']} DynamoDB / {seen['s3']} S3 requests, the"
                f" adapters counted {self.table.requests - ddb} / {self.bodies.requests - s3}"
            )


def split(counts: Counter[Key]) -> dict[str, int]:
    """Totals by service and by storage / indexing / search."""
    out: dict[str, int] = defaultdict(int)
    for (phase, _store, _method, call), n in counts.items():
        service = call.split(" ", 1)[0]
        kind = {"DynamoDB": "ddb", "S3": "s3", "OpenSearch": "os"}[service]
        out[kind] += n
        if phase == "index":
            out[f"index_{kind}"] += n
        elif kind == "os":
            out["search_os"] += n
        else:
            out[f"storage_{kind}"] += n
    out["storage"] = out["storage_ddb"] + out["storage_s3"]
    out["indexing"] = out["index_ddb"] + out["index_s3"] + out["index_os"]
    return out


# ---------------------------------------------------------------------- operations
def url_path(path: str) -> str:
    return quote(path, safe="/")


@dataclass
class Op:
    name: str
    target: str  # "read", "write" or ""
    service: Callable[[int], object]
    rest: Callable[[int], httpx.Response] | None  # None: no REST call of its own
    note: str = ""
    sized: bool = False  # record how many results each call returned
    sizes: list[int] = field(default_factory=list)
    samples: dict[str, list[Sample]] = field(default_factory=lambda: {k: [] for k in LAYERS})


def build_ops(
    svc: Services, http: httpx.Client, secret: str, gen: VaultGenerator, runs: int, warm: int
) -> list[Op]:
    caller = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
    # Recall runs as the gateway runs it: the memory-tools surface, search not charged.
    tools_caller = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.TOOLS)
    recaller = RecallService(svc.vault)
    rng = random.Random(f"aws-bench-{SEED}")
    per_layer = runs + warm
    # Mutations take notes from past the popular link targets, each op its own notes.
    pool = [spec.path for spec in gen.notes[min(300, len(gen.notes) // 10) :]]
    rng.shuffle(pool)

    def take(n: int) -> list[str]:
        out = pool[:n]
        del pool[:n]
        return out

    reads = {layer: take(per_layer) for layer in LAYERS}
    updates = {layer: take(per_layer) for layer in LAYERS}
    appends = {layer: take(per_layer) for layer in LAYERS}
    deletes = {layer: take(per_layer) for layer in LAYERS}
    # Backlinks of fairly popular notes (synth skews links towards low indices).
    popular = [spec.path for spec in gen.notes[5 : 5 + 2 * per_layer]]
    pool = [p for p in pool if p not in set(popular)]
    targets = {"service": popular[0::2], "rest": popular[1::2]}
    queries = [text for _cls, text in gen.queries()]
    specs = {spec.path: spec for spec in gen.notes}

    def fresh(path: str) -> str:
        spec = specs.get(path) or type(gen.notes[0])(path, Path(path).stem)
        return gen.markdown(rng, spec, gen.note_bytes(rng))

    new_docs = {
        layer: [(f"bench/new/New note {layer} {i}.md", "") for i in range(per_layer)]
        for layer in LAYERS
    }
    for layer in LAYERS:
        new_docs[layer] = [(p, fresh(p)) for p, _ in new_docs[layer]]
    update_docs = {layer: [(p, fresh(p)) for p in updates[layer]] for layer in LAYERS}

    # Moves: per run, a fresh target and ``n`` notes linking to it; the move renames the
    # target, so the links in the other notes are rewritten in the same commit.
    move_links = (0, 1, 3)

    def move_paths(layer: str, n: int, i: int) -> tuple[str, list[str], str]:
        tag = f"{layer[0]}{n}x{i}"
        return (
            f"bench/move/Move target {tag}.md",
            [f"bench/move/Move source {tag} {k}.md" for k in range(n)],
            f"bench/move/Moved target {tag}.md",
        )

    setup = []
    for layer in LAYERS:
        for n in move_links:
            for i in range(per_layer):
                target, sources, _new = move_paths(layer, n, i)
                setup.append(build_put(target, fresh(target)))
                for source in sources:
                    body = fresh(source) + f"\nSee [[{Path(target).stem}]] for the details.\n"
                    setup.append(build_put(source, body))
    log(f"setup: {len(setup)} notes for the moves, in one commit")
    svc.vault.commit(caller, setup)

    # Long-lived notes: one per layer, brought to VERSIONS_KEPT versions (straight
    # through the store: their search docs do not matter), then updated run after run,
    # so every measured update trims the oldest kept version, as on a busy note.
    long_lived = {layer: take(1)[0] for layer in LAYERS}
    for path in long_lived.values():
        for _ in range(VERSIONS_KEPT - 1):
            svc.store.commit(LOCAL_ACCOUNT_ID, [build_put(path, fresh(path))], now=time.time())
    long_docs = {layer: [fresh(p) for _ in range(per_layer)] for layer, p in long_lived.items()}

    def ok(resp: httpx.Response) -> httpx.Response:
        if resp.status_code >= 300:
            raise RuntimeError(f"{resp.request.method} {resp.request.url}: {resp.text[:300]}")
        return resp

    def notes_url(path: str, suffix: str = "") -> str:
        return f"/v1/notes/{url_path(path)}{suffix}"

    def put(path: str, markdown: str, version: int | None = None) -> httpx.Response:
        """PUT /v1/notes/{path}, with If-Match ``version`` when given."""
        headers = {"Content-Type": "text/markdown"}
        if version is not None:
            headers["If-Match"] = f'"{version}"'
        return ok(http.put(notes_url(path), content=markdown.encode(), headers=headers))

    def move_op(n: int) -> Op:
        def service(i: int) -> object:
            old, _sources, new = move_paths("service", n, i)
            return svc.vault.move(caller, old, new)

        def rest(i: int) -> httpx.Response:
            old, _sources, new = move_paths("rest", n, i)
            return ok(http.post(notes_url(old, "/move"), json={"to": new}))

        return Op(
            f"move, {n} backlinks rewritten (POST .../move)",
            "write" if n == 0 else "",  # the <= 6 target is for a plain move
            service,
            rest,
            f"a {n + 1}-note commit: the moved note and the {n} notes linking to it",
        )

    return [
        Op(
            "auth only (GET /v1/me)",
            "",
            lambda i: svc.accounts.authenticate(secret),
            lambda i: ok(http.get("/v1/me")),
            "service = AccountService.authenticate",
        ),
        Op(
            "read note (GET /v1/notes/{path})",
            "read",
            lambda i: svc.vault.read(caller, reads["service"][i]),
            lambda i: ok(http.get(notes_url(reads["rest"][i]))),
        ),
        Op(
            "write new note (PUT)",
            "write",
            lambda i: svc.vault.write(caller, *new_docs["service"][i]),
            lambda i: put(*new_docs["rest"][i]),
        ),
        Op(
            "update note (PUT, If-Match)",
            "write",
            lambda i: svc.vault.write(caller, *update_docs["service"][i], expected_version=1),
            lambda i: put(*update_docs["rest"][i], version=1),
        ),
        Op(
            f"update past {VERSIONS_KEPT} versions (PUT, If-Match)",
            "write",
            lambda i: svc.vault.write(
                caller,
                long_lived["service"],
                long_docs["service"][i],
                expected_version=VERSIONS_KEPT + i,
            ),
            lambda i: put(long_lived["rest"], long_docs["rest"][i], VERSIONS_KEPT + i),
            "one note per layer, updated run after run: each update trims its oldest version",
        ),
        Op(
            "append (POST .../append)",
            "write",
            lambda i: svc.vault.append(caller, appends["service"][i], f"- appended line {i}"),
            lambda i: ok(
                http.post(
                    notes_url(appends["rest"][i], "/append"), json={"text": f"- appended {i}"}
                )
            ),
        ),
        Op(
            "delete (DELETE)",
            "write",
            lambda i: svc.vault.delete(caller, deletes["service"][i]),
            lambda i: ok(http.delete(notes_url(deletes["rest"][i]))),
        ),
        *[move_op(n) for n in move_links],
        Op(
            "list notes, one page of 100 (GET /v1/notes)",
            "",
            lambda i: svc.vault.list_notes(caller, limit=100),
            lambda i: ok(http.get("/v1/notes", params={"limit": 100})),
            "the first page",
        ),
        Op(
            "search (GET /v1/search)",
            "",
            lambda i: svc.vault.search(caller, queries[i % len(queries)]),
            lambda i: ok(http.get("/v1/search", params={"q": queries[i % len(queries)]})),
            f"{len(queries)} synth queries in turn (1 word to a sentence)",
            sized=True,
        ),
        Op(
            "recall for a new message (no REST call)",
            "",
            lambda i: recaller.recall(
                tools_caller,
                f"What do my notes say about {queries[i % len(queries)]}? [zx{i}q]",
                max_notes=5,
                token_budget=2000,
            ),
            None,
            "RecallService.recall as the gateway calls it before dispatch, without the"
            " block memo: the search (the message's common words left out), the notes read"
            " in one go; notes recalled per call",
            sized=True,
        ),
        Op(
            "versions list (GET .../versions)",
            "",
            lambda i: svc.vault.versions(caller, updates["service"][i]),
            lambda i: ok(http.get(notes_url(updates["rest"][i], "/versions"))),
            "notes with 2 versions (the updated ones)",
        ),
        Op(
            "backlinks (GET .../backlinks)",
            "",
            lambda i: svc.vault.backlinks(caller, targets["service"][i]),
            lambda i: ok(http.get(notes_url(targets["rest"][i], "/backlinks"))),
            "popular notes",
            sized=True,
        ),
    ]


def run_ops(meter: Meter, ops: list[Op], runs: int, warm: int) -> None:
    for op in ops:
        start = time.perf_counter()
        for i in range(runs + warm):
            for layer in LAYERS:  # interleaved, so both layers see the same state
                fn = op.service if layer == "service" else op.rest
                if fn is None:
                    continue
                with meter.measure() as counts:
                    t0 = time.perf_counter()
                    result = fn(i)
                    ms = (time.perf_counter() - t0) * 1000.0
                if i >= warm:
                    op.samples[layer].append(Sample(ms, counts))
                if op.sized and i >= warm:
                    op.sizes.append(result_size(result))
        if op.sizes:
            op.note += f": {fmt_count(op.sizes)} results per call"
        log(f"{op.name}: {time.perf_counter() - start:.1f} s")


def result_size(result: object) -> int:
    if isinstance(result, RecallBlock) or result is None:
        return len(result.paths) if result else 0
    found: Any = result.json() if isinstance(result, httpx.Response) else result
    if isinstance(found, dict):
        found = found.get("results") or found.get("notes") or []
    return len(found)


# ---------------------------------------------------------------------- printing
def fmt_count(values: list[int]) -> str:
    text = f"{percentile_nearest_rank([float(v) for v in values], 50):g}"
    if max(values) != min(values):
        text += f" ({min(values)}-{max(values)})"
    return text


def print_results(ops: list[Op], runs: int) -> None:
    header = (
        f"{'operation':<44}{'layer':<9}{'p50 ms':>8}{'p99 ms':>9}  {'storage':<18}"
        f"{'target':<7}{'':<6}{'indexing':<24}{'search OS':>9}"
    )
    print(header)
    print(f"{'':<72}{'DDB+S3=total':<31}DDB+S3+OS=total")
    print("-" * len(header))
    misses: list[tuple[Op, str, int]] = []
    for op in ops:
        for layer in LAYERS:
            samples = op.samples[layer]
            if not samples:
                continue
            ms = [s.ms for s in samples]
            parts = [split(s.counts) for s in samples]

            def med(key: str, parts: list[dict[str, int]] = parts) -> int:
                return int(percentile_nearest_rank([p[key] for p in parts], 50))

            def col(key: str, parts: list[dict[str, int]] = parts) -> list[int]:
                return [p[key] for p in parts]

            storage = f"{med('storage_ddb')}+{med('storage_s3')}={fmt_count(col('storage'))}"
            indexing = (
                f"{med('index_ddb')}+{med('index_s3')}+{med('index_os')}"
                f"={fmt_count(col('indexing'))}"
            )
            target, verdict = "", ""
            if op.target:
                limit = TARGETS[op.target]
                target = f"<= {limit}"
                worst = max(col("storage"))
                verdict = "ok" if worst <= limit else "MISS"
                if verdict == "MISS":
                    misses.append((op, layer, limit))
            name = op.name if layer == "service" else ""
            p50, p99 = statistics.median(ms), percentile_nearest_rank(ms, 99)
            print(
                f"{name:<44}{layer:<9}{p50:>8.1f}{p99:>9.1f}"
                f"  {storage:<18}{target:<7}{verdict:<6}{indexing:<24}"
                f"{fmt_count(col('search_os')):>9}"
            )
    print(
        f"\n{runs} runs per operation and layer; request counts are medians, with the"
        " min-max over the runs when they vary."
        "\nrest = the same service call behind HTTP on uvicorn, plus the API key lookup."
    )
    notes = [f"  {op.name}: {op.note}" for op in ops if op.note]
    if notes:
        print("\n".join(notes))

    print("\nrequests by phase and method, mean per run (REST layer; the service layer makes")
    print("the same storage requests minus the [auth] GetItem, or is listed too):")
    print(f"      {'[phase ]':<8} {'store method':<26} {'Table/BodyStore':<34} request")
    for op in ops:
        if op.rest is None:
            print_breakdown(op.name + " (service layer)", op.samples["service"])
            continue
        print_breakdown(op.name, op.samples["rest"])
        if not same_but_auth(op):
            print_breakdown(op.name + " (service layer)", op.samples["service"])

    print()
    if not misses:
        print("every read and write is within its storage-request target")
    for op, layer, limit in misses:
        worst = max(split(s.counts)["storage"] for s in op.samples[layer])
        print(f"MISS: {op.name}, {layer} layer: up to {worst} storage requests > {limit}")


def mean_counts(samples: list[Sample]) -> dict[Key, float]:
    total: Counter[Key] = Counter()
    for s in samples:
        total.update(s.counts)
    return {k: v / len(samples) for k, v in total.items()}


PHASE_ORDER = {"auth": 0, "budget": 1, "op": 2, "commit": 3, "index": 4}


def print_breakdown(title: str, samples: list[Sample], scale: str = "") -> None:
    means = mean_counts(samples)
    print(f"  {title}{scale}")
    rows = sorted(means.items(), key=lambda kv: (PHASE_ORDER.get(kv[0][0], 9), kv[0][1:]))
    for (phase, store, method, call), n in rows:
        print(f"      [{phase:<6}] {store:<26} {method:<34} {call:<34} {n:7.2f}")


def same_but_auth(op: Op) -> bool:
    """Whether the service layer's storage requests are the REST layer's minus auth
    (indexing is left out: it depends on each note's links, which differ)."""

    def storage(layer: str) -> dict[Key, float]:
        means = mean_counts(op.samples[layer])
        return {k: round(v, 1) for k, v in means.items() if k[0] not in ("auth", "index")}

    return storage("rest") == storage("service")


# ---------------------------------------------------------------------- main
def bench(url: str, args: argparse.Namespace) -> None:
    gen = VaultGenerator(args.notes, seed=SEED)
    with (
        tempfile.TemporaryDirectory(prefix="memvault-aws-bench-") as tmp,
        serial_moto(lean=not args.plain_moto),
    ):
        zip_path = Path(tmp) / "vault.zip"
        notes, md_bytes = gen.write_zip(zip_path)
        log(f"generated {notes} notes, {md_bytes / 1e6:.1f} MB of markdown")
        table, bucket = create_resources()
        index_name = f"memvault-bench-{uuid.uuid4().hex[:12]}"
        settings = Settings(
            backend="aws",
            data_dir=Path(tmp) / "data",
            log_level="WARNING",
            aws_region=REGION,
            table=table,
            bucket=bucket,
            opensearch_url=url,
            opensearch_auth="none",
            opensearch_index=index_name,
            opensearch_refresh=args.refresh,
            budget_per_minute=1e9,
            budget_burst=1e9,
        )
        admin_index = OpenSearchIndex(
            make_search_client(url, auth="none", region=None, timeout=30.0), index_name
        )
        admin_index.create_index()
        try:
            svc = build_services(settings, clock=time.time)
            if args.no_key_cache:
                cast(Any, svc.store).key_cache_ttl = 0.0  # adapters/aws/key_cache.py
            issued = svc.accounts.bootstrap_local()
            assert issued is not None
            meter = Meter(svc)
            caller = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)

            log(f"importing {notes} notes through TransferService.import_zip ...")
            with meter.measure() as import_counts, zip_path.open("rb") as fh:
                start = time.perf_counter()
                report = svc.transfer.import_zip(caller, fh)
                import_seconds = time.perf_counter() - start
            assert report.created == notes, report
            log(f"imported in {import_seconds:.1f} s")

            with (
                serve_app(create_app(svc)) as base,
                httpx.Client(
                    base_url=base,
                    headers={"Authorization": f"Bearer {issued.secret}"},
                    timeout=120.0,
                    trust_env=False,
                ) as http,
            ):
                ops = build_ops(svc, http, issued.secret, gen, args.runs, args.warm)
                run_ops(meter, ops, args.runs, args.warm)
        finally:
            with suppress(Exception):
                admin_index.drop_index()

    print(NOT_AWS)
    print(
        f"\nvault: {notes} synthetic notes, {md_bytes / 1e6:.1f} MB of markdown;"
        f" OpenSearch refresh={args.refresh!r}; budgets huge (never refuse);"
        f" API key cache {'off' if args.no_key_cache else 'on (30 s)'}"
    )
    parts = split(import_counts)
    print(
        f"\nimport (TransferService.import_zip, journaled bulk commit): {import_seconds:.1f} s"
        f" ({notes / import_seconds:.0f} notes/s; moto + local node)"
    )
    print(
        f"  requests: DynamoDB {parts['ddb']}, S3 {parts['s3']}, OpenSearch {parts['os']}"
        f"  (storage {parts['storage']}, indexing {parts['indexing']})"
    )
    print_breakdown("import, requests by method and phase", [Sample(0.0, import_counts)])
    print()
    print_results(ops, args.runs)
    print("\n" + NOT_AWS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--opensearch-url",
        default=os.environ.get(ENV_URL, "").strip() or None,
        help=f"a running node (default: ${ENV_URL})",
    )
    parser.add_argument(
        "--start-node",
        action="store_true",
        help="start a node with scripts/opensearch/start.sh (and stop it at the end)",
    )
    parser.add_argument("--node-port", type=int, default=9270, help="first port to try")
    parser.add_argument("--notes", type=int, default=2000, help="vault size")
    parser.add_argument("--runs", type=int, default=50, help="measured runs per operation")
    parser.add_argument("--warm", type=int, default=3, help="unmeasured runs first")
    parser.add_argument(
        "--refresh",
        choices=("wait_for", "true", "false"),
        default="wait_for",
        help="MEMVAULT_OPENSEARCH_REFRESH for the run (default: the deployed default)",
    )
    parser.add_argument(
        "--no-key-cache",
        action="store_true",
        help="authenticate with a GetItem on every request (turn adapters/aws/key_cache.py off)",
    )
    parser.add_argument("--plain-moto", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.start_node:
        # A kill (SIGTERM) still runs stop.sh on the way out.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        with started_node(free_node_port(args.node_port)) as url:
            bench(url, args)
        return
    url = (args.opensearch_url or "").rstrip("/")
    if not url:
        log(
            f"error: no OpenSearch node: pass --opensearch-url, set {ENV_URL}, or use"
            " --start-node to start one (scripts/opensearch/start.sh)"
        )
        raise SystemExit(2)
    problem = probe(url)
    if problem:
        log(f"error: {problem}; start one with --start-node or scripts/opensearch/start.sh")
        raise SystemExit(2)
    bench(url, args)


if __name__ == "__main__":
    main()
