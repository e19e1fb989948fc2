"""A scripted upstream model provider for gateway tests (OpenAI Chat Completions and
Responses, Anthropic Messages)."""

from .server import ScriptedUpstream
from .steps import Fault, Hang, Malformed, RecordedRequest, Reply, Step, ToolCall

__all__ = [
    "Fault",
    "Hang",
    "Malformed",
    "RecordedRequest",
    "Reply",
    "ScriptedUpstream",
    "Step",
    "ToolCall",
]
