"""`memvault files`: the vault's attachments, a client of the server's /v1/files.

`put` sends a small file in one request (PUT /v1/files/{path}) and a large one through
the presigned path (POST /v1/files/uploads, a PUT with no Authorization to the link it
names, then .../complete), so any file up to the organisation's size limit goes up on
either backend; `get` fetches the bytes through a link (GET /v1/files/{path}?link=1: a
presigned S3 GET on AWS, the server's own token URL embedded), streamed to the file.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import httpx
import typer

from memvault.cli.calls import run_call
from memvault.cli.client import Client, _segment
from memvault.cli.commands import App
from memvault.cli.options import DEFAULT_URL, JsonOpt, KeyOpt, UrlOpt
from memvault.cli.output import die, out
from memvault.cli.transfer_jobs import CHUNK, _link_error
from memvault.errors import ServiceUnavailable

app = App(help="The vault's attachments: list, upload and download files.", no_args_is_help=True)

# Past this, a file takes the presigned path (a Lambda request carries about 4.7 MB).
DIRECT_MAX = 4 * 1024 * 1024


def file_url(path: str, suffix: str = "") -> str:
    return "/v1/files/" + "/".join(_segment(s) for s in path.split("/")) + suffix


def _digest(fh: BinaryIO) -> str:
    digest = hashlib.sha256()
    while data := fh.read(CHUNK):
        digest.update(data)
    fh.seek(0)
    return digest.hexdigest()


def put_file(client: Client, fh: BinaryIO, size: int, path: str) -> Any:
    """Store ``fh``'s ``size`` bytes at ``path``; what PUT /v1/files/{path} answers."""
    if size <= DIRECT_MAX:
        return client.json("PUT", file_url(path), content=fh.read())
    began = client.json(
        "POST", "/v1/files/uploads", json={"path": path, "bytes": size, "sha256": _digest(fh)}
    )
    upload = began["upload"]

    def chunks() -> Iterator[bytes]:
        while data := fh.read(CHUNK):
            yield data

    headers = {**upload.get("headers", {}), "Content-Length": str(size)}
    try:
        # Its own client: the link authorises the PUT; S3 refuses another Authorization.
        with httpx.Client(timeout=client.http.timeout) as plain:
            sent = plain.put(upload["url"], content=chunks(), headers=headers)
    except httpx.TransportError as exc:
        raise ServiceUnavailable(
            f"the upload did not reach {httpx.URL(upload['url']).host} ({exc.__class__.__name__})",
            code="upload_failed",
        ) from exc
    if sent.status_code >= 400:
        raise _link_error(sent, "upload")
    return client.json("POST", f"/v1/files/uploads/{began['id']}/complete")


def get_file(client: Client, path: str, dest: BinaryIO) -> int:
    """Write the file's bytes into ``dest``; how many."""
    link = client.json("GET", file_url(path), params={"link": "1"})
    written = 0
    try:
        with (
            httpx.Client(timeout=client.http.timeout) as plain,
            plain.stream("GET", link["url"]) as response,
        ):
            if response.status_code >= 400:
                response.read()
                raise _link_error(response, "download")
            for chunk in response.iter_bytes():
                dest.write(chunk)
                written += len(chunk)
    except httpx.TransportError as exc:
        raise ServiceUnavailable(
            f"the download from {httpx.URL(link['url']).host} failed ({exc.__class__.__name__})",
            code="download_failed",
        ) from exc
    return written


@app.command("put")
def put(
    local: Annotated[Path, typer.Argument(help="The file to upload.")],
    path: Annotated[
        str | None, typer.Argument(help="Its path in the vault (default: its name).")
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Upload a file (any size up to the organisation's file size limit)."""
    if not local.is_file():
        die(f"{local}: no such file")
    target = path or local.name
    size = local.stat().st_size

    def call(client: Client) -> Any:
        with local.open("rb") as fh:
            return put_file(client, fh, size, target)

    def human(answer: Any) -> None:
        f = answer["file"]
        out.print(f"{answer['message']}: {f['path']} ({f['size']} bytes, {f['content_type']})")

    run_call(url, key, call, render_human=human, as_json=as_json)


@app.command("get")
def get(
    path: Annotated[str, typer.Argument(help="The file's path in the vault.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Where to write it (default: its name; - stdout)."),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """Download a file's bytes."""
    target = output or Path(path.rsplit("/", 1)[-1])
    to_stdout = str(target) == "-"
    partial = target.with_name(target.name + ".part") if not to_stdout else target

    def call(client: Client) -> int:
        if to_stdout:
            return get_file(client, path, sys.stdout.buffer)
        try:
            with partial.open("wb") as fh:
                written = get_file(client, path, fh)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        return written

    def human(written: int) -> None:
        if not to_stdout:
            out.print(f"wrote {target} ({written} bytes)", highlight=False)

    run_call(url, key, call, render_human=human)
