"""Every row of the route-decision table (docs/design.md, "Route decision"), plus properties over arbitrary
inputs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from functions.core import (
    COOLDOWN_MS,
    PINNED_TO_RELAY,
    SNAPSHOT_TTL_MS,
    VERDICT_MAX_AGE_MS,
    CachedSnapshot,
    Decision,
    Path,
    RelayCheck,
    RelayGroup,
    RouteKey,
    RouteVerdict,
    Rule,
    decide,
    group_of,
)
from functions.core.model import MAX_CLOCK_SKEW_MS, MINUTE_MS
from tests.support.core_fakes import T0, cached, relay, route, snapshot_of, store_mode
from tests.support.examples import examples

KEY = RouteKey.CU_STOCK
GROUP = group_of(KEY)
PINNED = RouteKey.GS25_STOCK


# Row: no verdict store configured -> legacy order.


def test_legacy_mode_uses_the_relay_when_it_is_configured() -> None:
    decision = decide(
        KEY, cached=None, local_block_until=None, now=T0, store_configured=False, relay_configured=True
    )
    assert decision == Decision(Path.RELAY, Rule.LEGACY_RELAY)


def test_legacy_mode_goes_direct_without_a_relay() -> None:
    decision = decide(
        KEY, cached=None, local_block_until=None, now=T0, store_configured=False, relay_configured=False
    )
    assert decision == Decision(Path.DIRECT, Rule.LEGACY_DIRECT)


def test_legacy_mode_ignores_verdicts_and_blocks() -> None:
    fresh_ok = cached(snapshot_of(route(KEY)))
    decision = decide(
        KEY, cached=fresh_ok, local_block_until=T0 + 1, now=T0, store_configured=False, relay_configured=True
    )
    assert decision.path is Path.RELAY


# Row: key pinned to relay.


def test_pinned_key_goes_to_the_relay_even_with_a_direct_ok_verdict() -> None:
    decision = store_mode(cached(snapshot_of(route(PINNED))), PINNED)
    assert decision == Decision(Path.RELAY, Rule.PINNED)


def test_pinned_key_without_a_relay_is_unavailable() -> None:
    for store in (True, False):
        decision = decide(
            PINNED,
            cached=None,
            local_block_until=None,
            now=T0,
            store_configured=store,
            relay_configured=False,
        )
        assert decision == Decision(Path.UNAVAILABLE, Rule.PINNED_NO_RELAY)


def test_pinned_key_with_a_known_unhealthy_relay_is_unavailable() -> None:
    snapshot = snapshot_of(relay(group_of(PINNED), healthy=False))
    assert store_mode(cached(snapshot), PINNED) == Decision(Path.UNAVAILABLE, Rule.BOTH_KNOWN_BAD)


# Row: no snapshot, or one fetched more than 30 s ago -> relay.


def test_no_snapshot_goes_to_the_relay() -> None:
    assert store_mode(snapshot=None) == Decision(Path.RELAY, Rule.NO_SNAPSHOT)


def test_snapshot_older_than_30_s_goes_to_the_relay() -> None:
    fetched = T0 - SNAPSHOT_TTL_MS - 1
    snapshot = cached(snapshot_of(route(KEY, checked_at=T0 - MINUTE_MS)), fetched_at=fetched)
    assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.STALE_SNAPSHOT)


def test_snapshot_exactly_30_s_old_is_still_fresh() -> None:
    snapshot = cached(snapshot_of(route(KEY)), fetched_at=T0 - SNAPSHOT_TTL_MS)
    assert store_mode(snapshot=snapshot) == Decision(Path.DIRECT, Rule.DIRECT_OK)


# Row: verdict missing, direct=false, blockedUntil > now, or checkedAt older than 10 min -> relay.


def test_missing_verdict_goes_to_the_relay() -> None:
    snapshot = cached(snapshot_of(route(RouteKey.CU_STORE)))
    assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.NO_VERDICT)


def test_direct_false_goes_to_the_relay() -> None:
    snapshot = cached(snapshot_of(route(KEY, direct=False)))
    assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.DIRECT_FALSE)


def test_blocked_until_in_the_future_goes_to_the_relay() -> None:
    # A stored block wins even if (against invariant 2) the stored direct flag were still true.
    verdict = route(KEY, direct=True, failed_at=T0 - MINUTE_MS, blocked_until=T0 + 1)
    assert store_mode(snapshot=cached(snapshot_of(verdict))) == Decision(Path.RELAY, Rule.BLOCKED)


def test_expired_stored_block_allows_direct() -> None:
    verdict = route(KEY, failed_at=T0 - COOLDOWN_MS - 1, blocked_until=T0 - 1, checked_at=T0 - 1)
    assert store_mode(snapshot=cached(snapshot_of(verdict))).path is Path.DIRECT


def test_verdict_older_than_10_min_goes_to_the_relay() -> None:
    verdict = route(KEY, checked_at=T0 - VERDICT_MAX_AGE_MS - 1)
    assert store_mode(snapshot=cached(snapshot_of(verdict))) == Decision(Path.RELAY, Rule.VERDICT_TOO_OLD)


def test_verdict_exactly_10_min_old_still_counts() -> None:
    verdict = route(KEY, checked_at=T0 - VERDICT_MAX_AGE_MS)
    assert store_mode(snapshot=cached(snapshot_of(verdict))).path is Path.DIRECT


# Row: this container blocked the route after a live failure.


def test_local_block_goes_to_the_relay() -> None:
    snapshot = cached(snapshot_of(route(KEY)))
    decision = store_mode(snapshot=snapshot, local_block_until=T0 + 1)
    assert decision == Decision(Path.RELAY, Rule.LOCAL_BLOCK)


def test_expired_local_block_allows_direct() -> None:
    snapshot = cached(snapshot_of(route(KEY)))
    assert store_mode(snapshot=snapshot, local_block_until=T0).path is Path.DIRECT


# Row: otherwise -> direct.


def test_fresh_direct_ok_verdict_goes_direct() -> None:
    snapshot = cached(snapshot_of(route(KEY), relay(GROUP, healthy=False)))
    assert store_mode(snapshot=snapshot) == Decision(Path.DIRECT, Rule.DIRECT_OK)


# Row: route known bad and relay known unhealthy, both within 10 min -> 503 without calling anything.


def test_known_bad_route_and_unhealthy_relay_is_unavailable() -> None:
    snapshot = cached(snapshot_of(route(KEY, direct=False), relay(GROUP, healthy=False)))
    assert store_mode(snapshot=snapshot) == Decision(Path.UNAVAILABLE, Rule.BOTH_KNOWN_BAD)


def test_stored_block_and_unhealthy_relay_is_unavailable() -> None:
    verdict = route(
        KEY, direct=False, checked_at=T0 - 11 * MINUTE_MS, failed_at=T0 - MINUTE_MS, blocked_until=T0 + 1
    )
    snapshot = cached(snapshot_of(verdict, relay(GROUP, healthy=False)))
    assert store_mode(snapshot=snapshot).path is Path.UNAVAILABLE


def test_local_block_and_unhealthy_relay_is_unavailable() -> None:
    snapshot = cached(snapshot_of(route(KEY), relay(GROUP, healthy=False)))
    assert store_mode(snapshot=snapshot, local_block_until=T0 + 1).path is Path.UNAVAILABLE


def test_old_bad_route_verdict_is_not_known_bad() -> None:
    verdict = route(KEY, direct=False, checked_at=T0 - VERDICT_MAX_AGE_MS - 1)
    snapshot = cached(snapshot_of(verdict, relay(GROUP, healthy=False)))
    assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.DIRECT_FALSE)


def test_old_unhealthy_relay_check_is_not_known_unhealthy() -> None:
    unhealthy = relay(GROUP, healthy=False, checked_at=T0 - VERDICT_MAX_AGE_MS - 1)
    snapshot = cached(snapshot_of(route(KEY, direct=False), unhealthy))
    assert store_mode(snapshot=snapshot).path is Path.RELAY


def test_unhealthy_relay_of_another_group_does_not_matter() -> None:
    other = RelayGroup.DTRYX
    assert other != GROUP
    snapshot = cached(snapshot_of(route(KEY, direct=False), relay(other, healthy=False)))
    assert store_mode(snapshot=snapshot).path is Path.RELAY


def test_unknown_route_with_unhealthy_relay_still_tries_the_relay() -> None:
    snapshot = cached(snapshot_of(relay(GROUP, healthy=False)))
    assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.NO_VERDICT)


def test_known_bad_evidence_within_10_min_counts_from_a_fresh_snapshot() -> None:
    # The checks may be up to 10 min old; the snapshot holding them must be at most 30 s old.
    both_bad = snapshot_of(
        route(KEY, direct=False, checked_at=T0 - 9 * MINUTE_MS), relay(GROUP, healthy=False)
    )
    snapshot = cached(both_bad, fetched_at=T0 - SNAPSHOT_TTL_MS)
    assert store_mode(snapshot=snapshot).path is Path.UNAVAILABLE


def test_a_stale_snapshot_never_answers_503() -> None:
    # While DynamoDB is unreachable the snapshot only ages: old evidence must not keep answering 503 after
    # the relay has recovered. Missing or stale means "relay now".
    both_bad = snapshot_of(route(KEY, direct=False), relay(GROUP, healthy=False))
    stale = cached(both_bad, fetched_at=T0 - SNAPSHOT_TTL_MS - 1)
    assert store_mode(snapshot=stale) == Decision(Path.RELAY, Rule.STALE_SNAPSHOT)
    assert store_mode(snapshot=stale, local_block_until=T0 + 1) == Decision(Path.RELAY, Rule.STALE_SNAPSHOT)
    unhealthy = cached(snapshot_of(relay(group_of(PINNED), healthy=False)), fetched_at=T0 - MINUTE_MS)
    assert store_mode(unhealthy, PINNED) == Decision(Path.RELAY, Rule.PINNED)


# A timestamp more than 60 s ahead of now (a skewed clock, a hand edit) is not evidence.


def test_a_verdict_checked_in_the_future_is_no_verdict() -> None:
    for checked_at in (T0 + MAX_CLOCK_SKEW_MS + 1, T0 + 365 * 24 * 60 * MINUTE_MS):
        snapshot = cached(snapshot_of(route(KEY, checked_at=checked_at)))
        assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.NO_VERDICT)


def test_a_verdict_up_to_60_s_ahead_still_counts() -> None:
    snapshot = cached(snapshot_of(route(KEY, checked_at=T0 + MAX_CLOCK_SKEW_MS)))
    assert store_mode(snapshot=snapshot) == Decision(Path.DIRECT, Rule.DIRECT_OK)


def test_a_failure_stamped_in_the_future_is_no_evidence() -> None:
    failed_at = T0 + MAX_CLOCK_SKEW_MS + 1
    verdict = route(KEY, direct=False, failed_at=failed_at, blocked_until=failed_at + COOLDOWN_MS)
    snapshot = cached(snapshot_of(verdict, relay(GROUP, healthy=False)))
    assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.NO_VERDICT)


def test_a_block_ending_beyond_any_cooldown_is_no_evidence() -> None:
    # blockedUntil is failedAt + 5 min: a block ending later than now + 5 min + 60 s was stamped in the future.
    verdict = route(KEY, direct=False, failed_at=T0, blocked_until=T0 + COOLDOWN_MS + MAX_CLOCK_SKEW_MS + 1)
    snapshot = cached(snapshot_of(verdict, relay(GROUP, healthy=False)))
    assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.NO_VERDICT)


def test_a_relay_check_stamped_in_the_future_is_no_evidence() -> None:
    unhealthy = relay(GROUP, healthy=False, checked_at=T0 + MAX_CLOCK_SKEW_MS + 1)
    snapshot = cached(snapshot_of(route(KEY, direct=False), unhealthy))
    assert store_mode(snapshot=snapshot) == Decision(Path.RELAY, Rule.DIRECT_FALSE)


# Store mode without the group's relay: relay is not an option.


def test_store_mode_without_a_relay_goes_direct_even_when_direct_is_doubtful() -> None:
    snapshot = cached(snapshot_of(route(KEY, direct=False), relay(GROUP, healthy=False)))
    decision = store_mode(snapshot=snapshot, local_block_until=T0 + 1, relay_configured=False)
    assert decision == Decision(Path.DIRECT, Rule.NO_RELAY)


# Properties.

keys = st.sampled_from(list(RouteKey))
# Free-form times, and the rules' edges around T0 often enough for a property to meet them.
edges = [T0 - VERDICT_MAX_AGE_MS, T0 - SNAPSHOT_TTL_MS - 1, T0 - SNAPSHOT_TTL_MS, T0, T0 + MAX_CLOCK_SKEW_MS]
times = st.integers(min_value=T0 - 30 * MINUTE_MS, max_value=T0 + 30 * MINUTE_MS) | st.sampled_from(
    [*edges, T0 + MAX_CLOCK_SKEW_MS + 1]
)


@st.composite
def snapshots(draw: st.DrawFn) -> CachedSnapshot | None:
    if draw(st.booleans()):
        return None
    entries: list[RouteVerdict | RelayCheck] = []
    for key in draw(st.sets(keys)):
        blocked_until = draw(st.none() | times)
        entries.append(
            route(
                key,
                direct=draw(st.booleans()),
                checked_at=draw(times),
                failed_at=None if blocked_until is None else blocked_until - COOLDOWN_MS,
                blocked_until=blocked_until,
            )
        )
    for group in draw(st.sets(st.sampled_from(list(RelayGroup)))):
        entries.append(relay(group, healthy=draw(st.booleans()), checked_at=draw(times)))
    return cached(snapshot_of(*entries), fetched_at=draw(times))


@given(key=keys, snapshot=snapshots(), local_block=st.none() | times, now=times)
def test_never_direct_unless_a_fresh_unblocked_verdict_says_so(
    key: RouteKey, snapshot: CachedSnapshot | None, local_block: int | None, now: int
) -> None:
    decision = store_mode(snapshot, key, local_block_until=local_block, now=now)
    if decision.path is not Path.DIRECT:
        return
    assert key not in PINNED_TO_RELAY
    assert snapshot is not None
    assert now - snapshot.fetched_at <= SNAPSHOT_TTL_MS
    verdict = snapshot.snapshot.routes[key]
    assert verdict.direct
    assert -MAX_CLOCK_SKEW_MS <= now - verdict.checked_at <= VERDICT_MAX_AGE_MS
    assert verdict.failed_at is None or verdict.failed_at <= now + MAX_CLOCK_SKEW_MS
    assert verdict.blocked_until is None or verdict.blocked_until <= now
    assert local_block is None or local_block <= now


@given(key=keys, snapshot=snapshots(), local_block=st.none() | times, now=times)
def test_unavailable_only_on_a_fresh_snapshot_with_a_known_unhealthy_relay(
    key: RouteKey, snapshot: CachedSnapshot | None, local_block: int | None, now: int
) -> None:
    decision = store_mode(snapshot, key, local_block_until=local_block, now=now)
    if decision.path is Path.UNAVAILABLE:
        assert snapshot is not None
        assert now - snapshot.fetched_at <= SNAPSHOT_TTL_MS
        check = snapshot.snapshot.relays[group_of(key)]
        assert not check.healthy
        assert -MAX_CLOCK_SKEW_MS <= now - check.checked_at <= VERDICT_MAX_AGE_MS


@settings(max_examples=examples(500))  # pure and fast; a stale snapshot that says "both bad" is a rare draw
@given(key=keys, snapshot=snapshots(), local_block=st.none() | times, now=times)
def test_a_missing_or_stale_snapshot_always_means_the_relay(
    key: RouteKey, snapshot: CachedSnapshot | None, local_block: int | None, now: int
) -> None:
    if snapshot is not None and now - snapshot.fetched_at <= SNAPSHOT_TTL_MS:
        return
    assert store_mode(snapshot, key, local_block_until=local_block, now=now).path is Path.RELAY


@given(key=keys, snapshot=snapshots(), local_block=st.none() | times, now=times, store=st.booleans())
def test_without_a_relay_only_direct_or_unavailable(
    key: RouteKey, snapshot: CachedSnapshot | None, local_block: int | None, now: int, store: bool
) -> None:
    decision = decide(
        key,
        cached=snapshot,
        local_block_until=local_block,
        now=now,
        store_configured=store,
        relay_configured=False,
    )
    expected = Path.UNAVAILABLE if key in PINNED_TO_RELAY else Path.DIRECT
    assert decision.path is expected
