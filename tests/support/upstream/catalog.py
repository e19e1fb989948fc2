"""GET /v1/models in both providers' shapes, over one fixed model list."""

from __future__ import annotations

from typing import Any

# (id, owner, display name, created unix time, created_at RFC 3339). Both shapes list all
# of them: the scripted upstream answers for any model, so neither shape hides any.
MODELS = [
    ("gpt-4o-mini", "system", "GPT-4o mini", 1721172741, "2024-07-16T23:32:21Z"),
    ("gpt-4.1", "system", "GPT-4.1", 1744316542, "2025-04-10T20:22:22Z"),
    ("claude-sonnet-4-5", "anthropic", "Claude Sonnet 4.5", 1759104000, "2025-09-29T00:00:00Z"),
    ("claude-haiku-4-5", "anthropic", "Claude Haiku 4.5", 1760486400, "2025-10-15T00:00:00Z"),
]


def openai_models() -> dict[str, Any]:
    data = [
        {"id": mid, "object": "model", "created": created, "owned_by": owner}
        for mid, owner, _, created, _ in MODELS
    ]
    return {"object": "list", "data": data}


def anthropic_models() -> dict[str, Any]:
    data = [
        {"type": "model", "id": mid, "display_name": name, "created_at": created_at}
        for mid, _, name, _, created_at in MODELS
    ]
    return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
