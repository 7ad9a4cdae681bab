"""Operator dashboard and alarms (docs/design.md#infrastructure-and-observability) over the functions' EMF
metrics and the Lambda/API metrics.

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
    """The alarm topic, the alarms and the operator dashboard."""

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
        self._stack_name = Stack.of(self).stack_name
        self.topic = self._alarm_topic(alarm_email)
        self._action = cloudwatch_actions.SnsAction(self.topic)
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        unavailable_rate = unavailable_rate_percent()
        self._add_probe_stale_alarm()
        self._add_unavailable_rate_alarm(unavailable_rate)
        self._add_relay_unhealthy_alarms()
        self._add_error_alarms(functions)
        self.dashboard = self._dashboard(functions, http_api, unavailable_rate)

    def _alarm_topic(self, alarm_email: str | None) -> sns.Topic:
        # CloudWatch can publish only to topics whose key policy lets it use the key: a customer key.
        key = kms.Key(self, "AlarmTopicKey", description="Route Health alarm topic", enable_key_rotation=True)
        key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        topic = sns.Topic(
            self, "AlarmTopic", display_name="Route Health alarms", master_key=key, enforce_ssl=True
        )
        if alarm_email:
            topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        return topic

    def _add_alarm(
        self,
        alarm_id: str,
        construct_id: str,
        *,
        name: str,
        description: str,
        metric: cloudwatch.IMetric,
        comparison: cloudwatch.ComparisonOperator,
        threshold: float = 1,
        periods: int = 1,
        missing_data: cloudwatch.TreatMissingData = cloudwatch.TreatMissingData.NOT_BREACHING,
    ) -> None:
        """An alarm named `<stack>-<name>` that notifies the topic when it fires and when it clears; it fires
        when all of the last `periods` 5-minute periods breach."""
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_name=f"{self._stack_name}-{name}",
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=periods,
            datapoints_to_alarm=periods if periods > 1 else None,  # unset: all of them (CloudWatch's default)
            treat_missing_data=missing_data,
        )
        alarm.add_alarm_action(self._action)
        alarm.add_ok_action(self._action)
        self.alarms[alarm_id] = alarm

    def _add_probe_stale_alarm(self) -> None:
        self._add_alarm(
            "ProbeStale",
            "ProbeStaleAlarm",
            name="probe-stale",
            description="No probe run in 15 minutes: verdicts are ageing out and lookups fall back to "
            "the relays. Check the probe function's errors/throttles and the EventBridge rule.",
            metric=metric("ProbeRun", period=PROBE_STALE_WINDOW),
            comparison=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            missing_data=cloudwatch.TreatMissingData.BREACHING,
        )

    def _add_unavailable_rate_alarm(self, unavailable_rate: cloudwatch.IMetric) -> None:
        self._add_alarm(
            "UnavailableRate",
            "UnavailableRateAlarm",
            name="503-rate",
            description=f"More than {UNAVAILABLE_RATE_PERCENT}% of lookups answered 503 "
            "UPSTREAM_ROUTE_UNAVAILABLE in two 5-minute periods: direct known bad and the relay known "
            "unhealthy, or the relay itself could not serve.",
            metric=unavailable_rate,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            threshold=UNAVAILABLE_RATE_PERCENT,
            periods=2,
        )

    def _add_relay_unhealthy_alarms(self) -> None:
        for group in RelayGroup:
            self._add_alarm(
                f"RelayUnhealthy-{group.value}",
                f"RelayUnhealthyAlarm-{group.value}",
                name=f"relay-unhealthy-{group.value}",
                description=f"The {group.value} relay failed its health check in two consecutive probe "
                "runs: routes without a working direct path answer 503. Check the relay host and its secret.",
                metric=metric("RelayHealthy", statistic="Minimum", Group=group.value),
                comparison=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
                periods=2,
                # No data means no probe run, which the probe-stale alarm reports.
                missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )

    def _add_error_alarms(self, functions: Mapping[str, lambda_.IFunction]) -> None:
        for name, function in functions.items():
            self._add_alarm(
                f"Errors-{name}",
                f"ErrorsAlarm-{name}",
                name=f"{name}-errors",
                description=f"The {name} function failed (unhandled error or timeout); see its log group.",
                metric=function.metric_errors(period=PERIOD, statistic="Sum"),
                comparison=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            )

    def _dashboard(
        self,
        functions: Mapping[str, lambda_.IFunction],
        http_api: apigwv2.HttpApi,
        unavailable_rate: cloudwatch.IMetric,
    ) -> cloudwatch.Dashboard:
        dashboard = cloudwatch.Dashboard(
            self, "Dashboard", dashboard_name=self._stack_name, default_interval=Duration.hours(6)
        )
        rows: list[list[cloudwatch.IWidget]] = [
            [
                cloudwatch.AlarmStatusWidget(
                    title="Alarms", alarms=list(self.alarms.values()), width=24, height=4
                )
            ],
            lookup_widgets(unavailable_rate),
            failure_widgets(),
            probe_widgets(),
            store_and_probe_run_widgets(),
            [daily_quota_widget(), overrides_widget()],
            lambda_widgets(functions),
            [http_api_widget(http_api)],
        ]
        for row in rows:
            dashboard.add_widgets(*row)
        return dashboard


def unavailable_rate_percent() -> cloudwatch.MathExpression:
    """The share of lookups answered 503 UPSTREAM_ROUTE_UNAVAILABLE, once there are enough lookups to judge."""
    lookups = {path[0]: metric("Lookups", Path=path) for path in LOOKUP_PATHS}
    total = "(FILL(d, 0) + FILL(r, 0) + FILL(u, 0))"
    return cloudwatch.MathExpression(
        expression=f"IF({total} >= {UNAVAILABLE_MIN_LOOKUPS}, 100 * FILL(u, 0) / {total}, 0)",
        using_metrics=lookups,
        label="503 UPSTREAM_ROUTE_UNAVAILABLE (% of lookups)",
        period=PERIOD,
    )


def search_widget(
    title: str, name: str, dimensions: tuple[str, ...], *, label: str = ""
) -> cloudwatch.GraphWidget:
    """A half-width graph of every series of one metric family."""
    return cloudwatch.GraphWidget(title=title, left=[search(name, dimensions, label=label)], width=12)


def lookup_widgets(unavailable_rate: cloudwatch.IMetric) -> list[cloudwatch.IWidget]:
    return [
        search_widget(
            "Lookups per route by path (direct / relay / unavailable = answered 503)",
            "LookupRoute",
            ("Path", "Route"),
        ),
        cloudwatch.GraphWidget(
            title="Lookups by path",
            left=[metric("Lookups", Path=path, label=path) for path in LOOKUP_PATHS],
            right=[unavailable_rate],
            stacked=False,
            width=12,
        ),
    ]


def failure_widgets() -> list[cloudwatch.IWidget]:
    return [
        search_widget("Live direct failures by route and reason", "DirectFailure", ("Reason", "Route")),
        search_widget("Relay fallbacks per route", "RelayFallback", ("Route",)),
    ]


def probe_widgets() -> list[cloudwatch.IWidget]:
    return [
        search_widget("Probe checks per route (pass / fail)", "ProbeCheck", ("Outcome", "Route")),
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
    ]


def store_and_probe_run_widgets() -> list[cloudwatch.IWidget]:
    return [
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
    ]


def daily_quota_widget() -> cloudwatch.IWidget:
    return cloudwatch.GraphWidget(
        title="Daily quota: lookups refused (429) and let through uncounted (container's client table full)",
        left=[metric("DailyRateLimitExceeded", label="429 DAILY_RATE_LIMIT_EXCEEDED")],
        right=[metric("DailyQuotaUntracked", label="uncounted")],
        width=12,
    )


def overrides_widget() -> cloudwatch.IWidget:
    return cloudwatch.GraphWidget(
        title="Operator overrides: active (from each probe run) and changes by mode",
        left=[metric("OverridesActive", statistic="Maximum", label="active overrides")],
        right=[search("OverrideChange", ("Mode",))],
        width=12,
    )


def lambda_widgets(functions: Mapping[str, lambda_.IFunction]) -> list[cloudwatch.IWidget]:
    return [
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
                f.metric_duration(period=PERIOD, statistic="p99", label=name) for name, f in functions.items()
            ],
            width=8,
        ),
    ]


def http_api_widget(http_api: apigwv2.HttpApi) -> cloudwatch.IWidget:
    return cloudwatch.GraphWidget(
        title="HTTP API requests and errors",
        left=[
            http_api.metric_count(period=PERIOD, label="requests"),
            http_api.metric_client_error(period=PERIOD, label="4xx"),
            http_api.metric_server_error(period=PERIOD, label="5xx"),
        ],
        right=[http_api.metric_latency(period=PERIOD, statistic="p99", label="latency p99")],
        width=24,
    )
