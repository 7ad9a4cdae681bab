"""The one clock of the sandbox: real time plus an offset that `POST /_sandbox/clock` moves forward."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class SandboxClock:
    """A `Clock` (epoch ms) shared by the handlers, the gateway and the scheduler.

    It follows real time so timeouts and TTLs behave naturally, and jumps forward on `advance` so cooldowns,
    verdict ages and probe slots can be crossed without waiting.
    """

    def __init__(self, *, offset_ms: int = 0, real_time: Callable[[], int] | None = None) -> None:
        """`real_time` (epoch ms) is the machine's clock unless a test fixes it."""
        self._offset_ms = offset_ms
        self._real_time = real_time or (lambda: time.time_ns() // 1_000_000)
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return self._real_time() + self._offset_ms

    @property
    def offset_ms(self) -> int:
        with self._lock:
            return self._offset_ms

    def advance(self, ms: int) -> int:
        """Moves the clock forward by `ms` (never backwards) and returns the new time."""
        if ms < 0:
            raise ValueError("the sandbox clock only moves forward")
        with self._lock:
            self._offset_ms += ms
            return self._real_time() + self._offset_ms
