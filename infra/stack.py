"""The Route Health stack: composes the table, packaging, secret, probe, API and observability constructs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from infra.api import HttpApi, Throttle
from infra.edge import EdgeCache
from infra.environment import (
    POWERTOOLS_ENVIRONMENT,
    RUNTIME_ENVIRONMENT,
    TRACE_DISABLED_VARIABLE,
)
from infra.function import SharedResources
from infra.observability import DEFAULT_RUNBOOK_URL, Observability
from infra.packaging import LambdaPackaging
from infra.parameters import EVERY_FUNCTION, LOOKUP_FUNCTION, StackParameters
from infra.probe import Probe
from infra.secret import RouteHealthSecret
from infra.suppressions import acknowledge
from infra.table import VerdictTable

DEFAULT_STAGE = "prod"
DEFAULT_REGION = "ap-northeast-2"


def _context(scope: Construct, key: str, default: str = "") -> str:
    value = scope.node.try_get_context(key)
    return default if value is None else str(value).strip()


def _flag(scope: Construct, key: str) -> bool:
    """A deploy option that is on with `-c <key>=true` and off by default."""
    value = _context(scope, key, "false").lower()
    if value not in ("true", "false"):
        raise ValueError(f"-c {key}={value} must be true or false")
    return value == "true"


def _snap_start(scope: Construct) -> bool:
    """`-c snapStart=true`: SnapStart for the lookup function (docs/deploy.md, "SnapStart")."""
    return _flag(scope, "snapStart")


class RouteHealthStack(cdk.Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        parameters = StackParameters(self)
        table = VerdictTable(self, "Verdicts")
        packaging = LambdaPackaging(self, "Packaging")
        secret = RouteHealthSecret(self, "Secret")

        common = {
            "ROUTE_HEALTH_TABLE": table.table.table_name,
            "ROUTE_HEALTH_SECRET_ID": secret.secret.secret_arn,
            **POWERTOOLS_ENVIRONMENT,
            **RUNTIME_ENVIRONMENT,
            # Relay calls carry credentials: never record responses in traces.
            "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
            # Powertools' Tracer (and with it the X-Ray SDK) only with TraceCalls=true and Tracing=xray.
            TRACE_DISABLED_VARIABLE: cdk.Token.as_string(
                cdk.Fn.condition_if(parameters.calls_traced.logical_id, "false", "true")
            ),
            **parameters.environment(EVERY_FUNCTION),
        }

        shared = SharedResources(packaging=packaging, environment=common, table=table, secret=secret)
        self.probe = Probe(
            self,
            "Probe",
            shared,
            # ProbeReservedConcurrency, or no reservation at all when it is `none`.
            reserved_concurrency=cdk.Fn.condition_if(
                parameters.probe_unreserved.logical_id,
                cdk.Aws.NO_VALUE,
                parameters.text("ProbeReservedConcurrency"),
            ),
        )
        self.api = HttpApi(
            self,
            "Api",
            shared,
            snap_start=_snap_start(self),
            lookup_throttle=Throttle(
                parameters.number("ThrottleRateLimit"), parameters.number("ThrottleBurstLimit")
            ),
            mcp_throttle=Throttle(
                parameters.number("McpThrottleRateLimit"), parameters.number("McpThrottleBurstLimit")
            ),
            mcp_extra_hosts=[parameters.text("McpAllowedHosts")],
        )
        self.edge = EdgeCache(self, "Edge", api=self.api, secret=secret, parameters=parameters)
        # A browser behind the edge names the distribution's domain (or the operator's) in its Origin.
        self.api.allow_mcp_hosts(
            self.edge.domain_name,
            cdk.Token.as_string(
                cdk.Fn.condition_if(parameters.edge_domain.logical_id, parameters.text("EdgeDomainName"), "")
            ),
            condition=parameters.edge,
        )
        # The MCP function runs the lookups in process: the same settings as the lookup function.
        for variable, value in parameters.environment(LOOKUP_FUNCTION).items():
            self.api.lookup.function.add_environment(variable, value)
            self.api.mcp.function.add_environment(variable, value)
        functions = {
            "probe": self.probe.handler.function,
            "api": self.api.lookup.function,
            "ops": self.api.ops.function,
            "mcp": self.api.mcp.function,
        }
        self._apply_tracing(parameters, functions.values())
        self.observability = Observability(
            self,
            "Observability",
            functions=functions,
            http_api=self.api.http_api,
            parameters=parameters,
            edge_widgets=self.edge.dashboard_widgets(),
            runbook_url=_context(self, "runbookUrl", DEFAULT_RUNBOOK_URL),
        )

        self._api_outputs(parameters)
        self._other_outputs(parameters, secret, table)

    def _other_outputs(
        self, parameters: StackParameters, secret: RouteHealthSecret, table: VerdictTable
    ) -> None:
        cdk.CfnOutput(
            self,
            "DashboardUrl",
            value=f"https://{self.region}.console.aws.amazon.com/cloudwatch/home?region={self.region}"
            f"#dashboards/dashboard/{self.stack_name}",
            condition=parameters.dashboard,
        )
        cdk.CfnOutput(
            self,
            "SecretArn",
            value=secret.secret.secret_arn,
            description="The secret (JSON) with the operator secret and the relay credentials",
        )
        cdk.CfnOutput(self, "TableName", value=table.table.table_name)
        cdk.CfnOutput(self, "AlarmTopicArn", value=self.observability.topic.topic_arn)

    def _api_outputs(self, parameters: StackParameters) -> None:
        """`ApiUrl`: the public base URL, the edge's unless EdgeCache=off; `ExecuteApiUrl`: the API itself."""
        # A domain of the operator's implies EdgeCache=on; the distribution's name only where it exists.
        url = cdk.Fn.condition_if(
            parameters.edge_domain.logical_id,
            f"https://{parameters.text('EdgeDomainName')}/",
            cdk.Fn.condition_if(
                parameters.edge.logical_id, f"https://{self.edge.domain_name}/", self.api.url
            ),
        )
        cdk.CfnOutput(
            self,
            "ApiUrl",
            value=cdk.Token.as_string(url),
            description="Base URL (the edge's unless EdgeCache=off); lookups and ops live under /api",
        )
        acknowledge(
            self,
            "CloudFormation-Validate::W1001",
            "ApiUrl names the distribution only in the true branch of Fn::If(EdgeCacheOn), which "
            "CloudFormation evaluates only when the distribution exists (EdgeCache=off: the execute-api URL).",
        )
        edge_outputs = (  # only while EdgeCache=on
            (
                "ExecuteApiUrl",
                self.api.url,
                "The HTTP API's own URL, without the edge (EdgeCache=off: ApiUrl is this URL)",
            ),
            (
                "EdgeDistributionDomainName",
                self.edge.domain_name,
                "The distribution's cloudfront.net name: the CNAME target of EdgeDomainName",
            ),
            (
                "EdgeDistributionId",
                self.edge.distribution.distribution_id,
                "The distribution, for its metrics and for invalidations",
            ),
        )
        for name, value, description in edge_outputs:
            cdk.CfnOutput(self, name, value=value, description=description, condition=parameters.edge)

    @staticmethod
    def _apply_tracing(parameters: StackParameters, functions: Iterable[lambda_.Function]) -> None:
        """Tracing=xray: Lambda's active tracing (each invocation and its INIT); off: PassThrough, which
        records nothing here (no caller sends a sampled trace header)."""
        for function in functions:
            cfn_function = function.node.default_child
            assert isinstance(cfn_function, lambda_.CfnFunction)
            cfn_function.add_property_override(
                "TracingConfig.Mode",
                cdk.Fn.condition_if(parameters.tracing.logical_id, "Active", "PassThrough"),
            )


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
