"""REST routes for money and usage: the account's balance and per-day usage reports."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Annotated

from fastapi import APIRouter, Query

from memvault.api import schemas
from memvault.api.deps import MAX_KEY_ID_CHARS, ActorDep, ManagerDep, ServicesDep, VaultRoute
from memvault.errors import InvalidInput

router = APIRouter(prefix="/v1", tags=["balance and usage"], route_class=VaultRoute)

DEFAULT_REPORT_DAYS = 30
_DAY_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _day(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        if not _DAY_RE.fullmatch(value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(
            f"{name!r} must be a date as YYYY-MM-DD (got {value!r})", code="invalid_date"
        ) from exc


@router.get("/usage", response_model=schemas.UsageOut, response_model_by_alias=True)
def usage(
    svc: ServicesDep,
    who: ActorDep,
    from_: Annotated[
        str | None, Query(alias="from", max_length=10, description="YYYY-MM-DD (UTC)")
    ] = None,
    to: Annotated[
        str | None, Query(max_length=10, description="YYYY-MM-DD (UTC), included")
    ] = None,
    key_id: Annotated[
        str | None, Query(max_length=MAX_KEY_ID_CHARS, description="Only this key's usage")
    ] = None,
) -> schemas.UsageOut:
    """Usage per UTC day and key. Owners and admins see every key of the organisation; a
    member their own keys; a key without its admin toggle only itself. Default: the last
    30 days; at most 366 days at once."""
    to_day = _day(to, "to") or svc.billing.default_range(DEFAULT_REPORT_DAYS)[1]
    from_day = _day(from_, "from") or to_day - timedelta(days=DEFAULT_REPORT_DAYS - 1)
    report = svc.org.usage(who, from_day=from_day, to_day=to_day, key_id=key_id)
    return schemas.UsageOut.of(report)


@router.get("/balance", response_model=schemas.BalanceOut)
def get_balance(svc: ServicesDep, who: ActorDep) -> schemas.BalanceOut:
    return schemas.BalanceOut.of(svc.org.balance(who))


@router.post("/balance", response_model=schemas.BalanceOut)
def change_balance(
    svc: ServicesDep, who: ManagerDep, body: schemas.BalanceIn
) -> schemas.BalanceOut:
    """Set the balance (``set_micros``; null makes the account unmetered) or add to it
    (``add_micros``; negative for corrections). Exactly one of the two. Owners only."""
    sent = body.model_fields_set
    if len(sent) != 1:
        raise InvalidInput(
            "send exactly one of set_micros (a balance, or null for unmetered) and add_micros",
            code="invalid_balance_change",
        )
    if "set_micros" in sent:
        balance = svc.org.set_balance(who, body.set_micros)
    elif body.add_micros is None:
        raise InvalidInput("add_micros must be a whole number", code="invalid_balance_change")
    else:
        balance = svc.org.add_balance(who, body.add_micros)
    return schemas.BalanceOut.of(balance)
