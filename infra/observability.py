"""Operator dashboard, alarms and saved Logs Insights queries (docs/design.md#infrastructure-and-observability)
over the functions' EMF metrics, their JSON logs and the Lambda/API metrics.

Custom metrics come from the table in `functions/handlers/metrics.py` (names and dimensions are checked against
it here, at synth); each carries Powertools' `service` dimension on top of its own. Which route, relay or store
call failed is in the log lines, not in metric dimensions (each series is billed): the dashboard shows it per
route through Logs Insights widgets, and the alarms page on series that count across routes and say in their
description how to see which one. CloudWatch bills an alarm per metric it reads, so each alarm reads as few as
its question needs. Every alarm's description says what it means, the first steps, and its runbook: a section
of docs/operations.md's "Runbooks".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from aws_cdk import Duration, Fn, Stack, Token
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from functions.core.decision import Path
from functions.core.model import SNAPSHOT_TTL_MS
from functions.handlers.metrics import METRICS
from infra.environment import METRICS_NAMESPACE, SERVICE_NAME
from infra.parameters import StackParameters, only_if

PERIOD = Duration.minutes(5)
LOOKUP_PATHS = tuple(path.value for path in Path)
DEFAULT_RUNBOOK_URL = "docs/operations.md"
DASHBOARD_INTERVAL = Duration.hours(6)

PROBE_STALE_WINDOW = Duration.minutes(15)
UNAVAILABLE_RATE_PERCENT = 5
UNAVAILABLE_MIN_LOOKUPS = 10
API_5XX_RATE_PERCENT = 10
API_5XX_MIN_REQUESTS = 20
SNAPSHOT_STALE_MS = 2 * SNAPSHOT_TTL_MS
"""A median snapshot age past this at the lookups means their background refreshes keep failing."""
SNAPSHOT_MIN_INVOCATIONS = 10
"""Below this many lookups in a period, ages say only that the containers sat idle."""


def metric(
    name: str,
    *,
    statistic: str = "Sum",
    period: Duration = PERIOD,
    label: str | None = None,
    **dimensions: str,
) -> cloudwatch.Metric:
    """One custom metric series of the metric table; keyword arguments other than these are its dimensions."""
    _check_declared(name, dimensions)
    return cloudwatch.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": SERVICE_NAME, **dimensions},
        statistic=statistic,
        period=period,
        label=label,
    )


def search(name: str, *, statistic: str = "Sum", label: str = "") -> cloudwatch.MathExpression:
    """Every series of one metric of the table (one per route, group, code...), however many exist."""
    dimensions = sorted([*METRICS[name].dimensions, "service"])
    schema = ",".join([METRICS_NAMESPACE, *dimensions])
    expression = (
        f'SEARCH(\'{{{schema}}} MetricName="{name}" service="{SERVICE_NAME}"\', '
        f"'{statistic}', {int(PERIOD.to_seconds())})"
    )
    return cloudwatch.MathExpression(expression=expression, using_metrics={}, label=label, period=PERIOD)


def _check_declared(name: str, dimensions: Mapping[str, str]) -> None:
    definition = METRICS.get(name)
    if definition is None or dimensions.keys() != definition.dimensions.keys():
        raise ValueError(f"{name}{sorted(dimensions)} is not in functions/handlers/metrics.py")
    for dimension, value in dimensions.items():
        if value not in definition.dimensions[dimension]:
            raise ValueError(f"{name}: {dimension}={value} is never emitted")


# --- saved Logs Insights queries ------------------------------------------------------------------


@dataclass(frozen=True)
class LogsQuery:
    """A saved Logs Insights query over some functions' log groups (also shown on the dashboard)."""

    name: str
    functions: tuple[str, ...]
    query: logs.QueryString


STORE_FAILURE_LINES = (
    "verdict store failed",
    "snapshot refresh failed",
    "failure report not stored",
    "daily quota flush failed",
)
"""The log lines that come with a `StoreError` count; each names the store call in `operation`."""


def _last_checks(name: str, check: str, by: str) -> LogsQuery:
    """The last `check` (passed or failed) of each `by`, the failed ones first."""
    return LogsQuery(
        name,
        ("probe", "ops"),
        logs.QueryString(
            filter_statements=[f'message in ["{check} passed", "{check} failed"]'],
            stats_statements=[
                f"latest(message) as lastCheck, latest(reason) as reason, max(@timestamp) as checked by {by}"
            ],
            sort="lastCheck asc",  # "… failed" before "… passed"
        ),
    )


