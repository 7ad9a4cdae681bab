"""Custom resource (inline Lambda code, standard library and boto3 only): the edge's origin key.

On create and update it adds a generated value under `Key` to the stack's JSON secret when the key is missing
or blank, keeping every other key (the operator's relay tokens); an existing value is kept. Nothing is done on
delete: the value is harmless once no distribution sends it. Error reasons name the error type, never a value.
"""

from __future__ import annotations

import json
import secrets
import urllib.request
from typing import TYPE_CHECKING, Any

import boto3

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

KEY_BYTES = 36
"""48 URL-safe characters: safe in an HTTP header."""


def ensure_key(client: SecretsManagerClient, secret_id: str, key: str) -> bool:
    """Adds `key` with a generated value unless it has one; True when it was added."""
    values = json.loads(client.get_secret_value(SecretId=secret_id)["SecretString"])
    if not isinstance(values, dict):
        raise TypeError("the secret is not a JSON object")
    if str(values.get(key) or "").strip():
        return False
    values[key] = secrets.token_urlsafe(KEY_BYTES)
    client.put_secret_value(SecretId=secret_id, SecretString=json.dumps(values))
    return True


def handler(event: dict[str, Any], context: Any) -> None:
    properties = event["ResourceProperties"]
    status, reason = "SUCCESS", ""
    try:
        if event["RequestType"] in ("Create", "Update"):
            ensure_key(boto3.client("secretsmanager"), properties["SecretId"], properties["Key"])
    except Exception as error:  # any failure must still answer CloudFormation
        status, reason = "FAILED", f"{type(error).__name__} (the log has no secret value either)"
        print(f"origin key not ensured: {type(error).__name__}")
    respond(event, context, status, reason)


def respond(event: dict[str, Any], context: Any, status: str, reason: str) -> None:
    """CloudFormation's answer, PUT to the pre-signed `ResponseURL`."""
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason or f"see {context.log_stream_name}",
            "PhysicalResourceId": f"{event['ResourceProperties']['SecretId']}#{event['ResourceProperties']['Key']}",
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
        }
    ).encode()
    request = urllib.request.Request(  # noqa: S310 - CloudFormation's https URL
        event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": ""}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
        answer.read()
