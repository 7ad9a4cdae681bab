"""The verdict table, built from the same key schema the store adapter uses (docs/verdict-store.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from functions.adapters.dynamo_store import (
    PARTITION_KEY,
    QUOTA_PREFIX,
    SORT_KEY,
    TTL_ATTRIBUTE,
    VERDICT_PARTITION,
    table_definition,
)

# Exactly the calls the store adapter makes: one Query reads the whole snapshot; a live failure report is a
# conditional UpdateItem; probe results are conditional UpdateItem (routes) / PutItem (relays), and the slot
# claim is a conditional PutItem; the daily quota adds to a client's count with an atomic UpdateItem; an
# operator sets an override with PutItem and clears it with DeleteItem.
READ_SNAPSHOT_ACTIONS = ("dynamodb:Query",)
REPORT_FAILURE_ACTIONS = ("dynamodb:UpdateItem",)
COUNT_LOOKUPS_ACTIONS = ("dynamodb:UpdateItem",)
WRITE_PROBE_ACTIONS = ("dynamodb:PutItem", "dynamodb:UpdateItem")
WRITE_OVERRIDE_ACTIONS = ("dynamodb:PutItem", "dynamodb:DeleteItem")

# The lookup functions' writes, down to the items and attributes (IAM's `dynamodb:LeadingKeys`, the partition
# key, and `dynamodb:Attributes`, every attribute a request names, keys included). A failure report updates a
# route verdict in the verdict partition: DynamoVerdictStore.record_failure's attributes, which its conditions
# read too. A daily count adds to `quota#<day>` items: add_daily_lookups's.
# What IAM cannot say: a sort key. Overrides and relay checks share the verdict partition with the route
# verdicts (the one snapshot Query reads them all), so these roles can still update the attributes named here
# on those items too: never an override's mode, creation or expiry (so never create or change one), but the
# `reason` every verdict item has and a relay check's `checkedAt`; removing one leaves that item malformed,
# read as absent (no override; no relay check). Closing that needs the keys or attribute names apart
# (docs/verdict-store.md, "Who writes what").
FAILURE_REPORT_ATTRIBUTES = (
    PARTITION_KEY,
    SORT_KEY,
    "direct",
    "reason",
    "failedAt",
    "blockedUntil",
    "checkedAt",
)
QUOTA_COUNT_ATTRIBUTES = (PARTITION_KEY, SORT_KEY, "lookups", TTL_ATTRIBUTE)

_ATTRIBUTE_TYPES = {
    "S": dynamodb.AttributeType.STRING,
    "N": dynamodb.AttributeType.NUMBER,
    "B": dynamodb.AttributeType.BINARY,
}


def _key_attributes(definition: Mapping[str, Any]) -> tuple[dynamodb.Attribute, dynamodb.Attribute | None]:
    types = {a["AttributeName"]: a["AttributeType"] for a in definition["AttributeDefinitions"]}
    keys: dict[str, dynamodb.Attribute] = {}
    schema: Sequence[Mapping[str, str]] = definition["KeySchema"]
    for element in schema:
        name = element["AttributeName"]
        keys[element["KeyType"]] = dynamodb.Attribute(name=name, type=_ATTRIBUTE_TYPES[types[name]])
    return keys["HASH"], keys.get("RANGE")


class VerdictTable(Construct):
    """On-demand, point-in-time recovery, TTL on probe-slot, quota and override items, kept when the stack is
    deleted."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        # The physical name is left to CloudFormation (a retained table would block a redeploy);
        # the name passed here only fills the definition.
        partition_key, sort_key = _key_attributes(table_definition("route-health"))

        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=partition_key,
            sort_key=sort_key,
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            removal_policy=RemovalPolicy.RETAIN,
        )

    def grant_read_snapshot(self, grantee: iam.IGrantable) -> None:
        self.table.grant(grantee, *READ_SNAPSHOT_ACTIONS)

    def grant_report_failures(self, grantee: iam.IGrantable) -> None:
        """Live failure reports: route verdicts in the verdict partition, their failure attributes only."""
        self._grant_items(
            grantee,
            REPORT_FAILURE_ACTIONS,
            {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": [VERDICT_PARTITION]}},
            FAILURE_REPORT_ATTRIBUTES,
        )

    def grant_count_lookups(self, grantee: iam.IGrantable) -> None:
        """The lookup function's daily quota counters: the day partitions, their count attributes only."""
        self._grant_items(
            grantee,
            COUNT_LOOKUPS_ACTIONS,
            {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{QUOTA_PREFIX}*"]}},
            QUOTA_COUNT_ATTRIBUTES,
        )

    def _grant_items(
        self,
        grantee: iam.IGrantable,
        actions: Sequence[str],
        partitions: Mapping[str, Mapping[str, Sequence[str]]],
        attributes: Sequence[str],
    ) -> None:
        # `ForAllValues` holds for a key the request lacks, so both keys must be present (`Null`: false).
        conditions: dict[str, Any] = {
            **partitions,
            "ForAllValues:StringEquals": {
                **partitions.get("ForAllValues:StringEquals", {}),
                "dynamodb:Attributes": list(attributes),
            },
            "Null": {"dynamodb:LeadingKeys": "false", "dynamodb:Attributes": "false"},
        }
        iam.Grant.add_to_principal(
            grantee=grantee,
            actions=list(actions),
            resource_arns=[self.table.table_arn],
            conditions=conditions,
        )

    def grant_probe_writes(self, grantee: iam.IGrantable) -> None:
        """Claim a probe slot and write check results (the scheduled probe and the operator POST)."""
        self.table.grant(grantee, *WRITE_PROBE_ACTIONS)

    def grant_override_writes(self, grantee: iam.IGrantable) -> None:
        """Set and clear operator overrides (the operator function)."""
        self.table.grant(grantee, *WRITE_OVERRIDE_ACTIONS)