def _most_first(
    name: str, functions: tuple[str, ...], filters: list[str], stats: str, count: str
) -> LogsQuery:
    """A tally: the log lines `filters` keep, counted as `stats` says, the largest `count` first."""
    return LogsQuery(
        name,
        functions,
        logs.QueryString(filter_statements=filters, stats_statements=[stats], sort=f"{count} desc"),
    )


LOGS_QUERIES = (
    LogsQuery(
        "why-did-a-route-go-relay",
        ("api", "mcp", "probe", "ops"),
        logs.QueryString(
            fields=["@timestamp", "route", "message", "reason", "rule", "@logStream"],
            filter_statements=[
                "ispresent(route)",
                'message in ["direct failed", "relay fallback", "probe check failed", "route unavailable", '
                '"route override set", "route override cleared", "route decided"]',
                # Decisions log at DEBUG (LogLevel=DEBUG); the direct ones explain nothing here.
                'not (message = "route decided" and path = "direct")',
            ],
            sort="@timestamp desc",
            limit=200,
        ),
    ),
    _most_first(
        "failures-by-reason",
        ("api", "mcp", "probe", "ops"),
        ['message in ["direct failed", "probe check failed", "relay check failed"]'],
        "count(*) as failures by message, route, group, reason",
        "failures",
    ),
    _most_first(
        "direct-failures-by-route",
        ("api", "mcp"),
        ['message = "direct failed"'],
        "count(*) as failures, latest(reason) as lastReason, max(@timestamp) as lastFailed by route",
        "failures",
    ),
    _last_checks("probe-checks-by-route", "probe check", "route"),
    _last_checks("relay-checks", "relay check", "group"),
    _most_first(
        "store-errors-by-operation",
        ("api", "mcp", "probe", "ops"),
        ["message in [" + ", ".join(f'"{line}"' for line in STORE_FAILURE_LINES) + "]"],
        "count(*) as errors, max(@timestamp) as last by operation, error_type",
        "errors",
    ),
    LogsQuery(
        "override-changes",
        ("ops",),
        logs.QueryString(
            fields=["@timestamp", "action", "route", "mode", "reason", "expiresAt", "callerIpSha256"],
            filter_statements=['audit = "route-override"'],
            sort="@timestamp desc",
            limit=200,
        ),
    ),
    _most_first(
        "503s-by-route",
        ("api", "mcp"),
        ['message = "route unavailable"'],
        "count(*) as answers503 by route",
        "answers503",
    ),
    _most_first(
        "relay-lookups-by-route",
        ("api", "mcp"),
        [
            'message in ["route decided", "relay fallback"]',
            'not (message = "route decided" and path = "direct")',
        ],
        "count(*) as relayLookups by route, message",
        "relayLookups",
    ),
    _most_first(
        "answer-cache-per-lookup",
        ("api", "mcp"),
        ['message = "answer cache"'],
        "count(*) as answers by lookup, outcome",
        "answers",
    ),
)
SEE_WHICH_ROUTE = "`route-health ops routes` shows each route and relay now"


