"""The DynamoDB verdict store: the one definition of the table's keys and items, and the conditional writes
that keep the rules of docs/design.md, "Verdict store", under any interleaving of writers.

A refused write is normal (counted in `rejected_writes`, never raised); a stored time that is not a number or
is more than 60 s ahead of the writer's clock counts as absent, and a malformed item reads as no verdict.
docs/verdict-store.md lays out the items and explains every condition.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from functions.core import Reason, RelayCheck, RelayGroup, RouteCheck, RouteKey, RouteVerdict, Snapshot
from functions.core.errors import StoreError
from functions.core.model import (
    COOLDOWN_MS,
    MAX_CLOCK_SKEW_MS,
    PINNED_TO_RELAY,
    SECOND_MS,
    OverrideMode,
    RouteOverride,
)
from functions.core.overrides import is_active
from functions.core.quota import korea_day_end

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import (
        AttributeValueTypeDef,
        CreateTableInputTypeDef,
        QueryInputTypeDef,
        UpdateTimeToLiveInputTypeDef,
    )

Plain = Mapping[str, Any]
"""An item or a set of expression values as Python values (int, str, bool; a stored number reads as Decimal).
boto3's TypeSerializer/TypeDeserializer convert them at the client call, and nowhere else."""

T = TypeVar("T")

# ---------------------------------------------------------------------------------------------------------
# Key schema: the one place it is defined. The CDK table, the sandbox and the tests mirror table_definition().

PARTITION_KEY: Final = "pk"
SORT_KEY: Final = "sk"
TTL_ATTRIBUTE: Final = "expiresAt"
"""Probe-slot, quota and override items carry their expiry here, in epoch SECONDS (DynamoDB TTL ignores
milliseconds)."""

VERDICT_PARTITION: Final = "verdict"
PROBE_PARTITION: Final = "probe"
PROBE_SLOT_RETENTION_MS: Final = 2 * 24 * 60 * 60 * SECOND_MS
QUOTA_RETENTION_MS: Final = 24 * 60 * 60 * SECOND_MS
"""A day's quota counts stay this long after the day ends (to look at yesterday's), then TTL removes them."""

ROUTE_PREFIX: Final = "route#"
RELAY_PREFIX: Final = "relay#"
OVERRIDE_PREFIX: Final = "override#"
SLOT_PREFIX: Final = "slot#"
QUOTA_PREFIX: Final = "quota#"
KOREA_EPOCH: Final = date(1970, 1, 1)


