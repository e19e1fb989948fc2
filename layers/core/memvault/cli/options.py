"""Options shared by the commands that call the server, and parsers of option values."""

from __future__ import annotations

import re
from typing import Annotated

import typer

from memvault.cli.output import die

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

_USD_RE = re.compile(r"\$?([0-9]{1,12})(?:\.([0-9]{1,6}))?")


def usd_micros(option: str, value: str, *, signed: bool = False) -> int:
    """USD as typed ("25", "$2.50", "-1.5" where allowed) to integer micro-USD."""
    text = value.strip()
    negative = signed and text.startswith("-")
    match = _USD_RE.fullmatch(text[1:] if negative else text)
    if match is None:
        die(f"{option} {value!r}: give an amount in USD, e.g. 25 or 2.50 (6 decimals at most)")
    micros = int(match.group(1)) * 1_000_000 + int((match.group(2) or "").ljust(6, "0"))
    return -micros if negative else micros
