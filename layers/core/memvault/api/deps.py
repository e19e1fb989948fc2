"""Request dependencies: the services bundle and the authenticated caller.

Taking the key and reading the body capped are shared with MCP (``memvault.http_edge``);
this module turns them into FastAPI dependencies and the REST routes' order of checks.
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
from memvault.errors import InvalidInput, InvalidPath
from memvault.http_edge import MAX_REQUEST_BYTES, authenticate, read_body
from memvault.services.context import Caller, Surface

_KEY_STATE = "memvault_api_key"

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


def api_key(request: Request, svc: ServicesDep) -> ApiKey:
    cached = getattr(request.state, _KEY_STATE, None)
    if isinstance(cached, ApiKey):
        return cached
    key = authenticate(svc, request)
    setattr(request.state, _KEY_STATE, key)
    return key


KeyDep = Annotated[ApiKey, Depends(api_key)]


def caller(key: KeyDep) -> Caller:
    return Caller(account_id=key.account_id, surface=Surface.REST, key_id=key.id)


CallerDep = Annotated[Caller, Depends(caller)]


def admin_key(svc: ServicesDep, key: KeyDep) -> ApiKey:
    svc.accounts.require_admin(key)
    return key


AdminDep = Annotated[ApiKey, Depends(admin_key)]


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
    """A route that checks the key (and admin rights) before it reads or parses the body.

    FastAPI parses a JSON body before it solves dependencies, so without this a request
    with no key and a malformed body would be told about the body (400) rather than the
    key (401). The body is also read here with a size cap, so a huge one is refused
    early with 413 instead of being held in memory.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        needs_key = _uses(self.dependant, api_key)
        needs_admin = _uses(self.dependant, admin_key)

        async def route(request: Request) -> Response:
            if needs_key:
                key = await run_in_threadpool(api_key, request, services(request))
                if needs_admin:
                    services(request).accounts.require_admin(key)
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
