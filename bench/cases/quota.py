"""`quota`: what the daily quota costs a lookup, that no lookup waits for it, and how far past the limit one
client spread over 8 containers gets.

- `overhead_ratio_on_vs_off`: handler overhead (API handler - bare fetch, as in the `handler` case) with the
  quota on (counting, headers, a flush every 0.25 s on a clock that follows real time; a limit never reached)
  over the same with `DAILY_RATE_LIMIT=0`, on moto with an instant upstream, in the calling thread's CPU time:
  what a lookup pays. Batches of on, off, a second off and bare are interleaved (taking turns to go first), 31
  of each; the ratio of the median per-batch overheads. `detail.request_path.noise_ratio_off_vs_off` (the
  second off over the first) is this machine's noise floor for that ratio, and `quota_check_us_median` the
  quota's own part alone, in a tight loop (hot caches: in place it costs more). `detail.request_path.wall`:
  the same in wall time, where the flush, running on the container's executor while the on batches are timed,
  adds its own CPU through the GIL: here that is moto's DynamoDB in process too (`flush_cpu_ms_median`, one
  ADD), which the Lambda's flush does not run (it waits on the network, without the GIL).
- `store_calls_on_request_path`: DynamoDB calls made on the request's thread over 1,000 lookups with the
  quota on (a botocore `before-call` hook); the flushes, on the container's executor, are counted apart.
- `overshoot_requests`: 8 containers, each with the quota the lookup function builds
  (`functions.handlers.daily_quota.limited_lookups`: its own executor and DynamoDB client), share one table in
  moto's server on 127.0.0.1 (one request at a time, so each ADD is atomic as in DynamoDB). Each container
  runs in its own thread and takes the same client's requests back to back, each costing SERVICE_MS (a fast
  upstream), REQUESTS_PER_CONTAINER of them; the overshoot is allowed - DAILY_LIMIT. `detail.at_stage_throttle`
  repeats it at the API stage's throttle rate (50 requests/s in all, the most a client can send through the
  deployed API) with a smaller limit. Each run also reports the bound docs/operations.md states, computed from the
  measured rate and DynamoDB latency: 2 x (flush interval + DynamoDB latency) x the rate through the other 7.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any
from unittest import mock

from moto.moto_server import threaded_moto_server
from moto.moto_server.werkzeug_app import DomainDispatcherApplication

from bench.cases.handler import (
    ENDPOINT,
    NOW,
    QUERY,
    QUOTA_NEVER_REACHED,
    REPEATS,
    WARMUP,
    CallCounter,
    _request_sent_direct,
    _services,
    _settings,
    _time_batch,
)
from bench.common import (
    BENCH_SECRET_VALUES,
    REGION,
    TABLE_NAME,
    api_event,
    lambda_context,
    median,
    on_moto,
    progress,
    quiet_stdout,
    time_batch,
)
from functions.adapters.direct import DirectTransport
from functions.adapters.dynamo_store import (
    DynamoVerdictStore,
    dynamodb_client,
    table_definition,
)
from functions.adapters.http import new_http_client
from functions.adapters.secrets import Secrets
from functions.core.model import SECOND_MS
from functions.core.quota import korea_day
from functions.handlers.composition import BACKGROUND_WORKERS, LookupFunction
from functions.handlers.daily_quota import LimitedLookups, limited_lookups
from functions.handlers.settings import ApiSettings
from functions.services.quota import FLUSH_INTERVAL_MS

PER_BATCH = 100
OVERHEAD_REPEATS = 2 * REPEATS + 1
STORE_COUNT_LOOKUPS = 1_000
CONTAINERS = 8
DAILY_LIMIT = 3_000
SERVICE_MS = 10
REQUESTS_PER_CONTAINER = 500
STAGE_THROTTLE_RPS = 50
THROTTLED_LIMIT = 200
THROTTLED_SECONDS = 7.0
LATENCY_SAMPLES = 50


def run() -> dict[str, Any]:
    progress("quota: handler overhead with the daily quota on vs off, store calls on the request path")
    with on_moto():
        request_path = _request_path()
    progress(f"quota: {CONTAINERS} containers hammering as one client (limit {DAILY_LIMIT})")
    with _atomic_moto_server() as endpoint_url, quiet_stdout():
        hammered = _overshoot(endpoint_url, limit=DAILY_LIMIT, interval_s=SERVICE_MS / 1000, seconds=None)
        throttled = _overshoot(
            endpoint_url,
            limit=THROTTLED_LIMIT,
            interval_s=CONTAINERS / STAGE_THROTTLE_RPS,
            seconds=THROTTLED_SECONDS,
        )
    progress(
        f"quota: overhead ratio on/off {request_path['overhead_ratio_on_vs_off']}, store calls on the request "
        f"path {request_path['store_calls_on_request_path']}, overshoot {hammered['overshoot_requests']} at "
        f"{hammered['rate_rps']} req/s (bound {hammered['stated_bound']}), {throttled['overshoot_requests']} at "
        f"{throttled['rate_rps']} req/s (bound {throttled['stated_bound']})"
    )
    return {
        "quota": {
            "overshoot_requests": hammered["overshoot_requests"],
            "overhead_ratio_on_vs_off": request_path["overhead_ratio_on_vs_off"],
            "store_calls_on_request_path": request_path["store_calls_on_request_path"],
            "detail": {
                "request_path": request_path,
                "hammering": hammered,
                "at_stage_throttle": throttled,
                "flush_interval_ms": FLUSH_INTERVAL_MS,
                "conditions": "moto (in-process for the request path; its server on 127.0.0.1, one request at "
                "a time, for the overshoot), Powertools logs/metrics on (stdout to /dev/null)",
            },
        }
    }


# --- the request path ----------------------------------------------------------------------------------------


def _request_path() -> dict[str, Any]:
    from functions.handlers import api, composition

    services = _services()
    started = time.monotonic()

    def clock() -> int:  # real time from NOW: the flush interval and the snapshot TTL pass as in Lambda
        return NOW + int((time.monotonic() - started) * SECOND_MS)

    functions = {
        name: composition.build_lookup_function(
            _settings().model_copy(update={"daily_rate_limit": limit}),
            composition.Surroundings(
                clock=clock,
                dynamodb_client=services.dynamodb,
                http_transport=services.upstream,
                secretsmanager_client=services.secretsmanager,
            ),
        )
        for name, limit in (("on", QUOTA_NEVER_REACHED), ("off", 0), ("off again", 0))
    }
    event = api_event(ENDPOINT, QUERY, now_ms=NOW)

    def lookup() -> dict[str, Any]:
        # A context per invocation, as in Lambda: its remaining time bounds the lookup's budget.
        response: dict[str, Any] = api.lambda_handler(event, lambda_context("api"))  # type: ignore[arg-type]
        return response

    def through(name: str) -> Callable[[], dict[str, Any]]:
        def installed() -> dict[str, Any]:
            composition.LOOKUP_FUNCTION.install(functions[name])
            return lookup()

        return installed

    try:
        spec, params = _request_sent_direct(functions["on"], through("on"))
        # The limit is on in one container only (a cacheable 200 carries no X-RateLimit-* headers to show it).
        assert functions["on"].limited_lookups is not None
        assert functions["off"].limited_lookups is None
        bare_transport = DirectTransport(new_http_client(services.upstream))

        def bare() -> Any:
            return bare_transport.fetch(spec, params, timeout_ms=3_000)

        overheads = _overheads({name: through(name) for name in functions}, bare)
        check_us = _check_us(functions["on"], event)
        flush_cpu_ms = _flush_cpu_ms(services.dynamodb)

        counter = CallCounter(threading.current_thread())
        services.dynamodb.meta.events.register("before-call", counter)
        composition.LOOKUP_FUNCTION.install(functions["on"])
        for _ in range(STORE_COUNT_LOOKUPS):
            assert lookup()["statusCode"] == 200
        functions["on"].upstreams.executor.shutdown(wait=True)
        services.dynamodb.meta.events.unregister("before-call", counter)
    finally:
        composition.LOOKUP_FUNCTION.install(None)
        for lookups in functions.values():
            lookups.close()
    return {
        **_ratios(overheads["cpu"]),
        "quota_check_us_median": check_us,
        "wall": _ratios(overheads["wall"]),
        "flush_cpu_ms_median": flush_cpu_ms,
        "store_calls_on_request_path": sum(counter.on_request_path.values()),
        "store_calls_in_background": dict(counter.background),
        "lookups": STORE_COUNT_LOOKUPS,
        "repeats": OVERHEAD_REPEATS,
        "lookups_per_batch": PER_BATCH,
    }


def _overheads(
    handlers: dict[str, Callable[[], Any]], bare: Callable[[], Any]
) -> dict[str, dict[str, float]]:
    """Median per-batch overhead (handler - bare) of each container, in the calling thread's CPU time (`cpu`:
    what the lookup itself pays) and in wall time (`wall`: with whatever else held the GIL meanwhile, such as
    the quota's flush on the container's executor); the batches take turns going first."""
    for _ in range(WARMUP):
        for handler in handlers.values():
            handler()
        bare()
    names = list(handlers)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for repeat in range(OVERHEAD_REPEATS):
        turn = names[repeat % len(names) :] + names[: repeat % len(names)]
        batch_us = {name: _time_batch(handlers[name], PER_BATCH) for name in turn}
        bare_us = _time_batch(bare, PER_BATCH)
        for name, (wall, cpu) in batch_us.items():
            samples[name].append((wall - bare_us[0], cpu - bare_us[1]))
    return {
        clock: {
            name: round(median([sample[index] for sample in values]), 1) for name, values in samples.items()
        }
        for index, clock in enumerate(("wall", "cpu"))
    }


def _ratios(overheads: dict[str, float]) -> dict[str, float]:
    return {
        "overhead_ratio_on_vs_off": round(overheads["on"] / overheads["off"], 2),
        "noise_ratio_off_vs_off": round(overheads["off again"] / overheads["off"], 2),
        "handler_overhead_us_on": overheads["on"],
        "handler_overhead_us_off": overheads["off"],
    }


def _check_us(lookups: LookupFunction, event: dict[str, Any]) -> float:
    """The quota's own part of a lookup: `LimitedLookups.check` (hash, count, maybe start a flush), alone."""
    limited = lookups.limited_lookups
    assert limited is not None

    def check() -> Any:
        return limited.check(
            event, secrets=lookups.upstreams.secret_source.get, now=lookups.upstreams.clock()
        )

    return round(median([time_batch(check, 1_000) * 1e6 for _ in range(REPEATS)]), 1)


