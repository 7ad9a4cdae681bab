"""`route_operation`: run one lookup over direct or relay within its time budget (docs/design.md, "Lookup
flow")."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from functions.core.decision import (
    CachedSnapshot,
    Decision,
    Path,
    decide,
    fresh_snapshot,
    relay_known_unhealthy,
)
from functions.core.errors import (
    DIRECT_ROUTE_NOT_CONFIGURED,
    ApiError,
    ErrorCode,
    LookupCancelled,
    RouteFailure,
    UpstreamRejected,
)
from functions.core.model import (
    COOLDOWN_MS,
    DIRECT_TIMEOUT_MS,
    LOOKUP_BUDGET_MS,
    Reason,
    RelayGroup,
    RouteKey,
    group_of,
)
from functions.core.ports import Clock
from functions.services.ports import FailureReporter, RoutingEvents
from functions.services.snapshot_cache import SnapshotCache

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Lookup(Generic[T]):
    """One lookup as the router follows its decision: both paths, the snapshot it was decided on, when it
    started and its time budget (ms)."""

    key: RouteKey
    direct: Callable[[int], T]
    relay: Callable[[int], T]
    cached: CachedSnapshot | None
    started: int
    budget_ms: int
    cancel: threading.Event | None


class Router:
    """One per container. `snapshots=None` means no verdict store is configured (legacy order)."""

    def __init__(
        self,
        *,
        clock: Clock,
        snapshots: SnapshotCache | None,
        reporter: FailureReporter | None,
        relay_configured: Callable[[RelayGroup], bool],
        events: RoutingEvents,
    ) -> None:
        self._clock = clock
        self._snapshots = snapshots
        self._reporter = reporter
        self._relay_configured = relay_configured
        self._events = events
        self._blocks_lock = threading.Lock()
        self._local_blocks: dict[RouteKey, int] = {}

    def local_block_until(self, key: RouteKey) -> int | None:
        """When this container's block on direct for `key` ends (epoch ms), if it ever blocked it."""
        with self._blocks_lock:
            return self._local_blocks.get(key)

    def route_operation(
        self,
        key: RouteKey,
        direct: Callable[[int], T],
        relay: Callable[[int], T],
        *,
        budget_ms: int = LOOKUP_BUDGET_MS,
        cancel: threading.Event | None = None,
    ) -> T:
        """Run the lookup; raises only ApiError or LookupCancelled. The callables get their time in ms."""
        started = self._clock()
        _raise_if_cancelled(cancel)
        cached = self._peek_snapshot()
        decision = decide(
            key,
            cached=cached,
            local_block_until=self.local_block_until(key),
            now=started,
            store_configured=self._snapshots is not None,
            relay_configured=self._relay_configured(group_of(key)),
        )
        self._events.decided(key, decision.path, decision.rule)
        answered = decision.path
        try:
            return self._follow(decision, _Lookup(key, direct, relay, cached, started, budget_ms, cancel))
        except ApiError as error:
            # The decision, a direct failure with the relay known unhealthy, or the relay itself: every 503
            # counts as unavailable, so the 503-rate alarm sees every one.
            if error.status == 503:
                answered = Path.UNAVAILABLE
            raise
        finally:
            self._events.answered(key, answered)

    def _follow(self, decision: Decision, lookup: _Lookup[T]) -> T:
        if decision.path is Path.UNAVAILABLE:
            raise ApiError(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE)
        if lookup.budget_ms <= 0:
            raise ApiError(ErrorCode.UPSTREAM_TIMEOUT)
        if decision.path is Path.RELAY:
            return _call_relay(lookup.relay, lookup.budget_ms, lookup.cancel)

        granted_ms = min(DIRECT_TIMEOUT_MS, lookup.budget_ms)
        try:
            return _call(lookup.direct, granted_ms, lookup.cancel)
        except RouteFailure as failure:
            # A failure seen while the caller is leaving may be the cancellation itself: never block on it.
            _raise_if_cancelled(lookup.cancel)
            if failure.reason is Reason.TIMEOUT and granted_ms < DIRECT_TIMEOUT_MS:
                # The lookup's budget ran out before the route's 3 s did: no evidence against the route.
                raise ApiError(ErrorCode.UPSTREAM_TIMEOUT) from None
            return self._fall_back(lookup, failure.reason)

    def _fall_back(self, lookup: _Lookup[T], reason: Reason) -> T:
        """After a live direct failure: block direct here, report it without waiting, try the relay once."""
        key = lookup.key
        failed_at = self._clock()
        # Direct despite a live block (no relay, or an operator's force-direct): one report per block.
        already_blocked = (self.local_block_until(key) or 0) > failed_at
        self._block(key, failed_at + COOLDOWN_MS)
        if self._reporter is not None and not already_blocked:  # one store write per block, not per lookup
            self._reporter.report(key, failed_at)
        self._events.direct_failed(key, reason)

        group = group_of(key)
        if not self._relay_configured(
            group
        ):  # the direct failure is the answer, whatever the relay's verdict
            raise _route_failure_error(reason)
        # The snapshot must still be fresh now, after the direct attempt: a stale one never means 503.
        if relay_known_unhealthy(fresh_snapshot(lookup.cached, failed_at), group, failed_at):
            raise ApiError(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE)
        remaining = lookup.budget_ms - (failed_at - lookup.started)
        if remaining <= 0:
            raise ApiError(ErrorCode.UPSTREAM_TIMEOUT)
        self._events.relay_fallback(key)
        return _call_relay(lookup.relay, remaining, lookup.cancel)

    def _peek_snapshot(self) -> CachedSnapshot | None:
        if self._snapshots is None:
            return None
        self._snapshots.refresh_if_due()
        return self._snapshots.peek()

    def _block(self, key: RouteKey, until: int) -> None:
        with self._blocks_lock:
            self._local_blocks[key] = max(until, self._local_blocks.get(key, until))


def _call(operation: Callable[[int], T], time_ms: int, cancel: threading.Event | None) -> T:
    """Call one path, mapping "the upstream said no" to the API's errors. RouteFailure passes through."""
    _raise_if_cancelled(cancel)
    try:
        result = operation(time_ms)
    except UpstreamRejected as rejected:
        raise _rejected_error(rejected.status) from None
    _raise_if_cancelled(cancel)
    return result


def _call_relay(relay: Callable[[int], T], time_ms: int, cancel: threading.Event | None) -> T:
    # Relay transports answer with ApiError; a RouteFailure from one still must not escape.
    try:
        return _call(relay, time_ms, cancel)
    except RouteFailure as failure:
        raise _route_failure_error(failure.reason) from None


def _route_failure_error(reason: Reason) -> ApiError:
    if reason is Reason.CONFIGURATION:  # nothing was sent: the route cannot be called as configured
        return ApiError(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE, DIRECT_ROUTE_NOT_CONFIGURED)
    return ApiError(
        ErrorCode.UPSTREAM_TIMEOUT if reason is Reason.TIMEOUT else ErrorCode.UPSTREAM_BAD_RESPONSE
    )


def _rejected_error(status: int) -> ApiError:
    if status == 404:
        return ApiError(ErrorCode.UPSTREAM_NOT_FOUND)
    return ApiError(ErrorCode.UPSTREAM_REJECTED, status=status)


def _raise_if_cancelled(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise LookupCancelled
