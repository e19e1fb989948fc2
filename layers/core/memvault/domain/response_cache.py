"""The gateway's response cache: which requests it may answer, and under which key.

An exact-match cache: two requests share an entry only when their bodies say the same
thing (same format, model, messages or input, tools and parameters, JSON key order and
spacing aside) within one organisation. A request with memory attached never reads or
writes it (recall that injected notes, memory tools offered, ``x-mem-id`` profiles): the
same text can mean a different prompt as memory changes, so an old answer would be
wrong. Streamed and whole answers are cached apart (their bytes differ).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

CACHE_HEADER: Final = "x-cache"
# Answers larger than this are not cached (they would crowd out everything else).
MAX_ENTRY_BYTES: Final = 4 * 1024 * 1024
MIN_TTL_SECONDS: Final = 1
MAX_TTL_SECONDS: Final = 7 * 24 * 3600
DEFAULT_TTL_SECONDS: Final = 3600


class CacheOutcome(StrEnum):
    """What ``x-cache`` answers."""

    HIT = "hit"
    MISS = "miss"
    BYPASS_MEMORY = "bypass (memory)"


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """A whole answer as the client got it, or a stream's bytes as they were sent."""

    status: int
    content_type: str
    body: bytes  # the JSON answer, or the SSE stream's bytes
    model: str
    input_tokens: int  # what the cached request cost upstream, saved by each hit
    output_tokens: int
    cost_micros: int
    created_at: float

    @property
    def size(self) -> int:
        return len(self.body)


def wanted(header: str | None, key_default: bool) -> bool:
    """Whether the request asks for the cache: ``x-cache: on|off`` wins over the key's
    setting; any other header value is ignored (the key's setting stands)."""
    if header is not None:
        value = header.strip().lower()
        if value == "on":
            return True
        if value == "off":
            return False
    return key_default


def request_digest(api_format: str, body: Mapping[str, object]) -> str:
    """The entry key of a request: SHA-256 of its format and canonical JSON body."""
    canonical = json.dumps(
        {"format": api_format, "body": body},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
