"""Stored Responses conversations the gateway continued in rounds (ADR 0045).

With the OpenAI Responses format and ``store`` on, the provider keeps each response and a
client continues one by naming it (``previous_response_id``). A request that ran memory
tool rounds is several upstream responses; the one the client was given may not be the
one the provider can continue from:

- a stream names the first round's response (ADR 0036), whose stored output ends in the
  memory calls the gateway answered in the next round;
- an answer whose last turn still held memory calls (a mixed turn with the client's own
  calls, or rounds that ran out) ends in calls the provider never got an output for.

A ``ChainLink`` maps the id the client got to the last round's id and the
``function_call_output`` items the gateway owes the provider for that round's memory
calls. A request continuing the client's id is sent upstream continuing the last round's,
the owed outputs first in its input. Links belong to one organisation, expire (30 days,
the provider's own retention for stored responses) and are bounded in number per
organisation, oldest dropped first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

DEFAULT_TTL_SECONDS: Final = 30 * 24 * 3600
DEFAULT_MAX_LINKS: Final = 10_000
# An owed output is a memory write's short result or a "not run" note; this bounds an
# entry (8 calls a round at most) far below a DynamoDB item's 400 KB.
MAX_OWED_OUTPUT_CHARS: Final = 8_000
TRUNCATED_MARK: Final = "\n[memory: result cut]"


@dataclass(frozen=True, slots=True)
class OwedOutput:
    """A function call's output the provider has not been sent yet."""

    call_id: str
    output: str


@dataclass(frozen=True, slots=True)
class ChainLink:
    """Where a client-visible response id really continues upstream."""

    upstream_id: str  # the last round's response id
    owed: tuple[OwedOutput, ...] = ()
    created_at: float = 0.0


def owed_output(call_id: str, output: str) -> OwedOutput:
    """An owed output, its text cut to ``MAX_OWED_OUTPUT_CHARS``."""
    if len(output) > MAX_OWED_OUTPUT_CHARS:
        keep = MAX_OWED_OUTPUT_CHARS - len(TRUNCATED_MARK)
        output = output[:keep] + TRUNCATED_MARK
    return OwedOutput(call_id, output)


def needed(client_id: str, link: ChainLink) -> bool:
    """Whether the client's id needs a link: it is not the last round's, or outputs are owed."""
    return client_id != link.upstream_id or bool(link.owed)


def encode_owed(owed: tuple[OwedOutput, ...]) -> list[list[str]]:
    """The owed outputs as plain JSON (adapters store them so)."""
    return [[o.call_id, o.output] for o in owed]


def decode_owed(raw: object) -> tuple[OwedOutput, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(
        OwedOutput(str(pair[0]), str(pair[1]))
        for pair in raw
        if isinstance(pair, list) and len(pair) == 2
    )
