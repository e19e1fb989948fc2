"""`memvault memories`: memory profiles (memIDs), a client of the server's /v1/memories.

A member manages their own; owners and admins see everyone's (owners edit any, admins
may delete a colleague's). SLUG is a memory's slug or id."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from memvault.cli.calls import run_call
from memvault.cli.client import Client
from memvault.cli.commands import App
from memvault.cli.options import DEFAULT_URL, JsonOpt, KeyOpt, UrlOpt
from memvault.cli.output import die, out

app = App(
    help="Memory profiles (memIDs): guardrails, keyed preferences and facts a request"
    " attaches with the x-mem-id header.",
    no_args_is_help=True,
)


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "never"
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%d")


def _show_list(page: Any) -> None:
    table = Table(
        "slug",
        "name",
        "owner",
        "items",
        "retention",
        "attachable",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    for m in page["memories"]:
        table.add_row(
            Text(m["slug"]),
            Text(m["name"]),
            Text(m["owner"] or m["owner_member_id"]),
            str(m["item_count"]),
            f"{m['retention_days']} days" if m["retention_days"] else "forever",
            "yes" if m["attachable"] else "no (not yours)",
        )
    out.print(table)


def _show_memory(m: Any) -> None:
    state = "active" if m["active"] else "inactive"
    retention = f"{m['retention_days']} days" if m["retention_days"] else "forever"
    out.print(Text(f"{m['slug']} ({m['name']}), {state}, keeps items {retention}, id {m['id']}"))
    counts = ", ".join(f"{n} {t}s" for t, n in m["item_counts"].items())
    out.print(Text(f"{counts}; owner {m['owner'] or m['owner_member_id']}"))
    table = Table("id", "type", "key", "text", "expires", box=box.SIMPLE_HEAD, pad_edge=False)
    for item in m["items"]:
        table.add_row(
            item["id"],
            item["item_type"],
            Text(item["key"] or ""),
            Text(item["text"]),
            _when(item["expires_at"]),
        )
    out.print(table)


@app.command("list")
def memories_list(
    q: Annotated[str | None, typer.Option("--q", help="Match slug and name.")] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Your memories (owners and admins: the organisation's)."""
    params = {"q": q} if q else None
    run_call(
        url,
        key,
        lambda client: client.json("GET", "/v1/memories", params=params),
        as_json=as_json,
        render_human=_show_list,
    )


@app.command("show")
def memories_show(
    slug: str, url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False
) -> None:
    """A memory with its current items and when each expires."""
    run_call(
        url,
        key,
        lambda client: client.json("GET", f"/v1/memories/{slug}"),
        as_json=as_json,
        render_human=_show_memory,
    )


@app.command("create")
def memories_create(
    slug: str,
    name: Annotated[str | None, typer.Option("--name", help="Default: the slug.")] = None,
    description: Annotated[str, typer.Option("--description")] = "",
    retention_days: Annotated[
        int | None, typer.Option("--retention-days", help="Expire preferences and facts.")
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a memory of your own; SLUG is the memID requests send in x-mem-id."""
    body: dict[str, Any] = {"slug": slug, "name": name or slug, "description": description}
    if retention_days is not None:
        body["retention_days"] = retention_days

    def show(made: Any) -> None:
        out.print(Text(f"created {made['slug']} (id {made['id']}); attach it with"))
        out.print(Text(f"    x-mem-id: {made['slug']}", style="bold green"))

    run_call(
        url,
        key,
        lambda client: client.json("POST", "/v1/memories", json=body),
        as_json=as_json,
        render_human=show,
    )


@app.command("delete")
def memories_delete(
    slug: str, url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False
) -> None:
    """Erase a memory, its items and their embeddings (not reversible)."""

    def call(client: Client) -> Any:
        client.request("DELETE", f"/v1/memories/{slug}")
        return {"deleted": slug}

    run_call(
        url,
        key,
        call,
        as_json=as_json,
        render_human=lambda _: out.print(Text(f"deleted {slug} and everything in it")),
    )


@app.command("add-item")
def memories_add_item(
    slug: str,
    text: str,
    guardrail: Annotated[
        bool, typer.Option("--guardrail", help="Always sent, whole, never expires.")
    ] = False,
    preference: Annotated[
        str | None, typer.Option("--preference", metavar="KEY", help="A preference's key.")
    ] = None,
    fact: Annotated[
        bool, typer.Option("--fact", help="Sent when relevant to the message (embedded).")
    ] = False,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add an item: exactly one of --guardrail, --preference KEY or --fact."""
    if guardrail + fact + (preference is not None) != 1:
        die("say exactly one of --guardrail, --preference KEY or --fact")
    body: dict[str, Any] = {"text": text}
    if guardrail:
        body["item_type"] = "guardrail"
    elif fact:
        body["item_type"] = "fact"
    else:
        body["item_type"] = "preference"
        body["key"] = preference

    def show(item: Any) -> None:
        out.print(Text(f"added {item['item_type']} {item['id']} to {slug}"))

    run_call(
        url,
        key,
        lambda client: client.json("POST", f"/v1/memories/{slug}/items", json=body),
        as_json=as_json,
        render_human=show,
    )


@app.command("retention")
def memories_retention(
    slug: str,
    days: Annotated[str, typer.Argument(help="A number of days, or none (keep forever).")],
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Expire preferences and facts DAYS after each one's creation (guardrails never
    expire); `none` keeps them forever again."""
    value: int | None
    if days.strip().lower() in ("none", "null", "forever"):
        value = None
    else:
        try:
            value = int(days)
        except ValueError:
            die(f"days {days!r}: say a whole number of days, or none")
    body = {"retention_days": value}

    def show(m: Any) -> None:
        kept = f"{m['retention_days']} days" if m["retention_days"] else "forever"
        out.print(Text(f"{m['slug']} keeps preferences and facts {kept}"))

    run_call(
        url,
        key,
        lambda client: client.json("PATCH", f"/v1/memories/{slug}", json=body),
        as_json=as_json,
        render_human=show,
    )
