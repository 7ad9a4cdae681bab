"""DynamoVerdictStore against moto: the key schema, one named test per ordering rule (docs/design.md,
"Verdict store"), errors."""

from __future__ import annotations

import socket
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from mypy_boto3_dynamodb import DynamoDBClient

from functions.adapters.dynamo_store import (
    PROBE_SLOT_RETENTION_MS,
    STORE_CALL_BUDGET_SECONDS,
    STORE_MAX_ATTEMPTS,
    STORE_RETRY_DELAY_SECONDS,
    TTL_ATTRIBUTE,
    DynamoVerdictStore,
    dynamodb_client,
    relay_sort_key,
    route_sort_key,
    store_client_config,
    table_definition,
    time_to_live_definition,
)
from functions.core import Reason, RelayCheck, RelayGroup, RouteCheck, RouteKey, RouteVerdict, Snapshot
from functions.core.errors import StoreError
from functions.core.model import COOLDOWN_MS, MAX_CLOCK_SKEW_MS, MINUTE_MS, PROBE_SLOT_MS, SECOND_MS
from tests.support.aws import REGION, TABLE, handler_on
from tests.support.hostile_upstream import HostileServer, hang
from tests.support.timing import stopwatch

T0 = 1_750_000_000_000
KEY = RouteKey.OY_PRODUCT_SEARCH
GROUP = RelayGroup.CONVENIENCE


def passed(at: int, key: RouteKey = KEY) -> RouteCheck:
    return RouteCheck(key, direct=True, checked_at=at, reason=Reason.OK)


def failed(at: int, key: RouteKey = KEY, reason: Reason = Reason.TIMEOUT) -> RouteCheck:
    return RouteCheck(key, direct=False, checked_at=at, reason=reason)


def verdict(store: DynamoVerdictStore, key: RouteKey = KEY) -> RouteVerdict:
    return store.read_snapshot().routes[key]


def write(store: DynamoVerdictStore, check: RouteCheck, *, now: int) -> None:
    store.write_checks([check], [], now=now)


def put_raw(dynamodb: DynamoDBClient, sort_key: str, attributes: dict[str, Any]) -> None:
    """Store an item exactly as given, bypassing the store's rules (a hand edit or an older writer)."""
    dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": "verdict"}, "sk": {"S": sort_key}, **attributes})


# -- key schema and client ------------------------------------------------------------------------------------


def test_table_definition_is_string_pk_sk_on_demand() -> None:
    definition = table_definition("t")

    assert definition["TableName"] == "t"
    assert definition["BillingMode"] == "PAY_PER_REQUEST"
    assert list(definition["KeySchema"]) == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert {a["AttributeName"]: a["AttributeType"] for a in definition["AttributeDefinitions"]} == {
        "pk": "S",
        "sk": "S",
    }


def test_time_to_live_uses_the_expiry_attribute(dynamodb: DynamoDBClient) -> None:
    dynamodb.update_time_to_live(**time_to_live_definition(TABLE))

    description = dynamodb.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert description.get("AttributeName") == TTL_ATTRIBUTE == "expiresAt"
    assert description.get("TimeToLiveStatus") == "ENABLED"


def test_client_config_fits_every_attempt_and_the_retry_delay_in_2_s() -> None:
    config: Any = store_client_config()  # botocore's stubs leave out its attributes

    assert config.retries == {"mode": "legacy", "total_max_attempts": STORE_MAX_ATTEMPTS}
    attempt = config.connect_timeout + config.read_timeout
    assert STORE_MAX_ATTEMPTS * attempt + STORE_RETRY_DELAY_SECONDS < STORE_CALL_BUDGET_SECONDS == 2.0


# -- reading -------------------------------------------------------------------------------------------------


def test_empty_table_reads_as_empty_snapshot(store: DynamoVerdictStore) -> None:
    snapshot = store.read_snapshot()

    assert dict(snapshot.routes) == {}
    assert dict(snapshot.relays) == {}


