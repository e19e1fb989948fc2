"""Serving the dashboard: its page, its hashed assets, and the headers every page gets.

The app itself is built from ``dashboard/`` at the repo root (TypeScript, Vite) into
``static/`` beside this module (ADR 0019). Everything it serves lives under
``/dashboard/``, plus ``/`` (the same page: the dashboard is what a person opening
memvault's address in a browser should find), so one API Gateway proxy resource holds
it and no dashboard path can ever shadow a REST route.

- ``index.html`` is answered for ``/``, ``/dashboard`` and every client-side route under
  it, never cached (``no-cache``), with the request's base path written into it: a
  ``<base href>`` (so the build's relative asset URLs resolve under an API Gateway stage
  such as ``/prod/``) and a ``<meta>`` naming where the REST API is. Both are attributes,
  not inline script, so the Content-Security-Policy can forbid inline script outright.
- Assets are served only by exact name from the files the build wrote (never a path
  joined from the URL), with a year-long immutable cache: their names carry a hash of
  their content. Text assets are gzipped once, in memory, for clients that accept it,
  except on Lambda, whose API Gateway would have to be told the body is binary.
- Every answer carries the security headers (``security_headers``): a strict CSP
  (scripts and styles from this origin only, a per-response nonce for the styles the
  editor builds at run time, no framing), nosniff, no referrer off the origin. Scripts
  may connect to this origin only, and on AWS also to the bucket's S3 endpoint, where an
  import's archive is uploaded with a presigned PUT (``upload_origins``).
"""

from __future__ import annotations

import gzip
import html
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

STATIC_DIR = Path(__file__).parent / "static"
PREFIX = "/dashboard"
HEAD_MARKER = "<!--memvault:head-->"
ASSET_CACHE = "public, max-age=31536000, immutable"
# A stage or mount prefix is a run of plain path segments; anything else is ignored, so
# a forged X-Forwarded-Prefix can never put markup or another origin into the page.
_PREFIX_RE = re.compile(r"(?:/[A-Za-z0-9._~-]+)*")
_COMPRESSIBLE = (".js", ".css", ".svg", ".json", ".txt", ".html", ".map")
_MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".png": "image/png",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
}
_GZIP_MIN_BYTES = 1024


# What an origin put into the CSP may look like (a bucket name or endpoint that is not
# one is left out rather than let anything else into the header).
_ORIGIN_RE = re.compile(r"https?://[A-Za-z0-9.-]+(?::\d{1,5})?")


def upload_origins(
    *, backend: str, bucket: str, endpoint: str | None, region: str | None
) -> tuple[str, ...]:
    """Where the page sends an import's archive besides its own origin: on AWS the S3
    endpoint a presigned PUT names (the bucket virtual-hosted or in the path; the one
    presign ``endpoint`` when set, as for a local S3), nothing when embedded."""
    if backend != "aws":
        return ()
    if endpoint:
        parts = urlsplit(endpoint)
        found = [f"{parts.scheme}://{parts.netloc}", f"{parts.scheme}://{bucket}.{parts.netloc}"]
    else:
        region = (
            region
            or os.environ.get("AWS_REGION")
            or os.environ.get("AWS_DEFAULT_REGION")
            or "us-east-1"
        )
        found = [
            f"https://{bucket}.s3.{region}.amazonaws.com",
            f"https://{bucket}.s3.amazonaws.com",
            f"https://s3.{region}.amazonaws.com",
        ]
    return tuple(o for o in dict.fromkeys(found) if _ORIGIN_RE.fullmatch(o))


def content_security_policy(style_nonce: str, connect: Sequence[str] = ()) -> str:
    return "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            # CodeMirror writes its theme as style rules at run time; the nonce lets
            # exactly those in (note HTML's own style attributes are sanitised away).
            f"style-src 'self' 'nonce-{style_nonce}'",
            # Remote images in notes are turned into links by the renderer, not loaded:
            # a note must not be able to make the browser call out (tracking pixels).
            # Images, audio and video load from the vault's own files (GET /v1/files), and
            # on AWS from the bucket that answers a large one's redirect (the same origins
            # the page may upload to, ``connect``).
            " ".join(["img-src 'self' data: blob:", *connect]),
            " ".join(["media-src 'self'", *connect]),
            "font-src 'self'",
            " ".join(["connect-src 'self'", *connect]),
            "manifest-src 'self'",
            "form-action 'self'",
            "base-uri 'self'",
            "frame-ancestors 'none'",
            "object-src 'none'",
        ]
    )


def security_headers(
    *, style_nonce: str | None = None, https: bool = False, connect: Sequence[str] = ()
) -> dict[str, str]:
    headers = {
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
        "Content-Security-Policy": content_security_policy(
            style_nonce or secrets.token_urlsafe(16), connect
        ),
    }
    if https:
        headers["Strict-Transport-Security"] = "max-age=31536000"
    return headers


def base_prefix(request: Request) -> str:
    """The path the app is reached under ("" or e.g. "/prod"), from the request.

    In order: the ASGI ``root_path`` (uvicorn ``--root-path``, a mount), API Gateway's
    own record of the full path (Mangum leaves the stage out of ``path`` and puts the
    event in the scope), then ``X-Forwarded-Prefix`` from a proxy in front.
    """
    scope = request.scope
    candidates: list[str] = [str(scope.get("root_path") or "")]
    event = scope.get("aws.event")
    if isinstance(event, dict):
        full = str((event.get("requestContext") or {}).get("path") or "")
        path = str(event.get("path") or "")
        if path and full.endswith(path):
            candidates.append(full[: len(full) - len(path)])
    candidates.append(request.headers.get("x-forwarded-prefix", ""))
    for candidate in candidates:
        value = candidate.rstrip("/")
        if value and _PREFIX_RE.fullmatch(value):
            return value
    return ""


