"""How many examples a property test that sets its own count runs under the loaded Hypothesis profile."""

from __future__ import annotations

from hypothesis import settings

FULL_PROFILE_EXAMPLES = 100
"""Hypothesis's default count, which the full profiles (route-health, route-health-ci) keep."""


def examples(full: int) -> int:
    """`full` under a full profile; the same share of it as the loaded profile's count under a smaller one."""
    return max(1, full * settings().max_examples // FULL_PROFILE_EXAMPLES)
