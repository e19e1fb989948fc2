"""Who is acting, and from where: passed to every service call that writes or searches."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from memvault.domain.identity import Role


class Surface(StrEnum):
    REST = "rest"
    CLI = "cli"
    TOOLS = "tools"  # the gateway's memory tools, run on the model's behalf
    MCP = "mcp"


@dataclass(frozen=True, slots=True)
class Caller:
    """``account_id`` is the organisation. A person acting (through a key or a session)
    also has ``member_id`` and ``role``; ``manage`` is True for a session and for a key
    with the admin toggle, which act with the member's role (``domain.policy``). A caller
    with no member (the stdio MCP server, the tests' vault callers) can use the vault and
    nothing the policy guards."""

    account_id: str
    surface: Surface = Surface.REST
    key_id: str | None = None
    member_id: str | None = None
    role: Role | None = None
    manage: bool = False
    session_id: str | None = None
    client: str = ""  # the client address (audit records it)

    @property
    def is_model(self) -> bool:
        """Writes from a model (gateway tools, MCP) are screened before anything is saved."""
        return self.surface in (Surface.TOOLS, Surface.MCP)
