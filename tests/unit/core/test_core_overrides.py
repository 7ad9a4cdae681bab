"""Operator overrides: the request rules, when an override counts, and the decision's override row."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from functions.core import (
    COOLDOWN_MS,
    PINNED_TO_RELAY,
    SNAPSHOT_TTL_MS,
    VERDICT_MAX_AGE_MS,
    ApiError,
    Decision,
    Path,
    RouteFailure,
    Rule,
    group_of,
)
from functions.core.model import (
    MAX_CLOCK_SKEW_MS,
    MAX_OVERRIDE_TTL_MS,
    MINUTE_MS,
    SECOND_MS,
    OverrideMode,
    Reason,
    RelayCheck,
    RouteKey,
    RouteOverride,
    RouteVerdict,
    Snapshot,
)
from functions.core.overrides import (
    MAX_REASON_CHARS,
    OverrideRefused,
    active_override,
    is_active,
    new_override,
    with_active_overrides,
)
from tests.support.clock import ManualClock
from tests.support.core_fakes import (
    T0,
    RecordingEvents,
    RecordingReporter,
    ScriptedCall,
    cached,
    make_router,
    relay,
    route,
    snapshot_of,
    store_mode,
)

KEY = RouteKey.CU_STOCK
GROUP = group_of(KEY)
PINNED = RouteKey.GS25_STOCK
RELAY_ONLY = OverrideMode.FORCE_RELAY
DIRECT_ONLY = OverrideMode.FORCE_DIRECT
HOUR_S = 3600


def override(
    key: RouteKey = KEY, mode: OverrideMode = RELAY_ONLY, *, created_at: int = T0, ttl_ms: int = MINUTE_MS
) -> RouteOverride:
    return RouteOverride(key, mode, "maintenance", created_at=created_at, expires_at=created_at + ttl_ms)


def with_override(snapshot: Snapshot, *overrides: RouteOverride) -> Snapshot:
    return dataclasses.replace(snapshot, overrides={o.key: o for o in overrides})


# --- the request rules -----------------------------------------------------------------------------


def test_a_new_override_starts_now_and_ends_after_its_ttl_cut_to_the_second() -> None:
    made = new_override(KEY, RELAY_ONLY, "  retailer maintenance 02:00-04:00 KST  ", HOUR_S, now=T0 + 789)
    assert made == RouteOverride(
        KEY,
        RELAY_ONLY,
        "retailer maintenance 02:00-04:00 KST",
        created_at=T0 + 789,
        expires_at=T0 + HOUR_S * SECOND_MS,
    )


def test_force_direct_on_the_pinned_key_is_refused_and_force_relay_is_allowed() -> None:
    with pytest.raises(OverrideRefused) as refused:
        new_override(PINNED, DIRECT_ONLY, "try it", 60, now=T0)
    assert refused.value.field == "mode"
    assert new_override(PINNED, RELAY_ONLY, "fine", 60, now=T0).mode is RELAY_ONLY


@pytest.mark.parametrize(
    "reason",
    [
        "",
        "   ",
        "x" * (MAX_REASON_CHARS + 1),
        " " + "x" * MAX_REASON_CHARS,  # the limit counts the reason as sent
        "\u3000\u00a0",  # blank in any script
        "soft\u00adhyphen",  # a format character
        "line\nbreak",
        "nul\x00",
        "bell\x07",
        "rtl\u202eevil",
        "line\u2028separator",
    ],
)
def test_a_missing_long_or_control_character_reason_is_refused(reason: str) -> None:
    with pytest.raises(OverrideRefused) as refused:
        new_override(KEY, RELAY_ONLY, reason, 60, now=T0)
    assert refused.value.field == "reason"


@pytest.mark.parametrize(
    "reason", ["x" * MAX_REASON_CHARS, "GS25 점검 공지 (02:00~04:00)", "tab-free, emoji ok 🚧"]
)
def test_reasons_up_to_200_characters_in_any_script_are_accepted(reason: str) -> None:
    assert new_override(KEY, RELAY_ONLY, reason, 60, now=T0).reason == reason


@pytest.mark.parametrize("ttl_seconds", [0, -1, MAX_OVERRIDE_TTL_MS // SECOND_MS + 1])
def test_a_ttl_outside_one_second_to_24_hours_is_refused(ttl_seconds: int) -> None:
    with pytest.raises(OverrideRefused) as refused:
        new_override(KEY, RELAY_ONLY, "r", ttl_seconds, now=T0)
    assert refused.value.field == "ttlSeconds"


@pytest.mark.parametrize("ttl_seconds", [1, 24 * HOUR_S])
def test_one_second_and_24_hours_are_accepted(ttl_seconds: int) -> None:
    made = new_override(KEY, RELAY_ONLY, "r", ttl_seconds, now=T0 + 999)
    assert T0 + 999 < made.expires_at <= T0 + 999 + ttl_seconds * SECOND_MS
    assert is_active(made, T0 + 999)


# --- when an override counts -------------------------------------------------------------------------


def test_an_override_counts_until_its_expiry_exclusive() -> None:
    made = override(ttl_ms=MINUTE_MS)
    assert is_active(made, T0)
    assert is_active(made, T0 + MINUTE_MS - 1)
    assert not is_active(made, T0 + MINUTE_MS)


def test_an_override_from_a_skewed_clock_or_a_hand_edit_does_not_count() -> None:
    assert is_active(override(created_at=T0 + MAX_CLOCK_SKEW_MS), T0)
    assert not is_active(override(created_at=T0 + MAX_CLOCK_SKEW_MS + 1), T0)
    assert is_active(override(ttl_ms=MAX_OVERRIDE_TTL_MS), T0)
    assert not is_active(override(ttl_ms=MAX_OVERRIDE_TTL_MS + 1), T0)


def test_operators_are_shown_only_the_overrides_that_count() -> None:
    live, expired = override(RouteKey.CU_PRIME), override(RouteKey.CU_STORE, ttl_ms=1)
    shown = with_active_overrides(with_override(snapshot_of(route(KEY)), live, expired), T0 + 1)
    assert shown.overrides == {RouteKey.CU_PRIME: live}
    assert shown.routes == {KEY: route(KEY)}
    assert active_override(shown, RouteKey.CU_PRIME, T0 + 1) == live
    assert active_override(None, RouteKey.CU_PRIME, T0 + 1) is None


# --- the decision's override row ----------------------------------------------------------------------


def test_force_relay_beats_a_fresh_direct_ok_verdict() -> None:
    decision = store_mode(cached(with_override(snapshot_of(route(KEY), relay(GROUP)), override())))
    assert decision == Decision(Path.RELAY, Rule.OVERRIDE_RELAY)


@pytest.mark.parametrize(
    "verdict",
    [
        route(KEY, direct=False),
        route(KEY, direct=False, failed_at=T0, blocked_until=T0 + COOLDOWN_MS),
        route(KEY, checked_at=T0 - VERDICT_MAX_AGE_MS - 1),
        None,
    ],
    ids=["direct-false", "blocked", "too-old", "no-verdict"],
)
def test_force_direct_beats_every_verdict_rule(verdict: RouteVerdict | None) -> None:
    entries = [verdict] if verdict is not None else []
    snapshot = with_override(snapshot_of(*entries, relay(GROUP)), override(mode=DIRECT_ONLY))
    assert store_mode(cached(snapshot)) == Decision(Path.DIRECT, Rule.OVERRIDE_DIRECT)


def test_force_direct_beats_the_local_block_and_a_relay_known_unhealthy() -> None:
    snapshot = with_override(
        snapshot_of(route(KEY, direct=False), relay(GROUP, healthy=False)), override(mode=DIRECT_ONLY)
    )
    decision = store_mode(cached(snapshot), local_block_until=T0 + COOLDOWN_MS)
    assert decision == Decision(Path.DIRECT, Rule.OVERRIDE_DIRECT)


def test_force_relay_with_the_relay_known_unhealthy_is_503_even_if_direct_works() -> None:
    snapshot = with_override(snapshot_of(route(KEY), relay(GROUP, healthy=False)), override())
    assert store_mode(cached(snapshot)) == Decision(Path.UNAVAILABLE, Rule.OVERRIDE_RELAY_UNHEALTHY)


def test_force_relay_with_an_old_relay_failure_calls_the_relay() -> None:
    old_failure = relay(GROUP, healthy=False, checked_at=T0 - VERDICT_MAX_AGE_MS - 1)
    snapshot = with_override(snapshot_of(route(KEY), old_failure), override())
    assert store_mode(cached(snapshot)) == Decision(Path.RELAY, Rule.OVERRIDE_RELAY)


def test_an_override_in_a_stale_or_missing_snapshot_is_not_obeyed() -> None:
    snapshot = with_override(snapshot_of(route(KEY, direct=False)), override(mode=DIRECT_ONLY))
    stale = cached(snapshot, fetched_at=T0 - SNAPSHOT_TTL_MS - 1)
    assert store_mode(stale) == Decision(Path.RELAY, Rule.STALE_SNAPSHOT)
    assert store_mode(None) == Decision(Path.RELAY, Rule.NO_SNAPSHOT)
    fresh_enough = cached(snapshot, fetched_at=T0 - SNAPSHOT_TTL_MS)
    assert store_mode(fresh_enough) == Decision(Path.DIRECT, Rule.OVERRIDE_DIRECT)


def test_an_override_is_not_obeyed_without_a_verdict_store() -> None:
    snapshot = cached(with_override(snapshot_of(route(KEY)), override(mode=DIRECT_ONLY)))
    assert store_mode(snapshot, store_configured=False) == Decision(Path.RELAY, Rule.LEGACY_RELAY)


@pytest.mark.parametrize("mode", list(OverrideMode))
def test_the_pin_beats_any_override(mode: OverrideMode) -> None:
    # force-direct on the pinned key can only come from a hand-edited item: the API refuses it.
    snapshot = cached(with_override(snapshot_of(route(PINNED, direct=False)), override(PINNED, mode)))
    assert store_mode(snapshot, PINNED) == Decision(Path.RELAY, Rule.PINNED)


def test_an_expired_override_gives_way_to_the_verdicts_at_once() -> None:
    snapshot = cached(with_override(snapshot_of(route(KEY)), override(ttl_ms=10 * SECOND_MS)))
    assert store_mode(snapshot, now=T0 + 10 * SECOND_MS - 1).rule is Rule.OVERRIDE_RELAY
    assert store_mode(snapshot, now=T0 + 10 * SECOND_MS) == Decision(Path.DIRECT, Rule.DIRECT_OK)


def test_without_a_relay_url_direct_stays_the_only_way_whatever_the_override() -> None:
    snapshot = cached(with_override(snapshot_of(route(KEY)), override()))
    assert store_mode(snapshot, relay_configured=False) == Decision(Path.DIRECT, Rule.NO_RELAY)


# --- route_operation under an override -------------------------------------------------------------------


def test_under_force_direct_a_live_failure_falls_back_blocks_reports_and_the_next_lookup_goes_direct() -> (
    None
):
    clock = ManualClock(T0)
    reporter, events = RecordingReporter(), RecordingEvents()
    snapshot = with_override(snapshot_of(route(KEY, direct=False), relay(GROUP)), override(mode=DIRECT_ONLY))
    router = make_router(clock, snapshot, reporter=reporter, events=events)
    direct = ScriptedCall(clock, RouteFailure(Reason.HTTP_403))
    relay_call = ScriptedCall(clock, "relay")

    assert router.route_operation(KEY, direct, relay_call) == "relay"
    assert (direct.calls, relay_call.calls) == (1, 1)
    blocked_until = router.local_block_until(KEY)
    assert blocked_until is not None
    assert blocked_until > clock.now
    assert [key for key, _ in reporter.reports] == [KEY]

    assert router.route_operation(KEY, direct, relay_call) == "relay"  # direct again despite the block
    assert (direct.calls, relay_call.calls) == (2, 2)
    assert len(reporter.reports) == 1  # one report per block
    assert [rule for _, _, rule in events.decisions] == [Rule.OVERRIDE_DIRECT] * 2


# --- properties ------------------------------------------------------------------------------------------------

ages = st.integers(min_value=-2 * MINUTE_MS, max_value=20 * MINUTE_MS)
keys = st.sampled_from(list(RouteKey))


@st.composite
def verdict_snapshots(draw: st.DrawFn, key: RouteKey) -> Snapshot:
    """Any verdict for `key` (or none) and any relay check for its group (or none)."""
    entries: list[RouteVerdict | RelayCheck] = []
    if draw(st.booleans()):
        failed_at = draw(st.none() | st.builds(lambda age: T0 - age, ages))
        entries.append(
            route(
                key,
                direct=draw(st.booleans()),
                checked_at=T0 - draw(ages),
                failed_at=failed_at,
                blocked_until=None if failed_at is None else failed_at + COOLDOWN_MS,
            )
        )
    if draw(st.booleans()):
        entries.append(relay(group_of(key), healthy=draw(st.booleans()), checked_at=T0 - draw(ages)))
    return snapshot_of(*entries)


@st.composite
def situations(draw: st.DrawFn) -> tuple[RouteKey, Snapshot, RouteOverride, int, int | None]:
    """A key, its verdicts, an override for it, how old the snapshot is, and this container's block."""
    key = draw(keys)
    snapshot = draw(verdict_snapshots(key))
    made = override(
        key,
        draw(st.sampled_from(list(OverrideMode))),
        created_at=T0 - draw(st.integers(-2 * MINUTE_MS, 2 * MAX_OVERRIDE_TTL_MS)),
        ttl_ms=draw(st.integers(SECOND_MS, MAX_OVERRIDE_TTL_MS + MINUTE_MS)),
    )
    snapshot_age = draw(st.integers(0, 2 * SNAPSHOT_TTL_MS))
    local_block = draw(st.none() | st.integers(T0 - COOLDOWN_MS, T0 + COOLDOWN_MS))
    return key, snapshot, made, snapshot_age, local_block