def test_checks_round_trip_through_the_snapshot(store: DynamoVerdictStore) -> None:
    store.write_checks(
        [
            passed(T0),
            failed(T0, RouteKey.CU_STOCK, Reason.HTTP_403),
            RouteCheck(RouteKey.DTRYX_MOVIES, True, T0),
        ],
        [
            RelayCheck(RelayGroup.OLIVEYOUNG, healthy=True, checked_at=T0),
            RelayCheck(RelayGroup.DTRYX, healthy=False, checked_at=T0, reason=Reason.CONFIGURATION),
        ],
        now=T0,
    )

    snapshot = store.read_snapshot()
    assert snapshot.routes == {
        KEY: RouteVerdict(KEY, direct=True, checked_at=T0, reason=Reason.OK),
        RouteKey.CU_STOCK: RouteVerdict(
            RouteKey.CU_STOCK, direct=False, checked_at=T0, reason=Reason.HTTP_403
        ),
        RouteKey.DTRYX_MOVIES: RouteVerdict(RouteKey.DTRYX_MOVIES, direct=True, checked_at=T0, reason=None),
    }
    assert snapshot.relays == {
        RelayGroup.OLIVEYOUNG: RelayCheck(RelayGroup.OLIVEYOUNG, healthy=True, checked_at=T0),
        RelayGroup.DTRYX: RelayCheck(
            RelayGroup.DTRYX, healthy=False, checked_at=T0, reason=Reason.CONFIGURATION
        ),
    }


def test_read_snapshot_is_exactly_one_query(store: DynamoVerdictStore, dynamodb: DynamoDBClient) -> None:
    store.write_checks(
        [passed(T0, key) for key in RouteKey],
        [RelayCheck(group, True, T0) for group in RelayGroup],
        now=T0,
    )
    store.claim_probe_slot(T0, trigger="schedule", now=T0)
    operations: list[str] = []

    with handler_on(dynamodb, "before-call.dynamodb", lambda model, **_: operations.append(model.name)):
        snapshot = store.read_snapshot()

    assert operations == ["Query"]
    assert len(snapshot.routes) == len(RouteKey)
    assert len(snapshot.relays) == len(RelayGroup)


def test_unknown_or_malformed_items_are_skipped(store: DynamoVerdictStore, dynamodb: DynamoDBClient) -> None:
    write(store, passed(T0), now=T0)
    malformed: list[tuple[str, dict[str, Any]]] = [
        ("route#retired-key", {"direct": {"BOOL": True}, "checkedAt": {"N": str(T0)}}),
        (route_sort_key(RouteKey.CU_STOCK), {"direct": {"BOOL": True}}),
        ("relay#unknown-group", {"healthy": {"BOOL": True}, "checkedAt": {"N": str(T0)}}),
    ]
    for sort_key, attributes in malformed:
        put_raw(dynamodb, sort_key, attributes)

    snapshot = store.read_snapshot()

    assert set(snapshot.routes) == {KEY}
    assert dict(snapshot.relays) == {}


# -- rule 1: stale checks ------------------------------------------------------------------------------------


def test_rule1_check_older_than_stored_check_is_ignored(store: DynamoVerdictStore) -> None:
    write(store, failed(T0 + 2 * MINUTE_MS), now=T0 + 2 * MINUTE_MS)

    write(store, passed(T0), now=T0 + 3 * MINUTE_MS)

    assert verdict(store) == RouteVerdict(
        KEY, direct=False, checked_at=T0 + 2 * MINUTE_MS, reason=Reason.TIMEOUT
    )
    assert store.rejected_writes == 1


def test_rule1_check_as_new_as_stored_check_replaces_it(store: DynamoVerdictStore) -> None:
    write(store, failed(T0), now=T0)

    write(store, passed(T0), now=T0)

    assert verdict(store).direct is True
    assert store.rejected_writes == 0


def test_rule1_probe_success_started_before_a_failure_but_landing_after_it_is_ignored(
    store: DynamoVerdictStore,
) -> None:
    write(store, passed(T0), now=T0)
    probe_started = T0 + 5 * MINUTE_MS
    failure_at = probe_started + SECOND_MS  # a lookup fails while the probe request is in flight
    store.record_failure(KEY, at=failure_at, now=failure_at)

    write(store, passed(probe_started), now=failure_at + 2 * SECOND_MS)
    write(store, passed(failure_at), now=failure_at + 2 * SECOND_MS)  # same instant: not newer either

    assert verdict(store) == RouteVerdict(
        KEY,
        direct=False,
        checked_at=failure_at,
        reason=Reason.UNAVAILABLE,
        failed_at=failure_at,
        blocked_until=failure_at + COOLDOWN_MS,
    )
    assert store.rejected_writes == 2


# -- rule 2: live block ------------------------------------------------------------------------------------------


