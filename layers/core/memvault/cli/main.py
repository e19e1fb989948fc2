"""The `memvault` command line.

`memvault serve` runs the server on the embedded backend. Every other command is a
client of a running server (MEMVAULT_URL, MEMVAULT_API_KEY), so budgets, limits and
screening are the server's, shared with every other surface.

Exit codes: 0 success; 1 the server could not be reached or failed (5xx, rate
limited); 2 the request was refused (bad input, no or bad key, not found, conflict).
Results go to stdout; errors, hints and progress bars go to stderr.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from memvault import __version__
from memvault.cli.client import ApiError, Client, note_url
from memvault.domain.pricing import usd
from memvault.errors import MemvaultError, RateLimited

app = typer.Typer(
    help="memvault: a markdown vault that gives LLM API keys a memory.",
    no_args_is_help=True,
    add_completion=False,
    # A crash must never print local variables: they include the API key.
    pretty_exceptions_show_locals=False,
)
keys_app = typer.Typer(
    help="Create, list, toggle and revoke API keys (admin key needed).", no_args_is_help=True
)
app.add_typer(keys_app, name="keys")
app.command("bootstrap")(__import__("memvault.cli.bootstrap", fromlist=["*"]).bootstrap)

# soft_wrap: never hard-wrap lines (paths, keys and messages must survive a pipe intact).
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

DEFAULT_URL = "http://127.0.0.1:8080"
UrlOpt = Annotated[
    str, typer.Option("--url", envvar="MEMVAULT_URL", help="The memvault server (MEMVAULT_URL).")
]
KeyOpt = Annotated[
    str | None,
    typer.Option(
        "--key", envvar="MEMVAULT_API_KEY", show_envvar=False, help="API key (or MEMVAULT_API_KEY)."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


# ---------------------------------------------------------------------- output helpers
def _die(message: str, code: int = 2) -> NoReturn:
    err.print(Text.assemble(("error", "red"), " ", message))
    raise typer.Exit(code)


def _fail(exc: MemvaultError) -> NoReturn:
    status = getattr(exc, "status", None)
    label = exc.code + (f" ({status})" if status else "")
    err.print(Text.assemble(("error", "red"), f" {label}: {exc.message}"))
    if isinstance(exc, RateLimited) and "retry" not in exc.message:
        err.print(f"the account's budget is spent; retry after {exc.retry_after:.0f} s")
    elif isinstance(exc, ApiError) and exc.status == 401:
        err.print("check --key or MEMVAULT_API_KEY (`memvault serve` printed the admin key)")
    raise typer.Exit(2 if isinstance(exc, ApiError) and exc.status < 500 else 1)


def _print_json(value: Any) -> None:
    data = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    _write_stdout(data)


def _write_stdout(text: str) -> None:
    """Exact text on stdout, UTF-8 whatever the locale, no newline translation."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def _client(url: str, key: str | None) -> Client:
    if not url.startswith(("http://", "https://")):
        _die(f"--url must start with http:// or https:// (got {url!r})")
    if not key or not key.strip():
        _die(
            "no API key: pass --key or set MEMVAULT_API_KEY (the admin key"
            " `memvault serve` printed on first start)"
        )
    return Client(url, key.strip())


def _body_of(markdown: str) -> str:
    from memvault.domain.markdown import body_for_search

    return body_for_search(markdown)


def _note_json(note: dict[str, Any], score: float | None = None) -> dict[str, Any]:
    """The agent-harness note shape: id, title, path, tags, body, score (+ a few extras)."""
    return {
        "id": note["id"],
        "title": note["title"],
        "path": note["path"],
        "tags": note["tags"],
        "body": _body_of(note["markdown"]),
        "score": score,
        "version": note["version"],
        "updated_at": note["updated_at"],
    }


