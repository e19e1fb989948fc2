"""A scripted upstream model provider (OpenAI and Anthropic formats) for gateway tests."""

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
