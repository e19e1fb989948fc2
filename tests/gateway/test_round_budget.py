"""What a memory tool round may cost: the plan for the next send and the sizing of its
results (pure functions of gateway.rounds and tools.memory; no server)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from memvault.gateway.formats.base import ToolCall, ToolOutcome
from memvault.gateway.rounds import (
    MIN_RESULT_TOKENS,
    ROUND_RESULT_TOKENS,
    fit_outcomes,
    nesting_depth,
    plan_round,
    reserved_prompt_tokens,
    result_tokens,
)
from memvault.tokens import MESSAGE_OVERHEAD, count_tokens
from memvault.tools import MAX_CALLS_PER_ROUND, MAX_TOOL_ROUNDS, ToolResult
from memvault.tools.memory import fit_result


def test_with_room_for_every_round_the_tools_stay_and_the_results_share_it() -> None:
    plan = plan_round(room=40_000, base=1_000, sends_left=4, calls=1)
    assert plan is not None and plan.tools
    # Four sends of the base, and each round's growth at most 10 times over.
    assert plan.result_tokens == (40_000 - 4 * 1_000) // 10
    # More room than that gives no round more than its share of the reservation.
    generous = plan_round(room=10**9, base=1_000, sends_left=4, calls=1)
    assert generous is not None and generous.result_tokens == ROUND_RESULT_TOKENS


@given(
    prompt=st.integers(1, 200_000),
    allowance=st.integers(1, 2_000_000),
    turns=st.lists(st.floats(0, 1), min_size=4, max_size=4),
    calls=st.lists(st.integers(1, MAX_CALLS_PER_ROUND), min_size=4, max_size=4),
)
def test_what_is_reserved_holds_four_full_rounds(
    prompt: int, allowance: int, turns: list[float], calls: list[int]
) -> None:
    # The engine's planning, step by step: a provider that counts as memvault does, a
    # model whose turns (the calls it writes, sent again in every later round) stay
    # within the output allowance, and each round's results taking all they are given.
    # Every round keeps the tools but the last, gets the whole ROUND_RESULT_TOKENS, and
    # the five sends together never pass what was held.
    held = reserved_prompt_tokens(prompt, allowance, MAX_TOOL_ROUNDS + 1)
    total = sum(turns) or 1.0
    outputs = [math.floor(allowance * t / total) for t in turns]  # they sum to <= allowance
    sent = [prompt]
    conversation = prompt
    for number, (output, count) in enumerate(zip(outputs, calls, strict=True), start=1):
        base = conversation + output + MESSAGE_OVERHEAD * (1 + count)
        plan = plan_round(
            room=held - sum(sent),
            base=base,
            sends_left=MAX_TOOL_ROUNDS + 1 - number,
            calls=count,
        )
        assert plan is not None, number
        assert plan.result_tokens == ROUND_RESULT_TOKENS, number
        assert plan.tools == (number < MAX_TOOL_ROUNDS)
        conversation = base + plan.result_tokens
        sent.append(conversation)
    assert sum(sent) <= held


def test_a_round_reservation_is_the_prompt_five_times_and_what_the_rounds_add() -> None:
    growth = ROUND_RESULT_TOKENS + (1 + MAX_CALLS_PER_ROUND) * MESSAGE_OVERHEAD
    assert reserved_prompt_tokens(1_000, 500, 5) == 5 * 1_000 + 10 * growth + 4 * 500
    assert reserved_prompt_tokens(1_000, 500, 1) == 1_000  # no tools: one send


def test_the_last_send_that_fits_goes_without_the_tools() -> None:
    # Room for the next send with its results, not for one more after it.
    plan = plan_round(room=2_500, base=2_000, sends_left=4, calls=1)
    assert plan is not None and not plan.tools
    assert plan.result_tokens == 500
    # When the rounds run out, the last one goes without them whatever the room.
    last = plan_round(room=10**9, base=10, sends_left=1, calls=8)
    assert last is not None and not last.tools


def test_no_plan_when_not_even_a_last_send_fits() -> None:
    assert plan_round(room=1_000, base=1_000, sends_left=4, calls=1) is None
    assert plan_round(room=-5, base=10, sends_left=4, calls=1) is None
    assert plan_round(room=10**9, base=10, sends_left=0, calls=1) is None


@given(
    room=st.integers(-1_000, 10**7),
    base=st.integers(0, 10**6),
    sends_left=st.integers(1, 4),
    calls=st.integers(1, 8),
)
def test_a_plan_never_spends_more_than_the_room(
    room: int, base: int, sends_left: int, calls: int
) -> None:
    plan = plan_round(room=room, base=base, sends_left=sends_left, calls=calls)
    if plan is None:
        # Not even one send with the smallest results fits.
        assert base + calls * MIN_RESULT_TOKENS > room
        return
    assert plan.result_tokens >= calls * MIN_RESULT_TOKENS
    assert base + plan.result_tokens <= room  # the next send fits whatever follows
    if plan.tools:
        # Two sends at least: this one and the next, each round growing by the share.
        assert 2 * base + 3 * plan.result_tokens <= room


NOTE = "line " * 20_000


def read_result(markdown: str, offset: int = 0) -> ToolResult:
    part = markdown[offset : offset + 100_000]
    end = offset + len(part)
    text = f"long.md (version 3), characters {offset} to {end} of {len(markdown)}:\n\n{part}"
    if end < len(markdown):
        text += f"\n\n[{len(markdown) - end} more characters: call memory_read with offset {end}]"
    data = {
        "path": "long.md",
        "title": "long",
        "tags": [],
        "version": 3,
        "size": len(markdown),
        "updated_at": 0.0,
        "markdown": part,
        "offset": offset,
        "total_chars": len(markdown),
        "next_offset": end if end < len(markdown) else None,
    }
    return ToolResult(text, data=data)


def test_a_long_read_is_cut_at_a_token_and_says_where_to_read_on() -> None:
    cut = fit_result("memory_read", read_result(NOTE, offset=500), 300, count_tokens)
    assert count_tokens(cut.text) <= 300
    assert cut.data is not None
    end = cut.data["next_offset"]
    assert 500 < end < 600 + 300 * 8
    assert cut.data["markdown"] == NOTE[500:end]
    assert cut.text.startswith(f"long.md (version 3), characters 500 to {end} of {len(NOTE)}:")
    assert cut.text.endswith(f"more characters: call memory_read with offset {end}]")
    # What fits already is left alone.
    small = read_result("a short note")
    assert fit_result("memory_read", small, 300, count_tokens) is small


def test_other_results_keep_their_start_and_say_what_was_left_out() -> None:
    long = ToolResult("\n".join(f"{i}. note{i}.md — a title" for i in range(200)))
    cut = fit_result("memory_list", long, 100, count_tokens)
    assert count_tokens(cut.text) <= 100
    assert cut.text.startswith("0. note0.md")
    assert "left out to fit this request's budget" in cut.text


def test_a_rounds_results_share_the_budget_short_ones_whole() -> None:
    call = ToolCall("c1", "memory_read", "{}")
    short = ToolOutcome(ToolCall("c0", "memory_search", "{}"), ToolResult("No notes match 'x'."))
    long_a = ToolOutcome(call, read_result(NOTE))
    long_b = ToolOutcome(ToolCall("c2", "memory_read", "{}"), read_result(NOTE, offset=7))
    fitted = fit_outcomes([short, long_a, long_b], 1_000, 1.0)
    assert fitted[0] is short
    assert sum(result_tokens(o, 1.0) for o in fitted) <= 1_000
    assert all("call memory_read with offset" in o.result.text for o in fitted[1:])
    # Under the budget, nothing changes.
    assert fit_outcomes([short], 1_000, 1.0) == [short]


def test_nesting_is_measured_without_recursing() -> None:
    deep: object = 1
    for _ in range(50_000):
        deep = {"a": deep}
    assert nesting_depth(deep, 64) == 65  # counting stops past the limit
    assert nesting_depth({"path": "a.md", "tags": ["x"]}, 64) == 2
    assert nesting_depth("scalar", 64) == 0