def _fetch_notes(client: Client, paths: list[str]) -> dict[str, dict[str, Any]]:
    """Full notes by path; a note deleted since it was listed is left out, not an error."""
    found: dict[str, dict[str, Any]] = {}
    for path in paths:
        try:
            found[path] = client.json("GET", note_url(path))
        except ApiError as exc:
            if exc.status != 404:
                raise
    return found


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _die(f"{source} is not UTF-8 text (byte {exc.start}); notes are UTF-8 markdown")


def _read_stdin_or(text: str | None, what: str = "the text") -> str:
    if text is not None:
        return text
    if sys.stdin is None or sys.stdin.isatty():
        _die(f"give {what} as an argument or pipe it on stdin")
    # Bytes, not text mode: the note is stored exactly as given (CRLF kept, UTF-8).
    return _decode(sys.stdin.buffer.read(), "stdin")


def _read_file(file: Path) -> str:
    try:
        data = file.read_bytes()
    except OSError as exc:
        _die(f"cannot read {file}: {exc.strerror or exc}")
    return _decode(data, str(file))


_MARK = re.compile(r"<mark>(.*?)</mark>", re.DOTALL)


def _snippet(snippet: str) -> Text:
    """A search snippet with its <mark> hits in bold (and nothing read as markup)."""
    text = Text()
    pos = 0
    for match in _MARK.finditer(snippet):
        text.append(snippet[pos : match.start()])
        text.append(match.group(1), style="bold")
        pos = match.end()
    text.append(snippet[pos:])
    return text


def _relative_scores(raw: list[float]) -> list[float]:
    """Scores on 0-1, the best hit 1.0 (raw BM25-based scores have no fixed scale)."""
    top = max(raw, default=0.0)
    if top <= 0:
        return [1.0 for _ in raw]  # all tied: none is better than another
    return [round(min(1.0, max(0.0, s / top)), 4) for s in raw]


# ---------------------------------------------------------------------- top level
def _version(value: bool) -> None:
    if value:
        out.print(f"memvault {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """memvault: a markdown vault that gives LLM API keys a memory."""


# ---------------------------------------------------------------------- server
def _check_can_listen(host: str, port: int) -> None:
    """Fail early and clearly when the address is taken (uvicorn would say it later)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        _die(f"cannot resolve --host {host!r}: {exc}")
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            _die(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}. Is memvault already"
                " running there? Stop it, or pick another --port (or MEMVAULT_PORT).",
                1,
            )


@app.command()
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
        _die(f"a MEMVAULT_* setting is invalid: {exc}")
    except NotImplementedError as exc:
        _die(str(exc))
    except (OSError, sqlite3.Error) as exc:
        _die(f"cannot open the data directory: {exc}", 1)
    if issued is not None:
        out.print(
            "\n[bold]memvault: created the local account.[/bold] Its admin key is shown this"
            " once (only a hash is kept); keep it somewhere safe:\n"
        )
        out.print(Text(f"    export MEMVAULT_API_KEY={issued.secret}", style="bold green"))
        out.print()
    data = services.settings.data_dir if embedded else "(aws)"
    out.print(Text(f"memvault: data in {data}"))
    out.print(Text(f"memvault: serving http://{bind_host}:{bind_port} (Ctrl-C to stop)"))
    uvicorn.run(create_app(services), host=bind_host, port=bind_port, log_level="warning")


@app.command("mcp")
def mcp_stdio() -> None:
    """Serve the memory tools over MCP on stdin/stdout, on the embedded vault.

    For desktop MCP clients, which launch this command themselves. Acts for the local
    account (created on first start, like `memvault serve`); stdout carries only the
    protocol, everything else goes to stderr.
    """
    from pydantic import ValidationError

    from memvault.container import get_services
    from memvault.mcp.stdio import serve_stdio
    from memvault.settings import get_settings

    try:
        if get_settings().backend != "sqlite":
            _die(
                "memvault mcp serves the embedded vault (MEMVAULT_BACKEND=sqlite); on the AWS"
                " backend, point the MCP client at the server's /mcp URL instead"
            )
        services = get_services()
        issued = services.accounts.bootstrap_local()
    except ValidationError as exc:
        _die(f"a MEMVAULT_* setting is invalid: {exc}")
    except (OSError, sqlite3.Error) as exc:
        _die(f"cannot open the data directory: {exc}", 1)
    if issued is not None:
        err.print(
            "memvault: created the local account. Its admin key, shown this once, is"
            f" {issued.secret} (for `memvault serve` and the REST API)."
        )
    err.print(Text(f"memvault: MCP on stdio, data in {services.settings.data_dir}"))
    serve_stdio(services)


