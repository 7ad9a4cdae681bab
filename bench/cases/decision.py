"""`decision_ns_median`: the pure route decision (docs/design.md#route-decision) for one lookup, warm, in this process.

Also times the whole `Router.route_operation` around an instant direct callable (decision + snapshot peek +
events hook), and a no-op function call as the same-run baseline the ratios use.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from bench.common import all_healthy_checks, median, progress
from functions.core import RelayGroup, RouteKey, RouteVerdict, Snapshot
from functions.core.decision import CachedSnapshot, Path, decide
from functions.core.model import Reason
from functions.services.routing import Router

REPEATS = 15
CALLS_PER_REPEAT = 20_000
NOW = 1_767_225_600_000


class _FixedSnapshots:
    """Stands in for SnapshotCache: always fresh, never refreshes (only peek is timed)."""

    def __init__(self, cached: CachedSnapshot) -> None:
        self._cached = cached

    def peek(self) -> CachedSnapshot:
        return self._cached

    def refresh_if_due(self) -> None:
        return None


class _SilentEvents:
    """The router's events hook doing nothing: production's metrics are timed with the handler's overhead."""

    def decided(self, key: RouteKey, path: Path, rule: str) -> None:
        return None

    def answered(self, key: RouteKey, path: Path) -> None:
        return None

    def direct_failed(self, key: RouteKey, reason: Reason) -> None:
        return None

    def relay_fallback(self, key: RouteKey) -> None:
        return None


def _snapshot() -> CachedSnapshot:
    routes, relays = all_healthy_checks(NOW - 60_000)
    verdicts = {
        check.key: RouteVerdict(check.key, True, check.checked_at, check.reason, None, None)
        for check in routes
    }
    snapshot = Snapshot(routes=verdicts, relays={check.group: check for check in relays})
    return CachedSnapshot(snapshot=snapshot, fetched_at=NOW - 1_000)


def _ns_per_call(call: Any) -> float:
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter_ns()
        for _ in itertools.repeat(None, CALLS_PER_REPEAT):
            call()
        samples.append((time.perf_counter_ns() - started) / CALLS_PER_REPEAT)
    return median(samples)


def run() -> dict[str, Any]:
    progress("decision: timing decide() and route_operation() warm")
    cached = _snapshot()
    key = RouteKey.SEVEN_POPWORDS

    def one_decision() -> None:
        decide(
            key, cached=cached, local_block_until=None, now=NOW, store_configured=True, relay_configured=True
        )

    def noop() -> None:
        return None

    router = Router(
        clock=lambda: NOW,
        snapshots=_FixedSnapshots(cached),  # type: ignore[arg-type]
        reporter=None,
        relay_configured=lambda group: group in RelayGroup,
        events=_SilentEvents(),
    )

    def one_routed_lookup() -> None:
        router.route_operation(key, lambda ms: ms, lambda ms: ms)

    for call in (one_decision, one_routed_lookup, noop):  # warm-up
        for _ in range(2_000):
            call()
    decision_ns = _ns_per_call(one_decision)
    routed_ns = _ns_per_call(one_routed_lookup)
    noop_ns = _ns_per_call(noop)
    progress(f"decision: {decision_ns:.0f} ns per decide(), {routed_ns:.0f} ns per route_operation()")
    return {
        "decision_ns_median": round(decision_ns, 1),
        "decision_detail": {
            "route_operation_ns_median": round(routed_ns, 1),
            "noop_call_ns_median": round(noop_ns, 1),
            "decision_vs_noop_call_ratio": round(decision_ns / noop_ns, 2),
            "repeats": REPEATS,
            "calls_per_repeat": CALLS_PER_REPEAT,
            "note": "route_operation excludes the MetricsRoutingEvents hook (see handler overhead for the full path)",
        },
    }
