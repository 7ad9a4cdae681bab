"""The container's snapshot cache: never blocks, single flight, tolerant of load errors and lost refreshes."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from functions.core import SNAPSHOT_TTL_MS, CachedSnapshot, RouteKey, Snapshot, StoreError
from functions.core.decision import fresh_snapshot
from functions.services.snapshot_cache import (
    REFRESH_AHEAD_MS,
    REFRESH_LOST_AFTER_MS,
    RETRY_AFTER_ERROR_MS,
    SnapshotCache,
)
from tests.support.clock import ManualClock
from tests.support.core_fakes import T0, route, snapshot_of
from tests.support.executor import ClosedExecutor, ManualExecutor
from tests.support.held_call import HeldCall

OLD = snapshot_of(route(RouteKey.CU_STOCK, direct=False))
NEW = snapshot_of(route(RouteKey.CU_STOCK, direct=True))


class CountingLoader:
    def __init__(self, *results: Snapshot | Exception) -> None:
        self.results = list(results)
        self.calls = 0

    def __call__(self) -> Snapshot:
        result = self.results[min(self.calls, len(self.results) - 1)]
        self.calls += 1
        if isinstance(result, Exception):
            raise result
        return result


@pytest.fixture
def executor() -> ManualExecutor:
    return ManualExecutor()


def held(cache: SnapshotCache) -> CachedSnapshot:
    """What the cache holds, which must be something."""
    cached = cache.peek()
    assert cached is not None
    return cached


def test_nothing_is_cached_before_the_first_load(clock: ManualClock, executor: ManualExecutor) -> None:
    cache = SnapshotCache(CountingLoader(NEW), clock=clock, executor=executor)
    assert cache.peek() is None
    assert cache.age_ms() is None


def test_refresh_runs_in_the_background_and_records_when_it_read(
    clock: ManualClock, executor: ManualExecutor
) -> None:
    cache = SnapshotCache(CountingLoader(NEW), clock=clock, executor=executor)
    cache.refresh_if_due()
    assert cache.peek() is None  # only queued: the caller did not wait

    executor.run_pending()
    cached = held(cache)
    assert (cached.snapshot, cached.fetched_at) == (NEW, T0)
    clock.advance(1_234)
    assert cache.age_ms() == 1_234


def test_fetched_at_is_when_the_load_started(clock: ManualClock, executor: ManualExecutor) -> None:
    def slow_load() -> Snapshot:
        clock.advance(1_500)
        return NEW

    cache = SnapshotCache(slow_load, clock=clock, executor=executor)
    cache.refresh_if_due()
    executor.run_pending()
    cached = held(cache)
    assert cached.fetched_at == T0


def test_a_snapshot_is_reloaded_only_once_it_nears_the_ttl(
    clock: ManualClock, executor: ManualExecutor
) -> None:
    loader = CountingLoader(OLD, NEW)
    cache = SnapshotCache(loader, clock=clock, executor=executor)
    cache.refresh_if_due()
    executor.run_pending()

    clock.advance(SNAPSHOT_TTL_MS - REFRESH_AHEAD_MS)
    cache.refresh_if_due()
    assert executor.run_pending() == 0

    clock.advance(1)
    cache.refresh_if_due()
    assert executor.run_pending() == 1
    cached = held(cache)
    assert cached.snapshot == NEW
    assert loader.calls == 2


@settings(max_examples=50)
@given(gaps=st.lists(st.integers(1, REFRESH_AHEAD_MS), min_size=1, max_size=60))
def test_steady_traffic_never_finds_its_snapshot_stale(gaps: list[int]) -> None:
    """Lookups at most REFRESH_AHEAD_MS apart, each starting the refresh that is due and finding it done by
    the next (a Query takes milliseconds): none ever routes on a stale snapshot."""
    clock, executor = ManualClock(T0), ManualExecutor()
    cache = SnapshotCache(CountingLoader(NEW), clock=clock, executor=executor)
    cache.refresh_if_due()
    executor.run_pending()
    for gap in gaps:
        clock.advance(gap)
        cache.refresh_if_due()
        assert fresh_snapshot(cache.peek(), clock()) is not None
        executor.run_pending()


def test_single_flight_under_concurrent_callers() -> None:
    clock = ManualClock(T0)
    gated_load = HeldCall(lambda: NEW)
    pool = ThreadPoolExecutor(max_workers=4)
    cache = SnapshotCache(gated_load, clock=clock, executor=pool)
    callers = 16
    start = threading.Barrier(callers)

    def request() -> None:
        start.wait(timeout=10)
        cache.refresh_if_due()
        cache.peek()

    threads = [threading.Thread(target=request) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    # Every caller returned while the load was still held at the gate: nobody waited for it.
    assert not any(thread.is_alive() for thread in threads)
    assert gated_load.started.wait(timeout=10)
    assert cache.peek() is None

    gated_load.release()
    pool.shutdown(wait=True)
    assert gated_load.calls == 1
    cached = held(cache)
    assert cached.snapshot == NEW


def test_load_error_keeps_the_old_snapshot_and_is_reported(
    clock: ManualClock, executor: ManualExecutor
) -> None:
    errors: list[Exception] = []
    cache = SnapshotCache(
        CountingLoader(OLD, StoreError("down")), clock=clock, executor=executor, on_error=errors.append
    )
    cache.refresh_if_due()
    executor.run_pending()

    clock.advance(SNAPSHOT_TTL_MS + 1)
    cache.refresh_if_due()
    executor.run_pending()

    cached = held(cache)
    assert (cached.snapshot, cached.fetched_at) == (OLD, T0)
    assert [type(error) for error in errors] == [StoreError]


def test_after_a_load_error_the_next_attempt_waits_a_little(
    clock: ManualClock, executor: ManualExecutor
) -> None:
    loader = CountingLoader(StoreError("down"), NEW)
    cache = SnapshotCache(loader, clock=clock, executor=executor)
    cache.refresh_if_due()
    executor.run_pending()

    clock.advance(RETRY_AFTER_ERROR_MS - 1)
    cache.refresh_if_due()
    assert executor.run_pending() == 0  # no retry storm while the store is down

    clock.advance(1)
    cache.refresh_if_due()
    executor.run_pending()
    assert cache.peek() is not None
    assert loader.calls == 2


def test_a_refresh_in_flight_too_long_is_presumed_lost(clock: ManualClock, executor: ManualExecutor) -> None:
    cache = SnapshotCache(CountingLoader(NEW), clock=clock, executor=executor)
    cache.refresh_if_due()
    clock.advance(REFRESH_LOST_AFTER_MS - 1)
    cache.refresh_if_due()
    assert len(executor.pending) == 1

    clock.advance(1)
    cache.refresh_if_due()
    assert len(executor.pending) == 2


def test_a_lost_refresh_that_finishes_late_does_not_replace_newer_data(
    clock: ManualClock, executor: ManualExecutor
) -> None:
    cache: SnapshotCache
    first_load = True

    def load() -> Snapshot:
        nonlocal first_load
        if first_load:
            first_load = False
            # Frozen mid-load (Lambda freeze/thaw); meanwhile a new refresh starts and completes.
            clock.advance(REFRESH_LOST_AFTER_MS)
            cache.refresh_if_due()
            executor.run_pending()
            return OLD
        return NEW

    cache = SnapshotCache(load, clock=clock, executor=executor)
    cache.refresh_if_due()
    executor.run_pending()

    cached = held(cache)
    assert (cached.snapshot, cached.fetched_at) == (NEW, T0 + REFRESH_LOST_AFTER_MS)


def test_invalidate_forgets_the_snapshot_the_refresh_in_flight_and_the_error_backoff(
    clock: ManualClock, executor: ManualExecutor
) -> None:
    loader = CountingLoader(OLD, StoreError("down"), NEW)
    cache = SnapshotCache(loader, clock=clock, executor=executor)
    cache.refresh_if_due()
    executor.run_pending()
    clock.advance(SNAPSHOT_TTL_MS + 1)
    cache.refresh_if_due()
    executor.run_pending()  # failed: the next attempt would wait RETRY_AFTER_ERROR_MS
    cache.refresh_if_due()
    assert executor.pending == []

    cache.invalidate()

    assert cache.peek() is None  # a lookup now routes relay-first, and no age is reported
    assert cache.age_ms() is None
    cache.refresh_if_due()  # at once, despite the backoff
    assert len(executor.pending) == 1
    cache.invalidate()  # a refresh still in flight no longer holds the single-flight slot
    cache.refresh_if_due()
    assert len(executor.pending) == 2
    executor.run_pending()
    cached = cache.peek()
    assert cached is not None
    assert (cached.snapshot, cached.fetched_at) == (NEW, clock())


def test_a_closed_executor_is_tolerated(clock: ManualClock) -> None:
    errors: list[Exception] = []
    cache = SnapshotCache(CountingLoader(NEW), clock=clock, executor=ClosedExecutor(), on_error=errors.append)
    cache.refresh_if_due()
    assert cache.peek() is None
    assert [type(error) for error in errors] == [RuntimeError]


def test_prefetch_loads_within_the_timeout() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        cache = SnapshotCache(CountingLoader(NEW), clock=ManualClock(T0), executor=pool)
        assert cache.prefetch(timeout_s=5)
        cached = cache.peek()
        assert cached is not None
        assert cached.snapshot == NEW


def test_prefetch_tolerates_a_failing_load() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        errors: list[Exception] = []
        cache = SnapshotCache(
            CountingLoader(StoreError("down")), clock=ManualClock(T0), executor=pool, on_error=errors.append
        )
        assert not cache.prefetch(timeout_s=5)
        assert cache.peek() is None
        assert [type(error) for error in errors] == [StoreError]


def test_prefetch_gives_up_after_its_timeout_and_the_load_still_lands() -> None:
    gated_load = HeldCall(lambda: NEW)
    pool = ThreadPoolExecutor(max_workers=2)
    cache = SnapshotCache(gated_load, clock=ManualClock(T0), executor=pool)
    assert not cache.prefetch(timeout_s=0.05)
    assert cache.peek() is None

    cache.refresh_if_due()  # the prefetch's load is still in flight: no second load
    gated_load.release()
    pool.shutdown(wait=True)
    assert cache.peek() is not None
    assert gated_load.calls == 1