@app.command()
def reindex(
    account: Annotated[
        str | None,
        typer.Option(help="Account id (default: the embedded install's local account)."),
    ] = None,
) -> None:
    """Rebuild an account's search index (and link index) from storage, on this backend.

    Runs against storage directly (MEMVAULT_BACKEND and its settings), not the server:
    it is the repair tool for an index that fell behind or was lost.
    """
    from memvault.container import get_services
    from memvault.errors import MemvaultError
    from memvault.services.accounts import LOCAL_ACCOUNT_ID
    from memvault.settings import get_settings

    settings = get_settings()
    if settings.backend == "sqlite" and not settings.sqlite_path.exists():
        _die(
            f"no vault in {settings.data_dir}: run `memvault serve` once first,"
            " or point MEMVAULT_DATA_DIR at the data directory",
            1,
        )
    account_id = account or LOCAL_ACCOUNT_ID
    try:
        services = get_services()
        if services.store.get_account(account_id) is None:
            _die(f"no account {account_id!r} on this backend", 1)
        count = services.vault.reindex(account_id)
    except MemvaultError as exc:
        _fail(exc)
    out.print(Text(f"reindexed {count} notes of account {account_id}"))


@app.command("init-search")
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
        _die(
            "init-search is for the AWS backend: set MEMVAULT_BACKEND=aws and"
            " MEMVAULT_OPENSEARCH_URL",
            2,
        )
    from memvault.adapters.aws.search import OpenSearchIndex, make_client

    try:
        index = OpenSearchIndex(
            make_client(
                settings.opensearch_url,
                auth=settings.opensearch_auth,
                region=settings.aws_region,
                timeout=settings.opensearch_timeout,
            ),
            settings.opensearch_index,
        )
        created = index.create_index(replicas=replicas)
    except MemvaultError as exc:
        _fail(exc)
    state = "created" if created else "already exists"
    out.print(Text(f"search index {settings.opensearch_index!r} {state}"))


# ---------------------------------------------------------------------- notes
@app.command()
def read(
    path: str, url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False
) -> None:
    """Print a note's markdown, exactly as stored."""
    client = _client(url, key)
    try:
        note = client.json("GET", note_url(path))
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(_note_json(note))
    else:
        _write_stdout(note["markdown"])


