"""The verdict table, built from the same key schema the store adapter uses (docs/verdict-store.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from functions.adapters.dynamo_store import TTL_ATTRIBUTE, table_definition

# Exactly the calls the store adapter makes: one Query reads the whole snapshot; a live failure report is a
# conditional UpdateItem; probe results are conditional UpdateItem (routes) / PutItem (relays), and the slot
# claim is a conditional PutItem; the daily quota adds to a client's count with an atomic UpdateItem; an
# operator sets an override with PutItem and clears it with DeleteItem.
READ_SNAPSHOT_ACTIONS = ("dynamodb:Query",)
REPORT_FAILURE_ACTIONS = ("dynamodb:UpdateItem",)
COUNT_LOOKUPS_ACTIONS = ("dynamodb:UpdateItem",)
WRITE_PROBE_ACTIONS = ("dynamodb:PutItem", "dynamodb:UpdateItem")
WRITE_OVERRIDE_ACTIONS = ("dynamodb:PutItem", "dynamodb:DeleteItem")

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
        self.table.grant(grantee, *REPORT_FAILURE_ACTIONS)

    def grant_count_lookups(self, grantee: iam.IGrantable) -> None:
        """The lookup function's daily quota counters."""
        self.table.grant(grantee, *COUNT_LOOKUPS_ACTIONS)

    def grant_probe_writes(self, grantee: iam.IGrantable) -> None:
        """Claim a probe slot and write check results (the scheduled probe and the operator POST)."""
        self.table.grant(grantee, *WRITE_PROBE_ACTIONS)

    def grant_override_writes(self, grantee: iam.IGrantable) -> None:
        """Set and clear operator overrides (the operator function)."""
        self.table.grant(grantee, *WRITE_OVERRIDE_ACTIONS)
