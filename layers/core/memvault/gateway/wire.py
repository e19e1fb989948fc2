"""JSON as the gateway reads it from clients and writes it to providers.

Requests are parsed with the standard library, which keeps every number as written
(orjson would turn an integer past 64 bits into a float). They are written with
orjson, about forty times faster: a long agent conversation is several hundred kB of
JSON, re-encoded on every request and every memory-tool round.

Parsing is strict JSON (RFC 8259): ``NaN``, ``Infinity`` and numbers too large for a
double are refused. Python's parser would accept them, orjson would then write them as
``null``, and no provider accepts them anyway.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

from memvault.errors import InvalidInput


class NotJson(ValueError):
    """The bytes are not one strict JSON value."""


def _no_constants(name: str) -> Any:
    raise NotJson(f"{name} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise NotJson(f"{literal[:40]} does not fit a double")
    return value


def parse_request(raw: bytes | str) -> Any:
    """One JSON value; NotJson (a ValueError) when ``raw`` is not strict JSON."""
    try:
        return json.loads(raw, parse_constant=_no_constants, parse_float=_finite)
    except NotJson:
        raise
    except (ValueError, RecursionError) as exc:
        raise NotJson(str(exc)) from exc


def parse_object(raw: bytes) -> dict[str, Any]:
    """A client's request body: one JSON object, or InvalidInput (invalid_json)."""
    try:
        body = parse_request(raw)
    except NotJson as exc:
        raise InvalidInput(
            f"the request body is not valid JSON: {exc}", code="invalid_json"
        ) from exc
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object", code="invalid_json")
    return body


def encode_request(body: Any) -> bytes:
    """``body`` as compact UTF-8 JSON, meaning unchanged."""
    try:
        return orjson.dumps(body)
    except TypeError:
        # What orjson refuses and the standard encoder keeps: integers past 64 bits, and
        # unpaired surrogates (a client may send "\ud800"), which stay escaped as sent.
        return json.dumps(body, separators=(",", ":")).encode()
