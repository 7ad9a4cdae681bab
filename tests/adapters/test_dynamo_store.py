"""DynamoVerdictStore against moto: the key schema, one named test per ordering rule (DESIGN §5), errors."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from moto import mock_aws
from mypy_boto3_dynamodb import DynamoDBClient

from functions.adapters.dynamo_store import (
    PROBE_SLOT_RETENTION_MS,
    STORE_MAX_ATTEMPTS,
    TTL_ATTRIBUTE,
    DynamoVerdictStore,
    dynamodb_client,
    route_sort_key,
    store_client_config,
    table_definition,
    time_to_live_definition,
)
from functions.core.errors import StoreError
from functions.core.model import (
    COOLDOWN_MS,
    MINUTE_MS,
    PROBE_SLOT_MS,
    SECOND_MS,
    Reason,
    RelayCheck,
    RelayGroup,
    RouteCheck,
    RouteKey,
    RouteVerdict,
)

TABLE = "route-health-test"
REGION = "ap-northeast-2"
T0 = 1_750_000_000_000
KEY = RouteKey.OY_PRODUCT_SEARCH


@pytest.fixture
def client() -> Iterator[DynamoDBClient]:
    with mock_aws():
        dynamodb = dynamodb_client(region_name=REGION)
        dynamodb.create_table(**table_definition(TABLE))
        yield dynamodb


@pytest.fixture
def store(client: DynamoDBClient) -> DynamoVerdictStore:
    return DynamoVerdictStore(TABLE, client)


def passed(at: int, key: RouteKey = KEY) -> RouteCheck:
    return RouteCheck(key, direct=True, checked_at=at, reason=Reason.OK)


def failed(at: int, key: RouteKey = KEY, reason: Reason = Reason.TIMEOUT) -> RouteCheck:
    return RouteCheck(key, direct=False, checked_at=at, reason=reason)


def verdict(store: DynamoVerdictStore, key: RouteKey = KEY) -> RouteVerdict:
    return store.read_snapshot().routes[key]


def write(store: DynamoVerdictStore, check: RouteCheck, *, now: int) -> None:
    store.write_checks([check], [], now=now)


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


def test_time_to_live_uses_the_expiry_attribute(client: DynamoDBClient) -> None:
    client.update_time_to_live(**time_to_live_definition(TABLE))

    description = client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert description.get("AttributeName") == TTL_ATTRIBUTE == "expiresAt"
    assert description.get("TimeToLiveStatus") == "ENABLED"


def test_client_config_has_short_timeouts_and_bounded_retries() -> None:
    config = store_client_config()

    assert config.connect_timeout <= 2
    assert config.read_timeout <= 2
    assert config.retries == {"mode": "standard", "total_max_attempts": STORE_MAX_ATTEMPTS}
    assert STORE_MAX_ATTEMPTS <= 2


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


def test_read_snapshot_is_exactly_one_query(store: DynamoVerdictStore, client: DynamoDBClient) -> None:
    store.write_checks(
        [passed(T0, key) for key in RouteKey],
        [RelayCheck(group, True, T0) for group in RelayGroup],
        now=T0,
    )
    store.claim_probe_slot(T0, trigger="schedule", now=T0)
    operations: list[str] = []
    client.meta.events.register("before-call.dynamodb", lambda model, **_: operations.append(model.name))

    snapshot = store.read_snapshot()

    assert operations == ["Query"]
    assert len(snapshot.routes) == len(RouteKey)
    assert len(snapshot.relays) == len(RelayGroup)


def test_unknown_or_malformed_items_are_skipped(store: DynamoVerdictStore, client: DynamoDBClient) -> None:
    write(store, passed(T0), now=T0)
    for sort_key, attributes in [
        ("route#retired-key", {"direct": {"BOOL": True}, "checkedAt": {"N": str(T0)}}),
        (route_sort_key(RouteKey.CU_STOCK), {"direct": {"BOOL": True}}),
        ("relay#unknown-group", {"healthy": {"BOOL": True}, "checkedAt": {"N": str(T0)}}),
    ]:
        client.put_item(TableName=TABLE, Item={"pk": {"S": "verdict"}, "sk": {"S": sort_key}, **attributes})

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

    store.write_checks([], [RelayCheck(group, healthy=True, checked_at=T0 + PROBE_SLOT_MS)], now=T0)
    assert store.read_snapshot().relays[group] == RelayCheck(group, True, T0 + PROBE_SLOT_MS, reason=None)
    assert store.rejected_writes == 1


# -- invalid input and rejected writes -----------------------------------------------------------------------------------


def test_only_fixed_reason_codes_are_stored(store: DynamoVerdictStore) -> None:
    free_text: Any = "<html>blocked</html>"

    with pytest.raises(ValueError, match="is not a valid Reason"):
        write(store, RouteCheck(KEY, direct=False, checked_at=T0, reason=free_text), now=T0)

    assert KEY not in store.read_snapshot().routes


def test_rejected_writes_are_counted_not_raised(store: DynamoVerdictStore) -> None:
    store.record_failure(KEY, at=T0, now=T0)

    store.write_checks([passed(T0 - 1), failed(T0 - 2)], [], now=T0)
    store.record_failure(KEY, at=T0 - 1, now=T0)

    assert store.rejected_writes == 3


# -- probe slots -------------------------------------------------------------------------------------------------------


def test_probe_slot_can_be_claimed_once(store: DynamoVerdictStore) -> None:
    assert store.claim_probe_slot(T0, trigger="schedule", now=T0 + 10) is True
    assert store.claim_probe_slot(T0, trigger="operator", now=T0 + MINUTE_MS) is False
    assert store.claim_probe_slot(T0 + PROBE_SLOT_MS, trigger="operator", now=T0 + PROBE_SLOT_MS) is True
    assert store.rejected_writes == 0


def test_probe_slot_item_expires_about_two_days_later_in_epoch_seconds(
    store: DynamoVerdictStore, client: DynamoDBClient
) -> None:
    store.claim_probe_slot(T0, trigger="schedule", now=T0 + 10)

    item = client.get_item(TableName=TABLE, Key={"pk": {"S": "probe"}, "sk": {"S": f"slot#{T0}"}})["Item"]
    assert int(item[TTL_ATTRIBUTE]["N"]) == (T0 + 10 + PROBE_SLOT_RETENTION_MS) // 1000
    assert PROBE_SLOT_RETENTION_MS == 2 * 24 * 60 * MINUTE_MS
    assert item["trigger"] == {"S": "schedule"}
    assert store.read_snapshot().routes == {}


# -- errors --------------------------------------------------------------------------------------------------------------


def test_missing_table_is_a_store_error_without_response_text(client: DynamoDBClient) -> None:
    store = DynamoVerdictStore("no-such-table", client)

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


def test_unreachable_endpoint_is_a_store_error() -> None:
    client = dynamodb_client(region_name=REGION, endpoint_url=f"http://127.0.0.1:{_closed_local_port()}")
    store = DynamoVerdictStore(TABLE, client)

    with pytest.raises(StoreError, match="DynamoDB Query failed: EndpointConnectionError"):
        store.read_snapshot()
    with pytest.raises(StoreError, match="UpdateItem failed"):
        store.write_checks([passed(T0)], [], now=T0)
    with pytest.raises(StoreError, match="PutItem failed"):
        store.write_checks([], [RelayCheck(RelayGroup.DTRYX, True, T0)], now=T0)
