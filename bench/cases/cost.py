"""`cost_per_day`: DynamoDB request units per day from the probe schedule and the containers' snapshot reads.

Item sizes are computed with DynamoDB's size rules from the items a real probe run stored (scanned from moto
after the probe benchmark), and the writes per run are the calls counted during that run, so a change in the
store's layout shows up here. Prices are ASSUMED on-demand list prices (override with the environment
variables below); the point is the order of magnitude, not the cent.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from functions.core.model import PROBE_SLOT_MS, SNAPSHOT_TTL_MS

DAY_MS = 24 * 60 * 60 * 1000
PROBE_RUNS_PER_DAY = DAY_MS // PROBE_SLOT_MS  # 288
WARM_CONTAINERS = 10
REFRESHES_PER_CONTAINER_PER_DAY = DAY_MS // SNAPSHOT_TTL_MS  # 2,880: a container busy all day
OPERATOR_READS_PER_DAY = 50
"""Assumed `GET /api/health/routes` calls per day (each one Query of the verdict partition)."""
READ_UNIT_BYTES = 4 * 1024
WRITE_UNIT_BYTES = 1024
ASSUMED_PRICES_USD_PER_MILLION = {
    "region": "ap-northeast-2",
    "write_request_unit": float(os.environ.get("BENCH_WRU_USD_PER_MILLION", "0.7068")),
    "read_request_unit": float(os.environ.get("BENCH_RRU_USD_PER_MILLION", "0.1415")),
    "note": "ASSUMED on-demand list prices for Seoul (half of the pre-November-2024 $1.4135 / $0.283 per million);"
    " check the AWS price list; override with BENCH_WRU_USD_PER_MILLION / BENCH_RRU_USD_PER_MILLION",
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
    prices = ASSUMED_PRICES_USD_PER_MILLION
    write_usd = probe_writes / 1e6 * float(prices["write_request_unit"])  # type: ignore[arg-type]
    read_usd = read_units / 1e6 * float(prices["read_request_unit"])  # type: ignore[arg-type]
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
        "assumed_prices_usd_per_million": prices,
    }
