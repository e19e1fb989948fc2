"""How the REST API renders errors: domain errors, validation and routing failures as JSON.

The status of a domain error comes from ``memvault.errors.status_for`` (the one table of
error kinds to statuses, shared with MCP and the gateway); this module only shapes the
response around it.

Every error body is exactly ``{"error": {"type", "code", "message"}}``: no other keys,
whatever the error carries (its details are for logs and other surfaces). Handlers never
catch and translate errors themselves: they let ``MemvaultError`` subclasses propagate here.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memvault import errors

log = logging.getLogger("memvault.api")

_HTTP_TYPES = {
    400: ("invalid_request", "bad_request"),
    401: ("authentication_error", "unauthenticated"),
    403: ("permission_error", "forbidden"),
    404: ("not_found", "route_not_found"),
    405: ("invalid_request", "method_not_allowed"),
    413: ("payload_too_large", "too_large"),
    415: ("invalid_request", "unsupported_media_type"),
}


def error_body(type_: str, code: str, message: str) -> dict[str, Any]:
    return {"error": {"type": type_, "code": code, "message": message}}


class ErrorShape(Protocol):
    """An API format's own error body (the gateway's routes answer in their format)."""

    def error_body(self, type_: str, code: str, message: str) -> dict[str, Any]: ...


def error_response(exc: errors.MemvaultError, shape: ErrorShape | None = None) -> JSONResponse:
    status = errors.status_for(exc)
    headers: dict[str, str] = {}
    if isinstance(exc, errors.RateLimited):
        headers["Retry-After"] = str(int(exc.retry_after))
    if isinstance(exc, errors.Unauthenticated):
        headers["WWW-Authenticate"] = 'Bearer realm="memvault"'
    if shape is not None:
        body = shape.error_body(exc.type, exc.code, exc.message)
    else:
        body = error_body(exc.type, exc.code, exc.message)
    return JSONResponse(body, status_code=status, headers=headers)


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, errors.MemvaultError)
    return error_response(exc, getattr(request.state, "error_format", None))


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = exc.errors()
    if any(p.get("type") == "json_invalid" for p in problems):
        body = error_body("invalid_request", "invalid_json", "the request body is not valid JSON")
        return JSONResponse(body, status_code=400)
    parts = []
    for problem in problems[:5]:
        where = ".".join(str(x) for x in problem.get("loc", ()) if x != "body")
        parts.append(f"{where or 'body'}: {problem.get('msg', 'invalid')}")
    body = error_body("invalid_request", "validation_error", "; ".join(parts))
    return JSONResponse(body, status_code=422)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    type_, code = _HTTP_TYPES.get(exc.status_code, ("invalid_request", "http_error"))
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no route matches {request.method} {request.url.path}"
    elif exc.status_code == 405:
        allowed = (getattr(exc, "headers", None) or {}).get("Allow", "")
        message = f"{request.method} is not allowed on {request.url.path}" + (
            f"; allowed: {allowed}" if allowed else ""
        )
    return JSONResponse(
        error_body(type_, code, message),
        status_code=exc.status_code,
        headers=getattr(exc, "headers", None),
    )


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error", exc_info=exc)
    body = error_body("internal_error", "internal_error", "something went wrong on our side")
    return JSONResponse(body, status_code=500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(errors.MemvaultError, _domain_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
