"""Every interface the services need from the outside world: the transports, the router's events, the
failure reporter, the quota store, the probe's relay checker and events. Adapters and handlers implement
them; the core's own (clock, verdict and override stores) are in `functions/core/ports.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from functions.catalog.spec import OperationSpec
from functions.core import Reason, RelayCheck, RelayGroup, RouteCheck, RouteKey
from functions.core.decision import Path


class Fetcher(Protocol):
    """A lookup's (or the probe's) transport: the direct client or the relays. Returns the validated body."""

    def fetch(self, spec: OperationSpec[Any, Any], params: Any, *, timeout_ms: int) -> Any: ...


class RelayHealthChecker(Protocol):
    def check_health(self, group: RelayGroup, *, timeout_ms: int, now: int) -> RelayCheck: ...


@dataclass(frozen=True, slots=True)
class ProbeSummary:
    """What one probe attempt did. `ran=False`: the slot was already claimed and nothing was called."""

    ran: bool
    slot_start: int
    trigger: str
    routes: tuple[RouteCheck, ...] = ()
    relays: tuple[RelayCheck, ...] = ()
    duration_ms: int = 0
    stale_writes_rejected: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary with fixed codes only (no upstream text, no secrets)."""
        return {
            "ran": self.ran,
            "slotStart": self.slot_start,
            "trigger": self.trigger,
            "durationMs": self.duration_ms,
            "staleWritesRejected": self.stale_writes_rejected,
            "routes": {
                check.key.value: {"direct": check.direct, "reason": _code(check.reason)}
                for check in self.routes
            },
            "relays": {
                check.group.value: {"healthy": check.healthy, "reason": _code(check.reason)}
                for check in self.relays
            },
        }


def _code(reason: Reason | None) -> str | None:
    return None if reason is None else reason.value


class ProbeEvents(Protocol):
    """What a probe run reports (logs and metrics). Called from the run's own thread; must not raise."""

    def route_checked(self, check: RouteCheck) -> None: ...

    def relay_checked(self, check: RelayCheck) -> None: ...

    def check_crashed(self, target: str, error_type: str) -> None: ...

    def run_finished(self, summary: ProbeSummary) -> None: ...

    def store_failed(self, operation: str, error_type: str) -> None: ...


class QuotaStore(Protocol):
    """Where the per-client daily lookup counts are shared by every container (implemented beside
    VerdictStore by the same store).
    """

    def add_daily_lookups(self, day: int, client: str, lookups: int) -> int:
        """Atomically add `lookups` to `client`'s count for Korea day `day` (days since 1970-01-01 in Seoul)
        and return the new total. Failures raise `StoreError`."""
        ...


class FailureReporter(Protocol):
    """Hands a live direct failure to the store without the caller waiting for it."""

    def report(self, key: RouteKey, at: int) -> None: ...


class RoutingEvents(Protocol):
    """What the router tells the outside world (logs and metrics); must not raise or block."""

    def decided(self, key: RouteKey, path: Path, rule: str) -> None: ...

    def answered(self, key: RouteKey, path: Path) -> None:
        """Once per lookup when it ends: the decided path, or UNAVAILABLE for any 503 answer."""

    def direct_failed(self, key: RouteKey, reason: Reason) -> None: ...

    def relay_fallback(self, key: RouteKey) -> None: ...


class MemberOutcome(NamedTuple):
    """How one member of a lookup that runs others at once ended."""

    code: str | None
    """Its error code; None when it answered."""
    elapsed_ms: int
    """From the start of the members to its end (to the deadline, for one still running then)."""


class LookupEvents(Protocol):
    """What a lookup tells the outside world about the members it ran at once; must not raise or block."""

    def members_answered(self, lookup: str, outcomes: Mapping[str, MemberOutcome]) -> None: ...
