"""The one Secrets Manager secret (docs/design.md#configuration-and-secrets): a generated HEALTH_CHECK_SECRET;
operators add the relay tokens and Cloudflare Access keys to the same JSON (docs/deploy.md, "Set the relay secrets")."""

from __future__ import annotations

import json

from aws_cdk import aws_iam as iam
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.suppressions import acknowledge

HEALTH_CHECK_SECRET_KEY = "HEALTH_CHECK_SECRET"  # noqa: S105 - the JSON key name, not a value


class RouteHealthSecret(Construct):
    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.secret = secretsmanager.Secret(
            self,
            "Secret",
            description="Route Health: operator health-check secret, relay tokens and Cloudflare Access keys (JSON)",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                secret_string_template=json.dumps({}),
                generate_string_key=HEALTH_CHECK_SECRET_KEY,
                password_length=48,
                exclude_punctuation=True,  # safe in headers and shells without quoting
            ),
        )
        acknowledge(
            self.secret,
            "AwsSolutions-SMG4",
            "Relay tokens and Access keys are issued outside AWS and rotated by the operator "
            "(docs/deploy.md, 'Set the relay secrets'); no rotation Lambda could obtain new ones.",
        )

    def grant_read(self, grantee: iam.IGrantable) -> None:
        self.secret.grant_read(grantee)