def test_rule2_passing_check_during_block_is_stored_not_direct_and_keeps_the_block(
    store: DynamoVerdictStore,
) -> None:
    store.record_failure(KEY, at=T0, now=T0)

    write(store, passed(T0 + MINUTE_MS), now=T0 + MINUTE_MS + 2 * SECOND_MS)

    assert verdict(store) == RouteVerdict(
        KEY,
        direct=False,
        checked_at=T0 + MINUTE_MS,
        reason=Reason.OK,
        failed_at=T0,
        blocked_until=T0 + COOLDOWN_MS,
    )
    assert store.rejected_writes == 0


def test_rule2_block_holds_until_its_last_millisecond(store: DynamoVerdictStore) -> None:
    store.record_failure(KEY, at=T0, now=T0)

    write(store, passed(T0 + COOLDOWN_MS - 10), now=T0 + COOLDOWN_MS - 1)

    assert verdict(store).direct is False


# -- rule 3: failure reports ------------------------------------------------------------------------------------


def test_rule3_failure_report_blocks_direct_for_the_cooldown(store: DynamoVerdictStore) -> None:
    write(store, passed(T0), now=T0)

    store.record_failure(KEY, at=T0 + MINUTE_MS, now=T0 + MINUTE_MS + 50)

    assert verdict(store) == RouteVerdict(
        KEY,
        direct=False,
        checked_at=T0 + MINUTE_MS,
        reason=Reason.UNAVAILABLE,
        failed_at=T0 + MINUTE_MS,
        blocked_until=T0 + MINUTE_MS + COOLDOWN_MS,
    )


def test_rule3_failure_report_for_a_route_never_checked_creates_its_verdict(
    store: DynamoVerdictStore,
) -> None:
    store.record_failure(KEY, at=T0, now=T0)

    assert verdict(store) == RouteVerdict(
        KEY, False, T0, Reason.UNAVAILABLE, failed_at=T0, blocked_until=T0 + COOLDOWN_MS
    )


def test_rule3_failure_older_than_or_equal_to_the_stored_failure_is_ignored(
    store: DynamoVerdictStore,
) -> None:
    store.record_failure(KEY, at=T0 + MINUTE_MS, now=T0 + MINUTE_MS)

    store.record_failure(KEY, at=T0, now=T0 + MINUTE_MS)  # an older report delivered late
    store.record_failure(KEY, at=T0 + MINUTE_MS, now=T0 + MINUTE_MS)  # the same report delivered twice

    assert verdict(store).failed_at == T0 + MINUTE_MS
    assert verdict(store).blocked_until == T0 + MINUTE_MS + COOLDOWN_MS
    assert store.rejected_writes == 2


def test_rule3_failure_report_landing_after_the_route_was_rechecked_past_its_cooldown_is_ignored(
    store: DynamoVerdictStore,
) -> None:
    failure_at = T0
    recheck_at = failure_at + COOLDOWN_MS  # the first probe after the failure's cooldown ended
    write(store, passed(recheck_at), now=recheck_at)

    store.record_failure(KEY, at=failure_at, now=recheck_at + MINUTE_MS)  # the report was delayed

    assert verdict(store) == RouteVerdict(KEY, direct=True, checked_at=recheck_at, reason=Reason.OK)
    assert store.rejected_writes == 1


def test_rule3_failure_report_older_than_the_last_check_but_within_its_cooldown_still_blocks(
    store: DynamoVerdictStore,
) -> None:
    write(store, passed(T0 + MINUTE_MS), now=T0 + MINUTE_MS)

    store.record_failure(KEY, at=T0, now=T0 + MINUTE_MS + SECOND_MS)

    assert verdict(store) == RouteVerdict(
        KEY,
        direct=False,
        checked_at=T0 + MINUTE_MS,  # max(stored checkedAt, at): the later check's time is kept
        reason=Reason.UNAVAILABLE,
        failed_at=T0,
        blocked_until=T0 + COOLDOWN_MS,
    )


# -- rule 4: recovery ---------------------------------------------------------------------------------------------


def test_rule4_first_passing_check_after_the_block_restores_direct(store: DynamoVerdictStore) -> None:
    store.record_failure(KEY, at=T0, now=T0)
    write(store, passed(T0 + MINUTE_MS), now=T0 + MINUTE_MS)  # during the block: still not direct

    write(store, passed(T0 + COOLDOWN_MS), now=T0 + COOLDOWN_MS + SECOND_MS)

    assert verdict(store) == RouteVerdict(
        KEY, True, T0 + COOLDOWN_MS, Reason.OK, failed_at=T0, blocked_until=T0 + COOLDOWN_MS
    )


