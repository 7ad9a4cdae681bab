"""Small helpers shared by the benchmark cases: medians, progress lines, quiet stdout, fixtures."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from functions.core import RelayCheck, RelayGroup, RouteCheck, RouteKey
from functions.core.model import Reason
from sandbox.gateway import LambdaContext, http_api_event, match_route

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
    "CGV_SIGNING_KEY": "bench-cgv-signing-key",
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
    ("/api/cgv/theaters", {"keyword": "강남"}),
    ("/api/cgv/movies", {"theaterCode": "0056"}),
    ("/api/cgv/timetable", {"theaterCode": "0056", "limit": "10"}),
)
"""Every lookup endpoint with valid parameters, for the load run."""


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
def on_moto() -> Iterator[None]:
    """AWS faked in process by moto (in the bench's region unless one is set), with stdout quiet."""
    from moto import mock_aws  # imported here: only the cases on moto pay for it

    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
    with mock_aws(), quiet_stdout():
        yield


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


def lambda_context(function: str) -> LambdaContext:
    """The sandbox's Lambda context (what Powertools reads), for a function named route-health-<function>."""
    return LambdaContext(f"route-health-{function}", timeout_s=15.0)


def api_event(path: str, query: Mapping[str, str], *, now_ms: int) -> dict[str, Any]:
    """An API Gateway HTTP API (payload v2) GET event, built exactly as the sandbox gateway builds it."""
    route = match_route("GET", path)
    assert route is not None, path
    target = f"{path}?{urlencode(dict(query))}" if query else path
    return http_api_event(
        route=route,
        method="GET",
        target=target,
        headers=[("host", "api.example.test"), ("user-agent", "bench")],
        body=b"",
        source_ip="127.0.0.1",
        now_ms=now_ms,
    )