def _flush_cpu_ms(client: Any) -> float:
    """CPU time of a one-client flush here: one ADD, botocore's part and moto's in-process DynamoDB both."""
    store = DynamoVerdictStore(TABLE_NAME, client)

    def add() -> float:
        started = time.thread_time()
        store.add_daily_lookups(korea_day(NOW), "flush-probe", 1)
        return time.thread_time() - started

    return round(median([add() * 1000 for _ in range(LATENCY_SAMPLES)]), 2)


# --- the overshoot ------------------------------------------------------------------------------------------------


class _OneRequestAtATime(DomainDispatcherApplication):
    """moto's dispatcher, serialized: each DynamoDB request is atomic, as it is in DynamoDB."""

    _lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        with self._lock:
            return super().__call__(environ, start_response)


@contextmanager
def _atomic_moto_server() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    with mock.patch.object(threaded_moto_server, "DomainDispatcherApplication", _OneRequestAtATime):
        server = threaded_moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        dynamodb_client(region_name=REGION, endpoint_url=url).create_table(**table_definition(TABLE_NAME))
        yield url
    finally:
        server.stop()


def _overshoot(endpoint_url: str, *, limit: int, interval_s: float, seconds: float | None) -> dict[str, Any]:
    """CONTAINERS containers, one client; each container takes a request every `interval_s` (back to back:
    the request itself takes that long) for `seconds`, or REQUESTS_PER_CONTAINER requests."""
    started = time.monotonic()
    day_start = NOW  # 09:00 in Seoul: the run stays inside one Korea day
    client_ip = f"192.0.2.{limit % 250}"  # a client of its own per run (same table)

    def clock() -> int:
        return day_start + int((time.monotonic() - started) * SECOND_MS)

    latency_ms = _add_latency_ms(endpoint_url, clock)
    executors = [ThreadPoolExecutor(BACKGROUND_WORKERS) for _ in range(CONTAINERS)]
    settings = ApiSettings.from_environment(ROUTE_HEALTH_TABLE=TABLE_NAME, DAILY_RATE_LIMIT=limit)
    containers: list[LimitedLookups] = []
    for executor in executors:
        client = dynamodb_client(region_name=REGION, endpoint_url=endpoint_url)
        container = limited_lookups(
            settings, store=DynamoVerdictStore(TABLE_NAME, client), executor=executor, clock=clock
        )
        assert container is not None
        containers.append(container)
    event = api_event("/api/cu/products", {"keyword": "cola"}, now_ms=NOW)
    event["requestContext"]["http"]["sourceIp"] = client_ip
    secrets = Secrets.from_mapping(BENCH_SECRET_VALUES, source="bench")
    go = threading.Event()

    def hammer(container: LimitedLookups) -> tuple[int, int]:
        go.wait()
        allowed = requests = 0
        deadline = None if seconds is None else time.monotonic() + seconds

        def more() -> bool:
            return requests < REQUESTS_PER_CONTAINER if deadline is None else time.monotonic() < deadline

        while more():
            began = time.monotonic()
            decision = container.check(event, secrets=lambda: secrets, now=clock())
            assert decision is not None
            allowed += decision.allowed
            requests += 1
            time.sleep(max(0.0, interval_s - (time.monotonic() - began)))
        return allowed, requests

    with ThreadPoolExecutor(max_workers=CONTAINERS) as pool:
        futures = [pool.submit(hammer, container) for container in containers]
        began = time.monotonic()
        go.set()
        outcomes = [future.result(timeout=120) for future in futures]
        elapsed_s = time.monotonic() - began
    for executor in executors:
        executor.shutdown(wait=True)
    allowed = sum(a for a, _ in outcomes)
    requests = sum(r for _, r in outcomes)
    rate = requests / elapsed_s
    others_rate = rate * (CONTAINERS - 1) / CONTAINERS
    bound = 2 * (FLUSH_INTERVAL_MS + latency_ms) / SECOND_MS * others_rate
    return {
        "overshoot_requests": allowed - limit,
        "limit": limit,
        "allowed": allowed,
        "requests": requests,
        "containers": CONTAINERS,
        "rate_rps": round(rate, 1),
        "dynamodb_update_ms_median": round(latency_ms, 2),
        "stated_bound": round(bound),
        "request_interval_ms": round(interval_s * 1000, 1),
    }


def _add_latency_ms(endpoint_url: str, clock: Callable[[], int]) -> float:
    """Median time of one quota ADD against this server (the `d` of the stated bound)."""
    store = DynamoVerdictStore(TABLE_NAME, dynamodb_client(region_name=REGION, endpoint_url=endpoint_url))
    samples = []
    for index in range(LATENCY_SAMPLES):
        began = time.perf_counter()
        store.add_daily_lookups(korea_day(clock()), f"latency-probe-{index}", 1)
        samples.append((time.perf_counter() - began) * 1000)
    return median(samples)
