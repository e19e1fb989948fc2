"""Who is acting, and from where: passed to every service call that writes or searches."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Surface(StrEnum):
    REST = "rest"
    CLI = "cli"
    TOOLS = "tools"  # the gateway's memory tools, run on the model's behalf
    MCP = "mcp"


@dataclass(frozen=True, slots=True)
class Caller:
    account_id: str
    surface: Surface = Surface.REST
    key_id: str | None = None

    @property
    def is_model(self) -> bool:
        """Writes from a model (gateway tools, MCP) are screened before anything is saved."""
        return self.surface in (Surface.TOOLS, Surface.MCP)
