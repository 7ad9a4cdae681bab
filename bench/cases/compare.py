"""The comparison across retailers (`GET /api/compare/products`) through the real API handler, one container
on moto (bench/cases/handler.py's), its answer cache off, with simulated retailers in process.

- `latency_ratio_vs_slowest_member`: the retailers answer after 50 (CU's search), 100 (GS25), 150 (7-Eleven)
  and 200 ms (Olive Young); the median wall time of a compare of all four over the median of its slowest
  member alone (`/api/oliveyoung/products`, the same handler), interleaved. Run at once, the compare takes
  about the slowest search, not the sum (2.5 times it); target <= 1.3.
- `cpu_overhead_us_over_slowest_member`: with every retailer answering at once, the process CPU time of a
  compare (the request's thread and its members') minus that of its slowest member alone, interleaved
  batches, medians: what asking the other three at once and merging costs. Beside it, the same over all four
  searches asked one after another (`detail.cpu_overhead_us_over_its_members_one_by_one`): the threads' share.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx

from bench.cases.handler import NOW, _services, _settings, _WholeTimeLeft, instant_upstream
from bench.common import api_event, median, on_moto, progress
from functions.core import RouteKey
from sandbox.simulator.routes import retailer_route

COMPARE = ("/api/compare/products", {"keyword": "콜라"})
SLOWEST = ("/api/oliveyoung/products", {"keyword": "콜라", "size": "5"})
"""Olive Young's search as the compare asks it (its default limit of 5 rows)."""
MEMBERS = (
    ("/api/cu/products", {"keyword": "콜라", "limit": "5"}),
    ("/api/gs25/products", {"keyword": "콜라"}),
    ("/api/seveneleven/products", {"keyword": "콜라", "size": "5"}),
    SLOWEST,
)
DELAYS_MS = {
    RouteKey.CU_STOCK: 50,  # CU's priming call answers at once
    RouteKey.GS25_PRODUCTS: 100,
    RouteKey.SEVEN_GOODS: 150,
    RouteKey.OY_PRODUCT_SEARCH: 200,
}
LATENCY_REPEATS = 15
CPU_REPEATS = 15
PER_BATCH = 30
WARMUP = 50
TARGET_RATIO = 1.3


def run() -> dict[str, Any]:
    progress("compare: a compare of four retailers against its slowest member alone, one container on moto")
    with on_moto():
        result = _run()
    progress(
        f"compare: {result['latency_ratio_vs_slowest_member']:.2f}x the slowest member's time "
        f"(target <= {TARGET_RATIO}); {result['cpu_overhead_us_over_slowest_member']:.0f} us of CPU over it"
    )
    return {"compare": result}


class _Delayed:
    """The simulated retailers, answering after `delays` (ms) per route key; empty: at once."""

    def __init__(self) -> None:
        self.delays: dict[RouteKey, int] = {}
        self._instant = instant_upstream()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        key = retailer_route(request.url.host, request.url.path)
        delay = self.delays.get(key, 0) if key is not None else 0
        if delay:
            time.sleep(delay / 1000)
        return self._instant.handle_request(request)


def _run() -> dict[str, Any]:
    from functions.handlers import api
    from functions.handlers.composition import LOOKUP_FUNCTION

    upstream = _Delayed()
    services = replace(_services(), upstream=httpx.MockTransport(upstream))
    lookups = services.lookup_function(_settings().model_copy(update={"response_cache": "off"}))
    LOOKUP_FUNCTION.install(lookups)
    context = _WholeTimeLeft("route-health-api", timeout_s=15.0)

    def through_handler(path: str, query: dict[str, str]) -> Callable[[], dict[str, Any]]:
        event = api_event(path, query, now_ms=NOW)

        def call() -> dict[str, Any]:
            response: dict[str, Any] = api.lambda_handler(event, context)  # type: ignore[arg-type]
            return response

        return call

    compare, slowest = through_handler(*COMPARE), through_handler(*SLOWEST)
    members = [through_handler(*member) for member in MEMBERS]
    try:
        answer = json.loads(compare()["body"])
        assert answer["success"], answer
        assert not answer["data"]["errors"], answer
        upstream.delays = dict(DELAYS_MS)
        latency = _latency(compare, slowest)
        upstream.delays = {}
        cpu = _cpu(compare, slowest, members)
    finally:
        LOOKUP_FUNCTION.install(None)
        lookups.close()
    return {
        "latency_ratio_vs_slowest_member": latency["ratio"],
        "cpu_overhead_us_over_slowest_member": cpu["overhead_us_over_slowest_member"],
        "detail": {
            "delays_ms": {key.value: delay for key, delay in DELAYS_MS.items()},
            "latency": latency,
            "cpu": cpu,
            "target_ratio": TARGET_RATIO,
            "conditions": "the handler bench's container (moto DynamoDB and Secrets Manager, fresh verdicts: "
            "every member goes direct), answer cache off, daily quota on (never reached), "
            "Powertools logs and metrics on (stdout to /dev/null)",
        },
    }


def _latency(compare: Callable[[], Any], slowest: Callable[[], Any]) -> dict[str, Any]:
    """Median wall time of each, one of each in turn."""
    walls: dict[str, list[float]] = {"compare": [], "slowest": []}
    for _ in range(LATENCY_REPEATS):
        for name, call in (("compare", compare), ("slowest", slowest)):
            started = time.perf_counter()
            assert call()["statusCode"] == 200
            walls[name].append((time.perf_counter() - started) * 1000)
    compare_ms, slowest_ms = median(walls["compare"]), median(walls["slowest"])
    return {
        "ratio": round(compare_ms / slowest_ms, 3),
        "compare_ms_median": round(compare_ms, 1),
        "slowest_member_ms_median": round(slowest_ms, 1),
        "sum_of_members_ms": sum(DELAYS_MS.values()),
        "repeats": LATENCY_REPEATS,
    }


def _cpu(
    compare: Callable[[], Any], slowest: Callable[[], Any], members: list[Callable[[], Any]]
) -> dict[str, Any]:
    """Process CPU µs per call (the members' threads included), interleaved batches, medians."""

    def one_by_one() -> None:
        for member in members:
            member()

    batches: dict[str, list[float]] = {"compare": [], "slowest": [], "members": []}
    calls = {"compare": compare, "slowest": slowest, "members": one_by_one}
    for call in calls.values():
        for _ in range(WARMUP):
            call()
    for _ in range(CPU_REPEATS):
        for name, call in calls.items():
            started = time.process_time()
            for _ in range(PER_BATCH):
                call()
            batches[name].append((time.process_time() - started) / PER_BATCH * 1e6)
    compare_us, slowest_us, members_us = (median(batches[name]) for name in ("compare", "slowest", "members"))
    return {
        "overhead_us_over_slowest_member": round(compare_us - slowest_us),
        "cpu_overhead_us_over_its_members_one_by_one": round(compare_us - members_us),
        "compare_us_median": round(compare_us),
        "slowest_member_us_median": round(slowest_us),
        "members_one_by_one_us_median": round(members_us),
        "repeats": CPU_REPEATS,
        "calls_per_batch": PER_BATCH,
    }
