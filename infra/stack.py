"""The Route Health stack: composes the table, packaging, secret, probe, API and observability constructs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from infra.api import HttpApi
from infra.environment import CALLS_UNTRACED, DEFAULT_LOG_LEVEL, POWERTOOLS_ENVIRONMENT, RUNTIME_ENVIRONMENT
from infra.function import SharedResources
from infra.observability import DEFAULT_RUNBOOK_URL, Observability
from infra.packaging import LambdaPackaging
from infra.probe import Probe
from infra.secret import RouteHealthSecret
from infra.table import VerdictTable

DEFAULT_STAGE = "prod"
DEFAULT_REGION = "ap-northeast-2"

# Stack parameter -> environment variable (README.md, "Deploy"). Parameters, not context: the running stack
# keeps them, and a later `cdk deploy` that does not name them reuses their previous values instead of
# silently removing the relays. Empty (the default) leaves the variable blank, which the functions read as unset.
RELAY_URL_PARAMETERS = {
    "OyRelayUrl": "OY_RELAY_URL",
    "ConvenienceRelayUrl": "CONVENIENCE_RELAY_URL",
    "DtryxRelayUrl": "DTRYX_RELAY_URL",
    "CgvRelayUrl": "CGV_RELAY_URL",  # empty: CGV uses the Dtryx relay's (docs/design.md, "Relay protocol")
}
RELAY_URL_PATTERN = r"^(https://[^\s/?#@]+(/[^\s?#@]*)?)?$"
"""https, no userinfo, query or fragment (the relay adapter checks the rest), or empty for no relay."""
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _context(scope: Construct, key: str, default: str = "") -> str:
    value = scope.node.try_get_context(key)
    return default if value is None else str(value).strip()


def _relay_url(stack: cdk.Stack, parameter: str) -> str:
    legacy_key = parameter[0].lower() + parameter[1:]
    if stack.node.try_get_context(legacy_key) is not None:
        raise ValueError(
            f"-c {legacy_key} is no longer read: relay URLs are stack parameters that later deploys keep; "
            f"deploy with --parameters {parameter}=<url> (README.md, Deploy)"
        )
    return cdk.CfnParameter(
        stack,
        parameter,
        type="String",
        default="",
        allowed_pattern=RELAY_URL_PATTERN,
        constraint_description="an https:// base URL without userinfo, query or fragment, or empty",
        description=f"{RELAY_URL_PARAMETERS[parameter]}: the relay base URL (empty: no relay)",
    ).value_as_string


def _log_level(scope: Construct) -> str:
    level = _context(scope, "logLevel", DEFAULT_LOG_LEVEL).upper()
    if level not in LOG_LEVELS:
        raise ValueError(f"-c logLevel={level} must be one of {', '.join(LOG_LEVELS)}")
    return level


def _flag(scope: Construct, key: str) -> bool:
    """A deploy option that is on with `-c <key>=true` and off by default."""
    value = _context(scope, key, "false").lower()
    if value not in ("true", "false"):
        raise ValueError(f"-c {key}={value} must be true or false")
    return value == "true"


def _trace_calls(scope: Construct) -> bool:
    """`-c traceCalls=true`: X-Ray subsegments for the probe's and operator API's calls (~140 ms CPU per cold
    start of those two functions)."""
    return _flag(scope, "traceCalls")


def _snap_start(scope: Construct) -> bool:
    """`-c snapStart=true`: SnapStart for the lookup function (README.md, "SnapStart")."""
    return _flag(scope, "snapStart")


def _probe_reserved_concurrency(scope: Construct) -> int | None:
    """1 by default; `none` for accounts whose concurrency quota cannot reserve any (new accounts)."""
    value = _context(scope, "probeReservedConcurrency", "1")
    return None if value.lower() == "none" else int(value)


class RouteHealthStack(cdk.Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        table = VerdictTable(self, "Verdicts")
        packaging = LambdaPackaging(self, "Packaging")
        secret = RouteHealthSecret(self, "Secret")

        common = {
            "ROUTE_HEALTH_TABLE": table.table.table_name,
            "ROUTE_HEALTH_SECRET_ID": secret.secret.secret_arn,
            **POWERTOOLS_ENVIRONMENT,
            **RUNTIME_ENVIRONMENT,
            "POWERTOOLS_LOG_LEVEL": _log_level(self),
            # Relay calls carry credentials: never record responses in traces.
            "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
            **({} if _trace_calls(self) else CALLS_UNTRACED),
            **{variable: _relay_url(self, name) for name, variable in RELAY_URL_PARAMETERS.items()},
        }

        shared = SharedResources(packaging=packaging, environment=common, table=table, secret=secret)
        self.probe = Probe(self, "Probe", shared, reserved_concurrency=_probe_reserved_concurrency(self))
        self.api = HttpApi(self, "Api", shared, snap_start=_snap_start(self))
        self.observability = Observability(
            self,
            "Observability",
            functions={
                "probe": self.probe.handler.function,
                "api": self.api.lookup.function,
                "ops": self.api.ops.function,
            },
            http_api=self.api.http_api,
            alarm_email=_context(self, "alarmEmail") or None,
            runbook_url=_context(self, "runbookUrl", DEFAULT_RUNBOOK_URL),
        )

        cdk.CfnOutput(
            self, "ApiUrl", value=self.api.url, description="Base URL; lookups and ops live under /api"
        )
        cdk.CfnOutput(
            self,
            "DashboardUrl",
            value=f"https://{self.region}.console.aws.amazon.com/cloudwatch/home?region={self.region}"
            f"#dashboards/dashboard/{self.stack_name}",
        )
        cdk.CfnOutput(
            self,
            "SecretArn",
            value=secret.secret.secret_arn,
            description="The secret (JSON) with the operator secret and the relay credentials",
        )
        cdk.CfnOutput(self, "TableName", value=table.table.table_name)
        cdk.CfnOutput(self, "AlarmTopicArn", value=self.observability.topic.topic_arn)


def create_app(
    context: Mapping[str, Any] | None = None, *, nag: bool = True
) -> tuple[cdk.App, RouteHealthStack]:
    """The app without AWS calls or lookups: account-agnostic, region and stage from context."""
    app = cdk.App(context=dict(context) if context else None)
    stage = _context(app, "stage", DEFAULT_STAGE)
    region = _context(app, "region", DEFAULT_REGION)
    stack = RouteHealthStack(
        app,
        f"RouteHealth-{stage}",
        env=cdk.Environment(region=region),
        description=f"Route Health ({stage}): direct-or-relay routing for retail and cinema lookups",
    )
    cdk.Tags.of(stack).add("project", "route-health")
    cdk.Tags.of(stack).add("stage", stage)
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stack
