"""REST routes for notes, their versions and links. Thin: parse, call the service, shape."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from fastapi import APIRouter, Header, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from memvault.api import schemas
from memvault.api.deps import (
    MAX_VERSION,
    CallerDep,
    ServicesDep,
    VaultRoute,
    parse_if_match,
)
from memvault.api.errors import nested_too_deeply
from memvault.domain.attachments import is_note_path
from memvault.domain.models import MAX_NOTE_BYTES
from memvault.errors import InvalidInput
from memvault.http_edge import read_body
from memvault.services.vault import MAX_CURSOR_CHARS, MAX_QUERY_CHARS, MAX_TAG_CHARS

router = APIRouter(prefix="/v1", tags=["notes"], route_class=VaultRoute)

IfMatch = Annotated[str | None, Header(alias="If-Match")]
IfNoneMatch = Annotated[str | None, Header(alias="If-None-Match")]
# ``{version:int}`` in the route paths: only digits select a version route, so a note
# whose own path has a folder named "versions" ("a/versions/2.md") is read as a note.
Version = Annotated[int, Path(ge=1, le=MAX_VERSION)]
Tag = Annotated[
    str | None, Query(max_length=MAX_TAG_CHARS, description="Only notes with this tag.")
]


def _etag(response: Response, version: int) -> None:
    response.headers["ETag"] = f'"{version}"'


@router.get("/notes", response_model=schemas.NoteList)
def list_notes(
    svc: ServicesDep,
    caller: CallerDep,
    folder: Annotated[str, Query(description="Only notes under this folder.")] = "",
    prefix: Annotated[str | None, Query(description="The same as folder.")] = None,
    tag: Tag = None,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> schemas.NoteList:
    if prefix is not None:
        if folder and folder.strip("/") != prefix.strip("/"):
            raise InvalidInput(
                "prefix and folder name the same filter; send one of them",
                code="conflicting_filters",
            )
        folder = prefix
    page = svc.vault.list_notes(caller, folder=folder, tag=tag, cursor=cursor, limit=limit)
    return schemas.NoteList(
        notes=[schemas.NoteSummaryOut.of(n) for n in page.items], next_cursor=page.next_cursor
    )


@router.get("/notes/{path:path}/versions/{version:int}", response_model=schemas.VersionDetailOut)
def read_version(
    svc: ServicesDep, caller: CallerDep, path: str, version: Version
) -> schemas.VersionDetailOut:
    found = svc.vault.version(caller, path, version)
    return schemas.VersionDetailOut(
        **schemas.VersionOut.of(found.info).model_dump(), markdown=found.markdown
    )


@router.get("/notes/{path:path}/versions", response_model=list[schemas.VersionOut])
def list_versions(svc: ServicesDep, caller: CallerDep, path: str) -> list[schemas.VersionOut]:
    return [schemas.VersionOut.of(v) for v in svc.vault.versions(caller, path)]


@router.post("/notes/{path:path}/versions/{version:int}/restore", response_model=schemas.WriteOut)
def restore_version(
    svc: ServicesDep,
    caller: CallerDep,
    response: Response,
    path: str,
    version: Version,
    if_match: IfMatch = None,
) -> schemas.WriteOut:
    outcome = svc.vault.restore(caller, path, version, expected_version=parse_if_match(if_match))
    _etag(response, outcome.note.version)
    message = (
        f"restored version {version} as version {outcome.note.version}"
        if outcome.changed
        else f"version {version} is identical to the current note; nothing changed"
    )
    return schemas.WriteOut(
        note=schemas.NoteSummaryOut.of(outcome.note.summary()),
        changed=outcome.changed,
        message=message,
    )


@router.get("/notes/{path:path}/backlinks", response_model=list[schemas.NoteSummaryOut])
def backlinks(svc: ServicesDep, caller: CallerDep, path: str) -> list[schemas.NoteSummaryOut]:
    """The notes linking to a note, or to an attachment (the notes that embed an image)."""
    if is_note_path(path):
        found = svc.vault.backlinks(caller, path)
    else:
        found = svc.attachments.backlinks(caller, path)
    return [schemas.NoteSummaryOut.of(n) for n in found]


@router.get("/notes/{path:path}/links", response_model=list[schemas.OutgoingLinkOut])
def outgoing_links(svc: ServicesDep, caller: CallerDep, path: str) -> list[schemas.OutgoingLinkOut]:
    """The note's links in the order written, each with the path it resolves to now."""
    return [
        schemas.OutgoingLinkOut(
            target=link.target,
            heading=link.heading,
            alias=link.alias,
            embed=link.embed,
            kind=link.kind,
            path=resolved,
        )
        for link, resolved in svc.vault.outgoing(caller, path)
    ]


@router.post("/notes/{path:path}/append", response_model=schemas.WriteOut)
def append_note(
    svc: ServicesDep,
    caller: CallerDep,
    response: Response,
    path: str,
    body: schemas.AppendIn,
    if_match: IfMatch = None,
) -> schemas.WriteOut:
    outcome = svc.vault.append(caller, path, body.text, expected_version=parse_if_match(if_match))
    _etag(response, outcome.note.version)
    if outcome.created:
        response.status_code = 201
    return schemas.WriteOut(
        note=schemas.NoteSummaryOut.of(outcome.note.summary()),
        changed=True,
        message=f"appended; the note is at version {outcome.note.version}",
    )


@router.post("/notes/{path:path}/move", response_model=schemas.NoteSummaryOut)
def move_note(
    svc: ServicesDep,
    caller: CallerDep,
    response: Response,
    path: str,
    body: schemas.MoveIn,
    if_match: IfMatch = None,
) -> schemas.NoteSummaryOut:
    note = svc.vault.move(caller, path, body.to, expected_version=parse_if_match(if_match))
    _etag(response, note.version)
    return schemas.NoteSummaryOut.of(note.summary())


