"""The memory tools over the Model Context Protocol: streamable HTTP at /mcp, and stdio."""

from __future__ import annotations

from memvault.mcp.http import HostPolicy, McpHttpApp, create_mcp_app, mcp_routes
from memvault.mcp.server import build_server, note_uri, path_of_uri

__all__ = [
    "HostPolicy",
    "McpHttpApp",
    "build_server",
    "create_mcp_app",
    "mcp_routes",
    "note_uri",
    "path_of_uri",
]