def table_definition(table_name: str) -> CreateTableInputTypeDef:
    """CreateTable kwargs: string ``pk``/``sk`` keys, on-demand billing."""
    return {
        "TableName": table_name,
        "AttributeDefinitions": [
            {"AttributeName": PARTITION_KEY, "AttributeType": "S"},
            {"AttributeName": SORT_KEY, "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": PARTITION_KEY, "KeyType": "HASH"},
            {"AttributeName": SORT_KEY, "KeyType": "RANGE"},
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }


def time_to_live_definition(table_name: str) -> UpdateTimeToLiveInputTypeDef:
    """UpdateTimeToLive kwargs that let DynamoDB delete old probe-slot items."""
    return {
        "TableName": table_name,
        "TimeToLiveSpecification": {"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
    }


def route_sort_key(key: RouteKey) -> str:
    return f"{ROUTE_PREFIX}{key.value}"


def relay_sort_key(group: RelayGroup) -> str:
    return f"{RELAY_PREFIX}{group.value}"


def override_sort_key(key: RouteKey) -> str:
    return f"{OVERRIDE_PREFIX}{key.value}"


def slot_sort_key(slot_start: int) -> str:
    return f"{SLOT_PREFIX}{slot_start}"


def quota_partition(day: int) -> str:
    """``quota#YYYY-MM-DD`` for Korea day `day` (days since 1970-01-01 in Seoul)."""
    return f"{QUOTA_PREFIX}{(KOREA_EPOCH + timedelta(days=day)).isoformat()}"


# ---------------------------------------------------------------------------------------------------------
# Client: every store call ends, success or StoreError, within 2 s in total, its one retry included.

STORE_CALL_BUDGET_SECONDS: Final = 2.0
STORE_CONNECT_TIMEOUT_SECONDS: Final = 0.3
STORE_READ_TIMEOUT_SECONDS: Final = 0.6
STORE_MAX_ATTEMPTS: Final = 2
STORE_RETRY_DELAY_SECONDS: Final = 0.05
"""botocore's legacy retry mode waits this long before DynamoDB's first retry; standard mode waits a random
time of up to 1 s, which would not fit the budget."""
# Worst case 2 x (0.3 + 0.6) + 0.05 = 1.85 s; the rest covers name resolution and request signing. The read
# timeout bounds each wait for data, which is what a DynamoDB that stops answering hits.


def store_client_config() -> Config:
    return Config(
        connect_timeout=STORE_CONNECT_TIMEOUT_SECONDS,
        read_timeout=STORE_READ_TIMEOUT_SECONDS,
        retries={"mode": "legacy", "total_max_attempts": STORE_MAX_ATTEMPTS},
    )


def dynamodb_client(*, region_name: str | None = None, endpoint_url: str | None = None) -> DynamoDBClient:
    """The low-level DynamoDB client the store expects (region and credentials from the environment)."""
    return boto3.client(
        "dynamodb", region_name=region_name, endpoint_url=endpoint_url, config=store_client_config()
    )


# ---------------------------------------------------------------------------------------------------------
# The conditions, one per rule of docs/design.md, "Verdict store". Attribute names are written out (none is a
# reserved word) so that an operator can read them exactly as DynamoDB evaluates them.
#
# Clock skew and bad data: `NOT attribute_type(x, :number) OR ... OR x > :latest` treats a stored time that
# is missing, not a number, or more than 60 s ahead of the writer's clock (`:latest`, `:latestBlockEnd` for
# a block, which ends 5 min after its failure) as absent, so it never blocks a current write. The type test
# comes first: nothing compares a value of another type.

CHECK_IS_NEWEST: Final = (
    "(NOT attribute_type(checkedAt, :number) OR checkedAt <= :checkedAt OR checkedAt > :latest)"
    " AND (NOT attribute_type(failedAt, :number) OR failedAt < :checkedAt OR failedAt > :latest)"
)
"""Rule 1: a check older than the stored check, or not newer than the stored failure, is ignored."""

NO_LIVE_BLOCK: Final = (
    "(NOT attribute_type(blockedUntil, :number) OR blockedUntil <= :now OR blockedUntil > :latestBlockEnd)"
)
"""Rule 2 and 4: direct=true may be stored only once no block is live."""

LIVE_BLOCK: Final = (
    "attribute_type(blockedUntil, :number) AND blockedUntil > :now AND blockedUntil <= :latestBlockEnd"
)
"""Rule 2: while this holds, a passing check is stored as direct=false."""

FAILURE_APPLIES: Final = (
    "(NOT attribute_type(failedAt, :number) OR failedAt < :failedAt OR failedAt > :latest)"
    " AND (NOT attribute_type(checkedAt, :number) OR checkedAt < :cooldownEnd OR checkedAt > :latest)"
)
"""Rule 3: a report is ignored if a failure at least as new is stored, or the route was re-checked after
this failure's cooldown ended (the report is stale)."""

CHECKED_NO_LATER_THAN_FAILURE: Final = (
    "(NOT attribute_type(checkedAt, :number) OR checkedAt <= :failedAt OR checkedAt > :latest)"
)
CHECKED_AFTER_FAILURE: Final = (
    "attribute_type(checkedAt, :number) AND checkedAt > :failedAt AND checkedAt <= :latest"
)
"""A failure is itself an observation: checkedAt becomes max(stored checkedAt, failedAt)."""

UNSOUND: Final = {
    "failedAt": "NOT attribute_type(failedAt, :number) OR failedAt > :latest",
    "blockedUntil": "NOT attribute_type(blockedUntil, :number) OR blockedUntil > :latestBlockEnd",
}
"""Repair: a check replaces direct/checkedAt/reason; such a failedAt or blockedUntil beside them is removed.
A valid failure report landing in between makes the condition false, and the repair is dropped."""

RELAY_CHECK_IS_NEWEST: Final = (
    "NOT attribute_type(checkedAt, :number) OR checkedAt <= :checkedAt OR checkedAt > :latest"
)
"""Rule 6: a relay check older than the stored one is ignored."""

SLOT_UNCLAIMED: Final = f"attribute_not_exists({PARTITION_KEY})"
"""At most one probe run per slot."""


def _both(first: str, second: str) -> str:
    # Every condition joined here is an AND of clauses, so joining needs no parentheses (DynamoDB rejects
    # redundant ones).
    return f"{first} AND {second}"


def _clock_values(now: int) -> dict[str, Any]:
    """The values every condition may use: the writer's clock and the latest times it accepts as real."""
    return {
        ":now": now,
        ":latest": now + MAX_CLOCK_SKEW_MS,
        ":latestBlockEnd": now + MAX_CLOCK_SKEW_MS + COOLDOWN_MS,
        ":number": "N",  # the type name attribute_type() compares with, a string
    }


def _used(values: Plain, *expressions: str) -> dict[str, AttributeValueTypeDef]:
    """Only the values the expressions name: DynamoDB rejects a request carrying an unused one."""
    names = {name for expression in expressions for name in re.findall(r":\w+", expression)}
    return _attributes({name: value for name, value in values.items() if name in names})


# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Outcome:
    """A conditional write: applied or refused, and the item as it was before (empty if none or not asked)."""

    applied: bool
    old: Plain


class DynamoVerdictStore:
    """VerdictStore on one DynamoDB table (see the module docstring and docs/verdict-store.md).

    ``on_rejected`` is called once per refused write, from the writing thread (the StaleWriteRejected metric).
    """

    def __init__(
        self, table_name: str, client: DynamoDBClient, *, on_rejected: Callable[[], None] | None = None
    ) -> None:
        self._table_name = table_name
        self._client = client
        self._on_rejected = on_rejected
        self._rejected_writes = 0
        self._rejected_lock = threading.Lock()

    @property
    def rejected_writes(self) -> int:
        """How many writes the ordering rules refused since this store was built (thread-safe)."""
        with self._rejected_lock:
            return self._rejected_writes

    # -- reads ---------------------------------------------------------------------------------------------

    def read_snapshot(self) -> Snapshot:
        """Every verdict in one strongly consistent Query (a second page only if DynamoDB ever splits it)."""
        routes: dict[RouteKey, RouteVerdict] = {}
        relays: dict[RelayGroup, RelayCheck] = {}
        overrides: dict[RouteKey, RouteOverride] = {}
        request: QueryInputTypeDef = {
            "TableName": self._table_name,
            "KeyConditionExpression": f"{PARTITION_KEY} = :partition",
            "ExpressionAttributeValues": _attributes({":partition": VERDICT_PARTITION}),
            "ConsistentRead": True,
        }
        while True:
            page = self._call("Query", partial(self._client.query, **request))
            for item in map(_plain, page.get("Items", [])):
                route = _route_verdict(item)
                if route is not None:
                    routes[route.key] = route
                relay = _relay_check(item)
                if relay is not None:
                    relays[relay.group] = relay
                override = _route_override(item)
                if override is not None:
                    overrides[override.key] = override
            next_start = page.get("LastEvaluatedKey")
            if not next_start:
                return Snapshot(routes=routes, relays=relays, overrides=overrides)
            request = {**request, "ExclusiveStartKey": next_start}

    # -- probe results ---------------------------------------------------------------------------------------

    def write_checks(self, routes: Sequence[RouteCheck], relays: Sequence[RelayCheck], *, now: int) -> None:
        """One conditional write per check (two at most for a passing check during a live block).

        Each write stands alone: an error on one item (DynamoDB answered with an error) does not stop the
        others, and the first such error is raised once all were tried. If DynamoDB does not answer at all,
        the run stops there: every further write would wait out the same timeouts.
        """
        writes = [partial(self._write_route_check, route, now=now) for route in routes]
        writes += [partial(self._write_relay_check, relay, now=now) for relay in relays]
        first_error: StoreError | None = None
        for write in writes:
            try:
                write()
            except _NoAnswer:
                raise
            except StoreError as error:
                first_error = first_error or error
        if first_error is not None:
            raise first_error

    def _write_route_check(self, check: RouteCheck, *, now: int) -> None:
        if self._refused_ahead(check.checked_at, now):
            return
        if check.key in PINNED_TO_RELAY:
            # Rule 5: whatever the probe saw, the pinned key is never a direct route.
            check = RouteCheck(
                check.key, direct=False, checked_at=check.checked_at, reason=Reason.PINNED_RELAY
            )
        if not check.direct:
            outcome = self._store_route_check(check, direct=False, condition=CHECK_IS_NEWEST, now=now)
        else:
            # Rules 1, 2, 4: a passing check restores direct=true only once no block is live ...
            outcome = self._store_route_check(
                check, direct=True, condition=_both(CHECK_IS_NEWEST, NO_LIVE_BLOCK), now=now
            )
            # ... and is kept as direct=false (failedAt/blockedUntil untouched) while one is.
            if not outcome.applied and _live_block(outcome.old, now):
                outcome = self._store_route_check(
                    check, direct=False, condition=_both(CHECK_IS_NEWEST, LIVE_BLOCK), now=now
                )
        self._count_if_refused(outcome)
        if outcome.applied:
            for name in _unsound_failure_attributes(outcome.old, now):
                self._remove_unsound(check.key, name, now=now)

    def _store_route_check(self, check: RouteCheck, *, direct: bool, condition: str, now: int) -> _Outcome:
        values = {":direct": direct, ":checkedAt": check.checked_at, **_clock_values(now)}
        update = "SET direct = :direct, checkedAt = :checkedAt"
        if check.reason is None:
            update += " REMOVE reason"
        else:
            update += ", reason = :reason"
            values[":reason"] = Reason(check.reason).value
        return self._update_route(check.key, update, condition, values)

    def _remove_unsound(self, key: RouteKey, name: str, *, now: int) -> None:
        """Remove a malformed or future failedAt/blockedUntil the check left beside it (a refusal is not counted)."""
        self._update_route(key, f"REMOVE {name}", UNSOUND[name], _clock_values(now))

    def _write_relay_check(self, check: RelayCheck, *, now: int) -> None:
        if self._refused_ahead(check.checked_at, now):
            return
        item: dict[str, Any] = {
            PARTITION_KEY: VERDICT_PARTITION,
            SORT_KEY: relay_sort_key(RelayGroup(check.group)),
            "healthy": check.healthy,
            "checkedAt": check.checked_at,
        }
        if check.reason is not None:
            item["reason"] = Reason(check.reason).value
        values = {":checkedAt": check.checked_at, **_clock_values(now)}
        self._count_if_refused(
            self._conditional(
                "PutItem",
                lambda: self._client.put_item(
                    TableName=self._table_name,
                    Item=_attributes(item),
                    ConditionExpression=RELAY_CHECK_IS_NEWEST,
                    ExpressionAttributeValues=_used(values, RELAY_CHECK_IS_NEWEST),
                ),
            )
        )

    # -- live failures -----------------------------------------------------------------------------------------

    def record_failure(self, key: RouteKey, *, at: int, now: int) -> None:
        """Rule 3: block direct until ``at + COOLDOWN_MS`` unless the report is outdated.

        The failure counts as an observation of the route, so ``checkedAt`` becomes max(stored, at): the first
        write covers "no check after the failure", and only if the stored check is later is it kept. A report
        for the pinned key is not written (rule 5: its item always says pinned-relay). ``now`` is the writer's
        clock: ``at`` more than 60 s ahead of it is refused, and stored times that far ahead count as absent.
        A failure report sets every attribute but a later ``checkedAt``, so it also replaces a malformed item.
        """
        if key in PINNED_TO_RELAY:
            return
        if self._refused_ahead(at, now):
            return
        outcome = self._store_failure(key, at=at, now=now, checked_at_becomes_at=True)
        stored_check = _optional_number(outcome.old, "checkedAt")
        if not outcome.applied and stored_check is not None and stored_check > at:
            outcome = self._store_failure(key, at=at, now=now, checked_at_becomes_at=False)
        self._count_if_refused(outcome)

    def _store_failure(self, key: RouteKey, *, at: int, now: int, checked_at_becomes_at: bool) -> _Outcome:
        update = (
            "SET direct = :false, reason = :unavailable, failedAt = :failedAt, blockedUntil = :cooldownEnd"
        )
        if checked_at_becomes_at:
            update += ", checkedAt = :failedAt"
            condition = _both(FAILURE_APPLIES, CHECKED_NO_LATER_THAN_FAILURE)
        else:
            condition = _both(FAILURE_APPLIES, CHECKED_AFTER_FAILURE)
        values = {
            ":false": False,
            ":unavailable": Reason.UNAVAILABLE.value,
            ":failedAt": at,
            ":cooldownEnd": at + COOLDOWN_MS,
            **_clock_values(now),
        }
        return self._update_route(key, update, condition, values)

    def _update_route(self, key: RouteKey, update: str, condition: str, values: Plain) -> _Outcome:
        """One conditional UpdateItem of the key's verdict item (sending only the values its expressions name).

        The item as it was comes back, applied or not: it shows whether a second write or a repair is needed.
        """
        return self._conditional(
            "UpdateItem",
            lambda: self._client.update_item(
                TableName=self._table_name,
                Key=_key(VERDICT_PARTITION, route_sort_key(RouteKey(key))),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=_used(values, update, condition),
                ReturnValues="ALL_OLD",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ),
        )

    # -- operator overrides ------------------------------------------------------------------------------------

    def put_override(self, override: RouteOverride) -> None:
        """Store the key's override, replacing any earlier one (the last operator to set it wins)."""
        self._call(
            "PutItem",
            lambda: self._client.put_item(
                TableName=self._table_name, Item=_attributes(_override_item(override))
            ),
        )

    def clear_override(self, key: RouteKey, *, now: int) -> RouteOverride | None:
        """Delete the key's override; returns it if it still counted at ``now``, else None (nothing to clear)."""
        response = self._call(
            "DeleteItem",
            lambda: self._client.delete_item(
                TableName=self._table_name,
                Key=_key(VERDICT_PARTITION, override_sort_key(key)),
                ReturnValues="ALL_OLD",
            ),
        )
        old = _route_override(_plain(response.get("Attributes") or {}))
        return old if old is not None and is_active(old, now) else None

    # -- probe slots ---------------------------------------------------------------------------------------------

    def claim_probe_slot(self, slot_start: int, *, trigger: str, now: int) -> bool:
        """True for the first claim of ``slot_start``; False (not counted as a rejected write) afterwards."""
        outcome = self._conditional(
            "PutItem",
            lambda: self._client.put_item(
                TableName=self._table_name,
                Item=_attributes(
                    {
                        PARTITION_KEY: PROBE_PARTITION,
                        SORT_KEY: slot_sort_key(slot_start),
                        "slotStart": slot_start,
                        "trigger": trigger,
                        "claimedAt": now,
                        TTL_ATTRIBUTE: (now + PROBE_SLOT_RETENTION_MS) // SECOND_MS,
                    }
                ),
                ConditionExpression=SLOT_UNCLAIMED,
            ),
        )
        return outcome.applied

    # -- daily quota -------------------------------------------------------------------------------------------------

    def add_daily_lookups(self, day: int, client: str, lookups: int) -> int:
        """QuotaStore: one atomic ``ADD``; the returned total counts every container's lookups of the day."""
        expires_at = (korea_day_end(day) + QUOTA_RETENTION_MS) // SECOND_MS
        response = self._call(
            "UpdateItem",
            lambda: self._client.update_item(
                TableName=self._table_name,
                Key=_key(quota_partition(day), client),
                UpdateExpression=f"ADD lookups :lookups SET {TTL_ATTRIBUTE} = :expiresAt",
                ExpressionAttributeValues=_attributes({":lookups": lookups, ":expiresAt": expires_at}),
                ReturnValues="UPDATED_NEW",
            ),
        )
        total = _optional_number(_plain(response.get("Attributes", {})), "lookups")
        if total is None:
            raise StoreError("DynamoDB UpdateItem returned no total")
        return total

    # -- plumbing --------------------------------------------------------------------------------------------------

    def _conditional(self, operation: str, write: Callable[[], Mapping[str, Any]]) -> _Outcome:
        """Run a conditional write: applied, or refused because its condition did not hold."""
        try:
            response = self._call(operation, write)
        except _ConditionFailed as refused:
            return _Outcome(applied=False, old=_plain(refused.old))
        return _Outcome(applied=True, old=_plain(response.get("Attributes") or {}))

    def _count_if_refused(self, outcome: _Outcome) -> None:
        if not outcome.applied:
            self._count_refused()

    def _refused_ahead(self, at: int, now: int) -> bool:
        """A writer never stores a time more than 60 s ahead of its own clock: such a write counts as refused."""
        if at <= now + MAX_CLOCK_SKEW_MS:
            return False
        self._count_refused()
        return True

    def _count_refused(self) -> None:
        """A write DynamoDB refused, or the store itself (a time too far ahead of the writer's clock)."""
        with self._rejected_lock:
            self._rejected_writes += 1
        if self._on_rejected is not None:
            self._on_rejected()

    @staticmethod
    def _call(operation: str, request: Callable[[], T]) -> T:
        """Every DynamoDB call goes through here.

        A refused condition becomes `_ConditionFailed` (handled by `_conditional`); any other failure becomes a
        StoreError naming only the operation and the error code, never the response text.
        """
        try:
            return request()
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "Unknown")
            if code == "ConditionalCheckFailedException":
                old = cast("Mapping[str, Any]", error.response).get("Item") or {}
                raise _ConditionFailed(old) from None
            raise StoreError(f"DynamoDB {operation} failed: {code}") from None
        except BotoCoreError as error:
            raise _NoAnswer(f"DynamoDB {operation} failed: {type(error).__name__}") from None


class _ConditionFailed(Exception):
    def __init__(self, old: Mapping[str, AttributeValueTypeDef]) -> None:
        super().__init__("conditional write refused")
        self.old = old


class _NoAnswer(StoreError):
    """DynamoDB did not answer (timeout, connection, credentials): every further call would fare the same."""


# Item <-> core types. Unknown keys or malformed items are skipped: a missing verdict only means "use the relay".

_SERIALIZER: Final = TypeSerializer()
_DESERIALIZER: Final = TypeDeserializer()

_ROUTE_KEYS: Final = frozenset(key.value for key in RouteKey)
_OVERRIDE_MODES: Final = frozenset(mode.value for mode in OverrideMode)
_RELAY_GROUPS: Final = frozenset(group.value for group in RelayGroup)
_REASONS: Final = frozenset(reason.value for reason in Reason)

# The Python type of each attribute an item must have, and of each it may have, as boto3 deserializes them.
_ROUTE_REQUIRED: Final = {"direct": bool, "checkedAt": Decimal}
_ROUTE_OPTIONAL: Final = {"reason": str, "failedAt": Decimal, "blockedUntil": Decimal}
_RELAY_REQUIRED: Final = {"healthy": bool, "checkedAt": Decimal}
_RELAY_OPTIONAL: Final = {"reason": str}
_OVERRIDE_REQUIRED: Final = {"mode": str, "reason": str, "createdAt": Decimal, TTL_ATTRIBUTE: Decimal}


def _attributes(plain: Plain) -> dict[str, AttributeValueTypeDef]:
    return {name: _SERIALIZER.serialize(value) for name, value in plain.items()}


def _plain(item: Mapping[str, AttributeValueTypeDef]) -> dict[str, Any]:
    return {name: _DESERIALIZER.deserialize(value) for name, value in item.items()}


def _well_formed(item: Plain, required: Mapping[str, type], optional: Mapping[str, type]) -> bool:
    """The required attributes are present, and each known attribute present has its type."""
    if not all(name in item for name in required):
        return False
    expected = {**required, **optional}
    return all(isinstance(item[name], expected[name]) for name in expected.keys() & item.keys())


def _live_block(item: Plain, now: int) -> bool:
    """The item holds a block that is running at `now` (one ending too far ahead is not real)."""
    blocked_until = _optional_number(item, "blockedUntil")
    return blocked_until is not None and now < blocked_until <= now + MAX_CLOCK_SKEW_MS + COOLDOWN_MS


def _unsound_failure_attributes(item: Plain, now: int) -> list[str]:
    """The item's failedAt/blockedUntil that are not a number, or further ahead than a writer may stamp."""
    latest = {"failedAt": now + MAX_CLOCK_SKEW_MS, "blockedUntil": now + MAX_CLOCK_SKEW_MS + COOLDOWN_MS}
    unsound = []
    for name, limit in latest.items():
        value = _optional_number(item, name)
        if name in item and (value is None or value > limit):
            unsound.append(name)
    return unsound


def _key(partition: str, sort: str) -> dict[str, AttributeValueTypeDef]:
    return _attributes({PARTITION_KEY: partition, SORT_KEY: sort})


def _optional_number(item: Plain, name: str) -> int | None:
    value = item.get(name)
    return int(value) if isinstance(value, Decimal) else None


def _reason(item: Plain) -> Reason | None:
    raw = item.get("reason")
    return Reason(raw) if raw in _REASONS else None


def _sort_key_suffix(item: Plain, prefix: str) -> str | None:
    sort = item.get(SORT_KEY)
    return sort.removeprefix(prefix) if isinstance(sort, str) and sort.startswith(prefix) else None


def _route_verdict(item: Plain) -> RouteVerdict | None:
    parsed = _verdict_basics(item, ROUTE_PREFIX, _ROUTE_KEYS, _ROUTE_REQUIRED, _ROUTE_OPTIONAL, "direct")
    if parsed is None:
        return None
    name, direct, checked_at = parsed
    key = RouteKey(name)
    return RouteVerdict(
        key=key,
        direct=direct and key not in PINNED_TO_RELAY,
        checked_at=checked_at,
        reason=_reason(item),
        failed_at=_optional_number(item, "failedAt"),
        blocked_until=_optional_number(item, "blockedUntil"),
    )


def _relay_check(item: Plain) -> RelayCheck | None:
    parsed = _verdict_basics(item, RELAY_PREFIX, _RELAY_GROUPS, _RELAY_REQUIRED, _RELAY_OPTIONAL, "healthy")
    if parsed is None:
        return None
    name, healthy, checked_at = parsed
    return RelayCheck(group=RelayGroup(name), healthy=healthy, checked_at=checked_at, reason=_reason(item))


def _verdict_basics(
    item: Plain,
    prefix: str,
    names: frozenset[str],
    required: Mapping[str, type],
    optional: Mapping[str, type],
    flag: str,
) -> tuple[str, bool, int] | None:
    """A well-formed verdict item's name, its boolean `flag` and its `checkedAt`; None for any other item."""
    name = _sort_key_suffix(item, prefix)
    if name not in names or not _well_formed(item, required, optional):
        return None
    return name, item[flag], int(item["checkedAt"])


def _override_item(override: RouteOverride) -> dict[str, Any]:
    # The expiry is a whole second (functions/core/overrides.py), so the TTL attribute holds it exactly.
    return {
        PARTITION_KEY: VERDICT_PARTITION,
        SORT_KEY: override_sort_key(RouteKey(override.key)),
        "mode": OverrideMode(override.mode).value,
        "reason": override.reason,
        "createdAt": override.created_at,
        TTL_ATTRIBUTE: override.expires_at // SECOND_MS,
    }


def _route_override(item: Plain) -> RouteOverride | None:
    name = _sort_key_suffix(item, OVERRIDE_PREFIX)
    if (
        name not in _ROUTE_KEYS
        or not _well_formed(item, _OVERRIDE_REQUIRED, {})
        or item["mode"] not in _OVERRIDE_MODES
    ):
        return None
    return RouteOverride(
        key=RouteKey(name),
        mode=OverrideMode(item["mode"]),
        reason=item["reason"],
        created_at=int(item["createdAt"]),
        expires_at=int(item[TTL_ATTRIBUTE]) * SECOND_MS,
    )
