"""Least privilege: each function gets exactly the table actions the store adapter calls for it."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

import pytest
from mypy_boto3_dynamodb import DynamoDBClient

from functions.adapters.dynamo_store import DynamoVerdictStore, quota_partition
from functions.core import RouteKey
from functions.core.model import COOLDOWN_MS
from infra.api import API_HANDLER, MCP_HANDLER, OPS_HANDLER
from infra.probe import PROBE_HANDLER
from tests.support.aws import TABLE, handler_on

pytestmark = pytest.mark.infra

# DynamoVerdictStore: read_snapshot = Query; record_failure = UpdateItem; write_checks = UpdateItem (routes)
# + PutItem (relays); claim_probe_slot = PutItem; add_daily_lookups (the lookup function's quota) = UpdateItem;
# put_override = PutItem; clear_override = DeleteItem.
EXPECTED_TABLE_ACTIONS = {
    PROBE_HANDLER: {"dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem"},
    OPS_HANDLER: {"dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
    API_HANDLER: {"dynamodb:Query", "dynamodb:UpdateItem"},
    MCP_HANDLER: {"dynamodb:Query", "dynamodb:UpdateItem"},
}
LOOKUP_HANDLERS = (API_HANDLER, MCP_HANDLER)
"""They write failure reports and daily counts only, each limited to its items and attributes."""
SECRET_READ_ACTIONS = {"secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"}
XRAY_ACTIONS = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _actions_on(statements: list[dict[str, Any]], resource: str | dict[str, Any]) -> set[str]:
    return {
        action
        for statement in statements
        if resource in _as_list(statement["Resource"])
        for action in _as_list(statement["Action"])
    }


def _role_of(props: dict[str, Any]) -> str:
    role: str = props["Role"]["Fn::GetAtt"][0]
    return role


@pytest.mark.parametrize("handler", sorted(EXPECTED_TABLE_ACTIONS))
def test_table_actions_are_exactly_those_the_store_uses(synthesized, handler):
    table_id, _ = synthesized.only("AWS::DynamoDB::Table")
    _, props = synthesized.functions_by_handler()[handler]
    statements = synthesized.role_statements(_role_of(props))

    assert _actions_on(statements, {"Fn::GetAtt": [table_id, "Arn"]}) == EXPECTED_TABLE_ACTIONS[handler]
    every_action = {action for s in statements for action in _as_list(s["Action"])}
    assert {a for a in every_action if a.startswith("dynamodb:")} == EXPECTED_TABLE_ACTIONS[handler]
    assert all(s["Effect"] == "Allow" for s in statements)


@pytest.mark.parametrize("handler", sorted(EXPECTED_TABLE_ACTIONS))
def test_secret_is_read_only(synthesized, handler):
    secret_id, _ = synthesized.only("AWS::SecretsManager::Secret")
    _, props = synthesized.functions_by_handler()[handler]
    statements = synthesized.role_statements(_role_of(props))

    assert _actions_on(statements, {"Ref": secret_id}) == SECRET_READ_ACTIONS
    every_action = {action for s in statements for action in _as_list(s["Action"])}
    assert {a for a in every_action if a.startswith("secretsmanager:")} == SECRET_READ_ACTIONS


@pytest.mark.parametrize("handler", sorted(EXPECTED_TABLE_ACTIONS))
def test_only_xray_is_granted_on_every_resource(synthesized, handler):
    _, props = synthesized.functions_by_handler()[handler]
    statements = synthesized.role_statements(_role_of(props))

    assert _actions_on(statements, "*") == XRAY_ACTIONS


@pytest.mark.parametrize("handler", sorted(EXPECTED_TABLE_ACTIONS))
def test_role_has_no_managed_policies_and_logs_only_to_its_group(synthesized, handler):
    _, props = synthesized.functions_by_handler()[handler]
    role_id = _role_of(props)
    role = synthesized.template["Resources"][role_id]["Properties"]
    assert "ManagedPolicyArns" not in role

    log_group_id = props["LoggingConfig"]["LogGroup"]["Ref"]
    log_actions = _actions_on(synthesized.role_statements(role_id), {"Fn::GetAtt": [log_group_id, "Arn"]})
    assert log_actions == {"logs:CreateLogStream", "logs:PutLogEvents"}


# --- the lookup roles' writes, down to items and attributes ------------------------------------------------

EXPRESSION_WORDS = {"SET", "REMOVE", "ADD", "DELETE", "AND", "OR", "NOT", "BETWEEN", "IN"}
EXPRESSION_FUNCTIONS = {"attribute_type", "attribute_exists", "attribute_not_exists", "if_not_exists", "size"}


def _table_statements(synthesized: Any, handler: str) -> list[dict[str, Any]]:
    table_id, _ = synthesized.only("AWS::DynamoDB::Table")
    _, props = synthesized.functions_by_handler()[handler]
    statements = synthesized.role_statements(_role_of(props))
    return [s for s in statements if {"Fn::GetAtt": [table_id, "Arn"]} in _as_list(s["Resource"])]


def _context_of(request: dict[str, Any]) -> dict[str, list[str]]:
    """The condition keys DynamoDB sets for an UpdateItem: the partition key's value, and every attribute
    the request names (its key's and its expressions', attribute names written out as the store writes them)."""
    expressions = " ".join(request.get(name, "") for name in ("UpdateExpression", "ConditionExpression"))
    named = set(re.findall(r"(?<![:#\w])[A-Za-z_]\w*", expressions)) - EXPRESSION_WORDS - EXPRESSION_FUNCTIONS
    return {
        "dynamodb:LeadingKeys": [request["Key"]["pk"]["S"]],
        "dynamodb:Attributes": sorted(named | set(request["Key"])),
    }


def _condition_holds(operator: str, key: str, allowed: Any, context: dict[str, list[str]]) -> bool:
    values = context.get(key)
    if operator == "Null":
        return bool((values is None) == (allowed == "true"))
    patterns = _as_list(allowed)
    if operator == "ForAllValues:StringEquals":
        return all(value in patterns for value in values or [])
    if operator == "ForAllValues:StringLike":
        return all(any(fnmatchcase(value, p) for p in patterns) for value in values or [])
    raise AssertionError(f"an operator this check does not know: {operator}")


def allowed_by(statements: list[dict[str, Any]], action: str, request: dict[str, Any]) -> bool:
    """IAM's answer for one request from these Allow statements (the operators they use)."""
    context = _context_of(request)
    return any(
        action in _as_list(statement["Action"])
        and all(
            _condition_holds(operator, key, allowed, context)
            for operator, keys in statement.get("Condition", {}).items()
            for key, allowed in keys.items()
        )
        for statement in statements
    )


