"""Every rule of `route_operation` (docs/design.md, "Lookup flow"), with scripted direct/relay calls on a fake
clock."""

from __future__ import annotations

import threading

import pytest

from functions.core import (
    COOLDOWN_MS,
    DIRECT_TIMEOUT_MS,
    LOOKUP_BUDGET_MS,
    SNAPSHOT_TTL_MS,
    ApiError,
    LookupCancelled,
    Path,
    Reason,
    RouteFailure,
    RouteKey,
    Rule,
    Snapshot,
    UpstreamRejected,
    group_of,
)
from functions.core.errors import ErrorCode, error_envelope
from functions.services.reporting import BackgroundFailureReporter
from functions.services.routing import Router
from functions.services.snapshot_cache import SnapshotCache
from tests.support.clock import ManualClock
from tests.support.core_fakes import (
    T0,
    FakeStore,
    RecordingEvents,
    RecordingReporter,
    ScriptedCall,
    loaded_cache,
    make_router,
    relay,
    route,
    snapshot_of,
)
from tests.support.executor import ManualExecutor

KEY = RouteKey.OY_STOCK_STORES
GROUP = group_of(KEY)
DIRECT_OK = snapshot_of(route(KEY))


@pytest.fixture
def reporter() -> RecordingReporter:
    return RecordingReporter()


@pytest.fixture
def events() -> RecordingEvents:
    return RecordingEvents()


def direct_router(
    clock: ManualClock,
    reporter: RecordingReporter,
    events: RecordingEvents,
    snapshot: Snapshot = DIRECT_OK,
    *,
    relay_configured: bool = True,
) -> Router:
    return make_router(clock, snapshot, reporter=reporter, events=events, relay_configured=relay_configured)


@pytest.fixture
def router(clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents) -> Router:
    """A router whose snapshot says direct is fine."""
    return direct_router(clock, reporter, events)


# Direct chosen.


def test_direct_gets_at_most_3_s(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents, router: Router
) -> None:
    direct, via_relay = ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")

    assert router.route_operation(KEY, direct, via_relay) == "direct"

    assert [g.time_ms for g in direct.grants] == [DIRECT_TIMEOUT_MS]
    assert via_relay.calls == 0
    assert events.decisions == [(KEY, Path.DIRECT, Rule.DIRECT_OK)]
    assert router.local_block_until(KEY) is None
    assert reporter.reports == []


def test_direct_gets_the_budget_when_it_is_under_3_s(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents
) -> None:
    direct = ScriptedCall(clock, "direct")
    direct_router(clock, reporter, events).route_operation(
        KEY, direct, ScriptedCall(clock, "relay"), budget_ms=2_000
    )
    assert [g.time_ms for g in direct.grants] == [2_000]


def test_route_failure_blocks_reports_and_falls_back_once_with_the_remaining_budget(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents, router: Router
) -> None:
    direct = ScriptedCall(clock, RouteFailure(Reason.HTTP_403), takes_ms=1_200)
    via_relay = ScriptedCall(clock, "relay")

    assert router.route_operation(KEY, direct, via_relay) == "relay"

    failed_at = T0 + 1_200
    assert router.local_block_until(KEY) == failed_at + COOLDOWN_MS
    assert reporter.reports == [(KEY, failed_at)]
    assert events.direct_failures == [(KEY, Reason.HTTP_403)]
    assert events.fallbacks == [KEY]
    assert [(g.offset_ms, g.time_ms) for g in via_relay.grants] == [(1_200, LOOKUP_BUDGET_MS - 1_200)]


def test_the_next_lookup_after_a_live_failure_skips_direct(
    clock: ManualClock, events: RecordingEvents, router: Router
) -> None:
    router.route_operation(KEY, ScriptedCall(clock, RouteFailure(Reason.TIMEOUT)), ScriptedCall(clock, "r"))

    direct, via_relay = ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")
    assert router.route_operation(KEY, direct, via_relay) == "relay"
    assert direct.calls == 0
    assert [g.time_ms for g in via_relay.grants] == [LOOKUP_BUDGET_MS]
    assert events.decisions[-1] == (KEY, Path.RELAY, Rule.LOCAL_BLOCK)


