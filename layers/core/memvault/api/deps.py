"""Request dependencies: the services bundle and the authenticated caller.

Taking the key (or the session cookie) and reading the body capped are shared with MCP
(``memvault.http_edge``); this module turns them into FastAPI dependencies and the REST
routes' order of checks: who calls (401), their CSRF token on an unsafe request with a
cookie (403), a person's credential on the routes only people use (403), then the body.
What each role may do is the services' (``domain.policy``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from typing import Annotated, Any
from urllib.parse import unquote_to_bytes

from fastapi import Depends, Path, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from memvault.container import Services
from memvault.domain.models import ApiKey
from memvault.errors import InvalidInput, InvalidPath, PermissionDenied
from memvault.http_edge import MAX_REQUEST_BYTES, authenticate_caller, read_body
from memvault.services.context import Caller

_KEY_STATE = "memvault_api_key"
_CALLER_STATE = "memvault_caller"

# Versions are counted from 1; anything past this is no version a note can reach (and
# would not fit a 64-bit storage integer).
MAX_VERSION = 2**53
_VERSION_RE = re.compile(r"[0-9]{1,16}")

# A key id in a URL or a filter: ids are 16 hex characters, so anything much longer names
# no key, and is refused before it is looked up or echoed in a 404.
MAX_KEY_ID_CHARS = 64
KeyId = Annotated[str, Path(max_length=MAX_KEY_ID_CHARS)]


def services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


ServicesDep = Annotated[Services, Depends(services)]


def authenticated(request: Request, svc: Services) -> Caller:
    """The request's caller, from its Bearer key or its session cookie (blocking; once
    per request)."""
    cached = getattr(request.state, _CALLER_STATE, None)
    if isinstance(cached, Caller):
        return cached
    who, key = authenticate_caller(svc, request)
    setattr(request.state, _CALLER_STATE, who)
    setattr(request.state, _KEY_STATE, key)
    return who


def api_key(request: Request) -> ApiKey | None:
    """The key the request authenticated with (None for a session)."""
    key = getattr(request.state, _KEY_STATE, None)
    return key if isinstance(key, ApiKey) else None


def actor(request: Request, svc: ServicesDep) -> Caller:
    return authenticated(request, svc)


# Anyone authenticated: a person's session, a key with the admin toggle, a vault key.
ActorDep = Annotated[Caller, Depends(actor)]


def manager(svc: ServicesDep, who: ActorDep) -> Caller:
    svc.callers.require_manager(who)
    return who


# A session, or a key with the admin toggle (a vault key is refused before the body).
ManagerDep = Annotated[Caller, Depends(manager)]


def require_vault(request: Request) -> None:
    key = api_key(request)
    if key is not None and not key.vault:
        raise PermissionDenied(
            "memory unavailable: no vault is bound to this key", code="vault_not_bound"
        )


def caller(request: Request, who: ActorDep) -> Caller:
    """The vault routes' caller (a key bound to no vault is refused)."""
    require_vault(request)
    return who


CallerDep = Annotated[Caller, Depends(caller)]


def check_url_path(request: Request) -> None:
    """Refuse a URL whose percent-decoded path is not UTF-8.

    The server decodes such bytes to U+FFFD, which would silently name a different note
    ("Caf%E9.md", Latin-1, would become "Caf\ufffd.md").
    """
    raw = request.scope.get("raw_path")
    if not raw:
        return
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidPath(
            "the URL path is not valid UTF-8 once percent-decoded; encode note paths as UTF-8",
            code="invalid_path",
        ) from exc


def _uses(dependant: Dependant, call: Callable[..., Any]) -> bool:
    return dependant.call is call or any(_uses(d, call) for d in dependant.dependencies)


class VaultRoute(APIRoute):
    """A route that checks who calls (a key or a session, its CSRF token, and that it is
    a person's for the routes only people use) before it reads or parses the body.

    FastAPI parses a JSON body before it solves dependencies, so without this a request
    with no key and a malformed body would be told about the body (400) rather than the
    key (401). The body is also read here with a size cap, so a huge one is refused
    early with 413 instead of being held in memory.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        needs_caller = _uses(self.dependant, actor)
        needs_manager = _uses(self.dependant, manager)
        needs_vault = _uses(self.dependant, caller)

        async def route(request: Request) -> Response:
            if needs_caller:
                svc = services(request)
                who = await run_in_threadpool(authenticated, request, svc)
                if needs_manager:
                    svc.callers.require_manager(who)
                if needs_vault:
                    require_vault(request)
            check_url_path(request)
            await read_body(request, MAX_REQUEST_BYTES)
            return await handler(request)

        return route


def parse_if_match(if_match: str | None, if_none_match: str | None = None) -> int | None:
    """If-Match: "<version>" pins a version; If-None-Match: * means create-only (0)."""
    if if_none_match is not None:
        if if_match is not None:
            raise InvalidInput(
                "send either If-Match or If-None-Match, not both", code="invalid_precondition"
            )
        if if_none_match.strip() == "*":
            return 0
        raise InvalidInput("If-None-Match supports only '*'", code="invalid_precondition")
    if if_match is None:
        return None
    value = if_match.strip()
    if value.startswith("W/"):
        value = value[2:]
    value = value.strip('"')
    if not _VERSION_RE.fullmatch(value) or not 1 <= int(value) <= MAX_VERSION:
        raise InvalidInput(
            'If-Match must be a note version (the ETag of a read), e.g. "3"',
            code="invalid_precondition",
        )
    return int(value)
