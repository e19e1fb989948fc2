"""Request dependencies: the services bundle and the authenticated caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from memvault.container import Services
from memvault.domain.models import ApiKey
from memvault.errors import InvalidInput
from memvault.services.context import Caller, Surface


def services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


ServicesDep = Annotated[Services, Depends(services)]


def bearer_secret(authorization: str | None, x_api_key: str | None = None) -> str | None:
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
        return None
    return x_api_key


def api_key(
    svc: ServicesDep,
    authorization: Annotated[str | None, Header()] = None,
) -> ApiKey:
    return svc.accounts.authenticate(bearer_secret(authorization))


KeyDep = Annotated[ApiKey, Depends(api_key)]


def caller(key: KeyDep) -> Caller:
    return Caller(account_id=key.account_id, surface=Surface.REST, key_id=key.id)


CallerDep = Annotated[Caller, Depends(caller)]


def admin_key(svc: ServicesDep, key: KeyDep) -> ApiKey:
    svc.accounts.require_admin(key)
    return key


AdminDep = Annotated[ApiKey, Depends(admin_key)]


def parse_if_match(if_match: str | None, if_none_match: str | None = None) -> int | None:
    """If-Match: "<version>" pins a version; If-None-Match: * means create-only (0)."""
    if if_none_match is not None:
        if if_none_match.strip() == "*":
            return 0
        raise InvalidInput("If-None-Match supports only '*'", code="invalid_precondition")
    if if_match is None:
        return None
    value = if_match.strip()
    if value.startswith("W/"):
        value = value[2:]
    value = value.strip('"')
    if not value.isdigit() or int(value) < 1:
        raise InvalidInput(
            'If-Match must be a note version (the ETag of a read), e.g. "3"',
            code="invalid_precondition",
        )
    return int(value)
