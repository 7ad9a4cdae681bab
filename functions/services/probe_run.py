"""One probe run (docs/design.md, "Probe"): claim the slot, check every direct API and every relay, store the
verdicts.

Pure orchestration over ports: the transports, the store and the telemetry come in as arguments, so the
same run serves the scheduled probe and the operator's POST, and tests drive it with the simulator.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from functions.catalog.spec import OperationSpec
from functions.core import Clock, Reason, RelayCheck, RelayGroup, RouteCheck, RouteKey, VerdictStore
from functions.core.errors import RouteFailure, StoreError, UpstreamRejected
from functions.core.model import DIRECT_PROBED, DIRECT_TIMEOUT_MS, PINNED_TO_RELAY, PROBE_SLOT_MS
from functions.services.ports import Fetcher, ProbeEvents, ProbeSummary, RelayHealthChecker

MAX_IN_FLIGHT = 4
"""At most this many probe requests at once."""


def slot_start_of(at_ms: int) -> int:
    """The start of the 5-minute probe slot containing `at_ms` (epoch ms)."""
    return at_ms - at_ms % PROBE_SLOT_MS


def run_probe(
    *,
    specs: Mapping[RouteKey, OperationSpec[Any, Any]],
    direct: Fetcher,
    relays: RelayHealthChecker,
    store: VerdictStore,
    clock: Clock,
    slot_start: int,
    trigger: str,
    events: ProbeEvents,
    rejected_writes: Callable[[], int] = lambda: 0,
    timeout_ms: int = DIRECT_TIMEOUT_MS,
) -> ProbeSummary:
    """Run the full check of `specs` (every operation, the catalog) once for `slot_start`, unless this slot
    already ran (then call nothing): each spec checked direct with its probe params, or written pinned.

    `rejected_writes` reads the store's running count of rejected conditional writes (the
    summary's `stale_writes_rejected` is the increase over this run). Store errors are reported and re-raised.
    """
    started = time.monotonic()
    claimed = _store_call(
        events, "claim_probe_slot", store.claim_probe_slot, slot_start, trigger=trigger, now=clock()
    )
    if not claimed:
        return ProbeSummary(ran=False, slot_start=slot_start, trigger=trigger)

    def check_route(spec: OperationSpec[Any, Any]) -> RouteCheck:
        return _check_direct(spec, direct, clock, timeout_ms, events)

    def check_relay(group: RelayGroup) -> RelayCheck:
        checked_at = clock()
        try:
            return relays.check_health(group, timeout_ms=timeout_ms, now=checked_at)
        except Exception as error:  # check_health never raises by contract; a bug must not stop the run
            events.check_crashed(f"relay:{group.value}", type(error).__name__)
            return RelayCheck(group, healthy=False, checked_at=checked_at, reason=Reason.NETWORK_ERROR)

    # Each check's request runs on its worker and ends there, its connection closed by its deadline at the
    # latest: `MAX_IN_FLIGHT` workers are at most that many upstream requests open, not merely awaited.
    with ThreadPoolExecutor(max_workers=MAX_IN_FLIGHT, thread_name_prefix="probe") as pool:
        route_futures = [
            pool.submit(check_route, spec) for spec in specs.values() if spec.key in DIRECT_PROBED
        ]
        relay_futures = [pool.submit(check_relay, group) for group in RelayGroup]
        pinned = [
            RouteCheck(spec.key, direct=False, checked_at=clock(), reason=Reason.PINNED_RELAY)
            for spec in specs.values()
            if spec.key in PINNED_TO_RELAY
        ]
        routes = tuple(future.result() for future in route_futures) + tuple(pinned)
        relay_checks = tuple(future.result() for future in relay_futures)

    for check in routes:
        events.route_checked(check)
    for relay_check in relay_checks:
        events.relay_checked(relay_check)
    rejected_before = rejected_writes()
    _store_call(events, "write_checks", store.write_checks, routes, relay_checks, now=clock())
    summary = ProbeSummary(
        ran=True,
        slot_start=slot_start,
        trigger=trigger,
        routes=routes,
        relays=relay_checks,
        duration_ms=round((time.monotonic() - started) * 1000),
        stale_writes_rejected=max(0, rejected_writes() - rejected_before),
    )
    events.run_finished(summary)
    return summary


def _check_direct(
    spec: OperationSpec[Any, Any],
    direct: Fetcher,
    clock: Clock,
    timeout_ms: int,
    events: ProbeEvents,
) -> RouteCheck:
    key = spec.key
    checked_at = clock()  # before the request starts: a late answer never looks newer than it is
    try:
        params = spec.probe_params(checked_at)
    except (ValueError, TypeError):  # pydantic's ValidationError is a ValueError
        return RouteCheck(key, direct=False, checked_at=checked_at, reason=Reason.INVALID_INPUT)
    try:
        direct.fetch(spec, params, timeout_ms=timeout_ms)
    except RouteFailure as failure:
        return RouteCheck(key, direct=False, checked_at=checked_at, reason=failure.reason)
    except UpstreamRejected:
        # The fixed probe parameters were refused: direct is not usable as we call it.
        return RouteCheck(key, direct=False, checked_at=checked_at, reason=Reason.HTTP_ERROR)
    except Exception as error:  # an adapter bug must fail this check, not the run or another check
        events.check_crashed(f"direct:{key.value}", type(error).__name__)
        return RouteCheck(key, direct=False, checked_at=checked_at, reason=Reason.NETWORK_ERROR)
    return RouteCheck(key, direct=True, checked_at=checked_at, reason=Reason.OK)


def _store_call(
    events: ProbeEvents, operation: str, call: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    try:
        return call(*args, **kwargs)
    except StoreError as error:
        events.store_failed(operation, type(error.__cause__ or error).__name__)
        raise
