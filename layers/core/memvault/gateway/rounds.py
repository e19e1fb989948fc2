"""Memory tool rounds: which calls of a turn run, whether another round follows, and how
much of the reservation the round's results may take.

The rules (vault-gateway spec, "How the tool rounds work"):

- a turn that ends with only memory tool calls: they run and the same response continues,
  up to ``MAX_TOOL_ROUNDS`` rounds, or fewer when the next round would not fit what the
  request reserved;
- more than ``MAX_CALLS_PER_ROUND`` memory calls in one turn, or a call whose arguments
  nest deeper than ``MAX_ARGUMENT_DEPTH``: refused before any runs, and the request fails
  (400 ``memory_tool_call_ceiling``, ``memory_tool_arguments_too_deep``);
- a mixed turn (memory calls and the client's own): memory writes run, memory reads are
  dropped (their results could never reach the model), the client's calls go back to it.
  A turn that cannot continue (rounds ran out, reservation reached) is treated the same.

The client always gets an answer: the last round that fits is sent with the memory tools
withheld, so the model answers from what it has instead of asking for another round
that would never be sent. Which round is the last, and how long its results may be, is
``plan_round``'s: the results of a round are cut (``fit_result``: a long memory_read
says where to read on) so that the rounds still to come fit what was reserved.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

from memvault.container import Services
from memvault.errors import InvalidInput
from memvault.gateway.formats.base import READ_ONLY_TOOLS, ToolCall, ToolOutcome, Turn
from memvault.services.context import Caller
from memvault.tokens import MESSAGE_OVERHEAD, count_tokens
from memvault.tools import (
    MAX_CALLS_PER_ROUND,
    MAX_TOOL_ROUNDS,
    ToolResult,
    WriteAllowance,
    run_tool,
)
from memvault.tools.memory import fit_result

# No memory tool takes arguments nested more than a level or two; this bound keeps every
# later step (parsing, copying, re-encoding the conversation) far from Python's recursion
# limit, which JSON nested about a thousand levels deep reaches.
MAX_ARGUMENT_DEPTH = 64
# The least a tool result is cut to: its frame and the note saying how to read on.
MIN_RESULT_TOKENS = 64
# The most one round's results may add to the conversation, all together (memvault's
# count, margin included): what the reservation holds for each round (ADR 0023).
ROUND_RESULT_TOKENS = 4_000
# A round's messages besides its results: the model's turn and each of its calls.
ROUND_OVERHEAD_TOKENS = (1 + MAX_CALLS_PER_ROUND) * MESSAGE_OVERHEAD
# Appended to the last tool result of a round sent without the memory tools.
FINAL_ROUND_NOTE = (
    "\n\n[memory: the memory tools are not available for the rest of this answer (this"
    " request's rounds are used up); answer with what you have]"
)


@dataclass(slots=True)
class RoundState:
    """What one request's rounds have used so far."""

    caller: Caller
    rounds: int = 0  # rounds whose results went back to the model
    allowance: WriteAllowance = field(default_factory=WriteAllowance)
    calls_by_tool: Counter[str] = field(default_factory=Counter)
    dropped_reads: int = 0
    # Set once a round went without the memory tools: why (the notice). A memory call
    # after it (a model that calls a tool it was not given) ends the rounds.
    withheld: str | None = None

    @property
    def rounds_left(self) -> bool:
        return self.rounds < MAX_TOOL_ROUNDS

    @property
    def sends_left(self) -> int:
        """Sends that may still follow this turn: one per round left."""
        return MAX_TOOL_ROUNDS - self.rounds


def check_ceiling(turn: Turn) -> None:
    count = len(turn.memory_calls)
    if count > MAX_CALLS_PER_ROUND:
        raise InvalidInput(
            f"the model asked for {count} memory tool calls in one round; at most"
            f" {MAX_CALLS_PER_ROUND} run per round, so none ran",
            code="memory_tool_call_ceiling",
        )


