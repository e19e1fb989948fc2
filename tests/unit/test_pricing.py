"""Price lookup, cost and reservation arithmetic, and price table files."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from memvault.container import build_services
from memvault.domain.pricing import (
    ModelPrice,
    PriceTable,
    PriceTableError,
    cost_micros,
    reservation_micros,
    usd,
)
from memvault.settings import Settings

PACKAGED = PriceTable.load(None)


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------------- lookup
@pytest.mark.parametrize(
    ("model", "entry"),
    [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # the longest prefix wins
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-haiku-4-5", "claude-haiku-4-5"),
        ("gpt-4omni", "*"),  # a prefix must be followed by "-"
        ("GPT-4O", "*"),  # model ids are exact, case included
        ("some-new-model", "*"),
        ("", "*"),
    ],
)
def test_lookup(model: str, entry: str) -> None:
    assert PACKAGED.price(model).model == entry


def test_the_packaged_table_lists_the_current_models() -> None:
    assert set(PACKAGED.models()) >= {
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4.1",
        "gpt-4.1-mini",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "claude-opus-4-1",
        "*",
    }
    mini = PACKAGED.price("gpt-4o-mini")
    assert (mini.input_per_million, mini.output_per_million) == (Decimal("0.15"), Decimal("0.60"))


# ---------------------------------------------------------------------- arithmetic
PRICE = ModelPrice("m", Decimal("2.50"), Decimal("10.00"))


def test_cost_is_micros_rounded_up() -> None:
    assert cost_micros(PRICE, 1_000_000, 0) == 2_500_000  # $2.50 for a million tokens
    assert cost_micros(PRICE, 1_000, 100) == 2_500 + 1_000
    assert cost_micros(PRICE, 1, 0) == 3  # 2.5 micros -> 3
    assert cost_micros(ModelPrice("m", Decimal("0.15"), Decimal("0.6")), 1, 1) == 1  # 0.75
    assert cost_micros(PRICE, 0, 0) == 0
    assert cost_micros(ModelPrice("free", Decimal(0), Decimal(0)), 10**9, 10**9) == 0


def test_reservation_counts_the_prompt_once_per_send() -> None:
    assert reservation_micros(PRICE, 1_000, 500, 1) == 2_500 + 5_000
    assert reservation_micros(PRICE, 1_000, 500, 5) == 5 * 2_500 + 5_000
    assert reservation_micros(PRICE, 1, 0, 5) == 13  # 12.5 -> 13
    assert reservation_micros(PRICE, 1_000, 500, 5) >= cost_micros(PRICE, 5_000, 500)


@pytest.mark.parametrize(
    ("micros", "text"),
    [(0, "$0.000000"), (1, "$0.000001"), (1_234_567, "$1.234567"), (-5, "-$0.000005")],
)
def test_usd(micros: int, text: str) -> None:
    assert usd(micros) == text


# ---------------------------------------------------------------------- files
def test_a_file_replaces_the_table(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"models": {"tiny": {"input": 0.1, "output": "0.2"}, "*": {"input": 1, "output": 2}}},
    )
    table = PriceTable.load(path)
    assert table.price("tiny-v2").input_per_million == Decimal("0.1")  # not 0.1000000000000000055
    assert table.price("gpt-4o").model == "*"  # the packaged entries are gone


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ({"gpt-4o": {"input": 1, "output": 1}}, '"models" object'),
        ({"models": {"a": {"input": 1, "output": 1}}}, 'no "*" entry'),
        ({"models": {"*": {"input": 1}}}, "needs 'output'"),
        ({"models": {"*": {"input": True, "output": 1}}}, "needs 'input'"),
        ({"models": {"*": {"input": "cheap", "output": 1}}}, "is not a number"),
        ({"models": {"*": {"input": -1, "output": 1}}}, "between 0 and"),
        ({"models": {"*": {"input": "NaN", "output": 1}}}, "between 0 and"),
        ({"models": {"*": {"input": 1, "output": 1}, " ": {"input": 1, "output": 1}}}, "empty"),
    ],
)
def test_a_bad_file_names_the_file_and_the_problem(
    tmp_path: Path, content: object, problem: str
) -> None:
    path = write(tmp_path, content)
    with pytest.raises(PriceTableError) as refused:
        PriceTable.load(path)
    assert str(path) in refused.value.message
    assert problem in refused.value.message


def test_a_missing_file_is_a_startup_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    settings = Settings(backend="sqlite", data_dir=tmp_path / "data", price_table=missing)
    with pytest.raises(PriceTableError) as refused:
        build_services(settings)
    assert str(missing) in refused.value.message and "cannot be read" in refused.value.message


def test_the_setting_reaches_the_billing_service(tmp_path: Path) -> None:
    path = write(tmp_path, {"models": {"*": {"input": 7, "output": 9}}})
    settings = Settings(backend="sqlite", data_dir=tmp_path / "data", price_table=path)
    assert build_services(settings).billing.price("gpt-4o").input_per_million == 7
