"""Model prices and the money arithmetic of the gateway. Pure: no I/O but reading the table.

Money is integer micro-USD ("micros") everywhere it is stored or compared; prices are
``Decimal`` USD per million tokens, so ``tokens × price`` is already micro-USD and the
only rounding is one ceiling at the end (a request never costs less than it used).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Any

from memvault.errors import InvalidInput, PaymentRequired

DEFAULT_MODEL = "*"
# Sanity bound on a price: a typo (a price per token pasted as per million) is refused.
MAX_PRICE_PER_MILLION = Decimal(1_000_000)
# The largest number the ledgers take, money (about 9 billion USD) or a count of tokens:
# every storage integer holds it exactly (SQLite's 64 bits, DynamoDB's 38 digits, and a
# JSON number read as a double). An amount past it is refused (``amount_too_large``),
# a count reported past it (by a provider) is capped.
MAX_MICROS = 2**53


class PriceTableError(InvalidInput):
    """The price table file cannot be used; raised at startup, naming the file."""

    default_code = "invalid_price_table"


@dataclass(frozen=True, slots=True)
class ModelPrice:
    model: str  # the table entry that priced the request ("*" for the default)
    input_per_million: Decimal
    output_per_million: Decimal


def _price(source: str, model: str, raw: Any, field: str) -> Decimal:
    value = raw.get(field) if isinstance(raw, dict) else None
    # bool is an int in Python; "true" is no price. Floats pass through str() so 0.1
    # stays 0.1 rather than its binary approximation.
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise PriceTableError(
            f"{source}: model {model!r} needs {field!r} as a number of USD per million tokens"
        )
    try:
        price = Decimal(str(value))
    except InvalidOperation as exc:
        raise PriceTableError(
            f"{source}: model {model!r} {field} {value!r} is not a number"
        ) from exc
    if not price.is_finite() or not Decimal(0) <= price <= MAX_PRICE_PER_MILLION:
        raise PriceTableError(
            f"{source}: model {model!r} {field} must be between 0 and {MAX_PRICE_PER_MILLION}"
        )
    return price


class PriceTable:
    """Per-model prices; a model id is priced by its exact entry, its longest listed
    prefix followed by "-" (dated snapshots), else the "*" default."""

    def __init__(self, prices: dict[str, ModelPrice]) -> None:
        if DEFAULT_MODEL not in prices:
            raise PriceTableError(f'a price table needs a "{DEFAULT_MODEL}" default entry')
        self._prices = dict(prices)
        # Longest first, so "gpt-4o-mini" wins over "gpt-4o" for "gpt-4o-mini-2024-07-18".
        self._by_length = sorted((m for m in prices if m != DEFAULT_MODEL), key=len, reverse=True)

    @classmethod
    def parse(cls, text: str, source: str) -> PriceTable:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PriceTableError(f"{source}: not valid JSON ({exc})") from exc
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, dict) or not models:
            raise PriceTableError(
                f'{source}: expected a "models" object mapping each model id to'
                ' {"input": ..., "output": ...} in USD per million tokens'
            )
        prices: dict[str, ModelPrice] = {}
        for model, raw in models.items():
            if not model.strip():
                raise PriceTableError(f"{source}: a model id is empty")
            prices[model] = ModelPrice(
                model=model,
                input_per_million=_price(source, model, raw, "input"),
                output_per_million=_price(source, model, raw, "output"),
            )
        if DEFAULT_MODEL not in prices:
            raise PriceTableError(
                f'{source}: no "{DEFAULT_MODEL}" entry; it prices models the table does not list'
            )
        return cls(prices)

    @classmethod
    def load(cls, path: Path | None) -> PriceTable:
        """The table at ``path`` (MEMVAULT_PRICE_TABLE), or the packaged one for None."""
        if path is None:
            packaged = resources.files("memvault").joinpath("data/prices.json")
            return cls.parse(packaged.read_text(encoding="utf-8"), "the packaged price table")
        source = f"price table {str(path)!r}"
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PriceTableError(f"{source}: cannot be read ({exc})") from exc
        return cls.parse(text, source)

    def price(self, model: str) -> ModelPrice:
        exact = self._prices.get(model)
        if exact is not None:
            return exact
        for entry in self._by_length:
            if model.startswith(entry + "-"):
                return self._prices[entry]
        return self._prices[DEFAULT_MODEL]

    def models(self) -> list[str]:
        return sorted(self._prices)


def _ceil_micros(value: Decimal) -> int:
    return math.ceil(value)


def cost_micros(price: ModelPrice, input_tokens: int, output_tokens: int) -> int:
    """What a request cost: tokens × USD per million tokens is micro-USD, rounded up."""
    return _ceil_micros(
        max(input_tokens, 0) * price.input_per_million
        + max(output_tokens, 0) * price.output_per_million
    )


def reservation_micros(
    price: ModelPrice, prompt_tokens: int, output_allowance: int, sends: int
) -> int:
    """The hold before dispatch: the prompt once per send (each memory round sends the
    conversation again) plus the output allowance, rounded up."""
    return _ceil_micros(
        max(sends, 1) * max(prompt_tokens, 0) * price.input_per_million
        + max(output_allowance, 0) * price.output_per_million
    )


def usd(micros: int) -> str:
    """Micros as dollars for people: 1234567 -> "$1.234567", -5 -> "-$0.000005"."""
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), 1_000_000)
    return f"{sign}${whole}.{frac:06d}"


def capped(value: int) -> int:
    """A count or cost as the ledgers store it: at least 0, at most MAX_MICROS."""
    return min(max(value, 0), MAX_MICROS)


def amount_too_large(amount_micros: int) -> InvalidInput:
    """The refusal of a hold no ledger can take (a request asking for an absurd output)."""
    return InvalidInput(
        f"this request would hold {usd(amount_micros)}, more than the {usd(MAX_MICROS)} a"
        " request may hold; ask for fewer output tokens (max_tokens)",
        code="amount_too_large",
    )


def check_amount(amount_micros: int) -> None:
    """Refuse (InvalidInput, 400) an amount past what the ledgers hold."""
    if not -MAX_MICROS <= amount_micros <= MAX_MICROS:
        raise amount_too_large(amount_micros)


def balance_would_go_negative(balance_micros: int | None, delta_micros: int) -> InvalidInput:
    """The refusal of a correction that would take a balance below zero (both ledgers)."""
    now = "unmetered (no balance)" if balance_micros is None else usd(balance_micros)
    return InvalidInput(
        f"this correction of {usd(delta_micros)} would take the balance below zero (it is"
        f" {now}); correct by at most the balance, or set it to 0 to stop metered requests",
        code="balance_would_go_negative",
    )


# The two refusals of a reservation, worded once for both ledgers.
def insufficient_balance(available_micros: int, needed_micros: int) -> PaymentRequired:
    return PaymentRequired(
        f"the account's balance is too low for this request: {usd(available_micros)}"
        f" available, {usd(needed_micros)} needed (held until the request ends; the"
        " unused part is released)",
        code="insufficient_balance",
    )


def spend_cap_exceeded(
    cap_micros: int, spent_micros: int, held_micros: int, needed_micros: int
) -> PaymentRequired:
    return PaymentRequired(
        f"this key's spend cap of {usd(cap_micros)} would be exceeded: {usd(spent_micros)}"
        f" spent and {usd(held_micros)} held by requests in flight, {usd(needed_micros)}"
        " needed for this one",
        code="spend_cap_exceeded",
    )
