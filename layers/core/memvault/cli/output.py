"""Where the CLI's output goes: results on stdout, errors, hints and progress on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from memvault.cli.client import ApiError
from memvault.domain.pricing import usd
from memvault.errors import MemvaultError, RateLimited

# soft_wrap: never hard-wrap lines (paths, keys and messages must survive a pipe intact).
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def die(message: str, code: int = 2) -> NoReturn:
    err.print(Text.assemble(("error", "red"), " ", message))
    raise typer.Exit(code)


def fail(exc: MemvaultError) -> NoReturn:
    """Report a refused or failed call; exit 2 for a refusal (4xx), 1 otherwise."""
    status = getattr(exc, "status", None)
    label = exc.code + (f" ({status})" if status else "")
    err.print(Text.assemble(("error", "red"), f" {label}: {exc.message}"))
    if isinstance(exc, RateLimited) and "retry" not in exc.message:
        err.print(f"the account's budget is spent; retry after {exc.retry_after:.0f} s")
    elif isinstance(exc, ApiError) and exc.status == 401:
        err.print("check --key or MEMVAULT_API_KEY (`memvault serve` printed the admin key)")
    raise typer.Exit(2 if isinstance(exc, ApiError) and exc.status < 500 else 1)


def print_json(value: Any) -> None:
    data = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    write_stdout(data)


def write_stdout(text: str) -> None:
    """Exact text on stdout, UTF-8 whatever the locale, no newline translation."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def plural(count: int, noun: str) -> str:
    """``1 note``, ``2 notes``, ``0 notes``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def on_off(value: bool) -> str:
    return "on" if value else "off"


def usd_text(micros: int | None) -> str:
    return "none" if micros is None else usd(micros)
