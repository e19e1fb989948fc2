"""Before dispatch: what memory a request gets, and the request as the provider will see it.

The key's toggles decide what is on; this module decides what can actually run, and says
why in notices when something that is on cannot (``x-token-notice``):

- a key bound to no vault (made with ``vault: false``), or no account behind it:
  "memory unavailable: no vault is bound to this key";
- storage failing: "memory unavailable: the vault could not be read";
- only recall failing (search down): "memory recall unavailable: the vault could not be read";
- a client tool named like a memory tool: "memory tools unavailable: tool name collision"
  (that request goes without memory tools; recall stays).

Blocking (storage and search I/O): the engine runs ``plan`` in a worker thread.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from memvault.container import Services
from memvault.domain.models import ApiKey
from memvault.domain.recall import RecallBlock
from memvault.gateway.formats.base import MEMORY_TOOL_NAMES, ApiFormat, Json
from memvault.gateway.formats.openai import OpenAIChat
from memvault.services.context import Caller, Surface
from memvault.services.recall import RecallService
from memvault.tokens import count_tokens
from memvault.tools import TOOLS, VAULT_INSTRUCTIONS

log = logging.getLogger("memvault.gateway")

NO_VAULT: Final = "memory unavailable: no vault is bound to this key"
VAULT_UNREADABLE: Final = "memory unavailable: the vault could not be read"
RECALL_UNREADABLE: Final = "memory recall unavailable: the vault could not be read"
TOOL_COLLISION: Final = "memory tools unavailable: tool name collision"
SEVERAL_CHOICES: Final = "memory tools unavailable: n > 1 asks for several answers"
ROUNDS_RAN_OUT: Final = "memory tool rounds ran out"
RESERVATION_REACHED: Final = (
    "memory tool rounds stopped: the next round would not fit the reservation"
)
RECALL_OFF_HEADER: Final = "x-memory-recall"


@dataclass(slots=True)
class Plan:
    body: Json
    caller: Caller
    tools_on: bool
    recall: RecallBlock | None = None
    notices: list[str] = field(default_factory=list)

    @property
    def recalled(self) -> int:
        return len(self.recall.paths) if self.recall else 0


def plan_request(
    services: Services,
    recaller: RecallService,
    api: ApiFormat,
    key: ApiKey,
    body: Json,
    headers: dict[str, str],
) -> Plan:
    caller = Caller(account_id=key.account_id, surface=Surface.TOOLS, key_id=key.id)
    recall_on = key.toggles.recall and headers.get(RECALL_OFF_HEADER, "").strip().lower() != "off"
    plan = Plan(body=body, caller=caller, tools_on=key.toggles.tools)
    if not (recall_on or plan.tools_on):
        return plan
    if not key.vault:  # a key made with no vault binding (vault: false)
        plan.notices.append(NO_VAULT)
        plan.tools_on = False
        return plan

    try:
        account = services.store.get_account(key.account_id)
    except Exception:
        log.warning("vault unreadable before dispatch", extra={"account": key.account_id})
        plan.notices.append(VAULT_UNREADABLE)
        plan.tools_on = False
        return plan
    if account is None:
        plan.notices.append(NO_VAULT)
        plan.tools_on = False
        return plan
    # Read for this request anyway: recall and the tools use the org's defaults as they are.
    services.vault.search_defaults.remember(account)

    if plan.tools_on and api.client_tool_names(body) & MEMORY_TOOL_NAMES:
        plan.tools_on = False
        plan.notices.append(TOOL_COLLISION)
    if plan.tools_on and isinstance(api, OpenAIChat) and _several_choices(body):
        plan.tools_on = False
        plan.notices.append(SEVERAL_CHOICES)

    target = api.recall_target(body) if recall_on else None
    if target is not None:
        index, text = target  # a blank text recalls nothing (RecallService)
        try:
            plan.recall = recaller.recall(
                caller,
                text,
                max_notes=key.recall_notes,
                token_budget=key.recall_tokens,
                vault_revision=account.revision,
                mode=key.recall_mode,
            )
        except Exception:
            log.warning("recall failed", extra={"account": key.account_id}, exc_info=True)
            plan.notices.append(RECALL_UNREADABLE)
        if plan.recall is not None:
            plan.body = api.with_recall(plan.body, plan.recall.text, index)
    if plan.tools_on:
        plan.body = api.with_memory_tools(plan.body)
    return plan


def _several_choices(body: Json) -> bool:
    n = body.get("n")
    return isinstance(n, int) and not isinstance(n, bool) and n > 1


def injected_tokens(plan: Plan) -> int:
    """Tokens memvault added to the prompt: the recall block, the tools and system note."""
    return (plan.recall.tokens if plan.recall else 0) + (
        memory_tools_tokens() if plan.tools_on else 0
    )


@lru_cache(maxsize=1)
def memory_tools_tokens() -> int:
    """What the memory tools and the system note add to a prompt (about the same in both
    formats: the same names, descriptions and schemas)."""
    definitions = [[spec.name, spec.description, spec.input_schema] for spec in TOOLS]
    return count_tokens(json.dumps(definitions)) + count_tokens(VAULT_INSTRUCTIONS)
