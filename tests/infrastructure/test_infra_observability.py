"""Dashboard widgets per metric, the alarms with their runbooks (docs/operations.md, "Runbooks"), and the saved Logs Insights
queries."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

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


def _dashboard_widgets(deployed) -> list[dict[str, Any]]:
    _, dashboard = deployed.only("AWS::CloudWatch::Dashboard")
    found: list[dict[str, Any]] = json.loads(_render(dashboard["Properties"]["DashboardBody"]))["widgets"]
    return found


@pytest.fixture(scope="module")
def widgets(synthesized) -> list[dict[str, Any]]:
    return _dashboard_widgets(synthesized.deployed())


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


def test_the_edge_requests_and_error_rates_are_graphed_only_with_the_edge(synthesized, widgets):
    distribution, _ = synthesized.only("AWS::CloudFront::Distribution")
    edge = [w for w in widgets if any(line[0] == "AWS/CloudFront" for line in _lines(w))]
    assert len(edge) == 1
    graphed = {line[1]: line for line in _lines(edge[0])}
    assert set(graphed) == {"Requests", "4xxErrorRate", "5xxErrorRate", "TotalErrorRate"}
    for line in graphed.values():  # CloudFront's free metrics: us-east-1, the distribution, Region=Global
        assert line[2:6] == ["DistributionId", f"Ref:{distribution}", "Region", "Global"]
        assert line[-1]["region"] == "us-east-1"

    off = _dashboard_widgets(synthesized.deployed(EdgeCache="off"))
    assert off == [w for w in widgets if w not in edge]


def _lines(widget: dict[str, Any]) -> list[list[Any]]:
    return [
        line for line in widget.get("properties", {}).get("metrics", []) if line and isinstance(line[0], str)
    ]


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


def test_metrics_with_a_dimension_are_graphed_with_search_expressions(widgets):
    expressions = [expression for widget in widgets for expression in _expressions(widget)]
    for name in ("LookupError", "OverrideChange"):
        assert any(e.startswith("SEARCH(") and f'MetricName="{name}"' in e for e in expressions), name


def _log_widgets(widgets) -> dict[str, str]:
    return {w["properties"]["title"]: w["properties"]["query"] for w in widgets if w["type"] == "log"}


def test_per_route_relay_and_store_call_detail_comes_from_the_logs(widgets):
    queries = _log_widgets(widgets)
    per_route = queries["Probe: last direct check per route (logs)"]
    assert 'message in ["probe check passed", "probe check failed"]' in per_route
    assert "sort lastCheck asc" in per_route  # failed checks first
    assert "by route" in per_route
    assert "by group" in queries["Relays: last health check per group (logs)"]
    assert "by route" in queries["Live direct failures per route (logs)"]
    assert "by operation" in queries["Store errors by operation (logs)"]


def _alarms(synthesized) -> dict[str, dict[str, Any]]:
    alarms = synthesized.resources("AWS::CloudWatch::Alarm").values()
    return {alarm["Properties"]["AlarmName"]: alarm["Properties"] for alarm in alarms}


def test_every_alarm_notifies_the_encrypted_topic(synthesized):
    topic_id, topic = synthesized.deployed().only("AWS::SNS::Topic")
    assert "KmsMasterKeyId" in topic["Properties"]  # AlarmTopicEncryption=kms, the default

    alarms = _alarms(synthesized)
    assert alarms
    for props in alarms.values():
        assert props["AlarmActions"] == [{"Ref": topic_id}]
        assert props["AlarmDescription"]


def test_probe_stale_alarm(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-probe-stale"]

    # One ProbeRunDuration value per run: its sample count is the number of runs.
    assert alarm["MetricName"] == "ProbeRunDuration"
    assert alarm["Namespace"] == "RouteHealth"
    assert {"Name": "service", "Value": "route-health"} in alarm["Dimensions"]
    assert alarm["Statistic"] == "SampleCount"
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


def test_one_relay_unhealthy_alarm_for_every_relay(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-relay-unhealthy"]
    assert alarm["MetricName"] == "RelaysUnhealthy"
    assert alarm["Dimensions"] == [{"Name": "service", "Value": "route-health"}]
    assert alarm["Statistic"] == "Minimum"  # a relay down in every run of the period, not a blip
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["Threshold"] == 1
    assert alarm["DatapointsToAlarm"] == alarm["EvaluationPeriods"] == 2
    # Which relay: the operator CLI or the saved query.
    assert "`route-health ops routes`" in alarm["AlarmDescription"]
    assert "relay-checks" in alarm["AlarmDescription"]


def test_one_error_alarm_sums_every_functions_errors(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-function-errors"]
    functions = synthesized.functions_by_handler()
    read = {query["Id"]: query["MetricStat"]["Metric"] for query in alarm["Metrics"] if "MetricStat" in query}
    assert {metric["Namespace"] for metric in read.values()} == {"AWS/Lambda"}
    assert {metric["MetricName"] for metric in read.values()} == {"Errors"}
    assert sorted(str(metric["Dimensions"]) for metric in read.values()) == sorted(
        str([{"Name": "FunctionName", "Value": {"Ref": logical_id}}]) for logical_id, _ in functions.values()
    )
    [expression] = [q["Expression"] for q in alarm["Metrics"] if "Expression" in q]
    assert all(f"FILL({query_id}, 0)" in expression for query_id in read)
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["Threshold"] == 1
    assert "Lambda errors" in alarm["AlarmDescription"]  # the dashboard widget that says which


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


def test_store_errors_alarm_counts_every_store_call_in_one_series(synthesized):
    alarm = _alarms(synthesized)["RouteHealth-prod-store-errors"]
    assert alarm["MetricName"] == "StoreError"
    assert alarm["Dimensions"] == [{"Name": "service", "Value": "route-health"}]
    assert alarm["Statistic"] == "Sum"
    assert alarm["DatapointsToAlarm"] == 2
    assert "store-errors-by-operation" in alarm["AlarmDescription"]


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

    readme_anchors = anchors_of(REPO_ROOT / "docs/operations.md")
    for name, props in _alarms(synthesized).items():
        description = props["AlarmDescription"]
        assert "First steps: " in description, name
        match = re.search(r"Runbook: docs/operations\.md#([\w-]+)$", description)
        assert match, f"{name}: no runbook link"
        assert match.group(1) in readme_anchors, f"{name}: docs/operations.md has no #{match.group(1)}"
        assert len(description) <= 1024


def _saved_queries(synthesized) -> dict[str, dict[str, Any]]:
    return {
        props["Properties"]["Name"].removeprefix("RouteHealth-prod/"): props["Properties"]
        for props in synthesized.resources("AWS::Logs::QueryDefinition").values()
    }


def test_saved_logs_insights_queries(synthesized):
    queries = _saved_queries(synthesized)
    assert set(queries) == {
        "why-did-a-route-go-relay",
        "failures-by-reason",
        "direct-failures-by-route",
        "probe-checks-by-route",
        "relay-checks",
        "store-errors-by-operation",
        "503s-by-route",
        "override-changes",
        "answer-cache-per-lookup",
        "relay-lookups-by-route",
    }
    functions = synthesized.functions_by_handler()
    log_group_of = {
        handler: {"Ref": props["LoggingConfig"]["LogGroup"]["Ref"]}
        for handler, (_, props) in functions.items()
    }
    why = queries["why-did-a-route-go-relay"]
    assert log_group_of[API_HANDLER] in why["LogGroupNames"]
    assert '"direct failed"' in why["QueryString"]
    assert '"probe check failed"' in why["QueryString"]
    assert "by message, route, group, reason" in queries["failures-by-reason"]["QueryString"]
    # MCP tool calls run the lookup function's handler and log to the MCP function's group.
    lookups = [log_group_of[API_HANDLER], log_group_of[MCP_HANDLER]]
    assert queries["503s-by-route"]["LogGroupNames"] == lookups
    assert queries["answer-cache-per-lookup"]["LogGroupNames"] == lookups
    assert "count(*) as answers by lookup, outcome" in queries["answer-cache-per-lookup"]["QueryString"]
    assert all(group in why["LogGroupNames"] for group in lookups)
    # The probe's checks run on schedule (probe) and on demand (POST /api/health/routes: ops).
    for name in ("probe-checks-by-route", "relay-checks"):
        assert queries[name]["LogGroupNames"] == [log_group_of[PROBE_HANDLER], log_group_of[OPS_HANDLER]]
    assert len(queries["store-errors-by-operation"]["LogGroupNames"]) == 4
    overrides = queries["override-changes"]
    assert overrides["LogGroupNames"] == [log_group_of[OPS_HANDLER]]
    assert 'filter audit = "route-override"' in overrides["QueryString"]


def test_every_query_an_alarm_names_is_saved(synthesized):
    saved = set(_saved_queries(synthesized))
    named = {
        query
        for props in _alarms(synthesized).values()
        for query in re.findall(r"(?:the |, )([\w-]+) query", props["AlarmDescription"])
    }
    assert named, "the alarms name the saved queries that show which route, relay or call"
    assert named <= saved


def test_the_dashboard_shows_per_route_detail_from_the_logs(widgets):
    assert set(_log_widgets(widgets)) == {
        "Live direct failures per route (logs)",
        "Failures by reason (logs)",
        "503 answers by route (logs)",
        "Probe: last direct check per route (logs)",
        "Relays: last health check per group (logs)",
        "Store errors by operation (logs)",
        "Answer cache per lookup (logs)",
        "Relay lookups per route (logs)",
    }


def test_the_alarms_read_few_metrics(synthesized):
    # CloudWatch bills an alarm per metric it reads (docs/benchmarks.md, "The monthly bill"): the alarms of the
    # budget, one for each question they answer.
    read = {
        name: sum(1 for query in props["Metrics"] if "MetricStat" in query) if "Metrics" in props else 1
        for name, props in _alarms(synthesized).items()
    }
    assert read == {
        "RouteHealth-prod-probe-stale": 1,
        "RouteHealth-prod-probe-throttles": 1,
        "RouteHealth-prod-relay-unhealthy": 1,
        "RouteHealth-prod-503-rate": 3,
        "RouteHealth-prod-api-5xx-rate": 2,
        "RouteHealth-prod-snapshot-stale": 2,
        "RouteHealth-prod-store-errors": 1,
        "RouteHealth-prod-unexpected-errors": 1,
        "RouteHealth-prod-function-errors": 4,  # one Errors metric per function
    }


def test_an_idle_deployment_of_this_stack_costs_at_most_8_dollars_a_month(synthesized):
    """The bench's cost model (bench/cases/cost.py) on this template, with every metric the probe can emit
    and the usage the last `make bench` measured: docs/benchmarks.md's promise for a deployment nobody uses."""
    from bench.cases.cost import inventory_of, monthly_bill
    from functions.handlers.metrics import PROBE_METRICS
    from tests.infrastructure.test_infra_deploy_settings import REPO_ROOT

    results = json.loads((REPO_ROOT / "bench" / "results" / "latest.json").read_text())
    every_probe_series = [f"RouteHealth/{name}{{service=route-health}}" for name in sorted(PROBE_METRICS)]
    results["sandbox_load"] = {**results["sandbox_load"], "metric_series_emitted": every_probe_series}

    idle = monthly_bill(results, inventory_of(synthesized.template))["cost_per_month"]["idle"]

    assert idle["usage"]["metric_series"] == len(PROBE_METRICS)
    assert idle["total_usd"] <= 8
