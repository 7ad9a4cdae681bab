"""BackgroundFailureReporter: hands the failure to the store off the request path."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from functions.core import RouteKey, StoreError
from functions.services.reporting import BackgroundFailureReporter
from tests.support.clock import ManualClock
from tests.support.core_fakes import T0, FakeStore
from tests.support.executor import ClosedExecutor, ManualExecutor


def test_report_returns_before_the_store_is_written() -> None:
    clock, store, executor = ManualClock(T0), FakeStore(), ManualExecutor()
    reporter = BackgroundFailureReporter(store, executor, clock)

    reporter.report(RouteKey.SEVEN_GOODS, T0 - 10)
    assert store.failures == []

    clock.advance(25)
    executor.run_pending()
    assert store.failures == [(RouteKey.SEVEN_GOODS, T0 - 10, T0 + 25)]


def test_report_never_waits_for_a_slow_store() -> None:
    gate, recorded = threading.Event(), threading.Event()

    class SlowStore(FakeStore):
        def record_failure(self, key: RouteKey, *, at: int, now: int) -> None:
            assert gate.wait(timeout=10)
            super().record_failure(key, at=at, now=now)
            recorded.set()

    store = SlowStore()
    with ThreadPoolExecutor(max_workers=1) as pool:
        BackgroundFailureReporter(store, pool, ManualClock(T0)).report(RouteKey.CU_PRIME, T0)
        assert store.failures == []  # report() came back while the store call is still held
        gate.set()
        assert recorded.wait(timeout=10)
    assert store.failures == [(RouteKey.CU_PRIME, T0, T0)]


def test_store_errors_go_to_on_error() -> None:
    errors: list[Exception] = []
    executor = ManualExecutor()
    store = FakeStore(error=StoreError("throttled"))
    BackgroundFailureReporter(store, executor, ManualClock(T0), on_error=errors.append).report(
        RouteKey.CU_PRIME, T0
    )

    executor.run_pending()
    assert [type(e) for e in errors] == [StoreError]


def test_store_errors_without_on_error_are_swallowed() -> None:
    executor = ManualExecutor()
    reporter = BackgroundFailureReporter(FakeStore(error=StoreError("down")), executor, ManualClock(T0))
    reporter.report(RouteKey.CU_PRIME, T0)
    future = executor.pending[0][0]
    executor.run_pending()
    assert future.exception() is None


def test_a_closed_executor_is_reported_not_raised() -> None:
    errors: list[Exception] = []
    BackgroundFailureReporter(FakeStore(), ClosedExecutor(), ManualClock(T0), on_error=errors.append).report(
        RouteKey.CU_PRIME, T0
    )
    assert [type(e) for e in errors] == [RuntimeError]
