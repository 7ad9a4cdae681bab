"""Small helpers shared by the benchmark cases: medians, progress lines, quiet stdout, fixtures."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from functions.core import RelayCheck, RelayGroup, RouteCheck, RouteKey
from functions.core.model import Reason

_STARTED = time.monotonic()
_PROGRESS = os.fdopen(os.dup(2), "w", buffering=1)  # survives the fd-level silencing below

TABLE_NAME = "route-health-bench"
REGION = "ap-northeast-2"
BENCH_SECRET_VALUES: Mapping[str, str] = {
    "HEALTH_CHECK_SECRET": "bench-health-secret",
    "OY_RELAY_TOKEN": "bench-oy-token",
    "OY_ACCESS_CLIENT_ID": "bench-oy-access-id",
    "OY_ACCESS_CLIENT_SECRET": "bench-oy-access-secret",
    "CONVENIENCE_RELAY_TOKEN": "bench-conv-token",
    "DTRYX_RELAY_TOKEN": "bench-dtryx-token",
}
TODAY_KST = (datetime.now(UTC) + timedelta(hours=9)).date().isoformat()
SEOUL = {"lat": "37.5635", "lon": "126.9839"}
CINEMA = {"brandCode": "indieart", "cinemaCode": "000067"}

LOOKUP_ENDPOINTS: Sequence[tuple[str, Mapping[str, str]]] = (
    ("/api/oliveyoung/stores", {"keyword": "명동"}),
    ("/api/oliveyoung/products", {"keyword": "립밤"}),
    ("/api/oliveyoung/products/A000000165760", {}),
    ("/api/oliveyoung/stock", {"productId": "8800362322138", **SEOUL}),
    ("/api/cu/products", {"keyword": "레쓰비"}),
    ("/api/cu/stores", SEOUL),
    ("/api/gs25/products", {"keyword": "코카콜라"}),
    ("/api/gs25/stock", {"itemCode": "8801094082604", **SEOUL}),
    ("/api/seveneleven/products", {"keyword": "코카콜라"}),
    ("/api/seveneleven/stores", {"keyword": "강남"}),
    ("/api/seveneleven/popwords", {}),
    ("/api/seveneleven/stock", {"itemCd": "8801056018979", "storeCd": "64676"}),
    ("/api/seveneleven/catalog/pages", {}),
    ("/api/seveneleven/catalog/issues", {}),
    ("/api/seveneleven/catalog/exhibitions", {}),
    ("/api/dtryx/movies", CINEMA),
    ("/api/dtryx/play-dates", CINEMA),
    ("/api/dtryx/timetable", {**CINEMA, "playDate": TODAY_KST}),
)
"""Every lookup endpoint with valid parameters (the sandbox e2e tests use the same ones)."""


def progress(message: str) -> None:
    _PROGRESS.write(f"[bench {time.monotonic() - _STARTED:6.1f}s] {message}\n")


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (no interpolation: an observed value)."""
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5))
    return float(ordered[min(rank, len(ordered)) - 1])


def time_batch(call: Callable[[], Any], count: int) -> float:
    """Mean seconds per call over `count` back-to-back calls."""
    started = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - started) / count


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """Sends fd 1 to /dev/null: Powertools' log and EMF lines are still written (their cost counts),
    they just do not flood the terminal."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def all_healthy_checks(now: int) -> tuple[list[RouteCheck], list[RelayCheck]]:
    """A probe result where every direct route and every relay passed at `now`."""
    routes = [RouteCheck(key, direct=True, checked_at=now, reason=Reason.OK) for key in RouteKey]
    relays = [RelayCheck(group, healthy=True, checked_at=now, reason=Reason.OK) for group in RelayGroup]
    return routes, relays


@dataclass(frozen=True)
class BenchLambdaContext:
    function_name: str = "route-health-bench"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:ap-northeast-2:123456789012:function:route-health-bench"
    aws_request_id: str = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self) -> int:
        return 15_000


def api_event(path: str, query: Mapping[str, str], *, now_ms: int) -> dict[str, Any]:
    """An API Gateway HTTP API (payload v2) GET event, as API Gateway sends it."""
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": urlencode(dict(query)),
        "headers": {"host": "api.example.test", "user-agent": "bench"},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "api",
            "domainName": "api.example.test",
            "domainPrefix": "api",
            "http": {
                "method": "GET",
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "bench",
            },
            "requestId": "bench",
            "routeKey": "$default",
            "stage": "$default",
            "time": "01/Jan/2026:00:00:00 +0000",
            "timeEpoch": now_ms,
        },
        "isBase64Encoded": False,
    }
    if query:
        event["queryStringParameters"] = dict(query)
    return event
