"""The REST suite runs on the embedded backend.

What these tests check is the HTTP surface (statuses, error shapes, headers, bodies),
which is the same code on every backend. The services behind it run their full contract
suite on both backends (tests/contract), and tests/api/test_aws_smoke.py calls every
route once on AWS.
"""

from __future__ import annotations

import pytest


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
