"""Embedding text for an organisation, billed: the one door to the configured embedder.

Every embedder call that is not memvault's own indexing of a note (a search query, a
profile fact) and every one that is goes through ``EmbeddingService.embed``: it calls the
embedder and, when the call cost money (an OpenAI-compatible upstream, Bedrock; the local
model costs nothing), writes a usage record (``api_format`` "embeddings", the purpose in
``outcome``) and takes the cost from a metered balance. Usage is never a reason to refuse:
vectors are derived data, and the embedding has already been paid for upstream.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence

from memvault.domain.models import Reservation, UsageRecord
from memvault.errors import ServiceUnavailable
from memvault.ports import Embedder, Embeddings
from memvault.services.billing import BillingService

log = logging.getLogger("memvault.embedding")

# ``UsageRecord.key_id`` of embeddings memvault made on its own (indexing notes).
SYSTEM_KEY = ""


class EmbeddingService:
    def __init__(
        self,
        embedder: Embedder | None,
        billing: BillingService | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.embedder = embedder
        self.billing = billing
        self.clock = clock

    @property
    def enabled(self) -> bool:
        return self.embedder is not None

    @property
    def model(self) -> str | None:
        return self.embedder.model if self.embedder is not None else None

    def embed(
        self,
        account_id: str,
        texts: Sequence[str],
        *,
        purpose: str = "index",
        key_id: str = SYSTEM_KEY,
    ) -> Embeddings:
        """The texts' vectors (unit length, input order). Raises ServiceUnavailable when
        embeddings are off or the model cannot answer; bills the account when it cost."""
        if self.embedder is None:
            raise ServiceUnavailable(
                "embeddings are off (MEMVAULT_EMBEDDINGS=off)", code="embeddings_off"
            )
        started = self.clock()
        began = time.perf_counter()
        result = self.embedder.embed(texts)
        if result.cost_micros > 0:
            duration_ms = int((time.perf_counter() - began) * 1000)
            self.record_call(
                account_id, key_id, purpose, result, started=started, duration_ms=duration_ms
            )
        return result

    def embed_query(self, account_id: str, text: str, *, key_id: str = SYSTEM_KEY) -> list[float]:
        """One search query's vector (billed as purpose "search")."""
        return self.embed(account_id, [text], purpose="search", key_id=key_id).vectors[0]

    def record_call(
        self,
        account_id: str,
        key_id: str,
        purpose: str,
        result: Embeddings,
        *,
        started: float,
        duration_ms: int,
        counted_as: str | None = None,
        held: Reservation | None = None,
    ) -> None:
        """One embedding call in usage and, when it cost, on the bill: the key's spend and
        the balance when a key made it (a zero hold settled at the cost, or ``held``, the
        money the call reserved before it was sent: a client's call through the
        gateway), else the balance alone. ``counted_as`` also counts it in
        ``memory_calls`` (profile facts). Never raises for the charge: the call has been
        paid for upstream."""
        if self.billing is None:
            return
        self.billing.record_usage(
            UsageRecord(
                id=uuid.uuid4().hex,
                account_id=account_id,
                key_id=key_id,
                model=result.model,
                api_format="embeddings",
                input_tokens=result.input_tokens,
                output_tokens=0,
                rounds=1,
                memory_calls={counted_as: 1} if counted_as else {},
                recalled_notes=0,
                injected_tokens=0,
                cost_micros=result.cost_micros,
                status=200,
                outcome=purpose,
                started_at=started,
                duration_ms=duration_ms,
                overhead_ms=0,
            )
        )
        if held is not None:
            self.billing.settle(held, result.cost_micros)  # never raises
            return
        if result.cost_micros <= 0:
            return
        try:
            if key_id:
                now = self.clock()
                held = self.billing.ledger.reserve(
                    account_id,
                    key_id,
                    0,
                    spend_cap_micros=None,
                    now=now,
                    expires_at=now + self.billing.reservation_ttl_seconds,
                )
                self.billing.settle(held, result.cost_micros)
            elif self.billing.balance(account_id).balance_micros is not None:
                self.billing.add_balance(account_id, -result.cost_micros)
        except Exception:  # the usage record stands; the balance is corrected by hand
            log.exception(
                "embedding cost not taken from the balance",
                extra={"account_id": account_id, "cost_micros": result.cost_micros},
            )
