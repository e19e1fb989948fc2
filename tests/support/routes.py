"""The routes an app serves, as (method, path template): what the AWS smoke pass and the
isolation suite enumerate so that a route added later is covered too.

FastAPI (0.165) keeps an included router as one ``_IncludedRouter`` entry whose own
routes are under ``original_router``; this walks into them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


def _flatten(routes: Iterable[Any]) -> Iterator[Any]:
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _flatten(inner.routes)
        else:
            yield route


def flat_routes(app: Any) -> list[Any]:
    """The app's routes with the included routers' own in their place, in order."""
    return list(_flatten(app.routes))


def api_routes(app: Any, prefix: str = "/v1/") -> list[tuple[str, str]]:
    """Every (method, path template) under ``prefix``, HEAD left out, in app order."""
    found: list[tuple[str, str]] = []
    for route in flat_routes(app):
        path = getattr(route, "path", "")
        for method in sorted(getattr(route, "methods", None) or ()):
            if path.startswith(prefix) and method != "HEAD" and (method, path) not in found:
                found.append((method, path))
    return found