@app.command()
def write(
    path: str,
    text: Annotated[str | None, typer.Argument(help="Markdown (default: stdin).")] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", "-f", exists=True, dir_okay=False, readable=True, help="Read from a file."
        ),
    ] = None,
    if_match: Annotated[
        int | None, typer.Option(min=1, help="Only if the note is at this version.")
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create or replace a note (markdown as an argument, on stdin or with --file)."""
    if file is not None and text is not None:
        _die("give the markdown either as an argument or with --file, not both")
    client = _client(url, key)
    markdown = _read_file(file) if file is not None else _read_stdin_or(text, "the markdown")
    headers = {"If-Match": f'"{if_match}"'} if if_match else {}
    try:
        result = client.json("PUT", note_url(path), json={"markdown": markdown}, headers=headers)
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    else:
        out.print(Text(f"{result['note']['path']}: {result['message']}"))


@app.command()
def append(
    path: str,
    text: Annotated[str | None, typer.Argument(help="Text to append (default: stdin).")] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append text to a note, on its own line (the note is created when missing)."""
    client = _client(url, key)
    body = _read_stdin_or(text, "the text to append")
    if not body.strip():
        _die("there is nothing to append (the text is empty)")
    try:
        result = client.json("POST", note_url(path, "/append"), json={"text": body})
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    else:
        out.print(Text(f"{result['note']['path']}: {result['message']}"))


@app.command()
def search(
    query: str,
    folder: Annotated[str, typer.Option(help="Only notes under this folder.")] = "",
    tag: Annotated[str | None, typer.Option(help="Only notes with this tag.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many hits.")] = 10,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ranked full-text search. Scores are 0-1, relative to the best hit (1.0)."""
    if not query.strip():
        _die("the search text is empty")
    client = _client(url, key)
    params: dict[str, Any] = {"q": query, "limit": limit, "folder": folder}
    if tag:
        params["tag"] = tag
    try:
        hits: list[dict[str, Any]] = client.json("GET", "/v1/search", params=params)["results"]
        scores = _relative_scores([float(h["score"]) for h in hits])
        if as_json:
            notes = _fetch_notes(client, [h["path"] for h in hits])
            entries = []
            for hit, score in zip(hits, scores, strict=True):
                if hit["path"] not in notes:
                    continue
                entry = _note_json(notes[hit["path"]], score)
                entry["raw_score"] = hit["score"]
                entry["snippet"] = hit["snippet"]
                entries.append(entry)
            _print_json(entries)
            return
    except MemvaultError as exc:
        _fail(exc)
    if not hits:
        out.print("no matches")
        return
    table = Table("score", "path", "title", "snippet", show_lines=False)
    for hit, score in zip(hits, scores, strict=True):
        table.add_row(
            f"{score:.2f}", Text(hit["path"]), Text(hit["title"]), _snippet(hit["snippet"])
        )
    out.print(table)


@app.command()
def recent(
    limit: Annotated[int, typer.Option(min=1, max=500, help="At most this many notes.")] = 10,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The most recently changed notes, newest first."""
    client = _client(url, key)
    try:
        notes: list[dict[str, Any]] = client.json("GET", "/v1/recent", params={"limit": limit})
        if as_json:
            full = _fetch_notes(client, [n["path"] for n in notes])
            _print_json([_note_json(full[n["path"]]) for n in notes if n["path"] in full])
            return
    except MemvaultError as exc:
        _fail(exc)
    if not notes:
        out.print("the vault is empty")
        return
    for n in notes:
        out.print(Text.assemble(f"{n['updated_at'][:19]}  {n['path']}  ", (n["title"], "dim")))


# Characters a file name cannot hold on some platform, or that break [[wikilinks]].
_UNSAFE_NAME = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f-\x9f]+')
MAX_NAME_BYTES = 200


def _file_name(title: str) -> str:
    name = _UNSAFE_NAME.sub("-", title)
    name = re.sub(r"\s+", " ", name).strip(" .-")
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:
        name = name[:-1].rstrip(" .-")
    if not name:
        _die(f"the title {title!r} has no characters usable in a file name")
    return name


def _fill_template(markdown: str, values: dict[str, str]) -> str:
    """{{title}} and {{date}} (spaces inside the braces allowed); other fields are kept."""

    def sub(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return re.sub(r"\{\{\s*([A-Za-z_][\w-]*)\s*\}\}", sub, markdown)


def _fill_note_template(template: str, values: dict[str, str]) -> str:
    """The template filled in, its YAML frontmatter kept valid.

    `title: {{title}}` with a title like "Decision: use Postgres" would break the YAML
    (and lose the note's title and tags); such values are quoted in the frontmatter.
    """
    from memvault.domain.markdown import parse_note, split_frontmatter

    filled = _fill_template(template, values)
    if parse_note("t.md", filled).frontmatter_error is None:
        return filled
    body = split_frontmatter(template)[1]
    head = template[: len(template) - len(body)]
    quoted = {k: json.dumps(v, ensure_ascii=False) for k, v in values.items()}
    safer = _fill_template(head, quoted) + _fill_template(body, values)
    return safer if parse_note("t.md", safer).frontmatter_error is None else filled


@app.command()
def remember(
    title: str,
    body: Annotated[
        str | None, typer.Argument(help="Note text (default: stdin when piped, else none).")
    ] = None,
    decision: Annotated[bool, typer.Option("--decision", help="File under decisions/.")] = False,
    template: Annotated[
        str | None,
        typer.Option(help="Start from templates/NAME.md ({{title}} and {{date}} filled in)."),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Save a new atomic note in facts/ (or decisions/ with --decision); never overwrites."""
    client = _client(url, key)
    folder = "decisions" if decision else "facts"
    path = f"{folder}/{_file_name(title)}.md"
    today = dt.date.today().isoformat()
    if body is not None:
        text = body
    elif sys.stdin is not None and not sys.stdin.isatty():
        text = _decode(sys.stdin.buffer.read(), "stdin")
    else:
        text = ""
    try:
        if template:
            name = template.removeprefix("templates/").removesuffix(".md")
            tpl_path = f"templates/{name}.md"
            try:
                tpl = client.json("GET", note_url(tpl_path))["markdown"]
            except ApiError as exc:
                if exc.status != 404:
                    raise
                _die(f"no template {name!r}: {tpl_path} is not in the vault")
            markdown = _fill_note_template(tpl, {"title": title.strip(), "date": today})
            if text.strip():
                markdown = markdown.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
        else:
            markdown = f"# {title.strip()}\n" + (f"\n{text.rstrip()}\n" if text.strip() else "")
        try:
            result = client.json(
                "PUT", note_url(path), json={"markdown": markdown}, headers={"If-None-Match": "*"}
            )
        except ApiError as exc:
            if exc.status != 409:
                raise
            _die(
                f"{path} already exists; remember never overwrites a note. Pick another title,"
                f" or change it with `memvault append` or `memvault write`. ({exc.message})"
            )
        if as_json:
            _print_json(_note_json(client.json("GET", note_url(path))))
            return
    except MemvaultError as exc:
        _fail(exc)
    out.print(Text(f"{result['note']['path']}: {result['message']}"))


@app.command()
def journal(
    text: Annotated[str, typer.Argument(help="The entry.")],
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append a timestamped entry to today's daily/YYYY-MM-DD.md (created with a heading)."""
    entry_text = " ".join(text.split())
    if not entry_text:
        _die("the journal entry is empty")
    client = _client(url, key)
    now = dt.datetime.now()
    day = now.date().isoformat()
    path = f"daily/{day}.md"
    entry = f"- {now.strftime('%H:%M')} {entry_text}\n"
    try:
        try:
            result = client.json(
                "PUT",
                note_url(path),
                json={"markdown": f"# {day}\n\n{entry}"},
                headers={"If-None-Match": "*"},
            )
        except ApiError as exc:
            if exc.status != 409:
                raise
            result = client.json("POST", note_url(path, "/append"), json={"text": entry})
        if as_json:
            _print_json(_note_json(client.json("GET", note_url(path))))
            return
    except MemvaultError as exc:
        _fail(exc)
    out.print(Text(f"{path}: {result['message']}"))


# ---------------------------------------------------------------------- transfer
def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    )


@app.command("import")
def import_(
    archive: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)],
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import an Obsidian vault zip (adds and updates; never deletes; all or nothing)."""
    client = _client(url, key)
    try:
        size = archive.stat().st_size
        fh = archive.open("rb")
    except OSError as exc:
        _die(f"cannot read {archive}: {exc.strerror or exc}")
    try:
        with fh, _progress() as bar:
            task = bar.add_task("uploading", total=size)
            sent = 0

            def advance(n: int) -> None:
                nonlocal sent
                sent += n
                bar.update(task, advance=n, description="importing" if sent >= size else None)

            report = client.upload(fh, size, advance)
            bar.update(task, description="imported")
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(report)
        return
    out.print(
        f"created {report['created']}, updated {report['updated']},"
        f" unchanged {report['unchanged']}, skipped {report['skipped']}"
    )
    for name in report["skipped_files"][:20]:
        out.print(Text(f"  skipped {name}", style="dim"))
    if report["skipped"] > 20:
        out.print(Text(f"  … and {report['skipped'] - 20} more", style="dim"))


@app.command()
def export(
    destination: Annotated[
        Path | None,
        typer.Argument(help="Zip file (or folder) to write; default memvault-DATE.zip."),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """Export every note as an Obsidian-compatible zip."""
    client = _client(url, key)
    default_name = f"memvault-{dt.date.today().isoformat()}.zip"
    target = destination or Path(default_name)
    if target.is_dir():
        target = target / default_name
    partial = target.with_name(target.name + ".part")
    try:
        fh = partial.open("wb")
    except OSError as exc:
        _die(f"cannot write {target}: {exc.strerror or exc}")
    try:
        with fh, _progress() as bar:
            task = bar.add_task("downloading", total=None)
            count = client.download(
                fh,
                lambda total: bar.update(task, total=total),
                lambda n: bar.advance(task, n),
            )
        partial.replace(target)
    except MemvaultError as exc:
        _fail(exc)
    except OSError as exc:
        _die(f"cannot write {target}: {exc.strerror or exc}", 1)
    finally:
        partial.unlink(missing_ok=True)
    out.print(Text(f"exported {count} notes to {target}"))


# ---------------------------------------------------------------------- keys
def _on_off(value: bool) -> str:
    return "on" if value else "off"


RecallNotesOpt = Annotated[
    int | None, typer.Option("--recall-notes", help="Notes recall adds (1-20, default 5).")
]
RecallTokensOpt = Annotated[
    int | None,
    typer.Option("--recall-tokens", help="Token budget of recall (100-32000, default 2000)."),
]
SpendCapOpt = Annotated[
    str | None,
    typer.Option(
        "--spend-cap", help="Most the key may spend, in USD (e.g. 25 or 2.50); 'none' for no cap."
    ),
]
_USD_RE = re.compile(r"\$?([0-9]{1,12})(?:\.([0-9]{1,6}))?")


def _usd_micros(option: str, value: str, *, signed: bool = False) -> int:
    """USD as typed ("25", "$2.50", "-1.5" where allowed) to integer micro-USD."""
    text = value.strip()
    negative = signed and text.startswith("-")
    match = _USD_RE.fullmatch(text[1:] if negative else text)
    if match is None:
        _die(f"{option} {value!r}: give an amount in USD, e.g. 25 or 2.50 (6 decimals at most)")
    micros = int(match.group(1)) * 1_000_000 + int((match.group(2) or "").ljust(6, "0"))
    return -micros if negative else micros


def _usd(micros: int | None) -> str:
    return "none" if micros is None else usd(micros)


def _key_settings(
    recall_notes: int | None, recall_tokens: int | None, spend_cap: str | None
) -> dict[str, Any]:
    """The settings options given, as the REST body's fields (left out: unchanged)."""
    body: dict[str, Any] = {}
    if recall_notes is not None:
        body["recall_notes"] = recall_notes
    if recall_tokens is not None:
        body["recall_tokens"] = recall_tokens
    if spend_cap is not None:
        none = spend_cap.strip().lower() in ("none", "off", "no")
        body["spend_cap_micros"] = None if none else _usd_micros("--spend-cap", spend_cap)
    return body


@keys_app.command("create")
def keys_create(
    name: str,
    recall: Annotated[bool, typer.Option("--recall", help="Turn recall on.")] = False,
    tools: Annotated[bool, typer.Option("--tools", help="Turn memory tools on.")] = False,
    mcp: Annotated[bool, typer.Option("--mcp", help="Turn MCP on.")] = False,
    admin: Annotated[
        bool, typer.Option("--admin", help="May manage keys and limits (to rotate admin keys).")
    ] = False,
    recall_notes: RecallNotesOpt = None,
    recall_tokens: RecallTokensOpt = None,
    spend_cap: SpendCapOpt = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a key (toggles off unless turned on); its secret is printed this once."""
    name = name.strip()
    if not name:
        _die("the key name is empty")
    body: dict[str, Any] = {
        "name": name,
        "recall": recall,
        "tools": tools,
        "mcp": mcp,
        "admin": admin,
        **_key_settings(recall_notes, recall_tokens, spend_cap),
    }
    client = _client(url, key)
    try:
        created = client.json("POST", "/v1/keys", json=body)
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(created)
        return
    out.print(
        Text(
            f"key {created['id']} ({created['name']}): recall {_on_off(created['recall'])},"
            f" tools {_on_off(created['tools'])}, mcp {_on_off(created['mcp'])}."
            " Its secret is shown this once:\n"
        )
    )
    out.print(Text(f"    {created['secret']}\n", style="bold green"))


@keys_app.command("list")
def keys_list(url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False) -> None:
    """List the account's keys (secrets are never shown again; only their prefix)."""
    client = _client(url, key)
    try:
        keys = client.json("GET", "/v1/keys")
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(keys)
        return
    table = Table(
        "id",
        "name",
        "prefix",
        "recall",
        "tools",
        "mcp",
        "admin",
        "revoked",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.columns[0].no_wrap = True
    table.columns[2].no_wrap = True
    for k in keys:
        flags = [_on_off(k[f]) for f in ("recall", "tools", "mcp", "admin")]
        revoked = (k["revoked_at"] or "")[:10]
        table.add_row(k["id"], Text(k["name"]), k["prefix"] + "…", *flags, revoked)
    out.print(table)
    # The gateway settings in a table of their own: one wide table would not fit 80 columns.
    gateway = Table(
        "id",
        "recall notes",
        "recall tokens",
        "spend cap",
        "spent",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    gateway.columns[0].no_wrap = True
    for k in keys:
        gateway.add_row(
            k["id"],
            str(k["recall_notes"]),
            str(k["recall_tokens"]),
            _usd(k["spend_cap_micros"]),
            _usd(k["spent_micros"]),
        )
    out.print(gateway)


def _switch(option: str, value: str | None) -> bool | None:
    if value is None:
        return None
    if value.lower() in ("on", "true", "yes", "1"):
        return True
    if value.lower() in ("off", "false", "no", "0"):
        return False
    _die(f"{option} {value!r}: say on or off")


@keys_app.command("toggle")
def keys_toggle(
    key_id: str,
    recall: Annotated[str | None, typer.Option(help="on or off")] = None,
    tools: Annotated[str | None, typer.Option(help="on or off")] = None,
    mcp: Annotated[str | None, typer.Option(help="on or off")] = None,
    recall_notes: RecallNotesOpt = None,
    recall_tokens: RecallTokensOpt = None,
    spend_cap: SpendCapOpt = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Turn a key's recall, tools or mcp on or off (e.g. --mcp on --tools off), or change
    its recall size and spend cap (--recall-notes 8 --spend-cap 25, --spend-cap none)."""
    body: dict[str, Any] = {
        name: flag
        for name, flag in (
            ("recall", _switch("--recall", recall)),
            ("tools", _switch("--tools", tools)),
            ("mcp", _switch("--mcp", mcp)),
        )
        if flag is not None
    }
    settings = _key_settings(recall_notes, recall_tokens, spend_cap)
    body.update(settings)
    if not body:
        _die(
            "nothing to change: give --recall, --tools or --mcp with on or off, or"
            " --recall-notes, --recall-tokens or --spend-cap"
        )
    client = _client(url, key)
    try:
        updated = client.json("PATCH", f"/v1/keys/{key_id}", json=body)
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(updated)
        return
    out.print(
        Text(
            f"{updated['id']} ({updated['name']}): recall {_on_off(updated['recall'])},"
            f" tools {_on_off(updated['tools'])}, mcp {_on_off(updated['mcp'])}"
            + (
                f"; recall {updated['recall_notes']} notes within {updated['recall_tokens']}"
                f" tokens, spend cap {_usd(updated['spend_cap_micros'])}"
                if settings
                else ""
            )
            + (" (revoked)" if updated["revoked_at"] else "")
        )
    )


@keys_app.command("revoke")
def keys_revoke(
    key_id: str,
    yes: Annotated[
        bool, typer.Option("--yes", help="Allow revoking the very key making the call.")
    ] = False,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Revoke a key; it stops working at once and cannot be turned back on."""
    client = _client(url, key)
    try:
        if not yes and client.json("GET", "/v1/me")["id"] == key_id:
            _die(
                f"{key_id} is the key this command is using; once revoked it stops working"
                " for good. Pass --yes to do it anyway."
            )
        revoked = client.json("DELETE", f"/v1/keys/{key_id}")
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(revoked)
    else:
        out.print(Text(f"revoked {revoked['id']} ({revoked['name']})"))


# ---------------------------------------------------------------------- balance, usage
def _balance_line(balance: dict[str, Any]) -> str:
    held = f"; {_usd(balance['held_micros'])} held by requests in flight"
    if balance["balance_micros"] is None:
        return "unmetered (nothing is refused for balance)" + held
    return f"balance {_usd(balance['balance_micros'])}" + held


@app.command()
def balance(
    set_: Annotated[
        str | None, typer.Option("--set", help="Set the balance, in USD (admin key).")
    ] = None,
    add: Annotated[
        str | None,
        typer.Option("--add", help="Add credit in USD; negative to correct (admin key)."),
    ] = None,
    unmetered: Annotated[
        bool, typer.Option("--unmetered", help="Stop metering: nothing is refused for balance.")
    ] = False,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the account's balance, or change it (--set, --add or --unmetered)."""
    changes = [c for c in (set_ is not None, add is not None, unmetered) if c]
    if len(changes) > 1:
        _die("give one of --set, --add and --unmetered")
    body: dict[str, Any] | None = None
    if set_ is not None:
        body = {"set_micros": _usd_micros("--set", set_, signed=True)}
    elif add is not None:
        body = {"add_micros": _usd_micros("--add", add, signed=True)}
    elif unmetered:
        body = {"set_micros": None}
    client = _client(url, key)
    try:
        if body is None:
            result = client.json("GET", "/v1/balance")
        else:
            result = client.json("POST", "/v1/balance", json=body)
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    else:
        out.print(Text(_balance_line(result)))


def _date_option(option: str, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        _die(f"{option} {value!r}: give a date as YYYY-MM-DD")


@app.command()
def usage(
    from_: Annotated[
        str | None, typer.Option("--from", help="First day, YYYY-MM-DD (UTC).")
    ] = None,
    to: Annotated[str | None, typer.Option("--to", help="Last day, YYYY-MM-DD (UTC).")] = None,
    key_id: Annotated[
        str | None, typer.Option("--key-id", help="Only this key (admin keys see all).")
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Gateway usage per day and key (default: the last 30 days; at most 366)."""
    params = {
        name: value
        for name, value in (
            ("from", _date_option("--from", from_)),
            ("to", _date_option("--to", to)),
            ("key_id", key_id),
        )
        if value is not None
    }
    client = _client(url, key)
    try:
        report = client.json("GET", "/v1/usage", params=params)
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(report)
        return
    # Rounds, recalled notes and injected tokens are in --json: 80 columns hold no more.
    table = Table(
        "day",
        "key",
        "requests",
        "input",
        "output",
        "memory calls",
        "cost",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    for column in (0, 1, 6):
        table.columns[column].no_wrap = True
    for row in [*report["days"], {**report["totals"], "day": "total", "key_id": ""}]:
        table.add_row(
            row["day"],
            row["key_id"],
            str(row["requests"]),
            str(row["input_tokens"]),
            str(row["output_tokens"]),
            str(sum(row["memory_calls"].values())),
            row["cost_usd"],
        )
    out.print(Text(f"usage {report['from']} to {report['to']}"))
    out.print(table)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
