"""The Responses format's chain rules (ADR 0045), pure: when an answer needs a link, and
how a request continuing one is rewritten."""

from __future__ import annotations

from memvault.domain.response_chains import (
    MAX_OWED_OUTPUT_CHARS,
    ChainLink,
    OwedOutput,
    decode_owed,
    encode_owed,
)
from memvault.gateway.formats.base import ToolCall, ToolOutcome, Turn
from memvault.gateway.formats.openai import OpenAIChat
from memvault.gateway.formats.responses import OpenAIResponses
from memvault.tools import ToolResult

API = OpenAIResponses()
LINK = ChainLink("resp_last", (OwedOutput("c1", "wrote a.md"), OwedOutput("c2", "not run")))


def outcome(call_id: str, text: str) -> ToolOutcome:
    return ToolOutcome(ToolCall(call_id, "memory_write", "{}"), ToolResult(text))


def test_a_request_continuing_a_link_names_the_last_round_and_answers_its_calls_first() -> None:
    body = {"model": "m", "previous_response_id": "resp_first", "input": "next", "store": True}
    resumed = API.resumed(body, LINK)
    assert resumed["previous_response_id"] == "resp_last"
    assert resumed["input"] == [
        {"type": "function_call_output", "call_id": "c1", "output": "wrote a.md"},
        {"type": "function_call_output", "call_id": "c2", "output": "not run"},
        {"role": "user", "content": "next"},
    ]
    assert body["input"] == "next"  # the client's body is not changed in place
    own = {"type": "function_call_output", "call_id": "c2", "output": "the client's"}
    resumed = API.resumed({**body, "input": [own]}, LINK)
    assert [i["call_id"] for i in resumed["input"]] == ["c1", "c2"]  # never doubled
    assert resumed["input"][1] == own
    plain = API.resumed(body, ChainLink("resp_last"))
    assert plain["input"] == "next" and plain["previous_response_id"] == "resp_last"
    assert API.continues_from(body) == "resp_first"
    assert API.continues_from({"previous_response_id": ""}) is None
    assert OpenAIChat().continues_from(body) is None  # chat sends its conversation whole


def test_only_an_id_the_provider_cannot_continue_as_it_is_is_linked() -> None:
    body = {"model": "m", "input": "x"}
    last = Turn(raw={"id": "resp_last"})
    assert API.chain_link(body, "resp_last", last, [], 5.0) is None  # nothing to remember
    link = API.chain_link(body, "resp_first", last, [], 5.0)
    assert link == ChainLink("resp_last", (), 5.0)
    owed = API.chain_link(body, "resp_last", last, [outcome("c1", "wrote")], 5.0)
    assert owed == ChainLink("resp_last", (OwedOutput("c1", "wrote"),), 5.0)
    assert API.chain_link({**body, "store": False}, "resp_first", last, [], 5.0) is None
    assert API.chain_link(body, None, last, [], 5.0) is None
    long = API.chain_link(body, "resp_last", last, [outcome("c1", "x" * 20_000)], 5.0)
    assert long is not None and len(long.owed[0].output) == MAX_OWED_OUTPUT_CHARS
    assert decode_owed(encode_owed(LINK.owed)) == LINK.owed
    assert decode_owed("not a list") == ()


def test_an_answer_shows_the_id_the_client_continued() -> None:
    shown = API.shown_continuing({"id": "r2", "previous_response_id": "resp_last"}, "resp_first")
    assert shown == {"id": "r2", "previous_response_id": "resp_first"}
    assert API.shown_continuing({"id": "r2"}, "resp_first") == {"id": "r2"}
