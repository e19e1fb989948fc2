"""The `memvault` command line.

`memvault serve` runs the server on the embedded backend. Every other command is a
client of a running server (MEMVAULT_URL, MEMVAULT_API_KEY), so budgets, limits and
screening are the server's, shared with every other surface.

Exit codes: 0 success; 1 the server could not be reached or failed (5xx, rate
limited); 2 the request was refused (bad input, no or bad key, not found, conflict).
Results go to stdout; errors, hints and progress bars go to stderr.

This module is the app's wiring: the commands live one module per group (`serve`,
`notes`, `transfer`, `keys`, `members`, `billing`, `bootstrap`, `orgs`); they reach the
server through `calls.run_call` and print through `output`. Help lists the commands in
the order they are registered here. Every app, group and command is built on `commands`
(flags shown bare in help; markdown starting with "-" taken as text).
"""

from __future__ import annotations

from typing import Annotated

import typer

from memvault import __version__
from memvault.cli import billing, files, keys, members, memories, notes, org, orgs, serve, transfer
from memvault.cli.bootstrap import bootstrap
from memvault.cli.commands import App
from memvault.cli.output import out

app = App(
    help="memvault: a markdown vault that gives LLM API keys a memory.",
    no_args_is_help=True,
    add_completion=False,
    # A crash must never print local variables: they include the API key.
    pretty_exceptions_show_locals=False,
)
app.add_typer(keys.app, name="keys")
app.add_typer(members.app, name="members")
app.add_typer(memories.app, name="memories")
app.add_typer(orgs.app, name="orgs")
app.add_typer(org.app, name="org")
app.add_typer(files.app, name="files")
app.command("bootstrap")(bootstrap)
# Server and storage.
app.command()(serve.serve)
app.command("mcp")(serve.mcp_stdio)
app.command()(serve.reindex)
app.command("init-search")(serve.init_search)
# Notes.
app.command()(notes.read)
app.command()(notes.write)
app.command()(notes.append)
app.command()(notes.search)
app.command()(notes.recent)
app.command()(notes.remember)
app.command()(notes.journal)
# Transfer.
app.command("import")(transfer.import_)
app.command()(transfer.export)
# Balance and usage.
app.command()(billing.balance)
app.command()(billing.usage)


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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