@pytest.mark.parametrize("handler", LOOKUP_HANDLERS)
def test_lookup_roles_write_only_failure_reports_and_counts_by_partition_and_attribute(synthesized, handler):
    writes = [
        s for s in _table_statements(synthesized, handler) if "dynamodb:UpdateItem" in _as_list(s["Action"])
    ]

    assert all("Condition" in statement for statement in writes)  # no UpdateItem on the whole table
    conditions = sorted((s["Condition"] for s in writes), key=str)
    assert conditions == sorted(
        [
            {
                "ForAllValues:StringEquals": {
                    "dynamodb:LeadingKeys": ["verdict"],
                    "dynamodb:Attributes": [
                        "pk",
                        "sk",
                        "direct",
                        "reason",
                        "failedAt",
                        "blockedUntil",
                        "checkedAt",
                    ],
                },
                "Null": {"dynamodb:LeadingKeys": "false", "dynamodb:Attributes": "false"},
            },
            {
                "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["quota#*"]},
                "ForAllValues:StringEquals": {"dynamodb:Attributes": ["pk", "sk", "lookups", "expiresAt"]},
                "Null": {"dynamodb:LeadingKeys": "false", "dynamodb:Attributes": "false"},
            },
        ],
        key=str,
    )


@pytest.mark.parametrize("handler", LOOKUP_HANDLERS)
def test_every_write_the_store_makes_for_a_lookup_is_allowed(synthesized, handler, dynamodb: DynamoDBClient):
    """The store's real requests (on moto) against the role's statements: a failure report in each of its
    forms, and a daily count. An attribute the store starts to write without the grant fails here."""
    statements = _table_statements(synthesized, handler)
    store = DynamoVerdictStore(TABLE, dynamodb)
    now = 1_800_000_000_000
    later_check = {":later": {"N": str(now + 1_000)}}
    dynamodb.update_item(  # a probe check after the failure that will be reported for this route
        TableName=TABLE,
        Key={"pk": {"S": "verdict"}, "sk": {"S": f"route#{RouteKey.OY_STOCK_STORES.value}"}},
        UpdateExpression="SET checkedAt = :later",
        ExpressionAttributeValues=later_check,
    )
    requests: list[dict[str, Any]] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        requests.append(params)

    with handler_on(dynamodb, "provide-client-params.dynamodb.UpdateItem", record):
        store.record_failure(RouteKey.CU_STOCK, at=now, now=now)
        store.record_failure(RouteKey.CU_STOCK, at=now - COOLDOWN_MS, now=now)  # outdated: refused
        store.record_failure(RouteKey.OY_STOCK_STORES, at=now, now=now)
        store.add_daily_lookups(20_000, "c1", 3)

    expressions = [request["UpdateExpression"] for request in requests]
    assert any("checkedAt = :failedAt" in e for e in expressions)  # the failure is the newest observation
    assert any(e.startswith("SET direct") and "checkedAt" not in e for e in expressions)  # a check came later
    assert any(e.startswith("ADD lookups") for e in expressions)
    assert all(allowed_by(statements, "dynamodb:UpdateItem", request) for request in requests)


VERDICT = {"pk": {"S": "verdict"}, "sk": {"S": "override#cu-stock"}}


@pytest.mark.parametrize(
    "request_",
    [
        # an override forged or changed: its mode, creation and expiry are not a failure report's attributes
        {"Key": VERDICT, "UpdateExpression": "SET mode = :relay, createdAt = :now, expiresAt = :later"},
        {"Key": VERDICT, "UpdateExpression": "SET expiresAt = :later"},
        # a relay check or route verdict given attributes a failure report never writes
        {"Key": {"pk": {"S": "verdict"}, "sk": {"S": "relay#dtryx"}}, "UpdateExpression": "SET healthy = :t"},
        # the probe's slots, another partition
        {"Key": {"pk": {"S": "probe"}, "sk": {"S": "slot#0"}}, "UpdateExpression": "SET claimedAt = :now"},
        # a count's partition with a verdict's attributes, and a count outside the quota partitions
        {
            "Key": {"pk": {"S": quota_partition(20_000)}, "sk": {"S": "c1"}},
            "UpdateExpression": "SET direct = :t",
        },
        {"Key": {"pk": {"S": "other"}, "sk": {"S": "c1"}}, "UpdateExpression": "ADD lookups :n"},
    ],
)
@pytest.mark.parametrize("handler", LOOKUP_HANDLERS)
def test_a_lookup_role_cannot_write_overrides_probe_slots_or_other_items(synthesized, handler, request_):
    statements = _table_statements(synthesized, handler)
    assert not allowed_by(statements, "dynamodb:UpdateItem", request_)
    for action in ("dynamodb:PutItem", "dynamodb:DeleteItem"):
        assert not allowed_by(statements, action, request_)