class Observability(Construct):
    """The alarm topic, the alarms, the saved queries and the operator dashboard."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: Mapping[str, lambda_.Function],
        http_api: apigwv2.HttpApi,
        parameters: StackParameters,
        edge_widgets: Sequence[cloudwatch.IWidget] = (),
        runbook_url: str = DEFAULT_RUNBOOK_URL,
    ) -> None:
        """`edge_widgets`: the edge's row of the dashboard, shown only while EdgeCache=on."""
        super().__init__(scope, construct_id)
        self._stack_name = Stack.of(self).stack_name
        self._runbook_url = runbook_url
        self.topic = self._alarm_topic(parameters)
        self._action = cloudwatch_actions.SnsAction(self.topic)
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        unavailable_rate = unavailable_rate_percent()
        api_5xx_rate = api_5xx_rate_percent(http_api)
        self._add_probe_alarms(functions["probe"])
        self._add_lookup_alarms(unavailable_rate, api_5xx_rate)
        self._add_store_alarm()
        self._add_error_alarms(functions)
        self.queries = self._saved_queries(functions)
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=self._stack_name)
        rows = self._dashboard_rows(functions, http_api, unavailable_rate, api_5xx_rate)
        dashboard = self.dashboard.node.default_child
        assert isinstance(dashboard, cloudwatch.CfnDashboard)
        dashboard.cfn_options.condition = parameters.dashboard  # Dashboard=off: none
        # The edge's row only where the edge exists (its metrics name the distribution).
        body: object = self._dashboard_body(rows)
        if edge_widgets:
            body = Fn.condition_if(
                parameters.edge.logical_id, self._dashboard_body([*rows, list(edge_widgets)]), body
            )
        dashboard.dashboard_body = Token.as_string(body)

    def _alarm_topic(self, parameters: StackParameters) -> sns.Topic:
        # CloudWatch can publish only to topics whose key policy lets it use the key: a customer key, unless
        # AlarmTopicEncryption=none leaves the topic without server-side encryption (and the key is not made).
        key = kms.Key(self, "AlarmTopicKey", description="Route Health alarm topic", enable_key_rotation=True)
        key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        cfn_key = key.node.default_child
        assert isinstance(cfn_key, kms.CfnKey)
        cfn_key.cfn_options.condition = parameters.topic_key
        topic = sns.Topic(
            self, "AlarmTopic", display_name="Route Health alarms", master_key=key, enforce_ssl=True
        )
        cfn_topic = topic.node.default_child
        assert isinstance(cfn_topic, sns.CfnTopic)
        cfn_topic.add_property_override("KmsMasterKeyId", only_if(parameters.topic_key, key.key_arn))
        subscription = topic.add_subscription(subscriptions.EmailSubscription(parameters.text("AlarmEmail")))
        cfn_subscription = subscription.node.default_child
        assert isinstance(cfn_subscription, sns.CfnSubscription)
        cfn_subscription.cfn_options.condition = parameters.alarm_email  # AlarmEmail empty: none
        return topic

    def _add_alarm(
        self,
        name: str,
        *,
        meaning: str,
        first_steps: str,
        metric: cloudwatch.IMetric,
        comparison: cloudwatch.ComparisonOperator = (
            cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        ),
        threshold: float = 1,
        periods: int = 1,
        missing_data: cloudwatch.TreatMissingData = cloudwatch.TreatMissingData.NOT_BREACHING,
    ) -> None:
        """An alarm named `<stack>-<name>` that notifies the topic when it fires and when it clears; it fires
        when all of the last `periods` 5-minute periods breach (by default: count at least 1 in each). Its
        runbook is the docs/operations.md section `#<name>`."""
        alarm = cloudwatch.Alarm(
            self,
            f"Alarm-{name}",
            alarm_name=f"{self._stack_name}-{name}",
            alarm_description=f"{meaning} First steps: {first_steps} Runbook: {self._runbook_url}#{name}",
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=periods,
            datapoints_to_alarm=periods if periods > 1 else None,  # unset: all of them (CloudWatch's default)
            treat_missing_data=missing_data,
        )
        alarm.add_alarm_action(self._action)
        alarm.add_ok_action(self._action)
        self.alarms[name] = alarm

    def _add_probe_alarms(self, probe: lambda_.Function) -> None:
        self._add_alarm(
            "probe-stale",
            meaning="No probe run in 15 minutes: verdicts are ageing out and lookups fall back to the relays.",
            first_steps="check the probe function's errors and throttles, its log group and the EventBridge "
            "rule; `route-health ops probe` runs a probe by hand.",
            # One ProbeRunDuration value per run that claimed its slot: the sample count is the runs.
            metric=metric("ProbeRunDuration", statistic="SampleCount", period=PROBE_STALE_WINDOW),
            comparison=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            missing_data=cloudwatch.TreatMissingData.BREACHING,
        )
        self._add_alarm(
            "probe-throttles",
            meaning="Lambda throttled the scheduled probe (its reserved concurrency or the account's limit).",
            first_steps="check the account's concurrency and the probe's reserved concurrency; a throttled "
            "run is retried by EventBridge and its slot still runs at most once.",
            metric=probe.metric_throttles(period=PERIOD, statistic="Sum"),
        )
        self._add_alarm(
            "relay-unhealthy",
            meaning="A relay failed its health check in two consecutive probe runs: routes without a working "
            "direct path answer 503.",
            first_steps=f"see which relay and why: {SEE_WHICH_ROUTE} (RELAY table), or the relay-checks "
            "query; then check that relay's host, its tunnel and its secret.",
            metric=metric("RelaysUnhealthy", statistic="Minimum"),
            periods=2,
            # No data means no probe run, which the probe-stale alarm reports.
            missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )

    def _add_lookup_alarms(
        self, unavailable_rate: cloudwatch.IMetric, api_5xx_rate: cloudwatch.IMetric
    ) -> None:
        self._add_alarm(
            "503-rate",
            meaning=f"More than {UNAVAILABLE_RATE_PERCENT}% of lookups answered 503 UPSTREAM_ROUTE_UNAVAILABLE "
            "in two 5-minute periods: direct known bad and the relay known unhealthy, or the relay itself "
            "could not serve.",
            first_steps=f"see which routes: the 503s-by-route query; {SEE_WHICH_ROUTE}; check the "
            "relay-unhealthy alarm.",
            metric=unavailable_rate,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            threshold=UNAVAILABLE_RATE_PERCENT,
            periods=2,
        )
        self._add_alarm(
            "api-5xx-rate",
            meaning=f"More than {API_5XX_RATE_PERCENT}% of HTTP API requests answered 5xx in two 5-minute "
            "periods (502 bad upstream answers, 503, 504 timeouts, 500s).",
            first_steps="open the dashboard's 'Lookup errors by code' to see which code, then follow that "
            "code's runbook.",
            metric=api_5xx_rate,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            threshold=API_5XX_RATE_PERCENT,
            periods=2,
        )
        snapshots = {
            "age": metric("SnapshotAge", statistic="p50"),
            "n": metric("SnapshotAge", statistic="SampleCount"),
        }
        self._add_alarm(
            "snapshot-stale",
            meaning=f"For 15 minutes, the lookups' verdict snapshots were a median of more than "
            f"{SNAPSHOT_STALE_MS // 1000} s old (refreshed every {SNAPSHOT_TTL_MS // 1000} s): containers "
            "cannot read DynamoDB and route relay-first.",
            first_steps="check the store-errors alarm, the store-errors-by-operation query (read_snapshot) "
            "and the lookup function's 'snapshot refresh failed' log lines.",
            metric=cloudwatch.MathExpression(
                expression=f"IF(n >= {SNAPSHOT_MIN_INVOCATIONS}, age, 0)",
                using_metrics=snapshots,
                label="median snapshot age (ms)",
                period=PERIOD,
            ),
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            threshold=SNAPSHOT_STALE_MS,
            periods=3,
        )

    def _add_store_alarm(self) -> None:
        self._add_alarm(
            "store-errors",
            meaning="Verdict store (DynamoDB) calls failed in two 5-minute periods in a row: the probe "
            "cannot store verdicts, lookups route relay-first on ageing snapshots.",
            first_steps="see which call: the store-errors-by-operation query (the dashboard's 'Store errors "
            "by operation'), then the DynamoDB table's metrics and the AWS Health Dashboard.",
            metric=metric("StoreError"),
            periods=2,
        )

    def _add_error_alarms(self, functions: Mapping[str, lambda_.Function]) -> None:
        self._add_alarm(
            "unexpected-errors",
            meaning="A lookup or operator request hit an unexpected exception and was answered 500 "
            "INTERNAL_ERROR (a bug: Lambda counts no error for it).",
            first_steps="search the api and ops log groups for 'unexpected error' (it carries the stack "
            "trace) and roll back the last deploy if it started then.",
            metric=metric("UnexpectedError"),
        )
        # One question ("did a function fail?"), one alarm: the functions' errors summed.
        errors = {
            f"e_{name}": function.metric_errors(period=PERIOD, statistic="Sum")
            for name, function in functions.items()
        }
        self._add_alarm(
            "function-errors",
            meaning=f"A function ({', '.join(functions)}) failed: an unhandled error, a timeout or a crash at "
            "start.",
            first_steps="see which function on the dashboard's 'Lambda errors', then read its log group and "
            "X-Ray traces; a crash at start names the bad setting.",
            metric=cloudwatch.MathExpression(
                expression=" + ".join(f"FILL({query_id}, 0)" for query_id in errors),
                using_metrics=errors,
                label="function errors",
                period=PERIOD,
            ),
        )

    def _saved_queries(self, functions: Mapping[str, lambda_.Function]) -> dict[str, logs.QueryDefinition]:
        return {
            query.name: logs.QueryDefinition(
                self,
                f"Query-{query.name}",
                query_definition_name=f"{self._stack_name}/{query.name}",
                query_string=query.query,
                log_groups=[functions[name].log_group for name in query.functions],
            )
            for query in LOGS_QUERIES
        }

    def _dashboard_body(self, rows: Sequence[Sequence[cloudwatch.IWidget]]) -> str:
        """The dashboard's JSON, laid out as `Dashboard.add_widgets` lays out one call per row."""
        column = cloudwatch.Column(*(cast(cloudwatch.IWidget, cloudwatch.Row(*row)) for row in rows))
        column.position(0, 0)
        return Stack.of(self).to_json_string(
            {"start": f"-{DASHBOARD_INTERVAL.to_iso_string()}", "widgets": column.to_json()}
        )

    def _dashboard_rows(
        self,
        functions: Mapping[str, lambda_.Function],
        http_api: apigwv2.HttpApi,
        unavailable_rate: cloudwatch.IMetric,
        api_5xx_rate: cloudwatch.IMetric,
    ) -> list[list[cloudwatch.IWidget]]:
        rows: list[list[cloudwatch.IWidget]] = [
            [
                cloudwatch.AlarmStatusWidget(
                    title="Alarms", alarms=list(self.alarms.values()), width=24, height=4
                )
            ],
            lookup_widgets(unavailable_rate),
            [
                logs_widget("Live direct failures per route (logs)", functions, "direct-failures-by-route"),
                failures_widget(),
            ],
            [logs_widget("Relay lookups per route (logs)", functions, "relay-lookups-by-route", width=24)],
            [
                logs_widget("Failures by reason (logs)", functions, "failures-by-reason"),
                logs_widget("503 answers by route (logs)", functions, "503s-by-route"),
            ],
            [
                logs_widget("Probe: last direct check per route (logs)", functions, "probe-checks-by-route"),
                logs_widget("Relays: last health check per group (logs)", functions, "relay-checks"),
            ],
            probe_widgets(),
            error_widgets(api_5xx_rate),
            [
                snapshot_age_widget(),
                logs_widget(
                    "Store errors by operation (logs)", functions, "store-errors-by-operation", width=16
                ),
            ],
            [daily_quota_widget(), overrides_widget()],
            [
                answer_cache_widget(),
                logs_widget("Answer cache per lookup (logs)", functions, "answer-cache-per-lookup"),
            ],
            lambda_widgets(functions),
            [mcp_widget(functions["mcp"])],
            [http_api_widget(http_api)],
        ]
        return rows


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


