"""A call another thread makes that the test holds until it lets it go."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class HeldCall(Generic[T]):
    """Counts its calls, says when one has started, and holds each until `release()`; then answers with what
    `answer()` returns (or raises)."""

    def __init__(self, answer: Callable[[], T]) -> None:
        self.calls = 0
        self.started = threading.Event()
        self._released = threading.Event()
        self._answer = answer

    def __call__(self) -> T:
        self.calls += 1
        self.started.set()
        assert self._released.wait(timeout=10), "the test never released the call"
        return self._answer()

    def release(self) -> None:
        self._released.set()
