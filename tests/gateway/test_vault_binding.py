"""A key made without a vault binding (``vault: false``): memory that is on says so, and
nothing of the organisation's vault reaches the provider."""

from __future__ import annotations

from memvault.domain.models import Toggles
from tests.gateway.test_recall_and_notices import CONVERSATION, chat, seed
from tests.support.servers import LiveServer
from tests.support.upstream import ScriptedUpstream


def test_a_key_bound_to_no_vault_gets_the_notice_and_no_memory(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    seed(sqlite_gateway)
    issued = sqlite_gateway.services.accounts.issue_key(
        "local", name="unbound", toggles=Toggles(recall=True, tools=True), vault=False
    )
    raw = chat(sqlite_gateway, issued.secret)
    assert raw.headers["x-token-notice"] == "memory unavailable: no vault is bound to this key"
    assert raw.headers["x-memory-recalled"] == "0"
    sent = upstream.requests[0].json
    assert sent["messages"] == CONVERSATION and "tools" not in sent
