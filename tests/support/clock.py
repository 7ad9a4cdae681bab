"""The suite's one fake clock, and the clock of relays that many tests share."""

from __future__ import annotations

from collections.abc import Callable

START = 1_767_225_600_000
"""2026-01-01T00:00:00Z (epoch ms): where a `ManualClock` starts unless told otherwise."""
WEEK_MS = 7 * 24 * 60 * 60 * 1000


class ManualClock:
    """A `Clock` (epoch ms) that moves only when a test says so."""

    def __init__(self, now: int = START) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now


class RelayClock:
    """The clock of relays shared by many tests: the tests' clock, a week later for every test started before.
    Each test meets the shared relays in fresh quota windows with nothing cached (no test moves its clock a
    week on)."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self._clock = clock
        self._offset = 0

    def __call__(self) -> int:
        return self._clock() + self._offset

    def next_test(self) -> None:
        self._offset += WEEK_MS
