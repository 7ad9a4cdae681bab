"""Dashboard widgets per metric, the alarms with their runbooks (README, "Runbooks"), and the saved Logs Insights
queries."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from functions.core.model import RelayGroup
from functions.handlers.metrics import METRICS
from infra.api import API_HANDLER, MCP_HANDLER, OPS_HANDLER
from infra.probe import PROBE_HANDLER

pytestmark = pytest.mark.infra

# Every metric of the table, with the dimensions its series carry besides service=route-health.
CUSTOM_METRICS = {name: tuple(sorted(d.dimensions)) for name, d in METRICS.items()}
LAMBDA_METRICS = ("Errors", "Throttles", "Duration")


def _render(value: Any) -> str:
    """A Fn::Join of literal strings and tokens -> the literal text; `{"Ref": id}` is written `Ref:id`."""
    if isinstance(value, str):
        return value
    separator, parts = value["Fn::Join"]
    return str(separator).join(_literal(part) for part in parts)


def _literal(part: str | dict[str, Any]) -> str:
    if isinstance(part, str):
        return part
    return f"Ref:{part['Ref']}" if "Ref" in part else "Token"


@pytest.fixture(scope="module")
def widgets(synthesized) -> list[dict[str, Any]]:
    _, dashboard = synthesized.only("AWS::CloudWatch::Dashboard")
    found: list[dict[str, Any]] = json.loads(_render(dashboard["Properties"]["DashboardBody"]))["widgets"]
    return found


def _graphed(widget: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    """(namespace, metric name, dimensions) of plain metrics in a widget."""
    graphed = []
    for line in widget.get("properties", {}).get("metrics", []):
        if (
            line
            and isinstance(line[0], str)
            and len(line) >= 2
            and isinstance(line[1], str)
            and line[0] != "..."
        ):
            names = [item for item in line[2:] if not isinstance(item, dict)]
            graphed.append((line[0], line[1], dict(zip(names[::2], names[1::2], strict=False))))
    return graphed


def _expressions(widget: dict[str, Any]) -> list[str]:
    return [
        item["expression"]
        for line in widget.get("properties", {}).get("metrics", [])
        for item in line
        if isinstance(item, dict) and "expression" in item
    ]


@pytest.mark.parametrize("name", sorted(CUSTOM_METRICS))
def test_a_widget_graphs_each_custom_metric_family(widgets, name):
    dimensions = CUSTOM_METRICS[name]
    schema = "{" + ",".join(["RouteHealth", *sorted([*dimensions, "service"])]) + "}"
    searched = any(
        f'{schema} MetricName="{name}" service="route-health"' in expression
        for widget in widgets
        for expression in _expressions(widget)
    )
    plain = any(
        namespace == "RouteHealth"
        and metric == name
        and dims.get("service") == "route-health"
        and set(dims) == {"service", *dimensions}
        for widget in widgets
        for namespace, metric, dims in _graphed(widget)
    )
    assert searched or plain, f"no dashboard widget for {name}{dimensions}"


@pytest.mark.parametrize("name", LAMBDA_METRICS)
def test_lambda_metrics_are_graphed_for_every_function(synthesized, widgets, name):
    graphed_functions = {
        dims["FunctionName"]
        for widget in widgets
        for namespace, metric, dims in _graphed(widget)
        if namespace == "AWS/Lambda" and metric == name
    }
    function_ids = {logical_id for logical_id, _ in synthesized.functions_by_handler().values()}
    assert graphed_functions == {f"Ref:{logical_id}" for logical_id in function_ids}


def test_the_mcp_endpoints_calls_errors_and_duration_are_graphed_together(synthesized, widgets):
    mcp = f"Ref:{synthesized.functions_by_handler()[MCP_HANDLER][0]}"
    (widget,) = [w for w in widgets if w.get("properties", {}).get("title", "").startswith("MCP endpoint")]
    graphed = {metric for namespace, metric, dims in _graphed(widget) if dims.get("FunctionName") == mcp}
    assert graphed == {"Invocations", "Errors", "Duration"}


def test_per_route_families_use_search_expressions(widgets):
    expressions = [expression for widget in widgets for expression in _expressions(widget)]
    for name in ("RelayLookup", "DirectFailure", "DirectHealthy", "LookupError"):
        assert any(e.startswith("SEARCH(") and f'MetricName="{name}"' in e for e in expressions), name


def test_relay_health_is_graphed_per_group(widgets):
    groups = {
        dims.get("Group")
        for widget in widgets
        for _, metric, dims in _graphed(widget)
        if metric == "RelayHealthy"
    }
    assert groups == {group.value for group in RelayGroup}


def _alarms(synthesized) -> dict[str, dict[str, Any]]:
    alarms = synthesized.resources("AWS::CloudWatch::Alarm").values()
    return {alarm["Properties"]["AlarmName"]: alarm["Properties"] for alarm in alarms}


def test_every_alarm_notifies_the_encrypted_topic(synthesized):
    topic_id, topic = synthesized.only("AWS::SNS::Topic")
    assert "KmsMasterKeyId" in topic["Properties"]
    _, subscription = synthesized.only("AWS::SNS::Subscription")
    assert subscription["Properties"]["Protocol"] == "email"

    alarms = _alarms(synthesized)
    assert alarms
    for props in alarms.values():
        assert props["AlarmActions"] == [{"Ref": topic_id}]
        assert props["AlarmDescription"]


def test_probe_stale_alarm(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-probe-stale"]

    assert alarm["MetricName"] == "ProbeRun"
    assert alarm["Namespace"] == "RouteHealth"
    assert {"Name": "service", "Value": "route-health"} in alarm["Dimensions"]
    assert alarm["Statistic"] == "Sum"
    assert alarm["Period"] * alarm["EvaluationPeriods"] == 15 * 60
    assert alarm["ComparisonOperator"] == "LessThanThreshold"
    assert alarm["Threshold"] == 1
    assert alarm["TreatMissingData"] == "breaching"  # no metric at all = no probe ran


def test_unavailable_rate_alarm_divides_503s_by_all_lookups(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-503-rate"]
    queries = {query["Id"]: query for query in alarm["Metrics"]}
    [expression] = [q["Expression"] for q in queries.values() if "Expression" in q]
    paths = {
        query_id: {d["Name"]: d["Value"] for d in q["MetricStat"]["Metric"]["Dimensions"]}["Path"]
        for query_id, q in queries.items()
        if "MetricStat" in q and q["MetricStat"]["Metric"]["MetricName"] == "Lookups"
    }

    assert set(paths.values()) == {"direct", "relay", "unavailable"}
    unavailable = next(query_id for query_id, path in paths.items() if path == "unavailable")
    assert f"100 * FILL({unavailable}, 0) /" in expression
    assert all(f"FILL({query_id}, 0)" in expression for query_id in paths)
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"


def test_one_relay_unhealthy_alarm_per_group(synthesized):
    alarms = _alarms(synthesized)
    for group in RelayGroup:
        alarm = alarms[f"RouteHealth-prod-relay-unhealthy-{group.value}"]
        assert alarm["MetricName"] == "RelayHealthy"
        assert {"Name": "Group", "Value": group.value} in alarm["Dimensions"]
        assert alarm["Statistic"] == "Minimum"
        assert alarm["ComparisonOperator"] == "LessThanThreshold"
        assert alarm["Threshold"] == 1
        assert 2 <= alarm["DatapointsToAlarm"] <= 3


def test_an_error_alarm_per_function(synthesized):
    alarms = _alarms(synthesized)
    functions = synthesized.functions_by_handler()
    named = (("probe", PROBE_HANDLER), ("api", API_HANDLER), ("ops", OPS_HANDLER), ("mcp", MCP_HANDLER))
    for name, handler in named:
        alarm = alarms[f"RouteHealth-prod-{name}-errors"]
        assert alarm["Namespace"] == "AWS/Lambda"
        assert alarm["MetricName"] == "Errors"
        assert alarm["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": functions[handler][0]}}]


def test_unexpected_errors_alarm_fires_on_one_handled_500(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-unexpected-errors"]
    assert alarm["MetricName"] == "UnexpectedError"
    assert alarm["Statistic"] == "Sum"
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["Threshold"] == 1


def test_api_5xx_rate_alarm_divides_5xx_by_all_requests(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-api-5xx-rate"]
    queries = {q["Id"]: q for q in alarm["Metrics"]}
    names = {
        query_id: q["MetricStat"]["Metric"]["MetricName"]
        for query_id, q in queries.items()
        if "MetricStat" in q
    }
    [expression] = [q["Expression"] for q in queries.values() if "Expression" in q]
    assert sorted(names.values()) == ["5xx", "Count"]
    errors = next(query_id for query_id, name in names.items() if name == "5xx")
    assert f"100 * FILL({errors}, 0) /" in expression
    assert all(
        q["MetricStat"]["Metric"]["Namespace"] == "AWS/ApiGateway"
        for q in queries.values()
        if "MetricStat" in q
    )
    assert alarm["DatapointsToAlarm"] == 2


def test_store_errors_alarm_sums_every_store_operation(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-store-errors"]
    operations = {
        {d["Name"]: d["Value"] for d in q["MetricStat"]["Metric"]["Dimensions"]}["Operation"]
        for q in alarm["Metrics"]
        if "MetricStat" in q
    }
    assert operations == set(METRICS["StoreError"].dimensions["Operation"])
    [expression] = [q["Expression"] for q in alarm["Metrics"] if "Expression" in q]
    assert expression.count("FILL(") == len(operations)


def test_snapshot_stale_alarm_judges_the_median_age_of_busy_periods_only(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-snapshot-stale"]
    stats = {q["Id"]: q["MetricStat"]["Stat"] for q in alarm["Metrics"] if "MetricStat" in q}
    [expression] = [q["Expression"] for q in alarm["Metrics"] if "Expression" in q]
    assert sorted(stats.values()) == ["SampleCount", "p50"]
    count = next(query_id for query_id, stat in stats.items() if stat == "SampleCount")
    assert expression.startswith(f"IF({count} >= ")
    assert alarm["Threshold"] == 60_000
    assert alarm["DatapointsToAlarm"] == 3


def test_probe_throttles_alarm(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-probe-throttles"]
    functions = synthesized.functions_by_handler()
    assert alarm["Namespace"] == "AWS/Lambda"
    assert alarm["MetricName"] == "Throttles"
    assert alarm["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": functions[PROBE_HANDLER][0]}}]


def test_every_alarm_description_has_first_steps_and_a_runbook_section_that_exists(synthesized):
    from tests.infrastructure.test_infra_deploy_settings import REPO_ROOT, anchors_of

    readme_anchors = anchors_of(REPO_ROOT / "README.md")
    for name, props in _alarms(synthesized).items():
        description = props["AlarmDescription"]
        assert "First steps: " in description, name
        match = re.search(r"Runbook: README\.md#([\w-]+)$", description)
        assert match, f"{name}: no runbook link"
        assert match.group(1) in readme_anchors, f"{name}: README.md has no #{match.group(1)}"
        assert len(description) <= 1024


def test_saved_logs_insights_queries(synthesized):
    queries = {
        props["Properties"]["Name"]: props["Properties"]
        for props in synthesized.resources("AWS::Logs::QueryDefinition").values()
    }
    assert set(queries) == {
        "RouteHealth-prod/why-did-a-route-go-relay",
        "RouteHealth-prod/failures-by-reason",
        "RouteHealth-prod/503s-by-route",
        "RouteHealth-prod/override-changes",
    }
    functions = synthesized.functions_by_handler()
    log_group_of = {
        handler: props["LoggingConfig"]["LogGroup"]["Ref"] for handler, (_, props) in functions.items()
    }
    why = queries["RouteHealth-prod/why-did-a-route-go-relay"]
    assert {"Ref": log_group_of[API_HANDLER]} in why["LogGroupNames"]
    assert '"direct failed"' in why["QueryString"]
    assert '"probe check failed"' in why["QueryString"]
    assert "by message, route, group, reason" in queries["RouteHealth-prod/failures-by-reason"]["QueryString"]
    # MCP tool calls run the lookup function's handler and log to the MCP function's group.
    lookups = [{"Ref": log_group_of[API_HANDLER]}, {"Ref": log_group_of[MCP_HANDLER]}]
    assert queries["RouteHealth-prod/503s-by-route"]["LogGroupNames"] == lookups
    assert all(group in why["LogGroupNames"] for group in lookups)
    overrides = queries["RouteHealth-prod/override-changes"]
    assert overrides["LogGroupNames"] == [{"Ref": log_group_of[OPS_HANDLER]}]
    assert 'filter audit = "route-override"' in overrides["QueryString"]


def test_the_dashboard_shows_failures_by_reason_and_503s_by_route_from_the_logs(widgets):
    titles = {w["properties"].get("title") for w in widgets if w["type"] == "log"}
    assert titles == {"Failures by reason (logs)", "503 answers by route (logs)"}
