"""The verdict table mirrors the store adapter's own definition (docs/design.md, "Verdict store")."""

from __future__ import annotations

import pytest

from functions.adapters import dynamo_store

pytestmark = pytest.mark.infra


def test_key_schema_and_attributes_equal_table_definition(synthesized):
    _, table = synthesized.only("AWS::DynamoDB::Table")
    definition = dynamo_store.table_definition("any-name")

    assert table["Properties"]["KeySchema"] == definition["KeySchema"]
    assert sorted(table["Properties"]["AttributeDefinitions"], key=str) == sorted(
        definition["AttributeDefinitions"], key=str
    )
    assert table["Properties"]["BillingMode"] == definition["BillingMode"] == "PAY_PER_REQUEST"


def test_point_in_time_recovery_ttl_and_retention(synthesized):
    _, table = synthesized.only("AWS::DynamoDB::Table")

    assert table["Properties"]["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["Properties"]["TimeToLiveSpecification"] == {
        "AttributeName": dynamo_store.TTL_ATTRIBUTE,
        "Enabled": True,
    }
    assert table["DeletionPolicy"] == "Retain"
    assert table["UpdateReplacePolicy"] == "Retain"
    # CloudFormation names it: a retained table must not block the next deploy of the same stack.
    assert "TableName" not in table["Properties"]
