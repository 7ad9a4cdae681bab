"""Operator dashboard and alarms (DESIGN §8, §9) over the functions' EMF metrics and the Lambda/API metrics.

Every custom metric is in namespace RouteHealth and carries Powertools' default dimension service=route-health
on top of its own dimensions, so the dimension sets below always include `service`.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration, Stack
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from functions.core.model import RelayGroup

NAMESPACE = "RouteHealth"
SERVICE = "route-health"
PERIOD = Duration.minutes(5)
LOOKUP_PATHS = ("direct", "relay", "unavailable")

PROBE_STALE_WINDOW = Duration.minutes(15)
UNAVAILABLE_RATE_PERCENT = 5
UNAVAILABLE_MIN_LOOKUPS = 10


def metric(
    name: str,
    *,
    statistic: str = "Sum",
    period: Duration = PERIOD,
    label: str | None = None,
    **dimensions: str,
) -> cloudwatch.Metric:
    """One custom metric series; keyword arguments other than these are its dimensions."""
    return cloudwatch.Metric(
        namespace=NAMESPACE,
        metric_name=name,
        dimensions_map={"service": SERVICE, **dimensions},
        statistic=statistic,
        period=period,
        label=label,
    )


def search(
    name: str, dimensions: tuple[str, ...], *, statistic: str = "Sum", label: str = ""
) -> cloudwatch.MathExpression:
    """All series of a metric family (one per route/reason/...), however many dimension values exist."""
    schema = ",".join([NAMESPACE, *sorted([*dimensions, "service"])])
    expression = f"SEARCH('{{{schema}}} MetricName=\"{name}\" service=\"{SERVICE}\"', '{statistic}', {int(PERIOD.to_seconds())})"
    return cloudwatch.MathExpression(expression=expression, using_metrics={}, label=label, period=PERIOD)


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: Mapping[str, lambda_.IFunction],
        http_api: apigwv2.HttpApi,
        alarm_email: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        stack_name = Stack.of(self).stack_name

        # CloudWatch can publish only to topics whose key policy lets it use the key: a customer key.
        key = kms.Key(self, "AlarmTopicKey", description="Route Health alarm topic", enable_key_rotation=True)
        key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        self.topic = sns.Topic(
            self, "AlarmTopic", display_name="Route Health alarms", master_key=key, enforce_ssl=True
        )
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        action = cloudwatch_actions.SnsAction(self.topic)

        self.alarms: dict[str, cloudwatch.Alarm] = {}

        def add_alarm(alarm_id: str, alarm: cloudwatch.Alarm) -> None:
            alarm.add_alarm_action(action)
            alarm.add_ok_action(action)
            self.alarms[alarm_id] = alarm

        add_alarm(
            "ProbeStale",
            cloudwatch.Alarm(
                self,
                "ProbeStaleAlarm",
                alarm_name=f"{stack_name}-probe-stale",
                alarm_description="No probe run in 15 minutes: verdicts are ageing out and lookups fall back to "
                "the relays. Check the probe function's errors/throttles and the EventBridge rule.",
                metric=metric("ProbeRun", period=PROBE_STALE_WINDOW),
                threshold=1,
                comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cloudwatch.TreatMissingData.BREACHING,
            ),
        )

        lookups = {path[0]: metric("Lookups", Path=path) for path in LOOKUP_PATHS}
        total = "(FILL(d, 0) + FILL(r, 0) + FILL(u, 0))"
        unavailable_rate = cloudwatch.MathExpression(
            expression=f"IF({total} >= {UNAVAILABLE_MIN_LOOKUPS}, 100 * FILL(u, 0) / {total}, 0)",
            using_metrics=lookups,
            label="503 UPSTREAM_ROUTE_UNAVAILABLE (% of lookups)",
            period=PERIOD,
        )
        add_alarm(
            "UnavailableRate",
            cloudwatch.Alarm(
                self,
                "UnavailableRateAlarm",
                alarm_name=f"{stack_name}-503-rate",
                alarm_description=f"More than {UNAVAILABLE_RATE_PERCENT}% of lookups answered 503 "
                "UPSTREAM_ROUTE_UNAVAILABLE in two 5-minute periods: direct known bad and the relay known "
                "unhealthy, or the relay itself could not serve.",
                metric=unavailable_rate,
                threshold=UNAVAILABLE_RATE_PERCENT,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=2,
                datapoints_to_alarm=2,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            ),
        )

        for group in RelayGroup:
            add_alarm(
                f"RelayUnhealthy-{group.value}",
                cloudwatch.Alarm(
                    self,
                    f"RelayUnhealthyAlarm-{group.value}",
                    alarm_name=f"{stack_name}-relay-unhealthy-{group.value}",
                    alarm_description=f"The {group.value} relay failed its health check in two consecutive probe "
                    "runs: routes without a working direct path answer 503. Check the relay host and its secret.",
                    metric=metric("RelayHealthy", statistic="Minimum", Group=group.value),
                    threshold=1,
                    comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
                    evaluation_periods=2,
                    datapoints_to_alarm=2,
                    # No data means no probe run, which the probe-stale alarm reports.
                    treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
                ),
            )

        for name, function in functions.items():
            add_alarm(
                f"Errors-{name}",
                cloudwatch.Alarm(
                    self,
                    f"ErrorsAlarm-{name}",
                    alarm_name=f"{stack_name}-{name}-errors",
                    alarm_description=f"The {name} function failed (unhandled error or timeout); see its log group.",
                    metric=function.metric_errors(period=PERIOD, statistic="Sum"),
                    threshold=1,
                    comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                    evaluation_periods=1,
                    treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
                ),
            )

        self.dashboard = cloudwatch.Dashboard(
            self, "Dashboard", dashboard_name=stack_name, default_interval=Duration.hours(6)
        )
        self.dashboard.add_widgets(
            cloudwatch.AlarmStatusWidget(
                title="Alarms", alarms=list(self.alarms.values()), width=24, height=4
            )
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Lookups per route by path (direct / relay / unavailable = answered 503)",
                left=[search("LookupRoute", ("Path", "Route"), label="")],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Lookups by path",
                left=[metric("Lookups", Path=path, label=path) for path in LOOKUP_PATHS],
                right=[unavailable_rate],
                stacked=False,
                width=12,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Live direct failures by route and reason",
                left=[search("DirectFailure", ("Reason", "Route"))],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Relay fallbacks per route", left=[search("RelayFallback", ("Route",))], width=12
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Probe checks per route (pass / fail)",
                left=[search("ProbeCheck", ("Outcome", "Route"))],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Relay health (1 = healthy) and GS25 stock refused for the relay's GS25 session",
                left=[
                    metric("RelayHealthy", statistic="Minimum", Group=group.value, label=group.value)
                    for group in RelayGroup
                ],
                left_y_axis=cloudwatch.YAxisProps(min=0, max=1),
                right=[metric("Gs25SessionExpired", label="Gs25SessionExpired")],
                width=12,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Snapshot age at lookup (ms)",
                left=[metric("SnapshotAge", statistic=s, label=s) for s in ("Average", "p99", "Maximum")],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Probe run duration (ms) and runs",
                left=[metric("ProbeRunDuration", statistic=s, label=s) for s in ("Average", "Maximum")],
                right=[metric("ProbeRun", label="runs")],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Store: rejected stale writes and errors",
                left=[metric("StaleWriteRejected", label="StaleWriteRejected")],
                right=[search("StoreError", ("Operation",))],
                width=8,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Lambda errors",
                left=[f.metric_errors(period=PERIOD, label=name) for name, f in functions.items()],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Lambda throttles",
                left=[f.metric_throttles(period=PERIOD, label=name) for name, f in functions.items()],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Lambda duration p99 (ms)",
                left=[
                    f.metric_duration(period=PERIOD, statistic="p99", label=name)
                    for name, f in functions.items()
                ],
                width=8,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="HTTP API requests and errors",
                left=[
                    http_api.metric_count(period=PERIOD, label="requests"),
                    http_api.metric_client_error(period=PERIOD, label="4xx"),
                    http_api.metric_server_error(period=PERIOD, label="5xx"),
                ],
                right=[http_api.metric_latency(period=PERIOD, statistic="p99", label="latency p99")],
                width=24,
            )
        )
