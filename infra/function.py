"""One Lambda function the way every Route Health function is built: shared code and layer, arm64,
X-Ray active tracing, an explicit log group with retention, and a role that may write only to that log group."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.packaging import ARCHITECTURE, RUNTIME, LambdaPackaging
from infra.suppressions import acknowledge

LOG_RETENTION = logs.RetentionDays.ONE_MONTH


class RouteHealthFunction(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        packaging: LambdaPackaging,
        handler: str,
        description: str,
        environment: Mapping[str, str],
        timeout: Duration,
        memory_size: int = 512,
        reserved_concurrent_executions: int | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(self, "Logs", retention=LOG_RETENTION)
        # A role of our own instead of AWSLambdaBasicExecutionRole: logs only to this function's group.
        self.role = iam.Role(self, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        self.log_group.grant_write(self.role)

        self.function = lambda_.Function(
            self,
            "Function",
            code=packaging.code,
            layers=[packaging.dependencies],
            handler=handler,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            description=description,
            environment=dict(environment),
            timeout=timeout,
            memory_size=memory_size,
            reserved_concurrent_executions=reserved_concurrent_executions,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=self.log_group,
            role=self.role,
        )
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