def api_5xx_rate_percent(http_api: apigwv2.HttpApi) -> cloudwatch.MathExpression:
    """The share of HTTP API requests answered 5xx (by the functions or by API Gateway itself)."""
    return cloudwatch.MathExpression(
        expression=f"IF(FILL(n, 0) >= {API_5XX_MIN_REQUESTS}, 100 * FILL(e, 0) / n, 0)",
        using_metrics={
            "e": http_api.metric_server_error(period=PERIOD, statistic="Sum"),
            "n": http_api.metric_count(period=PERIOD, statistic="Sum"),
        },
        label="5xx (% of requests)",
        period=PERIOD,
    )


def search_widget(
    title: str, name: str, *, statistic: str = "Sum", width: int = 12
) -> cloudwatch.GraphWidget:
    """A graph of every series of one metric."""
    return cloudwatch.GraphWidget(title=title, left=[search(name, statistic=statistic)], width=width)


def logs_widget(
    title: str, functions: Mapping[str, lambda_.Function], query_name: str, *, width: int = 12
) -> cloudwatch.IWidget:
    """A table from one of the saved Logs Insights queries: the per-route, per-relay and per-call detail that
    metrics leave out (each dimension value would be a billed series). Logs Insights bills the bytes each
    refresh scans; the dashboard's 6-hour window keeps that small."""
    query = next(query for query in LOGS_QUERIES if query.name == query_name)
    return cloudwatch.LogQueryWidget(
        title=title,
        log_group_names=[functions[name].log_group.log_group_name for name in query.functions],
        query_string=query.query.to_string(),
        view=cloudwatch.LogQueryVisualizationType.TABLE,
        width=width,
    )


