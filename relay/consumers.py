"""The Olive Young relay's per-consumer limits (memory only).

A consumer is the caller's `x-relay-consumer` (64 lowercase hex digits: the Worker's daily HMAC of its client),
or the shared identity `legacy`. Each may have 2 requests in flight and start 240 new upstream jobs per UTC
minute (a job is reserved when queued and given back if it never runs); cache hits and joined requests use
nothing. At most 1,024 consumers are tracked; idle ones are forgotten once their minute is over.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from functions.core import Clock
from relay.quota import MINUTE_MS

LEGACY = "legacy"
MAX_IN_FLIGHT = 2
JOBS_PER_MINUTE = 240
MAX_CONSUMERS = 1024
_CONSUMER = re.compile(r"[a-f0-9]{64}")


def consumer_of(header: str | None) -> str:
    return header if header is not None and _CONSUMER.fullmatch(header) else LEGACY


@dataclass(slots=True)
class _Usage:
    in_flight: int = 0
    minute: int = 0
    jobs: int = 0


@dataclass(frozen=True, slots=True)
class Reservation:
    consumer: str
    minute: int


class Consumers:
    """Used from the event loop only."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._usage: dict[str, _Usage] = {}

    def admit(self, consumer: str) -> bool:
        """Counts one more request in flight; False (nothing counted) when the consumer already has its
        maximum, or is new and the table is full."""
        usage = self._usage.get(consumer)
        if usage is None:
            self._prune()
            if len(self._usage) >= MAX_CONSUMERS:
                return False
            usage = self._usage[consumer] = _Usage(minute=self._clock() // MINUTE_MS)
        if usage.in_flight >= MAX_IN_FLIGHT:
            return False
        usage.in_flight += 1
        return True

    def leave(self, consumer: str) -> None:
        self._usage[consumer].in_flight -= 1

    def reserve(self, consumer: str) -> Reservation | int:
        """A job reserved in this minute's budget, or the seconds until the next minute (1-60)."""
        now = self._clock()
        usage = self._usage[consumer]
        if usage.minute != now // MINUTE_MS:
            usage.minute, usage.jobs = now // MINUTE_MS, 0
        if usage.jobs >= JOBS_PER_MINUTE:
            return min(max(math.ceil(((usage.minute + 1) * MINUTE_MS - now) / 1000), 1), 60)
        usage.jobs += 1
        return Reservation(consumer, usage.minute)

    def release(self, reservation: Reservation) -> None:
        """Gives back a job that never reached the retailer (cancelled, expired or refused by the ledger)."""
        usage = self._usage.get(reservation.consumer)
        if usage is not None and usage.minute == reservation.minute and usage.jobs > 0:
            usage.jobs -= 1

    def _prune(self) -> None:
        minute = self._clock() // MINUTE_MS
        for consumer in [c for c, u in self._usage.items() if u.in_flight == 0 and u.minute < minute]:
            del self._usage[consumer]
