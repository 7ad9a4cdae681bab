"""The warm request path through the real API handler, on moto and an instant upstream.

- `handler_overhead_us_median`: one lookup through `functions.handlers.api.lambda_handler` (API Gateway v2
  event in, response dict out) minus the same upstream call made bare (`DirectTransport.fetch` on the same
  `httpx.MockTransport`, same spec and params). Batches of each are interleaved; the median of the per-batch
  differences is reported.
- `handler_overhead_ratio_vs_bare_resolver`: that overhead over what a minimal Powertools
  `APIGatewayHttpResolver` route with the same query validation (`OliveyoungProductsQuery`) adds to the same
  upstream call (the bare route making the bare fetch, minus the bare fetch), timed in the same interleaved
  batches: what the handler adds beyond the framework it is built on, like for like. An upstream call costs
  more inside any route than alone (allocator and cache state), so a route making no call is not the
  comparison: `handler_detail.ratio_vs_bare_route_without_the_call` divides by the bare route answering a
  constant without calling anything, and `handler_detail.floor_ratio_vs_bare_resolver` is that same quotient
  for the bare route that does make the call (1.5-2.3 across runs: what a call inside any route adds). The
  handler answers a realistic payload (about 2 KB of JSON) where the bare route answers a constant, so
  `handler_detail.bare_resolver_realistic_payload_us_median` times the bare route answering the handler's own
  `data`: the share of the gap that is serializing the answer. Every batch is also timed in the calling
  thread's CPU time (`handler_detail.cpu`), which other processes on a shared machine barely move.
- `store_calls_on_request_path`: DynamoDB calls made on the request's thread over 1,000 warm lookups (the daily
  quota on, never reached; `quota` measures it with many flushes), counted
  with a botocore `before-call` hook on the container's own DynamoDB client (background refreshes, which run on
  the container's executor threads, are counted separately). Secrets Manager calls are counted the same way.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import boto3
import httpx
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import BaseModel

from bench.common import (
    BENCH_SECRET_VALUES,
    REGION,
    TABLE_NAME,
    all_healthy_checks,
    api_event,
    lambda_context,
    median,
    on_moto,
    progress,
)
from functions.adapters.direct import DirectTransport
from functions.adapters.dynamo_store import DynamoVerdictStore, store_client_config, table_definition
from functions.adapters.http import new_http_client
from functions.catalog.oliveyoung import OliveyoungProductsQuery
from functions.catalog.spec import OperationSpec
from functions.core import RouteKey
from sandbox.gateway import LambdaContext
from sandbox.simulator.payloads import realistic_payload, request_fields
from sandbox.simulator.routes import retailer_route

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from functions.handlers.composition import LookupFunction
    from functions.handlers.settings import ApiSettings

ENDPOINT = "/api/oliveyoung/products"
QUERY = {"keyword": "립밤"}
ROUTE = RouteKey.OY_PRODUCT_SEARCH
WARMUP = 300
REPEATS = 15
PER_BATCH = 100
STORE_COUNT_LOOKUPS = 1_000
SECRET_ID = "route-health/bench"  # noqa: S105 - a secret name, not a value
NOW = 1_767_225_600_000
QUOTA_NEVER_REACHED = 10_000_000
"""The daily quota is on (counting, headers, background flushes) but never refuses these lookups."""


class CallCounter:
    """botocore `before-call` hook: counts calls by operation, split by the thread that made them."""

    def __init__(self, request_thread: threading.Thread) -> None:
        self._request_thread = request_thread
        self.on_request_path: Counter[str] = Counter()
        self.background: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, model: Any, **_: Any) -> None:
        with self._lock:
            if threading.current_thread() is self._request_thread:
                self.on_request_path[model.name] += 1
            else:
                self.background[model.name] += 1

    def reset(self) -> None:
        with self._lock:
            self.on_request_path.clear()
            self.background.clear()


def instant_upstream() -> httpx.MockTransport:
    """Answers every retailer request at once with a realistic, valid body (built once per route)."""
    bodies: dict[RouteKey, bytes] = {}

    def answer(request: httpx.Request) -> httpx.Response:
        key = retailer_route(request.url.host, request.url.path)
        if key is None:
            return httpx.Response(404, json={"error": "not simulated"})
        if key not in bodies:
            fields = request_fields(
                str(request.url), json.loads(request.content) if request.content else None
            )
            bodies[key] = json.dumps(realistic_payload(key, fields), ensure_ascii=False).encode()
        return httpx.Response(200, content=bodies[key], headers={"content-type": "application/json"})

    return httpx.MockTransport(answer)


class _Recorder:
    """Wraps the container's DirectTransport once to capture the spec and params the handler sent."""

    def __init__(self, inner: DirectTransport) -> None:
        self.inner = inner
        self.seen: tuple[OperationSpec[Any, Any], BaseModel] | None = None

    def fetch(self, spec: OperationSpec[Any, Any], params: BaseModel, *, timeout_ms: int) -> Any:
        self.seen = (spec, params)
        return self.inner.fetch(spec, params, timeout_ms=timeout_ms)


