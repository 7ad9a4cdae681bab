"""Timing a block against a budget on a shared, busy machine."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_SCHEDSTAT = Path("/proc/thread-self/schedstat")


def _waited_for_a_cpu_s() -> float:
    """Seconds this thread has so far been ready to run but waiting for a CPU (0.0 where Linux does not say).

    The second field of Linux's schedstat: time spent on the run queue, in nanoseconds.
    """
    try:
        return int(_SCHEDSTAT.read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


@dataclass
class Elapsed:
    wall_s: float = 0.0
    """Wall time of the block."""
    waited_for_a_cpu_s: float = 0.0
    """The part of it this thread was ready to run but other work held every CPU."""

    @property
    def own_s(self) -> float:
        """The block's time as an idle machine would have taken it: a budget is about this.

        A timeout that fires on time still has to wait for a CPU before the code can act on it; on a busy
        machine that wait is the machine's load, not the code's behaviour.
        """
        return self.wall_s - self.waited_for_a_cpu_s


@contextmanager
def stopwatch() -> Iterator[Elapsed]:
    """Times the block on the calling thread; the result is complete when the block ends, even by raising."""
    elapsed = Elapsed()
    started, waited = time.monotonic(), _waited_for_a_cpu_s()
    try:
        yield elapsed
    finally:
        elapsed.wall_s = time.monotonic() - started
        elapsed.waited_for_a_cpu_s = _waited_for_a_cpu_s() - waited
