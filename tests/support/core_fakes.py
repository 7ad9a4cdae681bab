"""Fakes for the core's and services' tests: a recording store, recorded routing, relay and probe events,
scripted upstream calls, snapshots."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from functions.core import (
    CachedSnapshot,
    Decision,
    Path,
    Reason,
    RelayCheck,
    RelayGroup,
    RouteCheck,
    RouteKey,
    RouteVerdict,
    Snapshot,
    decide,
)
from functions.services.ports import ProbeSummary
from functions.services.routing import Router
from functions.services.snapshot_cache import SnapshotCache
from tests.support.clock import ManualClock
from tests.support.executor import ManualExecutor

T0 = 1_700_000_000_000
"""A fixed "now" (epoch ms) the tests start from."""


@dataclass
class FakeStore:
    """A VerdictStore that records failure reports (optionally failing them)."""

    snapshot: Snapshot = field(default_factory=Snapshot)
    failures: list[tuple[RouteKey, int, int]] = field(default_factory=list)
    error: Exception | None = None

    def read_snapshot(self) -> Snapshot:
        return self.snapshot

    def write_checks(self, routes: Sequence[RouteCheck], relays: Sequence[RelayCheck], *, now: int) -> None:
        raise NotImplementedError

    def record_failure(self, key: RouteKey, *, at: int, now: int) -> None:
        if self.error is not None:
            raise self.error
        self.failures.append((key, at, now))

    def claim_probe_slot(self, slot_start: int, *, trigger: str, now: int) -> bool:
        raise NotImplementedError


@dataclass
class RecordingReporter:
    reports: list[tuple[RouteKey, int]] = field(default_factory=list)

    def report(self, key: RouteKey, at: int) -> None:
        self.reports.append((key, at))


@dataclass
class RecordingEvents:
    """The router's events (implements functions.services.ports.RoutingEvents)."""

    decisions: list[tuple[RouteKey, Path, str]] = field(default_factory=list)
    direct_failures: list[tuple[RouteKey, Reason]] = field(default_factory=list)
    fallbacks: list[RouteKey] = field(default_factory=list)
    answers: list[tuple[RouteKey, Path]] = field(default_factory=list)

    def decided(self, key: RouteKey, path: Path, rule: str) -> None:
        self.decisions.append((key, path, rule))

    def answered(self, key: RouteKey, path: Path) -> None:
        self.answers.append((key, path))

    def direct_failed(self, key: RouteKey, reason: Reason) -> None:
        self.direct_failures.append((key, reason))

    def relay_fallback(self, key: RouteKey) -> None:
        self.fallbacks.append(key)


@dataclass
class RecordingRelayEvents:
    """The relay transport's events (implements functions.adapters.relay.RelayEvents)."""

    gs25_sessions_expired: int = 0

    def gs25_session_expired(self) -> None:
        self.gs25_sessions_expired += 1


@dataclass
class RecordingProbeEvents:
    """The probe run's events, as they came."""

    routes: list[RouteCheck] = field(default_factory=list)
    relays: list[RelayCheck] = field(default_factory=list)
    crashes: list[tuple[str, str]] = field(default_factory=list)
    finished: list[ProbeSummary] = field(default_factory=list)
    store_failures: list[tuple[str, str]] = field(default_factory=list)

    def route_checked(self, check: RouteCheck) -> None:
        self.routes.append(check)

    def relay_checked(self, check: RelayCheck) -> None:
        self.relays.append(check)

    def check_crashed(self, target: str, error_type: str) -> None:
        self.crashes.append((target, error_type))

    def run_finished(self, summary: ProbeSummary) -> None:
        self.finished.append(summary)

    def store_failed(self, operation: str, error_type: str) -> None:
        self.store_failures.append((operation, error_type))


@dataclass
class Grant:
    """One call of a path: when it started (ms since the lookup started) and how long it was allowed."""

    offset_ms: int
    time_ms: int


