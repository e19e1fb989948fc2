"""`memvault members`: list, invite, change the role of and remove members (a client of
the server; the key's owner needs the role for it: owners and admins invite and remove,
owners change roles)."""

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
    help="List, invite, change the role of and remove members (owners and admins).",
    no_args_is_help=True,
)

ROLES = ("owner", "admin", "member")


def _role(value: str) -> str:
    role = value.strip().lower()
    if role not in ROLES:
        die(f"role {value!r}: say owner, admin or member")
    return role


def _show_members(members: Any) -> None:
    table = Table(
        "id",
        "name",
        "email",
        "role",
        "disabled",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.columns[0].no_wrap = True
    for m in members:
        table.add_row(
            m["id"],
            Text(m["name"]),
            Text(m["email"] or "-"),
            m["role"],
            (m["disabled_at"] or "")[:10],
        )
    out.print(table)


@app.command("list")
def members_list(url: UrlOpt = DEFAULT_URL, key: KeyOpt = None, as_json: JsonOpt = False) -> None:
    """The organisation's members (a member sees only themself)."""
    run_call(
        url,
        key,
        lambda client: client.json("GET", "/v1/members"),
        as_json=as_json,
        render_human=_show_members,
    )


@app.command("invite")
def members_invite(
    email: str,
    role: Annotated[str, typer.Option("--role", help="owner, admin or member.")] = "member",
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Invite someone; the invitation's token is printed this once (they accept it with
    POST /v1/invitations/accept, or in the dashboard)."""
    body = {"email": email.strip(), "role": _role(role)}

    def show(made: Any) -> None:
        out.print(
            Text(
                f"invited {made['email']} as {made['role']} (invitation {made['id']}, until"
                f" {made['expires_at'][:10]}). The token is shown this once:\n"
            )
        )
        out.print(Text(f"    {made['token']}\n", style="bold green"))

    run_call(
        url,
        key,
        lambda client: client.json("POST", "/v1/invitations", json=body),
        as_json=as_json,
        render_human=show,
    )


@app.command("role")
def members_role(
    member_id: str,
    role: str,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Give a member another role (owners only; an organisation keeps an owner)."""
    body = {"role": _role(role)}

    def show(changed: Any) -> None:
        out.print(Text(f"{changed['id']} ({changed['name']}) is now {changed['role']}"))

    run_call(
        url,
        key,
        lambda client: client.json("PATCH", f"/v1/members/{member_id}", json=body),
        as_json=as_json,
        render_human=show,
    )


@app.command("remove")
def members_remove(
    member_id: str,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove a member: their keys are revoked and their sessions end at once."""

    def call(client: Client) -> Any:
        client.request("DELETE", f"/v1/members/{member_id}")
        return {"removed": member_id}

    def show(_: Any) -> None:
        out.print(Text(f"removed {member_id}; their keys are revoked"))

    run_call(url, key, call, as_json=as_json, render_human=show)