@router.delete("/notes/{path:path}/history", status_code=204)
def purge_note(svc: ServicesDep, caller: CallerDep, path: str) -> Response:
    svc.vault.purge(caller, path)
    return Response(status_code=204)


def _matches(if_none_match: str, version: int) -> bool:
    """Whether an If-None-Match header names the note's current ETag (or is ``*``)."""
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or f'"{version}"' in tags


@router.get(
    "/notes/{path:path}",
    response_model=schemas.NoteOut,
    responses={304: {"description": "If-None-Match names the current version"}},
)
def read_note(
    svc: ServicesDep,
    caller: CallerDep,
    response: Response,
    path: str,
    if_none_match: IfNoneMatch = None,
) -> schemas.NoteOut | Response:
    note = svc.vault.read(caller, path)
    if if_none_match is not None and _matches(if_none_match, note.version):
        return Response(status_code=304, headers={"ETag": f'"{note.version}"'})
    _etag(response, note.version)
    return schemas.NoteOut.of_note(note, svc.vault.vector_status(caller, note.path))


# A JSON body may be longer than the note it carries (escapes); the note's own limit is
# checked by the vault once the JSON is decoded.
_MAX_PUT_BODY = 8 * MAX_NOTE_BYTES


async def _markdown_body(request: Request) -> str:
    """A note body is either JSON {"markdown": ...} or the raw markdown itself.

    Without a Content-Type, a body that starts with ``{`` is taken as JSON.
    """
    raw = await read_body(request, _MAX_PUT_BODY)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "application/json" or (content_type == "" and raw.lstrip().startswith(b"{")):
        return _json_markdown(raw)
    if content_type == "" or content_type.startswith("text/"):
        return _decode(raw)
    shown = content_type if len(content_type) <= 80 else content_type[:77] + "..."
    raise InvalidInput(
        f"unsupported content type {shown!r}; send application/json or text/markdown",
        code="unsupported_media_type",
    )


def _json_markdown(raw: bytes) -> str:
    """The markdown of a JSON body: invalid JSON, or a wrong shape, is a 400."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestValidationError(
            [{"type": "json_invalid", "loc": ("body",), "msg": "JSON decode error"}]
        ) from exc
    except RecursionError as exc:
        raise nested_too_deeply() from exc
    try:
        return schemas.PutNoteIn.model_validate(data).markdown
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        ) from exc


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput("the note is not valid UTF-8", code="invalid_utf8") from exc


@router.put(
    "/notes/{path:path}",
    response_model=schemas.WriteOut,
    openapi_extra={
        "requestBody": {
            "content": {
                "application/json": {"schema": schemas.PutNoteIn.model_json_schema()},
                "text/markdown": {"schema": {"type": "string"}},
            }
        }
    },
)
async def put_note(
    request: Request,
    svc: ServicesDep,
    caller: CallerDep,
    response: Response,
    path: str,
    if_match: IfMatch = None,
    if_none_match: IfNoneMatch = None,
) -> schemas.WriteOut:
    markdown = await _markdown_body(request)
    expected = parse_if_match(if_match, if_none_match)
    outcome = await run_in_threadpool(
        svc.vault.write, caller, path, markdown, expected_version=expected
    )
    _etag(response, outcome.note.version)
    if outcome.created:
        response.status_code = 201
        message = "created"
        if outcome.note.version > 1:
            message = f"created again as version {outcome.note.version}; its history continues"
    elif outcome.changed:
        message = f"saved as version {outcome.note.version}"
    else:
        message = f"unchanged: the markdown is identical to version {outcome.note.version}"
    return schemas.WriteOut(
        note=schemas.NoteSummaryOut.of(outcome.note.summary()),
        changed=outcome.changed,
        message=message,
    )


@router.delete("/notes/{path:path}", status_code=204)
def delete_note(
    svc: ServicesDep, caller: CallerDep, path: str, if_match: IfMatch = None
) -> Response:
    svc.vault.delete(caller, path, expected_version=parse_if_match(if_match))
    return Response(status_code=204)


@router.get("/search", response_model=schemas.SearchOut)
def search(
    svc: ServicesDep,
    caller: CallerDep,
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
    folder: str = "",
    tag: Tag = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    mode: Literal["keyword", "semantic", "hybrid"] | None = None,
    min_score: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
) -> schemas.SearchOut:
    """Ranked search: the best notes first, each with its 0-1 score. ``mode`` keyword,
    semantic or hybrid (default: hybrid when vectors are on); ``min_score`` drops weaker
    hits (semantic and hybrid: 0.4 unless given). A semantic or hybrid search that vectors
    cannot answer runs as keyword, and ``fallback`` says why."""
    outcome = svc.vault.search_outcome(
        caller, q, folder=folder, tag=tag, limit=limit, mode=mode, min_score=min_score
    )
    return schemas.SearchOut(
        query=q,
        mode=outcome.mode.value,
        fallback=outcome.fallback,
        results=[schemas.SearchHitOut.of(h) for h in outcome.hits],
    )


@router.get("/recent", response_model=list[schemas.NoteSummaryOut])
def recent(
    svc: ServicesDep, caller: CallerDep, limit: Annotated[int, Query(ge=1, le=500)] = 10
) -> list[schemas.NoteSummaryOut]:
    return [schemas.NoteSummaryOut.of(n) for n in svc.vault.recent(caller, limit)]


@router.get("/tags", response_model=dict[str, int])
def tags(svc: ServicesDep, caller: CallerDep) -> dict[str, int]:
    return svc.vault.tags(caller)
