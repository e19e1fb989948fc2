"""Stored conversations continued across memory rounds (domain.response_chains, ADR 0045).

``resume`` runs when a request is assembled: a request continuing a response id the
gateway linked (in the caller's organisation only) is rewritten to continue the last
upstream round instead, the outputs owed for its memory calls first. ``remember`` runs
once an answer's last round is known, before the client can have its id, when the
format's ``chain_link`` says the id the client gets is not one the provider can continue
as it is. Both are blocking (the store), on the worker thread; formats that send the
whole conversation never reach the store.
"""

from __future__ import annotations

import logging

from memvault.container import Services
from memvault.domain.models import ApiKey
from memvault.domain.response_chains import ChainLink
from memvault.gateway.formats.base import ApiFormat, Json

log = logging.getLogger("memvault.gateway")


def resume(services: Services, api: ApiFormat, key: ApiKey, body: Json, *, now: float) -> Json:
    """``body`` as it goes upstream: continuing the linked round when there is a link."""
    previous = api.continues_from(body)
    if previous is None:
        return body
    link = services.response_chains.get(key.account_id, previous, now=now)
    return body if link is None else api.resumed(body, link)


def remember(services: Services, key: ApiKey, client_id: str, link: ChainLink) -> None:
    """Store the link of the client's response id (never raises: the client has its
    answer; without the link, continuing it is refused upstream, as before)."""
    ttl = services.settings.responses_chain_ttl_seconds
    try:
        services.response_chains.put(
            key.account_id, client_id, link, expires_at=link.created_at + ttl
        )
    except Exception:
        log.warning("response chain not written", extra={"account_id": key.account_id})
