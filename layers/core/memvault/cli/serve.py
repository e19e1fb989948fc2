"""The commands that run memvault or repair its storage, on this machine's backend:
serve, mcp, reindex and init-search (the others are clients of a running server)."""

from __future__ import annotations

import logging
import socket
import sqlite3
import threading
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from memvault.cli.output import die, err, fail, out, plural

if TYPE_CHECKING:
    from memvault.container import Services

log = logging.getLogger("memvault.serve")


def _check_can_listen(host: str, port: int) -> None:
    """Fail early and clearly when the address is taken (uvicorn would say it later)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        die(f"cannot resolve --host {host!r}: {exc}")
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            die(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}. Is memvault already"
                " running there? Stop it, or pick another --port (or MEMVAULT_PORT).",
                1,
            )


def serve(
    host: Annotated[str | None, typer.Option(help="Interface (default MEMVAULT_HOST).")] = None,
    port: Annotated[
        int | None, typer.Option(min=1, max=65535, help="Port (default MEMVAULT_PORT).")
    ] = None,
) -> None:
    """Run memvault on the embedded backend (SQLite under MEMVAULT_DATA_DIR)."""
    import uvicorn
    from pydantic import ValidationError

    from memvault.api.app import create_app
    from memvault.container import get_services

    try:
        services = get_services()
        bind_host = host or services.settings.host
        bind_port = port or services.settings.port
        # Before the first-start key is made: a server that cannot listen shows no key.
        _check_can_listen(bind_host, bind_port)
        embedded = services.settings.backend == "sqlite"
        issued = services.accounts.bootstrap_local() if embedded else None
    except ValidationError as exc:
        die(f"a MEMVAULT_* setting is invalid: {exc}")
    except NotImplementedError as exc:
        die(str(exc))
    except (OSError, sqlite3.Error) as exc:
        die(f"cannot open the data directory: {exc}", 1)
    if issued is not None:
        out.print(
            "\n[bold]memvault: created the local organisation.[/bold] Its owner's admin key"
            " is shown this once (only a hash is kept); keep it somewhere safe:\n"
        )
        out.print(Text(f"    export MEMVAULT_API_KEY={issued.secret}", style="bold green"))
        out.print(
            "\nSign in to the dashboard with it (then set a password), or use it with the"
            " CLI and the API.\n"
        )
    data = services.settings.data_dir if embedded else "(aws)"
    out.print(Text(f"memvault: data in {data}"))
    out.print(Text(f"memvault: serving http://{bind_host}:{bind_port} (Ctrl-C to stop)"))
    if embedded:
        drain_outbox_in_background(services)
        # Jobs a stopped server left: the interrupted failed, the queued run (ADR 0041).
        services.jobs.resume()
    uvicorn.run(create_app(services), host=bind_host, port=bind_port, log_level="warning")


# Notes a background drain takes at a time: enough for an import's vectors to be embedded
# in worker processes (services.vector_workers.PARALLEL_MIN_NOTES, ADR 0048); writes still
# interleave, as each part of 100 notes is its own short transaction.
SERVE_DRAIN_BATCH = 500


def drain_outbox_in_background(
    services: Services, every: float = 0.5, stop: threading.Event | None = None
) -> threading.Thread:
    """The search outbox, drained in the background for as long as the server runs
    (until ``stop`` is set), so it never delays the start nor a write:

    - first, everything it holds: notes committed by a process that died before it
      indexed them (a crash mid-import, ADR 0039), or while the index failed;
    - then what this server queues: the vectors of a bulk commit (an import;
      MEMVAULT_EMBEDDINGS_INLINE_NOTES), a model change's re-embedding, an embedder
      outage's backlog, a batch at a time so writes interleave."""
    stopping = stop or threading.Event()

    def run() -> None:
        try:
            drained = services.vault.indexing.drain_all(stop=stopping.is_set)
        except Exception:  # the server runs; `memvault reindex` is the last resort
            log.warning("could not drain the search outbox at start", exc_info=True)
        else:
            if drained:
                log.info("drained the search outbox at start", extra={"notes": drained})
        while not stopping.wait(every):
            if not services.vault.indexing.pending:
                continue
            try:
                drained = services.vault.indexing.drain_pending(batch=SERVE_DRAIN_BATCH)
            except Exception:  # the next round retries; `memvault reindex` is the last resort
                log.warning("could not drain the outbox", exc_info=True)
                drained = 0
            if not drained and services.vault.indexing.pending:
                stopping.wait(10 * every)  # the index or the embedder is failing: back off

    thread = threading.Thread(target=run, name="memvault-outbox", daemon=True)
    thread.start()
    return thread


