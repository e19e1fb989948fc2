"""Builds the services for the configured backend: the one place adapters are chosen.

Handlers and the CLI ask for a ``Services`` bundle; tests build one per backend with
explicit settings. ``get_services`` caches it per process (a warm Lambda reuses it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from memvault.adapters.passwords import Argon2Hasher
from memvault.domain.budgets import BucketPolicy
from memvault.domain.pricing import PriceTable
from memvault.ports import (
    AttachmentStore,
    IdentityStorage,
    Ledger,
    MemoryProfileStore,
    PasswordHasher,
    RateLimiter,
    ResponseCache,
    ResponseChainStore,
    SearchIndex,
    VaultStore,
    VectorIndex,
)
from memvault.services.accounts import AccountService
from memvault.services.attachments import AttachmentService
from memvault.services.audit import AuditService
from memvault.services.billing import BillingService
from memvault.services.budgets import BudgetGuard
from memvault.services.callers import CallerResolver
from memvault.services.embedding import EmbeddingService
from memvault.services.hybrid import SemanticSearch
from memvault.services.jobs import JobService, JobTimes
from memvault.services.keys import KeyService
from memvault.services.members import MemberService
from memvault.services.org import OrgService
from memvault.services.profiles import ProfileService
from memvault.services.sessions import SessionService
from memvault.services.transfer import ImportLimits, TransferService
from memvault.services.uploads import FileUploadService
from memvault.services.vault import VaultService
from memvault.services.vectors import VectorSync
from memvault.settings import Settings, get_settings


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    store: VaultStore
    index: SearchIndex
    limiter: RateLimiter
    accounts: AccountService
    vault: VaultService
    transfer: TransferService
    jobs: JobService  # import and export jobs of any size (ADR 0041)
    ledger: Ledger
    billing: BillingService
    # People and their access: organisations, members, keys by role, sessions, audit.
    audit: AuditService
    sessions: SessionService
    members: MemberService
    keys: KeyService
    org: OrgService
    callers: CallerResolver
    # Embeddings (billed) and the vector index, when embeddings are on and the backend
    # has one: what search, recall and memory profiles embed with.
    embedding: EmbeddingService
    vectors: VectorIndex | None
    profiles: ProfileService  # memory profiles (memIDs)
    response_cache: ResponseCache  # the gateway's exact-match cache (domain.response_cache)
    attachments: AttachmentService  # the vault's files that are not notes (ADR 0043)
    uploads: FileUploadService  # one large file up and down, past Lambda's payload
    # Responses ids a client got -> the upstream response they continue (ADR 0045).
    response_chains: ResponseChainStore


def build_services(
    settings: Settings,
    clock: Callable[[], float] = time.time,
    *,
    vectors: VectorIndex | None = None,
) -> Services:
    """``vectors`` replaces the backend's vector index (SQLite's, or OpenSearch k-NN on AWS:
    adapters/aws/vectors.py), which exists when embeddings are on."""
    policy = BucketPolicy(rate_per_minute=settings.budget_per_minute, burst=settings.budget_burst)
    store: VaultStore
    index: SearchIndex
    limiter: RateLimiter
    ledger: Ledger
    email_policy, client_policy = sign_in_policies(settings)
    email_attempts: RateLimiter
    client_attempts: RateLimiter
    # Read first: a bad price table is a startup error naming the file.
    prices = PriceTable.load(settings.price_table)
    if settings.backend == "sqlite":
        from memvault.adapters.sqlite.budgets import SqliteRateLimiter
        from memvault.adapters.sqlite.db import Database
        from memvault.adapters.sqlite.ledger import SqliteLedger
        from memvault.adapters.sqlite.search import SqliteSearchIndex
        from memvault.adapters.sqlite.store import SqliteVaultStore

        db = Database(settings.sqlite_path)
        store = SqliteVaultStore(db)
        from memvault.adapters.sqlite.attachments import SqliteAttachmentStore

        file_store: AttachmentStore = SqliteAttachmentStore(
            db, settings.data_dir / "files", notes=store
        )
        from memvault.adapters.sqlite.profiles import SqliteProfileStore

        profile_store: MemoryProfileStore = SqliteProfileStore(db)
        index = SqliteSearchIndex(db)
        if vectors is None and settings.embeddings != "off":
            from memvault.adapters.sqlite.vectors import SqliteVectorIndex

            vectors = SqliteVectorIndex(db)
        limiter = SqliteRateLimiter(db, policy)
        email_attempts = SqliteRateLimiter(db, email_policy)
        client_attempts = SqliteRateLimiter(db, client_policy)
        ledger = SqliteLedger(db)
        from memvault.adapters.sqlite.response_cache import SqliteResponseCache

        response_cache: ResponseCache = SqliteResponseCache(db, max_bytes=settings.cache_max_bytes)
        from memvault.adapters.sqlite.response_chains import SqliteResponseChains

        response_chains: ResponseChainStore = SqliteResponseChains(
            db, max_links=settings.responses_chain_max_links
        )
    else:
        from memvault.adapters.aws import wiring
        from memvault.adapters.aws.budgets import DynamoRateLimiter
        from memvault.adapters.aws.ledger import DynamoLedger

        search_client = wiring.SearchClient(settings)
        aws_store, search, limiter = wiring.build(settings, policy, client=search_client)
        store, index = aws_store, search
        from memvault.adapters.aws.attachments import DynamoAttachmentStore

        file_store = DynamoAttachmentStore(aws_store.table, aws_store.bodies, notes=aws_store)
        if vectors is None and settings.embeddings != "off":
            vectors = wiring.deferred_vector_index(settings, search_client)
        from memvault.adapters.aws.profiles import DynamoProfileStore

        profile_store = DynamoProfileStore(aws_store.table)
        ledger = DynamoLedger(aws_store.table)  # the same single table, its own items
        from memvault.adapters.aws.response_cache import DynamoResponseCache

        response_cache = DynamoResponseCache(
            aws_store.table, aws_store.bodies, max_bytes=settings.cache_max_bytes
        )
        from memvault.adapters.aws.response_chains import DynamoResponseChains

        response_chains = DynamoResponseChains(
            aws_store.table, max_links=settings.responses_chain_max_links
        )
        email_attempts = DynamoRateLimiter(aws_store.table, email_policy)
        client_attempts = DynamoRateLimiter(aws_store.table, client_policy)
    budgets = BudgetGuard(limiter, clock)
    billing = BillingService(
        ledger,
        prices,
        clock,
        reservation_ttl_seconds=settings.reservation_ttl_seconds,
        usage_retention_days=settings.usage_retention_days,
    )
    from memvault.adapters.embeddings import build_embedder

    embedding = EmbeddingService(build_embedder(settings, prices), billing, clock)
    # Notes are embedded on every write when embeddings are on and the backend has a
    # vector index (services.vectors). Searches by meaning are switched on separately:
    # ``semantic`` (services.hybrid.SemanticSearch over the same index and
    # ``embedding.embed_query``) makes hybrid the default mode.
    semantic: SemanticSearch | None = None
    vector_sync: VectorSync | None = None
    if vectors is not None and embedding.embedder is not None:
        vector_workers = None
        if settings.embeddings == "local":  # bulk drains chunk and embed on every core
            from functools import partial

            from memvault.adapters.embeddings.local import DIMENSION, shared_local_embedder
            from memvault.services.vector_workers import VectorWorkers

            dimension = settings.embeddings_dimension or DIMENSION
            vector_workers = VectorWorkers(
                partial(shared_local_embedder, dimension),
                # the fork server loads the default model once for every worker it forks
                warm=("memvault.adapters.embeddings.local_warm",) if dimension == DIMENSION else (),
            )
        vector_sync = VectorSync(
            store,
            vectors,
            embedding,
            inline_notes=settings.embeddings_inline_notes,
            workers=vector_workers,
        )
        semantic = SemanticSearch(vectors, embedding.embedder, embedding.embed_query)
    vault = VaultService(
        store,
        index,
        budgets,
        clock,
        semantic,
        vector_sync,
        search_mode=settings.search_mode,
        files=file_store,
    )
    attachments = AttachmentService(
        file_store, store, store, vault.links, budgets, clock, orgs=store
    )
    transfer = TransferService(
        vault,
        ImportLimits(
            max_archive_bytes=settings.import_max_archive_bytes,
            max_uncompressed_bytes=settings.import_max_uncompressed_bytes,
            max_ratio=settings.import_max_ratio,
            max_entries=settings.import_max_entries,
        ),
        attachments=attachments,
    )
    jobs = build_jobs(settings, store, transfer, clock)
    uploads = build_uploads(settings, attachments, jobs, clock)
    accounts = AccountService(store, clock)
    audit, sessions, members = build_people(
        settings, store, accounts, clock, email_attempts, client_attempts
    )
    return Services(
        settings=settings,
        store=store,
        index=index,
        limiter=limiter,
        accounts=accounts,
        vault=vault,
        transfer=transfer,
        jobs=jobs,
        ledger=ledger,
        billing=billing,
        audit=audit,
        sessions=sessions,
        members=members,
        keys=KeyService(store, accounts, audit),
        org=OrgService(store, accounts, billing, audit, vault.search_defaults),
        callers=CallerResolver(accounts, store, sessions),
        embedding=embedding,
        vectors=vectors,
        profiles=ProfileService(profile_store, audit, embedding, lambda: embedding.embedder, clock),
        response_cache=response_cache,
        attachments=attachments,
        response_chains=response_chains,
        uploads=uploads,
    )


def build_jobs(
    settings: Settings, store: VaultStore, transfer: TransferService, clock: Callable[[], float]
) -> JobService:
    """Import and export jobs over the backend's job store and staged blobs: files under
    the data dir and a worker thread embedded; the notes bucket's ``jobs/`` prefix with
    presigned links and the job function on AWS."""
    times = JobTimes(
        lease_seconds=settings.job_lease_seconds,
        heartbeat_seconds=settings.job_heartbeat_seconds,
        upload_seconds=settings.job_upload_seconds,
        keep_seconds=settings.job_keep_seconds,
        wait_seconds=settings.job_wait_seconds,
    )
    if settings.backend == "sqlite":
        from memvault.adapters.sqlite.jobs import FileTransferBlobs, SqliteJobStore

        db = store.db  # type: ignore[attr-defined]
        sqlite_jobs = SqliteJobStore(db)
        blobs = FileTransferBlobs(settings.data_dir / "jobs")
        return JobService(sqlite_jobs, blobs, transfer, clock, times=times, background=True)
    from memvault.adapters.aws.clients import make_client
    from memvault.adapters.aws.jobs import DynamoJobStore, S3TransferBlobs

    table, bodies = store.table, store.bodies  # type: ignore[attr-defined]
    presign_endpoint = settings.s3_presign_endpoint or settings.s3_endpoint
    presigner = make_client("s3", settings.aws_region, presign_endpoint, sigv4=True)
    s3_blobs = S3TransferBlobs(bodies.client, presigner, bodies.bucket)
    return JobService(DynamoJobStore(table, bodies), s3_blobs, transfer, clock, times=times)


def build_uploads(
    settings: Settings,
    attachments: AttachmentService,
    jobs: JobService,
    clock: Callable[[], float],
) -> FileUploadService:
    """Large single files: staged under the data dir embedded, or under the bucket's
    ``uploads/`` with SigV4 presigned links on AWS; embedded tokens signed as the jobs'
    are (their key)."""
    from memvault.ports import FileUploads

    staging: FileUploads
    if settings.backend == "sqlite":
        from memvault.adapters.sqlite.uploads import FileUploadFolders

        staging = FileUploadFolders(settings.data_dir / "uploads")
    else:
        from memvault.adapters.aws.clients import make_client
        from memvault.adapters.aws.uploads import S3FileUploads

        blobs = jobs.blobs
        # The job archives' client and endpoint setting; SigV4, so the signature covers
        # the declared Content-Length.
        presigner = make_client(
            "s3",
            settings.aws_region,
            settings.s3_presign_endpoint or settings.s3_endpoint,
            sigv4=True,
        )
        staging = S3FileUploads(blobs.client, presigner, blobs.bucket)  # type: ignore[attr-defined]
    return FileUploadService(attachments, staging, jobs.jobs.signing_key, clock)


def sign_in_policies(settings: Settings) -> tuple[BucketPolicy, BucketPolicy]:
    """Sign-in attempts: per email address, and three times as many per client address."""
    per_email = BucketPolicy(
        rate_per_minute=settings.sign_in_per_minute, burst=settings.sign_in_burst
    )
    per_client = BucketPolicy(
        rate_per_minute=3 * settings.sign_in_per_minute, burst=3 * settings.sign_in_burst
    )
    return per_email, per_client


def build_people(
    settings: Settings,
    store: IdentityStorage,
    accounts: AccountService,
    clock: Callable[[], float],
    email_attempts: RateLimiter,
    client_attempts: RateLimiter,
) -> tuple[AuditService, SessionService, MemberService]:
    """The services of people and their access, over any store that has them (also what
    `memvault orgs create` builds on a deployed stack's table, without the rest)."""
    hasher: PasswordHasher = Argon2Hasher(settings.password_hash_cost)
    audit = AuditService(store, clock, retention_days=settings.usage_retention_days)
    sessions = SessionService(
        store,
        accounts,
        audit,
        hasher,
        clock,
        email_attempts=email_attempts,
        client_attempts=client_attempts,
        idle_seconds=settings.session_idle_minutes * 60,
        max_seconds=settings.session_max_hours * 3600,
    )
    members = MemberService(
        store,
        accounts,
        sessions,
        audit,
        hasher,
        clock,
        invitation_days=settings.invitation_days,
        password_min_length=settings.password_min_length,
    )
    return audit, sessions, members


@lru_cache(maxsize=1)
def get_services() -> Services:
    return build_services(get_settings())
