"""The custom resource that gives the edge its origin key (infra/origin_key.py), on moto's Secrets Manager and a
local stand-in for CloudFormation's response URL: it adds the key once, keeps every other value, and answers
CloudFormation whatever happens, without a secret value in the answer."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import SimpleNamespace
from typing import Any

import pytest
from mypy_boto3_secretsmanager import SecretsManagerClient

from infra import origin_key
from tests.support.aws import REGION

pytestmark = pytest.mark.infra

KEY = "EDGE_ORIGIN_SECRET"
OPERATOR_VALUES = {"HEALTH_CHECK_SECRET": "hc-Zq81", "OY_RELAY_TOKEN": "oy-Xk27"}


@pytest.fixture
def secret(secretsmanager: SecretsManagerClient) -> str:
    arn = secretsmanager.create_secret(Name="route-health", SecretString=json.dumps(OPERATOR_VALUES))["ARN"]
    return arn


def values(client: SecretsManagerClient, secret_id: str) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(client.get_secret_value(SecretId=secret_id)["SecretString"])
    return loaded


def test_the_key_is_added_once_beside_the_operators_values(
    secretsmanager: SecretsManagerClient, secret: str
) -> None:
    assert origin_key.ensure_key(secretsmanager, secret, KEY) is True
    added = values(secretsmanager, secret)
    assert {name: added[name] for name in OPERATOR_VALUES} == OPERATOR_VALUES
    assert len(added[KEY]) >= 40

    assert origin_key.ensure_key(secretsmanager, secret, KEY) is False  # a later deploy keeps it
    assert values(secretsmanager, secret) == added


def test_a_blank_key_is_replaced_by_a_generated_one(
    secretsmanager: SecretsManagerClient, secret: str
) -> None:
    secretsmanager.put_secret_value(SecretId=secret, SecretString=json.dumps({**OPERATOR_VALUES, KEY: " "}))

    assert origin_key.ensure_key(secretsmanager, secret, KEY) is True
    assert values(secretsmanager, secret)[KEY].strip()


class _CloudFormation(BaseHTTPRequestHandler):
    answers: list[dict[str, Any]]

    def do_PUT(self) -> None:
        length = int(self.headers["Content-Length"])
        type(self).answers.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        """Quiet."""


@pytest.fixture
def response_url() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    answers: list[dict[str, Any]] = []
    handler = type("Handler", (_CloudFormation,), {"answers": answers})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/signed", answers
    finally:
        server.shutdown()
        server.server_close()


def cfn_event(kind: str, secret: str, url: str) -> dict[str, Any]:
    return {
        "RequestType": kind,
        "ResponseURL": url,
        "StackId": "arn:aws:cloudformation:ap-northeast-2:123456789012:stack/RouteHealth-prod/1",
        "RequestId": "request-1",
        "LogicalResourceId": "EdgeOriginKey",
        "ResourceProperties": {"ServiceToken": "arn:aws:lambda:fn", "SecretId": secret, "Key": KEY},
    }


@pytest.mark.parametrize("kind", ["Create", "Update", "Delete"])
def test_the_handler_answers_cloudformation(
    secretsmanager: SecretsManagerClient,
    secret: str,
    response_url: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    url, answers = response_url

    origin_key.handler(cfn_event(kind, secret, url), SimpleNamespace(log_stream_name="stream"))

    (answer,) = answers
    assert answer["Status"] == "SUCCESS"
    assert answer["PhysicalResourceId"] == f"{secret}#{KEY}"
    assert (answer["RequestId"], answer["LogicalResourceId"]) == ("request-1", "EdgeOriginKey")
    assert (KEY in values(secretsmanager, secret)) is (kind != "Delete")  # a delete leaves the secret alone


def test_a_failure_is_answered_without_any_value(
    secretsmanager: SecretsManagerClient,
    response_url: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    not_json = secretsmanager.create_secret(Name="plain", SecretString="hc-Zq81 not json")["ARN"]
    url, answers = response_url

    origin_key.handler(cfn_event("Create", not_json, url), SimpleNamespace(log_stream_name="stream"))

    (answer,) = answers
    assert answer["Status"] == "FAILED"
    assert answer["Reason"].startswith("JSONDecodeError")
    assert "hc-Zq81" not in json.dumps(answer) + capsys.readouterr().out


def test_the_inline_code_fits_cloudformations_limit() -> None:
    from pathlib import Path

    assert len(Path(origin_key.__file__).read_bytes()) < 4096  # a ZipFile property holds at most 4 KB
