"""Hypothesis profiles: ``ci`` (the default) keeps the suite fast, ``thorough`` runs every
property test at its full count. Choose with HYPOTHESIS_PROFILE=ci|thorough."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "thorough"):
    raise ValueError(f"HYPOTHESIS_PROFILE must be ci or thorough, not {PROFILE!r}")
# The ci profile's count, for tests that use Hypothesis's default and those that ask for more.
CI_EXAMPLES = 25


def load_profiles() -> None:
    settings.register_profile(
        "ci",
        max_examples=CI_EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile("thorough", deadline=None)
    settings.load_profile(PROFILE)


def examples(thorough: int) -> int:
    """A test's example count: ``thorough`` under that profile, at most CI_EXAMPLES on ci."""
    return thorough if PROFILE == "thorough" else min(thorough, CI_EXAMPLES)