def test_rule4_check_started_during_the_block_and_landing_after_it_restores_direct(
    store: DynamoVerdictStore,
) -> None:
    store.record_failure(KEY, at=T0, now=T0)

    write(store, passed(T0 + COOLDOWN_MS - SECOND_MS), now=T0 + COOLDOWN_MS)

    assert verdict(store).direct is True


def test_rule4_recovery_after_the_block_ends_when_the_failure_report_was_lost(
    store: DynamoVerdictStore,
) -> None:
    write(store, passed(T0), now=T0)
    # A lookup failed at T0 + 1 min and blocked the route in its container; its report never reached the store.
    write(store, failed(T0 + 5 * MINUTE_MS), now=T0 + 5 * MINUTE_MS)

    write(store, passed(T0 + 10 * MINUTE_MS), now=T0 + 10 * MINUTE_MS)

    assert verdict(store) == RouteVerdict(KEY, direct=True, checked_at=T0 + 10 * MINUTE_MS, reason=Reason.OK)


def test_rule4_failed_check_after_the_block_keeps_direct_off(store: DynamoVerdictStore) -> None:
    store.record_failure(KEY, at=T0, now=T0)

    write(store, failed(T0 + COOLDOWN_MS, reason=Reason.HTTP_5XX), now=T0 + COOLDOWN_MS)

    assert verdict(store).direct is False
    assert verdict(store).reason is Reason.HTTP_5XX


# -- rule 5: the pinned key ------------------------------------------------------------------------------------------


def test_rule5_gs25_stock_is_always_stored_pinned_to_relay(store: DynamoVerdictStore) -> None:
    write(store, passed(T0, RouteKey.GS25_STOCK), now=T0)
    assert verdict(store, RouteKey.GS25_STOCK) == RouteVerdict(
        RouteKey.GS25_STOCK, direct=False, checked_at=T0, reason=Reason.PINNED_RELAY
    )

    store.record_failure(RouteKey.GS25_STOCK, at=T0 + MINUTE_MS, now=T0 + MINUTE_MS)
    write(store, failed(T0 + 2 * MINUTE_MS, RouteKey.GS25_STOCK), now=T0 + 2 * MINUTE_MS)

    assert verdict(store, RouteKey.GS25_STOCK) == RouteVerdict(
        RouteKey.GS25_STOCK, direct=False, checked_at=T0 + 2 * MINUTE_MS, reason=Reason.PINNED_RELAY
    )


# -- rule 6: relay order ------------------------------------------------------------------------------------------------


def test_rule6_relay_check_older_than_stored_is_ignored(store: DynamoVerdictStore) -> None:
    group = RelayGroup.CONVENIENCE
    store.write_checks(
        [], [RelayCheck(group, healthy=False, checked_at=T0, reason=Reason.NETWORK_ERROR)], now=T0
    )

    store.write_checks([], [RelayCheck(group, healthy=True, checked_at=T0 - 1)], now=T0)
    assert store.read_snapshot().relays[group] == RelayCheck(group, False, T0, Reason.NETWORK_ERROR)

    later = T0 + PROBE_SLOT_MS
    store.write_checks([], [RelayCheck(group, healthy=True, checked_at=later)], now=later)
    assert store.read_snapshot().relays[group] == RelayCheck(group, True, later, reason=None)
    assert store.rejected_writes == 1


# -- clock skew: a timestamp more than 60 s ahead of the writer's clock ------------------------------------------------

FAR_AHEAD = T0 + 365 * 24 * 60 * MINUTE_MS
"""A year ahead: a writer with a broken clock, or a hand edit."""


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def test_a_writer_refuses_timestamps_more_than_60_s_ahead_of_its_clock(store: DynamoVerdictStore) -> None:
    ahead = T0 + MAX_CLOCK_SKEW_MS + 1

    store.write_checks(
        [passed(ahead), failed(ahead, RouteKey.CU_STOCK)], [RelayCheck(GROUP, True, ahead)], now=T0
    )
    store.record_failure(RouteKey.CU_STORE, at=ahead, now=T0)

    assert store.read_snapshot() == Snapshot()
    assert store.rejected_writes == 4


