"""Waiting, bounded, for something another thread does."""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(condition: Callable[[], bool], within_s: float = 3.0) -> bool:
    """Whether `condition` holds within `within_s` seconds (polled every 10 ms)."""
    end = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True
