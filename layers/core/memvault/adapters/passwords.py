"""Password hashing with argon2id (argon2-cffi): the PasswordHasher port.

The default cost is argon2-cffi's recommended profile (RFC 9106's low-memory one: 64 MiB,
3 passes). ``low`` exists so the test suite can hash thousands of passwords: never use
it for real people.
"""

from __future__ import annotations

from typing import Literal

from argon2 import PasswordHasher as _Argon2
from argon2.exceptions import InvalidHashError, VerificationError

Cost = Literal["default", "low"]


class Argon2Hasher:
    def __init__(self, cost: Cost = "default") -> None:
        if cost == "low":
            self._hasher = _Argon2(time_cost=1, memory_cost=8, parallelism=1)
        else:
            self._hasher = _Argon2()

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, password_hash: str, password: str) -> bool:
        try:
            return self._hasher.verify(password_hash, password)
        except (VerificationError, InvalidHashError):
            return False