class _WholeTimeLeft(LambdaContext):
    """One context for every timed lookup, each with its whole timeout left as a new invocation would have:
    with the sandbox's context, the lookups of a run longer than the timeout would answer 504."""

    def get_remaining_time_in_millis(self) -> int:
        return int(self.timeout_s * 1000)


def run() -> dict[str, Any]:
    progress("handler: building a real container on moto with an instant upstream")
    with on_moto():
        return _run()


@dataclass(frozen=True)
class _Services:
    """What a container is built on here: moto's DynamoDB (with healthy verdicts) and Secrets Manager, and the
    instant upstream."""

    dynamodb: DynamoDBClient
    secretsmanager: SecretsManagerClient
    upstream: httpx.MockTransport

    def lookup_function(self, settings: ApiSettings) -> LookupFunction:
        from functions.handlers import composition

        return composition.build_lookup_function(
            settings,
            composition.Surroundings(
                clock=lambda: NOW,
                dynamodb_client=self.dynamodb,
                http_transport=self.upstream,
                secretsmanager_client=self.secretsmanager,
            ),
        )


def _services() -> _Services:
    dynamodb = boto3.client("dynamodb", region_name=REGION, config=store_client_config())
    dynamodb.create_table(**table_definition(TABLE_NAME))
    secretsmanager = boto3.client("secretsmanager", region_name=REGION)
    secretsmanager.create_secret(Name=SECRET_ID, SecretString=json.dumps(dict(BENCH_SECRET_VALUES)))
    routes, relays = all_healthy_checks(NOW - 30_000)
    DynamoVerdictStore(TABLE_NAME, dynamodb).write_checks(routes, relays, now=NOW - 30_000)
    return _Services(dynamodb, secretsmanager, instant_upstream())


def _settings() -> ApiSettings:
    from functions.handlers.settings import ApiSettings

    return ApiSettings.from_environment(
        ROUTE_HEALTH_TABLE=TABLE_NAME,
        ROUTE_HEALTH_SECRET_ID=SECRET_ID,
        OY_RELAY_URL="http://127.0.0.1:9/relays/oliveyoung",
        CONVENIENCE_RELAY_URL="http://127.0.0.1:9/relays/convenience",
        DTRYX_RELAY_URL="http://127.0.0.1:9/relays/dtryx",
        DAILY_RATE_LIMIT=QUOTA_NEVER_REACHED,
        # Every timed lookup asks the same question: with the answer cache on, all but the first would be
        # answered from memory. The `cache` case measures hits against this.
        RESPONSE_CACHE="off",
    )  # the relays point nowhere on purpose: a lookup that went to a relay would fail loudly


def _through_handler() -> Callable[[], dict[str, Any]]:
    """One lookup through the API handler, with the installed container."""
    from functions.handlers import api

    event = api_event(ENDPOINT, QUERY, now_ms=NOW)
    context = _WholeTimeLeft("route-health-api", timeout_s=15.0)

    def through_handler() -> dict[str, Any]:
        response: dict[str, Any] = api.lambda_handler(event, context)  # type: ignore[arg-type]  # duck-typed context
        return response

    return through_handler


