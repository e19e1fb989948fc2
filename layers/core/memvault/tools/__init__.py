"""The memory tools, defined once for every surface that offers them to a model.

MCP (``memvault.mcp``) serves them, and the inference gateway's tool rounds run
the very same definitions. Nothing here knows about a transport.
"""

from __future__ import annotations

from memvault.tools.memory import (
    MAX_CALLS_PER_ROUND,
    MAX_LIST_LIMIT,
    MAX_READ_CHARS,
    MAX_SEARCH_LIMIT,
    MAX_TOOL_ROUNDS,
    MAX_WRITE_BYTES_PER_REQUEST,
    TOOL_NAMES,
    TOOLS,
    TOOLS_BY_NAME,
    VAULT_INSTRUCTIONS,
    ToolResult,
    ToolSpec,
    WriteAllowance,
    run_tool,
)

__all__ = [
    "MAX_CALLS_PER_ROUND",
    "MAX_LIST_LIMIT",
    "MAX_READ_CHARS",
    "MAX_SEARCH_LIMIT",
    "MAX_TOOL_ROUNDS",
    "MAX_WRITE_BYTES_PER_REQUEST",
    "TOOLS",
    "TOOLS_BY_NAME",
    "TOOL_NAMES",
    "VAULT_INSTRUCTIONS",
    "ToolResult",
    "ToolSpec",
    "WriteAllowance",
    "run_tool",
]