@given(situations(), st.booleans(), st.booleans())
def test_property_an_obeyed_override_decides_and_otherwise_changes_nothing(
    situation: tuple[RouteKey, Snapshot, RouteOverride, int, int | None],
    store_configured: bool,
    relay_configured: bool,
) -> None:
    key, snapshot, made, snapshot_age, local_block = situation

    def decision(snapshot: Snapshot) -> Decision:
        return store_mode(
            cached(snapshot, fetched_at=T0 - snapshot_age),
            key,
            local_block_until=local_block,
            store_configured=store_configured,
            relay_configured=relay_configured,
        )

    with_it, without_it = decision(with_override(snapshot, made)), decision(snapshot)
    obeyed = (
        store_configured
        and relay_configured
        and key not in PINNED_TO_RELAY
        and snapshot_age <= SNAPSHOT_TTL_MS
        and is_active(made, T0)
    )
    if not obeyed:
        assert with_it == without_it
    elif made.mode is DIRECT_ONLY:
        assert with_it == Decision(Path.DIRECT, Rule.OVERRIDE_DIRECT)
    else:
        relay_check = snapshot.relays.get(group_of(key))
        relay_known_down = (
            relay_check is not None
            and not relay_check.healthy
            and T0 - relay_check.checked_at <= VERDICT_MAX_AGE_MS
            and relay_check.checked_at <= T0 + MAX_CLOCK_SKEW_MS
        )
        path = Path.UNAVAILABLE if relay_known_down else Path.RELAY
        assert with_it.path is path
        assert with_it.path is not Path.DIRECT


@given(situations(), st.sampled_from([RouteFailure(Reason.HTTP_403), RouteFailure(Reason.TIMEOUT), "direct"]))
def test_property_under_force_relay_nothing_goes_direct(
    situation: tuple[RouteKey, Snapshot, RouteOverride, int, int | None], direct_outcome: object
) -> None:
    key, snapshot, made, snapshot_age, _ = situation
    clock = ManualClock(T0)
    forced = dataclasses.replace(made, mode=RELAY_ONLY, created_at=T0, expires_at=T0 + MINUTE_MS)
    router = make_router(
        clock, with_override(snapshot, forced), fetched_at=T0 - min(snapshot_age, SNAPSHOT_TTL_MS)
    )
    direct = ScriptedCall(clock, direct_outcome)
    answer: object
    try:
        answer = router.route_operation(key, direct, ScriptedCall(clock, "relay"))
    except ApiError as error:  # the relay is known unhealthy
        answer = error.status
    assert answer in ("relay", 503)
    assert direct.calls == 0
