"""`memvault orgs`: the operator's organisations, on storage directly (not the server).

`orgs create` makes an organisation with its first owner and prints the owner's first
key once: on the embedded backend in process on the data directory, on a deployed stack
straight into its table, as `memvault bootstrap` does (``--stack``, or MEMVAULT_TABLE with
MEMVAULT_BACKEND=aws). The owner signs in with the key (POST /v1/sessions) and sets a
password. `orgs list` lists them (with ``--upgrade``, on a stack, it first adds the
organisations made before the directory existed).
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from memvault.cli.bootstrap import ACCOUNT_ID, account_id_for, table_from_stack
from memvault.cli.commands import App
from memvault.cli.options import JsonOpt
from memvault.cli.output import die, err, out, print_json
from memvault.errors import MemvaultError
from memvault.settings import Settings, get_settings

app = App(help="Create and list organisations (operators; on storage directly).")

StackOpt = Annotated[
    str | None,
    typer.Option("--stack", help="A deployed stack (its NotesTableName output)."),
]


def _settings(stack: str | None) -> Settings:
    settings = get_settings()
    if stack:
        from memvault.adapters.aws.clients import make_client

        try:
            table = table_from_stack(stack, make_client("cloudformation", settings.aws_region))
        except Exception as exc:  # no credentials, no such stack, not memvault's
            die(f"cannot read stack {stack!r}: {exc}", 1)
        return settings.model_copy(update={"table": table, "backend": "aws"})
    return settings


def _people(settings: Settings) -> Any:
    """(store, MemberService) for this backend: the embedded services, or on AWS only the
    table's (no search domain is needed to make people)."""
    if settings.backend == "sqlite":
        from memvault.container import build_services

        services = build_services(settings)
        return services.store, services.members
    from memvault.adapters.aws.bodies import BodyStore
    from memvault.adapters.aws.budgets import DynamoRateLimiter
    from memvault.adapters.aws.clients import make_client
    from memvault.adapters.aws.dynamo import Table as DynamoTable
    from memvault.adapters.aws.store import DynamoVaultStore
    from memvault.container import build_people, sign_in_policies
    from memvault.services.accounts import AccountService

    ddb = make_client("dynamodb", settings.aws_region, settings.dynamodb_endpoint)
    s3 = make_client("s3", settings.aws_region, settings.s3_endpoint)
    table = DynamoTable(ddb, settings.table)
    store = DynamoVaultStore(table, BodyStore(s3, settings.bucket))
    per_email, per_client = sign_in_policies(settings)
    _, _, members = build_people(
        settings,
        store,
        AccountService(store, time.time),
        time.time,
        DynamoRateLimiter(table, per_email),
        DynamoRateLimiter(table, per_client),
    )
    return store, members


@app.command("create")
def orgs_create(
    name: Annotated[str, typer.Argument(help="The organisation's name.")],
    owner_email: Annotated[
        str, typer.Option("--owner-email", help="Its first owner's sign-in address.")
    ],
    owner_name: Annotated[
        str | None,
        typer.Option("--owner-name", help="The owner's name (default: from the address)."),
    ] = None,
    org_id: Annotated[
        str | None, typer.Option("--org-id", help="The organisation's id (default: from the name).")
    ] = None,
    stack: StackOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create an organisation and its owner, and print the owner's first key, once."""
    settings = _settings(stack)
    ident = org_id or account_id_for(name)
    if not ACCOUNT_ID.match(ident):
        die(f"organisation id {ident!r} must be 1-63 of a-z, 0-9 and '-' (pass --org-id)")
    try:
        store, members = _people(settings)
        if store.get_account(ident) is not None:
            die(f"organisation {ident!r} exists (pass another --org-id)")
        created = members.create_organisation(
            name, owner_email=owner_email, owner_name=owner_name, account_id=ident
        )
    except MemvaultError as exc:
        die(f"{exc.code}: {exc.message}", 2 if exc.code != "dependency_unavailable" else 1)
    key = created.key
    assert key is not None
    if as_json:
        print_json(
            {
                "id": created.account.id,
                "name": created.account.name,
                "owner": {"id": created.owner.id, "email": created.owner.email},
                "key": {"id": key.key.id, "secret": key.secret},
            }
        )
        return
    err.print(
        Text(
            f"organisation {ident!r} created, owner {created.owner.email};"
            " the owner's admin key (shown once):"
        )
    )
    out.print(key.secret)


@app.command("list")
def orgs_list(
    stack: StackOpt = None,
    upgrade: Annotated[
        bool,
        typer.Option(
            "--upgrade", help="First list the stack's organisations made before the directory."
        ),
    ] = False,
    account: Annotated[
        list[str] | None, typer.Option("--account", help="With --upgrade: an organisation to add.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The organisations on this backend, oldest first."""
    settings = _settings(stack)
    try:
        store, _ = _people(settings)
        for ident in (account or []) if upgrade else []:
            store.list_organisation(ident)
        found = store.list_organisations()
    except MemvaultError as exc:
        die(f"{exc.code}: {exc.message}", 1)
    if as_json:
        print_json(
            [
                {"id": a.id, "name": a.name, "notes": a.note_count, "bytes": a.total_bytes}
                for a in found
            ]
        )
        return
    table = Table("id", "name", "notes", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.columns[0].no_wrap = True
    for a in found:
        table.add_row(a.id, Text(a.name), str(a.note_count))
    out.print(table)
