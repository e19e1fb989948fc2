"""`memvault bootstrap`: the deployed stack's first organisation, its owner and their key.

After `sam deploy`, nothing can call the API yet: every route needs a key or a session,
and keys are made by members. This command writes the organisation (an account), its
first owner (with no address: they sign in with the key and set one) and the owner's
admin key straight into the stack's DynamoDB table with the deployer's own AWS
credentials (the table is the only resource it touches), prints the key once, and
refuses if the organisation exists. The table comes from the stack's outputs
(``--stack``) or from MEMVAULT_TABLE. More organisations: `memvault orgs create`.
"""

from __future__ import annotations

import re
import time
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from memvault.domain.models import Toggles
from memvault.errors import MemvaultError
from memvault.settings import Settings, get_settings

ACCOUNT_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
TABLE_OUTPUT = "NotesTableName"

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _die(message: str, code: int = 2) -> None:
    err.print(Text.assemble(("error", "red"), " ", message))
    raise typer.Exit(code)


def table_from_stack(stack: str, client: Any) -> str:
    """The stack's table name, from its outputs (``client``: a CloudFormation client)."""
    stacks = client.describe_stacks(StackName=stack)["Stacks"]
    for output in stacks[0].get("Outputs", []) if stacks else []:
        if output["OutputKey"] == TABLE_OUTPUT:
            return str(output["OutputValue"])
    raise ValueError(f"stack {stack!r} has no {TABLE_OUTPUT} output; is it memvault's?")


def account_id_for(name: str) -> str:
    """The account id a name gives: lower case, runs of other characters as one dash."""
    return re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")[:63]


def _accounts(settings: Settings) -> Any:
    from memvault.adapters.aws.bodies import BodyStore
    from memvault.adapters.aws.clients import make_client
    from memvault.adapters.aws.dynamo import Table
    from memvault.adapters.aws.store import DynamoVaultStore
    from memvault.services.accounts import AccountService

    ddb = make_client("dynamodb", settings.aws_region, settings.dynamodb_endpoint)
    s3 = make_client("s3", settings.aws_region, settings.s3_endpoint)
    store = DynamoVaultStore(Table(ddb, settings.table), BodyStore(s3, settings.bucket))
    return AccountService(store, time.time)


def bootstrap(
    name: Annotated[str, typer.Option("--name", help="The account's name, e.g. your team.")],
    stack: Annotated[
        str | None,
        typer.Option("--stack", help="The deployed stack (its NotesTableName output)."),
    ] = None,
    account_id: Annotated[
        str | None,
        typer.Option("--account-id", help="The account id (default: from the name)."),
    ] = None,
) -> None:
    """Create the deployed stack's first organisation and print its owner's admin key, once."""
    settings = get_settings()
    if stack:
        from memvault.adapters.aws.clients import make_client

        try:
            table = table_from_stack(stack, make_client("cloudformation", settings.aws_region))
        except Exception as exc:  # no credentials, no such stack, not memvault's
            _die(f"cannot read stack {stack!r}: {exc}", 1)
        settings = settings.model_copy(update={"table": table})
    elif settings.backend != "aws":
        _die("bootstrap is for a deployed stack: pass --stack NAME, or set MEMVAULT_BACKEND=aws")
    ident = account_id or account_id_for(name)
    if not ACCOUNT_ID.match(ident):
        _die(f"account id {ident!r} must be 1-63 of a-z, 0-9 and '-' (pass --account-id)")
    accounts = _accounts(settings)
    try:
        if accounts.store.get_account(ident) is not None:
            _die(
                f"account {ident!r} exists; make more keys with an admin key:"
                " memvault keys create NAME --url <ApiUrl>",
                2,
            )
        accounts.create_account(name.strip() or ident, account_id=ident)
        issued = accounts.issue_key(
            ident, name="admin", toggles=Toggles(recall=True, tools=True, mcp=True), admin=True
        )
    except MemvaultError as exc:
        _die(f"{exc.code}: {exc.message}", 1)
    err.print(
        f"organisation {ident!r} created in table {settings.table!r}; its owner's admin key"
        " (shown once):"
    )
    out.print(issued.secret)