def _run() -> dict[str, Any]:
    from functions.handlers.composition import LOOKUP_FUNCTION

    services = _services()
    settings = _settings()
    lookups = services.lookup_function(settings)
    LOOKUP_FUNCTION.install(lookups)
    try:
        counter = CallCounter(threading.current_thread())
        services.dynamodb.meta.events.register("before-call", counter)
        services.secretsmanager.meta.events.register("before-call", counter)
        through_handler = _through_handler()
        spec, params = _request_sent_direct(lookups, through_handler)
        bare_transport = DirectTransport(new_http_client(services.upstream))

        def bare() -> Any:
            return bare_transport.fetch(spec, params, timeout_ms=3_000)

        data = json.loads(through_handler()["body"])["data"]
        overhead = _overhead_us(through_handler, bare, data)
        calls = _calls_over_warm_lookups(counter, through_handler)
        calls["secrets_calls_on_request_path_when_cache_expired"] = _secret_fetches_after_expiry(
            services, settings
        )
    finally:
        LOOKUP_FUNCTION.install(None)
        lookups.close()

    store_calls = sum(calls["store_calls_on_request_path_by_operation"].values())
    progress(
        f"handler: overhead {overhead['handler_overhead_us_median']:.0f} us per lookup; "
        f"store calls on request path: {store_calls}"
    )
    cpu = overhead["cpu"]
    progress(
        f"handler: {overhead['overhead_ratio_vs_bare_resolver']:.2f} times the bare route's "
        f"{overhead['bare_route_with_fetch_overhead_us_median']:.0f} us over the same call "
        f"(CPU time: {cpu['overhead_ratio_vs_bare_resolver']:.2f}); "
        f"{overhead['ratio_vs_bare_route_without_the_call']:.2f} times the bare route alone "
        f"({overhead['bare_resolver_us_median']:.0f} us)"
    )
    return {
        "handler_overhead_us_median": overhead["handler_overhead_us_median"],
        "handler_overhead_ratio_vs_bare_resolver": overhead["overhead_ratio_vs_bare_resolver"],
        "store_calls_on_request_path": store_calls,
        "handler_detail": {
            "endpoint": f"GET {ENDPOINT}?keyword=...",
            "route": ROUTE.value,
            "handler_us_median": overhead["handler_us_median"],
            "bare_fetch_us_median": overhead["bare_us_median"],
            "bare_resolver_us_median": overhead["bare_resolver_us_median"],
            "bare_resolver_realistic_payload_us_median": overhead[
                "bare_resolver_realistic_payload_us_median"
            ],
            "bare_route_with_fetch_overhead_us_median": overhead["bare_route_with_fetch_overhead_us_median"],
            "ratio_vs_bare_route_without_the_call": overhead["ratio_vs_bare_route_without_the_call"],
            "floor_ratio_vs_bare_resolver": overhead["floor_ratio_vs_bare_resolver"],
            "response_bytes": overhead["response_bytes"],
            "handler_vs_bare_ratio": round(overhead["handler_us_median"] / overhead["bare_us_median"], 2),
            "cpu": cpu,
            "repeats": REPEATS,
            "lookups_per_batch": PER_BATCH,
            "store_count_lookups": STORE_COUNT_LOOKUPS,
            **calls,
            "conditions": "moto DynamoDB + Secrets Manager, Powertools logs/metrics on (stdout to /dev/null), "
            "Tracer inactive (not in Lambda)",
        },
    }


def _request_sent_direct(
    lookups: LookupFunction, through_handler: Callable[[], dict[str, Any]]
) -> tuple[OperationSpec[Any, Any], BaseModel]:
    """The spec and params of one lookup through the handler, which must have gone direct and succeeded."""
    recorder = _Recorder(lookups.upstreams.direct)
    lookups.upstreams.direct = recorder  # type: ignore[assignment]
    first = through_handler()
    lookups.upstreams.direct = recorder.inner
    assert first["statusCode"] == 200, first
    assert json.loads(first["body"])["success"] is True
    assert recorder.seen is not None, "the lookup did not go direct"
    assert recorder.seen[0].key is ROUTE
    return recorder.seen


