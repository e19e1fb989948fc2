"""Memory profiles on a gateway request: ``x-mem-id`` in, two blocks placed, and
``x-memory-applied`` out.

Format-agnostic: the format places the blocks through two hooks every ``ApiFormat``
implements, ``with_system_prefix`` (the stable block of guardrails and preferences, at
the start of the system prompt, made when there is none) and ``with_recall`` (the facts
block, ahead of the latest user message's text, next to the vault's recall block). A
format added later gets profiles by implementing those two and ``recall_target``.

Nothing here fails a request but a header naming more than 16 memories (400
``too_many_mem_ids``, in the format's error shape); everything else a profile can meet
(missing, inactive, someone else's, unreadable) leaves it out, and the applied header
tells the client which memories contributed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Final

from memvault.container import Services
from memvault.domain.models import ApiKey
from memvault.domain.profiles import MAX_ATTACHED, parse_mem_ids
from memvault.errors import InvalidInput
from memvault.gateway.formats.base import ApiFormat, Json
from memvault.services.profiles import Attachment

log = logging.getLogger("memvault.gateway")

MEM_ID_HEADER: Final = "x-mem-id"
APPLIED_HEADER: Final = "x-memory-applied"


@dataclass(frozen=True, slots=True)
class ProfileStep:
    """What the request's ``x-mem-id`` gave it."""

    attachment: Attachment

    @property
    def applied_header(self) -> str:
        return ",".join(self.attachment.applied)

    @property
    def tokens(self) -> int:
        composition = self.attachment.composition
        return composition.tokens if composition else 0

    @property
    def embed_calls(self) -> int:
        return 1 if self.attachment.embeddings is not None else 0

    @property
    def embed_cost_micros(self) -> int:
        out = self.attachment.embeddings
        return out.cost_micros if out is not None else 0


def requested_slugs(headers: dict[str, str]) -> list[str] | None:
    """The slugs ``x-mem-id`` names, in order (None: no header). More than 16 is a 400."""
    raw = headers.get(MEM_ID_HEADER)
    if raw is None:
        return None
    slugs = parse_mem_ids(raw)
    if len(slugs) > MAX_ATTACHED:
        raise InvalidInput(
            f"x-mem-id attaches at most {MAX_ATTACHED} memories ({len(slugs)} were sent)",
            code="too_many_mem_ids",
        )
    return slugs


def attach_profiles(
    services: Services,
    api: ApiFormat,
    key: ApiKey,
    client_body: Json,
    body: Json,
    slugs: list[str],
) -> tuple[Json, ProfileStep]:
    """``body`` with the attached memories' blocks placed (``client_body``: the request as
    the client sent it, whose latest user message the facts are chosen for)."""
    target = api.recall_target(client_body)
    attachment = services.profiles.attach(key, slugs, target[1] if target else None)
    composition = attachment.composition
    if composition is None:
        return body, ProfileStep(attachment)
    if composition.facts_block is not None and target is not None:
        # The same message's index in ``body`` as planned: the memory tools' system note
        # (chat completions) sits ahead of it there, not in the client's body.
        placed = api.recall_target(body)
        index = placed[0] if placed is not None else target[0]
        body = api.with_recall(body, composition.facts_block, index)
    if composition.stable_block is not None:
        body = api.with_system_prefix(body, composition.stable_block)
    return body, ProfileStep(attachment)