class ScriptedCall:
    """A direct or relay callable: records each grant, spends `takes_ms` of fake time, then answers.

    `outcome` is the value to return or the exception to raise. `cancel_during` sets that event mid-call.
    """

    def __init__(
        self,
        clock: ManualClock,
        outcome: object,
        *,
        takes_ms: int = 100,
        cancel_during: threading.Event | None = None,
    ) -> None:
        self.clock = clock
        self.outcome = outcome
        self.takes_ms = takes_ms
        self.cancel_during = cancel_during
        self.started_at = clock.now
        self.grants: list[Grant] = []

    def __call__(self, time_ms: int) -> object:
        self.grants.append(Grant(offset_ms=self.clock.now - self.started_at, time_ms=time_ms))
        # A well-behaved transport stops at its deadline.
        self.clock.advance(min(self.takes_ms, max(time_ms, 0)))
        if self.cancel_during is not None:
            self.cancel_during.set()
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome

    @property
    def calls(self) -> int:
        return len(self.grants)


def route(
    key: RouteKey,
    *,
    direct: bool = True,
    checked_at: int = T0,
    reason: Reason | None = None,
    failed_at: int | None = None,
    blocked_until: int | None = None,
) -> RouteVerdict:
    if reason is None:
        reason = Reason.OK if direct else Reason.HTTP_403
    return RouteVerdict(key, direct, checked_at, reason, failed_at, blocked_until)


def relay(group: RelayGroup, *, healthy: bool = True, checked_at: int = T0) -> RelayCheck:
    return RelayCheck(group, healthy, checked_at, None if healthy else Reason.UNAVAILABLE)


def snapshot_of(*entries: RouteVerdict | RelayCheck) -> Snapshot:
    return Snapshot(
        routes={e.key: e for e in entries if isinstance(e, RouteVerdict)},
        relays={e.group: e for e in entries if isinstance(e, RelayCheck)},
    )


def cached(snapshot: Snapshot, fetched_at: int = T0) -> CachedSnapshot:
    return CachedSnapshot(snapshot=snapshot, fetched_at=fetched_at)


def loaded_cache(snapshot: Snapshot, clock: ManualClock, *, fetched_at: int | None = None) -> SnapshotCache:
    """A SnapshotCache holding `snapshot` read at `fetched_at`; later refreshes queue and never run."""
    now = clock.now
    clock.now = now if fetched_at is None else fetched_at
    executor = ManualExecutor()
    cache = SnapshotCache(lambda: snapshot, clock=clock, executor=executor)
    cache.refresh_if_due()
    executor.run_pending()
    clock.now = now
    return cache


def store_mode(
    snapshot: CachedSnapshot | None,
    key: RouteKey = RouteKey.CU_STOCK,
    *,
    local_block_until: int | None = None,
    now: int = T0,
    store_configured: bool = True,
    relay_configured: bool = True,
) -> Decision:
    """`decide` for a container with a verdict store and a relay, unless told otherwise."""
    return decide(
        key,
        cached=snapshot,
        local_block_until=local_block_until,
        now=now,
        store_configured=store_configured,
        relay_configured=relay_configured,
    )


def make_router(
    clock: ManualClock,
    snapshot: Snapshot | None,
    *,
    fetched_at: int | None = None,
    store: bool = True,
    relay_configured: bool = True,
    reporter: RecordingReporter | None = None,
    events: RecordingEvents | None = None,
) -> Router:
    """A Router in store mode (with `snapshot` cached, or no snapshot yet when None) or legacy mode."""
    snapshots: SnapshotCache | None = None
    if store:
        if snapshot is None:
            snapshots = SnapshotCache(lambda: Snapshot(), clock=clock, executor=ManualExecutor())
        else:
            snapshots = loaded_cache(snapshot, clock, fetched_at=fetched_at)
    return Router(
        clock=clock,
        snapshots=snapshots,
        reporter=reporter if reporter is not None else (RecordingReporter() if store else None),
        relay_configured=lambda _group: relay_configured,
        events=events if events is not None else RecordingEvents(),
    )