def lookup_widgets(unavailable_rate: cloudwatch.IMetric) -> list[cloudwatch.IWidget]:
    return [
        cloudwatch.GraphWidget(
            title="Lookups sent to the relay (decided relay or fallback; which route: the table below)",
            left=[metric("RelayLookup", label="RelayLookup")],
            width=12,
        ),
        cloudwatch.GraphWidget(
            title="Lookups by path (unavailable = answered 503)",
            left=[metric("Lookups", Path=path, label=path) for path in LOOKUP_PATHS],
            right=[unavailable_rate],
            stacked=False,
            width=12,
        ),
    ]


def failures_widget() -> cloudwatch.IWidget:
    return cloudwatch.GraphWidget(
        title="Live direct failures (all routes) and relay fallbacks after them",
        left=[
            metric("DirectFailure", label="DirectFailure"),
            metric("RelayFallback", label="RelayFallback"),
        ],
        width=12,
    )


def probe_widgets() -> list[cloudwatch.IWidget]:
    return [
        cloudwatch.GraphWidget(
            title="Probe: routes failing direct, relays unhealthy (which: the tables above)",
            left=[
                metric("RoutesFailingDirect", statistic="Maximum", label="routes failing direct"),
                metric("RelaysUnhealthy", statistic="Maximum", label="relays unhealthy"),
            ],
            left_y_axis=cloudwatch.YAxisProps(min=0),
            right=[metric("Gs25SessionExpired", label="GS25 stock refused for the relay's GS25 session")],
            width=12,
        ),
        cloudwatch.GraphWidget(
            title="Probe run duration (ms) and runs",
            left=[metric("ProbeRunDuration", statistic=s, label=s) for s in ("Average", "Maximum")],
            right=[metric("ProbeRunDuration", statistic="SampleCount", label="runs")],
            width=12,
        ),
    ]


