"""`memvault keys`: create, list, toggle and revoke API keys (admin key needed)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from memvault.cli.calls import run_call
from memvault.cli.client import Client
from memvault.cli.commands import App
from memvault.cli.options import DEFAULT_URL, JsonOpt, KeyOpt, UrlOpt, usd_micros
from memvault.cli.output import die, on_off, out, plural, usd_text

app = App(help="Create, list, toggle and revoke API keys (admin key needed).", no_args_is_help=True)

RecallNotesOpt = Annotated[
    int | None, typer.Option("--recall-notes", help="Notes recall adds (1-20, default 5).")
]
RecallTokensOpt = Annotated[
    int | None,
    typer.Option("--recall-tokens", help="Token budget of recall (100-32000, default 2000)."),
]
RecallModeOpt = Annotated[
    str | None,
    typer.Option(
        "--recall-mode",
        help="Recall's search mode: keyword, semantic, hybrid, or default (the vault's).",
    ),
]
MemoryTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--memory-tokens",
        help="Token budget of the memory profile block, x-mem-id (100-32000, default 1500).",
    ),
]
SpendCapOpt = Annotated[
    str | None,
    typer.Option(
        "--spend-cap", help="Most the key may spend, in USD (e.g. 25 or 2.50); 'none' for no cap."
    ),
]


def _key_settings(
    recall_notes: int | None,
    recall_tokens: int | None,
    spend_cap: str | None,
    memory_tokens: int | None = None,
    recall_mode: str | None = None,
) -> dict[str, Any]:
    """The settings options given, as the REST body's fields (left out: unchanged)."""
    body: dict[str, Any] = {}
    if recall_mode is not None:
        body["recall_mode"] = recall_mode  # the server names the values it takes
    if recall_notes is not None:
        body["recall_notes"] = recall_notes
    if recall_tokens is not None:
        body["recall_tokens"] = recall_tokens
    if memory_tokens is not None:
        body["memory_tokens"] = memory_tokens
    if spend_cap is not None:
        none = spend_cap.strip().lower() in ("none", "off", "no")
        body["spend_cap_micros"] = None if none else usd_micros("--spend-cap", spend_cap)
    return body


@app.command("create")
def keys_create(
    name: str,
    recall: Annotated[bool, typer.Option("--recall", help="Turn recall on.")] = False,
    tools: Annotated[bool, typer.Option("--tools", help="Turn memory tools on.")] = False,
    mcp: Annotated[bool, typer.Option("--mcp", help="Turn MCP on.")] = False,
    admin: Annotated[
        bool,
        typer.Option("--admin", help="Acts with your role in management (keys, members, billing)."),
    ] = False,
    no_vault: Annotated[
        bool, typer.Option("--no-vault", help="Bind the key to no vault (memory off).")
    ] = False,
    recall_notes: RecallNotesOpt = None,
    recall_tokens: RecallTokensOpt = None,
    spend_cap: SpendCapOpt = None,
    memory_tokens: MemoryTokensOpt = None,
    recall_mode: RecallModeOpt = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a key (toggles off unless turned on); its secret is printed this once."""
    name = name.strip()
    if not name:
        die("the key name is empty")
    body: dict[str, Any] = {
        "name": name,
        "recall": recall,
        "tools": tools,
        "mcp": mcp,
        "admin": admin,
        "vault": not no_vault,
        **_key_settings(
            recall_notes,
            recall_tokens,
            spend_cap,
            memory_tokens,
            None if recall_mode == "default" else recall_mode,  # a new key has the default
        ),
    }

    def show(created: Any) -> None:
        out.print(
            Text(
                f"key {created['id']} ({created['name']}): recall {on_off(created['recall'])},"
                f" tools {on_off(created['tools'])}, mcp {on_off(created['mcp'])}."
                " Its secret is shown this once:\n"
            )
        )
        out.print(Text(f"    {created['secret']}\n", style="bold green"))

    run_call(
        url,
        key,
        lambda client: client.json("POST", "/v1/keys", json=body),
        as_json=as_json,
        render_human=show,
    )


def _show_keys(keys: Any) -> None:
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
        flags = [on_off(k[f]) for f in ("recall", "tools", "mcp", "admin")]
        revoked = (k["revoked_at"] or "")[:10]
        table.add_row(k["id"], Text(k["name"]), k["prefix"] + "…", *flags, revoked)
    out.print(table)
    # Whose each key is (its owner's address, or name), in a table of its own to fit.
    owners = Table(
        "id", "owner", "vault", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )
    owners.columns[0].no_wrap = True
    for k in keys:
        owners.add_row(k["id"], Text(k.get("owner") or "-"), on_off(k.get("vault", True)))
    out.print(owners)
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
            usd_text(k["spend_cap_micros"]),
            usd_text(k["spent_micros"]),
        )
    out.print(gateway)


@app.command("list")
def keys_list(url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False) -> None:
    """List the keys you may see, with each one's owner (secrets are never shown again;
    only their prefix). Owners and admins see every key of the organisation."""
    run_call(
        url,
        key,
        lambda client: client.json("GET", "/v1/keys"),
        as_json=as_json,
        render_human=_show_keys,
    )


def _switch(option: str, value: str | None) -> bool | None:
    if value is None:
        return None
    if value.lower() in ("on", "true", "yes", "1"):
        return True
    if value.lower() in ("off", "false", "no", "0"):
        return False
    die(f"{option} {value!r}: say on or off")


@app.command("toggle")
def keys_toggle(
    key_id: str,
    recall: Annotated[str | None, typer.Option(help="on or off")] = None,
    tools: Annotated[str | None, typer.Option(help="on or off")] = None,
    mcp: Annotated[str | None, typer.Option(help="on or off")] = None,
    recall_notes: RecallNotesOpt = None,
    recall_tokens: RecallTokensOpt = None,
    spend_cap: SpendCapOpt = None,
    memory_tokens: MemoryTokensOpt = None,
    recall_mode: RecallModeOpt = None,
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
    settings = _key_settings(recall_notes, recall_tokens, spend_cap, memory_tokens, recall_mode)
    body.update(settings)
    if not body:
        die(
            "nothing to change: give --recall, --tools or --mcp with on or off, or"
            " --recall-notes, --recall-tokens, --memory-tokens or --spend-cap"
        )

    def show(updated: Any) -> None:
        out.print(
            Text(
                f"{updated['id']} ({updated['name']}): recall {on_off(updated['recall'])},"
                f" tools {on_off(updated['tools'])}, mcp {on_off(updated['mcp'])}"
                + (
                    f"; recall {plural(updated['recall_notes'], 'note')} within"
                    f" {plural(updated['recall_tokens'], 'token')},"
                    f" spend cap {usd_text(updated['spend_cap_micros'])}"
                    if settings
                    else ""
                )
                + (" (revoked)" if updated["revoked_at"] else "")
            )
        )

    run_call(
        url,
        key,
        lambda client: client.json("PATCH", f"/v1/keys/{key_id}", json=body),
        as_json=as_json,
        render_human=show,
    )


@app.command("revoke")
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

    def call(client: Client) -> Any:
        me = client.json("GET", "/v1/me")
        if not yes and (me.get("key") or {}).get("id") == key_id:
            die(
                f"{key_id} is the key this command is using; once revoked it stops working"
                " for good. Pass --yes to do it anyway."
            )
        return client.json("DELETE", f"/v1/keys/{key_id}")

    def show(revoked: Any) -> None:
        out.print(Text(f"revoked {revoked['id']} ({revoked['name']})"))

    run_call(url, key, call, as_json=as_json, render_human=show)
