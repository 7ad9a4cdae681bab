"""Fixtures the unit tests share."""

from __future__ import annotations

import pytest

from tests.support.clock import ManualClock
from tests.support.core_fakes import T0


@pytest.fixture
def clock() -> ManualClock:
    """The fake clock, at the core fakes' T0."""
    return ManualClock(T0)
