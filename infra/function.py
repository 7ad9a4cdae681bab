"""One Lambda function the way every Route Health function is built: shared code and layer, arm64,
X-Ray active tracing, an explicit log group with retention, and a role that may write only to that log group;
optionally SnapStart, invoked through an alias of the version each deploy publishes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.packaging import ARCHITECTURE, RUNTIME, LambdaPackaging
from infra.secret import RouteHealthSecret
from infra.suppressions import acknowledge
from infra.table import VerdictTable

LOG_RETENTION = logs.RetentionDays.ONE_MONTH
LIVE_ALIAS = "live"


@dataclass(frozen=True)
class SharedResources:
    """What every function is built from or may be granted: the code and its layer, the environment, the
    verdict table and the secret. Each construct grants its functions only the calls they make."""

    packaging: LambdaPackaging
    environment: Mapping[str, str]
    table: VerdictTable
    secret: RouteHealthSecret


@dataclass(frozen=True)
class FunctionDefinition:
    """What differs between the functions."""

    handler: str
    description: str
    timeout_s: int


class RouteHealthFunction(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        shared: SharedResources,
        definition: FunctionDefinition,
        *,
        memory_size: int = 512,
        reserved_concurrent_executions: int | None = None,
        snap_start: bool = False,
        extra_layers: tuple[lambda_.ILayerVersion, ...] = (),
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(self, "Logs", retention=LOG_RETENTION)
        # A role of our own instead of AWSLambdaBasicExecutionRole: logs only to this function's group.
        self.role = iam.Role(self, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        self.log_group.grant_write(self.role)

        self.function = lambda_.Function(
            self,
            "Function",
            code=shared.packaging.code,
            layers=[shared.packaging.dependencies, *extra_layers],
            handler=definition.handler,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            description=definition.description,
            environment=dict(shared.environment),
            timeout=Duration.seconds(definition.timeout_s),
            memory_size=memory_size,
            reserved_concurrent_executions=reserved_concurrent_executions,
            # Lambda snapshots a version's initialized environment when it is published and restores new
            # environments from it; the previous version and its cached snapshot go when a deploy replaces it.
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if snap_start else None,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=self.log_group,
            role=self.role,
        )
        self.invoked: lambda_.IFunction = self.function.add_alias(LIVE_ALIAS) if snap_start else self.function
        """What callers invoke: with SnapStart the alias of the published version (only versions restore from
        a snapshot), else the function. Metrics by function name cover every version, so alarms stay as they are."""
        acknowledge(
            self.role,
            "AwsSolutions-IAM5[Resource::*]",
            "X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions.",
        )
        acknowledge(
            self.function,
            "AwsSolutions-L1",
            "Pinned to Python 3.12: the dependencies layer is built for cp312 and tested against it.",
        )