def mcp_stdio() -> None:
    """Serve the memory tools over MCP on stdin/stdout, on the embedded vault.

    For desktop MCP clients, which launch this command themselves. Acts for the local
    account (created on first start, like `memvault serve`); stdout carries only the
    protocol, everything else goes to stderr.
    """
    from pydantic import ValidationError

    from memvault.settings import get_settings

    try:
        if get_settings().backend != "sqlite":
            die(
                "memvault mcp serves the embedded vault (MEMVAULT_BACKEND=sqlite); on the AWS"
                " backend, point the MCP client at the server's /mcp URL instead"
            )
        # Only now: the services and the MCP SDK take over a second to import, which a
        # refusal need not wait for.
        from memvault.container import get_services

        services = get_services()
        issued = services.accounts.bootstrap_local()
    except ValidationError as exc:
        die(f"a MEMVAULT_* setting is invalid: {exc}")
    except (OSError, sqlite3.Error) as exc:
        die(f"cannot open the data directory: {exc}", 1)
    if issued is not None:
        err.print(
            "memvault: created the local organisation. Its owner's admin key, shown this"
            f" once, is {issued.secret} (for `memvault serve` and the REST API)."
        )
    err.print(Text(f"memvault: MCP on stdio, data in {services.settings.data_dir}"))
    from memvault.mcp.stdio import serve_stdio

    serve_stdio(services)


def reindex(
    account: Annotated[
        str | None,
        typer.Option(help="Account id (default: the embedded install's local account)."),
    ] = None,
    vectors: Annotated[
        bool,
        typer.Option(
            "--vectors",
            help="Also re-embed every note with the configured model (MEMVAULT_EMBEDDINGS).",
        ),
    ] = False,
) -> None:
    """Rebuild an account's search index (and link index) from storage, on this backend.

    Runs against storage directly (MEMVAULT_BACKEND and its settings), not the server:
    it is the repair tool for an index that fell behind or was lost. With --vectors, every
    note's vectors are made again with the configured embedding model (after a model
    change, or to mend vectors that fell behind).
    """
    from memvault.container import get_services
    from memvault.errors import MemvaultError
    from memvault.services.accounts import LOCAL_ACCOUNT_ID
    from memvault.settings import get_settings

    settings = get_settings()
    if settings.backend == "sqlite" and not settings.sqlite_path.exists():
        die(
            f"no vault in {settings.data_dir}: run `memvault serve` once first,"
            " or point MEMVAULT_DATA_DIR at the data directory",
            1,
        )
    account_id = account or LOCAL_ACCOUNT_ID
    try:
        services = get_services()
        if services.store.get_account(account_id) is None:
            die(f"no account {account_id!r} on this backend", 1)
        # The organisation upgrade (keys stored before members get their first owner; the
        # directory lists it), then the index.
        upgraded = services.accounts.upgrade(account_id)
        services.store.list_organisation(account_id)
        count = services.vault.reindex(account_id, vectors=vectors)
        status = services.vault.vectors.vault_status(account_id) if services.vault.vectors else None
    except MemvaultError as exc:
        fail(exc)
    if upgraded:
        out.print(Text(f"gave {plural(upgraded, 'key')} with no owner to the first owner"))
    out.print(Text(f"reindexed {plural(count, 'note')} of account {account_id}"))
    if vectors and status is None:
        out.print(Text("vectors: off (MEMVAULT_EMBEDDINGS=off, or no vector index here)"))
    elif vectors and status is not None:
        out.print(
            Text(
                f"re-embedded with {status.model}: {plural(status.chunks, 'chunk')}"
                + (f", {plural(status.queued, 'note')} still queued" if status.queued else "")
            )
        )


def init_search(
    replicas: Annotated[
        int | None, typer.Option(help="Replica count (default: the domain's default).")
    ] = None,
) -> None:
    """Create the OpenSearch index with memvault's mapping (AWS backend; idempotent)."""
    from memvault.errors import MemvaultError
    from memvault.settings import get_settings

    settings = get_settings()
    if settings.backend != "aws" or not settings.opensearch_url:
        die(
            "init-search is for the AWS backend: set MEMVAULT_BACKEND=aws and"
            " MEMVAULT_OPENSEARCH_URL",
            2,
        )
    from memvault.adapters.aws.wiring import search_index

    try:
        created = search_index(settings).create_index(
            shards=settings.opensearch_shards, replicas=replicas
        )
    except MemvaultError as exc:
        fail(exc)
    state = "created" if created else "already exists"
    out.print(Text(f"search index {settings.opensearch_index!r} {state}"))