def error_widgets(api_5xx_rate: cloudwatch.IMetric) -> list[cloudwatch.IWidget]:
    return [
        search_widget("Lookup errors by code", "LookupError"),
        cloudwatch.GraphWidget(
            title="Unexpected errors (500 INTERNAL_ERROR) and the HTTP API's 5xx rate",
            left=[metric("UnexpectedError", label="UnexpectedError")],
            right=[api_5xx_rate],
            width=12,
        ),
    ]


def snapshot_age_widget() -> cloudwatch.IWidget:
    return cloudwatch.GraphWidget(
        title="Snapshot age at lookup (ms); store errors and rejected stale writes",
        left=[metric("SnapshotAge", statistic=s, label=s) for s in ("p50", "p99", "Maximum")],
        right=[
            metric("StoreError", label="StoreError"),
            metric("StaleWriteRejected", label="StaleWriteRejected"),
        ],
        width=8,
    )


def daily_quota_widget() -> cloudwatch.IWidget:
    return cloudwatch.GraphWidget(
        title="Daily quota: lookups refused (429) and let through uncounted (container's client table full)",
        left=[metric("LookupError", Code="DAILY_RATE_LIMIT_EXCEEDED", label="429 DAILY_RATE_LIMIT_EXCEEDED")],
        right=[metric("DailyQuotaUntracked", label="uncounted")],
        width=12,
    )


def answer_cache_widget() -> cloudwatch.IWidget:
    return cloudwatch.GraphWidget(
        title="Answer cache of the lookup and MCP functions: hits and misses (which lookup: the table)",
        left=[metric("ResponseCache", Outcome=outcome, label=outcome) for outcome in ("hit", "miss")],
        width=12,
    )


def overrides_widget() -> cloudwatch.IWidget:
    return cloudwatch.GraphWidget(
        title="Operator overrides: active (from each probe run) and changes by mode",
        left=[metric("OverridesActive", statistic="Maximum", label="active overrides")],
        right=[search("OverrideChange")],
        width=12,
    )


def lambda_widgets(functions: Mapping[str, lambda_.Function]) -> list[cloudwatch.IWidget]:
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


def mcp_widget(mcp: lambda_.Function) -> cloudwatch.IWidget:
    """The MCP endpoint's calls, errors and duration; its lookups count with the others in the custom metrics
    (they run the lookup function's handler) and log to its own log group, which the lookup queries read."""
    return cloudwatch.GraphWidget(
        title="MCP endpoint (POST /mcp): calls, errors, duration",
        left=[
            mcp.metric_invocations(period=PERIOD, statistic="Sum", label="calls"),
            mcp.metric_errors(period=PERIOD, statistic="Sum", label="errors"),
        ],
        right=[
            mcp.metric_duration(period=PERIOD, statistic="p50", label="duration p50 (ms)"),
            mcp.metric_duration(period=PERIOD, statistic="p99", label="duration p99 (ms)"),
        ],
        width=24,
    )


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
