"""`memvault balance` and `memvault usage`: the account's credit and its gateway usage."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from memvault.cli.calls import run_call
from memvault.cli.client import Client
from memvault.cli.options import DEFAULT_URL, JsonOpt, KeyOpt, UrlOpt, usd_micros
from memvault.cli.output import die, out, usd_text


def _balance_line(balance: dict[str, Any]) -> str:
    held = f"; {usd_text(balance['held_micros'])} held by requests in flight"
    if balance["balance_micros"] is None:
        return "unmetered (nothing is refused for balance)" + held
    return f"balance {usd_text(balance['balance_micros'])}" + held


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
        die("give one of --set, --add and --unmetered")
    body: dict[str, Any] | None = None
    if set_ is not None:
        body = {"set_micros": usd_micros("--set", set_, signed=True)}
    elif add is not None:
        body = {"add_micros": usd_micros("--add", add, signed=True)}
    elif unmetered:
        body = {"set_micros": None}

    def call(client: Client) -> Any:
        if body is None:
            return client.json("GET", "/v1/balance")
        return client.json("POST", "/v1/balance", json=body)

    run_call(
        url,
        key,
        call,
        as_json=as_json,
        render_human=lambda result: out.print(Text(_balance_line(result))),
    )


def _date_option(option: str, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        die(f"{option} {value!r}: give a date as YYYY-MM-DD")


def _show_usage(report: Any) -> None:
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
    run_call(
        url,
        key,
        lambda client: client.json("GET", "/v1/usage", params=params),
        as_json=as_json,
        render_human=_show_usage,
    )
