"""The bill: `cost_per_day` (DynamoDB, from the probe case) and `monthly_bill` (every component, from the
measured results), at idle, 100 k and 10 M lookups a month.

Item sizes are computed with DynamoDB's size rules from the items a real probe run stored (scanned from moto
after the probe benchmark), and the writes per run are the calls counted during that run, so a change in the
store's layout shows up here. The monthly bill takes the metric series the load run really emitted, its log
volume per lookup, the probe's run time against upstreams answering in 300 ms, and the alarms, dashboards,
keys, secrets and function memory of the synthesized stack. Prices are ASSUMED on-demand list prices
(`PRICE_DEFAULTS_USD`, each overridable), and so are the few usage figures a local run cannot measure
(`ASSUMPTIONS`); the point is the order of magnitude and which component dominates, not the cent.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.common import LOOKUP_ENDPOINTS
from functions.core.model import DIRECT_PROBED, PROBE_SLOT_MS, RelayGroup
from functions.handlers.metrics import (
    PROBE_METRICS,
    SERIES_BUDGET,
    worst_case_series,
)
from functions.handlers.settings import DAILY_LIMITED_PREFIXES, SECRET_MAX_AGE_S
from functions.services.snapshot_cache import REFRESH_DUE_AFTER_MS

ROOT = Path(__file__).resolve().parents[2]

DAY_MS = 24 * 60 * 60 * 1000
PROBE_RUNS_PER_DAY = DAY_MS // PROBE_SLOT_MS  # 288
WARM_CONTAINERS = 10
REFRESHES_PER_CONTAINER_PER_DAY = DAY_MS // REFRESH_DUE_AFTER_MS  # 3,456: a container busy all day
OPERATOR_READS_PER_DAY = 50
"""Assumed `GET /api/health/routes` calls per day (each one Query of the verdict partition)."""
READ_UNIT_BYTES = 4 * 1024
WRITE_UNIT_BYTES = 1024

PRICE_DEFAULTS_USD = {
    "lambda_requests_per_million": 0.20,
    "lambda_arm64_gb_second": 0.0000133334,
    "http_api_requests_per_million": 1.00,
    "dynamodb_write_request_units_per_million": 0.7068,
    "dynamodb_read_request_units_per_million": 0.1415,
    "dynamodb_storage_gb_month": 0.2846,
    "cloudwatch_metric_series_month": 0.30,
    "cloudwatch_alarm_metric_month": 0.10,
    "cloudwatch_dashboard_month": 3.00,
    "cloudwatch_logs_ingestion_gb": 0.76,
    "cloudwatch_logs_storage_gb_month": 0.0314,
    "secrets_manager_secret_month": 0.40,
    "secrets_manager_api_calls_per_10k": 0.05,
    "kms_key_month": 1.00,
    "xray_traces_recorded_per_million": 5.00,
    "route53_health_check_non_aws_month": 0.75,
    "route53_health_check_optional_feature_month": 2.00,
    "cloudfront_https_requests_per_10k": 0.012,
    "cloudfront_data_transfer_out_gb": 0.120,
    "cloudfront_function_invocations_per_million": 0.10,
}
"""ASSUMED on-demand list prices for ap-northeast-2 (Seoul; CloudFront's for viewers in Korea), without free
tiers except CloudFront's always-free one (`CLOUDFRONT_FREE_PER_MONTH`); check the AWS price list."""
CLOUDFRONT_FREE_PER_MONTH = {
    "requests": 10_000_000,
    "data_transfer_out_gb": 1024,
    "function_invocations": 2_000_000,
}
"""CloudFront's always-free tier, every month: 1 TB out, 10 M HTTP(S) requests, 2 M function invocations."""


def prices() -> dict[str, float]:
    """The assumed prices, each overridable with `BENCH_PRICE_<KEY IN CAPITALS>` (e.g. BENCH_PRICE_KMS_KEY_MONTH)."""
    return {
        key: float(os.environ.get(f"BENCH_PRICE_{key.upper()}", default))
        for key, default in PRICE_DEFAULTS_USD.items()
    }


def attribute_value_size(value: Mapping[str, Any]) -> int:
    """Bytes DynamoDB counts for one attribute value (low-level JSON form, e.g. {"N": "123"})."""
    ((kind, raw),) = value.items()
    if kind == "S":
        return len(str(raw).encode())
    if kind == "N":
        digits = Decimal(str(raw)).normalize().as_tuple().digits
        return math.ceil(len(digits) / 2) + 1
    if kind in {"BOOL", "NULL"}:
        return 1
    if kind == "B":
        return len(raw)
    if kind == "M":
        return 3 + sum(len(k.encode()) + 1 + attribute_value_size(v) for k, v in raw.items())
    if kind == "L":
        return 3 + sum(1 + attribute_value_size(v) for v in raw)
    raise ValueError(f"unsupported attribute type {kind}")


def item_size(item: Mapping[str, Mapping[str, Any]]) -> int:
    """DynamoDB item size: attribute names plus values."""
    return sum(len(name.encode()) + attribute_value_size(value) for name, value in item.items())


def cost_per_day(
    *,
    verdict_items: Sequence[Mapping[str, Mapping[str, Any]]],
    slot_item: Mapping[str, Mapping[str, Any]],
    writes_per_run: int,
    consistent_reads: bool,
    containers: int = WARM_CONTAINERS,
) -> dict[str, Any]:
    sizes = [item_size(item) for item in verdict_items]
    largest_write_units = max(math.ceil(size / WRITE_UNIT_BYTES) for size in [*sizes, item_size(slot_item)])
    query_bytes = sum(sizes)
    units_per_query = math.ceil(query_bytes / READ_UNIT_BYTES) * (1.0 if consistent_reads else 0.5)

    probe_writes = PROBE_RUNS_PER_DAY * writes_per_run * largest_write_units
    container_reads = containers * REFRESHES_PER_CONTAINER_PER_DAY * units_per_query
    operator_reads = OPERATOR_READS_PER_DAY * units_per_query
    read_units = container_reads + operator_reads
    price = prices()
    write_usd = probe_writes / 1e6 * price["dynamodb_write_request_units_per_million"]
    read_usd = read_units / 1e6 * price["dynamodb_read_request_units_per_million"]
    return {
        "write_request_units": probe_writes,
        "read_request_units": read_units,
        "usd": round(write_usd + read_usd, 4),
        "usd_per_month_30d": round((write_usd + read_usd) * 30, 3),
        "breakdown": {
            "probe_runs": PROBE_RUNS_PER_DAY,
            "writes_per_probe_run": writes_per_run,
            "write_units_per_write": largest_write_units,
            "probe_write_usd": round(write_usd, 4),
            "warm_containers": containers,
            "snapshot_queries_per_container": REFRESHES_PER_CONTAINER_PER_DAY,
            "operator_queries": OPERATOR_READS_PER_DAY,
            "verdict_items": len(sizes),
            "verdict_item_bytes": {"min": min(sizes), "max": max(sizes), "total": query_bytes},
            "probe_slot_item_bytes": item_size(slot_item),
            "consistent_read": consistent_reads,
            "read_units_per_query": units_per_query,
            "container_read_units": container_reads,
            "operator_read_units": operator_reads,
            "read_usd": round(read_usd, 4),
            "not_included": "live failure reports (1-2 writes each, at most one per route per container per "
            "5 min), storage (a few KB), and a passing check during a live block (2 writes instead of 1)",
        },
        "assumed_prices_usd_per_million": {
            "region": "ap-northeast-2",
            "write_request_unit": price["dynamodb_write_request_units_per_million"],
            "read_request_unit": price["dynamodb_read_request_units_per_million"],
            "note": "ASSUMED on-demand list prices; override with BENCH_PRICE_DYNAMODB_WRITE_REQUEST_UNITS_"
            "PER_MILLION / BENCH_PRICE_DYNAMODB_READ_REQUEST_UNITS_PER_MILLION",
        },
    }


# --- the monthly bill --------------------------------------------------------------------------------

MONTH_S = 30 * 24 * 60 * 60
SCENARIOS = {"idle": 0, "100k": 100_000, "10m": 10_000_000}
"""Lookups (lookup API requests) a month."""
ROUTE53_ENDPOINTS = len(DIRECT_PROBED) + len(RelayGroup)
"""What the probe checks: 23 direct APIs and 4 relays."""
ASSUMPTIONS = {
    "lookup_ms": 300,
    "peak_to_average_traffic": 3,
    "operator_calls_per_day": OPERATOR_READS_PER_DAY,
    "platform_log_bytes_per_invocation": 350,
    "access_log_bytes_per_request": 400,
    "probe_log_bytes_per_run": 14_000,
    "edge_hit_ratio": 0.5,
    "answer_bytes": 4_000,
}
"""What a local run cannot measure: a lookup's billed time (one upstream answer in ~300 ms, the handler adds
~1 ms), how much busier the peak hour is than the average, the operator's calls (none at idle), Lambda's own
START/END/REPORT lines and API Gateway's access log line, and the probe's lines per run (a line per check with
Lambda's context keys: 26 lines, 13.4 KB, in the integration harness with every check passing; a failing check
adds a little), the share of lookups the edge answers from its cache (hits reach no function, API Gateway,
DynamoDB or log; `cache.stream` in `make bench` measures the sandbox's on a Zipf stream) and an answer's bytes
on the wire. Each is overridable with `BENCH_ASSUME_<KEY>` (e.g. BENCH_ASSUME_EDGE_HIT_RATIO=0.8)."""
XRAY_SAMPLED_SHARE = 0.05
"""X-Ray's default rule: the first request each second, then 5 % of the others."""
SWITCHABLE = ("cloudwatch_dashboard", "kms", "xray")
"""What an operator can switch off with a stack parameter (Dashboard=off, AlarmTopicEncryption=none,
Tracing=off); the bill reports idle without them too."""


def assumptions() -> dict[str, float]:
    assumed = {
        key: float(os.environ.get(f"BENCH_ASSUME_{key.upper()}", default))
        for key, default in ASSUMPTIONS.items()
    }
    if not 0 <= assumed["edge_hit_ratio"] <= 1:
        raise ValueError("BENCH_ASSUME_EDGE_HIT_RATIO is a share of the lookups, from 0 to 1")
    return assumed


def origin_lookups(lookups: int, inventory: Mapping[str, Any], assume: Mapping[str, float]) -> int:
    """The lookups that reach API Gateway and the functions: behind the edge, only its misses."""
    if not inventory["distributions"]:
        return lookups
    return round(lookups * (1 - assume["edge_hit_ratio"]))


def stack_inventory() -> dict[str, Any]:
    """What the synthesized stack bills by itself, deployed with its parameters' defaults (an empty
    dependencies layer: nothing here depends on its contents)."""
    # jsii prints a banner on stderr for Node versions past their end of life: noise in the bench's progress.
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
    from infra.stack import create_app

    with tempfile.TemporaryDirectory(prefix="route-health-cost-") as layer:
        (Path(layer) / "python").mkdir()
        context = json.loads((ROOT / "cdk.json").read_text())["context"]
        app, stack = create_app({**context, "layerDir": layer}, nag=False)
        template = app.synth().get_stack_by_name(stack.stack_name).template
    return inventory_of(template)


def inventory_of(template: Mapping[str, Any]) -> dict[str, Any]:
    """Alarm metrics, dashboards, customer keys, secrets and the functions' memory of a template. A resource
    that a parameter can switch off (a condition) counts: its parameter's default keeps it."""
    resources = list(template["Resources"].values())

    def of(kind: str) -> list[dict[str, Any]]:
        return [resource["Properties"] for resource in resources if resource["Type"] == kind]

    memory = {
        props["Handler"].split(".")[2]: props.get("MemorySize", 128) / 1024
        for props in of("AWS::Lambda::Function")
        if str(props.get("Handler", "")).startswith("functions.handlers.")
    }
    return {
        "alarms": len(of("AWS::CloudWatch::Alarm")),
        # A metric-math alarm is billed per metric it reads.
        "alarm_metrics": sum(
            sum(1 for query in alarm["Metrics"] if "MetricStat" in query) if "Metrics" in alarm else 1
            for alarm in of("AWS::CloudWatch::Alarm")
        ),
        "dashboards": len(of("AWS::CloudWatch::Dashboard")),
        "kms_keys": len(of("AWS::KMS::Key")),
        "secrets": len(of("AWS::SecretsManager::Secret")),
        "distributions": len(of("AWS::CloudFront::Distribution")),
        "memory_gb": memory,
    }


def monthly_bill(results: Mapping[str, Any], inventory: Mapping[str, Any]) -> dict[str, Any]:
    """`cost_per_month` per scenario (total and per component), `metric_series`, and the Route 53 alternative."""
    price, assume = prices(), assumptions()
    emitted = results["sandbox_load"]["metric_series_emitted"]
    series: dict[str, Any] = {
        "emitted": len(emitted),
        "emitted_without_lookups": sum(
            1 for s in emitted if s.split("/", 1)[1].split("{")[0] in PROBE_METRICS
        ),
        "worst_case": worst_case_series(),
        "budget": SERIES_BUDGET,
    }
    bill: dict[str, Any] = {
        name: _scenario(lookups, results, inventory, series, price, assume)
        for name, lookups in SCENARIOS.items()
    }
    worst = _scenario(
        SCENARIOS["10m"], results, inventory, {**series, "emitted": series["worst_case"]}, price, assume
    )
    bill["10m_worst_case_series"] = {
        "total_usd": worst["total_usd"],
        "cloudwatch_metrics": worst["cloudwatch_metrics"],
    }
    idle = bill["idle"]
    bill["idle_switched_off"] = {
        "total_usd": round(idle["total_usd"] - sum(idle[component] for component in SWITCHABLE), 2),
        "without": list(SWITCHABLE),
    }
    bill["prices_usd"] = price
    bill["assumptions"] = assume
    bill["note"] = (
        "ASSUMED ap-northeast-2 list prices without free tiers but CloudFront's always-free one (override "
        "BENCH_PRICE_<KEY>); usage measured where a local run can (metric series, log bytes per lookup, DynamoDB "
        "items and writes, probe time with 300 ms upstreams, the synthesized stack), assumed otherwise "
        "(BENCH_ASSUME_<KEY>; with the edge, an edge hit ratio of "
        f"{assume['edge_hit_ratio']:.0%} of the lookups). Not included: Logs Insights queries an operator "
        "runs, SNS e-mails, data transfer out of AWS other than CloudFront's."
    )
    return {
        "cost_per_month": bill,
        "metric_series": series,
        "route53_alternative": _route53(price),
    }


def _scenario(
    lookups: int,
    results: Mapping[str, Any],
    inventory: Mapping[str, Any],
    series: Mapping[str, Any],
    price: Mapping[str, float],
    assume: Mapping[str, float],
) -> dict[str, Any]:
    dynamo = results["cost_per_day"]["breakdown"]
    memory = inventory["memory_gb"]
    viewer_lookups, lookups = lookups, origin_lookups(lookups, inventory, assume)
    probe_runs = PROBE_RUNS_PER_DAY * 30
    probe_s = results["probe_detail"]["every_upstream_slow_300ms_run_ms"] / 1000
    operator_calls = 0 if viewer_lookups == 0 else assume["operator_calls_per_day"] * 30
    lookup_s = assume["lookup_ms"] / 1000
    # Busy containers: the peak hour's concurrency; each refreshes its snapshot (and its secret) while busy.
    containers = (
        0 if lookups == 0 else math.ceil(lookups / MONTH_S * assume["peak_to_average_traffic"] * lookup_s)
    )
    snapshot_reads = min(lookups, containers * REFRESHES_PER_CONTAINER_PER_DAY * 30)
    read_units = (snapshot_reads + operator_calls) * dynamo["read_units_per_query"]
    write_units = probe_runs * dynamo["writes_per_probe_run"] * dynamo["write_units_per_write"]
    quota_writes = lookups * _limited_share()  # at most one ADD per limited lookup
    stored_bytes = (
        dynamo["verdict_item_bytes"]["total"] + 2 * PROBE_RUNS_PER_DAY * dynamo["probe_slot_item_bytes"]
    )
    invocations = lookups + probe_runs + operator_calls
    log_gb = _log_gb(results, assume, lookups=lookups, probe_runs=probe_runs, operator_calls=operator_calls)
    # Each busy container and the probe's read the secret once per max age (the probe runs every 5 minutes).
    secret_reads = (containers + 1) * (MONTH_S // max(300, SECRET_MAX_AGE_S))
    traced = (
        min(lookups, MONTH_S) + XRAY_SAMPLED_SHARE * max(0, lookups - MONTH_S) + probe_runs + operator_calls
    )
    metric_series = series["emitted"] if viewer_lookups else series["emitted_without_lookups"]
    components = {
        "lambda_requests": invocations / 1e6 * price["lambda_requests_per_million"],
        "lambda_compute": (
            lookups * lookup_s * memory["api"]
            + probe_runs * probe_s * memory["probe"]
            + operator_calls * 1 * memory["ops"]
        )
        * price["lambda_arm64_gb_second"],
        "api_gateway": (lookups + operator_calls) / 1e6 * price["http_api_requests_per_million"],
        "dynamodb_writes": (write_units + quota_writes)
        / 1e6
        * price["dynamodb_write_request_units_per_million"],
        "dynamodb_reads": read_units / 1e6 * price["dynamodb_read_request_units_per_million"],
        "dynamodb_storage": stored_bytes / 1024**3 * price["dynamodb_storage_gb_month"],
        "cloudwatch_metrics": metric_series * price["cloudwatch_metric_series_month"],
        "cloudwatch_alarms": inventory["alarm_metrics"] * price["cloudwatch_alarm_metric_month"],
        "cloudwatch_dashboard": inventory["dashboards"] * price["cloudwatch_dashboard_month"],
        "cloudwatch_logs": log_gb
        * (price["cloudwatch_logs_ingestion_gb"] + price["cloudwatch_logs_storage_gb_month"]),
        "secrets_manager": inventory["secrets"] * price["secrets_manager_secret_month"]
        + secret_reads / 10_000 * price["secrets_manager_api_calls_per_10k"],
        "kms": inventory["kms_keys"] * price["kms_key_month"],
        "xray": traced / 1e6 * price["xray_traces_recorded_per_million"],
        "cloudfront": _cloudfront_usd(
            viewer_lookups, operator_calls, price, assume, distributions=inventory["distributions"]
        ),
    }
    return {
        "lookups": viewer_lookups,
        "total_usd": round(sum(components.values()), 2),
        **{name: round(usd, 4) for name, usd in components.items()},
        "usage": {
            "edge_hits": viewer_lookups - lookups,
            "lookups_reaching_the_api": lookups,
            "invocations": round(invocations),
            "busy_containers": containers,
            "dynamodb_read_units": round(read_units),
            "dynamodb_write_units": round(write_units + quota_writes),
            "metric_series": metric_series,
            "alarm_metrics": inventory["alarm_metrics"],
            "log_gb": round(log_gb, 3),
            "xray_traces": round(traced),
            "secret_reads": secret_reads,
        },
    }


def _limited_share() -> float:
    """The share of lookups under the daily quota's prefixes, over the benchmark's endpoints."""
    limited = sum(path.startswith(DAILY_LIMITED_PREFIXES) for path, _ in LOOKUP_ENDPOINTS)
    return limited / len(LOOKUP_ENDPOINTS)


def _cloudfront_usd(
    lookups: float,
    operator_calls: float,
    price: Mapping[str, float],
    assume: Mapping[str, float],
    *,
    distributions: int,
) -> float:
    """Every request passes the distribution (hit or miss; the operator's too); each lookup also runs the
    viewer-request function. Only what exceeds the always-free tier is billed."""
    if not distributions:
        return 0.0
    free = CLOUDFRONT_FREE_PER_MONTH
    requests = max(0.0, lookups + operator_calls - free["requests"])
    transfer_gb = max(0.0, lookups * assume["answer_bytes"] / 1024**3 - free["data_transfer_out_gb"])
    invocations = max(0.0, lookups - free["function_invocations"])
    return (
        requests / 10_000 * price["cloudfront_https_requests_per_10k"]
        + transfer_gb * price["cloudfront_data_transfer_out_gb"]
        + invocations / 1e6 * price["cloudfront_function_invocations_per_million"]
    )


def _log_gb(
    results: Mapping[str, Any],
    assume: Mapping[str, float],
    *,
    lookups: float,
    probe_runs: int,
    operator_calls: float,
) -> float:
    """The functions' own lines, the platform's line per invocation, and the API's access log line per request."""
    log_bytes = (
        lookups * results["sandbox_load"]["log_bytes_per_lookup"]
        + probe_runs * assume["probe_log_bytes_per_run"]
        + (lookups + probe_runs + operator_calls) * assume["platform_log_bytes_per_invocation"]
        + (lookups + operator_calls) * assume["access_log_bytes_per_request"]
    )
    return float(log_bytes) / 1024**3


def _route53(price: Mapping[str, float]) -> dict[str, Any]:
    """Route 53 health checks of the same 27 endpoints (non-AWS endpoints), basic and like the probe
    (HTTPS and a body match)."""
    basic = ROUTE53_ENDPOINTS * price["route53_health_check_non_aws_month"]
    https_and_body = ROUTE53_ENDPOINTS * (
        price["route53_health_check_non_aws_month"] + 2 * price["route53_health_check_optional_feature_month"]
    )
    return {
        "endpoints": ROUTE53_ENDPOINTS,
        "basic_usd": round(basic, 2),
        "https_and_string_match_usd": round(https_and_body, 2),
        "note": "health checks only: no routing decision, no POST bodies or relay Bearer/Access headers, "
        "and a string match is not the probe's schema validation",
    }