def test_a_timestamp_up_to_60_s_ahead_is_written(store: DynamoVerdictStore) -> None:
    ahead = T0 + MAX_CLOCK_SKEW_MS

    store.write_checks([passed(ahead)], [RelayCheck(GROUP, True, ahead)], now=T0)
    store.record_failure(RouteKey.CU_STORE, at=ahead, now=T0)

    snapshot = store.read_snapshot()
    assert snapshot.routes[KEY].checked_at == snapshot.relays[GROUP].checked_at == ahead
    assert snapshot.routes[RouteKey.CU_STORE].failed_at == ahead
    assert store.rejected_writes == 0


FUTURE_ITEMS = {
    "checked in the future": {"direct": {"BOOL": True}, "checkedAt": n(FAR_AHEAD)},
    "failed in the future": {
        "direct": {"BOOL": False},
        "checkedAt": n(FAR_AHEAD),
        "reason": {"S": "unavailable"},
        "failedAt": n(FAR_AHEAD),
        "blockedUntil": n(FAR_AHEAD + COOLDOWN_MS),
    },
    "blocked far beyond any cooldown": {
        "direct": {"BOOL": False},
        "checkedAt": n(T0 - MINUTE_MS),
        "failedAt": n(T0 - MINUTE_MS),
        "blockedUntil": n(FAR_AHEAD),
    },
}


@pytest.mark.parametrize("attributes", FUTURE_ITEMS.values(), ids=FUTURE_ITEMS.keys())
@pytest.mark.parametrize("check", [passed(T0), failed(T0)], ids=["passing", "failing"])
def test_an_item_stamped_in_the_future_heals_at_the_next_check(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient, attributes: dict[str, Any], check: RouteCheck
) -> None:
    put_raw(dynamodb, route_sort_key(KEY), attributes)

    write(store, check, now=T0)

    healed = verdict(store)
    assert (healed.direct, healed.checked_at, healed.reason) == (check.direct, T0, check.reason)
    assert healed.blocked_until is None  # the block from the future is gone; a past failure may stay
    assert healed.failed_at is None or healed.failed_at < T0
    assert store.rejected_writes == 0


def test_a_relay_item_checked_in_the_future_heals_at_the_next_check(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient
) -> None:
    put_raw(dynamodb, relay_sort_key(GROUP), {"healthy": {"BOOL": False}, "checkedAt": n(FAR_AHEAD)})

    store.write_checks([], [RelayCheck(GROUP, True, T0)], now=T0)

    assert store.read_snapshot().relays[GROUP] == RelayCheck(GROUP, True, T0)


# -- one malformed item ---------------------------------------------------------------------------------------------

MALFORMED_ROUTE_ITEMS = {
    "failedAt a list": {
        "direct": {"BOOL": False},
        "checkedAt": n(T0 - MINUTE_MS),
        "failedAt": {"L": [n(T0 - MINUTE_MS)]},
    },
    "blockedUntil a string": {
        "direct": {"BOOL": False},
        "checkedAt": n(T0 - MINUTE_MS),
        "failedAt": n(T0 - MINUTE_MS),
        "blockedUntil": {"S": "soon"},
    },
    "checkedAt a string": {"direct": {"BOOL": True}, "checkedAt": {"S": "yesterday"}},
    "direct a string": {"direct": {"S": "true"}, "checkedAt": n(T0 - MINUTE_MS)},
    "reason a number": {"direct": {"BOOL": True}, "checkedAt": n(T0 - MINUTE_MS), "reason": n(1)},
    "no checkedAt": {"direct": {"BOOL": True}},
    "no direct": {"checkedAt": n(T0 - MINUTE_MS), "failedAt": {"BOOL": True}},
}
MALFORMED_RELAY_ITEMS = {
    "checkedAt a string": {"healthy": {"BOOL": True}, "checkedAt": {"S": "yesterday"}},
    "healthy a string": {"healthy": {"S": "yes"}, "checkedAt": n(T0 - MINUTE_MS)},
    "no healthy": {"checkedAt": n(T0 - MINUTE_MS)},
}


def every_check(at: int) -> tuple[list[RouteCheck], list[RelayCheck]]:
    """A whole probe run's results: every route passed, every relay healthy."""
    return [passed(at, key) for key in RouteKey], [RelayCheck(group, True, at) for group in RelayGroup]


