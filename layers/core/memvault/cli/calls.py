"""One call to the server, the way every client command makes it.

A command checks its own arguments, then hands `run_call` what to ask the server and how
to show the answer: `run_call` builds the client from --url and --key, makes the call,
turns a refusal or failure into a clean exit (see `output.fail`), and prints the answer
as JSON (--json) or for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from memvault.cli.client import Client
from memvault.cli.output import die, fail, print_json
from memvault.errors import MemvaultError

T = TypeVar("T")


def connect(url: str, key: str | None) -> Client:
    if not url.startswith(("http://", "https://")):
        die(f"--url must start with http:// or https:// (got {url!r})")
    if not key or not key.strip():
        die(
            "no API key: pass --key or set MEMVAULT_API_KEY (the admin key"
            " `memvault serve` printed on first start)"
        )
    return Client(url, key.strip())


def run_call(
    url: str,
    key: str | None,
    call: Callable[[Client], T],
    *,
    render_human: Callable[[T], None],
    as_json: bool = False,
    render_json: Callable[[Client, T], Any] | None = None,
) -> None:
    """Call the server and print the answer: `render_json` (default: the answer itself)
    printed as JSON with --json, else `render_human`.

    `call` may read the command's input (stdin, a file) and make several requests; it
    and `render_json` (which may fetch more, e.g. the full notes of search hits) run
    with the client, whose MemvaultError (ApiError, unreachable, rate limited) ends the
    command through `fail`.
    """
    client = connect(url, key)
    try:
        result = call(client)
        if as_json:
            print_json(result if render_json is None else render_json(client, result))
            return
    except MemvaultError as exc:
        fail(exc)
    finally:
        client.close()
    render_human(result)