def test_local_block_lasts_5_min(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents
) -> None:
    # The cached snapshot is kept fresh by a loader that always says direct works.
    executor = ManualExecutor()
    cache = SnapshotCache(lambda: DIRECT_OK, clock=clock, executor=executor)
    router = Router(
        clock=clock, snapshots=cache, reporter=reporter, relay_configured=lambda _g: True, events=events
    )
    cache.refresh_if_due()
    executor.run_pending()
    router.route_operation(
        KEY, ScriptedCall(clock, RouteFailure(Reason.HTTP_5XX), takes_ms=0), lambda _ms: "r"
    )

    clock.advance(COOLDOWN_MS - 1)
    cache.refresh_if_due()
    executor.run_pending()
    assert router.route_operation(KEY, ScriptedCall(clock, "direct"), lambda _ms: "relay") == "relay"
    clock.advance(1)
    assert router.route_operation(KEY, ScriptedCall(clock, "direct"), lambda _ms: "relay") == "direct"


def test_local_blocks_belong_to_one_router(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents
) -> None:
    first = direct_router(clock, reporter, events)
    first.route_operation(KEY, ScriptedCall(clock, RouteFailure(Reason.HTTP_429)), ScriptedCall(clock, "r"))
    second = direct_router(clock, reporter, events)
    assert second.local_block_until(KEY) is None
    assert (
        second.route_operation(KEY, ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")) == "direct"
    )


def test_route_failure_with_a_known_unhealthy_relay_is_unavailable(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents
) -> None:
    snapshot = snapshot_of(route(KEY), relay(GROUP, healthy=False))
    via_relay = ScriptedCall(clock, "relay")
    router = direct_router(clock, reporter, events, snapshot)

    with pytest.raises(ApiError) as raised:
        router.route_operation(KEY, ScriptedCall(clock, RouteFailure(Reason.SHAPE)), via_relay)

    assert (raised.value.code, raised.value.status) == ("UPSTREAM_ROUTE_UNAVAILABLE", 503)
    assert via_relay.calls == 0
    assert router.local_block_until(KEY) is not None
    assert len(reporter.reports) == 1


def test_route_failure_with_no_budget_left_is_a_timeout(
    clock: ManualClock, reporter: RecordingReporter, router: Router
) -> None:
    direct = ScriptedCall(clock, RouteFailure(Reason.TIMEOUT), takes_ms=DIRECT_TIMEOUT_MS)
    via_relay = ScriptedCall(clock, "relay")

    with pytest.raises(ApiError) as raised:
        router.route_operation(KEY, direct, via_relay, budget_ms=DIRECT_TIMEOUT_MS)

    assert (raised.value.code, raised.value.status) == ("UPSTREAM_TIMEOUT", 504)
    assert via_relay.calls == 0
    assert len(reporter.reports) == 1


@pytest.mark.parametrize(
    ("reason", "code", "status"),
    [
        (Reason.HTTP_403, "UPSTREAM_BAD_RESPONSE", 502),
        (Reason.SHAPE, "UPSTREAM_BAD_RESPONSE", 502),
        (Reason.TIMEOUT, "UPSTREAM_TIMEOUT", 504),
        # Nothing could be sent (CGV without its signing key): the route is unavailable, not broken.
        (Reason.CONFIGURATION, "UPSTREAM_ROUTE_UNAVAILABLE", 503),
    ],
)
def test_route_failure_without_a_relay_is_an_upstream_error(
    clock: ManualClock,
    reporter: RecordingReporter,
    events: RecordingEvents,
    reason: Reason,
    code: str,
    status: int,
) -> None:
    router = direct_router(clock, reporter, events, relay_configured=False)
    via_relay = ScriptedCall(clock, "relay")

    with pytest.raises(ApiError) as raised:
        router.route_operation(KEY, ScriptedCall(clock, RouteFailure(reason)), via_relay)

    assert (raised.value.code, raised.value.status) == (code, status)
    assert via_relay.calls == 0
    assert events.fallbacks == []


@pytest.mark.parametrize(
    "snapshot",
    [DIRECT_OK, snapshot_of(route(KEY), relay(GROUP, healthy=False))],
    ids=["relay unknown", "relay known unhealthy"],
)
def test_a_direct_route_without_its_signing_key_and_without_a_relay_says_what_is_missing(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents, snapshot: Snapshot
) -> None:
    # A fact, not evidence: whatever the snapshot says of the relay, the route cannot be called at all.
    router = direct_router(clock, reporter, events, snapshot, relay_configured=False)
    with pytest.raises(ApiError) as raised:
        router.route_operation(
            KEY, ScriptedCall(clock, RouteFailure(Reason.CONFIGURATION)), ScriptedCall(clock, "-")
        )
    assert raised.value.status == 503
    assert "CGV_SIGNING_KEY" in error_envelope(raised.value)["error"]["message"]


def test_a_direct_route_without_its_signing_key_falls_back_to_the_relay(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents, router: Router
) -> None:
    via_relay = ScriptedCall(clock, "relay")
    assert (
        router.route_operation(KEY, ScriptedCall(clock, RouteFailure(Reason.CONFIGURATION)), via_relay)
        == "relay"
    )
    assert events.direct_failures == [(KEY, Reason.CONFIGURATION)]


# Not route failures: 400/404/422 and cancellation never block.


@pytest.mark.parametrize(
    ("status", "code"), [(400, "UPSTREAM_REJECTED"), (404, "UPSTREAM_NOT_FOUND"), (422, "UPSTREAM_REJECTED")]
)
def test_upstream_rejection_from_direct_passes_its_meaning_and_never_blocks(
    clock: ManualClock,
    reporter: RecordingReporter,
    events: RecordingEvents,
    status: int,
    code: str,
    router: Router,
) -> None:
    via_relay = ScriptedCall(clock, "relay")

    with pytest.raises(ApiError) as raised:
        router.route_operation(KEY, ScriptedCall(clock, UpstreamRejected(status)), via_relay)

    assert (raised.value.code, raised.value.status) == (code, status)
    assert via_relay.calls == 0
    assert router.local_block_until(KEY) is None
    assert reporter.reports == []
    assert events.direct_failures == []


@pytest.mark.parametrize("status", [400, 404, 422])
def test_upstream_rejection_from_the_relay_passes_its_meaning(clock: ManualClock, status: int) -> None:
    router = make_router(clock, None)
    with pytest.raises(ApiError) as raised:
        router.route_operation(
            KEY, ScriptedCall(clock, "direct"), ScriptedCall(clock, UpstreamRejected(status))
        )
    assert raised.value.status == status


def test_cancelled_direct_call_never_blocks(
    clock: ManualClock, reporter: RecordingReporter, router: Router
) -> None:
    via_relay = ScriptedCall(clock, "relay")

    with pytest.raises(LookupCancelled):
        router.route_operation(KEY, ScriptedCall(clock, LookupCancelled()), via_relay)

    assert via_relay.calls == 0
    assert router.local_block_until(KEY) is None
    assert reporter.reports == []


def test_cancel_set_before_the_lookup_calls_nothing(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents
) -> None:
    cancel = threading.Event()
    cancel.set()
    direct, via_relay = ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")

    with pytest.raises(LookupCancelled):
        direct_router(clock, reporter, events).route_operation(KEY, direct, via_relay, cancel=cancel)

    assert direct.calls == via_relay.calls == 0


def test_cancel_set_during_a_successful_call_raises_cancelled(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents
) -> None:
    cancel = threading.Event()
    direct = ScriptedCall(clock, "direct", cancel_during=cancel)
    with pytest.raises(LookupCancelled):
        direct_router(clock, reporter, events).route_operation(
            KEY, direct, ScriptedCall(clock, "relay"), cancel=cancel
        )


def test_route_failure_while_cancelled_does_not_block_or_fall_back(
    clock: ManualClock, reporter: RecordingReporter, router: Router
) -> None:
    cancel = threading.Event()
    direct = ScriptedCall(clock, RouteFailure(Reason.NETWORK_ERROR), cancel_during=cancel)
    via_relay = ScriptedCall(clock, "relay")

    with pytest.raises(LookupCancelled):
        router.route_operation(KEY, direct, via_relay, cancel=cancel)

    assert via_relay.calls == 0
    assert router.local_block_until(KEY) is None
    assert reporter.reports == []


# Relay chosen.


def test_relay_chosen_gets_the_full_budget(clock: ManualClock, events: RecordingEvents) -> None:
    direct, via_relay = ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")
    router = make_router(clock, None, events=events)

    assert router.route_operation(KEY, direct, via_relay, budget_ms=7_000) == "relay"

    assert direct.calls == 0
    assert [g.time_ms for g in via_relay.grants] == [7_000]
    assert events.decisions == [(KEY, Path.RELAY, Rule.NO_SNAPSHOT)]


def test_relay_quota_answer_passes_through_unchanged_and_is_not_reported(
    clock: ManualClock, reporter: RecordingReporter
) -> None:
    router = make_router(clock, None, reporter=reporter)
    with pytest.raises(ApiError) as raised:
        router.route_operation(
            KEY,
            ScriptedCall(clock, "d"),
            ScriptedCall(clock, ApiError(ErrorCode.RELAY_QUOTA_EXCEEDED, retry_after=30)),
        )
    assert (raised.value.status, raised.value.retry_after) == (429, 30)
    assert reporter.reports == []
    assert router.local_block_until(KEY) is None


@pytest.mark.parametrize(("reason", "status"), [(Reason.TIMEOUT, 504), (Reason.HTTP_5XX, 502)])
def test_a_route_failure_from_the_relay_becomes_a_service_error(
    clock: ManualClock, reason: Reason, status: int
) -> None:
    router = make_router(clock, None)
    with pytest.raises(ApiError) as raised:
        router.route_operation(KEY, ScriptedCall(clock, "d"), ScriptedCall(clock, RouteFailure(reason)))
    assert raised.value.status == status


def test_unavailable_decision_calls_nothing(clock: ManualClock, events: RecordingEvents) -> None:
    snapshot = snapshot_of(route(KEY, direct=False), relay(GROUP, healthy=False))
    direct, via_relay = ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")
    router = make_router(clock, snapshot, events=events)

    with pytest.raises(ApiError) as raised:
        router.route_operation(KEY, direct, via_relay)

    assert raised.value.status == 503
    assert direct.calls == via_relay.calls == 0
    assert events.decisions == [(KEY, Path.UNAVAILABLE, Rule.BOTH_KNOWN_BAD)]


def test_pinned_key_goes_to_the_relay_with_the_full_budget(clock: ManualClock) -> None:
    pinned = RouteKey.GS25_STOCK
    direct, via_relay = ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")
    router = make_router(clock, snapshot_of(route(pinned)))
    assert router.route_operation(pinned, direct, via_relay) == "relay"
    assert direct.calls == 0
    assert [g.time_ms for g in via_relay.grants] == [LOOKUP_BUDGET_MS]


def test_an_exhausted_budget_is_a_timeout_without_calls(clock: ManualClock) -> None:
    direct, via_relay = ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")
    with pytest.raises(ApiError) as raised:
        make_router(clock, DIRECT_OK).route_operation(KEY, direct, via_relay, budget_ms=0)
    assert raised.value.status == 504
    assert direct.calls == via_relay.calls == 0


# Snapshot use: peek, never wait.


def test_stale_snapshot_goes_to_the_relay_and_refreshes_in_the_background(
    clock: ManualClock, events: RecordingEvents
) -> None:
    executor = ManualExecutor()
    cache = SnapshotCache(lambda: DIRECT_OK, clock=clock, executor=executor)
    router = Router(
        clock=clock, snapshots=cache, reporter=None, relay_configured=lambda _g: True, events=events
    )

    assert router.route_operation(KEY, ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")) == "relay"
    assert events.decisions[-1][2] == Rule.NO_SNAPSHOT
    assert len(executor.pending) == 1  # the load was only queued: the lookup did not wait for it

    executor.run_pending()
    assert (
        router.route_operation(KEY, ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")) == "direct"
    )

    clock.advance(SNAPSHOT_TTL_MS + 1)
    assert router.route_operation(KEY, ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")) == "relay"
    assert events.decisions[-1][2] == Rule.STALE_SNAPSHOT
    assert len(executor.pending) == 1


def test_a_direct_failure_answers_503_when_a_fresh_snapshot_knows_the_relay_is_unhealthy(
    clock: ManualClock, events: RecordingEvents
) -> None:
    snapshot = snapshot_of(route(KEY), relay(GROUP, healthy=False))
    router = make_router(clock, snapshot, fetched_at=T0 - SNAPSHOT_TTL_MS + 1_000, events=events)
    via_relay = ScriptedCall(clock, "relay")
    with pytest.raises(ApiError) as raised:
        router.route_operation(KEY, ScriptedCall(clock, RouteFailure(Reason.HTTP_403)), via_relay)
    assert raised.value.status == 503
    assert via_relay.calls == 0
    assert events.answers == [(KEY, Path.UNAVAILABLE)]


def test_a_snapshot_that_went_stale_during_the_direct_call_never_answers_503(clock: ManualClock) -> None:
    # Fresh when direct was chosen (29 s), stale when direct failed 2 s later: the relay is tried.
    snapshot = snapshot_of(route(KEY), relay(GROUP, healthy=False))
    router = make_router(clock, snapshot, fetched_at=T0 - SNAPSHOT_TTL_MS + 1_000)
    direct = ScriptedCall(clock, RouteFailure(Reason.TIMEOUT), takes_ms=2_000)
    via_relay = ScriptedCall(clock, "relay")
    assert router.route_operation(KEY, direct, via_relay) == "relay"
    assert via_relay.calls == 1


# Every lookup is counted once by how it was answered; every 503 counts as unavailable (the 503-rate alarm).


def test_each_lookup_is_answered_once_on_its_decided_path(
    clock: ManualClock, events: RecordingEvents
) -> None:
    router = make_router(clock, DIRECT_OK, events=events)
    router.route_operation(KEY, ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay"))
    router.route_operation(KEY, ScriptedCall(clock, RouteFailure(Reason.HTTP_5XX)), ScriptedCall(clock, "r"))
    router.route_operation(KEY, ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay"))
    assert events.answers == [(KEY, Path.DIRECT), (KEY, Path.DIRECT), (KEY, Path.RELAY)]


def test_a_relay_503_is_answered_as_unavailable(clock: ManualClock, events: RecordingEvents) -> None:
    router = make_router(clock, None, events=events)
    with pytest.raises(ApiError) as raised:
        router.route_operation(
            KEY,
            ScriptedCall(clock, "direct"),
            ScriptedCall(clock, ApiError(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE)),
        )
    assert raised.value.status == 503
    assert events.decisions == [(KEY, Path.RELAY, Rule.NO_SNAPSHOT)]
    assert events.answers == [(KEY, Path.UNAVAILABLE)]


def test_other_errors_keep_their_path(clock: ManualClock, events: RecordingEvents) -> None:
    router = make_router(clock, None, events=events)
    with pytest.raises(ApiError):
        router.route_operation(
            KEY, ScriptedCall(clock, "d"), ScriptedCall(clock, ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE))
        )
    with pytest.raises(LookupCancelled):
        router.route_operation(KEY, ScriptedCall(clock, "d"), ScriptedCall(clock, LookupCancelled()))
    assert events.answers == [(KEY, Path.RELAY), (KEY, Path.RELAY)]


# Legacy mode (no verdict store).


def test_legacy_mode_prefers_the_configured_relay(clock: ManualClock) -> None:
    direct, via_relay = ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")
    router = make_router(clock, None, store=False)
    assert router.route_operation(KEY, direct, via_relay) == "relay"
    assert direct.calls == 0


def test_legacy_mode_without_a_relay_goes_direct_and_fails_cleanly(clock: ManualClock) -> None:
    router = make_router(clock, None, store=False, relay_configured=False)
    assert (
        router.route_operation(KEY, ScriptedCall(clock, "direct"), ScriptedCall(clock, "relay")) == "direct"
    )
    with pytest.raises(ApiError) as raised:
        router.route_operation(
            KEY, ScriptedCall(clock, RouteFailure(Reason.HTTP_403)), ScriptedCall(clock, "r")
        )
    assert raised.value.status == 502


# The failure report never waits for the store.


def test_failure_report_goes_to_the_store_in_the_background(clock: ManualClock) -> None:
    store, executor = FakeStore(), ManualExecutor()
    router = Router(
        clock=clock,
        snapshots=loaded_cache(DIRECT_OK, clock),
        reporter=BackgroundFailureReporter(store, executor, clock),
        relay_configured=lambda _g: True,
        events=RecordingEvents(),
    )
    direct = ScriptedCall(clock, RouteFailure(Reason.HTTP_403), takes_ms=500)

    assert router.route_operation(KEY, direct, ScriptedCall(clock, "relay")) == "relay"
    assert store.failures == []  # the lookup answered before the store heard anything

    clock.advance(50)
    executor.run_pending()
    assert store.failures == [(KEY, T0 + 500, T0 + 50 + 500 + 100)]


def test_concurrent_failures_block_every_key(clock: ManualClock) -> None:
    keys = [k for k in RouteKey if k is not RouteKey.GS25_STOCK]
    router = make_router(clock, snapshot_of(*(route(k) for k in keys)))
    start = threading.Barrier(len(keys))

    def fail(key: RouteKey) -> None:
        def direct(_ms: int) -> str:
            start.wait(timeout=5)
            raise RouteFailure(Reason.NETWORK_ERROR)

        router.route_operation(key, direct, lambda _ms: "relay")

    threads = [threading.Thread(target=fail, args=(k,)) for k in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)

    assert all(router.local_block_until(k) == T0 + COOLDOWN_MS for k in keys)


def test_a_timeout_under_a_short_budget_is_the_lookups_not_the_routes(
    clock: ManualClock, reporter: RecordingReporter, router: Router
) -> None:
    # E.g. the second call of a composite lookup: its 3 s were cut by the remaining budget, so a timeout
    # says nothing about the route and must not block it for 5 minutes everywhere.
    direct = ScriptedCall(clock, RouteFailure(Reason.TIMEOUT), takes_ms=150)
    via_relay = ScriptedCall(clock, "relay")

    with pytest.raises(ApiError) as raised:
        router.route_operation(KEY, direct, via_relay, budget_ms=150)

    assert (raised.value.code, raised.value.status) == ("UPSTREAM_TIMEOUT", 504)
    assert router.local_block_until(KEY) is None
    assert reporter.reports == []
    assert via_relay.calls == 0


def test_without_a_relay_repeated_failures_report_once_per_block(
    clock: ManualClock, reporter: RecordingReporter, events: RecordingEvents
) -> None:
    router = direct_router(clock, reporter, events, relay_configured=False)

    for _ in range(3):  # no relay: every lookup still goes direct and fails
        with pytest.raises(ApiError):
            router.route_operation(
                KEY, ScriptedCall(clock, RouteFailure(Reason.HTTP_403)), ScriptedCall(clock, "-")
            )
    assert len(reporter.reports) == 1
    assert len(events.direct_failures) == 3

    clock.advance(COOLDOWN_MS)  # the block is over: the next failure is news again
    with pytest.raises(ApiError):
        router.route_operation(
            KEY, ScriptedCall(clock, RouteFailure(Reason.HTTP_403)), ScriptedCall(clock, "-")
        )
    assert len(reporter.reports) == 2
