"""The note commands: read, write, append, search, recent, remember and journal."""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from memvault.cli.calls import run_call
from memvault.cli.client import ApiError, Client, note_url
from memvault.cli.options import DEFAULT_URL, JsonOpt, KeyOpt, UrlOpt
from memvault.cli.output import die, out, write_stdout


# ---------------------------------------------------------------------- helpers
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
        die(f"{source} is not UTF-8 text (byte {exc.start}); notes are UTF-8 markdown")


def _read_stdin_or(text: str | None, what: str = "the text") -> str:
    if text is not None:
        return text
    if sys.stdin is None or sys.stdin.isatty():
        die(f"give {what} as an argument or pipe it on stdin")
    # Bytes, not text mode: the note is stored exactly as given (CRLF kept, UTF-8).
    return _decode(sys.stdin.buffer.read(), "stdin")


def _read_file(file: Path) -> str:
    try:
        data = file.read_bytes()
    except OSError as exc:
        die(f"cannot read {file}: {exc.strerror or exc}")
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


def _print_saved(result: dict[str, Any]) -> None:
    out.print(Text(f"{result['note']['path']}: {result['message']}"))


def _written(result: dict[str, Any], markdown: str) -> dict[str, Any]:
    """A saved note in the agent-harness shape, from the server's answer (which has all
    but the markdown) and the markdown at that version; ``changed`` as the server said."""
    return {**_note_json({**result["note"], "markdown": markdown}), "changed": result["changed"]}


def _print_markdown(markdown: str) -> None:
    """The note exactly as stored, bytes and all. On a terminal only, a final newline
    is added when the note has none, so the prompt starts on a line of its own."""
    if markdown and not markdown.endswith("\n") and sys.stdout.isatty():
        markdown += "\n"
    write_stdout(markdown)


# ---------------------------------------------------------------------- read, write, append
def read(
    path: str, url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False
) -> None:
    """Print a note's markdown, exactly as stored (on a terminal, ending in a newline)."""
    run_call(
        url,
        key,
        lambda client: client.json("GET", note_url(path)),
        as_json=as_json,
        render_json=lambda _, note: _note_json(note),
        render_human=lambda note: _print_markdown(note["markdown"]),
    )


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
        die("give the markdown either as an argument or with --file, not both")

    def call(client: Client) -> tuple[Any, str]:
        markdown = _read_file(file) if file is not None else _read_stdin_or(text, "the markdown")
        headers = {"If-Match": f'"{if_match}"'} if if_match else {}
        body = {"markdown": markdown}
        return client.json("PUT", note_url(path), json=body, headers=headers), markdown

    run_call(
        url,
        key,
        call,
        as_json=as_json,
        # Saved or unchanged, the note's markdown is the markdown sent.
        render_json=lambda _, saved: _written(*saved),
        render_human=lambda saved: _print_saved(saved[0]),
    )


