"""Configuration, read from MEMVAULT_* environment variables (and a .env file if present)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_data_dir() -> Path:
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "memvault"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMVAULT_", env_file=".env", extra="ignore")

    backend: Literal["sqlite", "aws"] = "sqlite"
    data_dir: Path = Field(default_factory=_default_data_dir)
    host: str = "127.0.0.1"
    port: int = 8080
    log_level: str = "INFO"

    # Budgets: units per minute and burst, per account and kind (writes, searches).
    budget_per_minute: float = 120.0
    budget_burst: float = 60.0

    # Import guards against zip bombs: total uncompressed bytes and per-entry ratio.
    import_max_archive_bytes: int = 1024 * 1024 * 1024
    import_max_uncompressed_bytes: int = 2 * 1024 * 1024 * 1024
    import_max_ratio: float = 200.0
    import_max_entries: int = 200_000

    # MCP at /mcp: the Host header values it answers (DNS rebinding protection), comma
    # separated; an entry without a port allows any port. Behind API Gateway or a
    # custom domain, list those host names (the custom domain, the execute-api one).
    mcp_allowed_hosts: str = "localhost,127.0.0.1,[::1]"
    # Origin values allowed besides those whose host is an allowed host (comma separated,
    # e.g. "https://app.example.com"). Requests without an Origin (not from a browser) pass.
    mcp_allowed_origins: str = ""

    # AWS backend (MEMVAULT_BACKEND=aws).
    aws_region: str | None = None
    table: str = "memvault"
    bucket: str = "memvault-notes"
    dynamodb_endpoint: str | None = None  # for a local DynamoDB; None = AWS
    s3_endpoint: str | None = None
    opensearch_url: str | None = None  # e.g. https://search-x.eu-west-1.es.amazonaws.com
    opensearch_index: str = "memvault-notes"
    # "sigv4" signs requests for Amazon OpenSearch Service; "none" is for a local node.
    opensearch_auth: Literal["sigv4", "none"] = "sigv4"
    opensearch_timeout: float = 10.0
    # When an indexed note becomes searchable: "wait_for" (the next refresh, ~1 s; writes
    # wait for it, so a write is searchable once it returns), "true" (at once; costly at
    # scale) or "false" (eventually).
    opensearch_refresh: Literal["wait_for", "true", "false"] = "wait_for"
    # The index is made or checked on first need, never at start (ADR 0031). True: the
    # first operation that needs a missing index creates it; false (the deployed API
    # functions, whose roles may not create it): it answers search_index_missing until
    # the ops function or `memvault init-search` has made it.
    opensearch_create_index: bool = True
    # Primary shards of the index when memvault creates it (fixed from then on; the
    # template's SearchShards). Replicas: opensearch_replicas below.
    opensearch_shards: int = Field(default=1, ge=1, le=1024)
    # The vector indices' name prefix: one chunk index per vector dimension,
    # <prefix>-d<dimension> (ADR 0026). Unset: <opensearch_index>-vectors, so inside the
    # functions' access to indices named after the notes index.
    opensearch_vector_index: str | None = None

    # --- Gateway billing: prices, holds and usage records.
    # A JSON price table replacing the packaged one (memvault/data/prices.json).
    price_table: Path | None = None
    # Usage records are kept this many days (DynamoDB items expire by TTL).
    usage_retention_days: int = Field(default=90, ge=1)
    # A hold whose request never settled (it crashed) is settled by the sweep after this.
    reservation_ttl_seconds: float = Field(default=900.0, gt=0)
    # The gateway's response cache (opt-in per key or request): what one organisation's
    # cached answers may hold before the oldest are evicted.
    cache_max_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    # Responses continued across memory rounds (ADR 0045): how long the gateway remembers
    # which upstream response a client's response id continues (the provider keeps stored
    # responses 30 days), and how many such links one organisation keeps (oldest dropped).
    responses_chain_ttl_seconds: int = Field(default=30 * 24 * 3600, ge=1)
    responses_chain_max_links: int = Field(default=10_000, ge=0)

    # --- Embeddings (vector search, passages in recall): "local" is a static model that
    # ships in a package (wordllama, no download; ADR 0024), "openai" calls /embeddings on
    # an OpenAI-compatible upstream (the gateway's base URL and key unless the two below
    # are set), "bedrock" Titan Text Embeddings V2, "off" keyword search only.
    embeddings: Literal["local", "openai", "bedrock", "off"] = "local"
    # The mode of a search or recall that asks for none: "auto" is hybrid when embeddings
    # are on and the backend has a vector index, else keyword (ADR 0027).
    search_mode: Literal["auto", "keyword", "semantic", "hybrid"] = "auto"
    embeddings_model: str | None = None  # openai: text-embedding-3-small; bedrock: Titan V2
    embeddings_dimension: int | None = Field(default=None, ge=1, le=8192)
    embeddings_base_url: str | None = None
    embeddings_api_key: SecretStr | None = None
    embeddings_batch_size: int = Field(default=128, ge=1, le=2048)
    # A commit that writes more notes than this (an import) leaves their vectors to the
    # outbox: embedded in the background (`memvault serve`; on AWS a function's idle
    # moment and the ops schedule), so an import takes about as long as without vectors.
    embeddings_inline_notes: int = Field(default=64, ge=0)

    # --- Gateway upstreams: where /v1/chat/completions and /v1/messages go, and the
    # provider credentials memvault holds (clients send their memvault key instead).
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: SecretStr | None = None
    anthropic_base_url: str = "https://api.anthropic.com"
    anthropic_api_key: SecretStr | None = None
    # Seconds to connect, and to wait for each piece of an answer (a stream's next event).
    upstream_connect_timeout: float = Field(default=10.0, gt=0)
    upstream_read_timeout: float = Field(default=300.0, gt=0)
    # Output tokens reserved for a request that names no max_tokens.
    default_output_allowance: int = Field(default=4096, ge=1)
    # While memory tools run mid-stream, an SSE comment goes out this often.
    stream_keepalive_seconds: float = Field(default=5.0, gt=0)

    # --- Deployed on AWS (template.yaml): provider keys and the retention sweep.
    # A Secrets Manager secret (ARN or name) holding the provider key as its plain string
    # value; read once at a function's cold start (memvault.adapters.aws.secrets), it then
    # stands for openai_api_key / anthropic_api_key. Unset: those settings are used as is.
    openai_api_key_secret: str | None = None
    anthropic_api_key_secret: str | None = None
    # A secret read is reused this long, then read again (Powertools parameters), so a
    # rotated provider key applies within this many seconds, without a cold start.
    secrets_max_age_seconds: int = Field(default=300, ge=0)
    # Powertools Idempotency for the POST routes a client may retry (ADR 0032): the
    # DynamoDB table of its records (unset: off), and how long a key's answer is kept.
    idempotency_table: str | None = None
    idempotency_seconds: int = Field(default=3600, ge=60)
    # A deleted note's history stays readable (and comes back if the note is re-created)
    # this many days after the delete; the scheduled retention sweep then purges it.
    deleted_note_keep_days: int = Field(default=30, ge=1)
    # Replicas of the search index when a function creates it at first start (0 on a
    # single-node domain, whose replicas could never be placed); None: the domain default.
    opensearch_replicas: int | None = Field(default=None, ge=0)

    # --- Organisations, members and sign-in (README "Organisations and members").
    # A session ends after this long without a request, and this long after sign-in
    # whatever happens (the cookie's Max-Age).
    session_idle_minutes: float = Field(default=60.0, gt=0)
    session_max_hours: float = Field(default=12.0, gt=0)
    # An invitation's token works this long, once.
    invitation_days: float = Field(default=7.0, gt=0)
    # "open" adds POST /v1/signup: anyone may make an organisation (rate limited).
    signup: Literal["closed", "open"] = "closed"
    password_min_length: int = Field(default=12, ge=8, le=128)
    # argon2id's cost: "low" is for tests only (a hash in well under a millisecond).
    password_hash_cost: Literal["default", "low"] = "default"
    # Sign-in attempts (and sign-ups) allowed per email address, per minute and in a
    # burst; a client address gets three times as many (people share addresses).
    sign_in_per_minute: float = Field(default=5.0, gt=0)
    sign_in_burst: float = Field(default=10.0, ge=1)

    # --- Import and export jobs (ADR 0041). A running import's lease on its organisation
    # lasts this long unless renewed (every heartbeat): a killed job holds nothing longer.
    job_lease_seconds: float = Field(default=60.0, gt=0)
    job_heartbeat_seconds: float = Field(default=15.0, gt=0)
    # An upload link's life; finished jobs and their staged zips are kept this long.
    job_upload_seconds: float = Field(default=3600.0, gt=0)
    job_keep_seconds: float = Field(default=24 * 3600.0, gt=0)
    # How long a queued import waits for another import's lease before it fails.
    job_wait_seconds: float = Field(default=120.0, ge=0)
    # The S3 endpoint presigned links name (what clients reach); None: s3_endpoint's.
    s3_presign_endpoint: str | None = None

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "memvault.sqlite3"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
