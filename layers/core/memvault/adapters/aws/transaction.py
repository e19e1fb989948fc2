"""Writing a plan as DynamoDB transactions: the conditional actions that take every
touched item from its original to its final state, and the domain error a cancelled
transaction means. The quota shard update every commit adds is ``quota``'s. Shared by
the commit (``commit``) and the journaled bulk commit (``bulk``)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys, quota
from memvault.adapters.aws.backoff import is_conflict
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Item, Table, serialize, values
from memvault.adapters.aws.plan import Plan, StaleRead
from memvault.adapters.aws.quota import QuotaRetry
from memvault.errors import Conflict, ServiceUnavailable


def item_actions(table: Table, plan: Plan, *, trims: bool = True) -> list[dict[str, Any]]:
    """Conditional writes taking every touched item from its original to its final state.

    ``trims=False`` leaves out the deletes of versions past the 50 kept: a journaled
    (bulk) commit trims only once it has succeeded, so a rollback never needs them.
    """
    actions: list[dict[str, Any]] = []
    changed = plan.changed_keys()
    for sk in changed:
        original, final = plan.originals.get(sk), plan.finals[sk]
        if final is None:
            action: dict[str, Any] = {
                "Delete": {"TableName": table.name, "Key": dynamo.key(plan.pk, sk)}
            }
            body = action["Delete"]
        else:
            action = {"Put": {"TableName": table.name, "Item": serialize(final)}}
            body = action["Put"]
        if sk in plan.blind and sk not in plan.absent_checks:
            pass
        elif original is None:
            body["ConditionExpression"] = "attribute_not_exists(pk)"
        elif "version" in original:
            body.update(unchanged_condition(original))
        actions.append(action)
    for sk in sorted(plan.absent_checks.difference(changed)):
        actions.append(
            {
                "ConditionCheck": {
                    "TableName": table.name,
                    "Key": dynamo.key(plan.pk, sk),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
        )
    for version_item, _markdown in plan.new_versions:
        actions.append(
            {
                "Put": {
                    "TableName": table.name,
                    "Item": serialize(version_item),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
        )
    for note_id, version, _body in plan.trimmed_versions if trims else ():
        actions.append(
            {
                "Delete": {
                    "TableName": table.name,
                    "Key": dynamo.key(plan.pk, keys.version_sk(note_id, version)),
                }
            }
        )
    return actions


def transact(
    table: Table, plan: Plan, actions: list[dict[str, Any]], *, once: bool = False
) -> None:
    """The plan's transaction. ``once``: a transaction conflict is raised as a
    ``QuotaRetry`` (the commit picks another shard) instead of being sent again as is."""
    try:
        if once:
            table.transact_once(actions)
        else:
            table.transact(actions)
    except ClientError as exc:
        if once and is_conflict(exc):
            raise QuotaRetry(read=False) from exc
        raise explain_cancel(plan, exc, actions) from exc


def explain_cancel(plan: Plan, exc: ClientError, actions: list[dict[str, Any]]) -> BaseException:
    """Which condition failed, as the domain error a user can act on (or ``QuotaRetry``
    when it was a quota shard's: the commit reads the shards and decides)."""
    unexplained: BaseException = exc
    if error_code(exc) != "TransactionCanceledException":
        return unexplained
    reasons: list[dict[str, Any]] = exc.response.get("CancellationReasons", [])
    for action, reason in zip(actions, reasons, strict=False):
        if reason.get("Code") != "ConditionalCheckFailed":
            continue
        sk = action_sk(action)
        if quota.is_shard(sk):
            return QuotaRetry(read=True)
        if plan.optimistic and sk in plan.unverified | plan.absent_checks:
            return StaleRead()
        return Conflict(
            "another writer changed these notes at the same time; re-read and retry",
            code="version_conflict",
        )
    if any(r.get("Code") == "TransactionConflict" for r in reasons):
        # Sent again with backoff until now: the table is too busy, not the notes changed.
        return ServiceUnavailable(
            "the vault is too busy to take this write now; retry shortly",
            code="write_contended",
        )
    return unexplained


def action_sk(action: dict[str, Any]) -> str | None:
    body = next(iter(action.values()))
    item_key = body.get("Key") or body.get("Item") or {}
    sk: str | None = item_key.get(keys.TABLE_SK, {}).get("S")
    return sk


def unchanged_condition(original: Item) -> dict[str, Any]:
    """The write condition that ``original`` is still what is stored. For a note item,
    version, path and note id together pin every attribute but the update time (which
    a move sets, and a move keeps the version), so an item taken from a recent read is
    as good as one read in this commit."""
    condition = "#version = :v"
    names = {"#version": "version"}
    attrs: dict[str, Any] = {":v": original["version"]}
    if "note_id" in original and "path" in original:
        condition += " AND #note_id = :id AND #path = :path"
        names |= {"#note_id": "note_id", "#path": "path"}
        attrs |= {":id": original["note_id"], ":path": original["path"]}
    return {
        "ConditionExpression": condition,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values(attrs),
    }
