"""The per-client daily lookup quota, counted in the container and shared through the store in the background
(docs/operations.md, "Daily rate limit (per client)": the overshoot bound, failing open, bounded memory).

A lookup never waits for the store: `DailyQuota.admit` decides from the client's day total as the store last
returned it plus what this container counted since. A background flush (one in flight, `batch_size` clients,
one atomic add each) learns the other containers' counts; counts a flush did not store go into the next one.
To make room, only a client whose counts are all stored is forgotten; when there is none, the lookup is let
through uncounted (`on_untracked`). A new Korea day (UTC+9 all year) starts from zero.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass

from functions.core.model import SECOND_MS
from functions.core.ports import Clock
from functions.core.quota import QuotaDecision, korea_day, korea_day_end
from functions.services.ports import QuotaStore

FLUSH_INTERVAL_MS = 250
"""A container starts a flush at most this often; the overshoot bound grows with it (docs/operations.md, "Daily rate limit (per client)")."""
FLUSH_BATCH_SIZE = 50
"""Clients per flush (one UpdateItem each); the rest wait for the next flush."""
FLUSH_BUDGET_MS = 2 * SECOND_MS
"""A flush starts no further store call after running this long (a slow store); the rest go to the next."""
RETRY_AFTER_ERROR_MS = 5 * SECOND_MS
"""After a failed flush, the next waits this long (no retry storm while the store is down)."""
MAX_TRACKED_CLIENTS = 10_000
"""Clients tracked per container (a few hundred bytes each)."""


@dataclass(frozen=True, slots=True)
class FlushBatch:
    day: int
    lookups: Mapping[str, int]
    """Client -> lookups counted in this container and not yet added to the store."""
    started_at: int


@dataclass(slots=True)
class _Count:
    stored: int = 0
    """The client's day total (every container) as the store last returned it."""
    unflushed: int = 0
    """Counted here since, waiting for the next flush."""
    flushing: int = 0
    """Counted here, in the flush now in flight."""

    @property
    def known(self) -> int:
        return self.stored + self.unflushed + self.flushing


