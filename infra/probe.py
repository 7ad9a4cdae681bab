"""The scheduled probe (docs/design.md#probe): one function, an EventBridge rule every 5-minute slot, one run
at a time."""

from __future__ import annotations

from aws_cdk import Duration, IResolvable
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.function import FunctionDefinition, RouteHealthFunction, SharedResources
from infra.suppressions import acknowledge

PROBE_HANDLER = "functions.handlers.probe.lambda_handler"
PROBE_SCHEDULE = "cron(0/5 * * * ? *)"
PROBE_FUNCTION = FunctionDefinition(
    handler=PROBE_HANDLER,
    description="Route Health probe: checks every direct API and relay, writes verdicts",
    timeout_s=60,  # a check per probed route and per relay, 4 in flight, 3 s each (21 s at worst today), plus the writes
)


class Probe(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        shared: SharedResources,
        *,
        reserved_concurrency: IResolvable,
    ) -> None:
        super().__init__(scope, construct_id)
        self.handler = RouteHealthFunction(self, "Probe", shared, PROBE_FUNCTION)
        function = self.handler.function
        # With 1 (the default), runs cannot pile up: a second invocation is throttled while one is running.
        # A stack parameter decides it, so CloudFormation, not the CDK, sets it.
        cfn_function = function.node.default_child
        assert isinstance(cfn_function, lambda_.CfnFunction)
        cfn_function.add_property_override("ReservedConcurrentExecutions", reserved_concurrency)
        acknowledge(
            cfn_function,
            "CloudFormation-Validate::W9003",
            "ProbeReservedConcurrency is a String parameter (a number, or `none` for no reservation); "
            "CloudFormation turns the number's text into the integer.",
        )
        shared.table.grant_read_snapshot(function)
        shared.table.grant_probe_writes(function)
        shared.secret.grant_read(function)

        self.rule = events.Rule(
            self,
            "Schedule",
            description="Route Health probe, once per 5-minute slot",
            schedule=events.Schedule.expression(PROBE_SCHEDULE),
            # A delivery older than a slot is useless: the next slot's run is due anyway.
            targets=[targets.LambdaFunction(function, max_event_age=Duration.minutes(5), retry_attempts=2)],
        )
        # Async retries of a failed run would land in the same slot, which the slot claim refuses anyway.
        function.configure_async_invoke(retry_attempts=0, max_event_age=Duration.minutes(5))