def _calls_over_warm_lookups(
    counter: CallCounter, through_handler: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """DynamoDB calls (by operation) on the request's thread and in the background, and Secrets Manager calls
    on the request's thread, over STORE_COUNT_LOOKUPS warm lookups."""
    counter.reset()
    for _ in range(STORE_COUNT_LOOKUPS):
        response = through_handler()
        assert response["statusCode"] == 200, response
    dynamo_ops = {"Query", "GetItem", "PutItem", "UpdateItem", "BatchGetItem", "Scan"}
    return {
        "store_calls_on_request_path_by_operation": {
            op: n for op, n in counter.on_request_path.items() if op in dynamo_ops
        },
        "store_calls_in_background": {op: n for op, n in counter.background.items() if op in dynamo_ops},
        "secrets_calls_on_request_path": counter.on_request_path.get("GetSecretValue", 0),
    }


def _bare_resolver(data: dict[str, Any], fetch: Callable[[], Any] | None = None) -> Callable[[], Any]:
    """The floor of the framework: one Powertools route validating the same query model, answering `data` at
    once (Powertools serializes it); with `fetch`, after making that upstream call.

    Its imports are at module level: Powertools resolves the (string) annotation in the module's namespace.
    """
    resolver = APIGatewayHttpResolver(enable_validation=True)

    @resolver.get(ENDPOINT)
    def products(query: Annotated[OliveyoungProductsQuery, Query()]) -> dict[str, Any]:
        if fetch is not None:
            fetch()
        return {"success": True, "data": data}

    event = api_event(ENDPOINT, QUERY, now_ms=NOW)
    context = lambda_context("api")
    first = resolver.resolve(event, context)  # type: ignore[arg-type]  # duck-typed context
    assert first["statusCode"] == 200, first
    return lambda: resolver.resolve(event, context)  # type: ignore[arg-type]


def _time_batch(call: Callable[[], Any], count: int) -> tuple[float, float]:
    """Microseconds per call over `count` back-to-back calls: wall clock, and this thread's CPU time."""
    wall, cpu = time.perf_counter(), time.thread_time()
    for _ in range(count):
        call()
    return (time.perf_counter() - wall) * 1e6 / count, (time.thread_time() - cpu) * 1e6 / count


def _overhead_us(
    through_handler: Callable[[], Any], bare: Callable[[], Any], data: dict[str, Any]
) -> dict[str, Any]:
    """Interleaved batches of the handler, the bare fetch and the bare routes; medians in wall and CPU time.

    `bare_route_with_fetch`: the bare route making the same upstream call. The handler's overhead over the bare
    fetch is compared with that route's (`overhead_ratio_vs_bare_resolver`), and with the bare route alone
    (`ratio_vs_bare_route_without_the_call`); the bare route's own overhead over the bare fetch, divided by
    the bare route alone, is `floor_ratio_vs_bare_resolver`.
    """
    calls = {
        "handler": through_handler,
        "bare": bare,
        "bare_resolver": _bare_resolver({}),
        "bare_resolver_realistic_payload": _bare_resolver(data),
        "bare_route_with_fetch": _bare_resolver({}, bare),
    }
    for _ in range(WARMUP):
        for call in calls.values():
            call()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
    for _ in range(REPEATS):
        for name, call in calls.items():
            samples[name].append(_time_batch(call, PER_BATCH))

    def medians(clock: int) -> dict[str, float]:
        of = {name: [sample[clock] for sample in values] for name, values in samples.items()}

        def over_bare(name: str) -> float:
            return median([a - b for a, b in zip(of[name], of["bare"], strict=True)])

        found = {f"{name}_us_median": round(median(values), 1) for name, values in of.items()}
        handler_us, route_us = over_bare("handler"), over_bare("bare_route_with_fetch")
        alone_us = found["bare_resolver_us_median"]
        return {
            "handler_overhead_us_median": round(handler_us, 1),
            **found,
            "bare_route_with_fetch_overhead_us_median": round(route_us, 1),
            "overhead_ratio_vs_bare_resolver": round(handler_us / route_us, 2),
            "ratio_vs_bare_route_without_the_call": round(handler_us / alone_us, 2),
            "floor_ratio_vs_bare_resolver": round(route_us / alone_us, 2),
        }

    wall, cpu = medians(0), medians(1)
    response = through_handler()
    assert response["statusCode"] == 200, response  # what was timed was a lookup, not an error answer
    return {**wall, "response_bytes": len(response["body"].encode()), "cpu": cpu}


def _secret_fetches_after_expiry(services: _Services, settings: ApiSettings) -> int:
    """With the secret cache expired (max age 0), how many lookups of 20 wait for GetSecretValue.

    In production the cache expires every ROUTE_HEALTH_SECRET_MAX_AGE seconds (600 by default), so this is
    what one request per container per expiry pays.
    """
    from functions.handlers.composition import LOOKUP_FUNCTION

    lookups = services.lookup_function(settings.model_copy(update={"secret_max_age_s": 0}))
    LOOKUP_FUNCTION.install(lookups)
    counter = CallCounter(threading.current_thread())
    services.secretsmanager.meta.events.register("before-call", counter)
    try:
        through_handler = _through_handler()
        for _ in range(20):
            through_handler()
        return counter.on_request_path.get("GetSecretValue", 0)
    finally:
        services.secretsmanager.meta.events.unregister("before-call", counter)
        LOOKUP_FUNCTION.install(None)
        lookups.close()
