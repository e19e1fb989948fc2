"""The `memvault` command line.

`memvault serve` runs the server on the embedded backend. Every other command is a
client of a running server (MEMVAULT_URL, MEMVAULT_API_KEY), so budgets, limits and
screening are the server's, shared with every other surface.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
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

from memvault.cli.client import ApiError, Client, note_url
from memvault.errors import MemvaultError, RateLimited

app = typer.Typer(
    help="memvault: a markdown vault that gives LLM API keys a memory.",
    no_args_is_help=True,
    add_completion=False,
)
keys_app = typer.Typer(help="Create, list, toggle and revoke API keys (admin key needed).")
app.add_typer(keys_app, name="keys")

out = Console()
err = Console(stderr=True)

UrlOpt = Annotated[
    str, typer.Option("--url", envvar="MEMVAULT_URL", help="The memvault server.")
]
KeyOpt = Annotated[
    str | None,
    typer.Option("--key", envvar="MEMVAULT_API_KEY", help="API key (or MEMVAULT_API_KEY)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
DEFAULT_URL = "http://127.0.0.1:8080"


def _fail(exc: MemvaultError) -> NoReturn:
    code = getattr(exc, "status", None)
    label = f"{exc.code}" + (f" ({code})" if code else "")
    err.print(f"[red]error[/red] {label}: {exc.message}")
    if isinstance(exc, RateLimited):
        err.print(f"retry after {exc.retry_after:.0f} s")
    raise typer.Exit(2 if isinstance(exc, ApiError) and exc.status < 500 else 1)


def _client(url: str, key: str | None) -> Client:
    if not key:
        err.print(
            "[red]error[/red] no API key: pass --key or set MEMVAULT_API_KEY (the admin key"
            " `memvault serve` printed on first start)"
        )
        raise typer.Exit(2)
    return Client(url, key)


def _body_of(markdown: str) -> str:
    from memvault.domain.markdown import body_for_search

    return body_for_search(markdown)


def _note_json(note: dict[str, Any], score: float | None = None) -> dict[str, Any]:
    """The agent-harness note shape: id, title, path, tags, body, score."""
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


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _read_stdin_or(text: str | None) -> str:
    if text is not None:
        return text
    if sys.stdin.isatty():
        err.print("[red]error[/red] give the text as an argument or pipe it on stdin")
        raise typer.Exit(2)
    return sys.stdin.read()


# ---------------------------------------------------------------------- server
@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface (default MEMVAULT_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default MEMVAULT_PORT).")] = None,
) -> None:
    """Run memvault on the embedded backend (SQLite under MEMVAULT_DATA_DIR)."""
    import uvicorn

    from memvault.api.app import create_app
    from memvault.container import get_services

    services = get_services()
    issued = services.accounts.bootstrap_local() if services.settings.backend == "sqlite" else None
    if issued is not None:
        out.print(
            "\n[bold]memvault: created the local account.[/bold] Its admin key is shown this"
            " once; keep it somewhere safe:\n"
        )
        out.print(f"    [bold green]{issued.secret}[/bold green]\n")
        out.print(f"    export MEMVAULT_API_KEY={issued.secret}\n")
    data = services.settings.data_dir if services.settings.backend == "sqlite" else "(aws)"
    out.print(f"memvault: data in {data}")
    uvicorn.run(
        create_app(services),
        host=host or services.settings.host,
        port=port or services.settings.port,
        log_level="warning",
    )


@app.command()
def reindex() -> None:
    """Rebuild the local account's search index from storage (embedded backend)."""
    from memvault.container import get_services
    from memvault.services.accounts import LOCAL_ACCOUNT_ID

    services = get_services()
    count = services.vault.reindex(LOCAL_ACCOUNT_ID)
    out.print(f"reindexed {count} notes")


# ---------------------------------------------------------------------- notes
@app.command()
def read(
    path: str, url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False
) -> None:
    """Print a note's markdown."""
    client = _client(url, key)
    try:
        note = client.json("GET", note_url(path))
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(_note_json(note))
    else:
        sys.stdout.write(note["markdown"])