MALFORMED_ITEMS = [
    *(
        pytest.param(route_sort_key(KEY), item, id=f"route {name}")
        for name, item in MALFORMED_ROUTE_ITEMS.items()
    ),
    *(
        pytest.param(relay_sort_key(GROUP), item, id=f"relay {name}")
        for name, item in MALFORMED_RELAY_ITEMS.items()
    ),
]


EVERY_SORT_KEY = {route_sort_key(key) for key in RouteKey} | {relay_sort_key(group) for group in RelayGroup}


def sort_keys(snapshot: Snapshot) -> set[str]:
    """The items a snapshot read as verdicts."""
    return {route_sort_key(key) for key in snapshot.routes} | {
        relay_sort_key(group) for group in snapshot.relays
    }


@pytest.mark.parametrize(("sort_key", "attributes"), MALFORMED_ITEMS)
def test_a_malformed_item_reads_as_no_verdict(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient, sort_key: str, attributes: dict[str, Any]
) -> None:
    store.write_checks(*every_check(T0 - 2 * MINUTE_MS), now=T0)
    put_raw(dynamodb, sort_key, attributes)

    assert sort_keys(store.read_snapshot()) == EVERY_SORT_KEY - {sort_key}


@pytest.mark.parametrize(("sort_key", "attributes"), MALFORMED_ITEMS)
def test_one_malformed_item_stops_no_write_and_is_overwritten_by_the_next_check(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient, sort_key: str, attributes: dict[str, Any]
) -> None:
    put_raw(dynamodb, sort_key, attributes)

    store.write_checks(*every_check(T0), now=T0)

    snapshot = store.read_snapshot()
    assert sort_keys(snapshot) == EVERY_SORT_KEY
    assert {verdict.checked_at for verdict in snapshot.routes.values()} == {T0}
    assert (snapshot.routes[KEY].direct, snapshot.routes[KEY].reason) == (True, Reason.OK)
    assert set(snapshot.relays.values()) == set(every_check(T0)[1])


@pytest.mark.parametrize(
    "attributes",
    [
        *(pytest.param(item, id=f"stamped in the future: {name}") for name, item in FUTURE_ITEMS.items()),
        *(pytest.param(item, id=f"malformed: {name}") for name, item in MALFORMED_ROUTE_ITEMS.items()),
    ],
)
def test_a_failure_report_overwrites_an_item_stamped_in_the_future_or_malformed(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient, attributes: dict[str, Any]
) -> None:
    put_raw(dynamodb, route_sort_key(KEY), attributes)

    store.record_failure(KEY, at=T0, now=T0)

    assert verdict(store) == RouteVerdict(
        KEY, False, T0, Reason.UNAVAILABLE, failed_at=T0, blocked_until=T0 + COOLDOWN_MS
    )


def test_an_error_on_one_item_does_not_stop_the_writes_of_the_others(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient
) -> None:
    refused_key = route_sort_key(RouteKey.CU_STOCK)

    def dynamodb_refuses_one_item(params: dict[str, Any], **_: Any) -> Any:
        if refused_key.encode() in params["body"]:
            error = {"Error": {"Code": "ValidationException", "Message": "item-specific"}}
            return SimpleNamespace(status_code=400), error
        return None

    with (
        handler_on(dynamodb, "before-call.dynamodb.UpdateItem", dynamodb_refuses_one_item),
        pytest.raises(StoreError, match="DynamoDB UpdateItem failed: ValidationException"),
    ):
        store.write_checks(*every_check(T0), now=T0)

    snapshot = store.read_snapshot()
    assert set(snapshot.routes) == set(RouteKey) - {RouteKey.CU_STOCK}
    assert set(snapshot.relays) == set(RelayGroup)


# -- invalid input and rejected writes -----------------------------------------------------------------------------------


def test_only_fixed_reason_codes_are_stored(store: DynamoVerdictStore) -> None:
    free_text: Any = "<html>blocked</html>"

    with pytest.raises(ValueError, match="is not a valid Reason"):
        write(store, RouteCheck(KEY, direct=False, checked_at=T0, reason=free_text), now=T0)

    assert KEY not in store.read_snapshot().routes


def test_rejected_writes_are_counted_not_raised(dynamodb: DynamoDBClient) -> None:
    refusals: list[None] = []
    store = DynamoVerdictStore(TABLE, dynamodb, on_rejected=lambda: refusals.append(None))
    store.record_failure(KEY, at=T0, now=T0)

    store.write_checks([passed(T0 - 1), failed(T0 - 2)], [], now=T0)
    store.record_failure(KEY, at=T0 - 1, now=T0)

    assert store.rejected_writes == len(refusals) == 3