def nesting_depth(value: object, limit: int) -> int:
    """How deeply lists and objects nest in ``value`` (0 for a scalar); counting stops
    past ``limit``. Iterative: the value may be nested far past the recursion limit."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[object] = list(node.values())
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if depth > limit:
            return depth
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_round(turn: Turn) -> None:
    """Refuse the whole round (InvalidInput, 400) before any of its calls runs: more
    memory calls than a round takes, or a call's arguments nested too deeply to handle.
    Arguments that are not JSON are not refused here: that call is answered to the model
    (invalid_arguments) and the others run. Blocking (parses every call's arguments)."""
    check_ceiling(turn)
    for call in turn.memory_calls:
        try:
            too_deep = nesting_depth(call.arguments(), MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH
        except ValueError:
            continue
        except RecursionError:
            too_deep = True
        if too_deep:
            raise InvalidInput(
                f"the model's {call.name} call has arguments nested more than"
                f" {MAX_ARGUMENT_DEPTH} levels deep; no memory tool takes that, so none of"
                " the round's calls ran",
                code="memory_tool_arguments_too_deep",
            )


def _run_one(services: Services, state: RoundState, call: ToolCall) -> ToolOutcome:
    try:
        arguments = call.arguments()
    except (ValueError, RecursionError):
        message = f"the arguments of {call.name} are not valid JSON"
        error = {"type": "invalid_request", "code": "invalid_arguments", "message": message}
        result = ToolResult(
            f"refused (invalid_arguments): {message}", is_error=True, data={"error": error}
        )
        return ToolOutcome(call, result)
    state.calls_by_tool[call.name] += 1
    result = run_tool(services, state.caller, call.name, arguments, allowance=state.allowance)
    return ToolOutcome(call, result)


def run_calls(services: Services, state: RoundState, calls: list[ToolCall]) -> list[ToolOutcome]:
    """Run calls in the order the model gave them (a write then a read of it must see it).

    Blocking: call it in a worker thread.
    """
    return [_run_one(services, state, call) for call in calls]


def writes_only(calls: list[ToolCall], state: RoundState) -> list[ToolCall]:
    kept = [call for call in calls if call.name not in READ_ONLY_TOOLS]
    state.dropped_reads += len(calls) - len(kept)
    return kept


# ---------------------------------------------------------------------- what the rounds may cost
def reserved_prompt_tokens(prompt: int, output_allowance: int, sends: int) -> int:
    """The prompt tokens a request with ``sends`` sends (the first and one per round)
    holds: every send carries the whole conversation, so round ``i`` of ``r`` is sent
    again ``r - i + 1`` times, with its results (at most ``ROUND_RESULT_TOKENS``), its
    messages' overhead and the model's turn that asked for it (the model's turns share
    the output allowance, so together they are re-sent at most ``r`` times over).

    ``r`` rounds: ``sends * prompt + r(r+1)/2 * (ROUND_RESULT_TOKENS +
    ROUND_OVERHEAD_TOKENS) + r * output_allowance``. With that much held, ``plan_round``
    gives every one of the rounds at least ``ROUND_RESULT_TOKENS`` as long as the
    provider counts no more than memvault does and the model's turns stay within the
    allowance (ADR 0023; tests/gateway/test_round_budget.py walks every case).
    """
    rounds = max(sends, 1) - 1
    growth = ROUND_RESULT_TOKENS + ROUND_OVERHEAD_TOKENS
    return (
        max(sends, 1) * max(prompt, 0)
        + rounds * (rounds + 1) // 2 * growth
        + rounds * max(output_allowance, 0)
    )


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """The next send: whether it keeps the memory tools (another round may follow it)
    and how many prompt tokens this round's tool results may add, all together."""

    tools: bool
    result_tokens: int


def plan_round(*, room: int, base: int, sends_left: int, calls: int) -> RoundPlan | None:
    """Plan the next send, or None when not even a last one fits.

    ``room``: the prompt tokens the reservation still holds for every send to come (what
    was reserved, less what was spent and the output allowance still unused);
    ``base``: the next send's prompt before this round's results (the last prompt, as
    the provider counted it, and the turn being answered); ``sends_left``: the sends
    that may still come, this one included; ``calls``: the round's tool results.

    Each send to come carries the whole conversation: with ``m`` sends, each round's
    growth (its results, then the model's next calls) capped at ``g``, they cost at
    most ``m * base + g * m(m+1)/2``. The plan takes the most sends (up to
    ``sends_left``) for which ``g`` still holds every result's frame and note; this
    round's results get ``g``, and when only this send fits it goes without the memory
    tools, so the model answers. A round's results never get more than
    ``ROUND_RESULT_TOKENS``, what the reservation holds for each.
    """
    floor = calls * MIN_RESULT_TOKENS
    for sends in range(max(sends_left, 0), 0, -1):
        growth = (room - sends * base) // (sends * (sends + 1) // 2)
        if growth >= floor:
            # never more than a round's share of the reservation: a first round that took
            # the room the later ones were held for would leave them short
            return RoundPlan(tools=sends > 1, result_tokens=min(growth, ROUND_RESULT_TOKENS))
    return None


def counted_output(turn: Turn, margin: float) -> int:
    """The turn the model wrote (text and tool calls), as memvault counts it."""
    text = turn.text + "".join(c.name + c.arguments_json for c in turn.tool_calls)
    return math.ceil(count_tokens(text) * margin)


def planned_usage(turn: Turn, sent_prompt: int, margin: float) -> tuple[int, int]:
    """What a send is taken to have used when the rounds are planned: memvault's own
    count (``sent_prompt``, the turn counted), or the provider's when it says more. The
    reservation is sized in memvault's count, so a provider that counts no more than
    memvault never makes a round fall short, and one that counts more stops the rounds
    before they spend past the hold."""
    return (
        max(turn.usage.input_tokens, sent_prompt),
        max(turn.usage.output_tokens, counted_output(turn, margin)),
    )


def next_prompt_base(turn: Turn, sent_prompt: int, margin: float) -> int:
    """The next send's prompt before the round's results: the prompt just sent and the
    turn that answered it, which goes back as the assistant's message (each as
    ``planned_usage`` takes it)."""
    prompt, answered = planned_usage(turn, sent_prompt, margin)
    return prompt + answered + MESSAGE_OVERHEAD * (1 + len(turn.tool_calls))


def result_tokens(outcome: ToolOutcome, margin: float) -> int:
    return math.ceil((count_tokens(outcome.result.text) + MESSAGE_OVERHEAD) * margin)


def fit_outcomes(outcomes: list[ToolOutcome], budget: int, margin: float) -> list[ToolOutcome]:
    """The round's results within ``budget`` prompt tokens: short ones whole, the rest
    sharing what is left equally (a long memory_read is cut and says where to read on).
    Blocking (counts tokens)."""
    costs = [result_tokens(o, margin) for o in outcomes]
    if sum(costs) <= budget:
        return outcomes
    shares = [0] * len(outcomes)
    left = budget
    order = sorted(range(len(outcomes)), key=costs.__getitem__)
    for rank, index in enumerate(order):
        shares[index] = min(costs[index], left // (len(order) - rank))
        left -= shares[index]
    fitted = []
    for outcome, cost, share in zip(outcomes, costs, shares, strict=True):
        if share < cost:
            tokens = max(0, math.floor(share / margin) - MESSAGE_OVERHEAD)
            result = fit_result(outcome.call.name, outcome.result, tokens, count_tokens)
            outcome = ToolOutcome(outcome.call, result)
        fitted.append(outcome)
    return fitted


def with_final_note(outcomes: list[ToolOutcome]) -> list[ToolOutcome]:
    """The results of a round sent without the memory tools: the last one says so."""
    if not outcomes:
        return outcomes
    last = outcomes[-1]
    result = replace(last.result, text=last.result.text + FINAL_ROUND_NOTE)
    return [*outcomes[:-1], ToolOutcome(last.call, result)]