@app.command()
def write(
    path: str,
    text: Annotated[str | None, typer.Argument(help="Markdown (default: stdin).")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read from a file.")] = None,
    if_match: Annotated[int | None, typer.Option(help="Only if the note is at this version.")]
    = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create or replace a note."""
    markdown = file.read_text(encoding="utf-8") if file else _read_stdin_or(text)
    client = _client(url, key)
    headers = {"If-Match": f'"{if_match}"'} if if_match else {}
    try:
        result = client.json("PUT", note_url(path), json={"markdown": markdown}, headers=headers)
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    else:
        out.print(f"{result['note']['path']}: {result['message']}")


@app.command()
def append(
    path: str,
    text: Annotated[str | None, typer.Argument(help="Text to append (default: stdin).")] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append text to a note (created when missing)."""
    body = _read_stdin_or(text)
    client = _client(url, key)
    try:
        result = client.json("POST", note_url(path, "/append"), json={"text": body})
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(result)
    else:
        out.print(f"{result['note']['path']}: {result['message']}")


@app.command()
def search(
    query: str,
    folder: Annotated[str, typer.Option(help="Only notes under this folder.")] = "",
    tag: Annotated[str | None, typer.Option(help="Only notes with this tag.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100)] = 10,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ranked full-text search. --json prints notes with a 0-1 score (1 = best hit)."""
    client = _client(url, key)
    params: dict[str, Any] = {"q": query, "limit": limit, "folder": folder}
    if tag:
        params["tag"] = tag
    try:
        hits = client.json("GET", "/v1/search", params=params)["results"]
        if as_json:
            top = max((h["score"] for h in hits), default=0.0) or 1.0
            notes = []
            for hit in hits:
                note = client.json("GET", note_url(hit["path"]))
                entry = _note_json(note, round(hit["score"] / top, 4))
                entry["raw_score"] = hit["score"]
                entry["snippet"] = hit["snippet"]
                notes.append(entry)
            _print_json(notes)
            return
    except MemvaultError as exc:
        _fail(exc)
    if not hits:
        out.print("no matches")
        return
    table = Table("score", "path", "title", "snippet", show_lines=False)
    for hit in hits:
        snippet = hit["snippet"].replace("<mark>", "[bold]").replace("</mark>", "[/bold]")
        table.add_row(f"{hit['score']:.3f}", hit["path"], hit["title"], snippet)
    out.print(table)


@app.command()
def recent(
    limit: Annotated[int, typer.Option(min=1, max=500)] = 10,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The most recently changed notes."""
    client = _client(url, key)
    try:
        notes = client.json("GET", "/v1/recent", params={"limit": limit})
        if as_json:
            _print_json([_note_json(client.json("GET", note_url(n["path"]))) for n in notes])
            return
    except MemvaultError as exc:
        _fail(exc)
    for n in notes:
        out.print(f"{n['updated_at'][:19]}  {n['path']}  [dim]{n['title']}[/dim]")


_UNSAFE_NAME = re.compile(r'[\\/:*?"<>|\x00-\x1f]+')


def _file_name(title: str) -> str:
    name = _UNSAFE_NAME.sub("-", title).strip(" .-")
    if not name:
        err.print("[red]error[/red] the title has no usable characters for a file name")
        raise typer.Exit(2)
    return name[:200]


@app.command()
def remember(
    title: str,
    body: Annotated[str | None, typer.Argument(help="Note text (default: stdin, or none).")]
    = None,
    decision: Annotated[bool, typer.Option("--decision", help="File under decisions/.")] = False,
    template: Annotated[str | None, typer.Option(help="A note in templates/ to start from.")]
    = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Save a new atomic note in facts/ (or decisions/ with --decision)."""
    client = _client(url, key)
    folder = "decisions" if decision else "facts"
    path = f"{folder}/{_file_name(title)}.md"
    today = dt.date.today().isoformat()
    text = body if body is not None else ("" if sys.stdin.isatty() else sys.stdin.read())
    try:
        if template:
            tpl_path = f"templates/{template.removesuffix('.md')}.md"
            markdown = client.json("GET", note_url(tpl_path))["markdown"]
            markdown = markdown.replace("{{title}}", title).replace("{{date}}", today)
            if text:
                markdown = markdown.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
        else:
            markdown = f"# {title}\n\n" + (text.rstrip("\n") + "\n" if text else "")
        result = client.json(
            "PUT", note_url(path), json={"markdown": markdown}, headers={"If-None-Match": "*"}
        )
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(_note_json(client.json("GET", note_url(path))))
    else:
        out.print(f"{result['note']['path']}: {result['message']}")


@app.command()
def journal(
    text: str,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append a timestamped entry to today's daily/YYYY-MM-DD.md."""
    client = _client(url, key)
    now = dt.datetime.now()
    path = f"daily/{now.date().isoformat()}.md"
    entry = f"- {now.strftime('%H:%M')} {text.strip()}\n"
    try:
        try:
            result = client.json(
                "PUT",
                note_url(path),
                json={"markdown": f"# {now.date().isoformat()}\n\n{entry}"},
                headers={"If-None-Match": "*"},
            )
        except ApiError as exc:
            if exc.status != 409:
                raise
            result = client.json("POST", note_url(path, "/append"), json={"text": entry})
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(_note_json(client.json("GET", note_url(path))))
    else:
        out.print(f"{path}: {result['message']}")


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
    size = archive.stat().st_size
    try:
        with archive.open("rb") as fh, _progress() as bar:
            task = bar.add_task("uploading", total=size)
            report = client.upload(fh, size, lambda n: bar.advance(task, n))
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
        out.print(f"  skipped {name}", style="dim")
    if report["skipped"] > 20:
        out.print(f"  … and {report['skipped'] - 20} more", style="dim")


@app.command()
def export(
    destination: Annotated[Path | None, typer.Argument(help="Zip file to write.")] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """Export every note as an Obsidian-compatible zip."""
    client = _client(url, key)
    target = destination or Path(f"memvault-{dt.date.today().isoformat()}.zip")
    partial = target.with_name(target.name + ".part")
    try:
        with partial.open("wb") as fh, _progress() as bar:
            task = bar.add_task("downloading", total=None)
            count = client.download(
                fh,
                lambda total: bar.update(task, total=total),
                lambda n: bar.advance(task, n),
            )
        partial.replace(target)
    except MemvaultError as exc:
        partial.unlink(missing_ok=True)
        _fail(exc)
    out.print(f"exported {count} notes to {target}")


# ---------------------------------------------------------------------- keys
@keys_app.command("create")
def keys_create(
    name: str,
    recall: Annotated[bool, typer.Option("--recall", help="Turn recall on.")] = False,
    tools: Annotated[bool, typer.Option("--tools", help="Turn memory tools on.")] = False,
    mcp: Annotated[bool, typer.Option("--mcp", help="Turn MCP on.")] = False,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a key; its secret is printed this once."""
    client = _client(url, key)
    try:
        created = client.json(
            "POST", "/v1/keys", json={"name": name, "recall": recall, "tools": tools, "mcp": mcp}
        )
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(created)
        return
    out.print(f"key {created['id']} ({name}); shown once:\n\n    {created['secret']}\n")


@keys_app.command("list")
def keys_list(url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False) -> None:
    """List the account's keys."""
    client = _client(url, key)
    try:
        keys = client.json("GET", "/v1/keys")
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(keys)
        return
    table = Table("id", "name", "prefix", "recall", "tools", "mcp", "admin", "revoked")
    for k in keys:
        flags = ["on" if k[f] else "off" for f in ("recall", "tools", "mcp", "admin")]
        table.add_row(k["id"], k["name"], k["prefix"] + "…", *flags, k["revoked_at"] or "")
    out.print(table)


def _switch(value: str | None) -> bool | None:
    if value is None:
        return None
    if value.lower() in ("on", "true", "yes", "1"):
        return True
    if value.lower() in ("off", "false", "no", "0"):
        return False
    err.print(f"[red]error[/red] {value!r}: say on or off")
    raise typer.Exit(2)


@keys_app.command("toggle")
def keys_toggle(
    key_id: str,
    recall: Annotated[str | None, typer.Option(help="on or off")] = None,
    tools: Annotated[str | None, typer.Option(help="on or off")] = None,
    mcp: Annotated[str | None, typer.Option(help="on or off")] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Turn a key's recall, tools or mcp on or off."""
    client = _client(url, key)
    body = {
        name: flag
        for name, flag in (("recall", _switch(recall)), ("tools", _switch(tools)),
                           ("mcp", _switch(mcp)))
        if flag is not None
    }
    try:
        updated = client.json("PATCH", f"/v1/keys/{key_id}", json=body)
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(updated)
        return
    out.print(
        f"{updated['id']}: recall {'on' if updated['recall'] else 'off'},"
        f" tools {'on' if updated['tools'] else 'off'}, mcp {'on' if updated['mcp'] else 'off'}"
    )


@keys_app.command("revoke")
def keys_revoke(
    key_id: str, url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False
) -> None:
    """Revoke a key; it stops working at once."""
    client = _client(url, key)
    try:
        revoked = client.json("DELETE", f"/v1/keys/{key_id}")
    except MemvaultError as exc:
        _fail(exc)
    if as_json:
        _print_json(revoked)
    else:
        out.print(f"revoked {revoked['id']} ({revoked['name']})")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
