"""The benchmark's monthly bill: every component priced per scenario from the measured results."""

from __future__ import annotations

from typing import Any

import pytest

from bench.cases.cost import ASSUMPTIONS, PRICE_DEFAULTS_USD, SCENARIOS, SWITCHABLE, monthly_bill
from bench.report import COMPONENTS, bill_table
from functions.core import DIRECT_PROBED, RelayGroup, RouteKey
from functions.handlers.metrics import worst_case_series

INVENTORY = {
    "alarms": 9,
    "alarm_metrics": 15,
    "dashboards": 1,
    "kms_keys": 1,
    "secrets": 1,
    "distributions": 1,
    "memory_gb": {"api": 0.5, "probe": 0.5, "ops": 0.5},
}
WITHOUT_EDGE = {**INVENTORY, "distributions": 0}


def measured(series: list[str]) -> dict[str, Any]:
    return {
        "sandbox_load": {"metric_series_emitted": series, "log_bytes_per_lookup": 500},
        "probe_detail": {"every_upstream_slow_300ms_run_ms": 2000},
        "cost_per_day": {
            "breakdown": {
                "read_units_per_query": 1.0,
                "writes_per_probe_run": len(RouteKey),
                "write_units_per_write": 1,
                "verdict_item_bytes": {"total": 1400},
                "probe_slot_item_bytes": 88,
            }
        },
    }


SERIES = [
    "RouteHealth/RoutesFailingDirect{service=route-health}",
    "RouteHealth/ProbeRunDuration{service=route-health}",
    "RouteHealth/Lookups{Path=direct,service=route-health}",
]


def test_each_scenario_totals_its_components():
    result = monthly_bill(measured(SERIES), INVENTORY)

    for name, lookups in SCENARIOS.items():
        scenario = result["cost_per_month"][name]
        assert scenario["lookups"] == lookups
        assert scenario["total_usd"] == pytest.approx(sum(scenario[c] for c in COMPONENTS), abs=0.01)
    assert result["cost_per_month"]["10m"]["total_usd"] > result["cost_per_month"]["100k"]["total_usd"]
    assert result["metric_series"] == {
        "emitted": 3,
        "emitted_without_lookups": 2,
        "worst_case": worst_case_series(),
        "budget": 60,
    }


def test_idle_pays_for_the_probe_and_the_fixed_parts_only():
    idle = monthly_bill(measured(SERIES), INVENTORY)["cost_per_month"]["idle"]

    assert idle["api_gateway"] == 0
    assert idle["dynamodb_reads"] == 0
    assert idle["cloudwatch_metrics"] == pytest.approx(
        2 * PRICE_DEFAULTS_USD["cloudwatch_metric_series_month"]
    )
    assert idle["cloudwatch_alarms"] == pytest.approx(
        15 * PRICE_DEFAULTS_USD["cloudwatch_alarm_metric_month"]
    )
    assert idle["kms"] == PRICE_DEFAULTS_USD["kms_key_month"]
    assert idle["usage"]["invocations"] == 288 * 30  # the probe's schedule


def test_idle_without_the_switchable_parts_drops_exactly_them():
    bill = monthly_bill(measured(SERIES), INVENTORY)["cost_per_month"]
    idle = bill["idle"]

    assert SWITCHABLE == ("cloudwatch_dashboard", "kms", "xray")
    assert bill["idle_switched_off"]["total_usd"] == pytest.approx(
        idle["total_usd"] - idle["cloudwatch_dashboard"] - idle["kms"] - idle["xray"], abs=0.01
    )
    assert idle["cloudwatch_dashboard"] == PRICE_DEFAULTS_USD["cloudwatch_dashboard_month"]


def test_a_price_can_be_overridden(monkeypatch):
    monkeypatch.setenv("BENCH_PRICE_KMS_KEY_MONTH", "7")
    assert monthly_bill(measured(SERIES), INVENTORY)["cost_per_month"]["idle"]["kms"] == 7


