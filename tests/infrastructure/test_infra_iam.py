"""Least privilege: each function gets exactly the table actions the store adapter calls for it."""

from __future__ import annotations

from typing import Any

import pytest

from infra.api import API_HANDLER, OPS_HANDLER
from infra.probe import PROBE_HANDLER

pytestmark = pytest.mark.infra

# DynamoVerdictStore: read_snapshot = Query; record_failure = UpdateItem; write_checks = UpdateItem (routes)
# + PutItem (relays); claim_probe_slot = PutItem; add_daily_lookups (the lookup function's quota) = UpdateItem;
# put_override = PutItem; clear_override = DeleteItem.
EXPECTED_TABLE_ACTIONS = {
    PROBE_HANDLER: {"dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem"},
    OPS_HANDLER: {"dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
    API_HANDLER: {"dynamodb:Query", "dynamodb:UpdateItem"},
}
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