def _is_https(request: Request) -> bool:
    proto = request.headers.get("x-forwarded-proto", request.url.scheme)
    return proto.split(",")[0].strip().lower() == "https"


@dataclass(frozen=True)
class _Asset:
    body: bytes
    media_type: str

    @cached_property
    def gzipped(self) -> bytes | None:
        if len(self.body) < _GZIP_MIN_BYTES:
            return None
        return gzip.compress(self.body, compresslevel=9, mtime=0)


@dataclass
class Dashboard:
    """The built app in ``static_dir``, read once (the files change only with a build)."""

    static_dir: Path = STATIC_DIR
    connect: tuple[str, ...] = ()  # origins the page's scripts may call besides its own
    _assets: dict[str, _Asset] | None = field(default=None, init=False, repr=False)
    _index: str | None = field(default=None, init=False, repr=False)
    _built_at: float = field(default=0.0, init=False, repr=False)

    @property
    def built(self) -> bool:
        return (self.static_dir / "index.html").is_file()

    def _fresh(self) -> None:
        """Forget what was read when the build changed under a running server (a
        `make dashboard` while `memvault serve` runs): one stat per page."""
        try:
            stamp = (self.static_dir / "index.html").stat().st_mtime
        except OSError:
            stamp = 0.0
        if stamp != self._built_at:
            self._built_at, self._index, self._assets = stamp, None, None

    def index_template(self) -> str:
        self._fresh()
        if self._index is None:
            self._index = (self.static_dir / "index.html").read_text(encoding="utf-8")
        return self._index

    def assets(self) -> dict[str, _Asset]:
        """Every file the build wrote, by its path under the build folder."""
        if self._assets is None:
            found: dict[str, _Asset] = {}
            if self.static_dir.is_dir():
                for path in sorted(self.static_dir.rglob("*")):
                    if not path.is_file() or path.name == "index.html":
                        continue
                    name = path.relative_to(self.static_dir).as_posix()
                    media = _MEDIA_TYPES.get(path.suffix, "application/octet-stream")
                    found[name] = _Asset(path.read_bytes(), media)
            self._assets = found
        return self._assets

    # ------------------------------------------------------------------ handlers
    async def page(self, request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        headers = security_headers(
            style_nonce=nonce, https=_is_https(request), connect=self.connect
        )
        headers["Cache-Control"] = "no-cache"
        headers["Vary"] = "X-Forwarded-Prefix"
        if not self.built:
            return HTMLResponse(_NOT_BUILT, status_code=503, headers=headers)
        prefix = base_prefix(request)
        head = (
            f'<base href="{html.escape(prefix + PREFIX + "/")}">'
            f'<meta name="memvault-root" content="{html.escape(prefix + "/")}">'
            f'<meta name="memvault-style-nonce" content="{nonce}">'
        )
        body = self.index_template().replace(HEAD_MARKER, head, 1)
        return HTMLResponse(body, headers=headers)

    async def asset(self, request: Request) -> Response:
        name = str(request.path_params.get("name", ""))
        found = self.assets().get(name)
        headers = security_headers(https=_is_https(request))
        if found is None:
            headers["Cache-Control"] = "no-store"
            return Response("not found", status_code=404, media_type="text/plain", headers=headers)
        headers["Cache-Control"] = ASSET_CACHE
        body = found.body
        compressible = name.endswith(_COMPRESSIBLE)
        if compressible:
            headers["Vary"] = "Accept-Encoding"
            if _accepts_gzip(request) and "aws.event" not in request.scope:
                packed = found.gzipped
                if packed is not None:
                    headers["Content-Encoding"] = "gzip"
                    body = packed
        return Response(body, media_type=found.media_type, headers=headers)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.page, methods=["GET"], name="dashboard_home"),
            Route(PREFIX, self.page, methods=["GET"], name="dashboard"),
            Route(PREFIX + "/assets/{name:path}", self._asset_route, methods=["GET"]),
            Route(PREFIX + "/{rest:path}", self._page_or_file, methods=["GET"]),
        ]

    async def _asset_route(self, request: Request) -> Response:
        request.path_params["name"] = "assets/" + str(request.path_params.get("name", ""))
        return await self.asset(request)

    async def _page_or_file(self, request: Request) -> Response:
        """A file the build wrote at the top (favicon.svg), else the page: every other
        path under /dashboard/ is a route of the app, which decides what it shows."""
        rest = str(request.path_params.get("rest", ""))
        if rest in self.assets():
            request.path_params["name"] = rest
            return await self.asset(request)
        return await self.page(request)


def _accepts_gzip(request: Request) -> bool:
    for item in request.headers.get("accept-encoding", "").split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() != "gzip":
            continue
        name, _, value = params.strip().partition("=")
        if name.strip().lower() != "q":
            return True
        try:
            return float(value) > 0
        except ValueError:
            return False
    return False


_NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>memvault</title></head>
<body><main><h1>The dashboard is not built</h1>
<p>Build it with <code>make dashboard</code> (Node 20 and npm), or run <code>make serve</code>,
which builds it first. The REST API at <code>/v1/</code> works without it.</p></main></body></html>
"""


def dashboard_routes(
    static_dir: Path | None = None, connect: Sequence[str] = ()
) -> list[BaseRoute]:
    """The dashboard's routes, for ``memvault.surfaces`` to add to the management app;
    ``connect``: the origins its scripts may call besides its own (``upload_origins``)."""
    return Dashboard(static_dir or STATIC_DIR, tuple(connect)).routes()
