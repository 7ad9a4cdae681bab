"""moto started once per test module, emptied before each test (a pytest plugin: tests/conftest.py loads it).

Building a boto3 client costs 0.1-0.3 s and starting moto more; emptying moto's backends costs about a
millisecond. So a module shares one mock and one client per service, and every test still starts from empty
backends. A test that registers a botocore event handler on a shared client uses `handler_on`, so the
handler ends with the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.models import MockAWS
from mypy_boto3_dynamodb import DynamoDBClient
from mypy_boto3_secretsmanager import SecretsManagerClient

from functions.adapters.dynamo_store import DynamoVerdictStore, dynamodb_client, table_definition

REGION = "ap-northeast-2"
TABLE = "route-health-test"


@pytest.fixture(scope="module")
def module_aws() -> Iterator[MockAWS]:
    with mock_aws() as mock:
        yield mock


@pytest.fixture
def aws(module_aws: MockAWS) -> MockAWS:
    """The module's mock, with every backend emptied for this test."""
    module_aws.reset()
    return module_aws


@pytest.fixture(scope="module")
def module_dynamodb(module_aws: MockAWS) -> DynamoDBClient:
    return dynamodb_client(region_name=REGION)


@pytest.fixture
def dynamodb(aws: MockAWS, module_dynamodb: DynamoDBClient) -> DynamoDBClient:
    """The store's DynamoDB client (its production config) against an empty moto holding only `TABLE`."""
    module_dynamodb.create_table(**table_definition(TABLE))
    return module_dynamodb


@pytest.fixture
def store(dynamodb: DynamoDBClient) -> DynamoVerdictStore:
    return DynamoVerdictStore(TABLE, dynamodb)


@pytest.fixture(scope="module")
def module_secretsmanager(module_aws: MockAWS) -> SecretsManagerClient:
    return boto3.client("secretsmanager", region_name=REGION)


@pytest.fixture
def secretsmanager(aws: MockAWS, module_secretsmanager: SecretsManagerClient) -> SecretsManagerClient:
    """A Secrets Manager client against an empty moto."""
    return module_secretsmanager


@contextmanager
def handler_on(client: Any, event: str, handler: Callable[..., Any]) -> Iterator[None]:
    """`handler` registered on `client`'s botocore events for the block only."""
    client.meta.events.register(event, handler)
    try:
        yield
    finally:
        client.meta.events.unregister(event, handler)
