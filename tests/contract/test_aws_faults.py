"""AWS backend faults: failures injected into S3 and DynamoDB mid-import, throttling,
missing resources and a dead search node. The vault must stay exactly as it was.

These run on the AWS backend only (DynamoDB + S3 on moto, the real local OpenSearch node).
"""

from __future__ import annotations

import fcntl
import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from memvault.adapters.aws import bulk
from memvault.adapters.aws.search import OpenSearchIndex, make_client
from memvault.container import Services, build_services
from memvault.errors import Conflict, ServiceUnavailable
from memvault.services.context import Caller, Surface
from memvault.services.vault import build_put
from tests.support.aws import REGION
from tests.support.backends import aws_settings
from tests.support.clock import FakeClock

MARKER = "quokka"
EXISTING = 20
NEW = 100


@pytest.fixture
def backend() -> str:
    return "aws"


def archive() -> bytes:
    """120 notes: 100 new and 20 updates, four DynamoDB transactions' worth of items (a
    transaction holds 100), so a failure can fall in the first, a middle or the last one."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(EXISTING):
            zf.writestr(f"old/{i}.md", f"# Old {i}\n\nupdated by the import {MARKER}\n")
        for i in range(NEW):
            zf.writestr(f"new/{i}.md", f"# New {i}\n\n{MARKER} links to [[old/{i % EXISTING}]]\n")
    return buf.getvalue()


def seed(services: Services, user: Caller) -> None:
    """The vault before the import, in one commit: what the same writes one by one leave
    (tests/contract/test_bulk_commit.py), at a fraction of their DynamoDB requests."""
    olds = [
        build_put(f"old/{i}.md", f"# Old {i}\n\nbefore the import {MARKER}\n")
        for i in range(EXISTING)
    ]
    services.vault.commit(user, [*olds, build_put("keep.md", "[[old/0]] stays")])


def state(services: Services, user: Caller) -> dict[str, Any]:
    """Everything observable, and every stored item and object behind it."""
    store = services.store
    notes = {
        n.path: (services.vault.read(user, n.path).markdown, n.version)
        for n in services.vault.list_notes(user, limit=500).items
    }
    history = {p: [v.version for v in services.vault.versions(user, p)] for p in notes}
    account = services.accounts.get_account(user.account_id)
    ddb = boto3.client("dynamodb", region_name=REGION)
    items = sorted(
        (i["pk"]["S"], i["sk"]["S"])
        for i in ddb.scan(TableName=services.settings.table)["Items"]
        if not i["sk"]["S"].startswith("B#")  # budget buckets move with every request
    )
    s3 = boto3.client("s3", region_name=REGION)
    objects = sorted(
        o["Key"] for o in s3.list_objects_v2(Bucket=services.settings.bucket).get("Contents", [])
    )
    return {
        "notes": notes,
        "history": history,
        "counters": (account.note_count, account.total_bytes),
        "links": sorted((b.source_path, b.target_key) for b in store.all_links(user.account_id)),
        "search": sorted(h.path for h in services.vault.search(user, MARKER, limit=100)),
        "items": items,
        "objects": objects,
    }


def failing_on(call: int, original: Callable[..., Any], error: Exception) -> Callable[..., Any]:
    calls = {"n": 0}

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == call:
            raise error
        return original(*args, **kwargs)

    return wrapper


def s3_error() -> ClientError:
    return ClientError({"Error": {"Code": "AccessDenied", "Message": "injected"}}, "PutObject")


def ddb_error() -> ClientError:
    return ClientError(
        {"Error": {"Code": "ValidationException", "Message": "injected"}}, "TransactWriteItems"
    )


def import_archive(services: Services, user: Caller) -> Any:
    return services.transfer.import_zip(user, io.BytesIO(archive()))


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_an_s3_failure_mid_import_leaves_the_vault_as_it_was(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    seed(services, user)
    before = state(services, user)
    call = {"first": 1, "middle": (EXISTING + NEW) // 2, "last": EXISTING + NEW}[where]
    bodies = services.store.bodies  # type: ignore[attr-defined]
    monkeypatch.setattr(bodies, "put", failing_on(call, bodies.put, s3_error()))
    with pytest.raises(ClientError):
        import_archive(services, user)
    monkeypatch.undo()
    assert state(services, user) == before
    report = import_archive(services, user)  # the lock was released: it works now
    assert (report.created, report.updated) == (NEW, EXISTING)


@pytest.fixture(scope="module")
def transactions_per_import(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> int:
    """How many DynamoDB transactions the archive's import makes, counted on a probe vault
    once per run: under xdist the first worker to ask counts (about 2 s of CPU) and the
    others read its count (the three tests that use it start on different workers)."""
    if worker_id == "master":
        return _count_transactions(tmp_path_factory)
    # The run's own directory, shared by its workers (each has a basetemp inside it).
    shared = tmp_path_factory.getbasetemp().parent / "transactions_per_import"
    with (shared.parent / f"{shared.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not shared.exists():
            shared.write_text(str(_count_transactions(tmp_path_factory)))
        return int(shared.read_text())


def _count_transactions(tmp_path_factory: pytest.TempPathFactory) -> int:
    with aws_settings(tmp_path_factory.mktemp("probe")) as settings:
        probe = build_services(settings, clock=FakeClock())
        probe.accounts.create_account("local", account_id="local")
        user = Caller(account_id="local")
        seed(probe, user)
        table = probe.store.table  # type: ignore[attr-defined]
        original, calls = table.transact, []

        def counting(actions: Any) -> None:
            calls.append(len(actions))
            original(actions)

        table.transact = counting
        import_archive(probe, user)
    # The bulk path: the lock, several chunks, then the final update; the first chunk (2),
    # the middle one and the last transaction are three different transactions.
    assert len(calls) >= 6
    assert 2 < len(calls) // 2 < len(calls)
    return len(calls)


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_dynamodb_failure_mid_import_leaves_the_vault_as_it_was(
    services: Services,
    user: Caller,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    transactions_per_import: int,
) -> None:
    seed(services, user)
    before = state(services, user)
    table = services.store.table  # type: ignore[attr-defined]
    # The first transaction locks the quota shards; the first chunk is the second.
    call = {"first": 2, "middle": transactions_per_import // 2, "last": transactions_per_import}
    monkeypatch.setattr(table, "transact", failing_on(call[where], table.transact, ddb_error()))
    revision = services.store.get_account(user.account_id).revision  # type: ignore[union-attr]
    with pytest.raises(ClientError):
        import_archive(services, user)
    monkeypatch.undo()
    assert state(services, user) == before
    # The chunks written before the failure could be read (and recalled) until the
    # rollback: the rollback moves the revision, so nothing recalled from them is reused.
    assert services.store.get_account(user.account_id).revision > revision  # type: ignore[union-attr]
    report = import_archive(services, user)  # the lock was released: it works now
    assert (report.created, report.updated) == (NEW, EXISTING)


def test_a_crash_mid_import_is_rolled_back_when_its_lease_runs_out(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    seed(services, user)
    before = state(services, user)
    table = services.store.table  # type: ignore[attr-defined]
    # The third chunk fails and so does the rollback: as if the process had died.
    monkeypatch.setattr(table, "transact", failing_on(3, table.transact, ddb_error()))
    monkeypatch.setattr(bulk, "_restore", failing_on(1, bulk._restore, s3_error()))
    with pytest.raises(ServiceUnavailable) as err:
        import_archive(services, user)
    assert err.value.code == "rollback_pending"
    monkeypatch.undo()
    with pytest.raises(Conflict) as locked:
        services.vault.write(user, "blocked.md", "x")
    assert locked.value.code == "import_in_progress"
    clock.advance(bulk.LOCK_LEASE_SECONDS + 1)
    services.vault.write(user, "after.md", "recovered")  # recovers, then writes
    after = state(services, user)
    assert after["notes"].pop("after.md")[0] == "recovered"
    assert after["notes"] == before["notes"]
    assert after["history"] | {"after.md": [1]} == before["history"] | {"after.md": [1]}
    assert not [o for o in after["objects"] if "/journal/" in o]


def test_an_s3_failure_on_a_single_write_changes_nothing(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "n.md", "v1")
    before = state(services, user)
    bodies = services.store.bodies  # type: ignore[attr-defined]
    monkeypatch.setattr(bodies, "put", failing_on(1, bodies.put, s3_error()))
    with pytest.raises(ClientError):
        services.vault.write(user, "n.md", "v2")
    monkeypatch.undo()
    assert state(services, user) == before


def test_throttling_past_retries_is_a_clear_503(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "n.md", "x")
    client = services.store.table.client  # type: ignore[attr-defined]
    throttled = ClientError(
        {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
        "GetItem",
    )
    monkeypatch.setattr(client, "get_item", failing_on(1, client.get_item, throttled))
    with pytest.raises(ServiceUnavailable) as err:
        services.vault.read(user, "n.md")
    assert err.value.code == "storage_throttled"


def test_clients_retry_throttling_with_backoff(services: Services) -> None:
    config = services.store.table.client.meta.config  # type: ignore[attr-defined]
    # Standard mode: jittered backoff, and a bounded worst case that fits a buffered
    # function's timeout (tests/sam/test_operations.py compares the two).
    assert config.retries["mode"] == "standard"
    assert config.retries["total_max_attempts"] >= 3


@pytest.mark.parametrize("missing", ["table", "bucket"])
def test_a_missing_resource_is_named_at_startup(tmp_path: Path, missing: str) -> None:
    with aws_settings(tmp_path) as settings:
        broken = settings.model_copy(update={missing: "does-not-exist"})
        with pytest.raises(ServiceUnavailable) as err:
            build_services(broken)
        assert "does-not-exist" in err.value.message


def test_a_missing_search_index_is_named_by_the_first_search_not_at_startup(
    tmp_path: Path,
) -> None:
    # Search is optional (ADR 0031): a process starts without the index and says which one
    # is missing when a search needs it; a write still succeeds and is queued.
    with aws_settings(tmp_path) as settings:
        broken = settings.model_copy(
            update={"opensearch_index": "does-not-exist", "opensearch_create_index": False}
        )
        services = build_services(broken)
        services.accounts.create_account("acme", account_id="acme")
        user = Caller(account_id="acme", surface=Surface.REST)
        assert services.vault.write(user, "n.md", "written without an index").changed
        with pytest.raises(ServiceUnavailable) as err:
            services.vault.search(user, "written")
        assert err.value.code == "search_index_missing"
        assert "does-not-exist" in err.value.message
        assert services.store.queued_reindex("acme") == ["n.md"]


def test_a_dead_search_node_fails_searches_but_not_writes(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = OpenSearchIndex(
        make_client("http://127.0.0.1:9", auth="none", region=None, timeout=2.0),
        services.settings.opensearch_index,
    )
    index = services.vault.index
    monkeypatch.setattr(index, "client", dead.client)
    if services.vectors is not None:  # the node holds the vector index too
        monkeypatch.setattr(services.vectors, "client", dead.client)
    outcome = services.vault.write(user, "n.md", f"{MARKER} while search is down")
    assert outcome.changed
    with pytest.raises(ServiceUnavailable):
        services.vault.search(user, MARKER)
    monkeypatch.undo()
    services.vault.indexing.drain(user.account_id)
    assert [h.path for h in services.vault.search(user, MARKER)] == ["n.md"]
