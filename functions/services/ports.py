"""Every interface the services need from the outside world: the transports, the router, the probe's checkers
and the probe's events. Adapters and handlers implement them; the core's own ports (clock, verdict store,
failure reporter, routing events) are in `functions/core/ports.py`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from functions.catalog.spec import OperationSpec
from functions.core import RelayCheck, RelayGroup, RouteCheck, RouteKey

if TYPE_CHECKING:
    from functions.services.probe_run import ProbeSummary

T = TypeVar("T")


class Fetcher(Protocol):
    """A lookup's transport: the direct client or the relays. Returns the validated response body."""

    def fetch(self, spec: OperationSpec[Any, Any], params: Any, *, timeout_ms: int) -> Any: ...


class OperationRouter(Protocol):
    """Chooses direct or relay for one lookup and runs it (the core's `Router`)."""

    def route_operation(
        self,
        key: RouteKey,
        direct: Callable[[int], T],
        relay: Callable[[int], T],
        *,
        budget_ms: int = ...,
        cancel: threading.Event | None = ...,
    ) -> T: ...


class DirectChecker(Protocol):
    """The probe's direct transport."""

    def fetch(self, spec: OperationSpec[Any, Any], params: Any, *, timeout_ms: int) -> Any: ...


class RelayHealthChecker(Protocol):
    def check_health(self, group: RelayGroup, *, timeout_ms: int, now: int) -> RelayCheck: ...


class ProbeEvents(Protocol):
    """What a probe run reports (logs and metrics). Called from the run's own thread; must not raise."""

    def route_checked(self, check: RouteCheck) -> None: ...

    def relay_checked(self, check: RelayCheck) -> None: ...

    def check_crashed(self, target: str, error_type: str) -> None: ...

    def run_finished(self, summary: ProbeSummary) -> None: ...

    def store_failed(self, operation: str, error_type: str) -> None: ...
