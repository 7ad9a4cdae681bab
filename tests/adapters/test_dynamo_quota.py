"""DynamoVerdictStore's daily quota counters against moto: item layout, TTL, atomic totals, errors.

Many containers adding at once is in test_dynamo_store_concurrency.py.
"""

from __future__ import annotations

import hashlib

import pytest
from mypy_boto3_dynamodb import DynamoDBClient

from functions.adapters.dynamo_store import (
    TTL_ATTRIBUTE,
    DynamoVerdictStore,
    quota_partition,
)
from functions.core.errors import StoreError
from functions.core.quota import korea_day
from tests.support.aws import TABLE

NOON_KST = 1_767_236_400_000  # 2026-01-01T12:00:00+09:00
DAY = korea_day(NOON_KST)
CLIENT = hashlib.sha256(b"203.0.113.7").hexdigest()


def test_the_partition_is_the_korea_date() -> None:
    assert quota_partition(DAY) == "quota#2026-01-01"
    assert quota_partition(korea_day(1_767_279_599_000)) == "quota#2026-01-01"  # 23:59:59 in Seoul
    assert quota_partition(korea_day(1_767_279_600_000)) == "quota#2026-01-02"  # 00:00:00 in Seoul


def test_adds_return_the_running_total_per_client_and_day(store: DynamoVerdictStore) -> None:
    assert store.add_daily_lookups(DAY, CLIENT, 3) == 3
    assert store.add_daily_lookups(DAY, CLIENT, 1) == 4
    assert store.add_daily_lookups(DAY, "another-client", 2) == 2
    assert store.add_daily_lookups(DAY + 1, CLIENT, 1) == 1


def test_the_item_holds_only_the_hash_and_the_count_and_expires_a_day_after_the_day(
    store: DynamoVerdictStore, dynamodb: DynamoDBClient
) -> None:
    store.add_daily_lookups(DAY, CLIENT, 2)
    item = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": "quota#2026-01-01"}, "sk": {"S": CLIENT}})[
        "Item"
    ]
    day_ends_s = 1_767_279_600  # 2026-01-02T00:00:00+09:00
    assert item == {
        "pk": {"S": "quota#2026-01-01"},
        "sk": {"S": CLIENT},
        "lookups": {"N": "2"},
        TTL_ATTRIBUTE: {"N": str(day_ends_s + 24 * 60 * 60)},
    }


def test_the_snapshot_does_not_read_quota_items(store: DynamoVerdictStore) -> None:
    store.add_daily_lookups(DAY, CLIENT, 1)
    snapshot = store.read_snapshot()
    assert (dict(snapshot.routes), dict(snapshot.relays)) == ({}, {})


def test_a_missing_table_is_a_store_error(dynamodb: DynamoDBClient) -> None:
    with pytest.raises(StoreError, match="DynamoDB UpdateItem failed: ResourceNotFoundException"):
        DynamoVerdictStore("no-such-table", dynamodb).add_daily_lookups(DAY, CLIENT, 1)