def append(
    path: str,
    text: Annotated[str | None, typer.Argument(help="Text to append (default: stdin).")] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append text to a note, on its own line (the note is created when missing)."""

    def call(client: Client) -> Any:
        body = _read_stdin_or(text, "the text to append")
        if not body.strip():
            die("there is nothing to append (the text is empty)")
        return client.json("POST", note_url(path, "/append"), json={"text": body})

    def as_note(client: Client, result: Any) -> dict[str, Any]:
        # The version this append made, whatever was written since.
        note = result["note"]
        version = client.json("GET", note_url(note["path"], f"/versions/{note['version']}"))
        return _written(result, version["markdown"])

    run_call(url, key, call, as_json=as_json, render_json=as_note, render_human=_print_saved)


# ---------------------------------------------------------------------- search, recent
Hits = list[dict[str, Any]]


class SearchModeOpt(StrEnum):
    keyword = "keyword"
    semantic = "semantic"
    hybrid = "hybrid"


def search(
    query: str,
    folder: Annotated[str, typer.Option(help="Only notes under this folder.")] = "",
    tag: Annotated[str | None, typer.Option(help="Only notes with this tag.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many hits.")] = 10,
    mode: Annotated[
        SearchModeOpt | None,
        typer.Option(help="keyword, semantic or hybrid (default: hybrid when vectors are on)."),
    ] = None,
    min_score: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="Drop hits scoring below this (semantic/hybrid: 0.4)."),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ranked search by words, meaning or both. Scores are the server's 0-1 relevance
    (README, "Search ranking"): comparable across queries."""
    if not query.strip():
        die("the search text is empty")
    params: dict[str, Any] = {"q": query, "limit": limit, "folder": folder}
    if tag:
        params["tag"] = tag
    if mode is not None:
        params["mode"] = mode.value
    if min_score is not None:
        params["min_score"] = min_score

    def call(client: Client) -> Hits:
        body = client.json("GET", "/v1/search", params=params)
        if body.get("fallback"):
            typer.echo(f"note: {body['fallback']}", err=True)
        hits: Hits = body["results"]
        return hits

    def as_notes(client: Client, hits: Hits) -> list[dict[str, Any]]:
        notes = _fetch_notes(client, [hit["path"] for hit in hits])
        entries = []
        for hit in hits:
            if hit["path"] not in notes:
                continue
            entry = _note_json(notes[hit["path"]], float(hit["score"]))
            entry["snippet"] = hit["snippet"]
            if hit.get("chunk"):
                entry["chunk"] = hit["chunk"]  # heading, offset, length: where it matched
            entries.append(entry)
        return entries

    def show(hits: Hits) -> None:
        if not hits:
            out.print("no matches")
            return
        table = Table("score", "path", "title", "snippet", show_lines=False)
        for hit in hits:
            table.add_row(
                f"{float(hit['score']):.2f}",
                Text(hit["path"]),
                Text(hit["title"]),
                _snippet(hit["snippet"]),
            )
        out.print(table)

    run_call(url, key, call, as_json=as_json, render_json=as_notes, render_human=show)


def recent(
    limit: Annotated[int, typer.Option(min=1, max=500, help="At most this many notes.")] = 10,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The most recently changed notes, newest first."""

    def as_notes(client: Client, notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        full = _fetch_notes(client, [n["path"] for n in notes])
        return [_note_json(full[n["path"]]) for n in notes if n["path"] in full]

    def show(notes: list[dict[str, Any]]) -> None:
        if not notes:
            out.print("the vault is empty")
            return
        for n in notes:
            out.print(Text.assemble(f"{n['updated_at'][:19]}  {n['path']}  ", (n["title"], "dim")))

    run_call(
        url,
        key,
        lambda client: client.json("GET", "/v1/recent", params={"limit": limit}),
        as_json=as_json,
        render_json=as_notes,
        render_human=show,
    )


# ---------------------------------------------------------------------- remember, journal
# Characters a file name cannot hold on some platform, or that break [[wikilinks]].
_UNSAFE_NAME = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f-\x9f]+')
MAX_NAME_BYTES = 200


def _file_name(title: str) -> str:
    name = _UNSAFE_NAME.sub("-", title)
    name = re.sub(r"\s+", " ", name).strip(" .-")
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:
        name = name[:-1].rstrip(" .-")
    if not name:
        die(f"the title {title!r} has no characters usable in a file name")
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


Saved = tuple[str, Any]  # the path written, and the server's answer


def _read_back(client: Client, saved: Saved) -> dict[str, Any]:
    """The note just saved, read back in the agent-harness shape."""
    return _note_json(client.json("GET", note_url(saved[0])))


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

    def call(client: Client) -> Saved:
        folder = "decisions" if decision else "facts"
        path = f"{folder}/{_file_name(title)}.md"
        today = dt.date.today().isoformat()
        if body is not None:
            text = body
        elif sys.stdin is not None and not sys.stdin.isatty():
            text = _decode(sys.stdin.buffer.read(), "stdin")
        else:
            text = ""
        if template:
            name = template.removeprefix("templates/").removesuffix(".md")
            tpl_path = f"templates/{name}.md"
            try:
                tpl = client.json("GET", note_url(tpl_path))["markdown"]
            except ApiError as exc:
                if exc.status != 404:
                    raise
                die(f"no template {name!r}: {tpl_path} is not in the vault")
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
            die(
                f"{path} already exists; remember never overwrites a note. Pick another title,"
                f" or change it with `memvault append` or `memvault write`. ({exc.message})"
            )
        return path, result

    run_call(
        url,
        key,
        call,
        as_json=as_json,
        render_json=_read_back,
        render_human=lambda saved: _print_saved(saved[1]),
    )


def journal(
    text: Annotated[str, typer.Argument(help="The entry.")],
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append a timestamped entry to today's daily/YYYY-MM-DD.md (created with a heading)."""
    entry_text = " ".join(text.split())
    if not entry_text:
        die("the journal entry is empty")

    def call(client: Client) -> Saved:
        now = dt.datetime.now()
        day = now.date().isoformat()
        path = f"daily/{day}.md"
        entry = f"- {now.strftime('%H:%M')} {entry_text}\n"
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
        return path, result

    run_call(
        url,
        key,
        call,
        as_json=as_json,
        render_json=_read_back,
        render_human=lambda saved: out.print(Text(f"{saved[0]}: {saved[1]['message']}")),
    )
