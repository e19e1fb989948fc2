"""Finds the real OpenSearch node for the OpenSearch test tier (no pytest import needed).

The node is started by ``scripts/opensearch/start.sh`` (an embedded OpenSearch 2.19 on
127.0.0.1, no Docker) and its URL is handed to the tests through
``MEMVAULT_TEST_OPENSEARCH_URL``::

    scripts/opensearch/start.sh            # exit 3: java/mvn missing -> skip the tier
    export MEMVAULT_TEST_OPENSEARCH_URL=http://127.0.0.1:9200
    pytest ...
    scripts/opensearch/stop.sh

Use ``opensearch_url()`` to get the URL (``None`` when unusable) and ``require_reason()``
for the skip message, e.g.
``pytest.mark.skipif(opensearch_url() is None, reason=require_reason())``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

ENV_VAR = "MEMVAULT_TEST_OPENSEARCH_URL"
START_HINT = (
    "start one with scripts/opensearch/start.sh and export "
    f"{ENV_VAR}=http://127.0.0.1:9200 (or the OPENSEARCH_PORT it used)"
)
_TIMEOUT_S = 3.0
_HEALTHY = frozenset({"green", "yellow"})


def _configured_url() -> str | None:
    url = os.environ.get(ENV_VAR, "").strip()
    return url.rstrip("/") or None


def _probe(url: str) -> str | None:
    """None when ``url`` answers ``/_cluster/health`` green or yellow, else why not."""
    # Never route the loopback node through an HTTP proxy from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/_cluster/health", timeout=_TIMEOUT_S) as resp:
            body = json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        return f"OpenSearch at {url} answered HTTP {exc.code} to /_cluster/health"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"OpenSearch at {url} did not answer /_cluster/health ({reason})"
    except ValueError as exc:
        return f"OpenSearch at {url} sent a non-JSON /_cluster/health answer ({exc})"
    status = body.get("status") if isinstance(body, dict) else None
    if status not in _HEALTHY:
        return f"OpenSearch at {url} is not ready (cluster status {status!r})"
    return None


def opensearch_url() -> str | None:
    """The test node's base URL if ``MEMVAULT_TEST_OPENSEARCH_URL`` is set and healthy."""
    url = _configured_url()
    if url is None or _probe(url) is not None:
        return None
    return url


def require_reason() -> str:
    """Why the OpenSearch tier cannot run, for a skip message; "" when it can."""
    url = _configured_url()
    if url is None:
        return f"{ENV_VAR} is not set: no real OpenSearch node for this tier; {START_HINT}"
    problem = _probe(url)
    if problem is None:
        return ""
    return f"{problem}; {START_HINT}"
