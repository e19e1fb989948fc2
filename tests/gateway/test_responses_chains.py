"""Continuing a Responses answer that ran memory rounds (``previous_response_id``, ADR
0045), with the official openai SDK against the scripted upstream, which refuses what
OpenAI refuses: continuing a stored response without an output for each of its function
calls ("No tool output found for function call ...").

A stream names its first round's response, whose stored output ends in the memory calls
the next round answered; a mixed turn's response still holds memory calls nobody
answered upstream. The gateway links the id the client got to the last round and the
outputs owed, in the caller's organisation only."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from memvault.domain.models import Toggles
from memvault.gateway.engine import DROPPED_READ_OUTPUT
from tests.gateway.conftest import issue_key, openai_client
from tests.gateway.test_responses import MODEL, WEATHER, note_text, search, sent, write
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer
from tests.support.upstream import Reply, ScriptedUpstream, ToolCall
from tests.support.upstream.render_responses import stored_calls

NO_OUTPUT = "No tool output found for function call"


def weather_output(call_id: str) -> list[dict[str, Any]]:
    return [{"type": "function_call_output", "call_id": call_id, "output": "sunny"}]


def test_a_streamed_answer_that_ran_memory_rounds_continues_from_the_id_it_named(
    gateway: LiveServer, upstream: ScriptedUpstream, clock: FakeClock
) -> None:
    key = issue_key(gateway, tools=True)
    client = openai_client(gateway, key)
    upstream.enqueue(
        Reply(text="Let me look.", tool_calls=[search("home")]),
        Reply(text="You live in Oslo."),
    )
    with client.responses.stream(model=MODEL, input="Where do I live?") as stream:
        first = stream.get_final_response()
    # The stream is named by its first round, whose stored response ends in the memory
    # call the second round answered (ADR 0036).
    assert first.output_text == "Let me look.\n\nYou live in Oslo."
    assert sent(upstream, 1)["previous_response_id"] == first.id
    assert len(stored_calls(first.id) or ()) == 1
    # A streamed continuation that runs memory rounds of its own.
    upstream.enqueue(Reply(tool_calls=[search("name")]), Reply(text="You are Ada."))
    with client.responses.stream(
        model=MODEL, previous_response_id=first.id, input="And my name?"
    ) as stream:
        second = stream.get_final_response()
    assert second.output_text == "You are Ada."
    assert second.previous_response_id == first.id  # the id the client continued
    resumed = sent(upstream, 2)
    last_round = resumed["previous_response_id"]
    assert last_round != first.id and stored_calls(last_round) == ()  # the last round's
    assert resumed["input"] == "And my name?"
    # ... and a whole answer continuing that one.
    upstream.enqueue(Reply(text="Noted."))
    third = client.responses.create(model=MODEL, previous_response_id=second.id, input="ok")
    assert third.output_text == "Noted." and third.previous_response_id == second.id
    assert sent(upstream, 4)["previous_response_id"] not in (second.id, None)
    assert stored_calls(sent(upstream, 4)["previous_response_id"]) == ()
    # Links expire with the provider's retention: then the id goes up as sent, refused.
    clock.advance(gateway.services.settings.responses_chain_ttl_seconds + 1)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, previous_response_id=first.id, input="again")
    assert NO_OUTPUT in str(caught.value)
    assert sent(upstream, 5)["previous_response_id"] == first.id


def test_a_mixed_turn_with_store_continues_with_the_clients_own_tool_output(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway, tools=True)
    client = openai_client(gateway, key)
    upstream.enqueue(
        Reply(
            tool_calls=[
                write("facts/Mixed.md", "written in a mixed turn"),
                search("mixed"),
                ToolCall("get_weather", {"city": "Oslo"}),
            ]
        )
    )
    answer = client.responses.create(model=MODEL, input="Weather?", tools=[WEATHER])
    [call] = answer.output
    assert call.type == "function_call" and call.name == "get_weather"
    assert note_text(gateway, "facts/Mixed.md") == "written in a mixed turn"
    write_id, search_id, weather_id = stored_calls(answer.id) or ()
    assert weather_id == call.call_id
    upstream.enqueue(Reply(text="Sunny in Oslo."))
    follow = client.responses.create(
        model=MODEL,
        previous_response_id=answer.id,
        input=weather_output(call.call_id),  # type: ignore[arg-type]
        tools=[WEATHER],  # type: ignore[list-item]
    )
    assert follow.output_text == "Sunny in Oslo."
    resumed = sent(upstream, 1)
    assert resumed["previous_response_id"] == answer.id  # a whole answer: the last round
    owed_write, owed_search, own = resumed["input"]
    assert owed_write["type"] == owed_search["type"] == "function_call_output"
    assert owed_write["call_id"] == write_id and "facts/Mixed.md" in owed_write["output"]
    assert owed_search == {
        "type": "function_call_output",
        "call_id": search_id,
        "output": DROPPED_READ_OUTPUT,
    }
    assert own == weather_output(call.call_id)[0]
    # A whole answer whose rounds all ended (no memory call left) continues as it is.
    upstream.enqueue(Reply(tool_calls=[search("tea")]), Reply(text="No tea notes."))
    whole = client.responses.create(model=MODEL, input="Tea?")
    upstream.enqueue(Reply(text="Fine."))
    client.responses.create(model=MODEL, previous_response_id=whole.id, input="ok")
    assert sent(upstream, 4)["previous_response_id"] == whole.id
    assert sent(upstream, 4)["input"] == "ok"


def test_a_streamed_mixed_turn_is_continued_too(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    client = openai_client(sqlite_gateway, key)
    upstream.enqueue(
        Reply(tool_calls=[write("facts/S.md", "streamed"), ToolCall("get_weather", {})])
    )
    with client.responses.stream(model=MODEL, input="x", tools=[WEATHER]) as stream:  # type: ignore[list-item]
        answer = stream.get_final_response()
    [call] = answer.output
    upstream.enqueue(Reply(text="done"))
    client.responses.create(
        model=MODEL,
        previous_response_id=answer.id,
        input=weather_output(call.call_id),  # type: ignore[arg-type]
        tools=[WEATHER],  # type: ignore[list-item]
    )
    resumed = sent(upstream, 1)
    assert resumed["previous_response_id"] == answer.id
    assert [i["call_id"] for i in resumed["input"]] == list(stored_calls(answer.id) or ())


def test_only_the_callers_organisation_s_links_apply_and_store_off_is_unchanged(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    gateway = sqlite_gateway
    key = issue_key(gateway, tools=True)
    client = openai_client(gateway, key)
    upstream.enqueue(Reply(tool_calls=[search("a")]), Reply(text="answered"))
    with client.responses.stream(model=MODEL, input="q") as stream:
        streamed = stream.get_final_response()
    accounts = gateway.services.accounts
    accounts.create_account("Other", account_id="other")
    other = accounts.issue_key("other", name="theirs", toggles=Toggles(tools=True)).secret
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client(gateway, other).responses.create(
            model=MODEL, previous_response_id=streamed.id, input="peek"
        )
    assert NO_OUTPUT in str(caught.value)
    assert sent(upstream, 2)["previous_response_id"] == streamed.id  # not rewritten
    assert sent(upstream, 2)["input"] == "peek"
    # Another key of the same organisation (no memory toggles at all) continues it.
    plain = issue_key(gateway)
    upstream.enqueue(Reply(text="continued"))
    follow = openai_client(gateway, plain).responses.create(
        model=MODEL, previous_response_id=streamed.id, input="go on"
    )
    assert follow.output_text == "continued" and follow.previous_response_id == streamed.id
    assert sent(upstream, 3)["previous_response_id"] not in (streamed.id, None)
    upstream.enqueue(Reply(text="streamed through"))
    with openai_client(gateway, plain).responses.stream(
        model=MODEL, previous_response_id=streamed.id, input="go on"
    ) as stream:
        passed = stream.get_final_response()
    assert passed.output_text == "streamed through"
    assert passed.previous_response_id == streamed.id
    assert sent(upstream, 4)["previous_response_id"] == sent(upstream, 3)["previous_response_id"]
    # With store off nothing is linked: the client sends its conversation whole.
    upstream.enqueue(Reply(tool_calls=[search("b")]), Reply(text="unstored"))
    with client.responses.stream(model=MODEL, input="q", store=False) as stream:
        unstored = stream.get_final_response()
    chains = gateway.services.response_chains
    assert chains.get("local", unstored.id, now=gateway.clock.now) is None
    assert chains.get("local", streamed.id, now=gateway.clock.now) is not None
    upstream.enqueue(Reply(text="as sent"))
    client.responses.create(model=MODEL, previous_response_id=unstored.id, input="more")
    assert sent(upstream, 7)["previous_response_id"] == unstored.id
    assert sent(upstream, 7)["input"] == "more"


def test_rounds_that_ran_out_leave_the_last_reads_answered_upstream(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    client = openai_client(sqlite_gateway, key)
    upstream.set_default(Reply(tool_calls=[search()], input_tokens=10, output_tokens=1))
    answer = client.responses.create(model=MODEL, input="keep searching")
    assert len(upstream.requests) == 5 and answer.output == []
    [unanswered] = stored_calls(answer.id) or ()  # the fifth response's call never ran
    upstream.set_default(Reply(text="giving up"))
    follow = client.responses.create(model=MODEL, previous_response_id=answer.id, input="stop")
    assert follow.output_text == "giving up"
    assert sent(upstream, 5)["input"] == [
        {"type": "function_call_output", "call_id": unanswered, "output": DROPPED_READ_OUTPUT},
        {"role": "user", "content": "stop"},
    ]
