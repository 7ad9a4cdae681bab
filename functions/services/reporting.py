"""Live direct failures go to the store in the background: a lookup never waits for DynamoDB."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass

from functions.core.model import RouteKey
from functions.core.ports import Clock, VerdictStore


@dataclass(frozen=True, slots=True)
class BackgroundFailureReporter:
    """A FailureReporter that submits `store.record_failure` to an executor and returns at once."""

    store: VerdictStore
    executor: Executor
    clock: Clock
    on_error: Callable[[Exception], None] | None = None

    def report(self, key: RouteKey, at: int) -> None:
        try:
            self.executor.submit(self._record, key, at)
        except RuntimeError as error:  # the executor is shut down; the next probe re-judges the route
            self._handle(error)

    def _record(self, key: RouteKey, at: int) -> None:
        try:
            self.store.record_failure(key, at=at, now=self.clock())
        except Exception as error:  # nobody awaits this thread: hand every failure to on_error
            self._handle(error)

    def _handle(self, error: Exception) -> None:
        if self.on_error is not None:
            self.on_error(error)
