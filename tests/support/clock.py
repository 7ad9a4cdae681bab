"""The suite's one fake clock."""

from __future__ import annotations

START = 1_767_225_600_000
"""2026-01-01T00:00:00Z (epoch ms): where a `ManualClock` starts unless told otherwise."""


class ManualClock:
    """A `Clock` (epoch ms) that moves only when a test says so."""

    def __init__(self, now: int = START) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now
