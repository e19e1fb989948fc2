"""Balances an admin sets: never below zero, on every backend."""

from __future__ import annotations

import pytest

from memvault.container import Services
from memvault.errors import InvalidInput


@pytest.mark.parametrize("amount", [-1, -1_000_000, -(2**53)])
def test_a_negative_balance_is_refused_and_changes_nothing(services: Services, amount: int) -> None:
    services.billing.set_balance("local", 5_000)
    with pytest.raises(InvalidInput, match="negative") as info:
        services.billing.set_balance("local", amount)
    assert info.value.code == "invalid_amount"
    assert services.billing.balance("local").balance_micros == 5_000


def test_zero_and_unmetered_balances_are_still_set(services: Services) -> None:
    assert services.billing.set_balance("local", 0).balance_micros == 0
    assert services.billing.set_balance("local", None).balance_micros is None
