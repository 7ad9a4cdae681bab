"""Properties of `route_operation` over arbitrary snapshots, outcomes, durations and budgets."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from functions.core import (
    DIRECT_TIMEOUT_MS,
    SNAPSHOT_TTL_MS,
    VERDICT_MAX_AGE_MS,
    ApiError,
    LookupCancelled,
    Path,
    Reason,
    RelayCheck,
    RouteFailure,
    RouteKey,
    RouteVerdict,
    Snapshot,
    UpstreamRejected,
    group_of,
)
from functions.core.errors import DIRECT_ROUTE_NOT_CONFIGURED, ErrorCode
from functions.core.model import MINUTE_MS
from tests.support.clock import ManualClock
from tests.support.core_fakes import (
    T0,
    RecordingEvents,
    RecordingReporter,
    ScriptedCall,
    make_router,
    relay,
    route,
    snapshot_of,
)

KEY = RouteKey.SEVEN_STOCK
GROUP = group_of(KEY)

never_blocking = st.sampled_from([400, 404, 422]).map(UpstreamRejected) | st.builds(LookupCancelled)
route_failures = st.sampled_from(list(Reason)).map(RouteFailure)
direct_outcomes = st.one_of(st.just("direct"), route_failures, never_blocking)
relay_outcomes = st.one_of(
    st.just("relay"),
    route_failures,
    never_blocking,
    st.integers(1, 300).map(lambda seconds: ApiError(ErrorCode.RELAY_QUOTA_EXCEEDED, retry_after=seconds)),
    st.builds(ApiError, st.just(ErrorCode.UPSTREAM_BAD_RESPONSE)),
    st.builds(ApiError, st.just(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE)),
)
any_bool = st.booleans()
durations = st.integers(min_value=0, max_value=12_000)
ages = st.integers(min_value=-MINUTE_MS, max_value=20 * MINUTE_MS)


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot | None:
    if draw(st.booleans()):
        return None
    entries: list[RouteVerdict | RelayCheck] = []
    if draw(st.booleans()):
        entries.append(route(KEY, direct=draw(st.booleans()), checked_at=T0 - draw(ages)))
    if draw(st.booleans()):
        entries.append(relay(GROUP, healthy=draw(st.booleans()), checked_at=T0 - draw(ages)))
    return snapshot_of(*entries)


@st.composite
def direct_ok_snapshots(draw: st.DrawFn, *, relay_unhealthy: bool = False) -> Snapshot:
    """A snapshot whose verdict says direct works (the relay may be anything, or known unhealthy)."""
    entries: list[RouteVerdict | RelayCheck] = [
        route(KEY, checked_at=T0 - draw(st.integers(0, VERDICT_MAX_AGE_MS)))
    ]
    if relay_unhealthy:
        entries.append(relay(GROUP, healthy=False, checked_at=T0 - draw(st.integers(0, VERDICT_MAX_AGE_MS))))
    elif draw(st.booleans()):
        entries.append(relay(GROUP, healthy=draw(st.booleans()), checked_at=T0 - draw(ages)))
    return snapshot_of(*entries)


@dataclass(frozen=True)
class Scenario:
    snapshot: Snapshot | None
    snapshot_age: int
    direct_outcome: object
    relay_outcome: object
    direct_takes: int
    relay_takes: int
    budget: int
    relay_configured: bool
    cancel_during_direct: bool


@dataclass
class Lookup:
    direct: ScriptedCall
    relay: ScriptedCall
    reporter: RecordingReporter
    events: RecordingEvents
    blocked: bool
    error: Exception | None
    took_ms: int


def run_lookup(s: Scenario) -> Lookup:
    clock = ManualClock(T0)
    reporter = RecordingReporter()
    events = RecordingEvents()
    router = make_router(
        clock,
        s.snapshot,
        fetched_at=T0 - s.snapshot_age,
        reporter=reporter,
        events=events,
        relay_configured=s.relay_configured,
    )
    cancel = threading.Event()
    direct = ScriptedCall(
        clock,
        s.direct_outcome,
        takes_ms=s.direct_takes,
        cancel_during=cancel if s.cancel_during_direct else None,
    )
    via_relay = ScriptedCall(clock, s.relay_outcome, takes_ms=s.relay_takes)
    error: Exception | None = None
    try:
        router.route_operation(KEY, direct, via_relay, budget_ms=s.budget, cancel=cancel)
    except Exception as raised:
        error = raised
    blocked = router.local_block_until(KEY) is not None
    return Lookup(direct, via_relay, reporter, events, blocked, error, took_ms=clock.now - T0)


def scenarios(
    direct_outcome: st.SearchStrategy[object] = direct_outcomes,
    *,
    direct_chosen: bool = False,
    cancel_during_direct: st.SearchStrategy[bool] = any_bool,
) -> st.SearchStrategy[Scenario]:
    """Arbitrary lookups; with `direct_chosen`, only ones whose fresh snapshot sends them direct first."""
    return st.builds(
        Scenario,
        snapshot=direct_ok_snapshots() if direct_chosen else snapshots(),
        # Often just under the 30 s: a direct attempt then ends on a snapshot that has gone stale.
        snapshot_age=st.integers(min_value=0, max_value=SNAPSHOT_TTL_MS if direct_chosen else 60_000)
        | st.integers(min_value=SNAPSHOT_TTL_MS - 3_000, max_value=SNAPSHOT_TTL_MS),
        direct_outcome=direct_outcome,
        relay_outcome=relay_outcomes,
        direct_takes=durations,
        relay_takes=durations,
        budget=st.integers(min_value=-10, max_value=15_000),
        relay_configured=st.booleans(),
        cancel_during_direct=cancel_during_direct,
    )


any_lookup = scenarios() | scenarios(direct_chosen=True)

# Direct chosen on a snapshot that also knows the relay is unhealthy; the direct attempt fails either side of
# the moment that snapshot turns 30 s old.
racing_the_snapshot_ttl = st.builds(
    Scenario,
    snapshot=direct_ok_snapshots(relay_unhealthy=True),
    snapshot_age=st.integers(min_value=SNAPSHOT_TTL_MS - DIRECT_TIMEOUT_MS, max_value=SNAPSHOT_TTL_MS),
    direct_outcome=route_failures,
    relay_outcome=relay_outcomes,
    direct_takes=st.integers(min_value=1, max_value=DIRECT_TIMEOUT_MS),
    relay_takes=durations,
    budget=st.integers(min_value=DIRECT_TIMEOUT_MS, max_value=15_000),
    relay_configured=any_bool,
    cancel_during_direct=st.just(False),
)


@given(any_lookup)
def test_at_most_one_attempt_per_path(scenario: Scenario) -> None:
    lookup = run_lookup(scenario)
    assert lookup.direct.calls <= 1
    assert lookup.relay.calls <= 1


@given(any_lookup)
def test_the_budget_is_never_exceeded(scenario: Scenario) -> None:
    lookup = run_lookup(scenario)
    for grant in lookup.direct.grants + lookup.relay.grants:
        assert grant.time_ms > 0
        assert grant.offset_ms + grant.time_ms <= scenario.budget


@given(any_lookup)
def test_only_service_errors_or_cancellation_escape(scenario: Scenario) -> None:
    lookup = run_lookup(scenario)
    assert lookup.error is None or isinstance(lookup.error, ApiError | LookupCancelled)


@given(
    scenarios(never_blocking, direct_chosen=True)
    | scenarios(direct_outcomes, direct_chosen=True, cancel_during_direct=st.just(True))
)
def test_rejections_and_cancellation_never_block(scenario: Scenario) -> None:
    lookup = run_lookup(scenario)
    assert not lookup.blocked
    assert lookup.reporter.reports == []
    assert lookup.relay.calls == 0 or lookup.direct.calls == 0


@given(scenarios(route_failures, direct_chosen=True, cancel_during_direct=st.just(False)))
def test_a_direct_route_failure_always_blocks_and_reports_once(scenario: Scenario) -> None:
    lookup = run_lookup(scenario)
    failure = scenario.direct_outcome
    assert isinstance(failure, RouteFailure)
    # A timeout within a budget under 3 s is the lookup running out of time, not evidence against the route.
    budget_cut_timeout = failure.reason is Reason.TIMEOUT and scenario.budget < DIRECT_TIMEOUT_MS
    if lookup.direct.calls == 1 and not budget_cut_timeout:
        assert lookup.blocked
        assert len(lookup.reporter.reports) == 1
    else:
        assert not lookup.blocked
        assert lookup.reporter.reports == []


@given(any_lookup)
def test_direct_is_only_tried_on_fresh_evidence_or_without_a_relay(scenario: Scenario) -> None:
    lookup = run_lookup(scenario)
    if lookup.direct.calls == 0 or not scenario.relay_configured:
        return
    assert scenario.snapshot is not None
    assert scenario.snapshot_age <= SNAPSHOT_TTL_MS
    verdict = scenario.snapshot.routes[KEY]
    assert verdict.direct
    assert T0 - verdict.checked_at <= VERDICT_MAX_AGE_MS


def answered_503(lookup: Lookup) -> bool:
    return isinstance(lookup.error, ApiError) and lookup.error.status == 503


def could_not_be_called(scenario: Scenario) -> bool:
    """Direct failed before sending anything (CGV without its signing key) and no relay is configured: the
    route cannot be called at all, whatever the snapshot says."""
    failure = scenario.direct_outcome
    configuration = isinstance(failure, RouteFailure) and failure.reason is Reason.CONFIGURATION
    return configuration and not scenario.relay_configured


@given(racing_the_snapshot_ttl)
def test_503_without_the_relay_only_on_a_snapshot_still_fresh_at_that_moment(scenario: Scenario) -> None:
    lookup = run_lookup(scenario)
    if not answered_503(lookup) or lookup.relay.calls > 0:
        return
    if could_not_be_called(scenario):  # a fact, not evidence: no snapshot can make the route callable
        assert isinstance(lookup.error, ApiError)
        assert lookup.error.message == DIRECT_ROUTE_NOT_CONFIGURED
        return
    assert scenario.snapshot is not None
    assert scenario.snapshot_age + lookup.took_ms <= SNAPSHOT_TTL_MS


@given(any_lookup)
def test_every_lookup_is_answered_once_and_every_503_as_unavailable(scenario: Scenario) -> None:
    lookup = run_lookup(scenario)
    assert len(lookup.events.answers) == 1
    assert (lookup.events.answers[0][1] is Path.UNAVAILABLE) is answered_503(lookup)
