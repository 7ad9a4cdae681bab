"""Executors whose background work is observable: it runs only when the test says so."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any


class ManualExecutor(Executor):
    """Queues submitted work until `run_pending`, so "in the background" is deterministic."""

    def __init__(self) -> None:
        self.pending: list[tuple[Future[Any], Callable[[], None]]] = []
        """Each queued call and the future its caller holds."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def run() -> None:
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:  # as concurrent.futures does: the future carries any failure
                future.set_exception(error)

        self.pending.append((future, run))
        return future

    def run_pending(self) -> int:
        """Runs the queued work (and whatever it queues) in order; returns how many ran."""
        ran = 0
        while self.pending:
            _, run = self.pending.pop(0)
            run()
            ran += 1
        return ran


class ClosedExecutor(Executor):
    """An executor after shutdown: submit raises RuntimeError like concurrent.futures does."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise RuntimeError("cannot schedule new futures after shutdown")