# -- probe slots -------------------------------------------------------------------------------------------------------


def test_probe_slot_can_be_claimed_once(store: DynamoVerdictStore) -> None:
    assert store.claim_probe_slot(T0, trigger="schedule", now=T0 + 10) is True
    assert store.claim_probe_slot(T0, trigger="operator", now=T0 + MINUTE_MS) is False
    assert store.claim_probe_slot(T0 + PROBE_SLOT_MS, trigger="operator", now=T0 + PROBE_SLOT_MS) is True
    assert store.rejected_writes == 0


def test_probe_slot_item_expires_about_two_days_later_in_epoch_seconds(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient
) -> None:
    store.claim_probe_slot(T0, trigger="schedule", now=T0 + 10)

    item = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": "probe"}, "sk": {"S": f"slot#{T0}"}})["Item"]
    assert int(item[TTL_ATTRIBUTE]["N"]) == (T0 + 10 + PROBE_SLOT_RETENTION_MS) // 1000
    assert PROBE_SLOT_RETENTION_MS == 2 * 24 * 60 * MINUTE_MS
    assert item["trigger"] == {"S": "schedule"}
    assert store.read_snapshot().routes == {}


# -- errors --------------------------------------------------------------------------------------------------------------


def test_missing_table_is_a_store_error_without_response_text(dynamodb: DynamoDBClient) -> None:
    store = DynamoVerdictStore("no-such-table", dynamodb)

    with pytest.raises(StoreError) as raised:
        store.read_snapshot()

    assert str(raised.value) == "DynamoDB Query failed: ResourceNotFoundException"
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__ is True
    with pytest.raises(StoreError, match="UpdateItem failed"):
        store.record_failure(KEY, at=T0, now=T0)
    with pytest.raises(StoreError, match="PutItem failed"):
        store.claim_probe_slot(T0, trigger="schedule", now=T0)


def _closed_local_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def store_at(endpoint_url: str) -> tuple[DynamoVerdictStore, list[str]]:
    """A store whose client (the production config) talks to `endpoint_url`, and the attempts it sends."""
    client = dynamodb_client(region_name=REGION, endpoint_url=endpoint_url)
    attempts: list[str] = []
    client.meta.events.register("before-send.dynamodb", lambda **_: attempts.append("sent"))
    return DynamoVerdictStore(TABLE, client), attempts


def test_unreachable_endpoint_is_a_store_error() -> None:
    store, attempts = store_at(f"http://127.0.0.1:{_closed_local_port()}")

    # DynamoDB does not answer at all: every later write would wait as long, so the first error ends the run.
    with pytest.raises(StoreError, match="DynamoDB UpdateItem failed: EndpointConnectionError"):
        store.write_checks(*every_check(T0), now=T0)
    assert len(attempts) == STORE_MAX_ATTEMPTS

    with pytest.raises(StoreError, match="DynamoDB Query failed: EndpointConnectionError"):
        store.read_snapshot()
    with pytest.raises(StoreError, match="UpdateItem failed"):
        store.write_checks([passed(T0)], [], now=T0)
    with pytest.raises(StoreError, match="PutItem failed"):
        store.write_checks([], [RelayCheck(RelayGroup.DTRYX, True, T0)], now=T0)


@pytest.mark.parametrize("operation", ["read_snapshot", "write_checks", "record_failure"])
def test_a_store_call_ends_within_2_s_in_total_when_dynamodb_hangs(operation: str) -> None:
    with HostileServer(lambda _: hang) as dynamodb_hanging:
        store, attempts = store_at(dynamodb_hanging.base_url)
        calls: dict[str, Callable[[], object]] = {
            "read_snapshot": store.read_snapshot,
            "write_checks": lambda: store.write_checks(*every_check(T0), now=T0),
            "record_failure": lambda: store.record_failure(KEY, at=T0, now=T0),
        }
        with stopwatch() as took, pytest.raises(StoreError, match="ReadTimeoutError"):
            calls[operation]()

    # Every attempt ran into its read timeout and the one retry followed: 2 x 0.6 + 0.05 s of waiting. The
    # budget is about that behaviour, so the time a busy machine kept this thread from a CPU does not count.
    assert len(attempts) == STORE_MAX_ATTEMPTS
    assert took.own_s < STORE_CALL_BUDGET_SECONDS == 2.0
