"""The container's cached snapshot: peeked on the request path, refreshed in the background.

A request never waits for the store. `refresh_if_due()` starts at most one background load at a time
(single flight), once the snapshot is missing or within `REFRESH_AHEAD_MS` of going stale, so a container
serving steady traffic renews it before its lookups would have to go relay-first; a load that has been
running longer than `REFRESH_LOST_AFTER_MS` is presumed lost (a Lambda freeze/thaw can strand a thread
mid-call) so a new one may start. Load errors keep the old snapshot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, wait
from dataclasses import dataclass

from functions.core.decision import CachedSnapshot
from functions.core.model import SECOND_MS, SNAPSHOT_TTL_MS, Snapshot
from functions.core.ports import Clock

REFRESH_AHEAD_MS = 5 * SECOND_MS
"""A load starts this long before the snapshot goes stale (a DynamoDB Query takes milliseconds)."""
REFRESH_DUE_AFTER_MS = SNAPSHOT_TTL_MS - REFRESH_AHEAD_MS
"""A snapshot older than this is reloaded by the next lookup: at most once per this period while lookups come."""
REFRESH_LOST_AFTER_MS = 5 * SECOND_MS
"""A refresh in flight for longer than this (by the clock) no longer holds the single-flight slot."""
RETRY_AFTER_ERROR_MS = 5 * SECOND_MS
"""After a failed load, wait this long before the next one (no retry storm while the store is down)."""


@dataclass(frozen=True, slots=True)
class _Refresh:
    started_at: int
    future: Future[None]


class SnapshotCache:
    def __init__(
        self,
        load: Callable[[], Snapshot],
        *,
        clock: Clock,
        executor: Executor,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self._load = load
        self._clock = clock
        self._executor = executor
        self._lock = threading.Lock()
        self._cached: CachedSnapshot | None = None
        self._refresh: _Refresh | None = None
        self._on_error = on_error
        self._last_error_at: int | None = None

    def peek(self) -> CachedSnapshot | None:
        """The current snapshot and when it was read, or None before the first successful load. Never blocks."""
        return self._cached

    def age_ms(self) -> int | None:
        """How old the cached snapshot is now (the SnapshotAge metric), or None if there is none."""
        cached = self._cached
        return None if cached is None else self._clock() - cached.fetched_at

    def refresh_if_due(self) -> None:
        """Start a background load if the snapshot is missing or about to go stale; returns immediately."""
        self._start_refresh(only_if_due=True)

    def prefetch(self, timeout_s: float) -> bool:
        """INIT only: load once, waiting at most `timeout_s`. Failure is tolerated; True if a snapshot is cached."""
        refresh = self._start_refresh(only_if_due=False)
        if refresh is not None:
            wait([refresh.future], timeout=timeout_s)
        return self._cached is not None

    def invalidate(self) -> None:
        """Forget the cached snapshot, any refresh in flight and any error backoff (a SnapStart restore: the
        snapshot was read when the function was published). Lookups then find none, which routes them as a
        stale one would (relay-first) but reports no age, and the next `refresh_if_due` loads at once."""
        with self._lock:
            self._cached = None
            self._refresh = None
            self._last_error_at = None

    def _start_refresh(self, *, only_if_due: bool) -> _Refresh | None:
        now = self._clock()
        with self._lock:
            cached = self._cached
            if only_if_due and cached is not None and now - cached.fetched_at <= REFRESH_DUE_AFTER_MS:
                return None
            failed_at = self._last_error_at
            if only_if_due and failed_at is not None and now - failed_at < RETRY_AFTER_ERROR_MS:
                return None
            running = self._refresh
            if running is not None and now - running.started_at < REFRESH_LOST_AFTER_MS:
                return running
            future: Future[None] = Future()
            refresh = _Refresh(started_at=now, future=future)
            self._refresh = refresh
        try:
            self._executor.submit(self._run, refresh)
        except RuntimeError as error:  # the executor is shut down (container ending)
            self._finish(refresh, error)
        return refresh

    def _run(self, refresh: _Refresh) -> None:
        # The read time is taken before the load: data read during a frozen, late load must not look fresh.
        read_at = self._clock()
        try:
            snapshot = self._load()
        except Exception as error:
            self._finish(refresh, error)
            return
        with self._lock:
            if self._cached is None or read_at >= self._cached.fetched_at:
                self._cached = CachedSnapshot(snapshot=snapshot, fetched_at=read_at)
        self._finish(refresh, None)

    def _finish(self, refresh: _Refresh, error: Exception | None) -> None:
        finished_at = self._clock()
        with self._lock:
            if error is None:
                self._last_error_at = None
            else:
                self._last_error_at = finished_at
            if self._refresh is refresh:
                self._refresh = None
        if error is not None and self._on_error is not None:
            self._on_error(error)  # logs and metrics: the old snapshot stays in use meanwhile
        refresh.future.set_result(None)
