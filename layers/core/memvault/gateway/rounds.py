"""Memory tool rounds: which calls of a turn run, and whether another round follows.

The rules (vault-gateway spec, "How the tool rounds work"):

- a turn that ends with only memory tool calls: they run and the same response continues,
  up to ``MAX_TOOL_ROUNDS`` rounds, or fewer when the next round would not fit what the
  request reserved;
- more than ``MAX_CALLS_PER_ROUND`` memory calls in one turn: refused before any runs,
  and the request fails (400 ``memory_tool_call_ceiling``);
- a mixed turn (memory calls and the client's own): memory writes run, memory reads are
  dropped (their results could never reach the model), the client's calls go back to it.
  A turn that cannot continue (rounds ran out, reservation reached) is treated the same.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from memvault.container import Services
from memvault.errors import InvalidInput
from memvault.gateway.formats.base import READ_ONLY_TOOLS, ToolCall, ToolOutcome, Turn
from memvault.services.context import Caller
from memvault.tools import (
    MAX_CALLS_PER_ROUND,
    MAX_TOOL_ROUNDS,
    ToolResult,
    WriteAllowance,
    run_tool,
)


@dataclass(slots=True)
class RoundState:
    """What one request's rounds have used so far."""

    caller: Caller
    rounds: int = 0  # rounds whose results went back to the model
    allowance: WriteAllowance = field(default_factory=WriteAllowance)
    calls_by_tool: Counter[str] = field(default_factory=Counter)
    dropped_reads: int = 0

    @property
    def rounds_left(self) -> bool:
        return self.rounds < MAX_TOOL_ROUNDS


def check_ceiling(turn: Turn) -> None:
    count = len(turn.memory_calls)
    if count > MAX_CALLS_PER_ROUND:
        raise InvalidInput(
            f"the model asked for {count} memory tool calls in one round; at most"
            f" {MAX_CALLS_PER_ROUND} run per round, so none ran",
            code="memory_tool_call_ceiling",
        )


def _run_one(services: Services, state: RoundState, call: ToolCall) -> ToolOutcome:
    try:
        arguments = call.arguments()
    except ValueError:
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
