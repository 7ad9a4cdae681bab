"""Operator overrides in the verdict partition (moto): the item, the one-Query snapshot, clearing, bad items."""

from __future__ import annotations

from typing import Any

import pytest
from mypy_boto3_dynamodb import DynamoDBClient

from functions.adapters.dynamo_store import (
    TTL_ATTRIBUTE,
    DynamoVerdictStore,
    override_sort_key,
)
from functions.core import OverrideMode, Reason, RelayCheck, RelayGroup, RouteCheck, RouteKey, RouteOverride
from functions.core.errors import StoreError
from functions.core.model import MINUTE_MS, SECOND_MS
from functions.core.overrides import new_override
from tests.support.aws import TABLE

T0 = 1_750_000_000_123
KEY = RouteKey.CU_STOCK


def forced(
    key: RouteKey = KEY, mode: OverrideMode = OverrideMode.FORCE_RELAY, *, ttl_s: int = 600
) -> RouteOverride:
    return new_override(key, mode, "GS25 점검 (maintenance)", ttl_s, now=T0)


def test_an_override_is_one_item_in_the_verdict_partition_with_the_tables_ttl(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient
) -> None:
    override = forced()
    store.put_override(override)

    item = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": "verdict"}, "sk": {"S": "override#cu-stock"}})[
        "Item"
    ]
    assert item == {
        "pk": {"S": "verdict"},
        "sk": {"S": override_sort_key(KEY)},
        "mode": {"S": "force-relay"},
        "reason": {"S": "GS25 점검 (maintenance)"},
        "createdAt": {"N": str(T0)},
        TTL_ATTRIBUTE: {"N": str(override.expires_at // SECOND_MS)},  # epoch seconds, as TTL requires
    }


def test_the_snapshot_query_reads_overrides_beside_the_verdicts(store: DynamoVerdictStore) -> None:
    store.write_checks(
        [RouteCheck(KEY, direct=True, checked_at=T0, reason=Reason.OK)],
        [RelayCheck(RelayGroup.CONVENIENCE, healthy=True, checked_at=T0)],
        now=T0,
    )
    relay_forced, direct_forced = forced(), forced(RouteKey.OY_FIND_STORE, OverrideMode.FORCE_DIRECT)
    store.put_override(relay_forced)
    store.put_override(direct_forced)

    snapshot = store.read_snapshot()
    assert snapshot.overrides == {KEY: relay_forced, RouteKey.OY_FIND_STORE: direct_forced}
    assert snapshot.routes[KEY].direct is True  # the verdict is untouched
    assert set(snapshot.relays) == {RelayGroup.CONVENIENCE}


def test_a_new_override_replaces_the_keys_earlier_one(store: DynamoVerdictStore) -> None:
    store.put_override(forced())
    later = forced(mode=OverrideMode.FORCE_DIRECT, ttl_s=60)
    store.put_override(later)
    assert store.read_snapshot().overrides == {KEY: later}


def test_probe_checks_and_failure_reports_leave_the_override_alone(store: DynamoVerdictStore) -> None:
    override = forced()
    store.put_override(override)
    store.write_checks(
        [RouteCheck(KEY, direct=False, checked_at=T0 + 1, reason=Reason.HTTP_403)], [], now=T0 + 1
    )
    store.record_failure(KEY, at=T0 + 2, now=T0 + 2)
    snapshot = store.read_snapshot()
    assert snapshot.overrides == {KEY: override}
    assert snapshot.routes[KEY].failed_at == T0 + 2


def test_clearing_returns_the_override_that_counted_then_nothing(store: DynamoVerdictStore) -> None:
    override = forced()
    store.put_override(override)
    assert store.clear_override(KEY, now=T0 + MINUTE_MS) == override
    assert store.read_snapshot().overrides == {}
    assert store.clear_override(KEY, now=T0 + MINUTE_MS) is None


def test_clearing_an_expired_override_removes_it_and_reports_nothing_to_clear(
    store: DynamoVerdictStore,
) -> None:
    override = forced(ttl_s=60)
    store.put_override(override)
    assert store.clear_override(KEY, now=override.expires_at) is None
    assert store.read_snapshot().overrides == {}


@pytest.mark.parametrize(
    "bad",
    [
        {"sk": {"S": "override#no-such-route"}},
        {"mode": {"S": "force-sideways"}},
        {"mode": {"N": "1"}},
        {"createdAt": {"S": "yesterday"}},
        {TTL_ATTRIBUTE: {"L": []}},
        {"reason": {"N": "7"}},
    ],
    ids=["unknown-key", "unknown-mode", "mode-type", "createdAt-type", "expiresAt-type", "reason-type"],
)
def test_a_malformed_override_item_reads_as_no_override_and_hides_no_other(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient, bad: dict[str, object]
) -> None:
    good = forced(RouteKey.CU_PRIME)
    store.put_override(good)
    item: dict[str, Any] = {
        "pk": {"S": "verdict"},
        "sk": {"S": override_sort_key(KEY)},
        "mode": {"S": "force-relay"},
        "reason": {"S": "r"},
        "createdAt": {"N": str(T0)},
        TTL_ATTRIBUTE: {"N": str(T0 // SECOND_MS + 60)},
        **bad,
    }
    dynamodb.put_item(TableName=TABLE, Item=item)
    assert store.read_snapshot().overrides == {RouteKey.CU_PRIME: good}


def test_a_missing_attribute_reads_as_no_override(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient
) -> None:
    dynamodb.put_item(
        TableName=TABLE,
        Item={"pk": {"S": "verdict"}, "sk": {"S": override_sort_key(KEY)}, "mode": {"S": "force-relay"}},
    )
    assert store.read_snapshot().overrides == {}


def test_store_errors_name_the_operation_only(dynamodb: DynamoDBClient) -> None:
    missing = DynamoVerdictStore("no-such-table", dynamodb)
    with pytest.raises(StoreError, match=r"^DynamoDB PutItem failed: ResourceNotFoundException$"):
        missing.put_override(forced())
    with pytest.raises(StoreError, match=r"^DynamoDB DeleteItem failed: ResourceNotFoundException$"):
        missing.clear_override(KEY, now=T0)
