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
from collections.abc import Mapping
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memvault import errors

log = logging.getLogger("memvault.api")

MAX_PROBLEMS_SHOWN = 5

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
    extra = exc.details.get("response_headers")  # set by the one who raised (the gateway)
    if isinstance(extra, dict):
        headers.update({str(k): str(v) for k, v in extra.items()})
    if shape is not None:
        body = shape.error_body(exc.type, exc.code, exc.message)
    else:
        body = error_body(exc.type, exc.code, exc.message)
    return JSONResponse(body, status_code=status, headers=headers)


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, errors.MemvaultError)
    return error_response(exc, getattr(request.state, "error_format", None))


# Where FastAPI says a value came from; the field's own name is what a client knows.
_SOURCES = frozenset({"body", "query", "path", "header", "cookie"})
# Pydantic's error types, worded as what the value must be. Request bodies are strict
# (api/schemas.py), so "5" for a number and 1.5 for an integer are type errors.
_MUST_BE = {
    "string_type": "must be a string",
    # JSON can spell a lone surrogate ("\\ud800"); nothing else fails to decode.
    "string_unicode": "contains an unpaired surrogate (not valid Unicode text)",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "list_type": "must be a list",
    "missing": "is required",
}
_BOUNDS = {
    "greater_than_equal": ("at least", "ge"),
    "greater_than": ("more than", "gt"),
    "less_than_equal": ("at most", "le"),
    "less_than": ("less than", "lt"),
}
_NOT_AN_OBJECT = frozenset({"model_type", "model_attributes_type", "dict_type"})


def _field(problem: Mapping[str, Any]) -> str:
    loc = [str(part) for part in problem.get("loc", ()) if part not in _SOURCES]
    return ".".join(loc)


def problem_message(problem: Mapping[str, Any]) -> str:
    """One validation problem as ``<field>: <what it must be>``, naming the field the way
    the client sent it (``limit``, ``markdown``), not where FastAPI found it."""
    kind = str(problem.get("type", ""))
    ctx: Mapping[str, Any] = problem.get("ctx") or {}
    field = _field(problem)
    if kind == "extra_forbidden":
        return f"unknown field {field!r} in the body"
    if kind in _NOT_AN_OBJECT and not field:
        return "the body must be a JSON object (Content-Type: application/json)"
    if kind in _MUST_BE:
        rule = _MUST_BE[kind]
    elif kind in _BOUNDS:
        words, bound = _BOUNDS[kind]
        rule = f"must be {words} {ctx.get(bound)}"
    elif kind == "string_too_short":
        least = ctx.get("min_length", 1)
        rule = "must not be empty" if least == 1 else f"must be at least {least} characters"
    elif kind == "string_too_long":
        rule = f"must be at most {ctx.get('max_length')} characters"
    elif kind == "value_error":
        rule = str(ctx.get("error") or problem.get("msg", "is not valid"))
    else:
        message = str(problem.get("msg", "is not valid"))
        rule = message[:1].lower() + message[1:]
    return f"{field}: {rule}" if field else f"the body {rule}"


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """Bad input is 400 ``invalid_input``, as the vault's own checks answer it (422 is for
    content that was read and refused), with every problem's field named."""
    assert isinstance(exc, RequestValidationError)
    problems = exc.errors()
    if any(p.get("type") == "json_invalid" for p in problems):
        body = error_body("invalid_request", "invalid_json", "the request body is not valid JSON")
        return JSONResponse(body, status_code=400)
    messages = list(dict.fromkeys(problem_message(p) for p in problems))
    shown = "; ".join(messages[:MAX_PROBLEMS_SHOWN])
    if len(messages) > MAX_PROBLEMS_SHOWN:
        shown += f"; and {len(messages) - MAX_PROBLEMS_SHOWN} more"
    body = error_body("invalid_request", "invalid_input", shown)
    return JSONResponse(body, status_code=400)


def nested_too_deeply() -> errors.InvalidInput:
    """JSON nested past the parser's recursion limit (1,000 levels or so), never a 500."""
    return errors.InvalidInput(
        "the request body is nested too deeply to read as JSON", code="invalid_json"
    )


# What FastAPI answers when it cannot parse a JSON body for a reason other than its
# syntax (a nesting past the recursion limit, text that is not Unicode).
_FASTAPI_BODY_FAILURE = "There was an error parsing the body"


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400 and exc.detail == _FASTAPI_BODY_FAILURE:
        if isinstance(exc.__cause__, RecursionError):
            return error_response(nested_too_deeply())
        body = error_body("invalid_request", "invalid_json", "the request body is not valid JSON")
        return JSONResponse(body, status_code=400)
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