class DailyQuota:
    """`limit` lookups per client per Korea day; see the module docstring. Thread-safe.

    Without a store (legacy installs), each container counts on its own.
    """

    def __init__(
        self,
        limit: int,
        *,
        store: QuotaStore | None,
        executor: Executor,
        clock: Clock,
        flush_interval_ms: int = FLUSH_INTERVAL_MS,
        batch_size: int = FLUSH_BATCH_SIZE,
        max_clients: int = MAX_TRACKED_CLIENTS,
        on_flush_error: Callable[[Exception], None] | None = None,
        on_untracked: Callable[[], None] | None = None,
    ) -> None:
        self.limit = limit
        self._store = store
        self._executor = executor
        self._clock = clock
        self._flush_interval_ms = flush_interval_ms
        self._batch_size = batch_size
        self._max_clients = max_clients
        self._on_flush_error = on_flush_error
        self._on_untracked = on_untracked
        self._lock = threading.Lock()
        self._day: int | None = None
        self._settled: OrderedDict[str, _Count] = OrderedDict()
        """Clients with every count in the store, least recently seen first: the ones that may be forgotten."""
        self._pending: dict[str, _Count] = {}
        """Clients with counts not yet in the store, in the order they got them (flushed in that order)."""
        self._flushing: FlushBatch | None = None
        self._last_flush_at: int | None = None
        self._last_error_at: int | None = None

    def admit(self, client: str, *, now: int) -> QuotaDecision:
        """Counts one lookup of `client` unless it already used the day's limit. Never waits for the store."""
        untracked = False
        with self._lock:
            day = korea_day(now)
            if day != self._day:
                self._start_day(day)
            count = self._pending.get(client, self._settled.get(client))
            if count is not None and count.known >= self.limit:
                if client in self._settled:
                    self._settled.move_to_end(client)
                allowed, remaining = False, 0
            else:
                count = count or self._track(client)
                untracked = count is None
                if count is None:
                    remaining = self.limit - 1
                else:
                    self._count_one(client, count)
                    remaining = self.limit - count.known
                allowed = True
            batch = self._take_batch(now)
        if batch is not None:
            self._submit(batch)
        if untracked and self._on_untracked is not None:
            self._on_untracked()
        resets_at = korea_day_end(day)
        return QuotaDecision(
            allowed=allowed,
            limit=self.limit,
            remaining=max(remaining, 0),
            resets_at=resets_at,
            retry_after_s=max(1, math.ceil((resets_at - now) / SECOND_MS)),
        )

    def forget(self) -> None:
        """Drop every count and flush state (a SnapStart restore): each container restored from one snapshot
        would otherwise flush the same counts again. A forgotten client's next flush relearns its total."""
        with self._lock:
            self._day = None
            self._settled.clear()
            self._pending.clear()
            self._flushing = None
            self._last_flush_at = None
            self._last_error_at = None

    # -- counting (under the lock) -----------------------------------------------------------------------

    def _start_day(self, day: int) -> None:
        # A flush still in flight for the old day settles into nothing (see _settle).
        self._day = day
        self._settled.clear()
        self._pending.clear()

    def _track(self, client: str) -> _Count | None:
        if len(self._settled) + len(self._pending) >= self._max_clients:
            if not self._settled:
                return None
            self._settled.popitem(last=False)
        count = _Count()
        self._settled[client] = count
        return count

    def _count_one(self, client: str, count: _Count) -> None:
        if self._store is None:  # nothing to share: the container's count is the total
            count.stored += 1
            self._settled.move_to_end(client)
            return
        count.unflushed += 1
        if self._settled.pop(client, None) is not None:
            self._pending[client] = count

    def _take_batch(self, now: int) -> FlushBatch | None:
        if self._store is None or self._flushing is not None or not self._pending:
            return None
        if self._last_flush_at is not None and now - self._last_flush_at < self._flush_interval_ms:
            return None
        if self._last_error_at is not None and now - self._last_error_at < RETRY_AFTER_ERROR_MS:
            return None
        assert self._day is not None
        lookups: dict[str, int] = {}
        for client, count in self._pending.items():
            # No flush is in flight, so every pending count is unflushed.
            lookups[client] = count.flushing = count.unflushed
            count.unflushed = 0
            if len(lookups) == self._batch_size:
                break
        self._flushing = FlushBatch(day=self._day, lookups=lookups, started_at=now)
        self._last_flush_at = now
        return self._flushing

    # -- flushing (in the background) ----------------------------------------------------------------------

    def _submit(self, batch: FlushBatch) -> None:
        try:
            self._executor.submit(self._flush, batch)
        except RuntimeError as error:  # the executor is shut down (container ending)
            self._settle(batch, {}, error)

    def _flush(self, batch: FlushBatch) -> None:
        assert self._store is not None
        totals: dict[str, int] = {}
        error: Exception | None = None
        try:
            for client, lookups in batch.lookups.items():
                if self._clock() - batch.started_at >= FLUSH_BUDGET_MS:
                    break
                totals[client] = self._store.add_daily_lookups(batch.day, client, lookups)
        except Exception as failure:  # nobody awaits this thread: every failure goes to on_flush_error
            error = failure
        self._settle(batch, totals, error)

    def _settle(self, batch: FlushBatch, totals: Mapping[str, int], error: Exception | None) -> None:
        """Stored totals replace what the container knew; counts the flush did not store go to the next one.

        A batch of a day that has ended, or taken before `forget`, settles into nothing."""
        with self._lock:
            current = self._flushing is batch
            if current:
                self._flushing = None
            if error is not None:
                self._last_error_at = self._clock()
            if current and batch.day == self._day:
                for client, lookups in batch.lookups.items():
                    count = self._pending.get(client)  # never forgotten within the day
                    if count is None:
                        continue
                    count.flushing = 0
                    total = totals.get(client)
                    if total is None:
                        count.unflushed += lookups
                    else:
                        count.stored = total
                    if count.unflushed == 0:
                        del self._pending[client]
                        self._settled[client] = count
        if error is not None and self._on_flush_error is not None:
            self._on_flush_error(error)
