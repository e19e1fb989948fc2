"""`memvault org`: the organisation as the key's owner sees it, and its default search
settings (a client of the server: GET and PATCH /v1/org; owners and admins set them)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.text import Text

from memvault.cli.calls import run_call
from memvault.cli.commands import App
from memvault.cli.options import DEFAULT_URL, JsonOpt, KeyOpt, UrlOpt
from memvault.cli.output import die, out

app = App(
    help="Show the organisation and set its default search mode (owners and admins).",
    no_args_is_help=True,
)


def _show(org: Any) -> None:
    mode = org["search_mode"] or "default (the deployment's)"
    cut = "default (the mode's own)" if org["min_score"] is None else f"{org['min_score']:g}"
    out.print(
        Text(
            f"{org['name']} ({org['id']}): {org['note_count']} notes;"
            f" search mode {mode}, min score {cut}"
        )
    )


@app.command("show")
def org_show(url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False) -> None:
    """The organisation: its name, notes and default search settings."""
    run_call(
        url, key, lambda client: client.json("GET", "/v1/org"), as_json=as_json, render_human=_show
    )


@app.command("search")
def org_search(
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="Default search and recall mode: keyword, semantic, hybrid, or default"
            " (the deployment's).",
        ),
    ] = None,
    min_score: Annotated[
        str | None,
        typer.Option(
            "--min-score",
            help="Default cut-off, 0-1, for every mode; or default (the mode's own).",
        ),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Set the organisation's default search mode and min score, used by search, recall,
    memory_search and MCP where the request (or for recall the key) names none."""
    body: dict[str, Any] = {}
    if mode is not None:
        body["search_mode"] = mode  # the server names the values it takes
    if min_score is not None:
        if min_score == "default":
            body["min_score"] = None
        else:
            try:
                body["min_score"] = float(min_score)
            except ValueError:
                die(f"--min-score {min_score!r}: say a number from 0 to 1, or default")
    if not body:
        die("nothing to change: give --mode or --min-score")
    run_call(
        url,
        key,
        lambda client: client.json("PATCH", "/v1/org", json=body),
        as_json=as_json,
        render_human=_show,
    )