def test_the_worst_case_series_are_priced_and_route53_is_compared():
    result = monthly_bill(measured(SERIES), INVENTORY)
    worst = result["cost_per_month"]["10m_worst_case_series"]
    assert worst["cloudwatch_metrics"] == pytest.approx(
        worst_case_series() * PRICE_DEFAULTS_USD["cloudwatch_metric_series_month"]
    )
    endpoints = len(DIRECT_PROBED) + len(RelayGroup)  # each direct API and each relay
    assert result["route53_alternative"]["endpoints"] == endpoints
    assert result["route53_alternative"]["basic_usd"] == pytest.approx(endpoints * 0.75)
    table = bill_table({**result, "metric_series": result["metric_series"]})
    assert "| **total** |" in table
    assert "Route 53" in table


def test_idle_pays_nothing_for_the_edge():
    with_edge = monthly_bill(measured(SERIES), INVENTORY)["cost_per_month"]["idle"]
    without = monthly_bill(measured(SERIES), WITHOUT_EDGE)["cost_per_month"]["idle"]

    assert with_edge["cloudfront"] == 0
    assert with_edge["total_usd"] == without["total_usd"]


def test_edge_hits_cost_no_lambda_api_gateway_dynamodb_or_log():
    """At the assumed hit ratio, only the misses reach the API: the per-lookup parts shrink in proportion."""
    ratio = ASSUMPTIONS["edge_hit_ratio"]
    assert 0 < ratio < 1
    with_edge = monthly_bill(measured(SERIES), INVENTORY)["cost_per_month"]["10m"]
    without = monthly_bill(measured(SERIES), WITHOUT_EDGE)["cost_per_month"]["10m"]

    assert with_edge["lookups"] == without["lookups"] == 10_000_000
    assert with_edge["usage"]["edge_hits"] == 10_000_000 * ratio
    assert with_edge["usage"]["lookups_reaching_the_api"] == 10_000_000 * (1 - ratio)
    operator_calls = ASSUMPTIONS["operator_calls_per_day"] * 30
    assert with_edge["api_gateway"] == pytest.approx(
        (10_000_000 * (1 - ratio) + operator_calls)
        / 1e6
        * PRICE_DEFAULTS_USD["http_api_requests_per_million"]
    )
    for component in ("lambda_requests", "lambda_compute", "dynamodb_writes", "cloudwatch_logs", "xray"):
        assert with_edge[component] < without[component], component
    assert with_edge["total_usd"] < without["total_usd"]


def test_cloudfront_bills_only_past_its_always_free_tier():
    bill = monthly_bill(measured(SERIES), INVENTORY)["cost_per_month"]
    assert bill["100k"]["cloudfront"] == 0

    # 10 M lookups and the operator's calls: the requests just past 10 M, the function past 2 M invocations.
    operator_calls = ASSUMPTIONS["operator_calls_per_day"] * 30
    requests_usd = operator_calls / 10_000 * PRICE_DEFAULTS_USD["cloudfront_https_requests_per_10k"]
    functions_usd = 8_000_000 / 1e6 * PRICE_DEFAULTS_USD["cloudfront_function_invocations_per_million"]
    assert bill["10m"]["cloudfront"] == pytest.approx(requests_usd + functions_usd, abs=1e-4)


def test_the_hit_ratio_is_an_assumption_you_can_override(monkeypatch):
    monkeypatch.setenv("BENCH_ASSUME_EDGE_HIT_RATIO", "0.8")
    bill = monthly_bill(measured(SERIES), INVENTORY)["cost_per_month"]
    assert bill["10m"]["usage"]["lookups_reaching_the_api"] == 2_000_000
    assert bill["assumptions"]["edge_hit_ratio"] == 0.8
    assert "80%" in bill["note"]

    monkeypatch.setenv("BENCH_ASSUME_EDGE_HIT_RATIO", "1.5")
    with pytest.raises(ValueError, match="EDGE_HIT_RATIO"):
        monthly_bill(measured(SERIES), INVENTORY)
