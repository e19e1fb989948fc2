"""The CLI client's side of a streamed import, against scripted answers (httpx's mock
transport): what a live server rarely says, such as a stream cut short, an older server
answering JSON, or a line that is not an event."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from memvault.cli.client import ApiError, Client
from memvault.errors import RateLimited, ServiceUnavailable

REPORT = {"created": 1, "updated": 0, "unchanged": 0, "skipped": 0, "skipped_files": []}
NDJSON = {"Content-Type": "application/x-ndjson"}


def lines(*events: Any) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


class Upload:
    def __init__(self, answer: Callable[[httpx.Request], httpx.Response]) -> None:
        self.requests: list[httpx.Request] = []
        self.sent: list[int] = []
        self.events: list[dict[str, Any]] = []

        def handler(request: httpx.Request) -> httpx.Response:
            request.read()  # the upload, chunk by chunk
            self.requests.append(request)
            return answer(request)

        self.client = Client("http://memvault.test", "mvk_test")
        self.client.http = httpx.Client(
            base_url="http://memvault.test", transport=httpx.MockTransport(handler)
        )

    def __call__(self, data: bytes = b"PK" * 300_000) -> Any:
        return self.client.upload(io.BytesIO(data), len(data), self.sent.append, self.events.append)


def test_it_asks_for_the_stream_and_hands_on_each_event() -> None:
    events = [
        {"phase": "parsing", "done": 0, "total": 1},
        {"phase": "parsing", "done": 1, "total": 1},
    ]
    upload = Upload(
        lambda _: httpx.Response(200, headers=NDJSON, content=lines(*events, {"result": REPORT}))
    )
    assert upload() == REPORT
    assert upload.events == events
    assert sum(upload.sent) == 600_000 and len(upload.sent) > 1
    request = upload.requests[0]
    assert request.headers["accept"].startswith("application/x-ndjson")
    assert request.headers["content-type"] == "application/zip"


def test_a_server_that_does_not_stream_answers_json() -> None:
    upload = Upload(lambda _: httpx.Response(200, json=REPORT))
    assert upload() == REPORT and upload.events == []


def test_a_refusal_before_the_stream_keeps_its_status() -> None:
    body = {"error": {"type": "payload_too_large", "code": "archive_too_large", "message": "big"}}
    with pytest.raises(ApiError) as refused:
        Upload(lambda _: httpx.Response(413, json=body))()
    assert (refused.value.status, refused.value.code) == (413, "archive_too_large")


@pytest.mark.parametrize(
    ("type_", "status"),
    [("unprocessable", 422), ("quota_exceeded", 413), ("conflict", 409), ("internal_error", 500)],
)
def test_a_streamed_error_is_raised_with_the_status_it_would_have_had(
    type_: str, status: int
) -> None:
    error = {"error": {"type": type_, "code": "some_code", "message": "refused"}}
    answer = lines({"phase": "parsing", "done": 0, "total": 3}, error)
    upload = Upload(lambda _: httpx.Response(200, headers=NDJSON, content=answer))
    with pytest.raises(ApiError) as raised:
        upload()
    assert (raised.value.status, raised.value.type, raised.value.code) == (
        status,
        type_,
        "some_code",
    )
    assert raised.value.message == "refused" and len(upload.events) == 1


def test_a_streamed_budget_refusal_is_rate_limited() -> None:
    error = {
        "error": {
            "type": "rate_limited",
            "code": "writes_budget_exhausted",
            "message": "retry in 3 s",
        }
    }
    with pytest.raises(RateLimited):
        Upload(lambda _: httpx.Response(200, headers=NDJSON, content=lines(error)))()


def test_a_stream_that_ends_before_the_outcome_says_the_outcome_is_unknown() -> None:
    cut = lines({"phase": "committing", "done": 0, "total": 2})
    with pytest.raises(ServiceUnavailable) as unknown:
        Upload(lambda _: httpx.Response(200, headers=NDJSON, content=cut))()
    assert unknown.value.code == "import_outcome_unknown"
    assert "whole or not at all" in unknown.value.message


def test_a_line_that_is_not_an_event_is_refused() -> None:
    with pytest.raises(ApiError) as refused:
        Upload(lambda _: httpx.Response(200, headers=NDJSON, content=b"<html>\n"))()
    assert refused.value.code == "not_memvault"


def test_unknown_fields_and_blank_lines_are_passed_over() -> None:
    answer = b"\n" + lines(
        {"phase": "parsing", "done": 0, "total": 1, "extra": 1}, {"result": REPORT}
    )
    upload = Upload(lambda _: httpx.Response(200, headers=NDJSON, content=answer))
    assert upload() == REPORT and upload.events == [
        {"phase": "parsing", "done": 0, "total": 1, "extra": 1}
    ]


def test_skipping_the_obsidian_folder_is_a_query_parameter() -> None:
    upload = Upload(
        lambda _: httpx.Response(200, headers=NDJSON, content=lines({"result": REPORT}))
    )
    data = b"PK" * 10
    upload.client.upload(io.BytesIO(data), len(data), upload.sent.append, upload.events.append)
    upload.client.upload(
        io.BytesIO(data),
        len(data),
        upload.sent.append,
        upload.events.append,
        obsidian_config="skip",
    )
    kept, skipped = upload.requests
    assert "obsidian_config" not in kept.url.params
    assert skipped.url.params["obsidian_config"] == "skip"
